"""Geometry of one polygon's points: resampling, cutting to a rectangle, mirroring, bounds.

Plain ``(K, 2)`` float arrays in, arrays out, computed in :func:`working_dtype`;
:mod:`rankaug.polygons` holds what instance polygons are in a sample and how they are
drawn.
"""

from __future__ import annotations

from typing import Any, Final

import cv2
import numpy as np

__all__ = [
    "Region",
    "clip",
    "mirror_x",
    "pixel_clip",
    "pixel_region",
    "resample",
    "twice_area",
    "working_dtype",
]

Region = tuple[int, int, int, int]
"""``(y0, y1, x0, x1)``: rows ``y0:y1`` and columns ``x0:x1`` of an image."""


def resample(points: np.ndarray, count: int) -> np.ndarray:
    """The closed polygon with ``count`` points.

    With at least as many points as it has, every point is kept, the first first, and
    the others are spread evenly along its perimeter: the shape is the same. With fewer
    (:func:`_fewest`), repeated points and points on a line with their neighbours
    (those a cut adds along a window's edge) go before any corner, then the other
    points evenly by their order, and a point at one of the polygon's extremes (its
    least or greatest ``x`` or ``y``) goes only when nothing else is left to drop. The
    others stay where they were, in order: with ``count`` at least the number of
    extreme points (at most 4), the polygon keeps its bounds.

    >>> square = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    >>> resample(square, 8).tolist()[:3]
    [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]
    >>> cut = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    >>> resample(cut, 4).tolist()  # the point on the edge goes
    [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]
    """
    points = np.asarray(points, np.float64)
    n = len(points)
    if count == n:
        return points.copy()
    if count < n:
        return _fewest(points, count)
    closed = np.concatenate((points, points[:1]))
    steps = np.diff(closed, axis=0)
    along = np.empty(n + 1)  # each point's distance along the perimeter, then the whole
    along[0] = 0.0
    np.cumsum(np.hypot(steps[:, 0], steps[:, 1]), out=along[1:])
    if along[-1] <= 0:  # a point repeated
        return np.repeat(points[:1], count, axis=0)
    extra = count - n  # spread evenly along it, between the points, which all stay
    at = np.concatenate((along[:-1], (np.arange(extra) + 0.5) * (along[-1] / extra)))
    at.sort(kind="stable")
    out = np.empty((count, 2))
    out[:, 0] = np.interp(at, along, closed[:, 0])
    out[:, 1] = np.interp(at, along, closed[:, 1])
    return out


def _fewest(points: np.ndarray, count: int) -> np.ndarray:
    """``points`` (``(K, 2)`` float64) less ``K - count`` of them, in a few numpy passes.

    The points at the polygon's extremes (the first at each of the least and greatest
    ``x`` and ``y``) stay while any other is left; of the others, points whose triangle
    with their neighbours has no area (repeated ones, and those a cut adds along a
    window's edge) go first, then the rest evenly by their order. Fewer than the
    extremes: those with the least area go, the first on a tie. An outline of a few
    thousand points cut to ``K`` costs a few numpy calls, not a step per point.
    """
    n = len(points)
    closed = np.concatenate((points[-1:], points, points[:1]))
    steps = closed[1:] - closed[:-1]  # step i: from point i - 1 to point i
    ahead, behind = steps[1:], steps[:-1]
    twice = behind[:, 0] * ahead[:, 1] - behind[:, 1] * ahead[:, 0]  # signed: its sign unused
    x, y = points[:, 0], points[:, 1]
    # sorted without repeats (np.unique's Python layer costs more than these four)
    extremes = sorted({int(x.argmin()), int(x.argmax()), int(y.argmin()), int(y.argmax())})
    if count <= len(extremes):
        ends = np.array(extremes)
        by_area = ends[np.argsort(np.abs(twice[ends]), kind="stable")]  # least first
        keep = np.zeros(n, dtype=bool)
        keep[by_area[len(extremes) - count :]] = True
        return points[keep]
    drop = n - count
    flat = twice == 0  # of the others: the extremes stay
    flat[extremes] = False
    (at,) = flat.nonzero()
    keep = np.ones(n, dtype=bool)
    if len(at) >= drop:
        keep[_evenly(at, drop)] = False
    else:
        keep[at] = False
        rest = twice != 0  # NaN (an overflow) too, as the areas' != 0 did
        rest[extremes] = False
        (others,) = rest.nonzero()
        keep[_evenly(others, drop - len(at))] = False
    kept: np.ndarray = points.compress(keep, axis=0)  # points[keep], several times faster
    return kept


