"""What an albumentations pipeline reads and moves: its targets, box format, additions.

The :class:`~rankaug._albumentations.AlbumentationsDriver` reads them once, when it is
made, from the pipeline's processors, ``additional_targets`` and transforms.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from rankaug.samples import DEFAULT_TARGETS

__all__ = ["additional", "albumentations_targets", "bbox_params_format", "moves"]


def albumentations_targets(transform: Any) -> frozenset[str]:
    """The data keys an albumentations transform reads: images, masks, boxes, labels...

    Args:
        transform: An albumentations ``Compose`` or transform.

    Returns:
        The keys, including label fields and additional targets. ``labels``, which
        albumentations accepts beside any processor (``Compose._available_keys``) but
        moves only as a label field, is one only then (or as an additional target): a
        per-box ``labels`` the pipeline does not carry is a value it does not read, so a
        transform that drops boxes is refused rather than leaving it stale.
    """
    keys = set(DEFAULT_TARGETS)
    available = getattr(transform, "_available_keys", None)
    if isinstance(available, Collection):
        keys.update(str(k) for k in available)
    fields: set[str] = set()
    for processor in getattr(transform, "processors", {}).values():
        fields.update(getattr(getattr(processor, "params", None), "label_fields", None) or ())
    keys.update(fields)
    additional = getattr(transform, "additional_targets", None) or {}
    keys.update(additional)
    if "labels" not in fields and "labels" not in additional and not moves(transform, "labels"):
        keys.discard("labels")  # accepted, not moved: it would pass through unchanged
    return frozenset(keys)


def bbox_params_format(transform: Any) -> str | None:
    """The box format of an albumentations pipeline's ``A.BboxParams``, else ``None``.

    AlbumentationsX names it ``coord_format``.
    """
    processors = getattr(transform, "processors", None)
    if not isinstance(processors, dict):
        return None
    params = getattr(processors.get("bboxes"), "params", None)
    given = getattr(params, "format", None) or getattr(params, "coord_format", None)
    return given if isinstance(given, str) else None


def additional(transform: Any, kinds: Collection[str] = ("bboxes", "keypoints")) -> dict[str, str]:
    """The ``additional_targets`` of ``transform`` of these kinds (boxes, keypoints).

    A ``Compose`` has them as ``additional_targets``, a single transform given them by
    ``add_targets`` as ``_additional_targets`` only (albumentations 2.0.8).
    """
    targets = (
        getattr(transform, "additional_targets", None)
        or getattr(transform, "_additional_targets", None)
        or {}
    )
    return {str(key): kind for key, kind in targets.items() if kind in kinds}


def moves(transform: Any, key: str) -> bool:
    """Whether any transform in the tree acts on ``key`` (bboxes, keypoints)."""
    children = getattr(transform, "transforms", None)
    if children is not None:
        return any(moves(child, key) for child in children)
    return key in (getattr(transform, "targets", None) or {})
