"""A wrapper's keyed streams, live and saved (:meth:`rankaug.KeyedDataset.state_dict`).

A wrapper keeps its streams by ``(pid, worker_id, rank, epoch)``: a worker going back to
an epoch (a validation pass over part of the same wrapper in the middle of a training
epoch, with ``num_workers=0``) continues that epoch's stream rather than starting it
over. Each worker keeps the :data:`KEPT` streams it drew from last. A stream's
position belongs to its rank: a state loaded on another rank is refused when that rank
would start the stream over (:func:`check_rank`), or, for a streaming wrapper's pass
(:mod:`rankaug.stream.state`), go on with the other rank's.

A state is ``{"format", "wrappers"}``; each wrapper of the tree (outermost first) is
``{"class", "stream", "streams"}``, and each of its streams in the saving process, least
recently used first (a state saved before listed them oldest started first, and loads
alike), ``{"worker_id", "rank", "epoch", "generator", "py_random"}``: the numpy bit
generator's state and, once used, the ``random.Random`` state. Per-sample keyings keep
no streams.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final

from rankaug import checks
from rankaug.keys import KeyedRandom

__all__ = [
    "FORMAT",
    "KEPT",
    "SavedRanks",
    "StreamKey",
    "Streams",
    "check_pass",
    "check_rank",
    "entries",
    "keep",
    "positions",
    "ranks",
    "restored",
    "resume_pass",
    "saved",
    "used",
]

FORMAT: Final = "rankaug.KeyedDataset/1"
KEPT: Final = 4
"""How many streams each worker keeps (the least recently used is dropped for a new one;
started again, it warns: :func:`rankaug.stream_start.restarted`)."""

StreamKey = tuple[int, int, int, int]
"""A stream's key: ``(pid, worker_id, rank, epoch)``."""


class Streams(dict[StreamKey, KeyedRandom]):
    """A wrapper's live streams: ``(pid, worker_id, rank, epoch) -> keyed random``.

    Least recently used first (:func:`used`).

    Attributes:
        dropped: The keys of the streams :func:`keep` dropped: one started again repeats
            its draws from the start.
        last: The key of the stream added or used last (the last one).
    """

    __slots__ = ("dropped", "last")

    def __init__(self) -> None:
        super().__init__()
        self.dropped: set[StreamKey] = set()
        self.last: StreamKey | None = None


_STREAM_KEYS: Final = ("worker_id", "rank", "epoch", "generator", "py_random")

_PASS_KEYS: Final = ("epoch", "position", "generator", "py_random", "source")

SavedRanks = dict[tuple[int, int, int], int]
"""The rank of each restored stream: ``(pid, worker_id, epoch) -> rank``."""


def keep(live: Streams, key: tuple[int, int, int, int], keyed: KeyedRandom) -> KeyedRandom:
    """Add the new stream ``keyed`` under ``key``, dropping its worker's least recently used.

    A worker keeps :data:`KEPT`. Called under :data:`rankaug.stream_start.LOCK`, or on
    streams no other thread sees yet (:func:`restored`).
    """
    pid, worker_id = key[0], key[1]
    mine = [k for k in list(live) if k[0] == pid and k[1] == worker_id]
    for old in mine[: max(0, len(mine) + 1 - KEPT)]:
        live.pop(old, None)
        live.dropped.add(old)
    live[key] = keyed
    live.last = key
    return keyed


def used(live: Streams, key: StreamKey, lock: AbstractContextManager[object]) -> None:
    """Make the stream ``key`` the most recently used (the last), if it is still there.

    Called where ``key`` is not ``live.last`` (once per switch of stream, not per sample),
    with :data:`rankaug.stream_start.LOCK` as ``lock``.
    """
    with lock:
        keyed = live.pop(key, None)
        if keyed is not None:
            live[key] = keyed
            live.last = key


def positions(live: Streams, pid: int) -> list[dict[str, Any]]:
    """Where each stream of process ``pid`` stands, least recently used first."""
    out = []
    for (owner_pid, worker_id, rank, epoch), keyed in list(live.items()):
        if owner_pid != pid:
            continue
        py_random = keyed._py_random
        out.append(
            {
                "worker_id": worker_id,
                "rank": rank,
                "epoch": epoch,
                "generator": keyed.generator.bit_generator.state,
                "py_random": None if py_random is None else py_random.getstate(),
            }
        )
    return out


def saved(wrappers: Sequence[tuple[str, int, list[dict[str, Any]]]]) -> dict[str, Any]:
    """The state of a tree: ``(class name, stream word, positions)`` per wrapper."""
    return {
        "format": FORMAT,
        "wrappers": [
            {"class": name, "stream": stream, "streams": streams}
            for name, stream, streams in wrappers
        ],
    }


