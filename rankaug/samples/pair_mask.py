"""Masks in their own layouts: an ``(image, mask)`` pair's, a tensor image's ``CxHxW``.

torchvision's ``VOCSegmentation`` and ``Cityscapes(target_type="semantic")``, and most
segmentation datasets written by hand, give ``(image, mask)``: a target with the
image's height and width. A transform that moves the image must move it too, so the
default adapter hands it out as ``mask`` (nearest-neighbour in albumentations and the
mixes) and puts it back in its own type and layout: a numpy array or a tensor ``HxW``,
``HxWxC`` or ``CxHxW`` (``(1, H, W)``, as ``ToTensor`` makes of a PIL mask), or a PIL
image of its mode (a palette image keeps its palette). Before, it passed through as an
opaque target and came back where it was, under a flipped or cut image.

A tensor image is ``CxHxW``, and a 3-D tensor ``mask`` beside it is read
channels-first like it (``(1, H, W)`` or ``(C, H, W)``), handed out ``HxWxC``, and put
back ``CxHxW`` (:func:`mask_layout`, :func:`read_mask`, :func:`channels_first`).

Any other pair target that looks spatial (``(N, 4)`` boxes, ``(K, 2)`` keypoints, a list
of rows, a mask of another size) a consumer that moves boxes refuses
(:func:`refuse_pair_target`): it would stay where it was.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import torch

from rankaug.samples.images import _is_pil, value_to_numpy
from rankaug.samples.restore import is_wrapped, made_tensor, pil_like, rewrap

__all__ = [
    "CHANNELS_FIRST",
    "channels_first",
    "channels_last",
    "height_width",
    "is_pair_mask",
    "mask_layout",
    "mask_like",
    "pair_like",
    "pair_mask",
    "read_mask",
    "reads_first",
    "refuse_pair_target",
]

_PIL_MASK_MODES = ("1", "L", "P", "I", "F", "I;16")
CHANNELS_FIRST: Final = "chw"
"""The layout :func:`mask_layout` names for a ``CxHxW`` mask."""


def height_width(value: Any) -> tuple[int, int] | None:
    """An image's ``(H, W)``: numpy ``HxW[xC]``, a tensor's last two, a PIL image's.

    >>> height_width(torch.zeros(3, 4, 6)), height_width(np.zeros((4, 6, 3))), height_width(3)
    ((4, 6), (4, 6), None)
    """
    if isinstance(value, np.ndarray):
        return (value.shape[0], value.shape[1]) if value.ndim in (2, 3) else None
    if isinstance(value, torch.Tensor):
        return (value.shape[-2], value.shape[-1]) if value.ndim in (2, 3) else None
    if _is_pil(value):
        width, height = value.size
        return height, width
    return None


def mask_layout(mask: Any, hw: tuple[int, int] | None, first: bool) -> str | None:
    """How an array or tensor ``mask`` covers an image of height and width ``hw``.

    ``"hw"`` (2-D), ``"hwc"`` or ``"chw"`` (:data:`CHANNELS_FIRST`); ``None`` when it
    does not cover it. A 3-D mask that reads both ways (``H == W == C``) is ``"chw"``
    when ``first`` (a tensor's layout), else ``"hwc"`` (a numpy array's).

    >>> mask_layout(torch.zeros(1, 4, 6), (4, 6), True)
    'chw'
    >>> mask_layout(np.zeros((4, 6, 1)), (4, 6), True)
    'hwc'
    >>> mask_layout(np.zeros((4, 6)), (4, 6), False), mask_layout(np.zeros((8, 12)), (4, 6), False)
    ('hw', None)
    """
    shape = getattr(mask, "shape", None)
    if hw is None or shape is None or len(shape) not in (2, 3):
        return None
    shape = tuple(shape)
    if len(shape) == 2:
        return "hw" if shape == hw else None
    last, leading = shape[:2] == hw, shape[1:] == hw
    if leading and (first or not last):
        return CHANNELS_FIRST
    return "hwc" if last else None


def read_mask(mask: Any, layout: str | None) -> Any:
    """A mask as the transforms take it: numpy ``HxW`` or ``HxWxC`` (from ``CxHxW`` too).

    >>> read_mask(torch.zeros(2, 4, 6), "chw").shape
    (4, 6, 2)
    """
    if _is_pil(mask):
        return np.asarray(mask)  # a palette image: its indices
    array = value_to_numpy(mask)
    return channels_last(array) if layout == CHANNELS_FIRST else array


def channels_last(mask: np.ndarray) -> np.ndarray:
    """A ``CxHxW`` mask ``HxWxC``, as the transforms take it."""
    return np.ascontiguousarray(np.moveaxis(mask, 0, -1))


def reads_first(mask: Any, image_kind: str, hw: tuple[int, int]) -> bool:
    """Whether a dict sample's ``mask`` is read ``CxHxW``: a 3-D tensor of a tensor image.

    ``image_kind``: the image's kind (``"tensor"``: ``CxHxW``); ``hw``: its height and
    width. A tensor that covers the image only ``HxWxC`` is read so.

    >>> reads_first(torch.zeros(1, 4, 6), "tensor", (4, 6)), reads_first(
    ...     torch.zeros(1, 4, 6), "numpy", (4, 6))
    (True, False)
    """
    return (
        image_kind == "tensor"
        and isinstance(mask, torch.Tensor)
        and mask.ndim == 3
        and mask_layout(mask, hw, True) == CHANNELS_FIRST
    )


def channels_first(mask: Any, hw: tuple[int, int] | None = None) -> np.ndarray:
    """A transformed ``HxW[xC]`` mask back ``CxHxW`` (a 2-D one as ``(1, H, W)``).

    One the transform already made ``CxHxW`` (``ToTensorV2(transpose_mask=True)``:
    its last two sides are the output image's ``hw``, its first two are not) is kept.

    >>> channels_first(np.zeros((4, 6, 2))).shape, channels_first(np.zeros((4, 6))).shape
    ((2, 4, 6), (1, 4, 6))
    >>> channels_first(torch.zeros(2, 4, 6), hw=(4, 6)).shape
    (2, 4, 6)
    """
    array = np.asarray(mask)
    if array.ndim == 2:
        return array[None]
    if hw is not None and array.shape[1:] == hw and array.shape[:2] != hw:
        return array
    return np.ascontiguousarray(np.moveaxis(array, -1, 0))


def is_pair_mask(image: Any, target: Any) -> bool:
    """Whether a pair's ``target`` is a mask of ``image``.

    An array or tensor that covers it (:func:`mask_layout`: ``HxW``, ``HxWxC`` or
    ``CxHxW`` of its height and width), or a single-channel PIL image of its size.

    >>> is_pair_mask(np.zeros((4, 6, 3)), np.zeros((4, 6), np.uint8))
    True
    >>> is_pair_mask(np.zeros((4, 6, 3)), torch.zeros(1, 4, 6))
    True
    >>> is_pair_mask(np.zeros((4, 6, 3)), 3), is_pair_mask(np.zeros((4, 6, 3)), np.zeros((6, 4)))
    (False, False)
    """
    return pair_layout(image, target) is not None


def pair_layout(image: Any, target: Any) -> str | None:
    """The layout of a pair's mask target (:func:`mask_layout`), or ``None``: no mask."""
    if isinstance(target, np.ndarray | torch.Tensor):
        return mask_layout(target, height_width(image), isinstance(target, torch.Tensor))
    if getattr(target, "mode", None) not in _PIL_MASK_MODES or not _is_pil(target):
        return None
    hw = height_width(target)
    return "hw" if hw is not None and hw == height_width(image) else None


def pair_mask(target: Any, layout: str | None = "hw") -> np.ndarray:
    """The mask as a numpy ``HxW[xC]`` array (a PIL palette image: its indices)."""
    mask: np.ndarray = read_mask(target, layout)
    return mask


def mask_like(mask: Any, original: Any) -> Any:
    """The transformed ``mask`` in the type of the ``original`` target.

    A ``CxHxW`` original is given a ``CxHxW`` ``mask`` (:func:`channels_first`); a
    torchvision ``tv_tensors.Mask`` comes back one. A tensor the transform made of a
    numpy or PIL original (``ToTensorV2``) comes back as it is (:func:`made_tensor`).

    >>> mask_like(np.ones((2, 3), np.int64), torch.zeros(2, 2, dtype=torch.uint8)).dtype
    torch.uint8
    """
    if made_tensor(mask, original):
        return mask
    array = np.asarray(mask)
    if isinstance(original, np.ndarray):
        return array.astype(original.dtype, copy=False)
    if isinstance(original, torch.Tensor):
        tensor = torch.from_numpy(np.ascontiguousarray(array)).to(original.dtype)
        return rewrap(tensor, original, None) if is_wrapped(original) else tensor  # a Mask
    return pil_like(array, original)


def refuse_pair_target(target: object, who: str) -> None:
    """Refuse a pair whose target looks like boxes, keypoints or masks it would not read.

    An ``(image, target)`` pair's target is read as a class (passed through), a dict of
    named targets, or a mask of the image (:mod:`rankaug.samples.pair_mask`); called for
    any other target, this refuses one that looks spatial: an array or tensor of two or
    more dimensions (``(N, 4)`` boxes, ``(K, 2)`` keypoints, a mask of another size), a
    list of rows, a PIL image, or a tuple holding one of these. A geometric transform
    would move the image and leave it where it was. Classes pass: numbers, strings,
    0-D and 1-D arrays (one-hot or soft labels), lists of numbers.

    Args:
        target: The pair's target (not a mapping, not a mask of the image).
        who: What reads it, for the message.

    Raises:
        ValueError: If ``target`` looks spatial.

    >>> refuse_pair_target([0.0, 1.0], "the default adapter")
    >>> refuse_pair_target([[0, 0, 4, 4]], "the default adapter")
    Traceback (most recent call last):
    ...
    ValueError: the (image, target) sample's target is a list of rows ([0, 0, 4, 4], ...), ...
    """
    shown = _spatial(target)
    if shown is None and isinstance(target, tuple):  # (class, mask) and the like
        shown = next((f"a tuple holding {s}" for s in map(_spatial, target) if s), None)
    if shown is None:
        return
    raise ValueError(
        f"the (image, target) sample's target is {shown}, which looks like boxes, keypoints "
        f"or a mask, but {who} reads a pair's target only as a class (a number, a string, a "
        "0-D or 1-D label array), a dict of named targets ({'boxes': ..., 'labels': ...}, "
        "torchvision style) or a mask of the image's height and width (HxW, HxWxC or "
        "CxHxW): a geometric transform would move the image and leave it where it was. Give "
        "the dataset such dict targets, or dict samples with named fields ({'image': ..., "
        "'bboxes': ..., 'labels': ...}; rankaug.adapters.KeyMap reads other names), or pass "
        "adapter= (rankaug.types.SampleAdapter)"
    )


def _spatial(value: object) -> str | None:
    """How ``value`` is shown when it looks spatial (see :func:`refuse_pair_target`)."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, str | bytes):
        if len(shape) < 2:
            return None
        kind = "a tensor" if type(value).__module__.startswith("torch") else "an array"
        return f"{kind} of shape {tuple(shape)} and dtype {getattr(value, 'dtype', '?')}"
    if type(value).__module__.startswith("PIL."):
        mode, size = getattr(value, "mode", "?"), getattr(value, "size", "?")
        return f"a PIL image of mode {mode} and size {size}"
    if isinstance(value, list | tuple) and value and all(map(_row, value)):
        return f"a {type(value).__name__} of rows ({value[0]!r:.40}, ...)"
    return None


def _row(value: object) -> bool:
    """Whether ``value`` is a sequence of values (a box's row), not a single value."""
    return isinstance(value, list | tuple) or len(getattr(value, "shape", ())) >= 1


def pair_like(like: Any, image: Any, target: Any) -> Any:
    """A pair of ``like``'s type: a tuple, a list, a named tuple (by its fields).

    >>> pair_like([0, 1], "image", "target")
    ['image', 'target']
    """
    kind: Any = type(like)
    if kind is tuple or kind is list:
        return kind((image, target))
    make = getattr(kind, "_make", None)  # a named tuple takes its fields one by one
    return make((image, target)) if callable(make) else kind((image, target))
