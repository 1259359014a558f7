"""The HSV jitter's tables applied plane by plane, by the cheapest exact step for each.

:class:`~rankaug.HSVJitter` converts the image to 8-bit HSV into the output, then
:func:`apply_tables` splits it into three planes each thread keeps, maps each changed
plane into a second kept plane by its cheapest exact step and merges them into a kept
image, which is converted back into the output. The hue is a shift with wrap-round,
``(h + n) % 180``, in whole numbers (three vectorised passes, a third of a ``cv2.LUT``
here) whenever its table is one (skipped when it is the identity, a shift under one
step); saturation and value are one ``cv2.convertScaleAbs`` each (``x * k + b`` in
float32) when a 256-value probe shows that it gives exactly the table for this draw.
Otherwise that plane is looked up in its table. Every path gives exactly the tables
(:func:`rankaug.hsv.hsv_tables`).
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Final

import cv2
import numpy as np

__all__ = [
    "DOWN", "apply_tables", "gives", "greys_stay_grey", "hue_shift", "kept", "offset_for",
    "scale_plane", "shift_hue",
]  # fmt: skip

_IDENTITY: Final = np.arange(256, dtype=np.uint8)
_X32: Final = _IDENTITY.astype(np.float32)
_ROW: Final = _IDENTITY.reshape(1, 256)  # one row: convertScaleAbs' vectorised loop
_COLUMN: Final = np.repeat(_IDENTITY[:, None], 2, axis=1)[:, :1]  # 256 rows: its scalar loop
_SHIFTS: Final = [  # (x + n) % 180 on x < 180, for each n, as bytes (compared by hue_shift)
    row.tobytes() for row in ((_IDENTITY[:180] + np.arange(180)[:, None]) % 180).astype(np.uint8)
]
DOWN: Final = -0.5 + 2.0**-14  # round(k * x + DOWN): k * x rounded down
_SCRATCH: Final = threading.local()  # see kept


def apply_tables(
    hsv: np.ndarray,
    hue: np.ndarray | int,
    sat: np.ndarray,
    val: np.ndarray,
    saturation: float,
    value: float,
) -> np.ndarray:
    """Map ``hsv`` (an 8-bit HSV image, C-contiguous) through the tables, plane by plane.

    ``saturation`` and ``value`` are the draw's gains ``r`` (0: that table is ``x``);
    ``hue`` is the hue's table, or ``n`` where it is known to be ``(x + n) % 180``.

    The image is split into three planes, each table's plane is mapped into a second
    plane by its cheapest exact step (the hue by :func:`shift_hue`, saturation and value
    by :func:`scale_plane`) and the planes are merged into an image; every plane and the
    image are this thread's own (:func:`kept`).

    Returns:
        The mapped image: ``hsv`` itself when every table is the identity, else this
        thread's kept image.
    """
    table = None if isinstance(hue, int) else hue
    shift = hue if isinstance(hue, int) else hue_shift(hue)
    if shift == 0 and not (saturation or value):  # else tables are x itself
        return hsv
    # the three planes, the hue's and its mask, the two scaled: seven planes of one kept
    # buffer, taken at once (a call each cost more), as the image they merge into
    h, s, v, hue_out, where, sat_out, val_out = kept("planes", (7, *hsv.shape[:2]))
    planes = [h, s, v]
    cv2.split(hsv, planes)
    if shift != 0:
        planes[0] = shift_hue(h, shift, table, out=hue_out, where=where)
    if saturation:
        planes[1] = scale_plane(s, 1, saturation + 1.0, sat, out=sat_out)
    if value:
        planes[2] = scale_plane(v, 2, value + 1.0, val, out=val_out)
    mapped = kept("image", hsv.shape)
    cv2.merge(planes, mapped)
    return mapped


def kept(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A C-contiguous uint8 array of ``shape``, this thread's own, kept between calls.

    Fresh arrays per image can cost more than the work on them wherever the allocator
    hands back fresh pages (it varies from process to process), so each name keeps one
    buffer, grown when a larger shape comes (a mosaic's coloured rows vary in number),
    and hands out its front. OpenCV's ``LUT`` and ``transform`` in place take a
    temporary of their own, so no step writes into its source.
    """
    size = math.prod(shape)
    kept: np.ndarray | None = getattr(_SCRATCH, name, None)
    if kept is None or kept.size < size:
        kept = np.empty(size, np.uint8)
        setattr(_SCRATCH, name, kept)
    return kept[:size].reshape(shape)


@functools.cache
def greys_stay_grey(codes: tuple[int, int]) -> bool:
    """Whether OpenCV takes every grey to hue 0, saturation 0 and back, both ways.

    ``codes``: the conversions to HSV and back. Checked once per process and pair, on
    every value and every 8-bit hue (which the hue table may give a grey), by the
    conversions' vectorised loops (rows of 256 pixels) and their scalar ones (rows of
    one pixel).
    """
    forward, back = codes
    greys = np.repeat(_IDENTITY, 3).reshape(1, 256, 3)
    hsv = np.zeros((180, 256, 3), np.uint8)
    hsv[..., 0], hsv[..., 2] = np.arange(180, dtype=np.uint8)[:, None], _IDENTITY
    expected = np.repeat(hsv[..., 2:], 3, axis=2)
    made = np.zeros((1, 256, 3), np.uint8)
    made[..., 2] = _IDENTITY
    return all(
        np.array_equal(cv2.cvtColor(greys.reshape(shape), forward).reshape(1, 256, 3), made)
        for shape in ((1, 256, 3), (256, 1, 3))
    ) and all(
        np.array_equal(cv2.cvtColor(hsv.reshape(shape), back).reshape(hsv.shape), expected)
        for shape in (hsv.shape, (180 * 256, 1, 3))
    )


