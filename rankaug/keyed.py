"""The base of rankaug's wrappers: one keyed random state per sample, from context.

Every ``__getitem__`` follows one path: check the index, resolve the context (rank,
worker, epoch), derive the key's random state, then let the subclass draw and apply.

Two keyings:

* ``"stream"`` (default): one Generator per ``(seed, stream, rank, worker_id, epoch)``,
  created lazily inside each worker process on its first sample and continued across
  that worker's samples. Outputs depend on which worker loads which index, which the
  DataLoader fixes for a given ``num_workers`` and batch size (``in_order=True``).
* ``"sample"``: one Generator per ``(seed, stream, epoch, index)``: the same index in
  the same epoch gives the same output whatever ``num_workers``, batch size or world
  size, and a run resumed mid-epoch reproduces. Two ranks that load the same index
  (``DistributedSampler`` pads the last batch by repeating indices) get the same
  output. ``"sample_rank"`` adds the rank to the per-sample key, so those differ too,
  at the price of depending on the world size.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

import numpy as np
import torch.distributed as dist
from torch.utils.data import Dataset, get_worker_info

from rankaug.context import SharedEpoch, process_group_rank, resolve_rank
from rankaug.errors import SampleError
from rankaug.keys import (
    MAGIC,
    Domain,
    KeyedRandom,
    Keying,
    check_keying,
    check_uint,
    stream_id,
)

__all__ = ["KeyedDataset", "inner_datasets"]

T_co = TypeVar("T_co", covariant=True)
_MASK32 = 0xFFFF_FFFF


def inner_datasets(dataset: object) -> Iterator[object]:
    """Datasets reachable from ``dataset`` through ``.dataset`` / ``.datasets`` attributes.

    This is how PyTorch's own wrappers (``Subset``, ``ConcatDataset``) and rankaug's
    nest. The walk stops below each :class:`KeyedDataset` (its own ``set_epoch``
    continues it) and visits each object once.

    Args:
        dataset: The outer dataset (not yielded).

    Yields:
        The datasets inside it.
    """
    seen = {id(dataset)}
    stack = [dataset]
    while stack:
        current = stack.pop()
        children: list[object] = []
        inner = getattr(current, "dataset", None)
        if inner is not None:
            children.append(inner)
        many = getattr(current, "datasets", None)
        if isinstance(many, list | tuple):
            children.extend(many)
        for child in children:
            if id(child) in seen:
                continue
            seen.add(id(child))
            yield child
            if not isinstance(child, KeyedDataset):
                stack.append(child)


def _depth(dataset: object) -> int:
    """How many rankaug datasets are nested inside ``dataset`` (including itself)."""
    depth = 0
    for inner in inner_datasets(dataset):
        if isinstance(inner, KeyedDataset):
            depth = max(depth, inner.depth)
    return depth + int(isinstance(dataset, KeyedDataset))


class KeyedDataset(Dataset[T_co], Generic[T_co]):
    """Base class of rankaug's wrappers: index checks, context, keys, epoch, errors.

    Subclasses implement :meth:`_apply`.

    Args:
        dataset: A map-style dataset (``__getitem__`` and ``__len__``).
        seed: The run's base seed, ``0 <= seed < 2**64``.
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"`` (see the module
            docstring). Defaults to ``"stream"``.
        rank: The rank for the key; ``None`` resolves it (see :mod:`rankaug.context`).
            Defaults to ``None``.
        stream: The stream word or name; ``None`` derives one from the class name and
            how many rankaug wrappers sit inside this one, so stacked wrappers draw
            independent streams. Defaults to ``None``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range.
    """

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
    ) -> None:
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(
                "dataset must be a map-style dataset with __getitem__ and __len__, got "
                f"{type(dataset).__name__}"
            )
        self.dataset = dataset
        self.seed = check_uint(seed, "seed", 64)
        self.keying: Keying = check_keying(keying)
        self.rank = None if rank is None else check_uint(rank, "rank", 32)
        self.depth = _depth(self)
        if stream is None:
            stream = f"{type(self).__module__}.{type(self).__qualname__}/{self.depth}"
        self.stream = stream_id(stream)
        self._epoch = SharedEpoch()
        self._captured_rank: int | None = None
        self._rank_cache: tuple[int, bool, int] | None = None
        self._streams: dict[tuple[int, int, int, int], KeyedRandom] = {}
        seed_lo, seed_hi = self.seed & _MASK32, self.seed >> 32
        domain = Domain.STREAM if self.keying == "stream" else Domain.SAMPLE
        if self.keying == "sample_rank":
            domain = Domain.SAMPLE_RANK
        words = [MAGIC, domain, seed_lo, seed_hi, self.stream, 0, 0, 0]
        if domain == Domain.SAMPLE_RANK:
            words.append(0)
        self._words = np.array(words, dtype=np.uint32)

    # ------------------------------------------------------------------ epoch
    @property
    def epoch(self) -> int:
        """The epoch the keys use (shared with every DataLoader worker)."""
        return self._epoch.get()

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch for this wrapper and every rankaug wrapper inside it.

        Call it in the main process before ``iter(loader)`` (that is, before the
        ``for`` loop over the loader), like ``DistributedSampler.set_epoch``. It reaches
        persistent workers too.

        Args:
            epoch: An integer in ``[0, 2**32)``.

        Raises:
            TypeError: If ``epoch`` is not an integer.
            ValueError: If it is out of range.
        """
        epoch = check_uint(epoch, "epoch", 32)
        self._epoch.set(epoch)
        for inner in inner_datasets(self):
            if isinstance(inner, KeyedDataset):
                inner.set_epoch(epoch)

    # ---------------------------------------------------------------- context
    def _rank_now(self) -> int:
        """The rank, resolved once per process and process-group state (it is per sample)."""
        if self.rank is not None:
            return self.rank
        initialized = dist.is_available() and dist.is_initialized()
        pid = os.getpid()
        cached = self._rank_cache
        if cached is not None and cached[0] == pid and cached[1] == initialized:
            return cached[2]
        rank = resolve_rank(None, self._captured_rank)
        self._rank_cache = (pid, initialized, rank)
        return rank

    def key_random(self, index: int, *, rank: int, worker_id: int, epoch: int) -> KeyedRandom:
        """The random state for one sample, fresh for ``"sample"`` keyings.

        For ``"stream"`` keying this is the worker's stream, created on first use in
        each process (never inherited from the parent) and continued afterwards; a new
        epoch starts a new stream.

        Args:
            index: The sample index (in range).
            rank: The rank.
            worker_id: The worker id.
            epoch: The epoch.

        Returns:
            The keyed random state.
        """
        if self.keying == "stream":
            owner = (os.getpid(), rank, worker_id, epoch)
            keyed = self._streams.get(owner)
            if keyed is None:
                words = self._words.copy()
                words[5] = rank
                words[6] = worker_id
                words[7] = epoch
                keyed = KeyedRandom(np.random.SeedSequence(words))
                self._streams = {owner: keyed}
            return keyed
        words = self._words.copy()
        words[5] = epoch
        words[6] = index & _MASK32
        words[7] = index >> 32
        if self.keying == "sample_rank":
            words[8] = rank
        return KeyedRandom(np.random.SeedSequence(words))

    def _check_index(self, index: object) -> int:
        try:
            if isinstance(index, bool | np.bool_):
                raise TypeError
            position = operator.index(index)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"index must be an integer, got {index!r} of type {type(index).__name__}"
            ) from None
        length = len(self.dataset)
        if position < 0:
            position += length
        if not 0 <= position < length:
            raise IndexError(f"index {index} is out of range for a dataset of length {length}")
        return position

    # ------------------------------------------------------------------ items
    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> T_co:
        position = self._check_index(index)
        info = get_worker_info()
        worker_id = 0 if info is None else info.id
        rank = self._rank_now()
        epoch = self._epoch.get()
        keyed = self.key_random(position, rank=rank, worker_id=worker_id, epoch=epoch)
        return self._apply(position, keyed, rank=rank, worker_id=worker_id, epoch=epoch)

    def _apply(
        self, index: int, keyed: KeyedRandom, *, rank: int, worker_id: int, epoch: int
    ) -> T_co:
        raise NotImplementedError

    def _load(self, index: int, *, rank: int, worker_id: int, epoch: int, at: int) -> Any:
        """``self.dataset[index]``, with failures re-raised as :class:`SampleError`.

        ``at`` is the index being produced (a mosaic loads several).
        """
        try:
            return self.dataset[index]
        except SampleError:
            raise
        except Exception as error:
            raise SampleError.at(
                f"dataset[{index}]",
                index=at,
                rank=rank,
                worker_id=worker_id,
                epoch=epoch,
                error=error,
            ) from error

    # ---------------------------------------------------------------- pickling
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_streams"] = {}
        state["_rank_cache"] = None
        # Pickled for a spawned worker: record the rank while the process group is
        # still reachable; the worker has none.
        if self.rank is None:
            rank = process_group_rank()
            if rank is not None:
                state["_captured_rank"] = rank
        return state

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self.dataset).__name__} of {len(self)}, "
            f"seed={self.seed}, keying={self.keying!r}, epoch={self.epoch})"
        )
