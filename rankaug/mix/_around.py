"""CutMix's polygons: cut to its rectangle, or around it, each drawing only its own image.

:func:`cut` gives a main polygon whose pixels the rectangle reaches the outline of the
pixels it leaves, and a partner's polygon that draws pixels outside the rectangle the
outline of its pixels inside it, so that each draws what its mask would (filled as
:func:`~rankaug.polygons.fill` does, to the pixel), and gives each outline made anew
the box of its object's pixels left (the pixels its bridges draw are not the object's);
an untouched main polygon keeps its box.

:func:`rankaug.polygons.outline` joins the parts of a region (and its holes) by
zero-width bridges, straight from the first part's start to each other part's, and
:func:`~rankaug.polygons.fill` draws the pixels a bridge runs through. CutMix trims the
main sample's polygons by its rectangle: a straight bridge between what is left on two
sides of the rectangle would draw pixels inside it, over the partner's image (a
partner's bridges, between pixels inside the rectangle, stay inside it).
:func:`outline_around` routes each bridge around the rectangle instead, through the
centres of the pixels at its corners (just outside it), so the polygon draws only
pixels outside the rectangle: its region's pixels and those of its bridges.

Pixel ``(px, py)`` is the one whose centre is ``(px + 0.5, py + 0.5)``; a segment between
two pixel centres on one side of the rectangle (all left of it, say) draws only pixels
on that side, so a bridge that turns at the corners (left, then above, then right of it)
never enters it.

>>> mask = np.zeros((3, 7), np.uint8)
>>> mask[1, [0, 1, 5, 6]] = 1  # two parts, left and right of columns 2 to 4
>>> polygon = outline_around(mask, (0, 0), (2, 1, 5, 3), (3, 7))
>>> fill(polygon, (0, 3, 0, 7)).tolist()  # the bridge runs above it, in row 0
[[0, 1, 1, 1, 1, 1, 0], [1, 1, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0, 0]]
"""

from __future__ import annotations

import itertools
import math
from typing import Final

import cv2
import numpy as np

from rankaug.mix._masks import tight_box
from rankaug.polygons import Polygons, fill, gather, outline

__all__ = ["cut", "outline_around", "padded"]

Rect = tuple[int, int, int, int]
Point = tuple[int, int]

_LEFT: Final = 1
_RIGHT: Final = 2
_ABOVE: Final = 4
_BELOW: Final = 8


def cut(
    main: Polygons,
    partner: Polygons,
    rect: Rect,
    hw: tuple[int, int],
    keep: np.ndarray,
    other: np.ndarray,
    boxes: np.ndarray,
    originals: np.ndarray,
) -> Polygons:
    """The output's polygons: the kept main ones lose the rectangle, the partner's keep only it.

    ``keep`` and ``other`` (which main and partner instances the boxes keep) are cleared
    in place for an instance left with nothing, and ``boxes`` (the candidate boxes, main
    then partner) gets the box of the object's pixels left for each polygon made anew
    (its bridges are not the object's), and for an untouched main polygon its own box
    from ``originals`` (the main sample's boxes).
    """
    x0, y0, x1, y1 = rect
    points: list[np.ndarray] = []
    regions = main.regions(hw)
    across = (y0 <= 0 and y1 >= hw[0]) or (x0 <= 0 and x1 >= hw[1])
    for k in np.flatnonzero(keep).tolist():
        polygon = main.points[k]
        region = regions[k]
        top, bottom = max(region[0], y0) - region[0], min(region[1], y1) - region[0]
        left, right = max(region[2], x0) - region[2], min(region[3], x1) - region[2]
        touched = False
        if top < bottom and left < right:  # its region meets the rectangle
            raster = fill(polygon, region)
            covered = raster[top:bottom, left:right]
            touched = bool(covered.any())
            if touched:  # it loses pixels: the outline of those left
                covered[...] = 0
                if not raster.any():
                    keep[k] = False
                    continue
                origin = (region[0], region[2])
                if across:  # the side it keeps
                    raster = _one_side(raster, origin, rect, hw)
                polygon = padded(_bridged(raster, origin, rect, hw), main.points_per)
                boxes[k] = tight_box(raster, origin)
        if not touched:  # its pixels, and so its box, as they were
            boxes[k] = originals[k]
        points.append(polygon)
    count = len(main)
    regions = partner.regions(hw)
    for k in np.flatnonzero(other).tolist():
        polygon = partner.points[k]
        region = regions[k]
        if not (y0 <= region[0] and region[1] <= y1 and x0 <= region[2] and region[3] <= x1):
            raster = fill(polygon, region)  # it may draw pixels outside the rectangle
            top, bottom = max(region[0], y0), min(region[1], y1)
            left, right = max(region[2], x0), min(region[3], x1)
            total = cv2.countNonZero(raster)
            inside = np.zeros_like(raster)
            if top < bottom and left < right:
                meet = (slice(top - region[0], bottom - region[0]),
                        slice(left - region[2], right - region[2]))  # fmt: skip
                inside[meet] = raster[meet]
            shown = cv2.countNonZero(inside)
            if not shown:
                other[k] = False
                continue
            if shown < total:  # the outline of its pixels in the rectangle
                origin = (region[0], region[2])
                polygon = padded(outline(inside, origin), main.points_per)
                boxes[count + k] = tight_box(inside, origin)
        points.append(polygon)
    return gather(points, main, partner)