def hue_shift(hue: np.ndarray) -> int | None:
    """``n`` when the hue table is ``(x + n) % 180`` on OpenCV's hues, else ``None``.

    ``0`` is the identity (a shift under one step). A table of any other form (the float
    sum rounding onto 180) is looked up instead.
    """
    first = int(hue[0])
    if first < 180 and hue[:180].tobytes() == _SHIFTS[first]:  # cv2's 8-bit hue < 180
        return first
    return None


def shift_hue(
    plane: np.ndarray,
    shift: int | None,
    hue: np.ndarray | None,
    *,
    out: np.ndarray | None = None,
    where: np.ndarray | None = None,
) -> np.ndarray:
    """The hue plane mapped into ``out``: ``(h + n) % 180``, exactly.

    In whole numbers, no table: ``h + n`` where ``h < 180 - n``, ``h - (180 - n)``
    elsewhere, in three vectorised passes (a third of a ``cv2.LUT`` here), neither
    saturating where it counts: for ``n <= 75``, ``h + n`` everywhere (at most 254),
    then 180 less where ``h >= 180 - n``; for larger ``n``, ``h - (180 - n)``
    everywhere (0 where ``h`` is smaller), then ``h + n`` there (at most 179).
    ``shift`` ``None``: the table ``hue`` (needed then only). ``out`` and ``where`` (the
    mask's plane), planes of the plane's shape, none of them ``plane``: ``None`` for this
    thread's kept ones.
    """
    if out is None:
        out = kept("hue", plane.shape)
    if shift is None:
        if hue is None:
            raise ValueError("shift_hue needs the hue's table where the shift is None")
        cv2.LUT(plane, hue, out)
        return out
    turn = 180 - shift
    if where is None:
        where = kept("where", plane.shape)
    # OpenCV takes a number as the second operand; its stubs know only arrays there.
    # Every argument by position: OpenCV parses keywords at a cost (cold, a few µs a
    # sample over a mosaic's calls)
    if shift <= 75:
        cv2.add(plane, shift, out)
        cv2.compare(plane, turn, cv2.CMP_GE, where)  # type: ignore[call-overload]
        cv2.subtract(out, 180, out, where)  # type: ignore[call-overload]
    else:
        cv2.subtract(plane, turn, out)  # type: ignore[call-overload]
        cv2.compare(plane, turn, cv2.CMP_LT, where)  # type: ignore[call-overload]
        cv2.add(plane, shift, out, where)
    return out


def scale_plane(
    plane: np.ndarray, channel: int, k: float, table: np.ndarray, *, out: np.ndarray | None = None
) -> np.ndarray:
    """A saturation or value plane mapped into ``out``: ``table[x]``.

    By ``cv2.convertScaleAbs`` (``round(|k * x + b|)`` in float32, one vectorised pass)
    when :func:`offset_for` finds an exact ``b``, else by ``cv2.LUT``. ``out``: a plane
    of the plane's shape, not ``plane``; ``None`` for this thread's kept one of ``channel``.
    """
    if out is None:
        out = kept(f"scaled{channel}", plane.shape)
    offset = offset_for(k, table)
    if offset is None:
        cv2.LUT(plane, table, out)
    else:
        cv2.convertScaleAbs(plane, out, k, offset)
    return out


def offset_for(k: float, table: np.ndarray) -> float | None:
    """An offset ``b`` with ``convertScaleAbs(x, k, b)`` exactly ``table[x]``, or ``None``.

    ``b`` just above ``-0.5`` rounds ``k * x`` down, as the table does. A probe (all 256
    values through ``convertScaleAbs`` itself, once as one row, its vectorised loop, and
    once as a column of one-value rows, its scalar loop) decides; when it differs
    somewhere (``k * x`` within float32's error of a whole number), ``b`` is moved to the
    middle of the offsets that round every unclipped ``x`` onto its entry, and probed
    again: ``None`` when that differs too.
    """
    if gives(k, DOWN, table):
        return DOWN
    free = table < 255  # the clipped entries saturate whatever b is
    if not free.any():
        return None
    gap = table[free].astype(np.float32) - _X32[free] * np.float32(k)
    offset = (float(gap.max()) + float(gap.min())) / 2
    return offset if gives(k, offset, table) else None


def gives(k: float, offset: float, table: np.ndarray) -> bool:
    """Whether ``convertScaleAbs`` with ``k`` and ``offset`` maps every value onto ``table``."""
    expected = table.tobytes()  # bytes compared: cheaper than np.array_equal's checks
    # both loops, written out, arguments by position (a generator, and keywords OpenCV
    # parses, cost more than the two steps: cold, 2-3 µs a plane)
    return (
        cv2.convertScaleAbs(_ROW, None, k, offset).tobytes() == expected
        and cv2.convertScaleAbs(_COLUMN, None, k, offset).tobytes() == expected
    )
