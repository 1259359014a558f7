"""A recording wrapper's settings, in each record, so that a replay can check them.

A record holds the Generator state a sample's draws started from, so the replay draws the
same numbers; what it makes of them depends on the wrapper's settings (its output size,
grid, affine, ``p``, partners, ``alpha``...) and on the dataset it reads. Each record
carries them as one text, :func:`settings_text`: one ``name=value`` line per setting,
each the value as checked (``output_size=64`` and ``(64, 64)`` read the same).
:func:`check_settings` compares a record's text with the replaying wrapper's and refuses
a difference, naming each setting that differs. ``seed``, ``keying``, ``rank`` and
``stream`` are left out: the recorded state replaces the key, so they change nothing a
replay draws.

**The dataset** (:func:`dataset_settings`) is known by its length, which a replay needs
(the partners are drawn among its indices), and its class, which proves nothing: a
``Subset`` or a dataset made again serves the same samples under another class or
object. So a record of another length is refused, one of another class replayed with a
:class:`~rankaug.RankaugWarning`. A :class:`~rankaug.CachedDataset` is looked through
(it serves its dataset's samples); a rankaug wrapper inside adds its ``seed`` and
``keying``, refused when they differ (it would serve other samples).

**What a setting shows** (:func:`shown`): functions (a ``p`` schedule) by their module and
name, a bound method also by its object, and an object without a ``repr`` of its own
by its class and its attributes when they are plain data (numbers, strings, arrays...).
Otherwise only its class shows: two such objects, or two closures of one function, read
the same, and the check cannot tell them apart.
"""

from __future__ import annotations

import hashlib
import re
import types
import warnings
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from rankaug.errors import RankaugWarning

__all__ = [
    "DATASET_WARNED",
    "SETTINGS",
    "check_settings",
    "dataset_settings",
    "settings_text",
    "shown",
]

SETTINGS: Final = "settings"
"""The record's key for the settings text."""
DATASET_WARNED: Final = frozenset({"dataset"})
"""The settings that differ with a warning, not an error (the dataset's class)."""
_ADDRESS: Final = re.compile(r" at 0x[0-9A-Fa-f]+")
_PLAIN: Final = (str, bytes, int, float, complex, bool, type(None), np.generic, np.ndarray)


def shown(value: object) -> str:
    """A setting as text that is the same in every process (no memory address).

    Strings show as they are, functions their module and qualified name (a bound method
    also its object, shown so), arrays their shape, dtype and a digest of their bytes,
    an object without a ``repr`` of its own its class and its attributes when they are
    plain data (else its class alone), anything else its ``repr`` without its ``at
    0x...`` addresses.

    >>> shown((640, 640)), shown(np.arange(3))
    ('(640, 640)', 'array(shape=(3,), dtype=int64, sha256=ab25350e...)')
    >>> class Ramp:
    ...     def __init__(self, top):
    ...         self.top = top
    ...     def p(self, epoch):
    ...         return self.top
    >>> shown(Ramp(0.5).p)
    "rankaug._multi.settings.Ramp.p of <rankaug._multi.settings.Ramp object {'top': 0.5}>"
    """
    if isinstance(value, str):
        return value.replace("\n", " ")
    if isinstance(value, types.MethodType):
        function = value.__func__
        return f"{function.__module__}.{function.__qualname__} of {shown(value.__self__)}"
    if isinstance(value, types.FunctionType | types.BuiltinFunctionType):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()[:8]
        return f"array(shape={value.shape}, dtype={value.dtype}, sha256={digest}...)"
    text = _ADDRESS.sub("", repr(value)).replace("\n", " ")
    if type(value).__repr__ is object.__repr__:  # <module.Class object>: its data, if plain
        data = getattr(value, "__dict__", None)
        if isinstance(data, dict) and data and all(_plain(v) for v in data.values()):
            fields = ", ".join(f"{name!r}: {shown(v)}" for name, v in data.items())
            text = f"{text[:-1]} {{{fields}}}>"
    return text


