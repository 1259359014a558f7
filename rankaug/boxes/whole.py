"""Integer boxes and keypoints out of a wrapper: whole pixels, in their dtype, every draw.

A mosaic, a mix or a random scale (``RandomAugmentWrapper``'s ``A.Affine``) moves and
scales boxes by fractions of a pixel, or not at all, depending on the draw. Integer
boxes (``uint8`` to ``int64``, arrays, tensors or lists) come back integers of their
dtype on every draw, so a batch never mixes ``uint8`` and ``float64`` boxes: each output
box is the box of the output pixels whose centres it holds
(:mod:`~rankaug.mosaic.centres`' rule; a box the mosaic keeps holds one; a sliver that
holds none, as ``RandomAugmentWrapper`` may keep, keeps a pixel at its rounded edges),
before it goes back to ``box_format``. That is each edge rounded to the nearest pixel
edge, halves down: ``[2.5, 2.5, 12.5, 15.0]`` gives ``[2, 2, 12, 15]``, and whole boxes
stay as they are (one of zero width or height too: a mix that did not move it gives it
back as it came). Their dtype must hold the output's width and height (the largest
value a box may reach), and their format be a pixel one (``pascal_voc`` or ``coco``):
else they are refused on every draw, not only on those that move a box out of its
dtype's range.

Integer keypoints (``(K, 2+)``) are points, not pixel regions: every value of a row
(``x``, ``y`` and the columns after them) is rounded to the nearest whole number,
halves down (``[2.5, 7.6]`` gives ``[2, 8]``), so they come back in their dtype on every
draw too (:func:`whole_points`), which must hold the output's width and height likewise.
Values of ``None`` index (a wrapper's one sample, no dataset index) are named "the
sample's" in the messages.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import torch

__all__ = ["check_whole", "int_box_dtype", "whole_boxes", "whole_points"]

_OFFSETS: Final = np.array([0.5, 0.5, 0.5 + 1e-3, 0.5 + 1e-3])  # centres.aligned's
_PIXEL_FORMATS: Final = ("pascal_voc", "coco")


def int_box_dtype(boxes: Any) -> np.dtype[Any] | None:
    """The integer dtype of a sample's boxes, else ``None`` (floats, none, or not numbers).

    >>> int_box_dtype(np.zeros((0, 4), np.int16)), int_box_dtype([[1, 2, 3, 4]])
    (dtype('int16'), dtype('int64'))
    >>> int_box_dtype(torch.zeros(1, 4, dtype=torch.uint8)), int_box_dtype([])
    (dtype('uint8'), None)
    """
    if boxes is None:
        return None
    if isinstance(boxes, torch.Tensor):
        if boxes.dtype.is_floating_point or boxes.dtype.is_complex or boxes.dtype == torch.bool:
            return None
        dtype = np.dtype(str(boxes.dtype).removeprefix("torch."))
    else:
        try:
            dtype = np.asarray(boxes).dtype
        except (TypeError, ValueError):  # ragged: as_box_array refuses them
            return None
    return dtype if dtype.kind in "iu" else None


def whole_boxes(
    xyxy: np.ndarray,
    dtype: np.dtype[Any] | None,
    hw: tuple[int, int],
    box_format: str,
    index: int | None,
) -> np.ndarray:
    """The output's pixel ``xyxy`` boxes snapped to whole pixels for integer ``dtype``.

    Args:
        xyxy: ``(N, 4)`` pixel boxes on the output, each holding a pixel centre.
        dtype: The main sample's box dtype (:func:`int_box_dtype`); ``None``: floats,
            ``xyxy`` is returned as it is.
        hw: The output's ``(height, width)``.
        box_format: The wrapper's box format.
        index: The main sample's dataset index, for messages (``None``: not known).

    Returns:
        The boxes, whole (floats still: the adapter casts them into ``dtype``).

    Raises:
        ValueError: If ``dtype`` cannot hold the output's width or height, or
            ``box_format`` is normalised (fractions of the image are no integers).

    >>> whole_boxes(np.array([[2.5, 2.5, 12.5, 15.0]]), np.dtype(np.int32), (20, 20),
    ...             "pascal_voc", 0).tolist()
    [[2.0, 2.0, 12.0, 15.0]]
    """
    if dtype is None:
        return xyxy
    check_whole(dtype, hw, box_format, index)
    if not len(xyxy):
        return xyxy
    edges = np.ceil(xyxy - _OFFSETS)  # the pixels whose centres each box holds
    size = np.array(hw[::-1], np.float64)  # width, height
    far = np.minimum(np.maximum(edges[:, 2:], edges[:, :2] + 1.0), size)  # a pixel at least
    near = np.minimum(edges[:, :2], far - 1.0)
    whole = (xyxy == np.round(xyxy)).all(axis=1, keepdims=True)  # as they are, pixel or none
    return np.where(whole, xyxy, np.concatenate([near, far], axis=1))


def whole_points(
    points: np.ndarray, dtype: np.dtype[Any] | None, hw: tuple[int, int], index: int | None
) -> np.ndarray:
    """``(K, 2+)`` keypoints rounded to whole numbers, halves down, for integer ``dtype``.

    Args:
        points: The output's keypoints.
        dtype: Their integer dtype as the sample gave them; ``None``: ``points`` as it is.
        hw: The output's ``(height, width)``.
        index: The sample's dataset index, for messages (``None``: not known).

    Returns:
        The keypoints, whole (floats still: the adapter casts them into ``dtype``).

    Raises:
        ValueError: If ``dtype`` cannot hold the output's width or height.

    >>> whole_points(np.array([[2.5, 7.6, 2.0]]), np.dtype(np.int16), (20, 20), 0).tolist()
    [[2.0, 8.0, 2.0]]
    """
    if dtype is None:
        return points
    check_whole(dtype, hw, "pascal_voc", index, "keypoints")
    if points.dtype.kind != "f":
        return points
    return np.ceil(points - 0.5)  # the nearest whole number, halves down


def check_whole(
    dtype: np.dtype[Any] | None,
    hw: tuple[int, int],
    box_format: str,
    index: int | None,
    name: str = "bboxes",
) -> None:
    """Refuse integer boxes that cannot come back whole (see :func:`whole_boxes`).

    Checked on every output, moved or not, so that a dataset is refused on every draw.
    ``name``: ``"keypoints"`` for keypoints (any format: points have no box format).

    Raises:
        ValueError: If ``dtype`` cannot hold the output's width or height, or
            ``box_format`` is normalised.
    """
    if dtype is None:
        return
    where = f"the sample's {name}" if index is None else f"dataset[{index}] {name}"
    if box_format not in _PIXEL_FORMATS:
        raise ValueError(
            f"{where} are {dtype}, integers, but box_format={box_format!r} gives "
            "fractions of the image: give them as floats (float32), or in a pixel format "
            f"({', '.join(map(repr, _PIXEL_FORMATS))})"
        )
    height, width = hw
    most = np.iinfo(dtype).max
    if max(height, width) > most:
        raise ValueError(
            f"{where} are {dtype}, which holds up to {most}, but the output is "
            f"{height}x{width} (height x width), which they may reach: give them in "
            "a wider dtype (int32, float32)"
        )
