"""Helpers shared by the built-in datasets: argument checks and sample assembly.

A built-in dataset hands out either a *dict sample* (albumentations' keys, numpy
arrays, boxes in the dataset's ``box_format``) or, with ``as_tuple=True``, a
torchvision-style ``(image, target)`` pair whose ``target["boxes"]`` are always
absolute pixel ``(x_min, y_min, x_max, y_max)``; ``tensors=True`` turns that pair
into torch tensors (image ``CHW``). Instance polygons (``"segments"``) are a list of
float32 ``(K, 2)`` pixel ``(x, y)`` arrays, one per box, in either form; with
``tensors=True`` a list of float32 tensors (polygons differ in length, so they do not
stack).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rankaug import checks
from rankaug.boxes import BoxFormat, check_box_format, from_xyxy

__all__ = ["build_sample", "check_output_options"]


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
    tuple_out = checks.boolean(as_tuple, "as_tuple")
    tensor_out = checks.boolean(tensors, "tensors")
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
    segments: list[np.ndarray] | None = None,
) -> Any:
    """Assemble a dict sample or an ``(image, target)`` pair.

    Args:
        image: ``HxW`` or ``HxWxC`` image.
        xyxy: ``(N, 4)`` absolute pixel xyxy boxes.
        labels: ``(N,)`` int64 labels.
        box_format: Format of the dict sample's ``"bboxes"``.
        as_tuple: Give ``(image, {"boxes", "labels"[, "mask"][, "segments"]})`` instead
            of a dict.
        tensors: With ``as_tuple``, give torch tensors (image ``CHW``).
        mask: Optional ``HxW`` uint8 semantic mask, added under ``"mask"``.
        segments: Optional polygons, one float32 ``(K, 2)`` pixel ``(x, y)`` array per
            box, added under ``"segments"`` (never converted to ``box_format``).

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
        sample: dict[str, Any] = {
            "image": image,
            "bboxes": from_xyxy(xyxy, box_format, (image.shape[0], image.shape[1])).astype(
                np.float32
            ),
            "labels": labels,
        }
        if mask is not None:
            sample["mask"] = mask
        if segments is not None:
            sample["segments"] = segments
        return sample
    target: dict[str, Any] = {"boxes": xyxy.astype(np.float32), "labels": labels}
    if mask is not None:
        target["mask"] = mask
    if not tensors:
        if segments is not None:
            target["segments"] = segments
        return image, target
    chw = image[None] if image.ndim == 2 else image.transpose(2, 0, 1)
    tensor_target: dict[str, Any] = {key: torch.from_numpy(value) for key, value in target.items()}
    if segments is not None:
        tensor_target["segments"] = [torch.from_numpy(points) for points in segments]
    return torch.from_numpy(np.ascontiguousarray(chw)), tensor_target
