"""Where each tile goes: the grid, the cells, the scales and the windows (pure geometry).

From the plan's uniforms and the tiles' sizes alone (no pixels): the output is split
into ``rows x cols`` cells by interior lines; line ``k`` (1-based) of ``cols - 1`` lies
uniformly in ``[(k - 1 + 2 lo) / cols, (k - 1 + 2 hi) / cols]`` of the width,
``(lo, hi) = center_range``, and likewise for rows. Each tile is scaled
(``scale_mode``), times its drawn factor, and anchored towards the middle of the
mosaic; what of it falls inside its cell is its visible *window*. The output window
is integer; the source window is rounded to whole source pixels, and
:class:`Window` holds the affine map between them, the map ``cv2.resize`` applies,
which boxes, masks and keypoints follow exactly. What of a cell its tile does not
cover is filled. Each tile's nominal placement (its scale and where its corner lands,
before any rounding to whole source pixels) is kept too, for a fused affine
(:mod:`rankaug.mosaic.fused`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from rankaug._scalars import round_float
from rankaug.mosaic.config import MosaicConfig
from rankaug.mosaic.plan import Plan
from rankaug.mosaic.record import MosaicRecord

__all__ = [
    "Layout",
    "Placement",
    "Window",
    "grid_layout",
    "letterbox_layout",
    "lines",
    "new_layout",
]

Rect = tuple[int, int, int, int]  # y0, y1, x0, x1
Row = tuple[int, int, float, float, float, float, float, float, float, float,
            int, int, int, int, int, int, int, int]  # fmt: skip
"""A window's per-box table row (:attr:`Window.row`)."""
Placement = tuple[int, int, int, int]
"""A tile's nominal place on the canvas, ``(sw, sh, ox, oy)``: scaled to ``sw x sh``, its
top-left corner at ``(ox, oy)``; a tile ``tw`` wide maps ``x -> x * sw / tw + ox``."""


class Window:
    """One tile's source window mapped onto its output window.

    Args:
        size: The tile's ``(height, width)``.
        sx0: Left edge of the source window (tile pixels).
        sy0: Top edge of the source window.
        sx1: Right edge of the source window.
        sy1: Bottom edge of the source window.
        dx0: Left edge of the output window (output pixels).
        dy0: Top edge of the output window.
        dx1: Right edge of the output window.
        dy1: Bottom edge of the output window.

    Attributes:
        size: The tile's ``(height, width)``.
        kx: The map's horizontal scale (0 for an empty window).
        ky: Its vertical scale.
        bx: The map's horizontal offset: ``x -> kx * x + bx``.
        by: Its vertical offset.
        row: One row of the targets' per-box table: the tile's width and height, then
            as ``(x, y, x, y)`` the scale ``k`` and offset ``b`` of the map
            ``x -> k * x + b``, the output window's start and its end.
    """

    __slots__ = (
        "bx", "by", "dx0", "dx1", "dy0", "dy1", "kx", "ky", "size", "sx0", "sx1", "sy0", "sy1",
    )  # fmt: skip

    def __init__(
        self, size: tuple[int, int], sx0: int, sy0: int, sx1: int, sy1: int, dx0: int,
        dy0: int, dx1: int, dy1: int,
    ) -> None:  # fmt: skip
        self.size = size  # (one statement each: four at once build a tuple first)
        self.sx0 = sx0
        self.sy0 = sy0
        self.sx1 = sx1
        self.sy1 = sy1
        self.dx0 = dx0
        self.dy0 = dy0
        self.dx1 = dx1
        self.dy1 = dy1
        self.kx = kx = (dx1 - dx0) / (sx1 - sx0) if sx1 > sx0 else 0.0
        self.ky = ky = (dy1 - dy0) / (sy1 - sy0) if sy1 > sy0 else 0.0
        self.bx, self.by = dx0 - sx0 * kx, dy0 - sy0 * ky  # x -> kx * x + bx

    @property
    def row(self) -> Row:
        """The targets' per-box table row (see the class docstring), made when asked."""
        th, tw = self.size
        kx, ky, bx, by = self.kx, self.ky, self.bx, self.by
        dx0, dy0, dx1, dy1 = self.dx0, self.dy0, self.dx1, self.dy1
        return (
            tw, th, kx, ky, kx, ky, bx, by, bx, by, dx0, dy0, dx0, dy0, dx1, dy1, dx1, dy1,
        )  # fmt: skip

    @classmethod
    def empty(cls, size: tuple[int, int]) -> Window:
        """The window of a tile that shows nothing."""
        return cls(size, 0, 0, 0, 0, 0, 0, 0, 0)

    def map_xy(self, xy: np.ndarray) -> np.ndarray:
        """Map ``(N, 2k)`` source points ``(x, y, x, y, ...)`` onto the output."""
        out = np.empty_like(xy)
        out[:, 0::2] = (xy[:, 0::2] - self.sx0) * self.kx + self.dx0
        out[:, 1::2] = (xy[:, 1::2] - self.sy0) * self.ky + self.dy0
        return out


