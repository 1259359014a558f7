"""The base of rankaug's wrappers: one keyed random state per sample, from its context.

Every ``__getitem__`` follows one path: check the index, resolve the context (rank,
worker, epoch: see :mod:`rankaug.context`; the epoch is
:func:`~rankaug.sample_epoch.sample_epoch`'s), derive the key's random state, then let
the subclass draw and apply (:meth:`KeyedDataset.augment`).

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

Resuming mid-epoch: :meth:`KeyedDataset.state_dict` holds each stream's position (for
``"stream"`` keying) of every rankaug wrapper in the tree; see
:mod:`rankaug.keyed_state`, which also says what a pickled wrapper leaves out.
"""

from __future__ import annotations

from threading import current_thread
from typing import Any, Final, Generic, TypeVar

import torch.distributed as dist
from torch.utils.data import Dataset, get_worker_info

from rankaug import _process, checks, nesting, stacking, stream_start, streams
from rankaug._fixed import Changes, FixedSettings, own_count
from rankaug._group import default_group
from rankaug.context import (
    DISTRIBUTED,
    RankSetting,
    ResolvedContext,
    SampleContext,
    check_rank,
    pinned_rank,
    resolve_rank,
)
from rankaug.epoch import EpochIndex, carry_epoch, drop_epoch
from rankaug.errors import SampleError
from rankaug.keyed_state import KeyedState
from rankaug.keys import Domain, KeyedRandom, Keying, KeyTemplate, check_keying, stream_id
from rankaug.sample_epoch import EpochFallback, sample_epoch

__all__ = ["KeyedDataset"]

T_co = TypeVar("T_co", covariant=True)
_DOMAINS: Final = {  # each keying's domain, and the key's words after (seed, stream)
    "stream": (Domain.STREAM, ("rank", "worker_id", "epoch")),
    "sample": (Domain.SAMPLE, ("epoch", "index")),
    "sample_rank": (Domain.SAMPLE_RANK, ("epoch", "index", "rank")),
}


