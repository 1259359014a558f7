"""``EpochSampler``: the epoch of each pass, decided once and carried by every index.

Wrap the sampler you already use. Each pass over the wrapper yields the wrapped
sampler's indices as :class:`~rankaug.EpochIndex` values carrying the epoch of that
pass, fixed when the pass begins in the main process. Every rankaug wrapper keys its
draws with the epoch of the index it is given, so no worker, persistent or not, forked
or spawned, can mix epochs within a pass, and nobody has to call ``set_epoch`` on the
dataset at the right moment.

A pass begins when its first index is drawn (a DataLoader iterator may call
``iter()`` on its sampler more than once; only the iterator it reads from counts).
Loaders draw ahead: workers prefetch, an infinite loader (ultralytics'
``InfiniteDataLoader``) begins the next pass before the trainer's ``set_epoch``, Lightning
builds the iterator before it calls ``set_epoch``, a loader may be reset and its drawn
indices thrown away. The epoch of a pass:

* the first pass has ``epoch``; a restored state (``load_state_dict``, a copy) resumes
  its pass where it was;
* each new pass has the previous one's epoch plus one, so a plain
  ``for epoch ...: for batch in loader`` loop needs no call at all;
* ``set_epoch(e)`` (by you, Lightning, accelerate or ultralytics' trainer) names the
  epoch the caller reads next. When that pass has already begun (the running pass, or
  a pass of epoch ``e`` the loader began after the one the previous call named), the
  call changes nothing; otherwise it sets the epoch of the next pass and is forwarded to
  the wrapped sampler (a ``DistributedSampler`` reshuffles);
* a pass that begins after the pass named by ``set_epoch(e)`` was thrown away unread
  (nothing drawn since the call, the latest pass unfinished: ultralytics'
  ``loader.reset()`` right after ``set_epoch``) takes epoch ``e`` again;
* an iterator that torchdata's ``StatefulDataLoader`` restores from a state saved at the
  end of its pass gives nothing, so the loader's next iterator begins the next epoch.

Two calls cannot be made right, and warn (:class:`~rankaug.RankaugWarning`): a
``set_epoch(e)`` that arrives while a pass of another epoch, begun since the previous
call, is running (its indices are with the workers already: build the sampler with
``epoch=``), and a ``set_epoch(e)`` that goes back to an epoch that already ran (it
replays that epoch: after a resume, accelerate's own count starts again at 0).

It may also wrap a batch sampler, as ``DataLoader(batch_sampler=EpochSampler(
BatchSampler(DistributedSampler(train), batch_size, drop_last)))``: each batch then
comes as an :class:`~rankaug.epoch.EpochBatch` of EpochIndex values, which a worker
receives for the price of one epoch per batch instead of one reduce per index
(``set_epoch`` reaches the sampler inside the batch sampler).

Over a ``DistributedSampler`` (or a subclass of it) it is itself one, and so is a
subclass of ``EpochSampler`` of yours, so Lightning's and Fabric's default
``use_distributed_sampler=True`` leave it alone (they shard any other sampler again);
should a ``DistributedSampler`` shard its shard anyway (or accelerate's ``prepare``,
which shards every loader's batches), it warns once.

``state_dict()`` holds the epoch and position of the running pass; after
``load_state_dict()`` the next pass resumes there, so torchdata's
``StatefulDataLoader`` resumes mid-epoch exactly, and at an epoch's end too. A copy or a
pickle taken mid-pass resumes there too.
"""

from __future__ import annotations

import copyreg
import sys
from collections.abc import Generator, Iterable, Iterator
from typing import Any, Final

from torch.utils.data import DistributedSampler, Sampler

from rankaug import checks, passes, sampler_read
from rankaug._fixed import FixedSettings
from rankaug.epoch import EpochIndex, epoch_class
from rankaug.sampler_done import complete, exact_length, given_whole
from rankaug.sampler_epochs import Epochs, lightning_validation
from rankaug.sampler_pass import (
    END,
    Pass,
    PassIterator,
    Ticket,
    carry,
    check_state,
    put_generator,
    start,
)
from rankaug.sampler_sharding import Forwarded, warn_sharded
from rankaug.sampler_state import finish_restored, next_pass_state, pass_state, resumed_pass

__all__ = ["EpochSampler"]