def outline_around(
    mask: np.ndarray, origin: tuple[int, int], rect: Rect, hw: tuple[int, int]
) -> np.ndarray:
    """One polygon around a mask's pixels, none inside ``rect``, bridged around it.

    When the rectangle spans the image's full height (or width), what lies on its two
    sides cannot be joined without crossing it: the polygon keeps the side with more
    pixels.

    Args:
        mask: Non-zero on the pixels (uint8), an image region; none inside ``rect``, at
            least one outside.
        origin: ``(y0, x0)``, where the region starts in the image.
        rect: ``(x0, y0, x1, y1)`` in image pixels.
        hw: The image's height and width.

    Returns:
        ``(K, 2)`` float64 pixel ``x, y``, ``K >= 3``.
    """
    x0, y0, x1, y1 = rect
    if (y0 <= 0 and y1 >= hw[0]) or (x0 <= 0 and x1 >= hw[1]):
        mask = _one_side(mask, origin, rect, hw)
    return _bridged(mask, origin, rect, hw)


def _bridged(
    mask: np.ndarray, origin: tuple[int, int], rect: Rect, hw: tuple[int, int]
) -> np.ndarray:
    """:func:`outline_around` of a mask whose parts can all be joined around ``rect``."""
    oy, ox = origin
    contours, _ = cv2.findContours(
        np.ascontiguousarray(mask, np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE
    )
    shift = np.array((ox, oy))
    pieces = [c.reshape(-1, 2) + shift for c in contours]
    first = pieces[0]
    joined: list[np.ndarray] = [first]
    start = (int(first[0, 0]), int(first[0, 1]))
    for piece in pieces[1:]:
        there = _route(start, (int(piece[0, 0]), int(piece[0, 1])), rect, hw)
        way = np.array(there, np.int64).reshape(-1, 2)
        joined += [first[:1], way, piece, piece[:1], way[::-1]]
    if len(pieces) > 1:
        joined.append(first[:1])
    polygon = np.concatenate(joined).astype(np.float64) + 0.5
    while len(polygon) < 3:  # a single pixel or a line: repeat the points
        polygon = np.concatenate((polygon, polygon[:1]))
    return polygon


def padded(outline: np.ndarray, count: int | None) -> np.ndarray:
    """An outline with ``count`` points (``None``: as it is): each point repeated, in order.

    Points added along an outline's edges (:func:`~rankaug.polygons.resample`) move its
    fill by a pixel here and there (the fill rounds them to its subpixel grid); a
    repeated point adds an edge of length 0, which draws only the point's own pixel. An
    outline with more points than ``count`` is given as it is (to be resampled).

    >>> padded(np.array([[0.5, 0.5], [2.5, 0.5], [2.5, 1.5]]), 7)[:, 0].tolist()
    [0.5, 0.5, 2.5, 2.5, 2.5, 2.5, 2.5]
    """
    have = len(outline)
    if count is None or have >= count:
        return outline
    # output point i repeats point ((i + 1) * have - 1) // count: np.repeat's order, and
    # one take instead of its counts
    picks = np.arange(have - 1, count * have, have) // count
    out: np.ndarray = outline.take(picks, axis=0)
    return out


def _one_side(
    mask: np.ndarray, origin: tuple[int, int], rect: Rect, hw: tuple[int, int]
) -> np.ndarray:
    """The mask's pixels on the side of a rectangle across the image that has more."""
    oy, ox = origin
    x0, y0, x1, y1 = rect
    if y0 <= 0 and y1 >= hw[0]:  # left and right of it
        cut, axis = (x0 - ox, x1 - ox), 1
    else:  # above and below it
        cut, axis = (y0 - oy, y1 - oy), 0
    size = mask.shape[axis]
    low, high = min(max(cut[0], 0), size), min(max(cut[1], 0), size)
    before = mask[:, :low] if axis else mask[:low]
    after = mask[:, high:] if axis else mask[high:]
    out = mask.copy()
    if cv2.countNonZero(before) >= cv2.countNonZero(after):
        (out[:, high:] if axis else out[high:])[...] = 0
    else:
        (out[:, :low] if axis else out[:low])[...] = 0
    return out


def _sides(point: Point, rect: Rect) -> int:
    """The sides of the rectangle the pixel lies on (left, right, above, below)."""
    px, py = point
    x0, y0, x1, y1 = rect
    return (
        (_LEFT if px < x0 else 0)
        | (_RIGHT if px >= x1 else 0)
        | (_ABOVE if py < y0 else 0)
        | (_BELOW if py >= y1 else 0)
    )


def _route(a: Point, b: Point, rect: Rect, hw: tuple[int, int]) -> list[Point]:
    """The corners a bridge from pixel ``a`` to pixel ``b`` turns at (none: straight).

    Each leg joins two pixels on one side of the rectangle. Of the routes by one corner
    or by two (around a side), the shortest; both pixels are outside the rectangle and
    the image's part outside it is connected.
    """
    near, far = _sides(a, rect), _sides(b, rect)
    if near & far:
        return []
    height, width = hw
    x0, y0, x1, y1 = rect
    corners = [
        ((x, y), sides)
        for x, y, sides in (
            (x0 - 1, y0 - 1, _LEFT | _ABOVE),
            (x1, y0 - 1, _RIGHT | _ABOVE),
            (x0 - 1, y1, _LEFT | _BELOW),
            (x1, y1, _RIGHT | _BELOW),
        )
        if 0 <= x < width and 0 <= y < height
    ]
    routes = [[c] for c, s in corners if s & near and s & far]
    routes += [
        [c, d] for c, s in corners if s & near for d, t in corners if t & far and s & t and c != d
    ]
    assert routes, "the pixels outside the rectangle are connected"
    return min(routes, key=lambda route: _length([a, *route, b]))


def _length(points: list[Point]) -> float:
    return sum(math.dist(p, q) for p, q in itertools.pairwise(points))
