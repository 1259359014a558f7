"""Images rankaug can resample, and fill values that fit them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from rankaug.checks._messages import is_real, type_error, value_error

__all__ = [
    "IMAGE_DTYPES",
    "MAX_CHANNELS",
    "YOLO_FILL",
    "colour_image",
    "fill_fits",
    "fill_setting",
    "fill_values",
    "fills_fit",
    "image_layout",
    "mask_covers",
    "opencv_dtype",
    "out_array",
]

IMAGE_DTYPES: Final[tuple[str, ...]] = ("uint8", "uint16", "int16", "float32", "float64")
#: OpenCV handles at most this many channels.
MAX_CHANNELS: Final = 511
YOLO_FILL: Final = 114.0
"""The default ``fill`` (:func:`fill_setting`): YOLO's grey, for integer images only."""


def image_layout(image: np.ndarray, where: str) -> None:
    """Check that an image's dtype and channels are ones rankaug can resample.

    Args:
        image: An ``HxW`` or ``HxWxC`` array.
        where: Where it came from, e.g. ``"dataset[3] image"``.

    Raises:
        TypeError: If its dtype is not one of :data:`IMAGE_DTYPES`.
        ValueError: If it is empty, not 2-D or 3-D, or has more than
            :data:`MAX_CHANNELS` channels.

    >>> image_layout(np.zeros((2, 2), np.float16), "dataset[0] image")
    Traceback (most recent call last):
    ...
    TypeError: dataset[0] image must have a dtype among uint8, uint16, ..., got float16
    """
    if image.dtype.name not in IMAGE_DTYPES:
        raise TypeError(
            f"{where} must have a dtype among {', '.join(IMAGE_DTYPES)}, got {image.dtype}"
        )
    if image.ndim not in (2, 3):
        raise ValueError(f"{where} must be an HxW or HxWxC array, got shape {image.shape}")
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"{where} must not be empty, got shape {image.shape}")
    if image.ndim == 3 and not 1 <= image.shape[2] <= MAX_CHANNELS:
        raise ValueError(f"{where} must have 1 to {MAX_CHANNELS} channels, got shape {image.shape}")


def mask_covers(mask: Any, image: np.ndarray, where: str) -> None:
    """Check that a semantic mask covers its image: ``HxW`` or ``HxWxC`` of its size.

    The one rule every wrapper applies to a ``mask`` once its adapter unpacked it (the
    image an ``HxW[xC]`` array): a mask of another shape would be resampled as if it
    were of another size (a ``(1, H, W)`` one read as ``H = 1``), never moved with its
    pixels.

    Args:
        mask: The mask, as the adapter handed it out.
        image: Its image, an ``HxW`` or ``HxWxC`` array.
        where: Whose mask, e.g. ``"dataset[3] mask"``.

    Raises:
        ValueError: If it is not 2-D or 3-D with the image's height and width first.

    >>> mask_covers(np.zeros((1, 4, 6)), np.zeros((4, 6, 3)), "dataset[0] mask")
    Traceback (most recent call last):
    ...
    ValueError: dataset[0] mask must be an HxW or HxWxC array of its image's height and ...
    """
    shape = tuple(np.shape(mask))
    hw = image.shape[:2]
    if len(shape) in (2, 3) and shape[:2] == hw:
        return
    advice = "give it so, or read it with an adapter (rankaug.types.SampleAdapter)"
    if len(shape) == 3 and shape[1:] == hw:
        advice = (
            "it looks channels-first: give it HxW (mask[0]) or HxWxC (its channels last); "
            "a torch tensor mask beside a CxHxW tensor image is read channels-first"
        )
    raise ValueError(
        f"{where} must be an HxW or HxWxC array of its image's height and width {hw} "
        f"(the image unpacked: shape {image.shape}), got shape {shape}: {advice}"
    )


