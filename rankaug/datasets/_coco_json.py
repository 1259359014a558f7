"""Read and check a COCO detection annotation file (:class:`~rankaug.datasets.CocoDetection`).

The whole file is checked when the dataset is made: each image, category and
annotation, the message naming the file and the offending id.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from rankaug.datasets._file_stat import FileStat, check_unchanged, file_stat
from rankaug.errors import RankaugWarning

__all__ = ["as_boxes", "load_json", "read_annotations", "read_categories", "read_images"]


def load_json(path: Path) -> tuple[dict[str, Any], FileStat]:
    """Load the annotation file, check it is a JSON object; also its stat as read."""
    stat = file_stat(path)
    raw = path.read_bytes()
    check_unchanged(path, stat)
    try:
        data = json.loads(raw.decode("utf-8-sig"))  # -sig: skip a leading BOM
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}: not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start}: "
            f"{error.reason}); JSON files are UTF-8"
        ) from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object at the top, got {type(data).__name__}")
    return data, stat


def _entries(data: dict[str, Any], key: str, source: str, required: bool) -> list[Any]:
    """Return the list ``data[key]``; a missing optional key gives an empty list."""
    if key not in data:
        if not required:
            return []
        raise ValueError(f"{source}: the required key {key!r} is missing (keys: {sorted(data)})")
    value = data[key]
    if not isinstance(value, list):
        raise ValueError(f"{source}: {key!r} must be a list, got {type(value).__name__}")
    return value


def _field(entry: Any, key: str, kind: type, where: str) -> Any:
    """Return ``entry[key]`` after checking it has type ``kind`` (bool is no int)."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(entry).__name__}")
    if key not in entry:
        raise ValueError(f"{where} has no {key!r}")
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{where}: {key!r} must be of type {kind.__name__}, got {value!r}")
    return value


def read_images(data: dict[str, Any], source: str) -> dict[int, tuple[str, int, int]]:
    """Map image id to (file name, height, width)."""
    images: dict[int, tuple[str, int, int]] = {}
    files: dict[str, int] = {}
    for position, entry in enumerate(_entries(data, "images", source, required=True)):
        image_id = _field(entry, "id", int, f"{source}: images[{position}]")
        where = f"{source}: image id {image_id}"
        if image_id in images:
            raise ValueError(f"{where} appears more than once in 'images'")
        file_name = _field(entry, "file_name", str, where)
        height = _field(entry, "height", int, where)
        width = _field(entry, "width", int, where)
        if height <= 0 or width <= 0:
            raise ValueError(f"{where}: height and width must be > 0, got {height}x{width}")
        images[image_id] = (file_name, height, width)
        first = files.setdefault(os.path.normpath(file_name), image_id)
        if first != image_id:
            warnings.warn(
                f"{source}: image ids {first} and {image_id} have the same file {file_name!r}: "
                "each is a sample of its own with only its own annotations (merge the "
                "entries if they are one image)",
                RankaugWarning,
                stacklevel=3,
            )
    return images


def read_categories(data: dict[str, Any], source: str) -> dict[int, str]:
    """Map category id to name."""
    categories: dict[int, str] = {}
    for position, entry in enumerate(_entries(data, "categories", source, required=True)):
        category_id = _field(entry, "id", int, f"{source}: categories[{position}]")
        where = f"{source}: category id {category_id}"
        if category_id in categories:
            raise ValueError(f"{where} appears more than once in 'categories'")
        name = _field(entry, "name", str, where) if "name" in entry else str(category_id)
        categories[category_id] = name
    return categories


def read_annotations(
    data: dict[str, Any],
    source: str,
    images: dict[int, tuple[str, int, int]],
    category_to_label: dict[int, int],
    tolerance: float,
) -> tuple[dict[int, list[tuple[float, float, float, float]]], dict[int, list[int]], int]:
    """Group the non-crowd boxes (clipped pixel xyxy) and labels by image id.

    Every annotation is checked alike; the crowd ones are then counted, not kept.
    """
    boxes: dict[int, list[tuple[float, float, float, float]]] = {}
    labels: dict[int, list[int]] = {}
    seen: set[int] = set()
    crowd = 0
    for position, entry in enumerate(_entries(data, "annotations", source, required=False)):
        annotation_id = _field(entry, "id", int, f"{source}: annotations[{position}]")
        where = f"{source}: annotation id {annotation_id}"
        if annotation_id in seen:
            raise ValueError(f"{where} appears more than once in 'annotations'")
        seen.add(annotation_id)
        is_crowd = _crowd_flag(entry.get("iscrowd", 0), where)
        image_id = _field(entry, "image_id", int, where)
        if image_id not in images:
            raise ValueError(f"{where}: image_id {image_id} is not in 'images'")
        category_id = _field(entry, "category_id", int, where)
        if category_id not in category_to_label:
            raise ValueError(f"{where}: category_id {category_id} is not in 'categories'")
        _, height, width = images[image_id]
        box = _pixel_box(entry.get("bbox"), where, height, width, tolerance)
        if is_crowd:
            crowd += 1
            continue
        boxes.setdefault(image_id, []).append(box)
        labels.setdefault(image_id, []).append(category_to_label[category_id])
    return boxes, labels, crowd


def _crowd_flag(value: object, where: str) -> bool:
    """``iscrowd``: 0 or 1, as an integer, a boolean or an integral float (COCO says 0 or 1)."""
    if isinstance(value, int | float) and value in (0, 1):  # bool is an int; 1.0 == 1
        return bool(value)
    raise ValueError(f"{where}: 'iscrowd' must be 0 or 1, got {value!r}")


def _pixel_box(
    bbox: object, where: str, height: int, width: int, tolerance: float
) -> tuple[float, float, float, float]:
    """Check a COCO ``[x, y, w, h]`` and return it as xyxy clipped to the image."""
    if (
        not isinstance(bbox, list)
        or len(bbox) != 4
        or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in bbox)
    ):
        raise ValueError(f"{where}: 'bbox' must be a list [x, y, w, h] of 4 numbers, got {bbox!r}")
    x, y, w, h = (float(v) for v in bbox)
    if not all(math.isfinite(v) for v in (x, y, w, h)):
        raise ValueError(f"{where}: 'bbox' must be finite, got {bbox!r}")
    if w < 0 or h < 0:
        raise ValueError(f"{where}: 'bbox' width and height must be >= 0, got {bbox!r}")
    if x < -tolerance or y < -tolerance or x + w > width + tolerance or y + h > height + tolerance:
        raise ValueError(
            f"{where}: 'bbox' {bbox!r} (x, y, w, h) sticks out of its {height}x{width} "
            f"(height x width) image by more than tolerance={tolerance!r} pixels"
        )
    return (
        min(max(x, 0.0), width),
        min(max(y, 0.0), height),
        min(max(x + w, 0.0), width),
        min(max(y + h, 0.0), height),
    )


def as_boxes(rows: list[tuple[float, float, float, float]]) -> np.ndarray:
    """Stack box rows into a float64 ``(N, 4)`` array (``(0, 4)`` when empty)."""
    return np.array(rows, dtype=np.float64).reshape(-1, 4)
