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

**Speed, bit for bit.** Each draw's tables are applied plane by plane, by the cheapest
exact step for each (:mod:`rankaug._hsv_planes`), never by a 3-channel ``cv2.LUT``. The
hue table is not even made where its float arithmetic surely gives a shift
``(x + n) % 180`` (all but about one draw in 20,000: see ``_hue_step``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, TypedDict

import cv2
import numpy as np

from rankaug import checks
from rankaug._hsv_planes import apply_tables, greys_stay_grey
from rankaug.polygons import POLYGONS
from rankaug.samples.protocol import DEFAULT_TARGETS

__all__ = ["RECORD_KEY", "ChannelOrder", "HSVDraw", "HSVJitter", "HSVRecord", "hsv_tables"]

ChannelOrder = Literal["rgb", "bgr"]
"""The images' channels: ``"rgb"`` (rankaug's datasets) or ``"bgr"`` (``cv2.imread``'s)."""

_ORDERS: Final[tuple[ChannelOrder, ...]] = ("rgb", "bgr")
_CODES: Final = {
    "rgb": (cv2.COLOR_RGB2HSV, cv2.COLOR_HSV2RGB),
    "bgr": (cv2.COLOR_BGR2HSV, cv2.COLOR_HSV2BGR),
}
_X: Final = np.arange(256, dtype=np.float64)
_CLEAR: Final = 2.0**-20  # how far from a whole step a hue's c must be (see _hue_step)
RECORD_KEY: Final = "hsv"
"""The default :attr:`HSVJitter.record_key`."""
_TARGETS: Final = DEFAULT_TARGETS | {POLYGONS, "boxes"}  # the keys a record must not take


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
    image, recording the gains under ``record_key`` (``"hsv"``) in dict samples (and in
    a pair's dict target); ``jitter(image, rng=generator)`` applies it to one image.

    Args:
        hgain: Hue gain in ``[0, 1]``: the hue moves by up to ``hgain * 180`` of OpenCV's
            180 hue steps, wrapping round.
        sgain: Saturation gain in ``[0, 1]``: saturation times ``1 + r``,
            ``|r| <= sgain``.
        vgain: Value gain in ``[0, 1]``: value times ``1 + r``, ``|r| <= vgain``.
        channel_order: The images' channels: ``"rgb"`` (rankaug's datasets) or
            ``"bgr"`` (images read with ``cv2.imread``).
        record_key: The key :class:`~rankaug.RandomAugmentWrapper` records the gains
            under, never over a key the sample already has: another name for a second
            jitter, or a dataset with its own ``"hsv"``; ``None`` records nothing. Not a
            target's key (``"image"``, ``"bboxes"``, ...). ``MosaicDataset(color=)``
            records the gains in its own record (under ``"color"``) and needs the
            default.

    Raises:
        TypeError: If a gain is not a real number, ``channel_order`` not a string, or
            ``record_key`` neither a string nor ``None``.
        ValueError: If a gain is outside ``[0, 1]``, ``channel_order`` is neither, or
            ``record_key`` is empty or a target's key.

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
    record_key: str | None = RECORD_KEY

    def __post_init__(self) -> None:
        for name in ("hgain", "sgain", "vgain"):
            value = checks.real(getattr(self, name), name, low=0.0, high=1.0)
            object.__setattr__(self, name, value)
        order = checks.choice(self.channel_order, "channel_order", _ORDERS)
        object.__setattr__(self, "channel_order", order)
        key = checks.key_name(self.record_key, "record_key", forbidden=_TARGETS)
        object.__setattr__(self, "record_key", key)

    def draw(self, rng: np.random.Generator) -> HSVDraw:
        """Draw one sample's gains: one block of 3 uniforms (see the module docstring).

        Raises:
            TypeError: If ``rng`` is not a numpy ``Generator`` (or ``RandomState``).

        >>> HSVJitter(0.5, 0.5, 0.0).draw(np.random.default_rng(0))
        HSVDraw(hue=0.13696..., saturation=-0.23021..., value=-0.0)
        """
        return self.from_uniforms(checks.generator(rng, "rng").random(3).tolist())

    def from_uniforms(self, u: Sequence[float]) -> HSVDraw:
        """:meth:`draw` of its block of 3 uniforms ``u`` (drawn with others, say).

        >>> HSVJitter(0.5, 0.5, 0.0).from_uniforms([0.5, 1.0, 0.25])
        HSVDraw(hue=0.0, saturation=0.5, value=-0.0)
        """
        # -1 + 2u, then times the gain: np.random.uniform's
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
            TypeError: If ``image`` is not a uint8 numpy array, ``draw`` not an
                :class:`HSVDraw` of real numbers, or ``out`` not a numpy array.
            ValueError: If ``image`` is not ``HxWx3``, a gain of ``draw`` is outside
                ``[-1, 1]`` (no jitter draws one there), or ``out`` does not fit the
                image (the message names what does not).
        """
        order = self.channel_order.upper()
        checks.colour_image(image, f"{type(self).__name__}'s image", order)  # whose it is
        draw = _checked(draw, "draw")
        if out is None:
            out = np.empty(image.shape, np.uint8)
        else:
            checks.out_array(out, "out", image.shape, image.dtype)
        if not (self.hgain or self.sgain or self.vgain):
            if out is not image:
                out[...] = image
            return out
        forward, back = _CODES[self.channel_order]
        sat, val = _scale_tables(draw)
        cv2.cvtColor(image, forward, out)  # dst by position: cheaper
        mapped = apply_tables(out, _hue_step(draw), sat, val, draw.saturation, draw.value)
        cv2.cvtColor(mapped, back, out)
        return out

    def grey(self, value: int, draw: HSVDraw) -> int | None:
        """What a grey pixel, ``value`` in every channel, becomes under ``draw``.

        Exactly what :meth:`apply` gives it: in OpenCV's 8-bit HSV a grey has hue 0 and
        saturation 0, the saturation table keeps 0 at 0, and a saturation of 0 goes
        back to a grey of its value whatever the hue; so the grey keeps its place in
        the value table. ``None`` where this OpenCV does not convert greys so (checked
        once per process, every value and hue through both of its loops).

        Raises:
            TypeError: If ``value`` is not an integer, or ``draw`` not an :class:`HSVDraw`.
            ValueError: If ``value`` is outside ``[0, 255]``, or a gain outside ``[-1, 1]``.

        >>> HSVJitter().grey(114, HSVDraw(0.01, 0.5, 0.25))  # 114 * 1.25 = 142.5
        142
        """
        if type(value) is not int or not 0 <= value <= 255:  # else checks.integer's answer
            value = checks.integer(value, "value", low=0, high=255)
        draw = _checked(draw, "draw")
        if not (self.hgain or self.sgain or self.vgain):
            return value
        if not greys_stay_grey(_CODES[self.channel_order]):
            return None
        return _times_one(value, draw.value + 1)  # its entry in the value table

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
            ValueError: If it has no ``gains``, they are not three numbers, or one is
                outside ``[-1, 1]`` (a gain there would wrap the tables; no jitter
                draws one).

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
        values = [
            checks.real(g, f"record['gains'][{k}]", low=-1.0, high=1.0) for k, g in enumerate(gains)
        ]
        return self.apply(image, HSVDraw(*values))


def hsv_tables(draw: HSVDraw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hue, saturation and value tables of one draw (the module docstring's).

    Raises:
        TypeError: If ``draw`` is not an :class:`HSVDraw` of real numbers.
        ValueError: If a gain is outside ``[-1, 1]``: below ``-1`` a saturation or
            value table would go negative and wrap round in uint8.

    >>> hue, sat, val = hsv_tables(HSVDraw(0.01, -0.5, 0.5))
    >>> hue[:3].tolist(), hue[178:180].tolist(), sat[:4].tolist(), val[[0, 100, 200]].tolist()
    ([1, 2, 3], [179, 0], [0, 0, 1, 1], [0, 150, 255])
    >>> hsv_tables(HSVDraw(0.0, -1.5, 0.0))
    Traceback (most recent call last):
    ...
    ValueError: draw.saturation must be a finite number >= -1.0 and <= 1.0, got -1.5
    """
    return _tables(_checked(draw, "draw"))


def _checked(draw: object, name: str) -> HSVDraw:
    """``draw`` as an :class:`HSVDraw` of floats, each gain checked to be in ``[-1, 1]``.

    A jitter's gains are in ``[0, 1]`` and its draws within them; a gain below ``-1``
    would make the saturation or value table negative (wrapped round by uint8).
    """
    if type(draw) is HSVDraw:  # a jitter's own draw (per sample): three floats in range
        hue, saturation, value = draw
        if (
            type(hue) is float and type(saturation) is float and type(value) is float
            and -1.0 <= hue <= 1.0 and -1.0 <= saturation <= 1.0 and -1.0 <= value <= 1.0
        ):  # fmt: skip
            return draw
    draw = checks.instance(draw, name, HSVDraw, what="an HSVDraw", optional=False)
    return HSVDraw(
        *(
            checks.real(getattr(draw, field), f"{name}.{field}", low=-1.0, high=1.0)
            for field in HSVDraw._fields
        )
    )


def _tables(draw: HSVDraw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`hsv_tables` of a checked draw."""
    return _hue_table(draw), *_scale_tables(draw)


def _hue_table(draw: HSVDraw) -> np.ndarray:
    """The hue table of a checked draw."""
    return np.remainder(_X + draw.hue * 180, 180).astype(np.uint8)  # numpy's %


def _scale_tables(draw: HSVDraw) -> tuple[np.ndarray, np.ndarray]:
    """The saturation and value tables of a checked draw."""
    sat = _times(_X, draw.saturation + 1)
    sat[0] = 0  # ultralytics' guard (8.3.79); x * (r + 1) maps 0 to 0 anyway
    return sat, _times(_X, draw.value + 1)


def _hue_step(draw: HSVDraw) -> int | np.ndarray:
    """The hue table's shift ``n``, where it is surely ``(x + n) % 180``; else the table.

    With ``c = r[0] * 180`` (the table's own product) and ``n = floor(c)``: for every hue
    ``x < 180`` the table's float sum ``x + c`` (below 512: off by at most ``2**-45``)
    lies strictly between the same whole numbers as ``x + n + f``, ``f = c - n``, when
    ``f`` is at least ``2**-20`` from a whole number; numpy's remainder (an exact
    ``fmod``, plus 180 where negative, off by at most ``2**-46``) keeps it there, so its
    truncation is ``(x + n) % 180``. With ``f = 0`` every step is on whole numbers,
    exact. Otherwise (a draw within ``2**-20 / 180`` of a whole step: about one in
    20,000) the table is made and :func:`~rankaug._hsv_planes.hue_shift` reads it.
    Three numpy calls and a comparison of bytes fewer per image (cold, about 8 µs).
    """
    c = draw.hue * 180
    n = math.floor(c)
    f = c - n  # exact but for c in (-1, 0) (then within 2**-53: the margin holds)
    if f == 0.0 or _CLEAR < f < 1.0 - _CLEAR:
        return n % 180
    return _hue_table(draw)


def _times(x: np.ndarray, k: float) -> np.ndarray:
    """``clip(x * k, 0, 255).astype(uint8)`` for ``k >= 0``: a saturation or value table.

    ``x * k >= 0``: clipping at 0 changes nothing, at 255 is a minimum.
    """
    return np.minimum(x * k, 255.0).astype(np.uint8)


def _times_one(x: int, k: float) -> int:
    """:func:`_times`' entry ``x`` (``0 <= x <= 255``), in Python floats.

    The same product (``x`` is exact as a float), minimum and truncation, without
    numpy's scalar calls (cold, between images, they cost a mosaic about 8 µs).
    """
    product = x * k
    return int(product if product < 255.0 else 255.0)