def opencv_dtype(image: np.ndarray, where: str) -> None:
    """Refuse an image of a dtype OpenCV cannot warp or resize (float16, int32, int8...).

    Called where OpenCV failed inside a transform: it names the dtype the assertion
    did not.

    Raises:
        TypeError: If its dtype is not one of :data:`IMAGE_DTYPES`.

    >>> opencv_dtype(np.zeros((2, 2), np.int32), "the sample's 'image'")
    Traceback (most recent call last):
    ...
    TypeError: the sample's 'image' has dtype int32, which OpenCV cannot warp or resize: ...
    """
    if image.dtype.name not in IMAGE_DTYPES:
        raise TypeError(
            f"{where} has dtype {image.dtype}, which OpenCV cannot warp or resize: the "
            f"transform's warps and resizes take images of a dtype among "
            f"{', '.join(IMAGE_DTYPES)}; convert the images in the dataset "
            "(image.astype(np.float32)), or set their dtype in the pipeline before its warps "
            "(A.ToFloat, A.Normalize)"
        )


def colour_image(image: object, where: str, order: str) -> np.ndarray:
    """Check that ``image`` is an ``HxWx3`` uint8 colour image (``order``: its channels).

    Raises:
        TypeError: If it is not a numpy array of dtype uint8.
        ValueError: If it is not ``HxWx3`` or is empty.

    >>> colour_image(np.zeros((2, 2), np.uint8), "image", "RGB")
    Traceback (most recent call last):
    ...
    ValueError: image must be an HxWx3 RGB image, got shape (2, 2): convert grey (HxW) or ...
    """
    if not isinstance(image, np.ndarray):
        raise type_error(where, f"an HxWx3 uint8 {order} numpy array", image, short=True)
    if image.dtype != np.uint8:
        raise TypeError(
            f"{where} must have dtype uint8 (an HSV jitter works on 8-bit tables, as "
            f"ultralytics' RandomHSV), got {image.dtype}"
        )
    if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(
            f"{where} must be an HxWx3 {order} image, got shape {image.shape}: convert grey "
            f"(HxW) or RGBA (HxWx4) images to 3 channels first (in the dataset)"
        )
    return image


