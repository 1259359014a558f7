"""The EpochSampler pass being read in this process, for code that runs after the DataLoader.

A batch augmentation (:class:`~rankaug.BatchAugment`) runs in the main process on batches
the DataLoader has already returned. When the batch's indices lost their epoch on the
way (torch's ``default_collate`` turns :class:`~rankaug.EpochIndex` values into a plain
int tensor), the epoch can still be known: it is that of the pass whose batches the
loader is returning. :func:`read_epoch` says which pass that is, or that it cannot tell.

Each :class:`~rankaug.EpochSampler` records the passes it begins (:func:`began`) with the
DataLoader iterator that draws them (found on the stack, as
:func:`~rankaug.sampler_pass.prefetching` finds ``_reset``) and the thread that iterates
it. A pass is read:

* from its beginning, when its loader iterator begins it as the first of its batches (a
  new iterator, ``_reset`` of a persistent one, or a loader without workers, which draws
  each batch as it returns it);
* from the first of its batches that the loader returns, when the iterator drew it ahead
  of the previous pass's last batches (an infinite loader, ultralytics'
  ``InfiniteDataLoader``): until then, the previous pass is the one read (in order; with
  ``in_order=False`` the two cannot be told apart);
* while batches of it are pending (not all drawn, or with workers, not all returned;
  drawn whole at its ``len()``-th index where that is exact, :mod:`~rankaug.sampler_done`);
  once none is, only a batch that ends with the pass's last index is read from it (its
  last batch: a persistent iterator that has finished its pass looks the same); where
  several such passes end with it (a train and a validation loader with persistent
  workers), the one whose batch the previous call took is read;
* once its loader iterator is dropped or shut down, by a batch that ends with its last
  index, where the call before read the pass and its last batch was not read yet (a
  wrapper that reads one batch ahead, timm's ``PrefetchLoader``, yields the last batch
  after the loader's end; indices on a device are compared there, for one batch: the
  call after the call that read the pass, and calls again with the same tensor); a
  pass that no call read is never read once gone: a call that finds no other pass read
  then cannot tell its epoch (its batches may have been kept and augmented after its
  loader finished, ``batches = list(loader)``);
* never after a later pass of its sampler begins, or once it is closed unfinished;
* never again once, after its loader returned all its batches and a call read one of
  them, a call comes that no pass reads while no later pass has begun: the batches of a
  finished pass replayed (``itertools.cycle(loader)`` keeps the first pass's batches and
  replays them, its last batch too) cannot be told from a loader over another sampler,
  and such calls are not known (indices on a device are not read back: while a
  persistent iterator sits at the pass's end, they are compared with its last index,
  and a replayed last batch takes its epoch).

Where all its batches were returned, the first call with a batch that does not end with
its last index cannot be told (a wrapper reading ahead yields the batch before the last
then): it is not read, and warns.

The epoch is known when the passes read agree on one epoch and one of them is read by
the calling thread. Not known: passes of different epochs read at once (a train and a
validation loader over EpochSamplers whose iterators both have batches pending), a pass
read by another thread (a loader iterated in a thread of its own), a pass drawn ahead
with ``in_order=False``, the last batch of a pass whose loader dropped an incomplete
last batch where the last full one could not be read (:func:`last_given`). Passes drawn
outside a DataLoader iterator (a sampler listed by hand) are never read; and a
DataLoader over any other sampler is not seen at all: a batch of it that ends with the
last index of a pass that a persistent iterator has finished is taken as that pass's
last batch.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from types import FrameType
from typing import Any, Final, NamedTuple

import torch

from rankaug.sampler_pass import Pass, prefetching

__all__ = ["LastBatch", "Unknown", "began", "last_given", "read_epoch"]

_FRAMES: Final = 12  # how far up the sampler's caller the loader iterator is looked for


class _Read:
    """A pass, the loader iterator that draws it and where its batches start."""

    __slots__ = (
        "call", "checked", "first", "hit", "iterator", "last_read", "over", "pid",
        "run", "seen", "thread",
    )  # fmt: skip

    def __init__(self, run: Pass, iterator: Any, first: int | None) -> None:
        self.run = run
        self.iterator: weakref.ref[Any] | None = None if iterator is None else weakref.ref(iterator)
        self.first = first  # the loader's number of its first batch, when drawn ahead
        self.pid = os.getpid()
        self.thread = threading.get_ident()
        self.checked = False  # a call came once all its batches were returned
        self.last_read = False  # a call came with its last batch
        self.call = -1  # the latest call that read it (of _CALLS)
        self.hit = -1  # the latest call whose batch was taken from it
        self.over = False  # read to its end, then a batch not of it came: read no more
        self.seen: weakref.ref[torch.Tensor] | None = None  # device indices read once gone


_LOCK: Final = threading.Lock()
_CALLS: Final = itertools.count()  # read_epoch's calls
_READ: Final[weakref.WeakKeyDictionary[Any, tuple[_Read | None, _Read]]] = (
    weakref.WeakKeyDictionary()
)  # sampler -> (the pass before, when the latest was drawn ahead of it; the latest)


def _loader_iterator(frame: FrameType | None) -> Any:
    """The DataLoader iterator whose ``_next_index`` is at or above ``frame``, or ``None``."""
    for _ in range(_FRAMES):
        if frame is None:
            return None
        if frame.f_code.co_name == "_next_index":
            iterator = frame.f_locals.get("self")
            if hasattr(iterator, "_sampler_iter"):
                return iterator
        frame = frame.f_back
    return None


def last_given(run: Pass, value: Any, frame: FrameType | None) -> Any:
    """The last index of the last batch the loader got from ``run``, drawn whole.

    ``value``, the last item drawn, unless a batch sampler with ``drop_last=True`` (at or
    above ``frame``) dropped an incomplete last batch: then the last index of its last
    full batch, read from its frame (torch's ``BatchSampler`` holds it), or ``None`` when
    it cannot be found.
    """
    for _ in range(3):
        if frame is None:
            return value
        owner = frame.f_locals.get("self")
        size = getattr(owner, "batch_size", None)
        if getattr(owner, "drop_last", None) is True and isinstance(size, int) and size > 0:
            if run.position % size == 0:
                return value
            for held in frame.f_locals.values():
                if (
                    isinstance(held, list | tuple)
                    and len(held) == size
                    and all(isinstance(index, int) for index in held)
                ):
                    return held[-1]
            return None
        frame = frame.f_back
    return value


def began(sampler: Any, run: Pass, frame: FrameType | None) -> None:
    """Record that ``sampler`` began ``run``, drawn by the caller at ``frame``."""
    iterator = _loader_iterator(frame)
    sent = getattr(iterator, "_send_idx", None)
    with _LOCK:
        before = _READ.get(sampler)
        latest = None if before is None else before[1]
        ahead = (
            isinstance(sent, int)
            and latest is not None
            and latest.iterator is not None
            and latest.iterator() is iterator
            and not prefetching(frame)
        )
        if ahead:  # the loader returns the previous pass's batches before this one's
            _READ[sampler] = (latest, _Read(run, iterator, sent))
        else:
            _READ[sampler] = (None, _Read(run, iterator, None))


def _live(read: _Read) -> Any:
    """``read``'s loader iterator while the pass may be read, else ``None``."""
    iterator = None if read.iterator is None else read.iterator()
    if iterator is None or getattr(iterator, "_shutdown", False) or read.pid != os.getpid():
        return None
    if read.run.ended and not read.run.whole:  # closed or dropped unfinished
        return None
    return iterator


class Unknown(str):
    """Why the pass being read is unknown (a message fragment)."""

    __slots__ = ()


def _pass_read(before: _Read | None, latest: _Read) -> tuple[_Read, str] | Unknown | None:
    """The pass of ``latest``'s sampler being read, and how: ``"pending"``, ``"read"``, ``"gone"``.

    A pass none of whose batches is pending was read to its last batch: that batch is
    the one being read, or the loader is done with it (the two look alike); ``"gone"``
    once its loader iterator is dropped or shut down too (its last batch may still be
    augmented: a wrapper that reads one batch ahead yields it after the loader's end).
    """
    iterator = _live(latest)
    if iterator is None:
        finished = latest.run.whole and latest.first is None and latest.pid == os.getpid()
        return (latest, "gone") if finished else None
    read = latest
    received = getattr(iterator, "_rcvd_idx", None)
    if before is not None and latest.first is not None:
        if not isinstance(received, int):
            return Unknown("its loader drew the next pass ahead")
        if received <= latest.first:  # no batch of the latest pass returned yet
            if getattr(iterator, "_in_order", True) is False or (
                before.first is not None and received <= before.first
            ):  # out of order, or a pass so short that the one before it is unread too
                return Unknown(
                    f"its loader drew the pass of epoch {latest.run.epoch} ahead of the last "
                    f"batches of epoch {before.run.epoch}, and returns them out of order "
                    "(in_order=False) or several passes are in flight"
                )
            read = before
    sent = getattr(iterator, "_send_idx", None)
    if read is before or not read.run.whole:
        pending = True
    else:  # drawn whole: with workers, pending until every batch sent has come back
        pending = isinstance(received, int) and isinstance(sent, int) and received < sent
    return read, "pending" if pending else "read"


def _last_index(run: Pass) -> Any:
    """The last index ``run`` gave (of a batch sampler's last batch too), as an int64 holds it."""
    last = run.last
    if last is None:
        return None
    if isinstance(last, list | tuple):
        last = last[-1] if last else None
    if last is None:
        return None
    last = int(last)
    return last - (1 << 64) if last >> 63 else last  # as BatchAugment's int64 column


def read_epoch(indices: torch.Tensor) -> int | LastBatch | Unknown | None:
    """The epoch of the EpochSampler pass that the calling thread reads ``indices`` from.

    The passes of this process with batches pending are being read. Where none is, a
    pass read to its end is read only if ``indices`` end with its last index: its last
    batch (indices on a device are not read back: a :class:`LastBatch` says what to
    compare there).

    Args:
        indices: The batch's indices, a ``(B,)`` int64 tensor.

    Returns:
        The epoch; a :class:`LastBatch` (indices on a device); an :class:`Unknown` saying
        why it cannot be told; or ``None`` when no pass is read in this process.
    """
    if not _READ:
        return None
    with _LOCK:
        records = list(_READ.values())
    reading: list[_Read] = []
    alive: list[_Read] = []
    gone: list[_Read] = []
    over: list[_Read] = []  # passes read to their last batch, then replayed (see below)
    for before, latest in records:
        found = _pass_read(before, latest)
        if isinstance(found, Unknown):
            return found
        if found is not None and found[0].over and found[1] != "pending":
            over.append(found[0])
        elif found is not None:
            (reading if found[1] == "pending" else alive if found[1] == "read" else gone).append(
                found[0]
            )
    call = next(_CALLS)
    cpu = indices.is_cpu
    final = None  # read only where a pass may end with it
    if cpu and indices.numel() and (alive or gone or any(r.run.whole for r in reading)):
        final = int(indices[-1])
        for read in reading:  # a pass drawn whole whose last batch this is: not read again
            read.last_read = read.last_read or (read.run.whole and _last_index(read.run) == final)
    # a pass whose iterator is gone, for calls with its last batch (not read yet) that
    # follow one that read it: a wrapper that reads one batch ahead yields it after the loader
    # no call came while it was read, in this thread
    unread = [read for read in gone if read.call < 0 and read.thread == threading.get_ident()]
    ended = [read for read in (*alive, *gone) if read.hit >= 0]  # calls took batches of it
    if gone:
        gone = [
            read
            for read in gone
            if read.call == call - 1 >= 0  # a call read it (not: none did yet, -1)
            and (
                not read.last_read  # the same indices again, on a device (two calls a batch)
                or (not cpu and read.seen is not None and read.seen() is indices)
            )
            and (not cpu or _last_index(read.run) == final)  # a device's: compared there
        ]
        if not cpu:
            for read in gone:  # one batch only: a later one is no last batch of it
                read.last_read, read.seen = True, weakref.ref(indices)
    if unread and not (reading or alive or gone):
        # its batches were all returned before any was augmented (`list(loader)`): the
        # batch may be one of them, kept, or from another loader
        return Unknown(
            f"the batch may come from the pass of epoch {unread[0].run.epoch}, whose loader "
            "returned all its batches before any was augmented (batches kept and augmented "
            "after the loop, as after batches = list(loader)), or from another loader"
        )
    for group in (reading, alive, gone):
        for read in group:
            read.call = call
    ends = alive or gone
    if not reading and ends:
        blind = [read for read in ends if read.run.last is None and read.run.position]
        if blind:
            return Unknown(
                f"the batch may be the last of the pass of epoch {blind[0].run.epoch}, whose "
                "loader dropped an incomplete last batch (drop_last=True) where the last full "
                "one could not be read"
            )
        if not cpu:  # compared on the device, by the caller: no sync
            if len(ends) > 1:
                return Unknown(
                    f"the batch may be the last of the passes of epochs "
                    f"{sorted(read.run.epoch for read in ends)}, and its indices are on a "
                    "device (not read back to compare with those passes' last)"
                )
            reading = ends
        else:
            reading = [read for read in ends if _last_index(read.run) == final]
            recent = [read for read in reading if read.hit == call - 1]  # the last batch
            if len({read.run.epoch for read in recent}) == 1:  # of the loader read just before
                reading = recent
            fresh = [read for read in alive if not read.checked]
            for read in alive:
                read.checked = True
                read.last_read = read.last_read or read in reading
            if not reading and any(read.thread == threading.get_ident() for read in fresh):
                return Unknown(
                    f"the batch does not end with the last index of the pass of epoch "
                    f"{fresh[0].run.epoch}, whose loader has returned all its batches (a "
                    "batch read ahead of the loop by a wrapper that prefetches, kept from "
                    "earlier in the pass, or from a loader over another sampler)"
                )
    for read in reading:
        read.hit = call
    epochs = {read.run.epoch for read in reading}
    if len(epochs) > 1:
        return Unknown(
            f"passes of epochs {sorted(epochs)} are read at once (several loaders over "
            "EpochSamplers, whose iterators are alive)"
        )
    if not epochs:
        # no pass read, after one read to its last batch and no later pass of its sampler
        # begun: the batch replays it (itertools.cycle(loader)), or comes from elsewhere
        mine = [read for read in (*over, *ended) if read.thread == threading.get_ident()]
        if not mine:
            return None
        for read in mine:
            read.over = True  # its last batch again is a replay too
        return Unknown(
            f"the batch comes after the pass of epoch {mine[0].run.epoch} ended (its loader "
            "returned all its batches) and no later pass began (a wrapper that replays the "
            "finished pass's batches, as itertools.cycle(loader) does, batches kept from it, "
            "or a loader over another sampler)"
        )
    epoch = epochs.pop()
    if all(read.thread != threading.get_ident() for read in reading):
        return Unknown(f"the pass of epoch {epoch} is read by another thread than this call's")
    if reading is ends and indices.device.type != "cpu":
        return LastBatch(epoch, _last_index(ends[0].run))
    return epoch


class LastBatch(NamedTuple):
    """The epoch of a pass read to its end, for a batch that ends with ``last``.

    Returned for indices on a device, which are compared there (``torch.where``), not read
    back.
    """

    epoch: int
    last: int
