"""Write dict samples in the YOLO folder layout, which :class:`~rankaug.datasets.YoloFolder` reads.

The layout::

    root/images/000000.png
    root/labels/000000.txt     one line per object: class cx cy w h

with ``cx cy w h`` the box centre and size divided by the image width and height.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from rankaug.boxes import (
    BoxFormat,
    as_box_array,
    check_box_format,
    from_xyxy,
    to_xyxy,
    validate_xyxy,
)
from rankaug.datasets._image_io import write_png

__all__ = ["write_yolo_folder"]


def write_yolo_folder(
    dataset: Any,
    root: str | os.PathLike[str],
    *,
    box_format: BoxFormat = "pascal_voc",
) -> Path:
    """Write a dataset of dict samples to the YOLO layout under ``root``.

    Images become lossless PNGs ``root/images/000000.png`` (numbered by index, at
    least six digits) so they read back exactly; labels go to
    ``root/labels/000000.txt`` (an empty file for an image without objects) with
    coordinates written at full float precision. Only ``image``, ``bboxes`` and
    ``labels`` are written (YOLO detection labels have no masks).

    Args:
        dataset: Map-style dataset (``len`` and integer indexing) whose samples are
            dicts with ``"image"`` (uint8 ``HxW``, ``HxWx1`` or ``HxWx3`` RGB),
            ``"bboxes"`` (``(N, 4)`` in ``box_format``) and ``"labels"`` (``N``
            non-negative integers).
        root: Target folder; its ``images`` and ``labels`` subfolders must not exist
            or be empty.
        box_format: Format of the samples' ``"bboxes"``. If ``dataset`` has a
            ``box_format`` attribute, the two must agree. Defaults to ``"pascal_voc"``.

    Returns:
        ``root`` as a :class:`~pathlib.Path`.

    Raises:
        TypeError: If ``dataset`` or a sample has the wrong type.
        ValueError: If a sample's values are invalid (the message names its index),
            or ``box_format`` disagrees with ``dataset.box_format``.
        FileExistsError: If ``root/images`` or ``root/labels`` is not empty.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> sample = {"image": np.zeros((10, 20, 3), np.uint8),
    ...           "bboxes": np.array([[0.0, 0.0, 10.0, 5.0]]), "labels": np.array([4])}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = write_yolo_folder([sample], tmp)
    ...     print((root / "labels" / "000000.txt").read_text().strip())
    4 0.25 0.25 0.5 0.5
    """
    fmt = check_box_format(box_format)
    if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
        raise TypeError(
            f"dataset must be a map-style dataset (len and indexing), got {type(dataset).__name__}"
        )
    own_format = getattr(dataset, "box_format", None)
    if own_format is not None and own_format != fmt:
        raise ValueError(
            f"box_format={fmt!r} but the dataset's box_format is {own_format!r}; pass "
            f"box_format={own_format!r}"
        )
    root_path = Path(root)
    images, labels = root_path / "images", root_path / "labels"
    for folder in (images, labels):
        if folder.exists() and any(folder.iterdir()):
            raise FileExistsError(f"{folder} is not empty; write_yolo_folder never overwrites")
        folder.mkdir(parents=True, exist_ok=True)
    count = len(dataset)
    digits = max(6, len(str(count - 1)))
    for index in range(count):
        image, yolo, classes = _yolo_rows(dataset[index], index, fmt)
        stem = f"{index:0{digits}d}"
        write_png(images / f"{stem}.png", image)
        lines = [
            " ".join([str(label), *(repr(value) for value in row)])
            for label, row in zip(classes.tolist(), yolo.tolist(), strict=True)
        ]
        text = "".join(line + "\n" for line in lines)
        (labels / f"{stem}.txt").write_text(text, encoding="utf-8")
    return root_path


def _yolo_rows(
    sample: object, index: int, fmt: BoxFormat
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check one dict sample and return its image, yolo boxes and labels."""
    where = f"dataset[{index}]"
    if not isinstance(sample, dict):
        raise TypeError(
            f"{where} must be a dict sample with 'image', 'bboxes' and 'labels', got "
            f"{type(sample).__name__} (build the dataset with as_tuple=False)"
        )
    missing = [key for key in ("image", "bboxes", "labels") if key not in sample]
    if missing:
        raise ValueError(f"{where} lacks the key(s) {missing}")
    image = sample["image"]
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        raise TypeError(
            f"{where}['image'] must be a uint8 numpy array (PNG keeps it exact), got "
            f"{type(image).__name__} of dtype {getattr(image, 'dtype', None)}"
        )
    if image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3)):
        raise ValueError(f"{where}['image'] must be HxW, HxWx1 or HxWx3, got shape {image.shape}")
    boxes = as_box_array(sample["bboxes"], name=f"{where}['bboxes']")
    classes = np.asarray(sample["labels"])
    if classes.shape == (0,):
        classes = classes.astype(np.int64)  # an empty list is float64 to numpy
    if classes.dtype.kind not in "iu" or classes.shape != (boxes.shape[0],):
        raise ValueError(
            f"{where}['labels'] must be {boxes.shape[0]} integers (one per box), got "
            f"dtype {classes.dtype} and shape {classes.shape}"
        )
    if (classes < 0).any():
        raise ValueError(f"{where}['labels'] must be >= 0, got {classes.tolist()}")
    image_hw = (image.shape[0], image.shape[1])
    xyxy = validate_xyxy(
        to_xyxy(boxes, fmt, image_hw), image_hw, name=f"{where}['bboxes']", clip=False
    )
    return image, from_xyxy(xyxy, "yolo", image_hw), classes
