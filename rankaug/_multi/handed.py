"""Whether a sample's "class" is a target the adapter hands out (per-box classes).

A wrapper that reads a classification class under a key (``"label"``) must not take
per-box classes under that key for one: those the adapter hands out as a target, under
that name (``label_fields=("label",)``) or under another (``KeyMap(labels="label")``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import torch

__all__ = ["handed_out"]


def handed_out(
    label: Any, data: Mapping[str, Any], targets: Collection[str], key: str = "label"
) -> bool:
    """Whether the adapter hands ``label`` (read under ``key``) out as a target.

    Args:
        label: The value read as the sample's class.
        data: What the adapter hands out for the sample (a plain dict may be its own
            view, its class included: only the ``targets`` are looked at).
        targets: The target keys the adapter hands out.
        key: The class's key.

    Returns:
        ``True`` when ``key`` is one of the ``targets`` (``label_fields=("label",)``), or
        another target's value is ``label`` or shares its memory (``KeyMap(labels=
        "label")``); a number has no identity to tell.

    >>> labels = np.array([1, 2])
    >>> handed_out(labels, {"labels": labels}, {"labels"}), handed_out(3, {}, {"labels"})
    (True, False)
    >>> handed_out(labels, {"label": labels}, {"labels"})  # a class vector, kept as a class
    False
    """
    if key in targets:
        return True
    if not isinstance(label, list | tuple | np.ndarray | torch.Tensor):
        return False  # a number: no identity to tell
    raw = label.numpy(force=True) if isinstance(label, torch.Tensor) else label
    values = (data[name] for name in targets if name != key and name in data)
    return any(
        value is label or value is raw or (
            isinstance(value, np.ndarray) and isinstance(raw, np.ndarray)
            and np.may_share_memory(value, raw)
        )
        for value in values
    )  # fmt: skip
