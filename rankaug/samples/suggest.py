"""The ``adapter=`` line that would read a sample whose targets rankaug does not read.

:func:`rankaug.samples.unread.refuse_unread` ends its message with it: a ``KeyMap`` of
the sample's image, the unread fields under the names rankaug reads them by, and the
targets already read, each path given once (a ``KeyMap`` refuses a path given twice).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from rankaug.samples.mask_like import covers, shape_of

__all__ = ["lookup", "role_of", "suggest_adapter"]


_ROLES: Final = {
    "bbox": "bboxes", "boxes": "bboxes", "box": "bboxes", "bboxes": "bboxes", "bndbox": "bboxes",
    "masks": "masks", "mask": "masks", "keypoints": "keypoints",
    "segmentation": "segments", "segments": "segments", "polygons": "segments",
    "cls": "labels", "gt_boxes": "bboxes", "gt_bboxes": "bboxes",
    "landmarks": "keypoints", "kpts": "keypoints", "joints": "keypoints",
    "instance_masks": "masks", "semantic": "mask", "depth": "mask",
}  # fmt: skip
_LABELS: Final = ("category", "category_id", "labels", "label", "class", "cls")


def role_of(name: str) -> str | None:
    """The name rankaug reads a field of ``name`` by (``bboxes=``, ``masks=``...), if known.

    >>> role_of("mask"), role_of("polygons"), role_of("points")
    ('masks', 'segments', None)
    """
    return _ROLES.get(name)


def lookup(mapping: Mapping[Any, Any], path: str) -> Any:
    """The value at a dotted ``path`` of nested mappings, or ``None``.

    >>> lookup({"a": {"b": 3}}, "a.b"), lookup({"a": 3}, "a.b")
    (3, None)
    """
    value: Any = mapping
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def suggest_adapter(
    mapping: Mapping[Any, Any],
    paths: Collection[str] = (),
    image: str | None = None,
    hw: tuple[int, int] | None = None,
    kept: Mapping[str, str] | None = None,
) -> str:
    """The ``adapter=`` line that would read a sample of ``mapping``'s layout.

    ``image``: the image's key or path when the caller knows it (a ``KeyMap``'s).
    A ``mask`` at the top level is a semantic mask; inside per-object data, an
    instance mask. Given the image's ``hw``, a field of another name that covers the
    image (:func:`covers`) is a semantic mask, or instance masks when it holds several
    ``HxW`` ones. ``kept``: the targets already read, ``{rankaug's name: key}``, kept
    in the line.

    >>> suggest_adapter({"image": 0, "boxes": [[0, 0, 1, 1]], "labels": [2], "mask": 0},
    ...                 ["boxes", "mask"])
    "adapter=rankaug.adapters.KeyMap(image='image', bboxes='boxes', labels='labels', mask='mask')"
    >>> suggest_adapter({"img": 0, "cls": [[0.0]], "bboxes": [[0.5, 0.5, 0.2, 0.2]]})
    'adapter=rankaug.adapters.Ultralytics()'
    >>> suggest_adapter({"image": 0, "objects": {"bbox": [], "category": []}})
    "adapter=rankaug.adapters.HuggingFace() (COCO x, y, w, h boxes: box_format='coco')"
    >>> suggest_adapter({"image": 0, "objects.bbox": [], "objects.category": []})  # flatten()
    "adapter=rankaug.adapters.HuggingFace() (COCO x, y, w, h boxes: box_format='coco')"
    """
    objects = mapping.get("objects")
    if (isinstance(objects, Mapping) and "bbox" in objects) or "objects.bbox" in mapping:
        return "adapter=rankaug.adapters.HuggingFace() (COCO x, y, w, h boxes: box_format='coco')"
    if "img" in mapping and "image" not in mapping:
        return "adapter=rankaug.adapters.Ultralytics()"
    parts = {"image": image or ("image" if "image" in mapping else "KEY")}
    notes: list[str] = []
    for path in paths:
        value = lookup(mapping, path)
        if isinstance(value, list | tuple) and value and isinstance(value[0], Mapping):
            # a list of per-object dicts (COCO's annotations): KeyMap reads per-object lists
            notes.append(f"{path!r} as per-object lists (a dict of lists, not a list of dicts)")
            keys = [k for k in value[0] if isinstance(k, str)]
            found = [(_ROLES[k], f"{path}.{k}") for k in keys if k in _ROLES]
            found += [("labels", f"{path}.{k}") for k in keys if k in _LABELS][:1]
            notes += [_corners(f"{path}.{k}", value[0][k]) for k in keys if k in _ROLES
                      and _ROLES[k] == "bboxes" and isinstance(value[0][k], Mapping)]  # fmt: skip
        else:
            leaf = path.rsplit(".", 1)[-1]
            role = "mask" if path == "mask" else _ROLES.get(leaf)  # top level: semantic
            if role is None and hw is not None and "." not in path and covers(value, hw):
                role = _mask_role(value, hw)
            found = [] if role is None else [(role, path)]
            if role == "bboxes" and isinstance(value, Mapping):  # VOC's {xmin: ...}: no rows
                notes.append(_corners(path, value))
            parent = lookup(mapping, path.rpartition(".")[0]) if "." in path else mapping
            if role == "bboxes" and isinstance(parent, Mapping):
                prefix = path.rpartition(".")[0] + "." if "." in path else ""
                found += [("labels", f"{prefix}{k}") for k in parent if k in _LABELS][:1]
        for name, where in found:
            parts.setdefault(name, where)
    for name, where in (kept or {}).items():
        if name in parts:
            continue  # (a kept bboxes= beside unread boxes: the unread ones are read)
        # a field read already, under its own name (label_fields=("label",)), keeps it:
        # a guess (labels=) that took its path goes, as a KeyMap gives a path one name
        parts = {n: w for n, w in parts.items() if w != where or n == "image"}
        parts[name] = where
    given: dict[str, str] = {}
    for name, where in parts.items():  # each path once: KeyMap refuses one given twice
        if where not in given.values():
            given[name] = where
    text = ", ".join(f"{name}={where!r}" for name, where in given.items())
    note = f"the dataset giving {' and '.join(notes)}, then " if notes else ""
    return f"{note}adapter=rankaug.adapters.KeyMap({text})"


def _corners(path: str, value: Mapping[Any, Any]) -> str:
    """The note that a box given as a dict of corners (VOC's ``bndbox``) must be rows."""
    keys = ", ".join(repr(k) for k in value)
    return f"{path!r} as [x_min, y_min, x_max, y_max] rows (not dicts of {keys})"


def _mask_role(value: Any, hw: tuple[int, int]) -> str:
    """``"masks"`` for several ``HxW`` masks (a list, or ``NxHxW``), else ``"mask"``."""
    if isinstance(value, list | tuple):
        return "masks"
    shape = shape_of(value) or ()
    several = len(shape) == 3 and shape[:2] != hw and shape[0] > 1
    return "masks" if several else "mask"
