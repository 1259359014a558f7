"""A recording wrapper's settings, in each record, so that a replay can check them.

A record holds the Generator state a sample's draws started from, so the replay draws the
same numbers; what it makes of them depends on the wrapper's settings (its output size,
grid, affine, ``p``, partners, ``alpha``...) and on the dataset it reads. Each record
carries them as one text, :func:`settings_text`: one ``name=value`` line per setting.
:func:`check_settings` compares a record's text with the replaying wrapper's and refuses
a difference, naming each setting that differs. ``seed``, ``keying``, ``rank`` and
``stream`` are left out: the recorded state replaces the key, so they change nothing a
replay draws.
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

__all__ = ["SETTINGS", "check_settings", "dataset_text", "settings_text", "shown"]

SETTINGS: Final = "settings"
"""The record's key for the settings text."""
_ADDRESS: Final = re.compile(r" at 0x[0-9A-Fa-f]+")


def shown(value: object) -> str:
    """A setting as text that is the same in every process (no memory address).

    Strings show as they are, functions their module and qualified name, arrays their
    shape, dtype and a digest of their bytes, anything else its ``repr`` without its
    ``at 0x...`` addresses.

    >>> shown((640, 640)), shown(np.arange(3))
    ('(640, 640)', 'array(shape=(3,), dtype=int64, sha256=ab25350e...)')
    """
    if isinstance(value, str):
        return value.replace("\n", " ")
    if isinstance(value, types.FunctionType | types.BuiltinFunctionType | types.MethodType):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()[:8]
        return f"array(shape={value.shape}, dtype={value.dtype}, sha256={digest}...)"
    return _ADDRESS.sub("", repr(value)).replace("\n", " ")


def dataset_text(dataset: Any) -> str:
    """The dataset a wrapper reads: its class and length (and a keyed wrapper's seed, keying).

    >>> dataset_text([1, 2, 3])
    'list of 3'
    """
    text = f"{type(dataset).__name__} of {len(dataset)}"
    seed, keying = getattr(dataset, "seed", None), getattr(dataset, "keying", None)
    if isinstance(seed, int) and isinstance(keying, str):  # a rankaug wrapper inside
        text += f", seed={seed}, keying={keying!r}"
    return text


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

    A record without settings (made before records held them) is replayed with a
    :class:`~rankaug.RankaugWarning` that it cannot be checked.

    Args:
        record: The record.
        given: The replaying wrapper's :func:`settings_text`.
        kind: The wrapper, for messages (``"MosaicDataset"``).

    Raises:
        TypeError: If the record's settings are not a string.
        ValueError: If they differ; the message names every setting that differs, with
            the record's value and the given one.

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
    differ = [
        f"{key} is {theirs.get(key, '(absent)')} in the record, {ours.get(key, '(absent)')} given"
        for key in {**theirs, **ours}
        if theirs.get(key) != ours.get(key)
    ]
    raise ValueError(
        f"{name} differs from this {kind}'s: {'; '.join(differ)}; the replay would draw "
        f"something else: build the {kind} as the record's was built"
    )
