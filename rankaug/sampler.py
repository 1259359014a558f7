"""``EpochSampler``: the epoch of each pass, decided once and carried by every index.

Wrap the sampler you already use. Each pass over the wrapper yields the wrapped
sampler's indices as :class:`~rankaug.EpochIndex` values carrying the epoch of that
pass, fixed when the pass begins in the main process. Every rankaug wrapper keys its
draws with the epoch of the index it is given, so no worker, persistent or not, forked
or spawned, can mix epochs within a pass, and nobody has to call ``set_epoch`` on the
dataset at the right moment.

A pass begins when its first index is drawn (a DataLoader iterator may call
``iter()`` on its sampler more than once; only the iterator it reads from counts). The
epoch of each pass:

* the first pass has ``epoch`` (pass ``epoch=self.current_epoch`` when the loader is
  built after a checkpoint is restored);
* each new pass has the previous one's epoch plus one, so a plain
  ``for epoch ...: for batch in loader`` loop needs no call at all;
* ``set_epoch(e)``, called by you, Lightning, accelerate or ultralytics' trainer, sets
  the epoch of the next pass and is forwarded to the wrapped sampler (a
  ``DistributedSampler`` reshuffles). A ``set_epoch(e)`` that arrives while the pass of
  epoch ``e`` is already running refers to that pass and changes nothing: frameworks
  that build the iterator first (Lightning) or prefetch the next pass before the call
  (ultralytics' ``InfiniteDataLoader``) still get each epoch exactly once.

It may also wrap a batch sampler, as ``DataLoader(batch_sampler=EpochSampler(
BatchSampler(DistributedSampler(train), batch_size, drop_last)))``: each batch then
comes as an :class:`~rankaug.epoch.EpochBatch` of EpochIndex values, which a worker
receives for the price of one epoch per batch instead of one reduce per index
(``set_epoch`` reaches the sampler inside the batch sampler).

Over a ``DistributedSampler`` it is itself one, so Lightning's and Fabric's default
``use_distributed_sampler=True`` leave it alone (they shard any other sampler again);
should a ``DistributedSampler`` shard its shard anyway, it warns once.

``state_dict()`` holds the epoch and position of the running pass; after
``load_state_dict()`` the next pass resumes there, so torchdata's
``StatefulDataLoader`` resumes mid-epoch exactly. A copy or a pickle taken mid-pass
resumes there too.
"""

from __future__ import annotations

import itertools
import operator
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from torch.utils.data import DistributedSampler, Sampler

from rankaug import checks, passes
from rankaug.epoch import EpochBatch, EpochIndex, epoch_class
from rankaug.errors import RankaugWarning

__all__ = ["EpochSampler"]

_STATE_FORMAT: Final = "rankaug.EpochSampler/1"
_END: Final = 1 << 32  # the first epoch a key cannot hold: the range is exhausted there


class _Pass:
    """One pass over the wrapped sampler: its epoch and how many indices it has given."""

    __slots__ = ("done", "epoch", "inner", "position")

    def __init__(self, epoch: int, inner: Iterator[Any], position: int) -> None:
        self.epoch = epoch
        self.inner = inner
        self.position = position
        self.done = False


def _as_index(value: object) -> int:
    if type(value) is int:
        return value
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            "EpochSampler wraps a sampler of indices or a batch sampler (lists of "
            f"indices), but the wrapped sampler yielded {value!r:.80} of type "
            f"{type(value).__name__}"
        ) from None


def _carry(value: object, make: Callable[[int], EpochIndex]) -> EpochIndex | EpochBatch:
    """One item of the wrapped sampler with its epoch: an index, or a batch of them."""
    if isinstance(value, list | tuple):
        return EpochBatch([make(i if type(i) is int else _as_index(i)) for i in value])
    return make(_as_index(value))


