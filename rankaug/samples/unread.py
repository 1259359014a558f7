"""Targets rankaug would not read: refused before a geometric transform leaves them stale.

A dict sample whose boxes, masks, polygons or keypoints sit under keys rankaug does not
read (Hugging Face's ``objects``, COCO's ``annotations``, ultralytics' ``img``/``cls``...)
would come out of a geometric transform with moved pixels and unmoved targets. So an
adapter whose consumer moves boxes (``"bboxes"`` among its targets) and that finds keys
it does not read calls :func:`refuse_unread`, whether or not it found targets it knows,
which looks (cheaply, a few levels deep) for fields of such names holding more than a
scalar, and for top-level fields of any name that cover the image (a mask: ``seg``,
``depth``...), and refuses the sample with the keys it saw and the ``adapter=`` line
that would read them. An ``(image, target)`` pair's target that looks spatial but is no
mask of the image is refused by :func:`rankaug.samples.pair_mask.refuse_pair_target`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from rankaug.samples.mask_like import covers, shape_of
from rankaug.samples.suggest import lookup, suggest_adapter

__all__ = [
    "BY_CHANCE",
    "GEOMETRIC",
    "known",
    "covers",
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
        "boxes", "box", "bbox", "bboxes", "bndbox", "cls", "gt_boxes", "gt_bboxes", "obb",
        "segmentation", "segmentations", "segments", "polygons", "polygon",
        "polys", "poly", "contours", "contour", "quads", "quad", "rboxes", "rbox",
        "keypoints", "keypoint", "landmarks", "landmark", "kpts", "joints", "points", "pts",
        "corners", "masks", "mask", "instance_masks", "semantic", "sem_seg", "depth",
        "heatmap", "heatmaps", "gt_masks", "gt_keypoints", "gt_polygons", "gt_seg_map",
        "gt_semantic_seg",
    }
)  # fmt: skip
"""Names of targets, also as the last part of a dotted key (``Dataset.flatten()``'s
``objects.bbox``); LabelMe's ``shapes`` are per-object dicts with ``points``."""
_TABLES: Final = frozenset({"targets"})
"""Names that hold targets as a table (YOLOv5's ``(N, 6)`` rows), or a class vector."""
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


def unread_fields(
    mapping: Mapping[Any, Any], skip: Collection[str] = (), hw: tuple[int, int] | None = None
) -> list[str]:
    """The dotted paths of fields in ``mapping`` that look like targets (boxes, masks...).

    By name (nested or not), and, given the image's ``hw``, by shape: a top-level array,
    tensor or PIL image (or a list of them) of the image's height and width (``HxW``,
    ``HxWxC``, ``CxHxW``, ``NxHxW``) under any name is a mask (:func:`covers`).

    Args:
        mapping: A dict sample (or a pair's dict target).
        skip: Top-level keys that are read already.
        hw: The image's height and width, or ``None`` (no look at shapes).

    Returns:
        The paths, in the mapping's order (``"objects.bbox"``, ``"annotations"``...).

    >>> unread_fields({"image": 0, "objects": {"bbox": [[0, 0, 1, 1]], "id": [3]}, "id": 7})
    ['objects.bbox']
    >>> import numpy as np
    >>> unread_fields({"image": 0, "seg": np.zeros((4, 6)), "size": (4, 6)}, {"image"}, (4, 6))
    ['seg']
    """
    found: list[str] = []
    _walk(mapping, "", frozenset(skip), found, _DEPTH, hw)
    return found


def _walk(mapping: Mapping[Any, Any], prefix: str, skip: frozenset[str], found: list[str],
          depth: int, hw: tuple[int, int] | None = None) -> None:  # fmt: skip
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
        elif _target_like(key, value, None if prefix else hw) or _holds_objects(value, depth):
            found.append(path)


def _holds_objects(value: object, depth: int) -> bool:
    """Whether ``value`` is a list of per-object dicts with targets (VOC's ``object``).

    Judged by its first dict, as :func:`refuse_object_list` judges a pair's target.
    """
    if depth <= 1 or not isinstance(value, list | tuple) or not value:
        return False
    first = value[0]
    if not isinstance(first, Mapping):
        return False
    inner: list[str] = []
    _walk(first, "", frozenset(), inner, depth - 1)
    return bool(inner)


