"""The few boxes of a mosaic without filters or warp, mapped row by row in Python.

Up to :data:`~rankaug.boxes.FEW_BOXES` pixel boxes under an axis-aligned map go through
:func:`row_by_row` instead of :func:`~rankaug.mosaic.targets._boxes`' dozen numpy calls,
each of which costs far more than its arithmetic for so few: the same operations in
the same order, so the same floats and the same boxes kept, bit for bit. A box that is
not inside its image by :func:`~rankaug.boxes.all_inside`'s rule sends the tiles to the
vectorised path, which clips or refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil
from typing import Any, Final

import numpy as np

from rankaug._multi.tiles import Tile
from rankaug.boxes import all_inside
from rankaug.mosaic.centres import TOLERANCE
from rankaug.mosaic.layout import Window

__all__ = ["row_by_row"]

_FAR: Final = 0.5 + TOLERANCE  # (rankaug.mosaic.centres' offset of the far edges)


def row_by_row(
    windows: Sequence[Window],
    tiles: Sequence[Tile],
    flip_width: int | None = None,
    dtype: np.dtype[Any] | None = None,
) -> tuple[list[bool] | None, np.ndarray] | None:
    """``_boxes`` (:mod:`~rankaug.mosaic.targets`) of pixel boxes, no warp, no filters.

    In Python, bit for bit: each box is mapped and clipped to its window with the
    vectorised path's operations in its order (a product, a sum, a maximum, a minimum),
    and kept where it holds a pixel centre (:func:`~rankaug.mosaic.centres.aligned`'s
    arithmetic, after comparisons that decide as it does for a box of no width or one
    2 pixels wide and high: the usual boxes cost what a width test costs). A few boxes
    go faster this way than through a dozen numpy calls, each of which costs far more
    than its arithmetic when it runs cold (between tiles' resampling, in the mosaic
    race). ``None`` when a box is not inside its image
    (:func:`~rankaug.boxes.all_inside`'s rule, an edge past it by float rounding
    inside, checked as each box is mapped): the vectorised path clips or refuses it.
    With ``flip_width`` kept boxes are mirrored in :func:`~rankaug.boxes.mirror_xyxy`'s
    floats. Which are kept: ``None`` when all are (the usual case), else a list of
    bools, no array (for :func:`~rankaug._multi.fields.join_kept`), one noted for each
    box as it is decided.

    A box outside its source window (about half of a mosaic's boxes: what of its tile
    the output cuts off) is dropped before it is mapped, as the centre test would drop
    it: the window's map takes the source window's edges to the output window's within
    float error (far below a pixel), so such a box, mapped and clipped, is no wider (or
    no higher) than that error, far below TOLERANCE: no pixel centre inside (an empty
    window's box, mapped to 0, is outside its empty source window too).
    """
    keep: list[bool] = []  # each box's fate, in order
    decided = keep.append
    kept: list[float] = []  # flat: numpy reads a flat list of floats twice as fast
    for window, tile in zip(windows, tiles, strict=True):
        th, tw = window.size  # the tile image's; its edges too, as floats: float compares
        width, height, left, top = float(tw), float(th), float(window.dx0), float(window.dy0)
        right, bottom = float(window.dx1), float(window.dy1)
        kx, ky, bx, by = window.kx, window.ky, window.bx, window.by  # x -> kx * x + bx
        # the source window (empty: 0, 0, 0, 0)
        shown_x0, shown_y0 = float(window.sx0), float(window.sy0)
        shown_x1, shown_y1 = float(window.sx1), float(window.sy1)
        rows = tile.boxes.tolist()
        for x0, y0, x1, y1 in rows:
            # inside its image, strictly: one chain per axis for a box of some width (the
            # usual: three comparisons), a second for one of none (x0 == x1, then
            # 0 < x0 < width); NaN fails both. Else all_inside, the rule (an edge past the
            # image by float rounding is on it: float32's 640.00006), decides
            if not (
                (0.0 <= x0 < x1 <= width or 0.0 < x0 == x1 < width)
                and (0.0 <= y0 < y1 <= height or 0.0 < y0 == y1 < height)
            ) and not all_inside(np.array([[x0, y0, x1, y1]]), tw, th):  # fmt: skip
                return None
            if x1 <= shown_x0 or x0 >= shown_x1 or y1 <= shown_y0 or y0 >= shown_y1:
                decided(False)  # outside: none shows
                continue
            # mapped, then clipped to the window: statements, as they cost fewer steps
            # than the expressions (nothing stored where the box lies inside)
            a = x0 * kx + bx
            if a > right:
                a = right
            elif a < left:
                a = left
            b = y0 * ky + by
            if b > bottom:
                b = bottom
            elif b < top:
                b = top
            c = x1 * kx + bx
            if c > right:
                c = right
            elif c < left:
                c = left
            d = y1 * ky + by
            if d > bottom:
                d = bottom
            elif d < top:
                d = top
            # a pixel centre (rankaug.mosaic.centres): surely one in a box 2 pixels
            # wide (the usual: what a width test costs), none in one of no width (one
            # hidden), else counted
            if (c - a >= 2.0 or (c > a and ceil(c - _FAR) > ceil(a - 0.5))) and (
                d - b >= 2.0 or (d > b and ceil(d - _FAR) > ceil(b - 0.5))
            ):
                if flip_width is None:
                    kept += a, b, c, d
                else:  # mirror_xyxy's floats
                    kept += flip_width - c, b, flip_width - a, d
                decided(True)
            else:
                decided(False)
    boxes = np.array(kept, dtype=np.float64 if dtype is None else dtype).reshape(-1, 4)
    return (keep if len(boxes) < len(keep) else None), boxes
