"""A DataLoader worker's pool of shared-memory batch buffers, and the leases on them.

Each pooled buffer ends in one flag word, after the batch's bytes: the buffer is written
only while its flag says *free*, and only the main process sets it free: when the batch
tensor built on the buffer is unpickled there, a finalizer is attached to its storage.
Torch keeps one Python object per storage, alive as long as anything holds the storage
— a view, a slice, a ``.numpy()`` array, a DLPack capsule, a tensor the autograd graph
saved (checked on torch 2.13) — so the finalizer runs only once the last of them is gone:
for a batch copied to pinned memory, once the copy is made. It writes the flag through a
second mapping of the same shared memory, which outlives the batch's. A buffer's first
batch travels as torch shares it, and the second mapping is opened from the handle it
arrived with (its file descriptor, or its name under the ``file_system`` strategy);
where the main process may open the worker's descriptor through ``/proc``, the next
batches on that buffer carry no descriptor at all (:mod:`rankaug.collate._route`). A
batch that never reaches the main process keeps its buffer busy: the pool then
allocates outside itself, as ``default_collate`` would.

Each lease carries a number, written into the flag while the buffer is out; a finalizer
frees the buffer only if the flag still holds its own number, and the main process
refuses (as a bug, loudly) a buffer that arrives while an earlier lease on it is still
alive.
"""

from __future__ import annotations

import itertools
import math
import os
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.multiprocessing

from rankaug.collate import _route
from rankaug.collate._write import allocate

_FREE = 0
_WORD = 8  # bytes: the flag, an int64 after the batch's bytes (8-aligned); the route next

#: The kinds of buffer a lease can be on.
KINDS = ("pooled", "reused", "unpooled")

Route = tuple[int, int, int, int, int]
"""A lease's route: the buffer's route word, then its :data:`~rankaug.collate._route.Handle`."""


class Tally:
    """What one collator's workers sent and this process received, by kind of buffer."""

    __slots__ = ("__weakref__", "counts")

    def __init__(self) -> None:
        self.counts = dict.fromkeys(KINDS, 0)


# Main process: the tallies by collator token, and the lease number of every live
# recycled storage (to catch a buffer that arrives while a batch on it is still alive).
_TALLIES: weakref.WeakValueDictionary[tuple[int, int], Tally] = weakref.WeakValueDictionary()
_HELD: weakref.WeakKeyDictionary[torch.UntypedStorage, int] = weakref.WeakKeyDictionary()
_LIVE: dict[tuple[int, int], int] = {}  # the same by the buffer's file, where known
_TOKENS = itertools.count()


def register(tally: Tally) -> tuple[int, int]:
    """A token for leases to carry, so that this process counts their arrivals in ``tally``."""
    token = (os.getpid(), next(_TOKENS))
    _TALLIES[token] = tally
    return token


@dataclass
class _Buffer:
    key: tuple[tuple[int, ...], torch.dtype]
    tensor: torch.Tensor
    flag: np.ndarray  # the buffer's flag word, after the tensor's bytes
    route: np.ndarray  # its route word, after the flag (rankaug.collate._route)
    offset: int  # where the flag is in the storage, in bytes
    handle: _route.Handle | None  # how /proc reaches it, where that may work
    last_used: int