class Layout(NamedTuple):
    """Where every tile goes.

    Attributes:
        windows: One :class:`Window` per tile, aligned with the plan's indices.
        fills: The ``(y0, y1, x0, x1)`` rectangles no tile covers (for a letterbox, the
            whole canvas, painted over by the window).
        record: The record of the geometry (``epoch`` and ``state`` still to be set).
        placements: Each tile's nominal :data:`Placement` (its scaled size and its
            top-left corner on the canvas).
        flipped: Whether the output is mirrored left to right (an axis-aligned
            affine's flip, or the grid's: the windows and fills are those of the
            unflipped map, painted at their mirror images).
    """

    windows: list[Window]
    fills: list[Rect]
    record: MosaicRecord
    placements: list[Placement]
    flipped: bool = False


# Layout(...) without the Python-level __new__ NamedTuple generates: made per sample
new_layout: Final[Callable[[tuple[Any, ...]], Layout]] = functools.partial(tuple.__new__, Layout)
"""``Layout`` from the tuple of all five of its fields (``flipped`` too)."""


def lines(fractions: Sequence[float], count: int, extent: int, lo: float, hi: float) -> list[int]:
    """The grid lines across ``extent``: 0, the ``count - 1`` interior lines, ``extent``.

    >>> lines([0.5], 2, 100, 0.25, 0.75)
    [0, 50, 100]
    """
    found = [0]
    for k in range(1, count):
        a = (k - 1 + 2 * lo) / count
        b = (k - 1 + 2 * hi) / count
        found.append(round((a + fractions[k - 1] * (b - a)) * extent))
    found.append(extent)
    return sorted(found)


def _at(fractions: Sequence[float], steps: Sequence[tuple[float, float]], extent: int) -> list[int]:
    """:func:`lines` from the configuration's :attr:`~MosaicConfig.line_steps`, bit for bit."""
    if len(steps) == 1:  # one interior line (a 2x2 grid): in order already
        a, d = steps[0]
        return [0, round_float((a + fractions[0] * d) * extent), extent]
    found = [round_float((a + f * d) * extent) for (a, d), f in zip(steps, fractions, strict=False)]
    return sorted([0, *found, extent])


