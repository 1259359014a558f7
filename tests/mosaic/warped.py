"""Oracles for fused affines, worked out from a sample's record alone (float64, no OpenCV).

A record holds each tile's visible window on the canvas (``dst``), the canvas-to-output
matrix ``M`` and each tile's map onto the output (``affine["maps"]``); from those the
owner of every output pixel, and where every source box must land, follow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from rankaug.mosaic import MosaicAffine
from tests.boxes.polygons import clip_polygon, enclosing, mapped_corners

Matrix = Sequence[Sequence[float]]

#: Preimages closer than this to a window's edge (canvas pixels) may go either way: OpenCV
#: computes them in fixed point (1/1024 pixel), and whole-pixel edges round at ties.
EDGE = 1e-2

AFFINES = st.builds(
    MosaicAffine,
    degrees=st.sampled_from([0.0, 0.0, 10.0, 45.0, 180.0]),
    translate=st.sampled_from([0.0, 0.1, 0.5]),
    scale=st.sampled_from([0.0, 0.5, 0.9]),
    shear=st.sampled_from([0.0, 0.0, 5.0, 30.0]),
    flip=st.sampled_from([0.0, 0.0, 0.5, 1.0]),
)


def invert(matrix: Matrix) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    (a, b, c), (d, e, f) = matrix
    det = a * e - b * d
    ia, ib, id_, ie = e / det, -b / det, -d / det, a / det
    return (ia, ib, -(ia * c + ib * f)), (id_, ie, -(id_ * c + ie * f))


def apply(matrix: Matrix, x: Any, y: Any) -> tuple[Any, Any]:
    (a, b, c), (d, e, f) = matrix
    return a * x + b * y + c, d * x + e * y + f


def is_aligned(record: dict[str, Any]) -> bool:
    """Whether the recorded ``M`` neither rotates nor shears (resized, not warped; a flip
    mirrors the resized output)."""
    (_, b, _), (d, _, _) = record["affine"]["matrix"]
    return b == 0.0 and d == 0.0


def is_flipped(record: dict[str, Any]) -> bool:
    return bool(record["affine"].get("flip", False))


def unflipped(record: dict[str, Any], width: int) -> dict[str, Any]:
    """The record as if not flipped (``x -> width - x`` undone on ``M`` and the maps)."""
    if not is_flipped(record):
        return record

    def undo(m: Matrix) -> tuple[tuple[float, ...], ...]:
        (a, b, c), row = m
        return (-a, -b, width - c), tuple(row)

    affine = record["affine"]
    affine = {**affine, "matrix": undo(affine["matrix"]), "maps": [undo(m) for m in affine["maps"]]}
    return {**record, "affine": affine}


def ownership(record: dict[str, Any], hw: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The tile owning each output pixel (-1: none) and where that is not certain.

    A pixel belongs to the tile whose visible canvas window holds the preimage of its
    centre; it is uncertain within :data:`EDGE` of any window's edge.
    """
    height, width = hw
    cx, cy = apply(invert(record["affine"]["matrix"]),
                   np.arange(width)[None, :] + 0.5, np.arange(height)[:, None] + 0.5)  # fmt: skip
    owner = np.full(hw, -1)
    unsure = np.zeros(hw, dtype=bool)
    for k, (x0, y0, x1, y1) in enumerate(record["dst"]):
        if x1 <= x0 or y1 <= y0:
            continue
        inside = (cx >= x0) & (cx < x1) & (cy >= y0) & (cy < y1)
        owner[inside] = k
        near = (cx > x0 - EDGE) & (cx < x1 + EDGE) & (cy > y0 - EDGE) & (cy < y1 + EDGE)
        deep = (cx > x0 + EDGE) & (cx < x1 - EDGE) & (cy > y0 + EDGE) & (cy < y1 - EDGE)
        unsure |= near & ~deep
    return owner, unsure


