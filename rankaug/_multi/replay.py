"""Records and replay, shared by every keyed wrapper that records what it applied.

A recording wrapper (``MosaicDataset``, and the multi-sample wrappers built like it)
stores in each output the Generator state it started from, as :func:`generator_text`,
beside the indices it used (main first) and the epoch. :func:`read_replay` checks such a record
given back by a user and rebuilds what a replay needs: the main index, the epoch and
the Generator in the recorded state. Drawing the same plan from that Generator and
applying it rebuilds the sample bit for bit.

**Checked against the record.** A record replays the sample it was made for: an
``index`` other than its main index is refused. What the replay draws again is compared
with the record (:func:`check_replayed`), and a field that differs (a partner's index,
a rectangle, ``applied``...) is refused, naming it: the record was changed, or the
wrapper reads other samples than the one that made it.

**The rank.** A ``keying="sample_rank"`` wrapper inside keys its samples with the rank,
so the record of a wrapper with one inside (:func:`ranked`) holds ``rank``, and the
replay pins it for every wrapper it loads from (:func:`replay_rank`,
:class:`~rankaug.context.pinning_rank`), whatever this process's rank. A
``keying="stream"`` wrapper inside continues its worker's stream: no replay loads the
samples the record was made from, and :func:`replay_rank` warns.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

import numpy as np

from rankaug import checks
from rankaug.errors import RankaugWarning
from rankaug.keyed import KeyedDataset

__all__ = [
    "Replay",
    "check_replayed",
    "generator_at",
    "generator_text",
    "ranked",
    "read_replay",
    "replay_rank",
    "state_text",
]

_UNDRAWN: Final = frozenset({"state", "settings"})  # the replay's input, not its draws


class Replay(NamedTuple):
    """What a replay needs of a record: the main index, the epoch, the Generator, the rank.

    ``rank`` is ``None`` for a record without one (no ``"sample_rank"`` wrapper inside).
    """

    main: int
    epoch: int
    generator: np.random.Generator
    rank: int | None = None


def state_text(state: Mapping[str, int], uinteger: int | None = None) -> str:
    """A PCG64 ``state`` dict (``state`` and ``inc``) as a record's ``"state:inc"`` text.

    Args:
        state: The PCG64 words, ``bit_generator.state["state"]``.
        uinteger: The buffered 32-bit half of the last 64-bit word, when the Generator
            holds one (``has_uint32``); it is appended as a third word.

    >>> state_text({"state": 255, "inc": 1})
    'ff:1'
    >>> state_text({"state": 255, "inc": 1}, 10)
    'ff:1:a'
    """
    text = f"{state['state']:x}:{state['inc']:x}"
    return text if uinteger is None else f"{text}:{uinteger:x}"


def generator_text(rng: np.random.Generator) -> str:
    """The whole state of a PCG64 Generator as a record's text (see :func:`state_text`).

    Draws of 32-bit integers (``rng.choice(..., replace=False)`` among them) leave half of
    a 64-bit word buffered; the text keeps it, so the Generator comes back exactly.

    >>> rng = np.random.Generator(np.random.PCG64(5))
    >>> _ = rng.integers(0, 10, dtype=np.uint32)  # leaves a 32-bit half buffered
    >>> again = generator_at(generator_text(rng))
    >>> bool(rng.integers(0, 2**32, 3, dtype=np.uint32).tolist()
    ...      == again.integers(0, 2**32, 3, dtype=np.uint32).tolist())
    True
    """
    full = rng.bit_generator.state
    words = full["state"]  # state_text's text, without its call: this runs every sample
    # printf-style, state_text's text: no format-spec parser (4k instructions a sample less)
    if full["has_uint32"]:
        return "%x:%x:%x" % (words["state"], words["inc"], full["uinteger"])  # noqa: UP031
    return "%x:%x" % (words["state"], words["inc"])  # noqa: UP031


def generator_at(text: object, name: str = "record['state']") -> np.random.Generator:
    """The PCG64 Generator in the state ``text`` (from :func:`state_text`) describes.

    Records written before the buffered half was kept (``"state:inc"``) read as before:
    a Generator with nothing buffered.

    Raises:
        TypeError: If ``text`` is not a string.
        ValueError: If it is not ``"state:inc"`` or ``"state:inc:uinteger"`` in
            hexadecimal PCG64 words.

    >>> rng = np.random.Generator(np.random.PCG64(5))
    >>> again = generator_at(state_text(rng.bit_generator.state["state"]))
    >>> bool(rng.random() == again.random())
    True
    """
    expected = "a 'state:inc' pair of hexadecimal PCG64 words (and an optional ':uinteger')"
    if not isinstance(text, str):
        raise TypeError(
            f"{name} must be {expected}, got {text!r:.80} of type {type(text).__name__}"
        )
    try:
        words = [int(part, 16) for part in text.split(":")]
        if len(words) not in (2, 3) or any(word < 0 for word in words):
            raise ValueError(text)
        uinteger = words[2] if len(words) == 3 else 0
        if uinteger >= 2**32:
            raise ValueError(text)
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": words[0], "inc": words[1]},
            "has_uint32": int(len(words) == 3),
            "uinteger": uinteger,
        }
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be {expected}, got {text!r:.80}") from None
    return np.random.Generator(bit_generator)


def read_replay(record: object, index: object, length: int, *, kind: str) -> Replay:
    """Check a record for replay and rebuild the Generator it started from.

    Args:
        record: A mapping with at least ``indices`` (main first), ``epoch`` and ``state``
            (and ``rank``, where a wrapper inside keys its samples with it).
        index: The sample's index, which must be the record's main index; ``None``
            takes that.
        length: The dataset's length.
        kind: What the record should be, for messages (e.g. ``"a MosaicRecord"``).

    Returns:
        The index, the epoch, the Generator in the recorded state and the rank.

    Raises:
        TypeError: If ``record`` is not a mapping or a field has the wrong type.
        ValueError: If a field is missing or has a wrong value (an index out of range, a
            negative epoch, a state that is not ``"state:inc"`` or
            ``"state:inc:uinteger"`` in hexadecimal), or ``index`` is not the record's
            main index.

    >>> replay = read_replay({"indices": [3, 1], "epoch": 2, "state": "ff:1"}, None, 4,
    ...                      kind="a MosaicRecord")
    >>> replay.main, replay.epoch, replay.rank
    (3, 2, None)
    >>> read_replay({"indices": [3, 1], "epoch": 2, "state": "ff:1"}, 1, 4, kind="a record")
    Traceback (most recent call last):
    ...
    ValueError: index must be the record's main index record['indices'][0], 3, got 1 ...
    """
    fields = checks.mapping(record, "record", required=("indices", "epoch", "state"), what=kind)
    first = checks.sequence(fields["indices"], "record['indices']")[0]
    main = checks.integer(first, "record['indices'][0]", low=0, high=length - 1)
    if index is not None and checks.integer(index, "index", low=0, high=length - 1) != main:
        raise ValueError(
            f"index must be the record's main index record['indices'][0], {main}, got "
            f"{index!r} (a record replays the sample it was made for; pass index=None)"
        )
    epoch = checks.uint(fields["epoch"], "record['epoch']", 32)
    rank = fields.get("rank")
    rank = None if rank is None else checks.uint(rank, "record['rank']", 32)
    return Replay(main, epoch, generator_at(fields["state"]), rank)


def ranked(wrapper: KeyedDataset[Any]) -> bool:
    """Whether a rankaug wrapper inside ``wrapper`` keys its samples with the rank.

    Its records then hold ``rank`` (see the module docstring).
    """
    return any(inner.keying == "sample_rank" for inner in wrapper.keyed_tree()[1:])


def replay_rank(wrapper: KeyedDataset[Any], replay: Replay) -> int:
    """The rank to replay with, warning where the replay cannot rebuild the samples.

    The record's rank; for a record without one, this process's.

    Warns:
        RankaugWarning: If a rankaug wrapper inside is keyed ``"stream"`` (the replay
            loads other samples than the record's), or if one is keyed
            ``"sample_rank"`` and the record holds no rank (made before records held
            it: it is replayed with this process's rank).
    """
    kind = type(wrapper).__name__
    inside = wrapper.keyed_tree()[1:]
    streamed = sorted({type(inner).__name__ for inner in inside if inner.keying == "stream"})
    if streamed:
        warnings.warn(
            f"{kind}.replay cannot rebuild the record's sample: {', '.join(streamed)} inside "
            "is keyed 'stream', whose draws continue its worker's stream, so the replay "
            "loads other samples than the record's (key the wrappers inside 'sample' or "
            "'sample_rank' to replay through them)",
            RankaugWarning,
            stacklevel=3,
        )
    if replay.rank is not None:
        return replay.rank
    rank = wrapper._rank_now()
    if any(inner.keying == "sample_rank" for inner in inside):
        warnings.warn(
            f"the record has no 'rank' (it was made before records held it), and a wrapper "
            f"inside this {kind} keys its samples with the rank ('sample_rank'): the replay "
            f"loads them with this process's rank, {rank}, and rebuilds the record's "
            f"sample only if it was made on rank {rank}",
            RankaugWarning,
            stacklevel=3,
        )
    return rank


def check_replayed(record: Mapping[str, Any], made: Mapping[str, Any], kind: str) -> None:
    """Refuse a replay whose draws differ from its record's, naming the first field that does.

    Each field of ``made`` (the replay's own record) that ``record`` has too, but the
    state and settings the replay started from, must hold the same values (a tuple reads
    as a list, as after JSON).

    Raises:
        ValueError: Naming the field, the record's value and the replay's.

    >>> check_replayed({"indices": [3, 1], "rect": [0, 0, 1, 1]},
    ...                {"indices": [3, 1], "rect": (2, 2, 9, 9)}, "CutMixDataset")
    Traceback (most recent call last):
    ...
    ValueError: record['rect'] is [0, 0, 1, 1], but the replay draws (2, 2, 9, 9): ...
    """
    for key, value in made.items():
        if key in _UNDRAWN or key not in record:
            continue
        if _plain(record[key]) != _plain(value):
            raise ValueError(
                f"record[{key!r}] is {record[key]!r:.200}, but the replay draws {value!r:.200}: "
                f"the record was changed, or this {kind} reads other samples than the one "
                "that made it; the replay would rebuild something else"
            )


def _plain(value: object) -> object:
    """``value`` with tuples and arrays as lists and numpy scalars as Python's."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, np.ndarray | np.generic):
        return _plain(value.tolist())
    return value