def _evenly(indices: np.ndarray, m: int) -> np.ndarray:
    """``m`` of ``indices`` spread evenly by position (``m <= len(indices)``), the first first.

    >>> _evenly(np.arange(10, 20), 3).tolist()
    [10, 13, 16]
    """
    length = len(indices)
    return indices[np.arange(0, m * length, length) // m]


def clip(points: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray | None:
    """The polygon cut to a rectangle (Sutherland-Hodgman), or ``None`` if nothing is left.

    Exact for any polygon, the rectangle being convex; where the polygon leaves the
    rectangle and comes back, the cut runs along the rectangle's edge (zero-width
    bridges, which :func:`fill` draws as edge pixels). A polygon inside the rectangle is
    returned as it is.

    **A polygon of no area** (less than ``1e-6`` square pixels: its points on one line,
    or one point) is not nothing: :func:`fill` draws the pixels along it. Its cut is
    what of it lies in the rectangle, ``None`` only when nothing does. A polygon with an
    area whose cut has none (it only touches the rectangle, or a sliver of less than
    ``1e-6`` square pixels is left) gives ``None``.

    Args:
        points: ``(K, 2)`` pixel ``x, y``.
        box: ``(x0, y0, x1, y1)``, the rectangle ``x0 <= x <= x1, y0 <= y <= y1``.

    Returns:
        The cut polygon (``K' >= 3`` points, float64), or ``None`` (see above).

    >>> square = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
    >>> clip(square, (2.0, 1.0, 8.0, 8.0)).tolist()
    [[2.0, 1.0], [4.0, 1.0], [4.0, 4.0], [2.0, 4.0]]
    >>> clip(square, (5.0, 0.0, 8.0, 8.0)) is None
    True
    >>> line = np.array([[0.0, 1.0], [4.0, 1.0], [2.0, 1.0]])  # no area: still drawn
    >>> clip(line, (2.0, 0.0, 8.0, 8.0)).tolist()
    [[2.0, 1.0], [2.0, 1.0], [4.0, 1.0], [2.0, 1.0]]
    """
    x0, y0, x1, y1 = box
    xs, ys = points[:, 0], points[:, 1]
    if xs.min() >= x0 and ys.min() >= y0 and xs.max() <= x1 and ys.max() <= y1:
        return points
    polygon = np.asarray(points, np.float64)
    for axis, bound, sign in ((0, x0, 1.0), (0, x1, -1.0), (1, y0, 1.0), (1, y1, -1.0)):
        depth = polygon[:, axis] - bound
        if sign < 0:
            depth = -depth  # >= 0 inside this edge
        inside = depth >= 0
        count = int(np.count_nonzero(inside))
        if count == len(inside):
            continue
        if not count:
            return None
        # edge i runs from point i - 1 to point i; those that cross the line get a point on it
        crosses = np.flatnonzero(inside != np.concatenate((inside[-1:], inside[:-1])))
        before = crosses - 1
        t = depth[before] / (depth[before] - depth[crosses])
        meets = polygon[before] + (polygon[crosses] - polygon[before]) * t[:, None]
        meets[:, axis] = bound  # exactly on the line
        # the points inside, each crossing's point just before the point that ends its edge
        at = (np.cumsum(inside) - inside)[crosses] + np.arange(len(crosses))
        cut = np.empty((count + len(crosses), 2))
        own = np.ones(len(cut), dtype=bool)
        own[at] = False
        cut[at] = meets
        cut[own] = polygon[inside]
        polygon = cut
        if len(polygon) < 3:
            return None
    if twice_area(polygon) >= 2e-6:
        return polygon
    # no area left: a polygon of no area of its own keeps its line, any other is gone
    return polygon if twice_area(np.asarray(points, np.float64)) < 2e-6 else None


def twice_area(points: np.ndarray) -> float:
    """Twice the area of a ``(K, 2)`` polygon (the shoelace formula, its absolute value).

    >>> twice_area(np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 3.0]]))
    6.0
    """
    x, y = points[:, 0], points[:, 1]
    twice = np.dot(x[:-1], y[1:]) - np.dot(y[:-1], x[1:]) + x[-1] * y[0] - y[-1] * x[0]
    return abs(float(twice))


def pixel_clip(rect: tuple[int, int, int, int]) -> tuple[float, float, float, float]:
    """The rectangle to :func:`clip` a polygon to so that it draws only ``rect``'s pixels.

    ``rect`` is ``(x0, y0, x1, y1)``, the pixels ``x0 <= px < x1``, ``y0 <= py < y1`` (a
    window, a cell, a rectangle pasted over). A polygon's fill draws the pixels its
    edges run through (:func:`rankaug.polygons.pixel_box`): cut at ``x1`` itself, it
    would draw the column ``x1`` beyond the rectangle, so the far edges go through the
    centres of the last pixels, ``x1 - 0.5`` and ``y1 - 0.5``; the near ones stay at
    ``x0`` and ``y0`` (the fill draws a point there in pixel ``x0``).

    >>> pixel_clip((0, 0, 23, 12))
    (0, 0, 22.5, 11.5)
    """
    x0, y0, x1, y1 = rect
    return x0, y0, x1 - 0.5, y1 - 0.5


def pixel_region(points: np.ndarray, hw: tuple[int, int]) -> Region:
    """Where a ``(K, 2)`` polygon's pixels can be: its bounds rounded out, inside the image.

    Those of :func:`rankaug.polygons.fill` (:meth:`rankaug.polygons.Polygons.regions`):
    empty (``y0 == y1`` or ``x0 == x1``) when the polygon misses the image.
    """
    height, width = hw
    if points.dtype != np.float32:  # boundingRect takes float32 (or int32) points
        points = points.astype(np.float32)
    # from floor(min) to floor(max) + 1, a pixel more each side for the half pixel the
    # fill moves the points by and for float32's rounding
    x, y, w, h = cv2.boundingRect(points)
    # min(max(v, low), high) by comparisons: faster than the builtins, per polygon
    x0, y0 = (x - 1 if x > 1 else 0), (y - 1 if y > 1 else 0)
    x0, y0 = (x0 if x0 < width else width), (y0 if y0 < height else height)
    x1, y1 = x + w + 1, y + h + 1
    x1, y1 = (x1 if x1 > x0 else x0), (y1 if y1 > y0 else y0)
    return y0, y1 if y1 < height else height, x0, x1 if x1 < width else width


_WORKING: Final = (np.dtype(np.float32), np.dtype(np.float64))


def working_dtype(points: np.ndarray) -> np.dtype[Any]:
    """The dtype to compute with: the points', float32 at least.

    >>> working_dtype(np.zeros((1, 2), np.float16)), working_dtype(np.zeros((1, 2)))
    (dtype('float32'), dtype('float64'))
    """
    dtype = points.dtype
    return dtype if dtype in _WORKING else np.result_type(dtype, np.float32)


def mirror_x(points: np.ndarray, position: float) -> np.ndarray:
    """``points * (-1, 1) + (position, 0)`` in the working dtype, one column at a time.

    The same values as computing in float64 and rounding once to the working dtype
    (for a ``position`` it holds exactly): ``position - x`` and ``y + 0`` (which makes
    ``-0.0`` ``+0.0``) are single operations of exactly representable numbers, and
    float64 holds more than twice float32's precision, so rounding twice is rounding
    once.
    """
    dtype = working_dtype(points)
    out = np.empty(points.shape, dtype)
    np.subtract(dtype.type(position), points[..., 0], out=out[..., 0], dtype=dtype)
    np.add(points[..., 1], dtype.type(0.0), out=out[..., 1], dtype=dtype)
    return out