def tile_box(record: dict[str, Any], k: int, box: Sequence[float]) -> tuple[float, ...] | None:
    """Where tile ``k``'s source ``box`` must land: clipped to its visible canvas window,
    its corners through ``M``, the enclosing box of the part inside the output; ``None``
    for a box with nothing visible there (no wider and higher than the tolerance)."""
    affine = record["affine"]
    matrix, to_output = affine["matrix"], affine["maps"][k]
    x0, y0, x1, y1 = record["dst"][k]
    placed = apply(invert(matrix), *apply(to_output, np.array(box[0::2]), np.array(box[1::2])))
    canvas = (
        max(float(placed[0][0]), x0), max(float(placed[1][0]), y0),
        min(float(placed[0][1]), x1), min(float(placed[1][1]), y1),
    )  # fmt: skip
    if canvas[2] - canvas[0] <= 1e-3 or canvas[3] - canvas[1] <= 1e-3:
        return None
    return enclosing(clip_polygon(mapped_corners(canvas, matrix), record["hw"]))


#: How far (output pixels) the oracle's arithmetic may stray from the library's: a centre
#: closer than this to an edge it is tested against may go either way.
TIE = 1e-7


def centre_between(low: float, high: float, far: float = 1e-3) -> tuple[bool, bool]:
    """Whether ``[low, high - far)`` holds a pixel centre ``j + 0.5``: certainly, possibly.

    The axis-aligned rule for a box to show a pixel (``rankaug.mosaic.centres``, ``far``
    its ``TOLERANCE``), computed here in other arithmetic: a centre within :data:`TIE`
    of either end may go either way.
    """
    first = math.ceil(low - 0.5 + TIE)  # the first centre surely at or past low
    maybe = math.ceil(low - 0.5 - TIE)
    return first + 0.5 < high - far - TIE, maybe + 0.5 < high - far + TIE


def box_shows(box: Sequence[float]) -> tuple[bool, bool]:
    """Whether an output box (xyxy, unmirrored) holds a pixel centre: surely, possibly."""
    (sure_x, may_x), (sure_y, may_y) = (
        centre_between(box[0], box[2]),
        centre_between(box[1], box[3]),
    )
    return sure_x and sure_y, may_x and may_y


def warped_shows(
    record: dict[str, Any], k: int, box: Sequence[float], hw: tuple[int, int]
) -> tuple[bool, bool]:
    """Whether tile ``k``'s source ``box`` shows a pixel under a warp: surely, possibly.

    Some output pixel's centre has its preimage in the box clipped to the tile's visible
    canvas window (sure farther than :data:`EDGE` inside it, possible within that of it).
    """
    affine = record["affine"]
    to_canvas = invert(affine["matrix"])
    x0, y0, x1, y1 = record["dst"][k]
    placed = apply(to_canvas, *apply(affine["maps"][k], np.array(box[0::2]), np.array(box[1::2])))
    left, top = max(float(placed[0][0]), x0), max(float(placed[1][0]), y0)
    right, bottom = min(float(placed[0][1]), x1), min(float(placed[1][1]), y1)
    height, width = hw
    cx, cy = apply(to_canvas, np.arange(width)[None, :] + 0.5, np.arange(height)[:, None] + 0.5)

    def inside(margin: float) -> bool:
        return bool(((cx >= left + margin) & (cx < right - margin) & (cy >= top + margin)
                     & (cy < bottom - margin)).any())  # fmt: skip

    return inside(EDGE), inside(-EDGE)


def _nearest(value: float) -> int:
    """``round(value)``, for an example whose edges are not float error away from a tie.

    A flipped record holds the flipped ``M``; :func:`unflipped` gives back the library's
    unflipped one only to within float error (``width - (width - c)``), which can move an
    edge lying on a half pixel to the other side of it. There the oracle cannot tell
    which way the library rounded, and hypothesis skips the example.
    """
    assume(abs(value - math.floor(value) - 0.5) > _TIE)
    return round(value)


