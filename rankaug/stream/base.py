"""``StreamDataset``: passes, keys, epochs and resume shared by the streaming wrappers.

Each ``iter()`` of a streaming wrapper is one pass in the process that runs it (a
DataLoader worker, or the main process as worker 0). Its epoch is the next epoch, one
for all the workers of the pass, from the :class:`~rankaug.stream.counter.PassCounter`
(0, 1, 2... without any call; :meth:`StreamDataset.set_epoch` sets it), handed to the
wrapped dataset's ``set_epoch`` (or to webdataset's ``detshuffle`` and
``ResampledShards`` stages) before ``iter(dataset)``, and to the rankaug wrappers the
stream calls while it is read (:class:`~rankaug.stream.source.Reading`): a pass of a
streaming wrapper that another's pass reads runs that pass's epoch.

Keys: ``keying="stream"`` is one Generator per ``(seed, stream, rank, worker, epoch)``
continued through the pass; ``keying="sample"`` one per ``(seed, stream, epoch,
sample id)`` (:data:`~rankaug.keys.Domain` ``SAMPLE_ID``), whatever the topology.

The per-sample work is the map-style wrapper's: the streaming wrapper holds one, over a
:class:`~rankaug.stream.view.Window` of the samples at hand, and calls its ``augment``
with the context and the key's random state.

Each worker's pass (:class:`~rankaug.stream.state.Pass`) and the state that saves and
resumes it (``state_dict``, ``load_state_dict``): :mod:`rankaug.stream.state`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from typing import Any, ClassVar, Generic, TypeVar

from torch.utils.data import IterableDataset

from rankaug import checks, nesting, passes, stacking, streams
from rankaug._fixed import FixedSettings, own_count
from rankaug.context import current_worker
from rankaug.epoch import carried_epoch
from rankaug.errors import RankaugWarning, outside_level
from rankaug.keyed import KeyedDataset
from rankaug.keys import Domain, KeyedRandom, KeyTemplate, check_keying
from rankaug.stream.counter import PassCounter
from rankaug.stream.detect import check_stream
from rankaug.stream.ids import SampleIds
from rankaug.stream.readers import Told, check_pickled, check_reader
from rankaug.stream.source import Reading, forward_epoch
from rankaug.stream.state import Pass, SavedPasses

__all__ = ["StreamDataset", "default_stream"]

T_co = TypeVar("T_co", covariant=True)


def default_stream(kind: type[Any], dataset: object) -> str:
    """The stream name of a streaming wrapper over ``dataset`` made without ``stream=``.

    Its map-style class ``kind``'s, at the depth of the rankaug wrappers nested in
    ``dataset`` (streaming and map-style, such as a map-style wrapper read through an
    ``IterableDataset`` that holds it as ``.dataset``) plus one, so stacked wrappers draw
    independent streams (one alone keeps the stream of ``kind`` over a
    :class:`~rankaug.stream.view.Window`).
    """
    return nesting.default_stream(kind, nesting.depth(dataset, _wrappers()) + 1)


def _wrappers() -> tuple[type[Any], ...]:
    """The wrappers a streaming wrapper's depth counts: streaming and map-style."""
    return (StreamDataset, KeyedDataset)