class EpochSampler(Sampler[EpochIndex]):
    """A sampler whose indices carry the epoch of their pass (see the module docstring).

    Args:
        sampler: Any sampler or iterable of indices: a ``DistributedSampler``, a
            ``RandomSampler``, a list. Its order for a pass should depend only on its
            epoch (``set_epoch``) or be restorable (``state_dict``), for exact resumes.
        epoch: The epoch of the first pass.

    Raises:
        TypeError: If ``sampler`` is not iterable or ``epoch`` not an integer.
        ValueError: If ``epoch`` is out of range.

    Example:
        >>> from torch.utils.data import SequentialSampler
        >>> sampler = EpochSampler(SequentialSampler(range(3)))
        >>> list(sampler)
        [EpochIndex(0, epoch=0), EpochIndex(1, epoch=0), EpochIndex(2, epoch=0)]
        >>> [i.epoch for i in sampler]  # no set_epoch: each pass advances by one
        [1, 1, 1]
        >>> sampler.set_epoch(5)
        >>> next(iter(sampler)).epoch, len(sampler)
        (5, 3)
    """

    def __new__(cls, sampler: Iterable[int], *, epoch: int = 0) -> EpochSampler:
        """Over a ``DistributedSampler``, an EpochSampler that is also one (see below)."""
        if cls is EpochSampler and isinstance(sampler, DistributedSampler):
            cls = _DistributedEpochSampler
        made: EpochSampler = object.__new__(cls)
        return made

    def __init__(self, sampler: Iterable[int], *, epoch: int = 0) -> None:
        if not isinstance(sampler, Iterable):
            raise TypeError(
                "sampler must be a sampler or an iterable of indices, got "
                f"{sampler!r} of type {type(sampler).__name__}"
            )
        self.sampler = sampler
        self._next = checks.uint(epoch, "epoch", 32)
        self._current: _Pass | None = None
        self._resume: dict[str, Any] | None = None
        self._warned_sharding = False

    @property
    def epoch(self) -> int:
        """The epoch of the pass now running, or of the next pass when none is.

        ``2**32`` after a pass of epoch ``2**32 - 1``: the range is exhausted, and the next
        pass raises ``ValueError`` unless :meth:`set_epoch` starts over.
        """
        current = self._current
        if current is not None and not current.done:
            return current.epoch
        if self._resume is not None:
            return int(self._resume["epoch"])
        return self._next

    @property
    def generator(self) -> Any:
        """The wrapped sampler's ``generator`` (absent when it has none).

        Forwarded so that code which synchronises ``sampler.generator`` across processes
        (accelerate does, before each pass) reaches the sampler that shuffles.
        """
        try:
            return self.sampler.generator  # type: ignore[attr-defined]
        except AttributeError:
            raise AttributeError(
                f"the wrapped {type(self.sampler).__name__} has no generator"
            ) from None

    @generator.setter
    def generator(self, value: Any) -> None:
        self.sampler.generator = value  # type: ignore[attr-defined]

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch of the next pass, and forward it to the wrapped sampler.

        A call for the epoch of the pass already running changes nothing (see the
        module docstring).

        Args:
            epoch: An integer in ``[0, 2**32)``.

        Raises:
            TypeError: If ``epoch`` is not an integer.
            ValueError: If it is out of range.
        """
        epoch = checks.uint(epoch, "epoch", 32)
        current = self._current
        if current is not None and not current.done and current.epoch == epoch:
            return
        if self._resume is not None:
            if int(self._resume["epoch"]) == epoch:
                return
            self._resume = None
        self._next = epoch
        self._forward(epoch)

    def _forward(self, epoch: int) -> None:
        # the wrapped sampler's set_epoch, else that of the sampler a batch sampler holds
        for target in (self.sampler, getattr(self.sampler, "sampler", None)):
            set_epoch = getattr(target, "set_epoch", None)
            if callable(set_epoch):
                set_epoch(epoch)
                return

    def __len__(self) -> int:
        return len(self.sampler)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[EpochIndex]:
        # A generator: the pass begins, and its epoch is fixed, when its first index is
        # drawn. DataLoader iterators call iter() on their sampler more than once and
        # use only the last one (torchdata's StatefulDataLoader starts each).
        run = self._begin()
        make = epoch_class(run.epoch)
        passes.begin(id(run), run.epoch)
        end = passes.end  # bound now: a pass dropped at interpreter exit outlives the module
        try:
            for value in run.inner:
                run.position += 1
                yield make(value) if type(value) is int else _carry(value, make)  # type: ignore[misc]
        finally:  # also when the pass is closed or dropped unfinished
            end(id(run))
        run.done = True
        if self._current is run:
            self._current = None

    def _begin(self) -> _Pass:
        resume, self._resume = self._resume, None
        if resume is None:
            epoch, position = self._next, 0
        else:
            epoch, position = int(resume["epoch"]), int(resume["position"])
        if epoch >= _END:
            self._resume = resume
            raise ValueError(
                f"EpochSampler's epoch range is exhausted: the pass after epoch {_END - 1} "
                "would have epoch 2**32, beyond the 32-bit epoch of every key, and repeating "
                "an epoch would replay its augmentations. Call set_epoch(e) with "
                "0 <= e < 2**32 to run more passes."
            )
        self._next = epoch + 1 if resume is None else int(resume["next_epoch"])
        self._forward(epoch)
        if not self._warned_sharding:
            self._check_sharding(sys._getframe(2))
        inner = iter(self.sampler)
        inner_state = None if resume is None else resume.get("sampler_iter")
        if inner_state is not None and callable(getattr(inner, "load_state_dict", None)):
            inner.load_state_dict(inner_state)  # type: ignore[attr-defined]
        elif position:
            skipped = sum(1 for _ in itertools.islice(inner, position))
            if skipped != position:
                raise ValueError(
                    f"cannot resume at position {position} of epoch {epoch}: the wrapped "
                    f"sampler gives only {skipped} indices for that epoch"
                )
        run = _Pass(epoch, inner, position)
        self._current = run
        return run

    def _check_sharding(self, frame: Any) -> None:
        """Warn, once, when a DistributedSampler shards this sampler's shard again.

        Lightning (``use_distributed_sampler=True``) and Fabric wrap a loader's sampler in
        their ``DistributedSamplerWrapper`` unless it is a ``DistributedSampler``; that
        wrapper iterates this one (``frame``: who began the pass) and keeps every
        ``num_replicas``-th index of it.
        """
        inner = self.sampler
        sharded = [inner, getattr(inner, "sampler", None)]  # a batch sampler's sampler
        if not any(getattr(s, "num_replicas", 1) > 1 for s in sharded if s is not None):
            return
        for _ in range(6):
            if frame is None:
                return
            outer: object = frame.f_locals.get("self")
            if outer is not self and isinstance(outer, DistributedSampler):
                break
            frame = frame.f_back
        else:
            return
        if outer.num_replicas <= 1:
            return
        self._warned_sharding = True
        warnings.warn(
            f"{type(outer).__name__} (num_replicas={outer.num_replicas}) shards the indices "
            f"of EpochSampler({type(inner).__name__}), which are already one rank's shard: "
            f"each rank sees 1/{outer.num_replicas} of its shard. Lightning does this with "
            "Trainer(use_distributed_sampler=True), its default, around a sampler that is not "
            "a DistributedSampler: pass Trainer(use_distributed_sampler=False) (Fabric: "
            "setup_dataloaders(..., use_distributed_sampler=False)), or give the "
            "EpochSampler the DistributedSampler itself (EpochSampler(DistributedSampler(...)) "
            "is one, and is left alone).",
            RankaugWarning,
            stacklevel=2,
        )

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        """The epoch and position of the running pass (or the start of the next one).

        Returns:
            ``{"format", "epoch", "position", "next_epoch"}``, plus ``"sampler_iter"``
            when the wrapped sampler's iterator has a ``state_dict`` of its own.
        """
        current = self._current
        if current is not None and not current.done:
            state: dict[str, Any] = {
                "format": _STATE_FORMAT,
                "epoch": current.epoch,
                "position": current.position,
                "next_epoch": self._next,
            }
            inner_state = getattr(current.inner, "state_dict", None)
            if callable(inner_state) and callable(getattr(current.inner, "load_state_dict", None)):
                state["sampler_iter"] = inner_state()
            return state
        if self._resume is not None:
            return dict(self._resume)
        return {
            "format": _STATE_FORMAT,
            "epoch": self._next,
            "position": 0,
            "next_epoch": min(self._next + 1, _END),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Make the next pass resume where :meth:`state_dict` was taken.

        Args:
            state: A dict from :meth:`state_dict`.

        Raises:
            ValueError: If ``state`` is not such a dict.
        """
        if not isinstance(state, dict) or state.get("format") != _STATE_FORMAT:
            raise ValueError(
                f"state must be a dict from EpochSampler.state_dict() (format "
                f"{_STATE_FORMAT!r}), got {state!r:.200}"
            )
        resume = dict(state)
        # 2**32: a sampler whose epoch range is exhausted (its next pass refuses to run)
        resume["epoch"] = checks.integer(state.get("epoch"), "state['epoch']", low=0, high=_END)
        resume["next_epoch"] = checks.integer(
            state.get("next_epoch"), "state['next_epoch']", low=0, high=_END
        )
        resume["position"] = checks.integer(state.get("position"), "state['position']", low=0)
        self._resume = resume
        self._current = None

    def __getnewargs_ex__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.sampler,), {}  # for __new__, which picks the class by it

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        current = self._current
        if current is not None and not current.done:  # the copy resumes the running pass
            state["_resume"] = self.state_dict()
        state["_current"] = None  # the pass's iterator itself does not travel
        return state

    def __repr__(self) -> str:
        return f"EpochSampler({self.sampler!r}, epoch={self.epoch})"


_FORWARDED: Final = frozenset(
    {"dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last", "num_samples",
     "total_size"}
)  # fmt: skip


class _DistributedEpochSampler(EpochSampler, DistributedSampler[int]):  # type: ignore[override]
    """``EpochSampler(DistributedSampler(...))``, itself a ``DistributedSampler``.

    Lightning (``use_distributed_sampler=True``, its default) and Fabric replace a
    loader's sampler that is not a ``DistributedSampler`` by their
    ``DistributedSamplerWrapper``, which shards the shard again. Being one, this sampler
    is left alone, so each rank gets exactly its shard. Its ``DistributedSampler``
    attributes (``num_replicas``, ``rank``, ``shuffle``, ``seed``...) are the wrapped
    sampler's; everything else is :class:`EpochSampler`'s.
    """

    def __getattr__(self, name: str) -> Any:
        inner = vars(self).get("sampler")
        if name in _FORWARDED and inner is not None:
            return getattr(inner, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