def out_array(out: object, name: str, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """Check that ``out`` can take a result: a writeable C-contiguous array of ``shape``.

    Raises:
        TypeError: If it is not a numpy array.
        ValueError: If it is one, naming each condition it fails.

    >>> out_array(np.zeros((4, 6, 3), np.uint8)[:, ::2], "out", (4, 3, 3), np.dtype(np.uint8))
    Traceback (most recent call last):
    ...
    ValueError: out must be a writeable C-contiguous ..., got one that is not C-contiguous
    """
    if (
        type(out) is np.ndarray
        and out.shape == shape
        and out.dtype == dtype
        and out.flags.c_contiguous
        and out.flags.writeable
    ):  # the common case, before any message is made (it runs per sample)
        return out
    expected = f"a writeable C-contiguous {dtype} array of shape {shape}"
    if not isinstance(out, np.ndarray):
        raise type_error(name, expected, out, short=True)
    wrong = []
    if out.shape != shape:
        wrong.append(f"of shape {out.shape}")
    if out.dtype != dtype:
        wrong.append(f"of dtype {out.dtype}")
    if not out.flags.c_contiguous:
        wrong.append("not C-contiguous")
    if not out.flags.writeable:
        wrong.append("read-only")
    if wrong:
        raise ValueError(f"{name} must be {expected}, got one that is {', '.join(wrong)}")
    return out


def fill_values(value: object, name: str) -> tuple[float, ...]:
    """A fill value: one finite number, or one per channel.

    The range of the image's dtype is checked when the dtype is known (see
    :func:`fill_fits`).

    >>> fill_values(114, "fill")
    (114.0,)
    >>> fill_values([0, 0, "x"], "fill")
    Traceback (most recent call last):
    ...
    TypeError: fill must be a number or a sequence of numbers, got [0, 0, 'x'] of type list
    """
    expected = "a number or a sequence of numbers"
    values = (value,) if is_real(value) else value
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise type_error(name, expected, value)
    entries = list(values)
    if not entries or not all(map(is_real, entries)):
        raise type_error(name, expected, value)
    out = tuple(float(v) for v in entries)
    if not all(map(math.isfinite, out)):
        raise value_error(name, "finite", value)
    return out


def fill_setting(value: object, name: str) -> tuple[tuple[float, ...], bool]:
    """A ``fill=`` argument: its values, and whether it was left at its default.

    ``None`` (the default of every wrapper that fills) is :data:`YOLO_FILL`, YOLO's grey
    114, for integer images; :func:`fills_fit` refuses it for float images, whose range
    rankaug does not assume (114 in ``[0, 1]`` images would be a glaring white).

    >>> fill_setting(None, "fill"), fill_setting(0.5, "fill")
    (((114.0,), True), ((0.5,), False))
    """
    if value is None:
        return (YOLO_FILL,), True
    return fill_values(value, name), False


def fill_fits(
    values: Sequence[float],
    name: str,
    dtype: np.dtype[Any],
    *,
    of: str = "the image",
    given: object = None,
) -> None:
    """Check that fill ``values`` can be stored in ``dtype`` without wrapping or rounding.

    Args:
        values: The fill values.
        name: The argument's name, for messages.
        dtype: The dtype of what is filled.
        of: What is filled, for messages (``"dataset[3] mask"``).
        given: The argument as given, shown in messages (``None``: ``values``).

    Raises:
        ValueError: If a value is outside the dtype's range, or fractional for an
            integer dtype.

    >>> fill_fits((300.0,), "fill", np.dtype(np.uint8))
    Traceback (most recent call last):
    ...
    ValueError: fill must be whole numbers in [0, 255] (the image's dtype is uint8), got (300.0,)
    >>> fill_fits((300.0,), "fill_mask", np.dtype(np.uint8), of="dataset[3] mask", given=300)
    Traceback (most recent call last):
    ...
    ValueError: fill_mask must be ... (dataset[3] mask's dtype is uint8), got 300
    """
    shown = tuple(values) if given is None else given
    whose = f"({of}'s dtype is {dtype})"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if any(v != int(v) or not info.min <= v <= info.max for v in values):
            raise value_error(name, f"whole numbers in [{info.min}, {info.max}] {whose}", shown)
    elif dtype.kind == "b":
        if any(v not in (0.0, 1.0) for v in values):
            raise value_error(name, f"0 or 1 {whose}", shown)
    elif dtype.kind == "f":
        limit = float(np.finfo(dtype).max)
        if any(abs(v) > limit for v in values):
            raise value_error(name, f"within ±{limit:g} {whose}", shown)


def fills_fit(
    fill: Sequence[float],
    fill_mask: float,
    image: np.ndarray,
    mask: np.ndarray | None,
    where: str,
    *,
    default: bool = False,
) -> None:
    """Check ``fill`` against an image's channels and dtype, ``fill_mask`` against its mask's.

    Args:
        fill: One value, or one per channel.
        fill_mask: The semantic mask's fill.
        image: The image the fill goes into.
        mask: Its semantic mask, or ``None``.
        where: Where the image came from, e.g. ``"dataset[3]"``.
        default: Whether ``fill`` was left at its default (:func:`fill_setting`).

    Raises:
        ValueError: If ``fill`` has neither one value nor one per channel, a value does
            not fit the dtype, or it is the default and the image is float.

    >>> fills_fit((0.0, 0.0), 0, np.zeros((2, 2, 3), np.uint8), None, "dataset[1]")
    Traceback (most recent call last):
    ...
    ValueError: fill has 2 values, dataset[1] image has 3 channels
    >>> fills_fit((114.0,), 0, np.zeros((2, 2), np.float32), None, "dataset[1]", default=True)
    Traceback (most recent call last):
    ...
    ValueError: fill must be given for float images: the default, 114 (YOLO's grey), ...
    """
    if default and image.dtype.kind == "f":
        raise ValueError(
            f"fill must be given for float images: the default, {YOLO_FILL:g} (YOLO's grey), "
            f"is for integer images, and {where} image is {image.dtype}, whose range rankaug "
            f"does not assume; pass fill= in the images' range (fill={YOLO_FILL:g} / 255 for "
            f"images in [0, 1], fill={YOLO_FILL:g} for images in [0, 255])"
        )
    channels = 1 if image.ndim == 2 else image.shape[2]
    if len(fill) not in (1, channels):
        raise ValueError(f"fill has {len(fill)} values, {where} image has {channels} channels")
    fill_fits(fill, "fill", image.dtype, of=f"{where} image")
    if mask is not None:
        fill_fits((float(fill_mask),), "fill_mask", mask.dtype, of=f"{where} mask", given=fill_mask)