def _pooled(
    shape: tuple[int, ...], dtype: torch.dtype
) -> tuple[torch.Tensor, np.ndarray, np.ndarray, int, _route.Handle | None]:
    """A shared-memory tensor of ``shape`` and ``dtype``, its flag and route words after it."""
    offset = -(-math.prod(shape) * dtype.itemsize // _WORD) * _WORD
    # Zeros (the route word starts UNKNOWN), made as share_memory_ makes it, written
    # once: one made by UntypedStorage._new_shared, never written, took page faults on
    # every later fill in the worker here (about 4,000 per 19.7 MB batch, +3 ms), this
    # one about 400.
    block = torch.zeros(offset + 2 * _WORD, dtype=torch.uint8)
    block.share_memory_()  # type: ignore[no-untyped-call]
    storage = block.untyped_storage()
    tensor = torch.empty(0, dtype=dtype).set_(storage)[: math.prod(shape)].view(shape)
    flag, route = _word(storage, offset), _word(storage, offset + _WORD)
    return tensor, flag, route, offset, _route.handle(storage)


def _word(storage: torch.UntypedStorage, offset: int) -> np.ndarray:
    """The int64 word at byte ``offset`` of ``storage``, as a numpy view."""
    word = torch.empty(0, dtype=torch.int64).set_(storage, offset // _WORD, (1,), (1,))
    return word.numpy()


class Pool:
    """One worker's buffers (at most ``capacity``), each with its flag in shared memory.

    Args:
        capacity: How many buffers it keeps.
        token: The collator's token, carried by every lease.
    """

    def __init__(self, capacity: int, token: tuple[int, int]) -> None:
        self.pid = os.getpid()
        self.token = token
        self._buffers: list[_Buffer | None] = [None] * capacity
        self._numbers = itertools.count(1)
        self._clock = itertools.count()

    def owned(self) -> bool:
        """Whether this process made the pool (a forked child must make its own)."""
        return self.pid == os.getpid()

    def take(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """A buffer of ``shape`` and ``dtype`` to fill, as a lease to return in the batch.

        A free pooled buffer of that shape if there is one; else a new pooled one (in an
        empty slot, or in place of the free buffer of another shape used least recently);
        else, every slot busy, a fresh buffer outside the pool.
        """
        key = (shape, dtype)
        empty: int | None = None
        replaceable: tuple[int, int] | None = None  # (last used, slot) of the oldest free one
        for slot, buffer in enumerate(self._buffers):
            if buffer is None:
                empty = slot if empty is None else empty
            elif buffer.flag[0] == _FREE:
                if buffer.key == key:
                    return self._lend(buffer, "reused")
                replaceable = min(replaceable or (buffer.last_used, slot), (buffer.last_used, slot))
        chosen = empty if empty is not None else None if replaceable is None else replaceable[1]
        if chosen is None:
            return Leased.make(allocate(shape, dtype), -1, 0, "unpooled", self.token, None)
        fresh = _Buffer(key, *_pooled(shape, dtype), 0)
        self._buffers[chosen] = fresh
        return self._lend(fresh, "pooled")

    def _lend(self, buffer: _Buffer, kind: str) -> torch.Tensor:
        number = next(self._numbers)
        buffer.flag[0] = number  # busy from now until the main process frees it
        buffer.last_used = next(self._clock)
        handle = buffer.handle
        route = None if handle is None else (int(buffer.route[0]), *handle)
        return Leased.make(buffer.tensor, buffer.offset, number, kind, self.token, route)


class Leased(torch.Tensor):
    """A batch tensor on a pooled buffer, in the worker; a plain tensor once unpickled.

    Torch functions on it return plain tensors. Pickled, it becomes a call of
    :func:`_claim` in the receiving process, with the plain tensor (which travels through
    shared memory as usual) and the lease; or, once the buffer's route word says the
    receiver opens it through ``/proc``, a call of :func:`_claim_proc` with the lease alone.
    """

    __torch_function__ = torch._C._disabled_torch_function_impl  # type: ignore[assignment]
    _lease: tuple[int, int, str, tuple[int, int], Route | None]

    @staticmethod
    def make(
        tensor: torch.Tensor,
        offset: int,
        number: int,
        kind: str,
        token: tuple[int, int],
        route: Route | None,
    ) -> Leased:
        """``tensor`` as a :class:`Leased`, carrying its lease.

        ``offset`` -1: a buffer outside the pool. ``route``: the route word's value and
        the buffer's handle, where ``/proc`` may reach it.
        """
        leased = tensor.as_subclass(Leased)
        leased._lease = (offset, number, kind, token, route)
        return leased

    def __deepcopy__(self, memo: dict[int, Any]) -> torch.Tensor:
        # a copy is on no buffer of the pool: an ordinary tensor (torch's own deepcopy
        # needs new_empty() to give the subclass)
        return self.as_subclass(torch.Tensor).clone()

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        lease = getattr(self, "_lease", None)
        plain = self.as_subclass(torch.Tensor)
        if lease is None:  # a copy made in the worker: an ordinary tensor
            return (_plain, (plain,))
        route = lease[4]
        if route is not None and route[0] == _route.PROC:  # opened by the main process
            size = plain.untyped_storage().nbytes()
            handle = route[1:]
            return (_claim_proc, (handle, size, plain.dtype, tuple(plain.shape), *lease[:4]))
        return (_claim, (plain, *lease))


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    return tensor


def _claim(
    tensor: torch.Tensor,
    offset: int,
    number: int,
    kind: str,
    token: tuple[int, int],
    route: Route | None = None,
) -> torch.Tensor:
    """Unpickling a lease: watch the storage, free its flag when it dies, count it.

    With a ``route`` not probed yet, probe ``/proc`` and write what was found into the
    buffer's route word, for the worker's next leases on it.
    """
    if offset >= 0:
        storage = tensor.untyped_storage()
        if route is None:
            held = _HELD.get(storage)
            _check(held, number)
            _HELD[storage] = number
        twin = _twin(storage)
        if route is None:
            _watch(storage, twin, offset, number, None)
        else:
            handle = _handle(route)
            _watch(storage, twin, offset, number, handle[2:])
            if route[0] == _route.UNKNOWN:
                found = _route.PROC if _route.reachable(handle) else _route.TORCH
                _word(twin, offset + _WORD)[0] = found
    _count(token, kind)
    return tensor


def _handle(route: Route) -> _route.Handle:
    return route[1], route[2], route[3], route[4]


def _claim_proc(
    handle: _route.Handle,
    size: int,
    dtype: torch.dtype,
    shape: tuple[int, ...],
    offset: int,
    number: int,
    kind: str,
    token: tuple[int, int],
) -> torch.Tensor:
    """Unpickling a lease the main process opens through ``/proc``: as :func:`_claim`."""
    storage, twin = _route.open_twice(handle, size)
    _watch(storage, twin, offset, number, handle[2:])
    _count(token, kind)
    return torch.empty(0, dtype=dtype).set_(storage)[: math.prod(shape)].view(shape)


def _check(held: int | None, number: int) -> None:
    if held is not None and held != number:
        raise RuntimeError(
            "rankaug: a recycled batch buffer arrived while an earlier batch on it is "
            f"still alive (lease {held}, now {number}); this is a bug in rankaug, "
            "please report it"
        )


def _watch(
    storage: torch.UntypedStorage,
    twin: torch.UntypedStorage,
    offset: int,
    number: int,
    key: tuple[int, int] | None,
) -> None:
    """Free the buffer's flag through ``twin`` once ``storage`` dies.

    ``key``: the buffer's file ``(st_dev, st_ino)``, where known, for :data:`_LIVE`.
    """
    if key is not None:
        _check(_LIVE.get(key), number)
        _LIVE[key] = number
    flag = _word(twin, offset)  # holds the second mapping, not the storage
    release = weakref.finalize(storage, _release, flag, number, key)
    release.atexit = False


def _count(token: tuple[int, int], kind: str) -> None:
    tally = _TALLIES.get(token)
    if tally is not None:
        tally.counts[kind] += 1


def _twin(storage: torch.UntypedStorage) -> torch.UntypedStorage:
    """A second storage on the shared memory of ``storage``, opened from its handle.

    It outlives ``storage``, for the finalizer to write the flag through. The handle is
    the one ``storage`` arrived with (asking for it copies nothing, the storage being
    shared already): a file descriptor, or under the ``file_system`` strategy a name.
    """
    if torch.multiprocessing.get_sharing_strategy() == "file_system":  # type: ignore[no-untyped-call]
        manager, name, size = storage._share_filename_cpu_()
        return torch.UntypedStorage._new_shared_filename_cpu(manager, name, size)
    fd, size = storage._share_fd_cpu_()
    return torch.UntypedStorage._new_shared_fd_cpu(fd, size)  # type: ignore[attr-defined,no-any-return]


def _release(flag: np.ndarray, number: int, key: tuple[int, int] | None) -> None:
    if key is not None and _LIVE.get(key) == number:
        del _LIVE[key]
    if flag[0] == number:
        flag[0] = _FREE