class StreamDataset(FixedSettings, SavedPasses, IterableDataset[T_co], Generic[T_co]):
    """Base of the streaming wrappers (see the module docstring).

    Args:
        dataset: The stream (:func:`~rankaug.stream.detect.check_stream`).
        keyed: The map-style wrapper doing the per-sample work, over a
            :class:`~rankaug.stream.view.Window`.
        keying: ``"stream"`` or ``"sample"``.
        sample_id: Where each sample's id is (:class:`~rankaug.stream.ids.SampleIds`);
            needed by ``keying="sample"``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If ``keying`` is ``"sample_rank"``, or ``"sample"`` without
            ``sample_id``, or a rankaug wrapper inside has the same seed, stream and
            keying.

    Warns:
        RankaugWarning: If ``keying`` is ``"sample"`` and a streaming wrapper inside has
            ``keying="stream"``.
    """

    reads_ahead: bool = False
    """Whether outputs lag the samples read (then the resume re-reads the pass)."""
    fixed_settings: ClassVar[frozenset[str]] = frozenset({"dataset", "keying", "ids", "seed",
                                                          "stream", "depth"})  # fmt: skip
    """The attributes fixed when the wrapper is made (assigning one is refused)."""
    arguments_only = frozenset({"sample_id"})  # kept in ids: an attribute hid sample_id()
    made_with = "_passes"  # set after them: a subclass may have set them before

    def __init__(self, dataset: Any, keyed: KeyedDataset[Any], *, keying: str,
                 sample_id: Any) -> None:  # fmt: skip
        self.dataset = check_stream(dataset)
        self.keying = check_keying(keying)
        if self.keying == "sample_rank":
            raise ValueError(
                "keying='sample_rank' has no meaning over a stream: each rank streams its "
                "own samples, so keying='sample' already differs across ranks; use "
                "'sample' or 'stream'"
            )
        self.ids = SampleIds(sample_id)
        if self.keying == "sample" and not self.ids.given:
            raise ValueError(
                "keying='sample' over a stream needs sample_id= (a key of the samples such "
                "as webdataset's '__key__', or a callable sample -> str | int): a streamed "
                "sample has no index"
            )
        self._keyed = keyed
        self.depth = nesting.depth(self, _wrappers())
        self.seed, self.stream = seed, stream = keyed.seed, keyed.stream
        self._stream_key = KeyTemplate(Domain.STREAM, seed=seed, stream=stream).builder(
            "rank", "worker_id", "epoch")  # fmt: skip
        self._sample_key = KeyTemplate(Domain.SAMPLE_ID, seed=seed, stream=stream).builder(
            "epoch", "sample_id")  # fmt: skip
        self._passes = PassCounter()
        self._live: Pass | None = None
        self._running: set[Pass] = set()  # passes started and not ended (the latest, others)
        # worker id -> (the state loaded, the pass it resumes), until that pass starts
        self._resume: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._told = Told()  # the warnings given once for all the workers and epochs
        self._check_inside()

    def _check_inside(self) -> None:
        """Check the rankaug wrappers inside against this one (:mod:`rankaug.stacking`).

        Refuse one of this seed, stream and keying; warn (keying ``"sample"``) of one
        keying ``"stream"`` inside.
        """
        inside = [inner for inner in nesting.walk(self) if isinstance(inner, _wrappers())]
        stacking.check_same_key(self, inside)
        if self.keying == "stream":
            return
        for inner in inside:
            if isinstance(inner, StreamDataset) and inner.keying == "stream":
                message = stacking.mixed_keyings(type(self).__name__, self.keying,
                                                 type(inner).__name__)  # fmt: skip
                warnings.warn(message, RankaugWarning, stacklevel=outside_level())
                return

    # ------------------------------------------------------------------ rank
    @property
    def rank(self) -> int | None:
        """The rank given, or ``None`` (resolved); setting one (checked) puts it to use."""
        rank: int | None = self._keyed.rank
        return rank

    @rank.setter
    def rank(self, rank: int | None) -> None:
        keyed = self.__dict__.get("_keyed")
        if keyed is None:  # a subclass's, before calling the constructor
            kind = type(self).__name__
            raise AttributeError(
                f"{kind}.rank cannot be assigned before the constructor: the constructor "
                f"gives its map-style wrapper the rank it is given; give it rank={rank!r}, or "
                "assign it after the constructor (it is put to use then)"
            )
        keyed.rank = rank  # checked there (RankSetting), as when made
        self._rank_assigned(keyed.rank)

    def _rank_assigned(self, rank: int | None) -> None:
        """Put an assigned ``rank`` to use beyond the map-style wrapper: nothing here."""

    # ------------------------------------------------------------------ epoch
    @property
    def epoch(self) -> int:
        """The epoch of the next pass (the front of the workers' counts)."""
        return self._passes.front()

    def set_epoch(self, epoch: int) -> None:
        """Make ``epoch`` the next pass's epoch in every worker, and tell the stream.

        Optional: without it each pass is the next epoch. Call it in the main process
        before ``iter(loader)``.

        Args:
            epoch: An integer in ``[0, 2**32)``.

        Raises:
            TypeError: If ``epoch`` is not an integer.
            ValueError: If it is out of range.
        """
        epoch = checks.uint(epoch, "epoch", 32)
        self._passes.set_all(epoch)
        forward_epoch(self.dataset, epoch)

    # ------------------------------------------------------------------ passes
    def __iter__(self) -> Iterator[T_co]:
        """A new pass (its epoch taken at its first sample; a loaded ended pass's, now)."""
        self._live = None  # the last pass's end is no longer this worker's state
        worker_id, workers = current_worker()
        loaded = self._resume.get(worker_id)
        if loaded is None or not loaded[1].get("ended"):
            return self._pass()
        del self._resume[worker_id]  # none left: StatefulDataLoader drops it unread
        epoch = self._passes.start(worker_id, workers, loaded[1]["epoch"])
        live = self._live = Pass(worker_id, self._keyed._rank_now(), epoch)
        live.done = True
        return iter(())

    def _pass(self) -> Iterator[T_co]:
        changes = self._keyed._changes
        if changes.read() != changes.seen:  # a persistent worker's copy, made before
            raise changes.stale(self)
        worker_id, workers = current_worker()
        loaded = self._resume.pop(worker_id, None)
        resume = None if loaded is None else loaded[1]
        # the loaded state's epoch, else that of a pass reading this one, else the count's
        given = carried_epoch() if resume is None else resume["epoch"]
        epoch = self._passes.start(worker_id, workers, given)
        live = Pass(worker_id, self._keyed._rank_now(), epoch)
        if self.keying == "stream":
            live.keyed = KeyedRandom(self._stream_key(live.rank, worker_id, epoch))
            if resume is not None and resume["generator"] is not None:
                streams.resume_pass(live.keyed, resume, (os.getpid(), worker_id, live.rank, epoch),
                                    type(self).__name__)  # fmt: skip
        forward_epoch(self.dataset, epoch)
        skip = 0
        if resume is not None:
            if resume["source"] is not None:  # the stream goes on where it stood
                self.dataset.load_state_dict(resume["source"])
                live.position = resume["position"]
            else:  # the stream starts over: its first outputs are skipped
                skip = resume["position"]
        self._live = live
        self._running.add(live)
        passes.begin_stream(id(live), epoch)  # threads beside it: warned of the epoch
        end = passes.end_stream  # bound now: a pass dropped at interpreter exit outlives it
        try:
            yield from self.outputs(live, self._read(live, live.position), skip)
            live.done = True
        finally:  # finished, closed or dropped: no longer a pass a state could miss
            self._running.discard(live)
            end(id(live))

    def _read(self, live: Pass, read: int) -> Iterator[Any]:
        """The stream's samples, the first at ``read``, read with the pass's epoch carried."""
        check_reader(self, self._told)  # a split dealt again, or unsplit by worker: warned
        with live.context(read).guard("starting the stream"):  # its iter() may fail too
            iterator = Reading(self.dataset, live.epoch)
        while True:
            with live.context(read).guard("reading the stream"):
                try:
                    sample = next(iterator)
                except StopIteration:
                    return
            read += 1
            yield sample

    def outputs(self, live: Pass, samples: Iterator[Any], skip: int) -> Iterator[T_co]:
        """The pass's outputs from its ``samples``, the first ``skip`` not made.

        Raises:
            NotImplementedError: In the base class.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement outputs()")

    def sample_id(self, live: Pass, position: int, sample: Any) -> Any:
        """The id of the sample read at ``position`` (a failure names the sample)."""
        with live.context(position).guard("sample_id"):
            return self.ids(sample)

    def key_random(self, live: Pass, sample_id: Any) -> KeyedRandom:
        """One output's random state: the pass's stream, or its id's key (watched: ``Repeats``)."""
        if live.keyed is not None:
            return live.keyed
        return KeyedRandom(self._sample_key(live.epoch, live.repeats.word(sample_id, self)))

    # ---------------------------------------------------------------- pickling
    __copy__ = own_count  # its map-style wrapper copied too (see own_count)

    def __getstate__(self) -> dict[str, Any]:
        check_pickled(self, self._told)  # for spawned workers: the dispatcher is seen here
        state = self.__dict__.copy()
        state["_live"], state["_resume"], state["_running"] = None, {}, set()
        return state

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self.dataset).__name__}, seed={self.seed}, "
            f"keying={self.keying!r}, epoch={self.epoch})"
        )
