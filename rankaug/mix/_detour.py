"""Outlines whose bridges draw only pixels they may: CopyPaste's trimmed polygons.

:func:`rankaug.polygons.outline` joins the parts of a region (and its holes) by
zero-width bridges, straight from the first part's start to each other part's, and
:func:`~rankaug.polygons.fill` draws the pixels a bridge runs through. A main instance
that pasted pixels cut in two would get a bridge straight across them, drawing pixels of
the pasted instances (and a pasted one that later ones cut, pixels of those). CutMix
routes its bridges around its rectangle (:mod:`rankaug.mix._around`); pasted pixels have
any shape, so :func:`outline_within` routes each bridge that would draw a pixel it may not
along a shortest path of pixels it may draw (8-connected: a step between two pixel
centres, straight or diagonal, draws just its two pixels).

Where no such path joins two parts (pasted pixels across the image between them, or
all around one), the bridge between them has to cross them: it runs straight, so the
polygon still keeps every pixel (and the box and decisions stay those of its mask).

>>> mask = np.zeros((3, 7), np.uint8)
>>> mask[1, [0, 1, 5, 6]] = 1  # two parts, apart by columns 2 to 4
>>> image = np.ones((3, 7), np.uint8)
>>> image[1:, 2:5] = 0  # the pasted pixels, from row 1 down
>>> allowed = lambda region: image[region[0] : region[1], region[2] : region[3]]
>>> polygon = outline_within(mask, (0, 0), allowed, (3, 7))
>>> fill(polygon, (0, 3, 0, 7)).tolist()  # the bridge runs above them, through row 0
[[0, 0, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0, 0]]
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from rankaug.mix._masks import Region, compare
from rankaug.polygons import fill, outline

__all__ = ["Allowed", "outline_within"]

Allowed = Callable[[Region], np.ndarray]
"""Gives, over an image region ``(y0, y1, x0, x1)``, non-zero where a bridge may draw."""

_AROUND = np.ones((3, 3), np.uint8)
_STEPS = ((0, -1), (-1, 0), (0, 1), (1, 0), (-1, -1), (-1, 1), (1, -1), (1, 1))


def outline_within(
    mask: np.ndarray, origin: tuple[int, int], allowed: Allowed, hw: tuple[int, int]
) -> np.ndarray:
    """One polygon around a mask's pixels whose bridges draw only ``allowed`` pixels.

    Args:
        mask: Non-zero on the object's pixels (uint8), an image region (at least one).
        origin: ``(y0, x0)``, where the region starts in the image.
        allowed: Gives, over an image region, non-zero (uint8) on the pixels a bridge
            may draw (the object's among them).
        hw: The image's height and width.

    Returns:
        ``(K, 2)`` float64 pixel ``x, y``: :func:`~rankaug.polygons.outline`'s polygon
        where its straight bridges draw only allowed pixels; else its bridges go
        along shortest paths of them, straight where none joins two parts.
    """
    region = (origin[0], origin[0] + mask.shape[0], origin[1], origin[1] + mask.shape[1])
    polygon = outline(mask, origin)
    stray = cv2.bitwise_and(fill(polygon, region), compare(allowed(region), cv2.CMP_EQ))
    if not cv2.countNonZero(stray):
        return polygon  # its straight bridges (if any) draw only allowed pixels
    window = (0, hw[0], 0, hw[1])
    contours, _ = cv2.findContours(
        np.ascontiguousarray(mask, np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE
    )
    shift = np.array((origin[1] - window[2], origin[0] - window[0]))  # into the window
    pieces = [c.reshape(-1, 2) + shift for c in contours]
    first = pieces[0]
    ends = [(int(piece[0, 0]), int(piece[0, 1])) for piece in pieces[1:]]
    distance = _distances(allowed(window), (int(first[0, 0]), int(first[0, 1])), ends)
    joined: list[np.ndarray] = [first]
    for piece in pieces[1:]:
        way = _path(distance, (int(piece[0, 0]), int(piece[0, 1])))
        joined += [first[:1], way, piece, piece[:1], way[::-1]]
    if len(pieces) > 1:
        joined.append(first[:1])
    polygon = np.concatenate(joined, dtype=np.float64)
    polygon[:, 0] += window[2] + 0.5
    polygon[:, 1] += window[0] + 0.5
    return polygon


def _distances(
    allowed: np.ndarray, start: tuple[int, int], ends: list[tuple[int, int]]
) -> np.ndarray:
    """Allowed pixels' steps from ``start`` (``x, y``), 8-connected, out to all ``ends``.

    A breadth-first search by dilations, each over the box of what it reached and a
    pixel more, stopped once every end is reached (or nothing more can be); -1 where it
    did not reach.
    """
    height, width = allowed.shape
    distance = np.full(allowed.shape, -1, np.int32)
    open_: np.ndarray = np.ascontiguousarray(allowed != 0, np.uint8)
    front: np.ndarray = np.zeros_like(open_)
    x, y = start
    front[y, x], open_[y, x], distance[y, x] = 1, 0, 0
    top, bottom, left, right = y, y + 1, x, x + 1
    waiting = {(ex, ey) for ex, ey in ends if (ex, ey) != start}
    step = 0
    while waiting:
        step += 1
        top, bottom = max(top - 1, 0), min(bottom + 1, height)
        left, right = max(left - 1, 0), min(right + 1, width)
        box = (slice(top, bottom), slice(left, right))
        grown = cv2.bitwise_and(cv2.dilate(front[box], _AROUND), open_[box])
        if not cv2.countNonZero(grown):
            break
        front[box] = grown
        open_[box] = cv2.bitwise_xor(open_[box], grown)
        distance[box][grown != 0] = step
        waiting = {(ex, ey) for ex, ey in waiting if distance[ey, ex] < 0}
    return distance


def _path(distance: np.ndarray, end: tuple[int, int]) -> np.ndarray:
    """Where a shortest path from the start to ``end`` (``x, y``) turns, from the start."""
    x, y = end
    left = int(distance[y, x])
    if left < 0:  # no path: straight
        return np.zeros((0, 2), np.int64)
    height, width = distance.shape
    cells = [end]
    while left > 0:  # back to the start, one step nearer at a time
        for dx, dy in _STEPS:
            nx, ny = x + dx, y + dy
            if 0 <= nx < width and 0 <= ny < height and distance[ny, nx] == left - 1:
                break
        x, y, left = nx, ny, left - 1
        cells.append((x, y))
    cells.reverse()
    turns = [
        b for a, b, c in zip(cells, cells[1:], cells[2:], strict=False)
        if (b[0] - a[0], b[1] - a[1]) != (c[0] - b[0], c[1] - b[1])
    ]  # fmt: skip
    return np.array(turns, np.int64).reshape(-1, 2)
