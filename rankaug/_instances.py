"""Instance masks through albumentations: none at all, and the masks of dropped boxes.

albumentations 2.0.8 cannot stack ``(0, H, W)`` masks and AlbumentationsX refuses
``[]``, so a sample with no instance goes without them and gets empty ones back
(:func:`none_of`, :func:`empty_like`). When a transform drops a box it keeps every
mask, so each box carries its position in an extra column (:func:`numbered`) and the
masks follow the boxes kept (:func:`follow`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["empty_like", "follow", "none_of", "numbered"]


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
