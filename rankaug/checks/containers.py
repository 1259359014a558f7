"""Names, paths, choices, mappings, sequences, callables, random generators and datasets."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from rankaug.checks._messages import Said, type_error, value_error

__all__ = [
    "choice",
    "folder",
    "function",
    "generator",
    "instance",
    "key_name",
    "key_path",
    "map_dataset",
    "mapping",
    "names",
    "path",
    "sequence",
]

S = TypeVar("S", bound=str)
T = TypeVar("T")


def mapping(value: object, name: str, *, required: Collection[str], what: str) -> Mapping[str, Any]:
    """A mapping holding at least the ``required`` keys (``what`` names what it should be).

    >>> mapping({"epoch": 1}, "record", required=("epoch", "state"), what="a MosaicRecord")
    Traceback (most recent call last):
    ...
    ValueError: record must be a MosaicRecord with 'epoch', 'state', got one without 'state'
    """
    if not isinstance(value, Mapping):
        raise type_error(name, what, value, short=True)
    missing = [key for key in required if key not in value]
    if missing:
        keys = ", ".join(repr(key) for key in required)
        raise value_error(
            name, f"{what} with {keys}", Said("one without " + ", ".join(map(repr, missing)))
        )
    return value


def sequence(value: object, name: str, *, what: str = "a non-empty sequence") -> Sequence[Any]:
    """A non-empty sequence (not a string).

    >>> sequence([], "record['indices']")
    Traceback (most recent call last):
    ...
    ValueError: record['indices'] must be a non-empty sequence, got []
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise type_error(name, what, value, short=True)
    if len(value) == 0:
        raise value_error(name, what, value)
    return value  # type: ignore[return-value]


def choice(value: object, name: str, choices: Sequence[S]) -> S:
    """One of ``choices`` (strings).

    Raises:
        TypeError: If ``value`` is not a string.
        ValueError: If it is not one of the choices.

    >>> choice("fit", "scale_mode", ("keep", "fit", "fill"))
    'fit'
    >>> choice(3, "scale_mode", ("keep", "fit", "fill"))
    Traceback (most recent call last):
    ...
    TypeError: scale_mode must be one of 'keep', 'fit', 'fill', got 3 of type int
    """
    expected = "one of " + ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise type_error(name, expected, value)
    for candidate in choices:
        if value == candidate:
            return candidate
    raise value_error(name, expected, value)


def names(value: object, name: str, *, forbidden: Collection[str] = ()) -> tuple[str, ...]:
    """A sequence of distinct key names (not a single string), none of them ``forbidden``.

    >>> names(["labels", "iscrowd"], "label_fields")
    ('labels', 'iscrowd')
    >>> names("labels", "label_fields")
    Traceback (most recent call last):
    ...
    TypeError: label_fields must be a sequence of key names, got 'labels' of type str
    """
    expected = "a sequence of key names"
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise type_error(name, expected, value)
    out = tuple(value)
    for item in out:
        if not isinstance(item, str):
            raise type_error(f"every entry of {name}", "a key name (str)", item)
        if not item:  # no sample has a field of that name to carry
            raise value_error(f"every entry of {name}", "a non-empty key name", item)
        if item in forbidden:
            raise value_error(
                f"every entry of {name}", f"a key that is not one of {sorted(forbidden)}", item
            )
    if len(set(out)) != len(out):
        raise value_error(name, "a sequence of distinct key names", value)
    return out


def key_name(
    value: object, name: str, *, forbidden: Collection[str], optional: bool = True
) -> str | None:
    """A key name (or ``None`` when ``optional``) that does not collide with ``forbidden`` keys.

    >>> key_name("mosaic", "record", forbidden={"image", "bboxes"}) + "!"
    'mosaic!'
    >>> key_name("image", "record", forbidden={"image", "bboxes"})
    Traceback (most recent call last):
    ...
    ValueError: record must be None or a key name other than 'bboxes', 'image', got 'image'
    """
    expected = "a key name other than " + ", ".join(repr(k) for k in sorted(forbidden))
    if optional:
        expected = "None or " + expected
        if value is None:
            return None
    if not isinstance(value, str):
        raise type_error(name, expected, value)
    if value in forbidden or not value:
        raise value_error(name, expected, value)
    return value