def grid_layout(config: MosaicConfig, plan: Plan, sizes: Sequence[tuple[int, int]]) -> Layout:
    """The layout of a mosaic.

    Args:
        config: The mosaic's configuration.
        plan: The sample's draws.
        sizes: Each tile's ``(height, width)``, main first.

    Returns:
        The layout.
    """
    layout = config.layout
    rows, cols = layout.grid
    height, width = config.canvas_hw
    ref_h, ref_w = config.output_size
    steps_x, steps_y = config.line_steps
    xs = _at(plan.fx, steps_x, width)
    ys = _at(plan.fy, steps_y, height)
    mode, places = layout.scale_mode, config.places
    keep, cover = mode == "keep", mode == "fill"
    windows: list[Window] = []
    fills: list[Rect] = []
    placements: list[Placement] = []
    cells, scales, src, dst = [], [], [], []
    # comparisons, not min() and max(): they cost ten times as much (rankaug._scalars)
    order = config.orders[plan.main_cell]
    for size, cell, factor in zip(sizes, order, plan.scales, strict=True):
        row, col, ax, ay = places[cell]
        cx0, cx1, cy0, cy1 = xs[col], xs[col + 1], ys[row], ys[row + 1]
        th, tw = size
        if keep:
            across, down = ref_w / tw, ref_h / th
        else:
            across, down = (cx1 - cx0) / tw, (cy1 - cy0) / th
        if cover:  # covers its cell: the larger
            scale = (across if across > down else down) * factor
        else:  # fits: the smaller
            scale = (across if across < down else down) * factor
        sw, sh = round_float(tw * scale), round_float(th * scale)
        if sw < 1:
            sw = 1
        if sh < 1:
            sh = 1
        # anchored towards the middle of the mosaic (see the package docstring)
        ox = cx1 - sw if ax < 0 else cx0 if ax > 0 else cx0 + (cx1 - cx0 - sw) // 2
        oy = cy1 - sh if ay < 0 else cy0 if ay > 0 else cy0 + (cy1 - cy0 - sh) // 2
        dx0, dx1 = (ox if ox > cx0 else cx0), (ox + sw if ox + sw < cx1 else cx1)
        dy0, dy1 = (oy if oy > cy0 else cy0), (oy + sh if oy + sh < cy1 else cy1)
        cells.append((row, col))
        scales.append(scale)
        placements.append((sw, sh, ox, oy))
        if dx1 <= dx0 or dy1 <= dy0:
            if cy1 > cy0 and cx1 > cx0:
                fills.append((cy0, cy1, cx0, cx1))
            src.append((0, 0, 0, 0))
            dst.append((cx0, cy0, cx0, cy0))
            windows.append(Window.empty(size))
            continue
        # whole source pixels for the visible window (rounded to the nearest), at least
        # one: rankaug._scalars.clamp written out, as statements (ints: x > n - 1 is
        # x >= n; nothing stored where no clamp applies)
        step_x, step_y = tw / sw, th / sh
        sx0 = round_float((dx0 - ox) * step_x)
        if sx0 < 0:
            sx0 = 0
        elif sx0 >= tw:
            sx0 = tw - 1
        sx1 = round_float((dx1 - ox) * step_x)
        if sx1 <= sx0:
            sx1 = sx0 + 1
        elif sx1 > tw:
            sx1 = tw
        sy0 = round_float((dy0 - oy) * step_y)
        if sy0 < 0:
            sy0 = 0
        elif sy0 >= th:
            sy0 = th - 1
        sy1 = round_float((dy1 - oy) * step_y)
        if sy1 <= sy0:
            sy1 = sy0 + 1
        elif sy1 > th:
            sy1 = th
        # what of the cell stays uncovered: the strips above, below, left and right
        if dy0 > cy0:
            fills.append((cy0, dy0, cx0, cx1))
        if cy1 > dy1:
            fills.append((dy1, cy1, cx0, cx1))
        if dx0 > cx0:
            fills.append((dy0, dy1, cx0, dx0))
        if cx1 > dx1:
            fills.append((dy0, dy1, dx1, cx1))
        src.append((sx0, sy0, sx1, sy1))
        dst.append((dx0, dy0, dx1, dy1))
        windows.append(Window(size, sx0, sy0, sx1, sy1, dx0, dy0, dx1, dy1))
    record: MosaicRecord = {
        "applied": True,
        "indices": list(plan.indices),
        "cells": cells,
        "center": (xs[cols // 2], ys[rows // 2]),
        "splits_x": xs[1:-1],
        "splits_y": ys[1:-1],
        "scales": scales,
        "src": src,
        "dst": dst,
        "epoch": 0,
        "state": "",
    }
    return new_layout((windows, fills, record, placements, False))


def letterbox_layout(config: MosaicConfig, index: int, size: tuple[int, int]) -> Layout:
    """The layout of a sample that is not a mosaic: its main image fit and centred.

    It is centred on the image the mosaic outputs (``config.image_hw``: YOLO's canvas
    for ``canvas="yolo"``, the output itself otherwise, also with an affine).

    Args:
        config: The mosaic's configuration.
        index: The main image's index.
        size: Its ``(height, width)``.

    Returns:
        The layout (the whole canvas is filled first).
    """
    height, width = config.image_hw
    ref_h, ref_w = config.output_size
    th, tw = size
    scale = min(ref_h / th, ref_w / tw)
    sw, sh = max(1, round(tw * scale)), max(1, round(th * scale))
    dx0, dy0 = (width - sw) // 2, (height - sh) // 2
    window = Window(size, 0, 0, tw, th, dx0, dy0, dx0 + sw, dy0 + sh)
    record: MosaicRecord = {
        "applied": False,
        "indices": [index],
        "cells": [(0, 0)],
        "center": (width // 2, height // 2),
        "splits_x": [],
        "splits_y": [],
        "scales": [sw / tw],
        "src": [(0, 0, tw, th)],
        "dst": [(dx0, dy0, dx0 + sw, dy0 + sh)],
        "epoch": 0,
        "state": "",
    }
    return Layout([window], [(0, height, 0, width)], record, [(sw, sh, dx0, dy0)])
