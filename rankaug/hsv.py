"""``HSVJitter``: ultralytics' ``RandomHSV``, its gains drawn from the key.

**Meaning** (ultralytics 8.x ``RandomHSV``, part of the specification). One sample's
draw is one block ``u = rng.random(3)`` from its keyed Generator, and the gains
``r = (2u - 1) * (hgain, sgain, vgain)``: each uniform in ``[-gain, gain]``, as
``np.random.uniform(-1, 1, 3) * [hgain, sgain, vgain]``. The image goes to OpenCV's
8-bit HSV (hue in ``[0, 180)``), through three tables on ``x = 0 .. 255`` (float64)::

    hue = ((x + r[0] * 180) % 180).astype(uint8)      # the hue wraps round
    sat = clip(x * (r[1] + 1), 0, 255).astype(uint8)  # then sat[0] = 0, as ultralytics
    val = clip(x * (r[2] + 1), 0, 255).astype(uint8)

and back. With all three gains 0 the image is returned unchanged (no HSV round trip), as
ultralytics does.

**Channels.** ultralytics' images are BGR (``cv2.imread``); rankaug's datasets and
adapters give RGB, so ``channel_order="rgb"`` (the default) converts with
``COLOR_RGB2HSV``/``COLOR_HSV2RGB``: an RGB image gets exactly what ``RandomHSV`` gives
the same picture in BGR, channel for channel. ``channel_order="bgr"`` is for BGR
images. Only ``HxWx3`` uint8 images are taken (``RandomHSV`` leaves other channel counts
alone and has no path for other dtypes): anything else is refused with a clear error.

**Speed, bit for bit.** The image is converted into the output, split into three planes
each thread keeps, each changed plane mapped into a second kept plane by its cheapest
exact step, merged into a kept image and converted back into the output. The hue is a
shift with wrap-round, ``(h + n) % 180``, in whole numbers (three vectorised passes, a
third of a ``cv2.LUT`` here) whenever its table is one (skipped when it is the identity,
a shift under one step); saturation and value are one ``cv2.convertScaleAbs`` each
(``x * k + b`` in float32) when a 256-value probe shows that it gives exactly the table
for this draw. Otherwise that plane is looked up in its table. Every path gives exactly
the tables above.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from typing import ClassVar, Final, Literal, NamedTuple, TypedDict

import cv2
import numpy as np

from rankaug import checks

__all__ = ["ChannelOrder", "HSVDraw", "HSVJitter", "HSVRecord", "hsv_tables"]

ChannelOrder = Literal["rgb", "bgr"]
_ORDERS: Final[tuple[ChannelOrder, ...]] = ("rgb", "bgr")
_CODES: Final = {
    "rgb": (cv2.COLOR_RGB2HSV, cv2.COLOR_HSV2RGB),
    "bgr": (cv2.COLOR_BGR2HSV, cv2.COLOR_HSV2BGR),
}
_X: Final = np.arange(256, dtype=np.float64)
_X32: Final = _X.astype(np.float32)
_IDENTITY: Final = np.arange(256, dtype=np.uint8)
_ROW: Final = _IDENTITY.reshape(1, 256)  # one row: convertScaleAbs' vectorised loop
_COLUMN: Final = np.repeat(_IDENTITY[:, None], 2, axis=1)[:, :1]  # 256 rows: its scalar loop
_SHIFTS: Final = [  # (x + n) % 180 on x < 180, for each n, as bytes (compared by _hue_shift)
    row.tobytes() for row in ((_IDENTITY[:180] + np.arange(180)[:, None]) % 180).astype(np.uint8)
]
_DOWN: Final = -0.5 + 2.0**-14  # round(k * x + _DOWN): k * x rounded down
_SCRATCH: Final = threading.local()  # see _kept


class HSVDraw(NamedTuple):
    """One sample's gains: ``r`` of the module docstring (hue, saturation, value)."""

    hue: float
    saturation: float
    value: float


