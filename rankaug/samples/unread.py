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

__all__ = [
    "GEOMETRIC",
    "known",
    "per_box_fields",
    "refuse_object_list",
    "refuse_unread",
    "suggest_adapter",
    "unread_fields",
]

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


def known(read: Collection[str], found: Collection[str]) -> frozenset[str]:
    """The top-level keys to pass over when looking for unread targets.

    ``read``, and, once ``found`` (the targets read) holds one of :data:`GEOMETRIC`,
    those names too: a sample whose geometry was found keeps a ``mask`` or ``keypoints``
    its consumer did not ask for by choice (a viewer of boxes); what is looked for
    then is geometry under names rankaug does not know (``boxes``, ``objects``...).

    >>> sorted(known({"image"}, {"image"}))
    ['image']
    >>> sorted(known({"image"}, {"image", "bboxes"}))[:3]
    ['bboxes', 'image', 'keypoints']
    """
    if GEOMETRIC.isdisjoint(found):
        return frozenset(read)
    return GEOMETRIC.union(read)


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


_ROLES: Final = {
    "bbox": "bboxes", "boxes": "bboxes", "box": "bboxes", "bboxes": "bboxes",
    "masks": "masks", "mask": "masks", "keypoints": "keypoints",
    "segmentation": "segments", "segments": "segments", "polygons": "segments",
    "cls": "labels",
}  # fmt: skip
_LABELS: Final = ("category", "category_id", "labels", "label", "class", "cls")


def _lookup(mapping: Mapping[Any, Any], path: str) -> Any:
    value: Any = mapping
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def suggest_adapter(
    mapping: Mapping[Any, Any], paths: Collection[str] = (), image: str | None = None
) -> str:
    """The ``adapter=`` line that would read a sample of ``mapping``'s layout.

    ``image``: the image's key or path when the caller knows it (a ``KeyMap``'s).
    A ``mask`` at the top level is a semantic mask; inside per-object data, an
    instance mask.

    >>> suggest_adapter({"image": 0, "boxes": [[0, 0, 1, 1]], "labels": [2], "mask": 0},
    ...                 ["boxes", "mask"])
    "adapter=rankaug.adapters.KeyMap(image='image', bboxes='boxes', labels='labels', mask='mask')"
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
    parts = {"image": image or ("image" if "image" in mapping else "KEY")}
    note = ""
    for path in paths:
        value = _lookup(mapping, path)
        if isinstance(value, list | tuple) and value and isinstance(value[0], Mapping):
            # a list of per-object dicts (COCO's annotations): KeyMap reads per-object lists
            note = (
                f"the dataset giving {path!r} as per-object lists (a dict of lists, not a "
                "list of dicts), then "
            )
            keys = [k for k in value[0] if isinstance(k, str)]
            found = [(_ROLES[k], f"{path}.{k}") for k in keys if k in _ROLES]
            found += [("labels", f"{path}.{k}") for k in keys if k in _LABELS][:1]
        else:
            leaf = path.rsplit(".", 1)[-1]
            role = "mask" if path == "mask" else _ROLES.get(leaf)  # top level: semantic
            found = [] if role is None else [(role, path)]
            parent = _lookup(mapping, path.rpartition(".")[0]) if "." in path else mapping
            if role == "bboxes" and isinstance(parent, Mapping):
                prefix = path.rpartition(".")[0] + "." if "." in path else ""
                found += [("labels", f"{prefix}{k}") for k in parent if k in _LABELS][:1]
        for name, where in found:
            parts.setdefault(name, where)
    text = ", ".join(f"{name}={where!r}" for name, where in parts.items())
    return f"{note}adapter=rankaug.adapters.KeyMap({text})"


def refuse_unread(
    mapping: Mapping[Any, Any],
    skip: Collection[str],
    who: str,
    read: Collection[str] = (),
    image: str | None = None,
) -> None:
    """Refuse a sample whose targets rankaug would not read (see the module docstring).

    Args:
        mapping: The dict sample (or a pair's dict target).
        skip: The keys already read.
        who: What reads it, for the message (``"the default adapter"``).
        read: The targets it did read (rankaug's names), for the message.
        image: The image's key or path, when the reader knows it (for the suggestion).

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
    found = sorted(GEOMETRIC.intersection(read))
    if found:  # some targets were read: these would go stale beside them
        opening = (
            f"the sample has {', '.join(map(repr, paths))}, which look like boxes, masks, "
            f"polygons or keypoints but {who} does not read (it reads "
            f"{', '.join(map(repr, found))})"
        )
    else:
        opening = (
            f"the sample has no target {who} reads ({', '.join(map(repr, sorted(GEOMETRIC)))}), "
            f"but {', '.join(map(repr, paths))} look like boxes, masks, polygons or keypoints"
        )
    raise ValueError(
        f"{opening}: a geometric transform would move its pixels and leave them where they "
        f"were. Read them with {suggest_adapter(mapping, paths, image)}; the sample has keys "
        f"{sorted(map(str, mapping))}"
    )


def refuse_object_list(target: object, who: str) -> None:
    """Refuse a pair whose target is a list of per-object dicts with boxes, masks...

    torchvision's ``CocoDetection`` gives ``(image, [annotation dicts])``; no adapter
    reads that layout, and a geometric transform would leave the annotations unmoved.

    Args:
        target: The pair's target.
        who: What reads it, for the message.

    Raises:
        ValueError: If ``target`` is such a list.

    >>> refuse_object_list([3, 4], "the default adapter")
    >>> refuse_object_list([{"bbox": [0, 0, 2, 2], "category_id": 1}], "it")
    Traceback (most recent call last):
    ...
    ValueError: the sample's target is a list of per-object dicts with 'bbox' ...
    """
    if not isinstance(target, list | tuple) or not target or not isinstance(target[0], Mapping):
        return
    paths = unread_fields(target[0])
    if not paths:
        return
    raise ValueError(
        f"the sample's target is a list of per-object dicts with {', '.join(map(repr, paths))} "
        f"(COCO's annotations, as torchvision's CocoDetection gives them), which {who} does "
        "not read: a geometric transform would move the image and leave them where they "
        "were. Give the dataset dict targets ({'boxes': ..., 'labels': ...}; "
        "torchvision.datasets.wrap_dataset_for_transforms_v2 does it for CocoDetection)"
    )


_IMAGE_LEVEL: Final = frozenset(
    {
        "image_id", "id", "img_id", "orig_size", "size", "image_size", "shape",
        "ori_shape", "resized_shape", "height", "width", "hw", "path", "file_name",
        "filename", "im_file",
    }
)  # fmt: skip
"""Keys of image-level metadata (torchvision's, DETR's, ultralytics'): never per box."""


def per_box_fields(values: Mapping[str, Any], count: int, skip: Collection[str] = ()) -> list[str]:
    """The keys of ``values`` that look like one entry per box (``count`` entries).

    Arrays and tensors by their first dimension, lists and tuples by their length;
    strings, scalars, the keys in ``skip`` and image-level metadata (``orig_size``,
    ``image_id``...) are not.

    >>> per_box_fields({"iscrowd": [0, 1], "orig_size": [480, 640], "image_id": 7}, 2)
    ['iscrowd']
    """
    found = []
    for key, value in values.items():
        if key in skip or key in _IMAGE_LEVEL or isinstance(value, str | bytes):
            continue
        shape = getattr(value, "shape", None)
        if shape is not None:
            entries = shape[0] if len(shape) >= 1 else None
        elif isinstance(value, list | tuple):
            entries = len(value)
        else:
            continue
        if entries == count:
            found.append(key)
    return found
