"""``PassCounter``: each worker's next epoch, in shared memory made before the workers.

A pass over a streaming wrapper is the next epoch of the workers that run it. The
counts live in one shared ``int64`` tensor made in the main process, one word per
worker id, so that a DataLoader worker started afresh every epoch
(``persistent_workers=False``) reads the count its predecessor left, and a persistent
one keeps counting; forked workers inherit the mapping and spawned ones receive it
through PyTorch's multiprocessing pickler (as :class:`~rankaug.shared_epoch.SharedEpoch`).

**One epoch per pass.** The workers of one pass must run one epoch (a stream deals its
shards out by it), even when their counts differ: a DataLoader with more workers than an
earlier one starts workers whose count never moved. So a worker's word also holds the tag
of the pass that last moved it: the DataLoader's worker pool (its worker processes are
made one after the other: the process counter of ``multiprocessing`` less the worker id
names the pool) and how many passes this process has started. The first worker of a pass
runs the front, the largest next epoch of any worker; the others find its tag and run
its epoch. Tag and count are written together, one 64-bit store, so a worker sees both or
neither. A worker outside a ``multiprocessing`` pool counts by its own word alone. A
resumed pass (:meth:`PassCounter.resume`) runs the epoch its state saved and tags it so:
a worker of the same pass taking its epoch afterwards joins it.

**One counter per rank.** A process that is neither the one that made the counter nor one
of its DataLoader workers (a rank forked after the wrapper was built) counts its own
passes: it claims a copy of the counts before it uses them, forks or pickles them
(:mod:`rankaug._owned`), so its workers count with it and with no other rank.

The main process (``num_workers=0``) runs the front too and moves every worker's count
on past its pass (:meth:`PassCounter.take_all`): a pass there (a look at one sample, a
loop without workers) leaves the workers of a later DataLoader on one epoch.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Final

import numpy as np
import torch

from rankaug import _owned, _threads, checks
from rankaug._process import current_pid

__all__ = ["SLOTS", "PassCounter"]

SLOTS: Final = 1024
"""The most DataLoader workers one wrapper counts passes for."""

_BITS: Final = 33  # a word: the pass's tag above, the next epoch (up to 2**32) below
_NEXT: Final = (1 << _BITS) - 1
_TAGS: Final = (1 << 30) - 1  # tags 1..2**30 - 1; 0 is untagged (set_epoch, put)


class PassCounter:
    """The next epoch of each worker (see the module docstring).

    >>> passes = PassCounter()
    >>> passes.take(0), passes.take(0), passes.take(1)
    (0, 1, 0)
    >>> passes.set_all(5)
    >>> passes.peek(1)
    5
    """

    __slots__ = ("__weakref__", "_counts", "_here", "_owner", "_view")

    def __init__(self) -> None:
        counts = torch.zeros(SLOTS, dtype=torch.int64)
        self._counts: torch.Tensor = counts.share_memory_()  # type: ignore[no-untyped-call]
        self._view: np.ndarray | None = None
        self._here = (0, 0)  # (pid, passes started in that process)
        self._owner = current_pid()  # the process whose passes (and workers') it counts
        _owned.track(self)

    def _numbers(self) -> np.ndarray:
        if self._owner != current_pid():  # a worker's, or another rank's to claim
            self.claim()
        view = self._view
        if view is None:
            view = self._view = self._counts.numpy()
        return view

    def claim(self) -> None:
        """Count this process's passes apart, if it is another rank (:mod:`rankaug._owned`)."""
        if _owned.foreign(self._owner):
            counts = self._counts.clone().share_memory_()  # type: ignore[no-untyped-call]
            self._counts, self._view, self._owner = counts, None, current_pid()

    def _slot(self, worker_id: int) -> int:
        if not 0 <= worker_id < SLOTS:
            raise ValueError(
                f"a streaming wrapper counts the passes of up to {SLOTS} DataLoader workers, "
                f"got worker id {worker_id}"
            )
        return worker_id

    def peek(self, worker_id: int) -> int:
        """The epoch of the worker's next pass, by its own count."""
        count: int = self._numbers().item(self._slot(worker_id)) & _NEXT
        return count

    def front(self) -> int:
        """The largest next epoch of any worker: the epoch of a new pass."""
        return int((self._numbers() & _NEXT).max())

    def take(self, worker_id: int) -> int:
        """The epoch of the pass starting now in the worker; its next one is one more.

        The first worker of a pass runs the :meth:`front`, the others of the same pass
        its epoch (see the module docstring).

        Raises:
            ValueError: If the worker has run the last epoch, ``2**32 - 1``.
        """
        slot = self._slot(worker_id)
        with _threads.passes():  # threads of this process starting passes at once
            tag = self._pass_tag(worker_id)
            epoch = _runnable(self._choose(tag, slot))
            self._numbers()[slot] = (tag << _BITS) | (epoch + 1)  # 2**32 only as a next pass
        return epoch

    def upcoming(self, worker_id: int) -> int:
        """The epoch :meth:`take` would give the worker's next pass now (nothing taken).

        What a worker's state saved before its pass starts holds: a pass joins the
        epoch of its peers that started, not its own count's.
        """
        slot = self._slot(worker_id)
        with _threads.passes():
            return self._choose(self._pass_tag(worker_id, advance=False), slot)

    def _choose(self, tag: int, slot: int) -> int:
        seen = self._numbers().copy()  # each word whole: a tag and its count, or neither
        if not tag:
            return int(seen.item(slot) & _NEXT)
        peers = seen[(seen >> _BITS) == tag]
        return int(peers[0] & _NEXT) - 1 if peers.size else int((seen & _NEXT).max())

    def resume(self, worker_id: int, epoch: int) -> None:
        """Count a resumed pass of ``epoch`` starting now; the worker's next is one more.

        Tagged as :meth:`take` tags a pass, so that a worker of the same pass that takes
        its epoch afterwards joins ``epoch``.
        """
        slot = self._slot(worker_id)
        checks.uint(epoch, "epoch", 32)
        with _threads.passes():
            tag = self._pass_tag(worker_id)  # the worker's passes stay in step with its pool's
            self._numbers()[slot] = (tag << _BITS) | (epoch + 1)

    def _pass_tag(self, worker_id: int, *, advance: bool = True) -> int:
        """The tag of the pass starting now in this worker process (0: none).

        ``advance=False`` names the next pass without counting it as started.
        """
        pid = os.getpid()
        owner, started = self._here
        started = started if owner == pid else 0
        if advance:
            self._here = (pid, started + 1)
        identity = multiprocessing.current_process()._identity
        if not identity:
            return 0
        pool = (os.getppid(), identity[:-1], identity[-1] - worker_id, started)
        return hash(pool) % _TAGS + 1  # ints and tuples hash alike in every process

    def start(self, worker_id: int, workers: int, epoch: int | None = None) -> int:
        """The epoch of a pass starting now in this process; the next one is one more.

        ``epoch`` when given (a resumed pass's, or that of the pass reading this wrapper),
        counted as :meth:`resume` counts it; else :meth:`take`'s in a worker (``workers``
        is the DataLoader's ``num_workers``, 0 in the main process), else
        :meth:`take_all`'s: a pass in the main process moves every worker's count on.

        >>> passes = PassCounter()
        >>> passes.start(0, 0), passes.start(1, 2, epoch=7), passes.peek(1), passes.peek(0)
        (0, 7, 8, 1)
        """
        if epoch is None:
            return self.take(worker_id) if workers else self.take_all()
        if workers:
            self.resume(worker_id, epoch)
            return epoch
        return self.take_all(epoch)

    def take_all(self, epoch: int | None = None) -> int:
        """A main-process pass's epoch (the front, or ``epoch``); every worker's next is one more.

        >>> passes = PassCounter()
        >>> passes.take(1), passes.take_all(), passes.peek(0)
        (0, 1, 2)
        """
        with _threads.passes():  # threads starting passes at once: one epoch each
            epoch = _runnable(self.front() if epoch is None else epoch)
            self._numbers()[:] = epoch + 1
        return epoch

    def put(self, worker_id: int, epoch: int) -> None:
        """Make ``epoch`` the worker's next pass."""
        self._numbers()[self._slot(worker_id)] = checks.uint(epoch, "epoch", 32)

    def set_all(self, epoch: int) -> None:
        """Make ``epoch`` every worker's next pass (``set_epoch``)."""
        self._numbers()[:] = checks.uint(epoch, "epoch", 32)

    def __getstate__(self) -> torch.Tensor:
        self.claim()  # a rank's spawned workers share its own counts
        counts: torch.Tensor = self._counts
        return counts

    def __setstate__(self, counts: torch.Tensor) -> None:
        self._counts, self._view, self._here = counts, None, (0, 0)
        self._owner = -1  # its maker's: a worker counts there, another process claims a copy
        _owned.track(self)

    def __repr__(self) -> str:
        return f"PassCounter(next={self.front()})"


def _runnable(epoch: int) -> int:
    """``epoch``, if a pass may start at it: epochs are 32-bit words of the key."""
    if epoch >= 2**32:
        raise ValueError(
            "this stream has run its last epoch, 2**32 - 1 (epochs are 32-bit): call "
            "set_epoch(epoch) with an epoch in [0, 2**32) before the next pass"
        )
    return epoch