def _plain(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is plain data: numbers, strings, arrays, and containers of them."""
    if isinstance(value, _PLAIN):
        return True
    if depth < 3 and isinstance(value, tuple | list):
        return all(_plain(v, depth + 1) for v in value)
    if depth < 3 and isinstance(value, dict):
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    return False


def dataset_settings(dataset: Any) -> dict[str, object]:
    """The settings of the dataset a wrapper reads (see the module docstring).

    ``dataset`` (its class; a :class:`~rankaug.CachedDataset` looked through),
    ``dataset_length``, and for a rankaug wrapper inside ``dataset_key``: its seed and
    keying.

    >>> dataset_settings([1, 2, 3])
    {'dataset': 'list', 'dataset_length': 3}
    """
    from rankaug.cache import CachedDataset  # (rankaug.cache reads rankaug's wrappers)

    length = len(dataset)
    while isinstance(dataset, CachedDataset):  # it serves its dataset's samples
        dataset = dataset.dataset
    settings: dict[str, object] = {"dataset": type(dataset).__name__, "dataset_length": length}
    seed, keying = getattr(dataset, "seed", None), getattr(dataset, "keying", None)
    if isinstance(seed, int) and isinstance(keying, str):  # a rankaug wrapper inside
        settings["dataset_key"] = f"seed={seed}, keying={keying!r}"
    return settings


def settings_text(settings: Mapping[str, object]) -> str:
    r"""The record's text of ``settings``: one ``name=value`` line each (:func:`shown`).

    >>> settings_text({"wrapper": "MixUpDataset", "alpha": 32.0})
    'wrapper=MixUpDataset\nalpha=32.0'
    """
    return "\n".join(f"{name}={shown(value)}" for name, value in settings.items())


def _lines(text: str) -> dict[str, str]:
    return dict(line.partition("=")[::2] for line in text.split("\n"))


def check_settings(record: Mapping[str, Any], given: str, kind: str) -> None:
    r"""Refuse a record made with other settings than ``given`` (the replaying wrapper's).

    A record without settings (made before records held them), or one whose settings
    differ only in the dataset's class (:data:`DATASET_WARNED`), is replayed with a
    :class:`~rankaug.RankaugWarning`.

    Args:
        record: The record.
        given: The replaying wrapper's :func:`settings_text`.
        kind: The wrapper, for messages (``"MosaicDataset"``).

    Raises:
        TypeError: If the record's settings are not a string.
        ValueError: If they differ (beyond the dataset's class); the message names every
            setting that differs, with the record's value and the given one.

    >>> check_settings({"settings": "a=1\nb=2"}, "a=1\nb=3", "Thing")
    Traceback (most recent call last):
    ...
    ValueError: record['settings'] differs from this Thing's: b is 2 in the record, 3 given; ...
    """
    recorded = record.get(SETTINGS)
    if recorded == given:
        return
    name = f"record[{SETTINGS!r}]"
    if recorded is None:
        warnings.warn(
            f"the record has no {SETTINGS!r} (it was made before records held them): the "
            f"replay cannot check that it was made with this {kind}'s settings, and replays "
            "something else if they differ",
            RankaugWarning,
            stacklevel=3,
        )
        return
    if not isinstance(recorded, str):
        raise TypeError(
            f"{name} must be the text of a {kind}'s settings, got {recorded!r:.80} of type "
            f"{type(recorded).__name__}"
        )
    theirs, ours = _lines(recorded), _lines(given)
    keys = [key for key in {**theirs, **ours} if theirs.get(key) != ours.get(key)]
    differ = [
        f"{key} is {theirs.get(key, '(absent)')} in the record, {ours.get(key, '(absent)')} given"
        for key in keys
    ]
    if DATASET_WARNED.issuperset(keys):
        warnings.warn(
            f"{name} differs from this {kind}'s in its dataset's class only: "
            f"{'; '.join(differ)}; a dataset of another class (a Subset, a dataset made "
            "again) may serve the same samples, so the replay goes on: it rebuilds the "
            "record's sample only if this dataset serves the same samples",
            RankaugWarning,
            stacklevel=3,
        )
        return
    raise ValueError(
        f"{name} differs from this {kind}'s: {'; '.join(differ)}; the replay would draw "
        f"something else: build the {kind} as the record's was built"
    )
