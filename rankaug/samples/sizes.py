"""Image-size metadata beside the image, kept current when a wrapper resizes the image.

torchvision's and DETR's detection targets carry ``"size"``, the image's current
``(height, width)``, beside ``"orig_size"``, the size it was read at; Hugging Face
detection rows carry ``"width"`` and ``"height"``, the image's. When a wrapper changes
the image's size (a mosaic, ``A.Resize``, a crop), :func:`resized_sizes` gives these
keys the output's size, in their own type (an ``int`` stays an ``int``, a tensor a
tensor of its dtype, a list a list); ``orig_size`` stays the original. A value that
does not describe the input image (a ``size`` in another order, a stale ``width``) is
refused rather than guessed at. Other names (``image_size``, ``shape``, ``hw``,
``ori_shape``) and values nested deeper pass untouched: their conventions vary.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import torch

__all__ = ["SIZE_KEYS", "resized_sizes"]

SIZE_KEYS: Final = frozenset({"size", "height", "width"})
"""The keys :func:`resized_sizes` keeps current."""


def _whole(value: object) -> int | None:
    """``value`` as an ``int`` when it is one whole number (a 0-D tensor too), else ``None``."""
    if isinstance(value, torch.Tensor | np.ndarray):
        if value.ndim != 0 or value.dtype == bool or value.dtype == torch.bool:
            return None
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return int(number) if number.is_integer() else None


def _pair(value: object) -> tuple[int, int] | None:
    """A ``(height, width)`` pair's whole numbers: two entries, a list, tuple, array or tensor."""
    if isinstance(value, torch.Tensor | np.ndarray):
        if tuple(value.shape) != (2,):
            return None
        entries: Any = list(value)
    elif isinstance(value, list | tuple) and len(value) == 2:
        entries = value
    else:
        return None
    first, second = _whole(entries[0]), _whole(entries[1])
    return None if first is None or second is None else (first, second)


def _number_like(old: Any, number: int) -> Any:
    """``number`` in the type of the number ``old`` (a 0-D tensor of its dtype, say)."""
    if isinstance(old, torch.Tensor):
        return torch.tensor(number, dtype=old.dtype, device=old.device)
    if isinstance(old, np.ndarray):
        return np.array(number, dtype=old.dtype)
    return type(old)(number)


def _pair_like(old: Any, pair: tuple[int, int]) -> Any:
    """``pair`` in the container and dtype of ``old`` (see :func:`_pair`)."""
    if isinstance(old, torch.Tensor):
        return torch.tensor(pair, dtype=old.dtype, device=old.device)
    if isinstance(old, np.ndarray):
        return np.array(pair, dtype=old.dtype)
    items = [_number_like(entry, number) for entry, number in zip(old, pair, strict=True)]
    kind = type(old)
    return items if kind is list else tuple(items) if kind is tuple else kind(items)


def resized_sizes(
    values: Mapping[str, Any], before: tuple[int, int], after: tuple[int, int], where: str
) -> dict[str, Any]:
    """The size metadata of ``values`` for an image resized from ``before`` to ``after``.

    ``size`` (a pair, ``(height, width)``), ``height`` and ``width`` (whole numbers)
    that describe the input image get the output's; a value of another form (a scalar
    ``size``, a string) is not an image size this reads, and passes.

    Args:
        values: The sample's values (a dict sample, or a pair's dict target).
        before: The input image's ``(height, width)``.
        after: The output image's ``(height, width)``.
        where: What holds them, for the message (``"the sample"``).

    Returns:
        ``{key: new value}``; empty when the size did not change.

    Raises:
        ValueError: If such a value does not describe the input image.

    >>> resized_sizes({"size": [480, 640], "orig_size": [480, 640]}, (480, 640), (320, 320), "")
    {'size': [320, 320]}
    >>> resized_sizes({"width": 64}, (48, 60), (32, 32), "the sample")
    Traceback (most recent call last):
    ...
    ValueError: the sample's 'width' is 64, but its image is 60 wide (height, width (48, 60)): ...
    """
    if before == after:
        return {}
    updates: dict[str, Any] = {}
    size = values.get("size")
    if size is not None and (pair := _pair(size)) is not None:
        if pair != before:
            raise ValueError(
                f"{where}'s 'size' is {pair}, but its image's (height, width) is {before}: a "
                f"wrapper resized the image to {after}, and rankaug updates a 'size' of the "
                "image's (height, width) (torchvision's and DETR's; 'orig_size' stays), so "
                "this one would be left stale; give the size as (height, width), or drop it"
            )
        updates["size"] = _pair_like(size, after)
    for key, axis, side in (("height", 0, "high"), ("width", 1, "wide")):
        value = values.get(key)
        number = None if value is None else _whole(value)
        if number is None:
            continue
        if number != before[axis]:
            raise ValueError(
                f"{where}'s {key!r} is {number}, but its image is {before[axis]} {side} "
                f"(height, width {before}): a wrapper resized the image to {after}, and "
                f"rankaug updates a {key!r} that describes the image (Hugging Face's), so "
                "this one would be left stale; correct it in the dataset, or drop it"
            )
        updates[key] = _number_like(value, after[axis])
    return updates