_TIE = 1e-9
"""How near a half pixel an edge is a tie the oracle cannot decide."""


def realised(
    record: dict[str, Any], k: int, size: tuple[int, int], hw: tuple[int, int]
) -> tuple[int, ...] | None:
    """An axis-aligned affine's whole-pixel windows for tile ``k`` (of ``size``), by the
    documented rule: the visible canvas window's edges through ``M``, rounded and clipped
    to the output; the source window rounded through the tile's place and ``M``.
    Returns ``(sx0, sy0, sx1, sy1, ex0, ey0, ex1, ey1)``, or ``None`` for nothing shown."""
    record = unflipped(record, hw[1])  # the windows of the unflipped map
    (sx, _, bx), (_, sy, by) = record["affine"]["matrix"]
    to_output = record["affine"]["maps"][k]
    th, tw = size
    # the tile's place, whole numbers: its scaled size and its corner on the canvas
    sw, sh = round(to_output[0][0] / sx * tw), round(to_output[1][1] / sy * th)
    ox, oy = round((to_output[0][2] - bx) / sx), round((to_output[1][2] - by) / sy)
    x0, y0, x1, y1 = record["dst"][k]
    if x1 <= x0 or y1 <= y0:
        return None
    ex0, ex1 = (min(max(_nearest(sx * x + bx), 0), hw[1]) for x in (x0, x1))
    ey0, ey1 = (min(max(_nearest(sy * y + by), 0), hw[0]) for y in (y0, y1))
    if ex1 <= ex0 or ey1 <= ey0:
        return None
    sx0 = min(max(_nearest(((ex0 - bx) / sx - ox) * (tw / sw)), 0), tw - 1)
    sx1 = min(max(_nearest(((ex1 - bx) / sx - ox) * (tw / sw)), sx0 + 1), tw)
    sy0 = min(max(_nearest(((ey0 - by) / sy - oy) * (th / sh)), 0), th - 1)
    sy1 = min(max(_nearest(((ey1 - by) / sy - oy) * (th / sh)), sy0 + 1), th)
    return sx0, sy0, sx1, sy1, ex0, ey0, ex1, ey1


def landing(
    record: dict[str, Any], k: int, box: Sequence[float], size: tuple[int, int]
) -> tuple[float, ...] | None:
    """Where tile ``k``'s source ``box`` must land, for either kind of affine."""
    if not is_aligned(record):
        return tile_box(record, k, box)
    hw = (int(record["hw"][3]), int(record["hw"][2]))
    windows = realised(record, k, size, hw)
    if windows is None:
        return None
    sx0, sy0, sx1, sy1, ex0, ey0, ex1, ey1 = windows
    kx, ky = (ex1 - ex0) / (sx1 - sx0), (ey1 - ey0) / (sy1 - sy0)
    left, right = max((box[0] - sx0) * kx + ex0, ex0), min((box[2] - sx0) * kx + ex0, ex1)
    top, bottom = max((box[1] - sy0) * ky + ey0, ey0), min((box[3] - sy0) * ky + ey0, ey1)
    if is_flipped(record):  # the resized output, mirrored
        return hw[1] - right, top, hw[1] - left, bottom
    return left, top, right, bottom


def with_hw(record: dict[str, Any], hw: tuple[int, int]) -> dict[str, Any]:
    """The record, with the output window ``(0, 0, w, h)`` under ``"hw"`` for the oracles."""
    return {**record, "hw": (0.0, 0.0, float(hw[1]), float(hw[0]))}


def source_points(record: dict[str, Any], k: int, hw: tuple[int, int]) -> tuple[Any, Any]:
    """The preimages, in tile ``k``'s pixels, of every output pixel's centre."""
    height, width = hw
    return apply(invert(record["affine"]["maps"][k]),
                 np.arange(width)[None, :] + 0.5, np.arange(height)[:, None] + 0.5)  # fmt: skip
