"""Per-box values that would go stale when a transform keeps another number of boxes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rankaug.samples.unread import per_box_fields

__all__ = ["refuse_stale"]


def refuse_stale(
    data: Mapping[str, Any], source: object, originals: Mapping[str, Any], count: int
) -> None:
    """Refuse an output whose boxes changed in number but whose per-box values did not.

    Instance masks the transform did not drop with their boxes (albumentations keeps
    every mask), and values of the sample with one entry per box that the transform was
    not given (torchvision's ``iscrowd``, ``area``), would no longer match the boxes.

    Args:
        data: The transform's output, with its ``bboxes``.
        source: The dict sample, or a pair's target (a dict, or not: no values checked).
        originals: The values handed out, by key.
        count: The number of boxes handed out.

    Raises:
        ValueError: If such a value did not follow the boxes.

    >>> refuse_stale({"bboxes": [[0, 0, 1, 1]]}, {"area": [1.0, 2.0]}, {}, 2)
    Traceback (most recent call last):
    ...
    ValueError: the transform kept 1 of 2 boxes, but 'area' (one entry per box) did not ...
    """
    kept = len(data["bboxes"])
    masks = data.get("masks")
    stale = ["masks"] if masks is not None and len(masks) == count != kept else []
    if isinstance(source, Mapping):
        read = {"image", "boxes", "bboxes", *originals}
        others = {k: v for k, v in source.items() if k not in read}
        stale += per_box_fields(others, count)
    if stale:
        raise ValueError(
            f"the transform kept {kept} of {count} boxes, but {', '.join(map(repr, stale))} "
            "(one entry per box) did not go with them and would be stale: add such values "
            "to the label fields (BboxParams(label_fields=[...])), or drop them"
        )