def key_path(value: object, name: str) -> str:
    """A key, or a dotted path into nested dicts (``"objects.bbox"``): no part empty.

    >>> key_path("objects", "objects")
    'objects'
    >>> key_path(None, "objects")
    Traceback (most recent call last):
    ...
    TypeError: objects must be a key or a dotted path (a non-empty str), got None of type NoneType
    >>> key_path("a.", "objects")
    Traceback (most recent call last):
    ...
    ValueError: objects must be a key or a dotted path (a non-empty str), got 'a.'
    """
    expected = "a key or a dotted path (a non-empty str)"
    if not isinstance(value, str):
        raise type_error(name, expected, value, short=True)
    if not all(value.split(".")):
        raise value_error(name, expected, value)
    return value


def path(value: object, name: str) -> str | os.PathLike[str]:
    """A file system path: a ``str`` or an ``os.PathLike`` of one (``pathlib.Path``).

    >>> path("images", "image_dir")
    'images'
    >>> path(None, "image_dir")
    Traceback (most recent call last):
    ...
    TypeError: image_dir must be a path (str or os.PathLike), got None of type NoneType
    """
    if isinstance(value, str) or (
        isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)
    ):
        return value
    raise type_error(name, "a path (str or os.PathLike)", value, short=True)


def folder(value: object, name: str) -> Path:
    """An existing folder, as a path (:func:`path`), resolved: absolute, links followed.

    Raises:
        TypeError: If ``value`` is not a path.
        FileNotFoundError: If it names no folder.
    """
    given = path(value, name)
    resolved = Path(given).resolve()
    if not resolved.is_dir():
        raise FileNotFoundError(
            f"{name} must be an existing folder, got {os.fspath(given)!r} (resolved: {resolved})"
        )
    return resolved


def function(value: object, name: str, expected: str) -> Callable[..., Any]:
    """A callable (``expected`` says what kind, for the message).

    >>> function(len, "p", "a number or a function of the epoch") is len
    True
    """
    if not callable(value):
        raise type_error(name, expected, value)
    return value


def generator(value: object, name: str) -> np.random.Generator | np.random.RandomState:
    """A numpy random generator of the caller's own: a ``Generator`` (or a ``RandomState``).

    >>> generator(None, "rng")
    Traceback (most recent call last):
    ...
    TypeError: rng must be a numpy Generator (np.random.default_rng(seed)), got None ...
    """
    if isinstance(value, np.random.Generator | np.random.RandomState):
        return value
    raise type_error(name, "a numpy Generator (np.random.default_rng(seed))", value, short=True)


def instance(
    value: object, name: str, kind: type[T], *, what: str, optional: bool = True
) -> T | None:
    """An instance of ``kind`` (or ``None`` when ``optional``); ``what`` names it in messages.

    >>> instance(3, "affine", dict, what="a rankaug.MosaicAffine")
    Traceback (most recent call last):
    ...
    TypeError: affine must be None or a rankaug.MosaicAffine, got 3 of type int
    """
    if (value is None and optional) or isinstance(value, kind):
        return value
    raise type_error(name, f"None or {what}" if optional else what, value, short=True)


def map_dataset(value: object, name: str = "dataset") -> Any:
    """A map-style dataset: ``__getitem__`` and ``__len__`` (a string is not one).

    >>> map_dataset("abc")
    Traceback (most recent call last):
    ...
    TypeError: dataset must be a map-style dataset with __getitem__ and __len__, got 'abc' ...
    """
    if isinstance(value, str | bytes) or not (
        hasattr(value, "__getitem__") and hasattr(value, "__len__")
    ):
        raise type_error(name, "a map-style dataset with __getitem__ and __len__", value)
    return value
