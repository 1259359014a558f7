"""Dotted key paths into nested dict samples: how :class:`~rankaug.KeyMap` finds and writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["beside", "describe_keys", "is_object_list", "put"]


def is_object_list(value: object, key: str) -> bool:
    """Whether ``value`` is a list of per-object dicts (holding ``key``), or an empty list.

    >>> is_object_list([{"bbox": [0, 0, 1, 1]}], "bbox"), is_object_list({"bbox": []}, "bbox")
    (True, False)
    """
    if not isinstance(value, list | tuple):
        return False
    return not value or (isinstance(value[0], Mapping) and key in value[0])


def beside(
    sample: Mapping[str, Any], parts: tuple[str, ...], skip: frozenset[str]
) -> dict[str, Any]:
    """The values in the dict that holds ``parts`` (nested), by path, but the paths in ``skip``.

    >>> beside({"pose": {"pts": [[1, 2]], "vis": [2]}}, ("pose", "pts"), frozenset({"pose.pts"}))
    {'pose.vis': [2]}
    >>> beside({"pts": [[1, 2]], "vis": [2]}, ("pts",), frozenset())  # at the top: none
    {}
    """
    holder: Any = sample
    for part in parts[:-1]:
        holder = holder.get(part) if isinstance(holder, Mapping) else None
    if len(parts) < 2 or not isinstance(holder, Mapping):
        return {}
    where = ".".join(parts[:-1])
    return {f"{where}.{k}": v for k, v in holder.items() if f"{where}.{k}" not in skip}


def describe_keys(sample: Mapping[str, Any]) -> str:
    """A sample's keys for a message, each nested dict's keys after its own.

    >>> describe_keys({"objects": {"bbox": [], "category": []}, "image": None})
    '[image, objects (bbox, category)]'
    """
    parts = []
    for key, value in sample.items():
        if isinstance(value, Mapping):
            parts.append(f"{key!s} ({', '.join(map(str, value))})")
        else:
            parts.append(str(key))
    return "[" + ", ".join(sorted(parts)) + "]"


def put(copied: dict[tuple[str, ...], dict[str, Any]], parts: tuple[str, ...], value: Any) -> None:
    """Write ``value`` at ``parts`` under ``copied[()]``, copying each dict on the way once.

    ``copied`` holds the output (under ``()``) and the nested dicts already copied into
    it, by their path: the sample's own dicts are never changed.

    >>> objects = {"bbox": [[0, 0, 1, 1]], "id": [7]}
    >>> copied = {(): {"objects": objects}}
    >>> put(copied, ("objects", "bbox"), [])
    >>> copied[()], objects["bbox"]
    ({'objects': {'bbox': [], 'id': [7]}}, [[0, 0, 1, 1]])
    """
    node = copied[()]
    for depth in range(1, len(parts)):
        prefix = parts[:depth]
        child = copied.get(prefix)
        if child is None:
            child = copied[prefix] = dict(node[parts[depth - 1]])
            node[parts[depth - 1]] = child
        node = child
    node[parts[-1]] = value
