"""The dtype of a batch's boxes and labels: one per batch, whatever the samples gave."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import torch

__all__ = ["box_dtype", "one_dtype"]

_NONE: Final = np.zeros(0)  # a list's place among the typed boxes


def box_dtype(
    boxes: Sequence[np.ndarray], batch: Sequence[Mapping[str, Any]], key: str
) -> np.dtype:
    """The boxes' dtype (:func:`one_dtype`), where boxes given as lists or tuples yield.

    A list carries no dtype: numpy reads whole numbers as int64 and fractions as float64,
    so a sample whose boxes happen to be whole would split a batch. Such boxes take the
    dtype of the samples that give arrays or tensors, else the floats they read as
    (float64 for Python numbers; fractions go only into floats, whole numbers into
    floats or integers every int64 fits in).
    """
    listed = [isinstance(sample[key], list | tuple) for sample in batch]
    if not any(listed):
        return one_dtype(boxes, batch, key, np.dtype(np.float32))
    typed = [_NONE if plain else b for b, plain in zip(boxes, listed, strict=True)]
    if any(b.size for b in typed):  # (lists apart: the positions stay the batch's)
        dtype = one_dtype(typed, batch, key, np.dtype(np.float32))
    else:
        read = [b.dtype for b, plain in zip(boxes, listed, strict=True) if plain and b.size]
        dtype = np.result_type(*read) if read else np.dtype(np.float32)
        dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)  # whole numbers alone
    for position, (array, plain) in enumerate(zip(boxes, listed, strict=True)):
        if plain and array.size and not _exact_into(array.dtype, dtype):
            raise ValueError(
                f"batch[{position}][{key!r}] holds {array.dtype.name} values (a list), which "
                f"the batch's {dtype.name} boxes cannot hold exactly: give every sample's "
                "boxes in one dtype"
            )
    return dtype


def _exact_into(read: np.dtype, dtype: np.dtype) -> bool:
    """Whether a list's values as numpy read them (int64, float64) go into ``dtype``."""
    if read.kind in "iu":
        return dtype.kind == "f" or np.can_cast(read, dtype, "safe")
    return dtype.kind == "f"


def one_dtype(
    arrays: Sequence[np.ndarray], batch: Sequence[Mapping[str, Any]], key: str, default: np.dtype
) -> np.dtype:
    """The dtype every non-empty array shares; empty ones carry no values to convert.

    With no entries at all, the first sample whose value is an array or a tensor decides
    (a dataset keeps its dtype on a batch without boxes), else ``default``.
    """
    filled = [(p, a.dtype) for p, a in enumerate(arrays) if a.size]
    for position, dtype in filled[1:]:
        if dtype != filled[0][1]:
            raise ValueError(
                f"batch[{position}][{key!r}] has dtype {dtype}, batch[{filled[0][0]}][{key!r}] "
                f"has {filled[0][1]}: the {key} of a batch must have one dtype (nothing is "
                "converted: make the dataset return one)"
            )
    if filled:
        return filled[0][1]
    for array, sample in zip(arrays, batch, strict=True):
        if isinstance(sample[key], np.ndarray | torch.Tensor) and array.dtype.kind in "iuf":
            return array.dtype
    return default