def _target_like(key: Any, value: object, hw: tuple[int, int] | None) -> bool:
    """Whether a field looks like a target: by its name, or (given ``hw``) its shape."""
    if key in _NAMES or (isinstance(key, str) and key.rpartition(".")[2] in _NAMES):
        return not _scalar(value)
    if key in _TABLES:
        return len(getattr(value, "shape", ())) >= 2
    return hw is not None and key not in _IMAGE_LEVEL and covers(value, hw)


def refuse_unread(
    mapping: Mapping[Any, Any],
    skip: Collection[str],
    who: str,
    read: Collection[str] = (),
    image: str | None = None,
    hw: tuple[int, int] | None = None,
    kept: Mapping[str, str] | None = None,
) -> None:
    """Refuse a sample whose targets rankaug would not read (see the module docstring).

    Args:
        mapping: The dict sample (or a pair's dict target).
        skip: The keys already read.
        who: What reads it, for the message (``"the default adapter"``).
        read: The targets it did read (rankaug's names), for the message.
        image: The image's key or path, when the reader knows it (for the suggestion).
        hw: The image's height and width, or ``None``: fields of any name that cover
            it are masks (:func:`unread_fields`).
        kept: The targets read, ``{rankaug's name: key or path}``, for the suggestion;
            ``None``: those of ``read`` that ``mapping`` has under their own names.

    Raises:
        ValueError: If ``mapping`` has fields that look like targets.

    >>> refuse_unread({"image": 0, "label": 3}, {"image"}, "the default adapter")
    >>> refuse_unread({"image": 0, "annotations": [{"bbox": [0, 0, 2, 2]}]}, {"image"}, "it")
    Traceback (most recent call last):
    ...
    ValueError: the sample has no target it reads ('bboxes', 'keypoints', 'mask', ...
    """
    paths = unread_fields(mapping, skip, hw)
    if not paths:
        return
    if kept is None:
        kept = {name: name for name in read if name != "image" and name in mapping}
    named = unread_fields(mapping, skip) if hw is not None else paths
    shaped = [path for path in paths if path not in named]  # found by their shape
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
    also = ""
    if shaped:  # and an albumentations Compose reads extra targets by name (every adapter)
        opening += (
            f" ({', '.join(map(repr, shaped))} of the image's height and width {hw}: a mask, "
            "by its shape)"
        )
        shape = shape_of(lookup(mapping, first := shaped[0])) or ()
        also = f"{{{first!r}: 'mask'}}"
        if len(shape) == 3 and min(shape[0], shape[-1]) in (3, 4):  # an image's channels
            also = f"{{{first!r}: 'image'}} for an image beside the image, {also} for a mask"
        also = f" (or, with RandomAugmentWrapper, A.Compose(..., additional_targets={also}))"
    line = suggest_adapter(mapping, paths, image, hw, kept)
    if "KeyMap(" in line and not any(f"{p!r}" in line or f"'{p}." in line for p in paths):
        line = "rankaug.adapters.KeyMap naming each (bboxes=, mask=, masks=, keypoints= or "
        line += f"segments=){also}"
        also = " where it is one (heatmaps, masks of another size: make them after the wrapper)"
    raise ValueError(
        f"{opening}: a geometric transform would move its pixels and leave them where they "
        f"were. Read them with {line}{also}, or drop them; the sample has keys "
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


#: How a value of the image that :func:`per_box_fields` takes for a per-box one passes.
BY_CHANCE: Final = (
    "a value of the image that has as many entries by chance (a 3-value mean) is not taken "
    "for one inside a dict: {'norm': {'mean': ...}}"
)


def per_box_fields(values: Mapping[str, Any], count: int, skip: Collection[str] = ()) -> list[str]:
    """The keys of ``values`` that look like one entry per box (``count`` entries).

    Arrays and tensors by their first dimension, lists and tuples by their length;
    strings, scalars, dicts (:data:`BY_CHANCE`), the keys in ``skip`` and image-level
    metadata (``orig_size``, ``image_id``...) are not.

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