class HSVRecord(TypedDict):
    """What an :class:`HSVJitter` applied: its ``gains`` ``(hue, saturation, value)``.

    Under ``"color"`` in a :class:`~rankaug.mosaic.MosaicRecord`, and under
    :attr:`HSVJitter.record_key` in a sample from
    :class:`~rankaug.RandomAugmentWrapper`; :meth:`HSVJitter.replay` applies it again.
    """

    gains: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class HSVJitter:
    """ultralytics' ``RandomHSV`` with keyed gains (see the module docstring).

    ``MosaicDataset(..., color=HSVJitter())`` applies it to each output as it is made
    (drawn after the mosaic's other draws, recorded under ``"color"``);
    ``RandomAugmentWrapper(dataset, HSVJitter(), seed=0)`` applies it to each sample's
    image, recording the gains under ``"hsv"`` in dict samples (and in a pair's dict
    target); ``jitter(image, rng=generator)`` applies it to one image.

    Args:
        hgain: Hue gain in ``[0, 1]``: the hue moves by up to ``hgain * 180`` of OpenCV's
            180 hue steps, wrapping round.
        sgain: Saturation gain in ``[0, 1]``: saturation times ``1 + r``,
            ``|r| <= sgain``.
        vgain: Value gain in ``[0, 1]``: value times ``1 + r``, ``|r| <= vgain``.
        channel_order: The images' channels: ``"rgb"`` (rankaug's datasets) or
            ``"bgr"`` (images read with ``cv2.imread``).

    Raises:
        TypeError: If a gain is not a real number, or ``channel_order`` not a string.
        ValueError: If a gain is outside ``[0, 1]``, or ``channel_order`` is neither.

    >>> import numpy as np
    >>> jitter = HSVJitter(hgain=0.015, sgain=0.7, vgain=0.4)
    >>> grey = np.full((4, 4, 3), 100, np.uint8)
    >>> out = jitter(grey, rng=np.random.default_rng(0))
    >>> bool((out == out[0, 0, 0]).all())  # grey stays grey: only its value moves
    True
    >>> HSVJitter(sgain=2)
    Traceback (most recent call last):
    ...
    ValueError: sgain must be a finite number >= 0.0 and <= 1.0, got 2
    """

    hgain: float = 0.015
    sgain: float = 0.7
    vgain: float = 0.4
    channel_order: ChannelOrder = "rgb"
    record_key: ClassVar[str] = "hsv"
    """The key :class:`~rankaug.RandomAugmentWrapper` records the gains under."""

    def __post_init__(self) -> None:
        for name in ("hgain", "sgain", "vgain"):
            value = checks.real(getattr(self, name), name, low=0.0, high=1.0)
            object.__setattr__(self, name, value)
        order = checks.choice(self.channel_order, "channel_order", _ORDERS)
        object.__setattr__(self, "channel_order", order)

    def draw(self, rng: np.random.Generator) -> HSVDraw:
        """Draw one sample's gains: one block of 3 uniforms (see the module docstring).

        >>> HSVJitter(0.5, 0.5, 0.0).draw(np.random.default_rng(0))
        HSVDraw(hue=0.13696..., saturation=-0.23021..., value=-0.0)
        """
        u = rng.random(3).tolist()  # -1 + 2u, then times the gain: np.random.uniform's
        return HSVDraw(
            (-1.0 + 2.0 * u[0]) * self.hgain,
            (-1.0 + 2.0 * u[1]) * self.sgain,
            (-1.0 + 2.0 * u[2]) * self.vgain,
        )

    def apply(
        self, image: np.ndarray, draw: HSVDraw, *, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Apply one draw's gains to ``image``.

        Args:
            image: An ``HxWx3`` uint8 image in :attr:`channel_order`.
            draw: The gains (:meth:`draw`).
            out: Where the result goes, ``image`` itself for in place: a C-contiguous
                array of the image's shape and dtype; ``None``: a new array.

        Returns:
            ``out`` (or the new array).

        Raises:
            TypeError: If ``image`` is not a uint8 numpy array.
            ValueError: If it is not ``HxWx3``, or ``out`` does not fit it.
        """
        order = self.channel_order.upper()
        checks.colour_image(image, "image", order)
        if out is None:
            out = np.empty(image.shape, np.uint8)
        elif not (
            isinstance(out, np.ndarray)
            and out.shape == image.shape
            and out.dtype == np.uint8
            and out.flags.c_contiguous
            and out.flags.writeable
        ):
            raise ValueError(
                f"out must be a writeable C-contiguous uint8 array of the image's shape "
                f"{image.shape}, got {getattr(out, 'shape', out)!r}"
            )
        if not (self.hgain or self.sgain or self.vgain):
            if out is not image:
                out[...] = image
            return out
        forward, back = _CODES[self.channel_order]
        hue, sat, val = hsv_tables(draw)
        cv2.cvtColor(image, forward, dst=out)
        cv2.cvtColor(_apply_tables(out, hue, sat, val, draw), back, dst=out)
        return out

    def grey(self, value: int, draw: HSVDraw) -> int | None:
        """What a grey pixel, ``value`` in every channel, becomes under ``draw``.

        Exactly what :meth:`apply` gives it: in OpenCV's 8-bit HSV a grey has hue 0 and
        saturation 0, the saturation table keeps 0 at 0, and a saturation of 0 goes
        back to a grey of its value whatever the hue; so the grey keeps its place in
        the value table. ``None`` where this OpenCV does not convert greys so (checked
        once per process, every value and hue through both of its loops).

        Raises:
            TypeError: If ``value`` is not an integer.
            ValueError: If it is outside ``[0, 255]``.

        >>> HSVJitter().grey(114, HSVDraw(0.01, 0.5, 0.25))  # 114 * 1.25 = 142.5
        142
        """
        value = checks.integer(value, "value", low=0, high=255)
        if not (self.hgain or self.sgain or self.vgain):
            return value
        if not _greys_stay_grey(self.channel_order):
            return None
        return int(_times(_X[value], draw.value + 1))  # its entry in the value table

    def __call__(self, image: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
        """Draw from ``rng`` and apply to a copy of ``image`` (see :meth:`apply`)."""
        return self.apply(image, self.draw(rng))

    def record(self, draw: HSVDraw) -> HSVRecord:
        """The record of one draw (:class:`HSVRecord`)."""
        return {"gains": (draw.hue, draw.saturation, draw.value)}

    def replay(self, image: np.ndarray, record: object) -> np.ndarray:
        """Apply a recorded draw again to ``image`` (a copy), bit for bit.

        Raises:
            TypeError: If ``record`` is not an :class:`HSVRecord`.
            ValueError: If it has no ``gains`` or they are not three numbers.

        >>> jitter, image = HSVJitter(), np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
        >>> draw = jitter.draw(np.random.default_rng(3))
        >>> again = jitter.replay(image, jitter.record(draw))
        >>> bool((again == jitter.apply(image, draw)).all())
        True
        """
        entry = checks.mapping(record, "record", required=("gains",), what="an HSVRecord")
        gains = checks.sequence(entry["gains"], "record['gains']", what="three numbers")
        if len(gains) != 3:
            raise ValueError(f"record['gains'] must be three numbers, got {gains!r}")
        values = [checks.real(g, f"record['gains'][{k}]") for k, g in enumerate(gains)]
        return self.apply(image, HSVDraw(*values))


def hsv_tables(draw: HSVDraw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hue, saturation and value tables of one draw (the module docstring's).

    >>> hue, sat, val = hsv_tables(HSVDraw(0.01, -0.5, 0.5))
    >>> hue[:3].tolist(), hue[178:180].tolist(), sat[:4].tolist(), val[[0, 100, 200]].tolist()
    ([1, 2, 3], [179, 0], [0, 0, 1, 1], [0, 150, 255])
    """
    hue = np.remainder(_X + draw.hue * 180, 180).astype(np.uint8)  # numpy's %
    sat = _times(_X, draw.saturation + 1)
    sat[0] = 0  # ultralytics' guard (8.3.79); x * (r + 1) maps 0 to 0 anyway
    return hue, sat, _times(_X, draw.value + 1)


def _times(x: np.ndarray, k: float) -> np.ndarray:
    """``clip(x * k, 0, 255).astype(uint8)`` for ``k >= 0``: a saturation or value table.

    ``x * k >= 0``: clipping at 0 changes nothing, at 255 is a minimum.
    """
    return np.minimum(x * k, 255.0).astype(np.uint8)


def _apply_tables(
    hsv: np.ndarray, hue: np.ndarray, sat: np.ndarray, val: np.ndarray, draw: HSVDraw
) -> np.ndarray:
    """Map ``hsv`` (an 8-bit HSV image, C-contiguous) through the tables, plane by plane.

    The image is split into three planes, each table's plane is mapped into a second
    plane by its cheapest exact step (the hue by :func:`_shift_hue`, saturation and value
    by :func:`_scale_plane`) and the planes are merged into an image; every plane and the
    image are this thread's own (:func:`_kept`).

    Returns:
        The mapped image: ``hsv`` itself when every table is the identity, else this
        thread's kept image.
    """
    shift = _hue_shift(hue)
    if shift == 0 and not (draw.saturation or draw.value):  # else tables are x itself
        return hsv
    shape = hsv.shape[:2]
    planes = [_kept(f"plane{c}", shape) for c in range(3)]
    cv2.split(hsv, planes)
    merged = list(planes)
    if shift != 0:
        merged[0] = _shift_hue(planes[0], shift, hue)
    for c, gain, table in ((1, draw.saturation, sat), (2, draw.value, val)):
        if gain:
            merged[c] = _scale_plane(planes[c], c, gain + 1.0, table)
    mapped = _kept("image", hsv.shape)
    cv2.merge(merged, dst=mapped)
    return mapped


def _kept(name: str, shape: tuple[int, ...]) -> np.ndarray:
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
def _greys_stay_grey(order: ChannelOrder) -> bool:
    """Whether OpenCV takes every grey to hue 0, saturation 0 and back, both ways.

    Checked once per process and channel order, on every value and every 8-bit hue
    (which the hue table may give a grey), by the conversions' vectorised loops (rows
    of 256 pixels) and their scalar ones (rows of one pixel).
    """
    forward, back = _CODES[order]
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


def _hue_shift(hue: np.ndarray) -> int | None:
    """``n`` when the hue table is ``(x + n) % 180`` on OpenCV's hues, else ``None``.

    ``0`` is the identity (a shift under one step). A table of any other form (the float
    sum rounding onto 180) is looked up instead.
    """
    first = int(hue[0])
    if first < 180 and hue[:180].tobytes() == _SHIFTS[first]:  # cv2's 8-bit hue < 180
        return first
    return None


def _shift_hue(plane: np.ndarray, shift: int | None, hue: np.ndarray) -> np.ndarray:
    """The hue plane mapped into this thread's kept plane: ``(h + n) % 180``, exactly.

    In whole numbers, no table: ``h + n`` where ``h < 180 - n``, ``h - (180 - n)``
    elsewhere, in three vectorised passes (a third of a ``cv2.LUT`` here), neither
    saturating where it counts: for ``n <= 75``, ``h + n`` everywhere (at most 254),
    then 180 less where ``h >= 180 - n``; for larger ``n``, ``h - (180 - n)``
    everywhere (0 where ``h`` is smaller), then ``h + n`` there (at most 179).
    ``shift`` ``None``: the table.
    """
    out = _kept("hue", plane.shape)
    if shift is None:
        cv2.LUT(plane, hue, dst=out)
        return out
    turn = 180 - shift
    where = _kept("where", plane.shape)
    # OpenCV takes a number as the second operand; its stubs know only arrays there
    if shift <= 75:
        cv2.add(plane, shift, dst=out)
        cv2.compare(plane, turn, cv2.CMP_GE, dst=where)  # type: ignore[call-overload]
        cv2.subtract(out, 180, dst=out, mask=where)  # type: ignore[call-overload]
    else:
        cv2.subtract(plane, turn, dst=out)  # type: ignore[call-overload]
        cv2.compare(plane, turn, cv2.CMP_LT, dst=where)  # type: ignore[call-overload]
        cv2.add(plane, shift, dst=out, mask=where)
    return out


def _scale_plane(plane: np.ndarray, channel: int, k: float, table: np.ndarray) -> np.ndarray:
    """A saturation or value plane mapped into this thread's kept plane: ``table[x]``.

    By ``cv2.convertScaleAbs`` (``round(|k * x + b|)`` in float32, one vectorised pass)
    when :func:`_offset` finds an exact ``b``, else by ``cv2.LUT``.
    """
    out = _kept(f"scaled{channel}", plane.shape)
    offset = _offset(k, table)
    if offset is None:
        cv2.LUT(plane, table, dst=out)
    else:
        cv2.convertScaleAbs(plane, out, k, offset)
    return out


def _offset(k: float, table: np.ndarray) -> float | None:
    """An offset ``b`` with ``convertScaleAbs(x, k, b)`` exactly ``table[x]``, or ``None``.

    ``b`` just above ``-0.5`` rounds ``k * x`` down, as the table does. A probe (all 256
    values through ``convertScaleAbs`` itself, once as one row, its vectorised loop, and
    once as a column of one-value rows, its scalar loop) decides; when it differs
    somewhere (``k * x`` within float32's error of a whole number), ``b`` is moved to the
    middle of the offsets that round every unclipped ``x`` onto its entry, and probed
    again: ``None`` when that differs too.
    """
    if _gives(k, _DOWN, table):
        return _DOWN
    free = table < 255  # the clipped entries saturate whatever b is
    if not free.any():
        return None
    gap = table[free].astype(np.float32) - _X32[free] * np.float32(k)
    offset = (float(gap.max()) + float(gap.min())) / 2
    return offset if _gives(k, offset, table) else None


def _gives(k: float, offset: float, table: np.ndarray) -> bool:
    """Whether ``convertScaleAbs`` with ``k`` and ``offset`` maps every value onto ``table``."""
    expected = table.tobytes()  # bytes compared: cheaper than np.array_equal's checks
    return all(
        cv2.convertScaleAbs(probe, alpha=k, beta=offset).tobytes() == expected
        for probe in (_ROW, _COLUMN)
    )