class KeyedDataset(KeyedState, FixedSettings, Dataset[T_co], Generic[T_co]):
    """Base class of rankaug's wrappers: index checks, context, keys, epoch, errors, state.

    A subclass implements :meth:`augment`, which receives the sample's
    :class:`~rankaug.SampleContext` and its keyed random state, loads what it needs
    with :meth:`load`, and draws only from that state.

    ``dataset``, ``seed``, ``keying`` and ``stream`` are fixed when the wrapper is made
    (the key's template is made from them): assigning one afterwards raises an
    ``AttributeError``; make a new wrapper instead.

    Args:
        dataset: A map-style dataset (``__getitem__`` and ``__len__``).
        seed: The run's base seed, ``0 <= seed < 2**64``.
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"`` (see the module
            docstring).
        rank: The rank for the key; ``None`` resolves it (see :mod:`rankaug.context`).
        stream: The stream word or name; ``None`` derives one from the class (module
            and name) and how many rankaug wrappers sit inside this one, so stacked
            wrappers draw independent streams (:mod:`rankaug.stacking` guards it).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range, or a rankaug wrapper inside has
            the same seed, stream and keying.

    Warns:
        RankaugWarning: If this wrapper keys per sample and one inside has
            ``keying="stream"``.

    Example: a keyed augmentation of your own, here salt noise on a fraction of pixels.

        >>> import numpy as np
        >>> from rankaug import KeyedDataset
        >>> class SaltNoise(KeyedDataset):
        ...     def augment(self, context, keyed):
        ...         image = self.load(context.index, context)["image"].copy()
        ...         salt = keyed.generator.random(image.shape[:2]) < 0.05
        ...         image[salt] = 255
        ...         return {"image": image}
        >>> data = [{"image": np.zeros((16, 16), np.uint8)} for _ in range(4)]
        >>> noisy = SaltNoise(data, seed=0, keying="sample")
        >>> bool((noisy[2]["image"] == noisy[2]["image"]).all())  # same key, same noise
        True
    """

    fixed_settings = frozenset({"dataset", "seed", "keying", "stream", "depth"})
    """The attributes fixed when the wrapper is made (assigning one is refused)."""
    made_with = "_changes"  # set after them: a subclass may have set them before
    rank = RankSetting()
    """The rank given, or ``None`` (resolved); setting one (checked) puts it to use."""
    _rank: int | None
    _rank_checked: bool
    _rank_cache: tuple[int, bool, int] | None

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
    ) -> None:
        self.dataset = checks.map_dataset(dataset)
        self.seed = checks.uint(seed, "seed", 64)
        self.keying: Keying = check_keying(keying)
        self.rank = rank  # checked (and compared with the process's: RankSetting)
        self.depth = nesting.depth(self, KeyedDataset)
        self.stream = stream_id(nesting.default_stream(type(self), self.depth)
                                if stream is None else stream)  # fmt: skip
        self._epoch = EpochFallback()
        self._changes = Changes()  # settings assigned since: a worker's copy is then stale
        self._captured_rank: int | None = None
        self._class_name = type(self).__name__  # in warnings: read per sample, from here
        # (pid, worker id, rank, epoch) -> the stream: the few each worker used last
        # (rankaug.streams.keep), thread-safe for workers that share a process
        self._streams = streams.Streams()
        self._drawers: stream_start.Drawers = {}  # who drew from each last (not pickled)
        self._saved_ranks: streams.SavedRanks = {}  # those load_state_dict restored
        domain, words = _DOMAINS[self.keying]
        template = KeyTemplate(domain, seed=self.seed, stream=self.stream)
        self._key_builder = template.builder(*words)
        self._stacking_warned: set[str] = set()
        self._stacking_epoch: int | None = None  # per-sample keyings: checked in this epoch
        stacking.check_built(self)

    # ------------------------------------------------------------------ epoch
    @property
    def epoch(self) -> int:
        """The epoch last given to :meth:`set_epoch` (indices that carry one win)."""
        return self._epoch.get()

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch for this wrapper and every rankaug wrapper inside it.

        The fallback for code that calls ``set_epoch`` itself: an index from
        :class:`~rankaug.EpochSampler` carries its own epoch and wins over this one. Call
        it in the main process before ``iter(loader)`` (that is, before the ``for``
        loop), like ``DistributedSampler.set_epoch``; it reaches persistent workers too.

        Args:
            epoch: An integer in ``[0, 2**32)``.

        Raises:
            TypeError: If ``epoch`` is not an integer.
            ValueError: If it is out of range.
        """
        epoch = checks.uint(epoch, "epoch", 32)
        self._epoch.set(epoch)
        for inner in nesting.walk(self, KeyedDataset):  # each goes on below itself
            if isinstance(inner, KeyedDataset):
                inner.set_epoch(epoch)

    # ---------------------------------------------------------------- context
    def _rank_now(self) -> int:
        """The rank, resolved once per process and process-group state (it is per sample)."""
        given = self._rank
        if given is not None:
            if DISTRIBUTED and dist.is_initialized():  # built before init_process_group
                check_rank(given)
                self._rank_checked = True
            return given
        initialized = default_group() is not None  # dist.is_initialized(), frameless
        pid = _process._pid  # current_pid() without its call
        cached = self._rank_cache
        if cached is not None and cached[0] == pid and cached[1] is initialized:
            return cached[2]
        rank = resolve_rank(None, self._captured_rank)
        self._rank_cache = (pid, initialized, rank)
        return rank

    def context(self, index: object) -> SampleContext:
        """The context of one ``__getitem__``: position, rank, worker and epoch.

        Args:
            index: The index as the caller gave it (an ``int``, a numpy integer or an
                :class:`~rankaug.EpochIndex`; negative indices count from the end).

        Returns:
            The context; its rank, for the per-sample keyings, is the one a replay
            pinned (:class:`~rankaug.context.pinning_rank`), else this wrapper's.

        Raises:
            TypeError: If ``index`` is not an integer.
            IndexError: If it is out of range.
        """
        length = len(self.dataset)
        if type(index) is int and 0 <= index < length:  # checks.index's common cases
            position = index
        elif isinstance(index, EpochIndex) and 0 <= index < length:
            position = index.real  # the plain int
        else:
            position = checks.index(index, length)
        info = get_worker_info()
        epoch = sample_epoch(index, self._epoch, info is not None, self._class_name)
        worker_id = 0 if info is None else info.id
        # a replay's pinned rank, the record's (a stream's keeps its own: none replays)
        rank = None if self.keying == "stream" else pinned_rank()
        if rank is None:
            rank = self._rank if self._rank is not None else self._rank_now()
        return ResolvedContext(position, rank=rank, worker_id=worker_id, epoch=epoch)

    def key_random(self, context: SampleContext) -> KeyedRandom:
        """The random state of one sample.

        For ``"stream"`` keying this is the worker's stream of the sample's rank and
        epoch, created on first use in each process (never inherited from the parent)
        and continued afterwards, also when the worker comes back to that epoch (it
        keeps the :data:`~rankaug.streams.KEPT` it drew from last). For the per-sample
        keyings it is fresh.

        Args:
            context: The sample's context.

        Returns:
            The keyed random state.

        Raises:
            ValueError: If a state loaded on another rank holds this stream's position.
        """
        if self.keying == "stream":
            key = (_process._pid, context.worker_id, context.rank, context.epoch)  # current_pid()
            keyed = self._streams.get(key)
            if keyed is None:
                return self._start(key, context)
            if key != self._streams.last:  # another stream drawn from since: this one last
                streams.used(self._streams, key, stream_start.LOCK)
            if self._drawers.get(key) is not current_thread():  # drawn()'s first rule, no call
                stream_start.drawn(self._drawers, self._streams, key, self._class_name)
            return keyed
        if not self._rank_checked and self._rank is not None:
            self._rank_now()  # cheap beside the Generator made for every sample
        if context.epoch != self._stacking_epoch:  # an epoch's first sample here
            stacking.check_enclosing(self)
            self._stacking_epoch = context.epoch
        if self.keying == "sample":
            return KeyedRandom(self._key_builder(context.epoch, context.index))
        return KeyedRandom(self._key_builder(context.epoch, context.index, context.rank))

    def _start(self, key: tuple[int, int, int, int], context: SampleContext) -> KeyedRandom:
        """Start the stream ``key`` (a worker's first sample of an epoch), checked first."""
        if not self._rank_checked and self._rank is not None:
            self._rank_now()  # a given rank, checked once a process group is up
        if self._saved_ranks:
            streams.check_rank(self._saved_ranks, key, type(self).__name__)
        stacking.check_enclosing(self)
        stream_start.check(type(self).__name__)
        stream_start.check_saved(self)
        with stream_start.LOCK:
            keyed = self._streams.get(key)  # another thread may have started it
            if keyed is None:
                if key in self._streams.dropped:
                    stream_start.restarted(type(self).__name__, key)
                made = self._key_builder(context.rank, context.worker_id, context.epoch)
                keyed = streams.keep(self._streams, key, KeyedRandom(made))
        stream_start.drawn(self._drawers, self._streams, key, self._class_name)
        return keyed

    # ------------------------------------------------------------------ items
    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> T_co:
        changes = self._changes
        if changes.read() != changes.seen:  # a persistent worker's copy, made before
            raise changes.stale(self)
        context = self.context(index)
        return self.augment(context, self.key_random(context))

    def augment(self, context: SampleContext, keyed: KeyedRandom) -> T_co:
        """Make one output sample: the extension hook of every keyed wrapper.

        Draw every random choice from ``keyed`` (its ``generator``, its ``py_random``,
        or :meth:`~rankaug.keys.KeyedRandom.torch_seed`), never from global state; load
        inputs with :meth:`load`; wrap your own steps in ``context.guard("...")`` so a
        failure names the sample.

        Args:
            context: Index, rank, worker and epoch of the sample.
            keyed: The sample's random state (see :meth:`key_random`).

        Returns:
            The sample.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement augment()")

    def load(self, index: int, context: SampleContext) -> Any:
        """``self.dataset[index]``, with the epoch handed down and failures named.

        Rankaug wrappers inside (also behind ``Subset`` or ``ConcatDataset``) key their
        draws with ``context.epoch``. A failure is re-raised as
        :class:`~rankaug.SampleError` naming ``dataset[index]`` and the context.

        Args:
            index: The position to load (a partner's, for multi-sample wrappers).
            context: The context of the sample being made.

        Returns:
            The wrapped dataset's sample.
        """
        # SampleContext.loading written out: it runs for every sample and every tile
        token = carry_epoch(context.epoch)
        try:
            return self.dataset[index]
        except SampleError:
            raise
        except Exception as error:
            raise context.failure(f"dataset[{index}]", error) from error
        finally:
            drop_epoch(token)

    # ---------------------------------------------------------------- pickling
    __copy__ = own_count  # a count of assignments of its own (see own_count)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self.dataset).__name__} of {len(self)}, "
            f"seed={self.seed}, keying={self.keying!r}, epoch={self.epoch})"
        )
