"""An ``(image, mask)`` pair's mask: the target that is a picture of the image's size.

torchvision's ``VOCSegmentation`` and ``Cityscapes(target_type="semantic")``, and most
segmentation datasets written by hand, give ``(image, mask)``: a target with the
image's height and width. A transform that moves the image must move it too, so the
default adapter hands it out as ``mask`` (nearest-neighbour in albumentations and the
mixes) and puts it back in its own type: a numpy array, a ``(H, W)`` tensor, or a PIL
image of its mode (a palette image keeps its palette). Before, it passed through as an
opaque target and came back where it was, under a flipped or cut image.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rankaug.samples.images import _is_pil, value_to_numpy

__all__ = ["is_pair_mask", "mask_like", "pair_mask"]

_PIL_MASK_MODES = ("1", "L", "P", "I", "F", "I;16")


def _height_width(value: Any) -> tuple[int, int] | None:
    """An image's or mask's ``(H, W)``: numpy ``HxW[xC]``, a tensor's last two, PIL's."""
    if isinstance(value, np.ndarray):
        return (value.shape[0], value.shape[1]) if value.ndim in (2, 3) else None
    if isinstance(value, torch.Tensor):
        return (value.shape[-2], value.shape[-1]) if value.ndim in (2, 3) else None
    if _is_pil(value):
        width, height = value.size
        return height, width
    return None


def is_pair_mask(image: Any, target: Any) -> bool:
    """Whether a pair's ``target`` is a mask of ``image``.

    A 2-D array or tensor, or a single-channel PIL image, of the image's height and width.

    >>> is_pair_mask(np.zeros((4, 6, 3)), np.zeros((4, 6), np.uint8))
    True
    >>> is_pair_mask(np.zeros((4, 6, 3)), 3), is_pair_mask(np.zeros((4, 6, 3)), np.zeros((6, 4)))
    (False, False)
    """
    if isinstance(target, np.ndarray | torch.Tensor):
        if target.ndim != 2:
            return False
    elif getattr(target, "mode", None) not in _PIL_MASK_MODES or not _is_pil(target):
        return False
    size = _height_width(target)
    return size is not None and size == _height_width(image)


def pair_mask(target: Any) -> np.ndarray:
    """The mask as a numpy ``HxW`` array (a PIL palette image: its indices)."""
    if isinstance(target, np.ndarray | torch.Tensor):
        mask: np.ndarray = value_to_numpy(target)
        return mask
    return np.asarray(target)


def mask_like(mask: Any, original: Any) -> Any:
    """The transformed ``mask`` in the type of the ``original`` target.

    >>> mask_like(np.ones((2, 3), np.int64), torch.zeros(2, 2, dtype=torch.uint8)).dtype
    torch.uint8
    """
    array = np.asarray(mask)
    if isinstance(original, np.ndarray):
        return array.astype(original.dtype, copy=False)
    if isinstance(original, torch.Tensor):
        return torch.from_numpy(np.ascontiguousarray(array)).to(original.dtype)
    from PIL import Image

    made = Image.fromarray(array.astype(np.asarray(original).dtype, copy=False))
    if original.mode == "P":
        made = made.convert("L") if made.mode != "L" else made
        made.putpalette(original.getpalette() or [])  # L + palette -> P, its colours
    elif made.mode != original.mode:
        made = made.convert(original.mode)
    return made
