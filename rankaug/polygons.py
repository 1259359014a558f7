"""Instance polygons (``segments``): one outline per box, in pixel ``x, y``.

YOLO-seg datasets and ultralytics' pipeline describe each instance by a polygon rather
than a dense mask. A sample's ``segments`` holds ``N`` polygons aligned with its ``N``
boxes: an ``(N, K, 2)`` array (ultralytics resamples every polygon to ``K = 1000``
points) or a sequence of ``(K_i, 2)`` arrays, ``K >= 3`` points each, in the pixel
coordinates of ``pascal_voc`` boxes (``x`` from 0 to the width), whatever the box format.

The pixels of a polygon (:func:`fill`) are those :func:`cv2.fillPoly` draws for it:
the pixels whose centres it covers and those its edges run through (OpenCV draws the
edges too), with its points moved half a pixel onto the pixel grid (pixel ``j`` spans
``[j, j + 1)``, its centre at ``j + 0.5``) and four bits of subpixel precision; that is
what ultralytics' ``polygons2masks`` draws, to within its truncation of the points to
integers. So the square from ``(1, 1)`` to ``(3, 3)`` below draws the pixels 1 to 3, the
last row and column because its edges run through them. An outline made from pixels
(:func:`outline`) runs through the centres of the boundary pixels, so filling it draws
exactly those pixels again; a region in several parts, or with holes, becomes one
polygon whose parts are joined by zero-width bridges (as ultralytics joins COCO's
multi-part segments), whose pixels the fill draws too. Mirrored, a polygon maps ``x ->
W - 1/16 - x`` (:meth:`Polygons.mirrored`), onto the mirror image of its pixels.

>>> square = np.array([[1.0, 1.0], [3.0, 1.0], [3.0, 3.0], [1.0, 3.0]])
>>> fill(square, (0, 4, 0, 4)).tolist()
[[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 1]]
>>> mask = fill(square, (0, 4, 0, 4))
>>> np.array_equal(fill(outline(mask), (0, 4, 0, 4)), mask)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import cv2
import numpy as np
import torch

from rankaug.polygon_geometry import (
    Region,
    clip,
    mirror_x,
    pixel_clip,
    pixel_region,
    resample,
    working_dtype,
)

__all__ = [
    "POLYGONS",
    "Polygons",
    "clip",
    "fill",
    "gather",
    "grids",
    "outline",
    "pack",
    "pixel_box",
    "pixel_clip",
    "pixel_region",
    "read_polygons",
    "resample",
    "traced",
]

POLYGONS: Final = "segments"
"""The sample key of the instance polygons."""

_SHIFT: Final = 4  # fractional bits of the points handed to cv2.fillPoly
_SCALE: Final = float(1 << _SHIFT)
_HALF: Final = 1 << (_SHIFT - 1)  # half a pixel in that fixed point


@dataclass(frozen=True, slots=True)
class Polygons:
    """One sample's polygons, read and checked, and how to give them back.

    Attributes:
        points: Each polygon, ``(K_i, 2)`` floating-point pixel ``x, y`` (never
            written): the ``(N, K, 2)`` array itself when the sample held one, else a
            tuple of arrays.
        points_per: ``K`` when the sample held an ``(N, K, 2)`` array (its output is one
            too, every polygon with ``K`` points), ``None`` for a sequence.
        dtype: The dtype the polygons are given back in: the array's, or that of the
            sequence's first polygon (``None`` for an empty sequence).
    """

    points: np.ndarray | tuple[np.ndarray, ...]
    points_per: int | None
    dtype: np.dtype[Any] | None

    def __len__(self) -> int:
        return len(self.points)

    def regions(self, hw: tuple[int, int]) -> list[Region]:
        """Where each polygon's pixels can be: its bounds rounded out, inside the image.

        A region is empty (``y0 == y1`` or ``x0 == x1``) when its polygon misses the
        image.
        """
        return [pixel_region(polygon, hw) for polygon in self.points]

    def mirrored(self, width: int) -> Polygons:
        """The polygons mirrored left to right in an image ``width`` pixels wide.

        On the fill's grid, ``x -> width - 1/16 - x``: each point lands in the mirror
        image of its pixel (pixel ``j`` in ``width - 1 - j``, see :func:`pixel_box`), so
        the pixel boxes are the mirrored boxes and upright edges draw the mirrored pixels
        (OpenCV's slanted lines are not symmetric: a pixel may differ). The fill puts a
        point on a pixel edge in the pixel to its right: ``width - x`` drew such a point
        a pixel right of its mirror image.
        """
        points = self.points
        if width >= _EXACT_MIRROR:  # float32 might not hold it: as mapped would do
            return self._moved(lambda p: p * (-1.0, 1.0) + (width - _STEP, 0.0))
        if isinstance(points, np.ndarray):
            moved: np.ndarray | tuple[np.ndarray, ...] = mirror_x(points, width - _STEP)
        else:
            moved = tuple(mirror_x(p, width - _STEP) for p in points)
        return Polygons(moved, self.points_per, self.dtype)

    def mapped(self, scale: tuple[float, float], offset: tuple[float, float]) -> Polygons:
        """The polygons scaled by ``(kx, ky)``, then moved by ``(x0, y0)``."""
        return self._moved(lambda p: p * scale + offset)

    def _moved(self, move: Any) -> Polygons:
        # in float32 at least: float16 would round the moved points and overflow past
        # 65504 (pack gives them back in ``dtype``)
        points = self.points
        if isinstance(points, np.ndarray):
            moved: np.ndarray | tuple[np.ndarray, ...] = move(points).astype(working_dtype(points))
        else:
            moved = tuple(move(p).astype(working_dtype(p)) for p in points)
        return Polygons(moved, self.points_per, self.dtype)


_STEP: Final = 1.0 / _SCALE  # the fill's fixed-point step
_EXACT_MIRROR: Final = 1 << (24 - _SHIFT)  # below it, float32 holds width - _STEP exactly


def read_polygons(value: Any, count: int, where: str) -> Polygons:
    """Check a sample's ``segments`` against its ``count`` boxes and read them.

    Args:
        value: An ``(N, K, 2)`` array or tensor, or a sequence of ``(K_i, 2)`` ones.
        count: How many boxes the sample has.
        where: The sample, for messages (``"dataset[3]"``).

    Returns:
        The polygons.

    Raises:
        TypeError: If ``value`` is not an array, a tensor or a sequence of them.
        ValueError: If it does not hold ``count`` polygons of ``K >= 3`` finite points
            (within 2**24 pixels of the origin).

    >>> read_polygons(np.zeros((2, 4, 2), np.float32), 2, "dataset[0]").points_per
    4
    >>> read_polygons([np.zeros((2, 2))], 1, "dataset[3]")
    Traceback (most recent call last):
    ...
    ValueError: dataset[3] segments[0] must be a (K, 2) polygon of K >= 3 finite points, ...
    """
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        if value.ndim != 3 or value.shape[0] != count or value.shape[2] != 2 or value.shape[1] < 3:
            raise ValueError(
                f"{where} segments must be an ({count}, K, 2) array of K >= 3 points per "
                f"polygon (one per box), got shape {value.shape}"
            )
        if value.dtype.kind not in "iuf":
            raise TypeError(f"{where} segments must hold numbers, got an array of {value.dtype}")
        dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float64)
        stacked = value.astype(dtype, copy=False)
        if stacked.size and not _in_range(stacked):
            raise ValueError(f"{where} segments has points {_RANGE}")
        return Polygons(stacked, value.shape[1], dtype)
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise TypeError(
            f"{where} segments must be an (N, K, 2) array or a sequence of (K, 2) polygons, "
            f"got {type(value).__name__}"
        )
    if len(value) != count:
        raise ValueError(
            f"{where} segments has {len(value)} polygons for {count} boxes (one per box)"
        )
    points = []
    for k, item in enumerate(value):
        array = item if type(item) is np.ndarray else _as_array(item)
        if array.dtype.kind not in "iuf":
            raise TypeError(
                f"{where} segments[{k}] must hold numbers, got an array of dtype {array.dtype}"
            )
        if array.ndim != 2 or array.shape[1] != 2 or len(array) < 3:
            raise ValueError(
                f"{where} segments[{k}] must be a (K, 2) polygon of K >= 3 finite points, "
                f"got shape {array.shape}"
            )
        points.append(array if array.dtype.kind == "f" else array.astype(np.float64))
    if points and not _in_range(np.concatenate(points)):  # one check for all
        k = next(k for k, p in enumerate(points) if not _in_range(p))
        raise ValueError(f"{where} segments[{k}] has points {_RANGE}")
    return Polygons(tuple(points), None, points[0].dtype if points else None)


_LIMIT: Final = float(1 << 24)  # pixels: the fill's fixed-point points stay in int32
_RANGE: Final = "that are not finite or lie beyond +-16777216 pixels"


def _in_range(points: np.ndarray) -> bool:
    """Whether every coordinate is finite and within ``+-_LIMIT`` (NaN is the greatest)."""
    high, low = np.maximum.reduce(points, axis=None), np.minimum.reduce(points, axis=None)
    return float(high) <= _LIMIT and float(low) >= -_LIMIT  # float64: float16's bound is inf


def _as_array(item: Any) -> np.ndarray:
    if isinstance(item, torch.Tensor):
        item = item.detach().cpu().numpy()
    return np.asarray(item)


def gather(points: Sequence[np.ndarray], like: Polygons, other: Polygons | None = None) -> Polygons:
    """An output's polygons, in the form of the main sample's (``like``).

    When ``like`` held an ``(N, K, 2)`` array, a polygon of another length (one made anew
    by :func:`outline` or cut, or a partner's) is resampled to ``K`` points
    (:func:`resample`: with fewer, it keeps its extremes, so its bounds, for ``K >= 4``).
    The dtype is ``like``'s, or ``other``'s when ``like`` held no polygon.

    >>> like = read_polygons(np.zeros((0, 3, 2), np.float32), 0, "dataset[0]")
    >>> [len(p) for p in gather([np.ones((5, 2))], like).points]
    [3]
    """
    count = like.points_per
    if count is not None:
        points = [p if len(p) == count else resample(p, count) for p in points]
    dtype = like.dtype if like.dtype is not None else (None if other is None else other.dtype)
    return Polygons(tuple(points), count, dtype)


def pack(polygons: Polygons) -> Any:
    """The polygons as a sample holds them: an ``(N, K, 2)`` array or a list of arrays.

    In their dtype (float64 when none is known).

    >>> like = read_polygons(np.zeros((0, 3, 2), np.float32), 0, "dataset[0]")
    >>> pack(gather([np.ones((3, 2))], like)).dtype, pack(like).shape
    (dtype('float32'), (0, 3, 2))
    """
    dtype = polygons.dtype if polygons.dtype is not None else np.dtype(np.float64)
    points = polygons.points
    packed: Any
    with np.errstate(over="ignore"):  # an overflow into float16 is refused below
        if polygons.points_per is None:
            packed = [np.asarray(p, dtype=dtype) for p in points]
        elif isinstance(points, np.ndarray):
            packed = points.astype(dtype, copy=False)
        elif points:  # each polygon cast straight into the output (no float64 stack first)
            packed = np.array(points, dtype)
        else:
            packed = np.empty((0, polygons.points_per, 2), dtype)
    if dtype.itemsize < 4 and len(points):  # float16 ends at 65504: never an inf point
        _check_fits(packed, dtype)
    return packed


def _check_fits(packed: np.ndarray | list[np.ndarray], dtype: np.dtype[Any]) -> None:
    """Refuse polygons that overflowed ``dtype`` (an ``inf`` where a point was)."""
    whole = packed if isinstance(packed, np.ndarray) else np.concatenate(packed)
    if not np.isfinite(whole).all():
        raise ValueError(
            f"segments do not fit their dtype {dtype}: a point lies beyond "
            f"+-{float(np.finfo(dtype).max):g} pixels (give the polygons as float32)"
        )


def fill(
    points: np.ndarray,
    region: Region,
    grid: np.ndarray | None = None,
    into: np.ndarray | None = None,
) -> np.ndarray:
    """The polygon's pixels over an image region: 1 on them, 0 elsewhere (uint8).

    Draw over a region that holds all of the polygon that is in the image (its
    :meth:`Polygons.regions`): OpenCV cuts a polygon at the region's edges, and where
    the region cuts through it the pixels along the cut may differ from the whole
    image's.

    Args:
        points: ``(K, 2)`` pixel ``x, y``.
        region: ``(y0, y1, x0, x1)``, the rows and columns drawn.
        grid: The points as :func:`grids` gives them, if made already.
        into: The region's pixels of a larger uint8 array (a view) to set to 1 on the
            polygon's pixels, in place (the others kept), instead of a new array.
    """
    y0, y1, x0, x1 = region
    out = np.zeros((y1 - y0, x1 - x0), np.uint8) if into is None else into
    if out.size:
        if grid is None:
            grid = grids(points)
        # the region's origin and the half pixel, in the grid's fixed point: whole numbers
        offset = (-(x0 << _SHIFT) - _HALF, -(y0 << _SHIFT) - _HALF)
        drawn = cv2.fillPoly(out, [grid], 1, cv2.LINE_8, _SHIFT, offset)  # (by position)
        if drawn is not out:  # OpenCV could not draw in place (it gives img back)
            out[...] = drawn
    return out


def grids(points: np.ndarray) -> np.ndarray:
    """What :func:`fill` hands OpenCV for ``(K, 2)`` points, or each polygon of ``(N, K, 2)``.

    The points in fixed point, :data:`_SHIFT` fractional bits, rounded once (``16 x``
    is exact in the working dtype); :func:`fill` moves them to its region and by the
    half pixel in whole fixed-point units, so every region draws the same pixels.
    Integers (int32), all at once.
    """
    dtype = working_dtype(points)  # float16 would overflow past 4096
    scaled = points.astype(dtype, copy=False) * dtype.type(_SCALE)
    grid: np.ndarray = np.rint(scaled, out=scaled).astype(np.int32)
    return grid


def pixel_box(bounds: np.ndarray) -> np.ndarray:
    """The box of the pixels :func:`fill` draws for polygons with these bounds.

    The box every wrapper gives a polygon's instance (the box of its object's pixels):
    of the pixels ``x0 <= px < x1``, ``y0 <= py < y1``. Every pixel the fill draws lies
    between those of the polygon's extreme points, and it draws theirs: a point at ``x``
    (moved half a pixel, rounded to the fill's fixed point) is in pixel
    ``floor(rint(16 * x) / 16)``. An outline through pixel centres (:func:`outline`) is
    half a pixel inside its box.

    Args:
        bounds: ``(..., 4)`` ``x_min, y_min, x_max, y_max`` of the points (computed in
            their dtype, float32 at least, as the fill does).

    Returns:
        ``(..., 4)`` float64 ``x0, y0, x1, y1``.

    >>> pixel_box(np.array([5.5, 10.5, 24.5, 19.5])).tolist()
    [5.0, 10.0, 25.0, 20.0]
    >>> pixel_box(np.array([1.0, 1.0, 3.0, 3.0])).tolist()  # the module docstring's square
    [1.0, 1.0, 4.0, 4.0]
    >>> pixel_box(np.array(pixel_clip((3, 4, 23, 12)))).tolist()  # cut to draw only those
    [3.0, 4.0, 23.0, 12.0]
    """
    scaled = bounds.astype(working_dtype(bounds), copy=False) * _SCALE  # in that dtype (NEP 50)
    np.rint(scaled, out=scaled)
    pixel = np.floor(scaled.astype(np.float64, copy=False) * (1.0 / _SCALE), out=scaled)
    box: np.ndarray = np.add(pixel, _FAR, dtype=np.float64)  # (faster than [..., 2:] += 1)
    return box


_FAR: Final = np.array([0.0, 0.0, 1.0, 1.0])  # past the last pixel


def outline(mask: np.ndarray, origin: tuple[int, int] = (0, 0)) -> np.ndarray:
    """One polygon around a non-empty mask's pixels (see the module docstring).

    Args:
        mask: Non-zero on the pixels (uint8), an image region.
        origin: ``(y0, x0)``, where the region starts in the image.

    Returns:
        ``(K, 2)`` float64 pixel ``x, y``, ``K >= 3``.
    """
    return traced(mask, origin)[0]


def traced(mask: np.ndarray, origin: tuple[int, int] = (0, 0)) -> tuple[np.ndarray, np.ndarray]:
    """:func:`outline`, and its points in whole pixels (int32, before the half pixel).

    ``cv2.boundingRect`` of those is the box of the mask's pixels: the outline runs
    through the boundary pixels, its bridges between points of it.
    """
    # the points in the image's pixels (whole numbers: exact), then onto their centres
    contours, _ = cv2.findContours(
        np.ascontiguousarray(mask, np.uint8),
        cv2.RETR_CCOMP,
        cv2.CHAIN_APPROX_SIMPLE,
        offset=(origin[1], origin[0]),
    )
    pixels = contours[0].reshape(-1, 2)
    if len(contours) > 1:
        first = pixels
        joined = [first]
        for contour in contours[1:]:  # from the first part's start out to each part and back
            piece = contour.reshape(-1, 2)
            joined += [first[:1], piece, piece[:1]]
        joined.append(first[:1])
        pixels = np.concatenate(joined)
    polygon = pixels + 0.5  # float64
    while len(polygon) < 3:  # a single pixel or a line: repeat the points
        polygon = np.concatenate((polygon, polygon[:1]))
    return polygon, pixels