def entries(state: object, layout: Sequence[tuple[str, int]]) -> list[Mapping[str, Any]]:
    """The wrappers' entries of ``state``, checked against the tree's ``layout``.

    Raises:
        TypeError: If a part of ``state`` has the wrong type.
        ValueError: If ``state`` is not a saved state, or comes from other wrappers.
    """
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError(
            f"state must be a dict from KeyedDataset.state_dict() (format {FORMAT!r}), "
            f"got {state!r:.200}"
        )
    found = checks.sequence(state.get("wrappers"), "state['wrappers']", what="a list of entries")
    for at, entry in enumerate(found):
        checks.mapping(entry, f"state['wrappers'][{at}]", required=("class", "stream", "streams"),
                       what="a wrapper's entry")  # fmt: skip
    if [(entry["class"], entry["stream"]) for entry in found] != list(layout):
        raise ValueError(
            "state does not match this wrapper: it was saved from wrappers "
            f"{[(e['class'], e['stream']) for e in found]}, this one has {list(layout)}"
        )
    for at, entry in enumerate(found):
        name = f"state['wrappers'][{at}]['streams']"
        saved_streams = entry["streams"]
        if not isinstance(saved_streams, list):
            raise TypeError(
                f"{name} must be a list, got {saved_streams!r:.80} of type "
                f"{type(saved_streams).__name__}"
            )
        for number, stream in enumerate(saved_streams):
            where = f"{name}[{number}]"
            checks.mapping(stream, where, required=_STREAM_KEYS, what="a stream's position")
            for key in ("worker_id", "rank", "epoch"):
                checks.integer(stream[key], f"{where}[{key!r}]", low=0)
    return list(found)


def check_pass(saved: object) -> dict[str, Any] | None:
    """A streaming wrapper's saved pass (its state's ``"pass"``), its parts checked.

    Raises:
        TypeError: If a part has the wrong type.
        ValueError: If a part is missing or out of range.
    """
    if saved is None:
        return None
    name = "state['pass']"
    ended = isinstance(saved, Mapping) and saved.get("ended") is True
    required = ("epoch",) if ended else _PASS_KEYS
    checked = dict(checks.mapping(saved, name, required=required, what="a saved pass"))
    checked["epoch"] = checks.uint(checked["epoch"], f"{name}['epoch']", 32)
    if not ended:
        checked["position"] = checks.integer(checked["position"], f"{name}['position']", low=0)
    return checked


def restored(entry: Mapping[str, Any], key: Callable[[int, int, int], Any], pid: int) -> Streams:
    """One wrapper's streams rebuilt from its entry, owned by process ``pid``.

    Args:
        entry: The wrapper's entry (:func:`entries`).
        key: The wrapper's stream key builder, ``key(rank, worker_id, epoch)``.
        pid: This process.
    """
    live = Streams()
    for stream in entry["streams"]:
        rank, worker_id, epoch = stream["rank"], stream["worker_id"], stream["epoch"]
        keyed = KeyedRandom(key(rank, worker_id, epoch))
        _continue(keyed, stream)
        keep(live, (pid, worker_id, rank, epoch), keyed)
    return live


def resume_pass(keyed: KeyedRandom, saved: Mapping[str, Any], key: StreamKey, name: str) -> None:
    """Continue a streaming pass's saved Generator in ``keyed``, its stream ``key``.

    Args:
        keyed: The pass's new stream.
        saved: The pass's saved state (its ``generator``, ``py_random`` and ``rank``).
        key: The stream, ``(pid, worker_id, rank, epoch)``.
        name: The wrapper's class name, for the message.

    Raises:
        ValueError: If it was saved on another rank (:func:`check_rank`; a state saved
            without its rank, before it was saved, is taken as this rank's).
    """
    pid, worker_id, _, epoch = key
    if "rank" in saved:
        check_rank({(pid, worker_id, epoch): saved["rank"]}, key, name)
    _continue(keyed, saved)


def _continue(keyed: KeyedRandom, saved: Mapping[str, Any]) -> None:
    """Put the saved Generator's state (and Python ``random``'s, if it drew) in ``keyed``."""
    keyed.generator.bit_generator.state = saved["generator"]
    if saved["py_random"] is not None:
        keyed._py_random = random.Random()
        keyed._py_random.setstate(saved["py_random"])


def ranks(live: Streams) -> SavedRanks:
    """The rank each restored stream was saved on, for :func:`check_rank`."""
    return {(pid, worker_id, epoch): rank for pid, worker_id, rank, epoch in live}


def check_rank(saved: SavedRanks, key: tuple[int, int, int, int], name: str) -> None:
    """Refuse to start the stream ``key`` over where a state of another rank stood.

    Args:
        saved: The restored streams' ranks (:func:`ranks`).
        key: The stream about to start, ``(pid, worker_id, rank, epoch)``.
        name: The wrapper's class name, for the message.

    Raises:
        ValueError: If the state loaded for this worker and epoch was saved on another
            rank: its position says nothing of this rank's stream, which would start
            over, repeating the epoch's first draws (or, resumed by a streaming wrapper,
            draw the other rank's numbers).
    """
    pid, worker_id, rank, epoch = key
    other = saved.get((pid, worker_id, epoch))
    if other is not None and other != rank:
        raise ValueError(
            f"the state loaded into {name} holds its keying='stream' position on rank "
            f"{other} for worker {worker_id} in epoch {epoch}, and this is rank {rank}: a "
            "stream's position belongs to its rank, and this rank would start its own over "
            f"(a map-style wrapper) or go on with rank {other}'s (a streaming one). "
            "Save and load each rank's own loader state, or use keying='sample', which "
            "resumes without state (a checkpoint that only rank 0 writes, as PyTorch "
            "Lightning's, is loaded by every rank)"
        )
