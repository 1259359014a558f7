"""The fused affine: each tile's placement composed with ``M``, straight onto the output.

No canvas is built. From the layout on the canvas (:mod:`~rankaug.mosaic.layout`) and
the affine's matrix ``M`` (:mod:`~rankaug.mosaic.affine`), :func:`fuse` gives one of:

* **a** :class:`~rankaug.mosaic.layout.Layout` **on the output**, when ``M`` is
  axis-aligned (no rotation, no shear): each visible canvas window's edges are mapped by
  ``M`` and rounded to whole output pixels, one edge map for all tiles (shared edges stay
  shared: windows and fills still cover the output exactly once), the source window is
  rounded to whole source pixels through the composite of the tile's placement and
  ``M``, and boxes follow the realised map of one onto the other
  (:class:`~rankaug.mosaic.layout.Window`). Paint and targets are the plain mosaic's:
  one resampling per visible tile (:func:`~rankaug.mosaic.paint.resize_into`), so the
  fused mosaic costs what a plain one costs.
  With a flip (and no rotation or shear) the layout is that of the unflipped ``M``,
  marked ``flipped``: each window is painted at its mirrored place, resampled
  mirrored (:func:`~rankaug.mosaic.paint.paint_image`: nothing more per pixel), and
  the targets mirrored.
* **a** :class:`Warp`, when ``M`` rotates or shears: per tile the composite map, the
  region of the output it can reach (the bounding box of the image of its visible
  canvas window, within the output: the cost scales with the visible area) and the
  source crop feeding it, plus the *owner* of every output pixel: the tile whose visible
  canvas window holds the preimage of the pixel's centre. The owners come from one
  nearest-neighbour ``cv2.warpAffine`` of the canvas's window labels with ``M``, so they
  are one partition for every tile (no seam, no overlap, no tile drawn in another's
  cell; OpenCV computes the preimages in fixed point, to 1/1024 pixel). Each tile is then
  warped once into its region and copied where it owns the pixels. (``BORDER_TRANSPARENT``
  alone is no substitute: OpenCV 5 blends a region's edge pixels with what the output
  already holds, so a tile bleeds about a pixel into its neighbours' cells.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import cv2
import numpy as np

from rankaug._scalars import round_float
from rankaug.mosaic.affine import (
    AffineDraw,
    Matrix,
    affine_matrices,
    affine_record,
    is_axis_aligned,
)
from rankaug.mosaic.layout import Layout, Placement, Window, new_layout
from rankaug.mosaic.record import MosaicRecord

__all__ = ["TileWarp", "Warp", "fuse", "invert"]

_MARGIN = 4  # source pixels around a crop: the widest kernel's reach (INTER_LANCZOS4)


class TileWarp:
    """One tile's part of a :class:`Warp`.

    Args:
        label: The tile's position in the mosaic (its owner label).
        size: The tile's ``(height, width)``.
        window: Its visible canvas window ``(x0, y0, x1, y1)``.
        placement: Its nominal :data:`~rankaug.mosaic.layout.Placement` on the canvas.
        matrix: The canvas-to-output matrix ``M``.
        hw: The output's ``(height, width)``.

    Attributes:
        placement: The tile's map onto the canvas, ``(kx, ky, ox, oy)``:
            ``x -> kx * x + ox``, ``y -> ky * y + oy``.
        visible: Whether any of it can reach the output.
        roi: The ``(y0, y1, x0, x1)`` region of the output it can reach.
        crop: The ``(y0, y1, x0, x1)`` part of the tile that feeds it.
        inverse: The ``2 x 3`` map from region pixel indices to crop pixel indices,
            for ``cv2.warpAffine`` with ``WARP_INVERSE_MAP``.
        row: The targets' per-box table row, as
            :attr:`~rankaug.mosaic.layout.Window.row`, of the nominal map onto the canvas
            and the visible canvas window.
    """

    __slots__ = ("crop", "inverse", "label", "placement", "roi", "row", "visible", "window")

    def __init__(
        self,
        label: int,
        size: tuple[int, int],
        window: tuple[int, int, int, int],
        placement: Placement,
        matrix: Matrix,
        hw: tuple[int, int],
    ) -> None:
        self.label, self.window = label, window
        th, tw = size
        sw, sh, ox, oy = placement
        kx, ky = sw / tw, sh / th
        self.placement = (kx, ky, float(ox), float(oy))
        x0, y0, x1, y1 = window
        self.row = (
            tw, th, kx, ky, kx, ky, ox, oy, ox, oy, x0, y0, x0, y0, x1, y1, x1, y1,
        )  # fmt: skip
        corners = [apply(matrix, x, y) for x, y in ((x0, y0), (x1, y0), (x0, y1), (x1, y1))]
        height, width = hw
        rx0 = max(math.floor(min(p[0] for p in corners)), 0)
        rx1 = min(math.ceil(max(p[0] for p in corners)), width)
        ry0 = max(math.floor(min(p[1] for p in corners)), 0)
        ry1 = min(math.ceil(max(p[1] for p in corners)), height)
        self.visible = x1 > x0 and y1 > y0 and rx1 > rx0 and ry1 > ry0
        self.roi = (ry0, ry1, rx0, rx1)
        # the source behind the visible window, and the kernel's reach around it
        cx0 = min(max(math.floor((x0 - ox) / kx) - _MARGIN, 0), tw - 1)
        cx1 = max(min(math.ceil((x1 - ox) / kx) + _MARGIN, tw), cx0 + 1)
        cy0 = min(max(math.floor((y0 - oy) / ky) - _MARGIN, 0), th - 1)
        cy1 = max(min(math.ceil((y1 - oy) / ky) + _MARGIN, th), cy0 + 1)
        self.crop = (cy0, cy1, cx0, cx1)
        # region index -> output (+0.5, the pixel's centre) -> canvas -> tile -> crop index
        to_tile = compose(((1 / kx, 0.0, -ox / kx), (0.0, 1 / ky, -oy / ky)), invert(matrix))
        self.inverse = np.array(
            compose(
                ((1.0, 0.0, -0.5 - cx0), (0.0, 1.0, -0.5 - cy0)),
                compose(to_tile, ((1.0, 0.0, rx0 + 0.5), (0.0, 1.0, ry0 + 0.5))),
            )
        )


class Warp(NamedTuple):
    """A mosaic whose affine rotates or shears: where every tile goes on the output.

    Attributes:
        tiles: One :class:`TileWarp` per tile, aligned with the plan's indices.
        owners: ``(height, width)`` labels: which tile owns each output pixel
            (:attr:`nobody` where none does).
        nobody: The label of pixels no tile owns.
        matrix: The canvas-to-output matrix ``M``.
        record: The record of the geometry, with the affine's.
    """

    tiles: list[TileWarp]
    owners: np.ndarray
    nobody: int
    matrix: Matrix
    record: MosaicRecord


def fuse(
    layout: Layout, draw: AffineDraw, canvas_hw: tuple[int, int], hw: tuple[int, int]
) -> Layout | Warp:
    """Compose the layout on ``canvas_hw`` with the drawn affine onto the ``hw`` output.

    Args:
        layout: The layout on the canvas.
        draw: The affine's draws.
        canvas_hw: The ``(height, width)`` of the canvas the layout is on.
        hw: The output's ``(height, width)``.

    Returns:
        A layout on the output (axis-aligned affines), else a :class:`Warp`; either
        records the affine under ``"affine"``.
    """
    matrix, unflipped = affine_matrices(draw, canvas_hw, hw)
    record = layout.record
    maps = [
        compose(matrix, ((sw / w.size[1], 0.0, ox), (0.0, sh / w.size[0], oy)))
        for w, (sw, sh, ox, oy) in zip(layout.windows, layout.placements, strict=True)
    ]
    record["affine"] = affine_record(draw, matrix, maps)
    if is_axis_aligned(matrix):
        return _aligned(layout, matrix, canvas_hw, hw)
    if draw.flip and is_axis_aligned(unflipped):  # but for the flip: resized mirrored
        return _aligned(layout, unflipped, canvas_hw, hw, flipped=True)
    tiles = [
        TileWarp(k, w.size, (w.dx0, w.dy0, w.dx1, w.dy1), placement, matrix, hw)
        for k, (w, placement) in enumerate(zip(layout.windows, layout.placements, strict=True))
    ]
    owners, nobody = _owners(layout.windows, matrix, canvas_hw, hw)
    return Warp(tiles, owners, nobody, matrix, record)


def _aligned(
    layout: Layout,
    matrix: Matrix,
    canvas_hw: tuple[int, int],
    hw: tuple[int, int],
    flipped: bool = False,
) -> Layout:
    """The layout on the output of an axis-aligned ``matrix`` (see the module docstring).

    ``flipped``: the output is that layout mirrored (``matrix`` without the flip).
    """
    (sx, _, bx), (_, sy, by) = matrix
    height, width = hw
    # every edge is a grid line, a tile's edge or the canvas' edge: each mapped once
    edges_x, edges_y = {0, canvas_hw[1]}, {0, canvas_hw[0]}
    for w in layout.windows:
        edges_x.update((w.dx0, w.dx1))
        edges_y.update((w.dy0, w.dy1))
    for y0, y1, x0, x1 in layout.fills:
        edges_x.update((x0, x1))
        edges_y.update((y0, y1))
    xs: dict[int, int] = {}
    ys: dict[int, int] = {}
    for x in edges_x:
        e = round_float(sx * x + bx)
        xs[x] = 0 if e < 0 else width if e > width else e
    for y in edges_y:
        e = round_float(sy * y + by)
        ys[y] = 0 if e < 0 else height if e > height else e
    windows = []
    for w, (sw, sh, ox, oy) in zip(layout.windows, layout.placements, strict=True):
        th, tw = w.size
        dx0, dx1, dy0, dy1 = xs[w.dx0], xs[w.dx1], ys[w.dy0], ys[w.dy1]
        if not w.kx or dx1 <= dx0 or dy1 <= dy0:
            windows.append(Window.empty((th, tw)))
            continue
        # whole source pixels through the composite map, rounded to the nearest and
        # clamped as the layout does (the same expressions: an identity affine changes
        # nothing)
        # (rankaug._scalars.clamp written out, as in grid_layout: a call each cost more)
        step_x, step_y = tw / sw, th / sh
        sx0 = round_float(((dx0 - bx) / sx - ox) * step_x)
        sx0 = 0 if sx0 < 0 else tw - 1 if sx0 > tw - 1 else sx0
        sx1 = round_float(((dx1 - bx) / sx - ox) * step_x)
        sx1 = sx0 + 1 if sx1 < sx0 + 1 else tw if sx1 > tw else sx1
        sy0 = round_float(((dy0 - by) / sy - oy) * step_y)
        sy0 = 0 if sy0 < 0 else th - 1 if sy0 > th - 1 else sy0
        sy1 = round_float(((dy1 - by) / sy - oy) * step_y)
        sy1 = sy0 + 1 if sy1 < sy0 + 1 else th if sy1 > th else sy1
        windows.append(Window((th, tw), sx0, sy0, sx1, sy1, dx0, dy0, dx1, dy1))
    # the fills, and the output beyond the canvas' image: above, below, left and right
    left, right, top, bottom = xs[0], xs[canvas_hw[1]], ys[0], ys[canvas_hw[0]]
    rects = [(ys[y0], ys[y1], xs[x0], xs[x1]) for y0, y1, x0, x1 in layout.fills]
    rects += [(0, top, 0, width), (bottom, height, 0, width), (top, bottom, 0, left),
              (top, bottom, right, width)]  # fmt: skip
    fills = [r for r in rects if r[1] > r[0] and r[3] > r[2]]
    return new_layout((windows, fills, layout.record, layout.placements, flipped))


def _owners(
    windows: Sequence[Window], matrix: Matrix, canvas_hw: tuple[int, int], hw: tuple[int, int]
) -> tuple[np.ndarray, int]:
    """Which tile owns each output pixel: the canvas's window labels warped by ``matrix``."""
    dtype = np.uint8 if len(windows) < 255 else np.uint16
    nobody = int(np.iinfo(dtype).max)
    height, width = hw
    inverse = invert(matrix)
    # only the part of the canvas the output sees
    seen = [apply(inverse, x, y) for x, y in ((0, 0), (width, 0), (0, height), (width, height))]
    qx0 = min(max(math.floor(min(p[0] for p in seen)), 0), canvas_hw[1])
    qx1 = min(max(math.ceil(max(p[0] for p in seen)), qx0), canvas_hw[1])
    qy0 = min(max(math.floor(min(p[1] for p in seen)), 0), canvas_hw[0])
    qy1 = min(max(math.ceil(max(p[1] for p in seen)), qy0), canvas_hw[0])
    if qx1 <= qx0 or qy1 <= qy0:
        return np.full(hw, nobody, dtype), nobody
    labels = np.full((qy1 - qy0, qx1 - qx0), nobody, dtype)
    for label, w in enumerate(windows):
        if w.kx:  # (clamped at 0: a negative bound would count from the end)
            rows = slice(max(w.dy0 - qy0, 0), max(w.dy1 - qy0, 0))
            labels[rows, max(w.dx0 - qx0, 0) : max(w.dx1 - qx0, 0)] = label
    # output index -> its centre -> canvas -> label index
    to_labels = compose(
        ((1.0, 0.0, -0.5 - qx0), (0.0, 1.0, -0.5 - qy0)),
        compose(inverse, ((1.0, 0.0, 0.5), (0.0, 1.0, 0.5))),
    )
    owners = cv2.warpAffine(
        labels, np.array(to_labels), (width, height),
        flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT,
        borderValue=nobody,
    )  # fmt: skip
    return owners, nobody


