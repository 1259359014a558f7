"""Instance masks through albumentations: none at all, and the masks of dropped boxes.

albumentations 2.0.8 cannot stack ``(0, H, W)`` masks and AlbumentationsX refuses
``[]``, so a sample with no instance goes without them and gets empty ones back
(:func:`none_of`, :func:`empty_like`). When a transform drops a box it keeps every
mask, so each box carries its position in an extra column (:func:`numbered`) and the
masks follow the boxes kept (:func:`follow`). albumentations takes a label field of one
value per box only (a ``(N, 2)`` field fails inside it with a concatenation error), so
such a field goes as each box's position and its rows follow the boxes kept
(:func:`wide_fields`, :func:`rows_kept`). OpenCV warps no ``bool`` or ``float16``
mask (``cv2.remap`` asserts): such masks go as ``uint8`` and ``float32``
(:func:`warpable`), and the adapter gives them back in their dtype.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

__all__ = ["empty_like", "follow", "none_of", "numbered", "rows_kept", "warpable", "wide_fields"]


def none_of(masks: Any) -> bool:
    """Whether ``masks`` holds no instance: ``(0, H, W)``, ``[]`` or ``()``."""
    if isinstance(masks, list | tuple):
        return not masks
    shape = getattr(masks, "shape", None)
    return shape is not None and len(shape) > 0 and shape[0] == 0


def empty_like(masks: Any, image: Any) -> Any:
    """No instance masks, as ``masks`` held them, of ``image``'s height and width.

    An array gives ``(0, H', W', ...)`` of its dtype (``image``'s size when there is
    one), a list or tuple an empty one.
    """
    if isinstance(masks, list | tuple):
        return type(masks)()
    shape = tuple(masks.shape)
    if isinstance(image, np.ndarray) and image.ndim >= 2:
        shape = (0, *image.shape[:2], *shape[3:])
    if isinstance(masks, torch.Tensor):
        return torch.zeros(shape, dtype=masks.dtype)
    return np.zeros(shape, masks.dtype)


def numbered(boxes: Any) -> np.ndarray:
    """``boxes`` with one more column: each box's position (exact in any float dtype)."""
    array = np.asarray(boxes)
    kind = array.dtype if array.dtype.kind == "f" else np.dtype(np.float64)
    rows = array.reshape(len(array), -1).astype(kind, copy=False)
    positions = np.arange(len(array), dtype=kind)[:, None]
    return np.concatenate((rows, positions), axis=1)


def follow(boxes: Any, masks: Any, count: int, width: int) -> tuple[np.ndarray, Any]:
    """The boxes without their position column, and the masks of the boxes kept.

    ``width``: the boxes' columns as given (an empty result may come back without the
    position column).

    Raises:
        ValueError: If a kept box's position is not one of the ``count`` given (a
            transform that adds boxes: no mask is known for them).
    """
    array = np.asarray(boxes)
    if not len(array):
        return np.zeros((0, width), array.dtype), masks[:0]
    positions = array[:, -1]
    kept = positions.astype(np.intp)
    if (kept != positions).any() or (kept < 0).any() or (kept >= count).any():
        raise ValueError(
            f"the transform returned boxes that were not among the {count} given "
            "(it added boxes), so their instance masks are unknown"
        )
    chosen = [masks[i] for i in kept] if isinstance(masks, list | tuple) else masks[kept]
    return array[:, :-1], chosen


def wide_fields(data: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """The label fields in ``data`` with more than one value per box, or rows, as they are.

    A field of ``(N, K)`` values (``K != 1``) or a list of rows or dicts (``[[c], ...]``
    too: albumentations hashes each label, and a list is unhashable) for the ``N`` boxes of
    ``data["bboxes"]``; a ``(N, 1)`` array albumentations flattens itself, and a field of
    another length is left to albumentations' own check.

    >>> boxes = np.zeros((2, 4))
    >>> sorted(wide_fields({"bboxes": boxes, "a": np.ones((2, 2)), "b": [[1], [2]],
    ...                     "c": [(1, 2), (3, 4)], "d": np.ones((3, 2))}, "abcd"))
    ['a', 'b', 'c']
    """
    boxes = data.get("bboxes")
    if boxes is None:
        return {}
    count, found = len(boxes), {}
    for key in fields:
        value = data.get(key)
        if isinstance(value, np.ndarray):
            wide = value.ndim >= 2 and math.prod(value.shape[1:]) != 1
        elif isinstance(value, list | tuple) and value:
            first = value[0]
            wide = isinstance(first, list | tuple | np.ndarray | Mapping)  # [[c], ...] too
        else:
            wide = False
        if wide and len(value) == count:  # type: ignore[arg-type]
            found[key] = value
    return found


def rows_kept(positions: Any, rows: Any) -> Any:
    """The ``rows`` of a wide label field at ``positions`` (a transform's placeholder out).

    An array gives an array (``(0, K)`` when no box is kept), a list or tuple one of its
    items.

    >>> rows_kept(np.array([2.0, 0.0]), np.array([[1, 2], [3, 4], [5, 6]])).tolist()
    [[5, 6], [1, 2]]
    >>> rows_kept([], [(1, 2)])
    []
    """
    kept = np.asarray(positions, np.float64).astype(np.intp)
    if isinstance(rows, np.ndarray):
        return rows[kept]
    items = [rows[i] for i in kept]
    return items if isinstance(rows, list) else tuple(items)


_WARPABLE: dict[np.dtype[Any], np.dtype[Any]] = {
    np.dtype(np.bool_): np.dtype(np.uint8),
    np.dtype(np.float16): np.dtype(np.float32),
}


def warpable(masks: Any) -> Any:
    """A mask (or a list or tuple of them) in a dtype OpenCV warps.

    ``bool`` as ``uint8`` (a view), ``float16`` as ``float32``; any other value as it is.

    >>> warpable(np.ones((2, 2), bool)).dtype, warpable([np.ones(2, np.float16)])[0].dtype
    (dtype('uint8'), dtype('float32'))
    """
    if isinstance(masks, np.ndarray):
        dtype = _WARPABLE.get(masks.dtype)
        if dtype is None:
            return masks
        return masks.view(np.uint8) if dtype.itemsize == 1 else masks.astype(dtype)
    if isinstance(masks, list | tuple) and masks and isinstance(masks[0], np.ndarray):
        return type(masks)(warpable(mask) for mask in masks)
    return masks
