"""Where a sample's epoch comes from: the index, the enclosing wrapper, or ``set_epoch``.

The epoch of a pass is decided once, in the main process, when the pass begins, and
travels with every index of the pass (:class:`EpochIndex`, made by
:class:`~rankaug.EpochSampler`). A rankaug wrapper that receives such an index keys its
draws with that epoch and hands it down to the rankaug wrappers inside it for the
duration of the call (:func:`carrying`), so the epoch reaches them through ``Subset``,
``ConcatDataset`` and any other plain wrapper whose arithmetic turns the index into a
plain ``int``. Only when neither is present does a wrapper read its
:class:`SharedEpoch`, the value of its last ``set_epoch``: the fallback for code that
calls ``set_epoch`` itself.

Order, first match wins: the index's epoch, the epoch handed down by an enclosing
wrapper, the shared epoch.
"""

from __future__ import annotations

import array
import contextvars
import copyreg
import os
import sys
import threading
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any, Final, cast

import numpy as np
import torch

from rankaug import checks
from rankaug.errors import RankaugWarning

__all__ = [
    "EpochBatch",
    "EpochIndex",
    "SharedEpoch",
    "carried_epoch",
    "carry_epoch",
    "carrying",
    "drop_epoch",
    "epoch_class",
    "index_epoch",
]

_CARRIED: Final[contextvars.ContextVar[int | None]] = contextvars.ContextVar(
    "rankaug_epoch", default=None
)


class _EpochIndexType(type):
    """The type of :class:`EpochIndex`: ``EpochIndex(index, epoch)`` checks both."""

    def __call__(cls, index: int, epoch: int) -> EpochIndex:
        make = epoch_class(checks.uint(epoch, "epoch", 32))
        return make(checks.integer(index, "index"))

    __call__.__qualname__ = "EpochIndex"  # what Python's own argument errors name


class _EpochClassType(_EpochIndexType):
    """The type of one epoch's subclass: ``kind(i)`` is int's own constructor, in C.

    Neither type defines ``__new__`` in Python, so making an index (in the sampler, and
    again when a worker unpickles it) costs what making any int subclass costs.
    """

    __call__ = type.__call__


class EpochIndex(int, metaclass=_EpochIndexType):
    """A dataset index that carries the epoch of its pass.

    It *is* the index (an ``int`` subclass), so any dataset indexes with it as before;
    rankaug's wrappers read :attr:`epoch` from it. Arithmetic on it gives plain ints.
    It pickles to DataLoader workers (forked or spawned) with its epoch.

    Each epoch has its own subclass, which holds the epoch as a class attribute: an
    instance is then a bare int with nothing of its own to store, which makes it cheap
    to make and to pickle (the DataLoader pickles every index it sends to a worker).

    Args:
        index: The index.
        epoch: The epoch of the pass, an integer in ``[0, 2**32)``.

    Raises:
        TypeError: If ``index`` or ``epoch`` is not an integer.
        ValueError: If ``epoch`` is out of range.

    >>> i = EpochIndex(7, epoch=3)
    >>> i, i.epoch, [10, 11, 12, 13, 14, 15, 16, 17][i], f"{i}.jpg"
    (EpochIndex(7, epoch=3), 3, 17, '7.jpg')
    >>> type(i + 1).__name__, isinstance(i, EpochIndex)
    ('int', True)
    """

    __slots__ = ()
    epoch: int

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (int(self),))

    def __repr__(self) -> str:
        return f"EpochIndex({int(self)}, epoch={self.epoch})"

    __str__ = int.__repr__  # str(), f"{i}" and paths built from it stay plain numbers


def _reduce_index(index: EpochIndex) -> tuple[Any, ...]:
    return (type(index), (int(index),))


_CLASSES: Final[dict[int, Callable[[int], EpochIndex]]] = {}
_REGISTERED: Final[list[type]] = []
_REGISTER_AT_MOST: Final = 8
_CLASSES_LOCK: Final = threading.Lock()


def epoch_class(epoch: int) -> Callable[[int], EpochIndex]:
    """The :class:`EpochIndex` subclass of one epoch: ``epoch_class(e)(i)`` is ``EpochIndex(i, e)``.

    ``epoch`` is not checked (the sampler checked it once for its pass). The class is
    made on first use in each process, stored in this module under its name
    (``_EpochIndex_<epoch>``, where pickle looks it up) and found by name when an index
    is unpickled, so spawned workers rebuild it too.

    The classes of the latest few epochs are also registered with :mod:`copyreg`, which
    lets pickle reduce their instances straight from its dispatch table; older ones
    pickle through ``__reduce__``, the same bytes a little slower. (Every
    multiprocessing pickler copies that table, so it must not grow with every epoch.)
    """
    kind = _CLASSES.get(epoch)
    if kind is None:
        with _CLASSES_LOCK:
            kind = _CLASSES.get(epoch)
            if kind is None:
                kind = _make_class(epoch)
    return kind


def _make_class(epoch: int) -> Callable[[int], EpochIndex]:
    name = f"_EpochIndex_{epoch}"
    made = cast("type[EpochIndex]", _EpochClassType(name, (EpochIndex,), {
        "__slots__": (), "epoch": epoch, "__module__": __name__, "__qualname__": name,
    }))  # fmt: skip
    globals()[name] = made
    copyreg.pickle(made, _reduce_index)
    _REGISTERED.append(made)
    if len(_REGISTERED) > _REGISTER_AT_MOST:
        copyreg.dispatch_table.pop(_REGISTERED.pop(0), None)
    kind: Callable[[int], EpochIndex] = made
    _CLASSES[epoch] = kind
    return kind


