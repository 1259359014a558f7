"""Targets rankaug would not read: refused before a geometric transform leaves them stale.

A dict sample whose boxes, masks, polygons or keypoints sit under keys rankaug does not
read (Hugging Face's ``objects``, COCO's ``annotations``, ultralytics' ``img``/``cls``...)
would come out of a geometric transform with moved pixels and unmoved targets. So an
adapter whose consumer moves boxes (``"bboxes"`` among its targets) and that finds no
target it knows calls :func:`refuse_unread`, which looks (cheaply, a few levels deep) for
fields of such names holding more than a scalar, and refuses the sample with the keys it
saw and the ``adapter=`` line that would read them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

__all__ = ["GEOMETRIC", "refuse_unread", "suggest_adapter", "unread_fields"]

#: The targets whose presence says a sample's geometry was found.
GEOMETRIC: Final = frozenset({"bboxes", "mask", "masks", "keypoints", "segments"})

_NAMES: Final = frozenset(
    {
        "objects", "annotations", "annotation", "anns", "instances",
        "boxes", "box", "bbox", "bboxes", "cls",
        "segmentation", "segmentations", "segments", "polygons", "polygon",
        "keypoints", "masks", "mask",
    }
)  # fmt: skip
_DEPTH: Final = 3


def _scalar(value: object) -> bool:
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return True
    return getattr(value, "ndim", None) == 0


def unread_fields(mapping: Mapping[Any, Any], skip: Collection[str] = ()) -> list[str]:
    """The dotted paths of fields in ``mapping`` that look like targets (boxes, masks...).

    Args:
        mapping: A dict sample (or a pair's dict target).
        skip: Top-level keys that are read already.

    Returns:
        The paths, in the mapping's order (``"objects.bbox"``, ``"annotations"``...).

    >>> unread_fields({"image": 0, "objects": {"bbox": [[0, 0, 1, 1]], "id": [3]}, "id": 7})
    ['objects.bbox']
    """
    found: list[str] = []
    _walk(mapping, "", frozenset(skip), found, _DEPTH)
    return found


def _walk(mapping: Mapping[Any, Any], prefix: str, skip: frozenset[str], found: list[str],
          depth: int) -> None:  # fmt: skip
    for key, value in mapping.items():
        if prefix == "" and key in skip:
            continue
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if depth > 1:
                before = len(found)
                _walk(value, f"{path}.", skip, found, depth - 1)
                if len(found) == before and key in _NAMES and value:
                    found.append(path)
        elif key in _NAMES and not _scalar(value):
            found.append(path)


def suggest_adapter(mapping: Mapping[Any, Any], paths: Collection[str] = ()) -> str:
    """The ``adapter=`` line that would read a sample of ``mapping``'s layout.

    >>> suggest_adapter({"img": 0, "cls": [[0.0]], "bboxes": [[0.5, 0.5, 0.2, 0.2]]})
    'adapter=rankaug.adapters.Ultralytics()'
    >>> suggest_adapter({"image": 0, "objects": {"bbox": [], "category": []}})
    "adapter=rankaug.adapters.HuggingFace() (COCO x, y, w, h boxes: box_format='coco')"
    """
    objects = mapping.get("objects")
    if isinstance(objects, Mapping) and "bbox" in objects:
        return "adapter=rankaug.adapters.HuggingFace() (COCO x, y, w, h boxes: box_format='coco')"
    if "img" in mapping and "image" not in mapping:
        return "adapter=rankaug.adapters.Ultralytics()"
    image = "image" if "image" in mapping else "KEY"
    parts = [f"image={image!r}"]
    for path in paths:
        leaf = path.rsplit(".", 1)[-1]
        name = {"bbox": "bboxes", "boxes": "bboxes", "box": "bboxes", "bboxes": "bboxes",
                "masks": "masks", "mask": "masks", "keypoints": "keypoints",
                "segmentation": "segments", "segments": "segments", "polygons": "segments",
                "cls": "labels"}.get(leaf)  # fmt: skip
        if name is not None and not any(p.startswith(f"{name}=") for p in parts):
            parts.append(f"{name}={path!r}")
    return f"adapter=rankaug.adapters.KeyMap({', '.join(parts)}, ...)"


def refuse_unread(mapping: Mapping[Any, Any], skip: Collection[str], who: str) -> None:
    """Refuse a sample whose targets rankaug would not read (see the module docstring).

    Args:
        mapping: The dict sample (or a pair's dict target).
        skip: The keys already read.
        who: What reads it, for the message (``"the default adapter"``).

    Raises:
        ValueError: If ``mapping`` has fields that look like targets.

    >>> refuse_unread({"image": 0, "label": 3}, {"image"}, "the default adapter")
    >>> refuse_unread({"image": 0, "annotations": [{"bbox": [0, 0, 2, 2]}]}, {"image"}, "it")
    Traceback (most recent call last):
    ...
    ValueError: the sample has no target it reads ('bboxes', 'keypoints', 'mask', ...
    """
    paths = unread_fields(mapping, skip)
    if not paths:
        return
    raise ValueError(
        f"the sample has no target {who} reads ({', '.join(map(repr, sorted(GEOMETRIC)))}), "
        f"but {', '.join(map(repr, paths))} look like boxes, masks, polygons or keypoints: "
        "a geometric transform would move its pixels and leave them where they were. "
        f"Read them with {suggest_adapter(mapping, paths)}; the sample has keys "
        f"{sorted(map(str, mapping))}"
    )
