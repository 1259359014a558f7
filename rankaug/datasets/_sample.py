"""Helpers shared by the built-in datasets: argument checks and sample assembly.

A built-in dataset hands out either a *dict sample* (albumentations' keys, numpy
arrays, boxes in the dataset's ``box_format``) or, with ``as_tuple=True``, a
torchvision-style ``(image, target)`` pair whose ``target["boxes"]`` are always
absolute pixel ``(x_min, y_min, x_max, y_max)``; ``tensors=True`` turns that pair
into torch tensors (image ``CHW``).
"""

from __future__ import annotations

import operator
from typing import Any, SupportsIndex

import numpy as np
import torch

from rankaug.boxes import BoxFormat, check_box_format, from_xyxy

__all__ = ["build_sample", "check_bool", "check_index", "check_int", "check_output_options"]


def check_index(index: object, length: int) -> int:
    """Return ``index`` as a position in ``[0, length)``; negatives count from the end.

    Args:
        index: An integer (Python, numpy, or anything with ``__index__``; not bool).
        length: The length of the dataset.

    Returns:
        The non-negative position.

    Raises:
        TypeError: If ``index`` is not an integer.
        IndexError: If ``index`` is outside ``[-length, length)``.

    >>> check_index(-1, 5)
    4
    """
    if isinstance(index, int) and not isinstance(index, bool):
        position = operator.index(index)  # the common case, kept cheap
    else:
        message = f"index must be an integer, got {index!r} of type {type(index).__name__}"
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, SupportsIndex):
            raise TypeError(message)
        try:
            position = operator.index(index)
        except TypeError:  # e.g. a float torch tensor, which has __index__ but refuses it
            raise TypeError(message) from None
    if position < 0:
        position += length
    if not 0 <= position < length:
        raise IndexError(f"index {index} is out of range for a dataset of length {length}")
    return int(position)


def check_int(value: object, name: str, *, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int after checking ``low <= value`` (and ``<= high``).

    Args:
        value: The candidate integer (bool refused).
        name: The argument name used in error messages.
        low: Smallest allowed value.
        high: Largest allowed value, or None for no upper bound.

    Returns:
        ``value`` as a Python int.

    Raises:
        TypeError: If ``value`` is not an integer.
        ValueError: If ``value`` is out of range.

    >>> check_int(3, "channels", low=1, high=3)
    3
    """
    expected = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be {expected}, got {value!r} of type {type(value).__name__}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` if it is a bool, else raise a TypeError naming ``name``.

    >>> check_bool(True, "masks")
    True
    """
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {value!r} of type {type(value).__name__}")
    return value


def check_output_options(
    box_format: object, as_tuple: object, tensors: object
) -> tuple[BoxFormat, bool, bool]:
    """Check the output options every built-in dataset takes.

    ``as_tuple=True`` always gives pixel xyxy boxes (torchvision's convention), so it
    needs ``box_format="pascal_voc"``; ``tensors=True`` needs ``as_tuple=True``
    (dict samples hold numpy arrays, which albumentations transforms expect).

    Returns:
        The checked ``(box_format, as_tuple, tensors)``.

    Raises:
        TypeError: If a value has the wrong type.
        ValueError: If ``box_format`` is unknown or the combination is contradictory.

    >>> check_output_options("yolo", False, False)
    ('yolo', False, False)
    """
    fmt = check_box_format(box_format)
    tuple_out = check_bool(as_tuple, "as_tuple")
    tensor_out = check_bool(tensors, "tensors")
    if tuple_out and fmt != "pascal_voc":
        raise ValueError(
            f"as_tuple=True gives torchvision-style targets whose boxes are always pixel "
            f"xyxy, so box_format must be 'pascal_voc', got {fmt!r}"
        )
    if tensor_out and not tuple_out:
        raise ValueError(
            "tensors=True needs as_tuple=True: dict samples hold numpy arrays "
            "(what albumentations transforms expect)"
        )
    return fmt, tuple_out, tensor_out


def build_sample(
    image: np.ndarray,
    xyxy: np.ndarray,
    labels: np.ndarray,
    *,
    box_format: BoxFormat,
    as_tuple: bool,
    tensors: bool,
    mask: np.ndarray | None = None,
) -> Any:
    """Assemble a dict sample or an ``(image, target)`` pair.

    Args:
        image: ``HxW`` or ``HxWxC`` image.
        xyxy: ``(N, 4)`` absolute pixel xyxy boxes.
        labels: ``(N,)`` int64 labels.
        box_format: Format of the dict sample's ``"bboxes"``.
        as_tuple: Give ``(image, {"boxes", "labels"[, "mask"]})`` instead of a dict.
        tensors: With ``as_tuple``, give torch tensors (image ``CHW``).
        mask: Optional ``HxW`` uint8 semantic mask, added under ``"mask"``.

    Returns:
        The sample.

    >>> import numpy as np
    >>> sample = build_sample(
    ...     np.zeros((4, 8, 3), np.uint8), np.array([[0.0, 0.0, 4.0, 2.0]]),
    ...     np.array([1]), box_format="yolo", as_tuple=False, tensors=False)
    >>> sample["bboxes"]
    array([[0.25, 0.25, 0.5 , 0.5 ]], dtype=float32)
    """
    if not as_tuple:
        sample: dict[str, np.ndarray] = {
            "image": image,
            "bboxes": from_xyxy(xyxy, box_format, (image.shape[0], image.shape[1])).astype(
                np.float32
            ),
            "labels": labels,
        }
        if mask is not None:
            sample["mask"] = mask
        return sample
    target: dict[str, Any] = {"boxes": xyxy.astype(np.float32), "labels": labels}
    if mask is not None:
        target["mask"] = mask
    if not tensors:
        return image, target
    chw = image[None] if image.ndim == 2 else image.transpose(2, 0, 1)
    tensor_target = {key: torch.from_numpy(value) for key, value in target.items()}
    return torch.from_numpy(np.ascontiguousarray(chw)), tensor_target