def __getattr__(name: str) -> Any:
    """Unpickling finds an epoch's class by name (``_EpochIndex_<epoch>``) here."""
    prefix = "_EpochIndex_"
    if name.startswith(prefix) and name[len(prefix) :].isdigit():
        return epoch_class(int(name[len(prefix) :]))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class EpochBatch(list[EpochIndex]):
    """A batch of one pass's :class:`EpochIndex` values that pickles as one block.

    :class:`~rankaug.EpochSampler` yields these when it wraps a batch sampler
    (``batch_sampler=EpochSampler(BatchSampler(...))``). The DataLoader pickles every
    batch it sends to a worker; a list of int subclasses costs a reduce call per index,
    while this pickles as the epoch and the indices packed as 64-bit integers, and comes
    back as EpochIndex values. It is a list, so anything that slices or extends a batch
    still holds indices that carry their epoch.

    >>> import pickle
    >>> batch = EpochBatch([EpochIndex(4, epoch=2), EpochIndex(1, epoch=2)])
    >>> again = pickle.loads(pickle.dumps(batch))
    >>> again, type(again).__name__
    ([EpochIndex(4, epoch=2), EpochIndex(1, epoch=2)], 'EpochBatch')
    """

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        kinds = {type(index) for index in self}
        kind = kinds.pop() if len(kinds) == 1 else None
        if kind is None or not issubclass(kind, EpochIndex):  # mixed: each keeps its own
            return (EpochBatch, (list(self),))
        return (_epoch_batch, (kind.epoch, array.array("q", self).tobytes()))


def _epoch_batch(epoch: int, packed: bytes) -> EpochBatch:
    """Unpickle an :class:`EpochBatch` packed by its ``__reduce__``."""
    return EpochBatch(map(epoch_class(epoch), array.array("q", packed)))


def index_epoch(index: object) -> int | None:
    """The epoch an index carries, or ``None`` for a plain index.

    >>> index_epoch(EpochIndex(3, epoch=2)), index_epoch(3)
    (2, None)
    """
    return index.epoch if isinstance(index, EpochIndex) else None


def carried_epoch() -> int | None:
    """The epoch an enclosing rankaug wrapper handed down for this call, if any.

    >>> carried_epoch() is None
    True
    """
    return _CARRIED.get()


def carry_epoch(epoch: int) -> contextvars.Token[int | None]:
    """Hand ``epoch`` down to the rankaug wrappers called from here on.

    The primitive that :class:`carrying` and :meth:`~rankaug.SampleContext.loading`
    use; give the token back to :func:`drop_epoch`.
    """
    return _CARRIED.set(epoch)


def drop_epoch(token: contextvars.Token[int | None]) -> None:
    """Undo the :func:`carry_epoch` that returned ``token``."""
    _CARRIED.reset(token)


class carrying:
    """Hand ``epoch`` down to the rankaug wrappers called inside the ``with`` block.

    >>> with carrying(4):
    ...     carried_epoch()
    4
    >>> carried_epoch() is None
    True
    """

    __slots__ = ("_epoch", "_token")

    def __init__(self, epoch: int) -> None:
        self._epoch = epoch

    def __enter__(self) -> None:
        self._token = _CARRIED.set(self._epoch)

    def __exit__(self, *exc: object) -> None:
        _CARRIED.reset(self._token)


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


class SharedEpoch:
    """An epoch counter that every DataLoader worker sees: the ``set_epoch`` fallback.

    Args:
        value: The initial epoch. Defaults to ``0``.

    The value lives in a slot of a shared-memory block (one block serves 1,024
    counters). Forked workers inherit the mapping; spawned workers receive it through
    PyTorch's multiprocessing pickler, which shares the storage rather than copying it.
    Either way a ``set`` in the main process before ``iter(loader)`` is what the workers
    read, also with ``persistent_workers=True``. A plain ``pickle`` or ``copy.deepcopy``
    makes an independent counter.

    >>> epoch = SharedEpoch()
    >>> epoch.set(3)
    >>> epoch.get()
    3
    """

    __slots__ = ("_block", "_owner", "_slot", "_view")

    def __init__(self, value: int = 0) -> None:
        self._block, self._slot = _POOL.take()
        self._owner = os.getpid()
        self._view: np.ndarray = self._block.numpy()
        self.set(value)

    def get(self) -> int:
        """The current epoch."""
        epoch: int = self._view.item(self._slot)
        return epoch

    def set(self, value: int) -> None:
        """Set the epoch (call it in the main process, before ``iter(loader)``).

        Args:
            value: The epoch, an integer in ``[0, 2**32)``.
        """
        self._view[self._slot] = checks.uint(value, "epoch", 32)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_shared_epoch, (self._block, self._slot))

    def __del__(self) -> None:
        block = getattr(self, "_block", None)
        if block is not None and getattr(self, "_owner", None) == os.getpid():
            _POOL.give(block, self._slot, self._owner)

    def __repr__(self) -> str:
        return f"SharedEpoch({self.get()})"


def _shared_epoch(block: torch.Tensor, slot: int) -> SharedEpoch:
    """Unpickle a SharedEpoch: the same slot when the block arrived shared, else a copy."""
    if block.is_shared():  # type: ignore[no-untyped-call]
        epoch = SharedEpoch.__new__(SharedEpoch)
        epoch._block, epoch._slot, epoch._owner = block, slot, -1
        epoch._view = block.numpy()
        return epoch
    return SharedEpoch(int(block[slot]))


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
        stacklevel=3,
    )
