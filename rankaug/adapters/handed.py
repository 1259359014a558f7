"""What a :class:`~rankaug.KeyMap` hands out of a sample, and what it takes back.

``unpack`` records what it read (:class:`Handed`); ``repack`` refuses the per-box and
per-keypoint values that a changed count would leave stale (:func:`refuse_stale`) and
gives each value it takes back the type it was read in (:func:`restored_values`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from rankaug.adapters.paths import beside
from rankaug.samples.images import image_from_numpy, image_hw, image_kind
from rankaug.samples.pair_mask import channels_first
from rankaug.samples.stale import CARRY_NAMED, refuse_stale_points
from rankaug.samples.unread import BY_CHANCE, per_box_fields
from rankaug.samples.whole import restore_whole

__all__ = ["Handed", "refuse_stale", "restored_values"]


class Handed(NamedTuple):
    """What ``unpack`` read of a sample, for ``repack``."""

    sample: Mapping[str, Any]  # the original sample
    originals: dict[str, Any]  # the original values of the names handed out
    image_kind: str
    pil_mode: str | None
    boxes: int | None  # the number of boxes handed out (None: no boxes handed out)
    unhanded: dict[str, Any]  # per-object values not handed out: stale if the count changes
    wrapped: bool  # torchvision's tv_tensors among the values: wrapped again
    first: tuple[str, ...] = ()  # masks that were CxHxW (beside a tensor image): so again


def refuse_stale(
    data: Mapping[str, Any],
    state: Handed,
    left_over: Callable[[Handed], dict[str, Any]],
    keypoints: tuple[str, ...],
    read: frozenset[str],
) -> None:
    """Refuse a per-box (per-keypoint) value the boxes (keypoints) dropped or added left.

    Args:
        data: The transform's results.
        state: What was handed out.
        left_over: The sample's top-level values the map does not read, of ``state``.
        keypoints: The keypoints' path.
        read: The sample keys the map reads.

    Raises:
        ValueError: If such a value was not carried along (it would be stale): the
            map's own, one beside nested keypoints, or a top-level one the default
            adapter finds.
    """
    changed = "bboxes" in data and len(data["bboxes"]) != state.boxes
    if state.boxes is not None and changed:
        stale = (*state.unhanded, *per_box_fields(left_over(state), state.boxes))
        if stale:
            raise ValueError(
                f"the transform kept {len(data['bboxes'])} of {state.boxes} boxes, but "
                f"{', '.join(map(repr, stale))} (one entry per box) did not go "
                "with them and would be stale: add them to the label fields (the "
                f"wrapper's label_fields, or BboxParams(label_fields=[...])); {BY_CHANCE}"
            )
    points = state.originals.get("keypoints")
    if points is not None and len(data.get("keypoints", points)) != len(points):
        left = {k: v for k, v in state.unhanded.items() if k not in ("masks", "segments")}
        left |= beside(state.sample, keypoints, read)
        left |= left_over(state)
        refuse_stale_points(data, left, state.originals, len(points), CARRY_NAMED)


def restored_values(
    data: Mapping[str, Any],
    state: Handed,
    additional: Mapping[str, str],
    box_format: str | None,
    keys: Mapping[str, str],
) -> dict[str, Any]:
    """The values of ``data`` in the types (and layouts) they were read in.

    Args:
        data: The transform's results.
        state: What was handed out.
        additional: The transform's additional targets, ``{name: "image" or "mask"}``.
        box_format: The wrapper's box format.
        keys: The map's paths by name.
    """
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "image":
            value = image_from_numpy(value, state.image_kind, state.pil_mode)
        elif name in state.originals:
            old = state.originals[name]
            if state.first and name in state.first:  # channels first again
                value = channels_first(value, image_hw(data["image"]))
            if type(old) is not np.ndarray and additional.get(name) == "image":
                value = image_from_numpy(value, *image_kind(old))  # its layout back
            else:  # integer boxes and keypoints whole, every draw
                value = restore_whole(name, value, old, data, box_format, keys.get(name, name))
        values[name] = value
    return values
