"""Per-box and per-keypoint values that would go stale beside fewer or more of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from rankaug.samples.unread import BY_CHANCE, per_box_fields

__all__ = ["CARRY_NAMED", "refuse_changed", "refuse_stale", "refuse_stale_points"]

_CARRY: Final = (
    "add such values to the keypoints' label fields (KeypointParams(label_fields=[...])), "
    f"or drop them; {BY_CHANCE}"
)
#: How per-keypoint values are carried under a KeyMap: by a name of the map's.
CARRY_NAMED: Final = (
    "give each a name in the map, unless it has one (KeyMap(..., visible='path')), and add "
    "the names to the keypoints' label fields (KeypointParams(label_fields=[...])), or drop "
    f"them; {BY_CHANCE}"
)


def refuse_changed(data: Mapping[str, Any], source: object, originals: Mapping[str, Any]) -> None:
    """Refuse an output whose boxes or keypoints changed in number, leaving values behind.

    Args:
        data: The transform's output.
        source: The dict sample, or a pair's target (a dict, or not: no values checked).
        originals: The values handed out, by key (``bboxes`` and ``keypoints`` among them).

    Raises:
        ValueError: If a per-box value did not follow the boxes (:func:`refuse_stale`), or
            a per-keypoint value the keypoints (:func:`refuse_stale_points`).
    """
    boxes, points = originals.get("bboxes"), originals.get("keypoints")
    if boxes is not None and "bboxes" in data and len(data["bboxes"]) != len(boxes):
        refuse_stale(data, source, originals, len(boxes))
    if points is not None and "keypoints" in data and len(data["keypoints"]) != len(points):
        refuse_stale_points(data, source, originals, len(points))


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
    stale += _left_behind(source, originals, count)
    if stale:
        raise ValueError(
            f"the transform kept {kept} of {count} boxes, but {', '.join(map(repr, stale))} "
            "(one entry per box) did not go with them and would be stale: add such values "
            f"to the label fields (BboxParams(label_fields=[...])), or drop them; {BY_CHANCE}"
        )


def refuse_stale_points(
    data: Mapping[str, Any],
    source: object,
    originals: Mapping[str, Any],
    count: int,
    carry: str = _CARRY,
) -> None:
    """Refuse an output whose keypoints changed in number but whose per-keypoint values did not.

    A value of the sample with one entry per keypoint that the transform was not given
    (a visibility or joint id beside ``(K, 2)`` keypoints) would no longer match them.

    Args:
        data: The transform's output, with its ``keypoints``.
        source: The dict sample, or a pair's target (a dict, or not: no values checked).
        originals: The values handed out, by key.
        count: The number of keypoints handed out.
        carry: How to carry them, for the message (an adapter's own way).

    Raises:
        ValueError: If such a value did not follow the keypoints.

    >>> refuse_stale_points({"keypoints": [[1, 1]]}, {"joint": [0, 1]}, {}, 2)
    Traceback (most recent call last):
    ...
    ValueError: the transform kept 1 of 2 keypoints, but 'joint' (one entry per keypoint) ...
    """
    stale = _left_behind(source, originals, count)
    if stale:
        raise ValueError(
            f"the transform kept {len(data['keypoints'])} of {count} keypoints, but "
            f"{', '.join(map(repr, stale))} (one entry per keypoint) did not go with them "
            f"and would be stale: {carry}"
        )


def _left_behind(source: object, originals: Mapping[str, Any], count: int) -> list[str]:
    """The keys of a dict ``source`` not handed out that have ``count`` entries."""
    if not isinstance(source, Mapping):
        return []
    read = {"image", "boxes", "bboxes", *originals}
    return per_box_fields({k: v for k, v in source.items() if k not in read}, count)
