"""A DataLoader worker's pool of shared-memory batch buffers, and the leases on them.

A buffer is written only while its slot in a small shared-memory table of flags says
*free*, and only the main process sets a slot free: when the batch tensor built on the
buffer is unpickled there, a finalizer is attached to its storage. Torch keeps one
Python object per storage, alive as long as anything holds the storage — a view, a
slice, a ``.numpy()`` array, a DLPack capsule, a tensor the autograd graph saved (checked
on torch 2.13) — so the finalizer runs only once the last of them is gone: for a batch
copied to pinned memory, once the copy is made. It writes the flag through numpy, without
releasing the GIL. A batch that never reaches the main process keeps its buffer busy:
the pool then allocates outside itself, as ``default_collate`` would.

Each lease carries a number, written into the slot while the buffer is out; a finalizer
frees the slot only if it still holds its own number, and the main process refuses (as
a bug, loudly) a buffer that arrives while an earlier lease on it is still alive. The
flags table travels with every lease: one more file descriptor per batch (about 0.3 ms
in each process here), but no state the main process would have to keep per worker.
"""

from __future__ import annotations

import itertools
import os
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rankaug.collate._write import allocate

_FREE = 0

#: The kinds of buffer a lease can be on.
KINDS = ("pooled", "reused", "unpooled")


class Tally:
    """What one collator's workers sent and this process received, by kind of buffer."""

    __slots__ = ("__weakref__", "counts")

    def __init__(self) -> None:
        self.counts = dict.fromkeys(KINDS, 0)


# Main process: the tallies by collator token, and the lease number of every live
# recycled storage (to catch a buffer that arrives while a batch on it is still alive).
_TALLIES: weakref.WeakValueDictionary[tuple[int, int], Tally] = weakref.WeakValueDictionary()
_HELD: weakref.WeakKeyDictionary[torch.UntypedStorage, int] = weakref.WeakKeyDictionary()
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
    last_used: int


class Pool:
    """One worker's buffers (at most ``capacity``), with their flags in shared memory.

    Args:
        capacity: How many buffers it keeps.
        token: The collator's token, carried by every lease.
    """

    def __init__(self, capacity: int, token: tuple[int, int]) -> None:
        self.pid = os.getpid()
        self.token = token
        self.flags = torch.zeros(capacity, dtype=torch.int64).share_memory_()  # type: ignore[no-untyped-call]
        self._view = self.flags.numpy()
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
            elif self._view[slot] == _FREE:
                if buffer.key == key:
                    return self._lend(slot, buffer, "reused")
                replaceable = min(replaceable or (buffer.last_used, slot), (buffer.last_used, slot))
        chosen = empty if empty is not None else None if replaceable is None else replaceable[1]
        if chosen is None:
            return Leased.make(allocate(shape, dtype), self.flags, -1, 0, "unpooled", self.token)
        tensor = torch.empty(shape, dtype=dtype).share_memory_()  # type: ignore[no-untyped-call]
        fresh = _Buffer(key, tensor, 0)
        self._buffers[chosen] = fresh
        return self._lend(chosen, fresh, "pooled")

    def _lend(self, slot: int, buffer: _Buffer, kind: str) -> torch.Tensor:
        number = next(self._numbers)
        self._view[slot] = number  # busy from now until the main process frees it
        buffer.last_used = next(self._clock)
        return Leased.make(buffer.tensor, self.flags, slot, number, kind, self.token)


class Leased(torch.Tensor):
    """A batch tensor on a pooled buffer, in the worker; a plain tensor once unpickled.

    Torch functions on it return plain tensors. Pickled, it becomes a call of
    :func:`_claim` in the receiving process, with the plain tensor (which travels through
    shared memory as usual) and the lease.
    """

    __torch_function__ = torch._C._disabled_torch_function_impl  # type: ignore[assignment]
    _lease: tuple[torch.Tensor, int, int, str, tuple[int, int]]

    @staticmethod
    def make(
        tensor: torch.Tensor,
        flags: torch.Tensor,
        slot: int,
        number: int,
        kind: str,
        token: tuple[int, int],
    ) -> Leased:
        """``tensor`` as a :class:`Leased`, carrying its lease."""
        leased = tensor.as_subclass(Leased)
        leased._lease = (flags, slot, number, kind, token)
        return leased

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        lease = getattr(self, "_lease", None)
        if lease is None:  # a copy made in the worker: an ordinary tensor
            return (_plain, (self.as_subclass(torch.Tensor),))
        return (_claim, (self.as_subclass(torch.Tensor), *lease))


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    return tensor


def _claim(
    tensor: torch.Tensor,
    flags: torch.Tensor,
    slot: int,
    number: int,
    kind: str,
    token: tuple[int, int],
) -> torch.Tensor:
    """Unpickling a lease: watch the storage, free the slot when it dies, count it."""
    if slot >= 0:
        storage = tensor.untyped_storage()
        held = _HELD.get(storage)
        if held is not None and held != number:
            raise RuntimeError(
                "rankaug: a recycled batch buffer arrived while an earlier batch on it is "
                f"still alive (lease {held}, now {number}); this is a bug in rankaug, "
                "please report it"
            )
        _HELD[storage] = number
        release = weakref.finalize(storage, _release, flags.numpy(), slot, number)
        release.atexit = False
    tally = _TALLIES.get(token)
    if tally is not None:
        tally.counts[kind] += 1
    return tensor


def _release(flags: np.ndarray, slot: int, number: int) -> None:
    if flags[slot] == number:
        flags[slot] = _FREE