def apply(matrix: Matrix, x: float, y: float) -> tuple[float, float]:
    """The image of the point ``(x, y)``."""
    (a, b, c), (d, e, f) = matrix
    return a * x + b * y + c, d * x + e * y + f


def compose(outer: Matrix, inner: Matrix) -> Matrix:
    """``outer . inner``: ``inner`` first.

    >>> compose(((2.0, 0.0, 1.0), (0.0, 2.0, 0.0)), ((1.0, 0.0, 3.0), (0.0, 1.0, 0.0)))
    ((2.0, 0.0, 7.0), (0.0, 2.0, 0.0))
    """
    (a, b, c), (d, e, f) = outer
    (p, q, r), (s, t, u) = inner
    return (
        (a * p + b * s, a * q + b * t, a * r + b * u + c),
        (d * p + e * s, d * q + e * t, d * r + e * u + f),
    )


def invert(matrix: Matrix) -> Matrix:
    """The inverse map (``matrix`` must be invertible).

    >>> invert(((2.0, 0.0, 4.0), (0.0, 4.0, 0.0)))
    ((0.5, -0.0, -2.0), (-0.0, 0.25, -0.0))
    """
    (a, b, c), (d, e, f) = matrix
    det = a * e - b * d
    ia, ib, id_, ie = e / det, -b / det, -d / det, a / det
    return ((ia, ib, -(ia * c + ib * f)), (id_, ie, -(id_ * c + ie * f)))