class EpochSampler(FixedSettings, Sampler[EpochIndex]):
    """A sampler whose indices carry the epoch of their pass (see the module docstring).

    Args:
        sampler: Any sampler or iterable of indices: a ``DistributedSampler``, a
            ``RandomSampler``, a list. Its order for a pass should depend only on its
            epoch (``set_epoch``) or be restorable (``state_dict``), for exact resumes.
        epoch: The epoch of the first pass.

    Raises:
        TypeError: If ``sampler`` is not iterable or is a one-shot iterator (a
            generator: every pass after the first would be empty), or ``epoch`` is not
            an integer.
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

    fixed_settings = frozenset({"sampler"})
    """Fixed when made: the class (a ``DistributedSampler`` or not) and the passes follow it."""
    made_with = "_warned_sharding"  # set last: a subclass may have set the sampler before

    def __init__(self, sampler: Iterable[int], *, epoch: int = 0) -> None:
        if not isinstance(sampler, Iterable):
            raise TypeError(
                "sampler must be a sampler or an iterable of indices, got "
                f"{sampler!r} of type {type(sampler).__name__}"
            )
        if isinstance(sampler, Iterator):  # one pass only: every later epoch would be empty
            raise TypeError(
                "sampler must be a sampler or an iterable of indices that can be iterated "
                f"once per epoch, got a one-shot iterator, {sampler!r} of type "
                f"{type(sampler).__name__}: pass the sampler or list it came from"
            )
        self.sampler = sampler
        _follow(self)
        self._epochs = Epochs(checks.uint(epoch, "epoch", 32))
        self._current: Pass | None = None
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
        return self._epochs.upcoming()

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
        """Name the epoch read next: that of the next pass, unless it has begun.

        A call for a pass already begun (the running pass, or one the loader began
        ahead of the call) changes nothing. A call that arrives while a pass of another
        epoch, begun since the previous call, runs, or that goes back to an epoch that
        already ran, warns (see the module docstring); but Lightning's, for an evaluation
        loader, names the next pass (each validation run reads its epoch again). A call
        for another epoch than a loaded state's drops that state, but a state saved
        between passes still gives the wrapped sampler's generator back (the next pass's
        order comes from it).

        Args:
            epoch: An integer in ``[0, 2**32)``.

        Raises:
            TypeError: If ``epoch`` is not an integer.
            ValueError: If it is out of range.
        """
        epoch = checks.uint(epoch, "epoch", 32)
        if self._resume is not None:
            if int(self._resume["epoch"]) == epoch:
                return  # Lightning calls it again for the resumed epoch
            if not int(self._resume["position"]) and "generator" in self._resume:
                put_generator(self.sampler, self._resume["generator"])  # the next order's
            self._resume = None
        if self._epochs.set_epoch(epoch, rerun=lightning_validation(sys._getframe(1))):
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
        # The pass begins, and its epoch is fixed, when its first index is drawn. DataLoader
        # iterators call iter() on their sampler more than once and use only the last one
        # (torchdata's StatefulDataLoader starts each).
        ticket = Ticket(self)
        made: PassIterator = start(ticket, self._run(ticket))
        return made

    def _run(self, ticket: Ticket) -> Generator[Any, None, None]:
        run = self._begin(ticket.loaded)
        if run is None:  # restored at the end of its pass
            return
        ticket.run = run
        sampler_read.began(self, run, sys._getframe(1))
        make = epoch_class(run.epoch)
        passes.begin(id(run), run.epoch)
        end = passes.end  # bound now: a pass dropped at interpreter exit outlives the module
        total = exact_length(self.sampler)  # complete at its last index (sampler_done)
        try:
            value = None
            for value in run.inner:  # type: ignore[union-attr]
                run.position += 1
                if run.position == total:  # a loader may ask no more (Lightning's val loop)
                    given_whole(run, value, sys._getframe(1))
                yield make(value) if type(value) is int else carry(value, make)
            complete(run, value, sys._getframe(1), self._epochs)
        finally:  # also when the pass is closed or dropped unfinished
            end(id(run))
            run.ended = True
            if run.done:
                run.inner = None
                if self._current is run:
                    self._current = None

    def _begin(self, loaded: dict[str, Any] | None) -> Pass | None:
        resume: dict[str, Any] | None
        if loaded is None:
            resume, self._resume = self._resume, None
        else:  # this iterator was restored (torchdata's StatefulDataLoader)
            if loaded["pass"] == "finished":
                return None
            resume, pending = loaded, self._resume
            if pending is not None and (pending["epoch"], pending["position"]) == (
                resume["epoch"], resume["position"],
            ):  # fmt: skip
                self._resume = None  # the sampler's state, saved with it: this is its pass
        if resume is None:
            epoch, position = self._epochs.upcoming(), 0
        else:
            epoch, position = int(resume["epoch"]), int(resume["position"])
        if epoch >= END:
            if loaded is None:
                self._resume = resume
            raise ValueError(
                f"EpochSampler's epoch range is exhausted: the pass after epoch {END - 1} "
                "would have epoch 2**32, beyond the 32-bit epoch of every key, and repeating "
                "an epoch would replay its augmentations. Call set_epoch(e) with "
                "0 <= e < 2**32 to run more passes."
            )
        self._forward(epoch)
        if not self._warned_sharding:
            self._warned_sharding = warn_sharded(self, self.sampler, sys._getframe(2))
        run = resumed_pass(self.sampler, epoch, position, resume)
        self._current = run
        self._epochs.began(run, restored=resume is not None)
        self._epochs.next = epoch + 1 if resume is None else int(resume["next_epoch"])
        return run

    def _finish(self, saved: Any) -> None:  # a restored iterator's pass ended (sampler_pass)
        finish_restored(self.sampler, saved)

    # ------------------------------------------------------------------ state
    def _pass_state(self, run: Pass) -> dict[str, Any]:  # (its iterator's too: sampler_pass)
        return pass_state(run, self._epochs.next)

    def state_dict(self) -> dict[str, Any]:
        """The epoch and position of the running pass (or the start of the next one).

        Returns:
            ``{"format", "epoch", "position", "next_epoch"}``, plus ``"sampler_iter"``
            when the wrapped sampler's iterator has a ``state_dict`` of its own, and
            ``"generator"``: the state of the wrapped sampler's ``generator`` (a
            ``RandomSampler``'s) that the pass shuffles from, as it began or, for a pass
            not begun yet, now (without it, a resumed pass drew a fresh generator's
            order: the first epoch's).
        """
        current = self._current
        if current is not None and not current.done:
            return self._pass_state(current)
        if self._resume is not None:
            return dict(self._resume)
        return next_pass_state(self.sampler, self._epochs.upcoming())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Make the next pass resume where :meth:`state_dict` was taken.

        Args:
            state: A dict from :meth:`state_dict`.

        Raises:
            ValueError: If ``state`` is not such a dict.
        """
        resume = check_state(state)
        self._resume = resume
        self._current = None
        self._epochs.restored(resume["epoch"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        current = self._current
        if current is not None and not current.done:  # the copy resumes the running pass
            state["_resume"] = self.state_dict()
        state["_current"] = None  # the passes and their iterators do not travel
        state["_epochs"] = self._epochs.travelling()
        return state

    def __repr__(self) -> str:
        return f"EpochSampler({self.sampler!r}, epoch={self.epoch})"


class _DistributedEpochSampler(Forwarded, EpochSampler, DistributedSampler[int]):  # type: ignore[override]
    """``EpochSampler(DistributedSampler(...))``, itself a ``DistributedSampler``.

    Lightning (``use_distributed_sampler=True``, its default) and Fabric replace a
    loader's sampler that is not a ``DistributedSampler`` by their
    ``DistributedSamplerWrapper``, which shards the shard again. Being one, this sampler
    is left alone, so each rank gets exactly its shard. Its ``DistributedSampler``
    attributes (``num_replicas``, ``rank``, ``shuffle``, ``seed``...) are the wrapped
    sampler's, read and assigned there (:class:`~rankaug.sampler_sharding.Forwarded`);
    everything else is :class:`EpochSampler`'s.
    """

    shown_as = "EpochSampler"  # the class the user made, in messages


_VARIANTS: dict[type[EpochSampler], type[EpochSampler]] = {}


def _follow(made: EpochSampler) -> None:
    """Over a ``DistributedSampler``, make ``made`` one too: its class's :func:`_distributed`.

    Once its sampler is set, in the constructor, and not in ``__new__``: a subclass of
    yours may take other arguments than EpochSampler's (a dataset first, keyword-only
    ones) or make the sampler it wraps itself, so only the sampler set tells.
    """
    kind = type(made)
    if isinstance(made.sampler, DistributedSampler) and not issubclass(kind, DistributedSampler):
        object.__setattr__(made, "__class__", _distributed(kind))


def _distributed(kind: type[EpochSampler]) -> type[EpochSampler]:
    """``kind`` over a ``DistributedSampler``: a ``kind`` that is also one.

    :class:`_DistributedEpochSampler` for EpochSampler; for a subclass of yours, a class
    of its name made (once) of it and that one, so that the frameworks leave it alone
    too, your methods coming first. It pickles and copies as your class, made again as
    this one (:func:`_made_again`).
    """
    if kind is EpochSampler:
        return _DistributedEpochSampler
    made = _VARIANTS.get(kind)
    if made is not None:
        return made

    def __reduce_ex__(self: EpochSampler, protocol: Any) -> Any:
        reduced = super(variant, self).__reduce_ex__(protocol)
        function, arguments, *rest = reduced if isinstance(reduced, tuple) else (reduced, ())
        if function is _NEWOBJ:  # (variant, *args): the variant has no name to pickle
            return (_made_again, (kind, arguments[1:], {}), *rest)
        if function is _NEWOBJ_EX:  # (variant, args, kwargs)
            return (_made_again, (kind, *arguments[1:]), *rest)
        return reduced

    namespace = {"__module__": kind.__module__, "__qualname__": kind.__qualname__,
                 "__doc__": kind.__doc__, "shown_as": kind.shown_as,
                 "__reduce_ex__": __reduce_ex__}  # fmt: skip
    variant: type[EpochSampler] = type(kind.__name__, (kind, _DistributedEpochSampler), namespace)
    _VARIANTS[kind] = variant
    return variant


# copyreg's, which object.__reduce_ex__ gives (not in typeshed's copyreg)
_NEWOBJ: Final = getattr(copyreg, "__newobj__")  # noqa: B009
_NEWOBJ_EX: Final = getattr(copyreg, "__newobj_ex__")  # noqa: B009


def _made_again(kind: type[EpochSampler], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Unpickle a subclass's distributed variant (:func:`_distributed`): ``kind``'s again."""
    made = kind.__new__(kind, *args, **kwargs)
    object.__setattr__(made, "__class__", _distributed(kind))
    return made
