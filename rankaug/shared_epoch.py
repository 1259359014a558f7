"""``SharedEpoch``: the ``set_epoch`` fallback that every DataLoader worker sees.

A wrapper reads it only when neither the index nor an enclosing wrapper gives the
epoch (see :mod:`rankaug.epoch`). Also here: the warning for a ``set_epoch`` that came
in the middle of a pass.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any, Final, TypeVar

import numpy as np
import torch

from rankaug import _owned, checks
from rankaug._process import current_pid
from rankaug.errors import RankaugWarning

__all__ = ["SharedEpoch", "shared_slot", "warn_if_late"]


class _SlotPool:
    """Epoch slots for every :class:`SharedEpoch` of a process, in shared blocks.

    One block of shared memory (one file descriptor) holds :data:`BLOCK` epochs, so a
    process with thousands of wrappers holds a handful of descriptors instead of one per
    wrapper. A slot returns to the pool when its SharedEpoch is garbage-collected in
    the process that created it.
    """

    BLOCK: Final = 1024

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._free: list[tuple[torch.Tensor, int]] = []

    def take(self) -> tuple[torch.Tensor, int]:
        with self._lock:
            if self._pid != os.getpid():  # a forked child: its slots are its own
                self._pid, self._free = os.getpid(), []
            if not self._free:
                block = torch.zeros(self.BLOCK, dtype=torch.int64).share_memory_()  # type: ignore[no-untyped-call]
                self._free = [(block, slot) for slot in reversed(range(self.BLOCK))]
            return self._free.pop()

    def give(self, block: torch.Tensor, slot: int, pid: int) -> None:
        with self._lock:
            if pid == self._pid == os.getpid():
                block[slot] = 0
                self._free.append((block, slot))


_POOL: Final = _SlotPool()
_Epoch = TypeVar("_Epoch", bound="SharedEpoch")


class SharedEpoch:
    """An epoch counter that every DataLoader worker sees: the ``set_epoch`` fallback.

    Args:
        value: The initial epoch.

    The value lives in a slot of a shared-memory block (one block serves 1,024
    counters). Forked workers inherit the mapping; spawned workers receive it through
    PyTorch's multiprocessing pickler, which shares the storage rather than copying it.
    Either way a ``set`` in the main process before ``iter(loader)`` is what the workers
    read, also with ``persistent_workers=True``. A plain ``pickle`` or ``copy.deepcopy``
    makes an independent counter. Another process that is no DataLoader worker (a rank
    forked after the wrapper was built) takes a slot of its own, with the value it
    inherited, before it sets the epoch, forks or pickles the counter
    (:mod:`rankaug._owned`): each rank's ``set_epoch`` reaches its own workers alone.

    Attributes:
        read: :meth:`get` as a callable that runs no Python code (the sample path reads
            it for every sample).

    >>> epoch = SharedEpoch()
    >>> epoch.set(3)
    >>> epoch.get()
    3
    """

    __slots__ = ("__weakref__", "_block", "_owner", "_slot", "_view", "read")

    def __init__(self, value: int = 0) -> None:
        self._block, self._slot = _POOL.take()
        self._owner = os.getpid()
        self._attach(self._block)
        self.set(value)
        _owned.track(self)

    def _attach(self, block: torch.Tensor) -> None:
        self._view: np.ndarray = block.numpy()
        # get() without a Python frame: read for every sample (see EpochFallback)
        self.read: Callable[[], int] = functools.partial(self._view.item, self._slot)

    def get(self) -> int:
        """The current epoch."""
        epoch: int = self._view.item(self._slot)
        return epoch

    def set(self, value: int) -> None:
        """Set the epoch (call it in the main process, before ``iter(loader)``).

        Args:
            value: The epoch, an integer in ``[0, 2**32)``.
        """
        value = checks.uint(value, "epoch", 32)
        self.claim()
        self._view[self._slot] = value

    def claim(self) -> None:
        """Take a slot of this process's own, if it is another rank (:mod:`rankaug._owned`)."""
        if _owned.foreign(self._owner):
            value = self.get()
            self._block, self._slot = _POOL.take()
            self._owner = current_pid()
            self._attach(self._block)
            self._view[self._slot] = value

    def __reduce__(self) -> tuple[Any, ...]:
        self.claim()  # a rank's spawned workers share its own slot
        return (_shared_epoch, (self._block, self._slot))

    def __del__(self) -> None:
        block = getattr(self, "_block", None)
        if block is not None and getattr(self, "_owner", None) == os.getpid():
            _POOL.give(block, self._slot, self._owner)

    def __repr__(self) -> str:
        return f"SharedEpoch({self.get()})"


def _shared_epoch(block: torch.Tensor, slot: int) -> SharedEpoch:
    """Unpickle a SharedEpoch: the same slot when the block arrived shared, else a copy."""
    return shared_slot(SharedEpoch, block, slot)


def shared_slot(kind: type[_Epoch], block: torch.Tensor, slot: int) -> _Epoch:
    """A ``kind`` (a SharedEpoch) on ``block[slot]`` if the block arrived shared, else a copy."""
    if block.is_shared():  # type: ignore[no-untyped-call]
        epoch = kind.__new__(kind)
        epoch._block, epoch._slot, epoch._owner = block, slot, -1  # its maker's
        epoch._attach(block)
        _owned.track(epoch)
        return epoch
    return kind(int(block[slot]))


# ----------------------------------------------------------------------------- late epochs
_LATE_WARNED: set[int] = set()


def _worker_persistence() -> bool | None:
    """Whether this DataLoader worker process is persistent; ``None`` if unknown.

    Read once, when the shared epoch changes under a worker: PyTorch's worker loop holds
    it as the argument ``persistent_workers`` (also torchdata's). No other public
    interface tells a dataset whether its worker outlives one pass.
    """
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_worker_loop" and "persistent_workers" in frame.f_locals:
            return bool(frame.f_locals["persistent_workers"])
        frame = frame.f_back
    return None


def warn_if_late(previous: int, current: int) -> None:
    """Warn, once per worker process, that ``set_epoch`` came in the middle of a pass.

    Called when a worker sees the shared epoch change between two of its samples. A
    non-persistent worker lives exactly one pass of its DataLoader iterator, so a change
    it sees happened while the pass was running: samples of one pass are keyed with two
    epochs, and which ones depends on timing. (Persistent workers also see legitimate
    changes between passes, so they are not warned about.)
    """
    pid = os.getpid()
    if pid in _LATE_WARNED or _worker_persistence() is not False:
        return
    _LATE_WARNED.add(pid)
    warnings.warn(
        f"the shared epoch changed from {previous} to {current} while a DataLoader worker "
        "was serving one pass: set_epoch came after iter(loader) (Lightning and "
        "ultralytics' InfiniteDataLoader start the pass first), so this pass mixes two "
        "epochs depending on timing. Let the epoch travel with the index instead: "
        "DataLoader(..., sampler=rankaug.EpochSampler(sampler))",
        RankaugWarning,
        stacklevel=4,
    )
