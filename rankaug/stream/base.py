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
:class:`Window` of the samples at hand, and calls its ``augment`` with the context and
the key's random state.

State (:meth:`StreamDataset.state_dict`, one per worker, as torchdata's
``StatefulDataLoader`` saves it): the next epoch and, mid-pass, the pass's epoch, rank,
position and Generator state (refused on another rank, as a map-style wrapper's), and
the wrapped dataset's own state when it has ``state_dict``/``load_state_dict`` (and no
Hugging Face shuffle buffer, which that state leaves out:
:func:`~rankaug.stream.source.resumable`) and the wrapper does not read ahead. Otherwise a
resumed pass re-reads the wrapped stream of that epoch from its start and skips what was
already produced, which is exact when the stream repeats itself for an epoch. A worker
whose pass had not started resumes on the epoch it would have run (its peers' in the
pass), and one whose pass had ended resumes with an empty pass of that epoch: each
worker's part of the resumed epoch is then its part of that epoch, whatever the stop.
A state holds one pass: saved while another pass of the worker runs beside the latest
(two loops over one wrapper), it is refused.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from typing import Any, ClassVar, Final, Generic, TypeVar

from torch.utils.data import IterableDataset

from rankaug import checks, nesting, passes, stacking, streams
from rankaug._fixed import FixedSettings, own_count
from rankaug.context import ResolvedContext, SampleContext, current_worker
from rankaug.epoch import carried_epoch
from rankaug.errors import RankaugWarning, outside_level
from rankaug.keyed import KeyedDataset
from rankaug.keys import Domain, KeyedRandom, KeyTemplate, check_keying
from rankaug.stream.counter import PassCounter
from rankaug.stream.detect import check_stream
from rankaug.stream.ids import Repeats, SampleIds
from rankaug.stream.readers import check_pickled, check_reader
from rankaug.stream.source import Reading, forward_epoch, resumable
from rankaug.stream.view import Window

__all__ = ["FORMAT", "Pass", "StreamDataset", "Window", "default_stream", "forward_epoch"]

T_co = TypeVar("T_co", covariant=True)
FORMAT: Final = "rankaug.stream/1"


def default_stream(kind: type[Any], dataset: object) -> str:
    """The stream name of a streaming wrapper over ``dataset`` made without ``stream=``.

    Its map-style class ``kind``'s, at the depth of the rankaug wrappers nested in
    ``dataset`` (streaming and map-style, such as a map-style wrapper read through an
    ``IterableDataset`` that holds it as ``.dataset``) plus one, so stacked wrappers draw
    independent streams (one alone keeps the stream of ``kind`` over a :class:`Window`).
    """
    return nesting.default_stream(kind, nesting.depth(dataset, _wrappers()) + 1)


def _wrappers() -> tuple[type[Any], ...]:
    """The wrappers a streaming wrapper's depth counts: streaming and map-style."""
    return (StreamDataset, KeyedDataset)


class Pass:
    """One pass running in this process: where it stands."""

    __slots__ = ("done", "epoch", "keyed", "pid", "position", "rank", "repeats", "worker_id")

    def __init__(self, worker_id: int, rank: int, epoch: int) -> None:
        self.pid = os.getpid()
        self.worker_id, self.rank, self.epoch = worker_id, rank, epoch
        self.position = 0  # outputs produced (or skipped on resume) so far
        self.keyed: KeyedRandom | None = None  # the stream keying's Generator
        self.repeats = Repeats(epoch, rank, worker_id)  # the sample keying's ids, watched
        self.done = False

    def context(self, index: int, sample_id: Any = None) -> SampleContext:
        """The context of a sample of this pass at ``index`` (its errors name ``sample_id``)."""
        return ResolvedContext(index, rank=self.rank, worker_id=self.worker_id, epoch=self.epoch,
                               sample_id=sample_id)  # fmt: skip


class StreamDataset(FixedSettings, IterableDataset[T_co], Generic[T_co]):
    """Base of the streaming wrappers (see the module docstring).

    Args:
        dataset: The stream (:func:`~rankaug.stream.detect.check_stream`).
        keyed: The map-style wrapper doing the per-sample work, over a :class:`Window`.
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
        check_reader(self)  # a split dealt again by accelerate, or unsplit by worker: warned
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

    # ------------------------------------------------------------------ state
    def _own_state(self) -> bool:
        return not self.reads_ahead and resumable(self.dataset)

    def state_dict(self) -> dict[str, Any]:
        """This worker's epoch and position (see the module docstring), picklable.

        ``"pass"`` is ``None`` before the worker's pass starts (``"next_epoch"`` is then
        the epoch it will run), ``{"epoch", "ended": True}`` once it has ended, and its
        position otherwise. A state loaded and not yet run is saved as loaded.

        Raises:
            RuntimeError: If another pass of this worker runs beside the latest (a
                training and a validation loop over one wrapper): a state holds one.
        """
        worker_id, workers = current_worker()
        loaded = self._resume.get(worker_id)
        if loaded is not None:
            return loaded[0]
        live = self._live
        self._refuse_others(live, worker_id)
        state: dict[str, Any] = {
            "format": FORMAT,
            "class": type(self).__qualname__,
            "stream": self.stream,
            "worker_id": worker_id,
            "next_epoch": self._passes.peek(worker_id),
            "pass": None,
        }
        if live is None or live.pid != os.getpid():  # its pass has not started
            state["next_epoch"] = self._passes.upcoming(worker_id) if workers else self.epoch
        elif live.done:
            state["pass"] = {"epoch": live.epoch, "ended": True}
        else:
            keyed = live.keyed
            py_random = None if keyed is None else keyed._py_random
            state["pass"] = {
                "epoch": live.epoch,
                "rank": live.rank,
                "position": live.position,
                "generator": None if keyed is None else keyed.generator.bit_generator.state,
                "py_random": None if py_random is None else py_random.getstate(),
                "source": self.dataset.state_dict() if self._own_state() else None,
            }
        return state

    def _refuse_others(self, live: Pass | None, worker_id: int) -> None:
        """Refuse to save while a pass of this worker other than ``live`` runs."""
        pid = os.getpid()
        others = [p for p in list(self._running)
                  if p is not live and (p.pid, p.worker_id) == (pid, worker_id)]  # fmt: skip
        if not others:
            return
        beside = "; ".join(f"epoch {p.epoch} at output {p.position}" for p in others)
        latest = (
            "not started, asked for by iter()" if live is None
            else f"epoch {live.epoch}, ended" if live.done
            else f"epoch {live.epoch} at output {live.position}"
        )  # fmt: skip
        raise RuntimeError(
            f"{type(self).__name__}.state_dict() saves one pass per worker, and worker "
            f"{worker_id} of this process runs other passes beside the latest: {beside} "
            f"(the latest: {latest}); the state would hold the latest alone. Finish or "
            "close the others first (exhaust their iterators, call .close() on them or "
            "drop them), or give each loop its own wrapper (one for training, one for "
            "validation)"
        )

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict`: the next ``iter()`` continues that pass.

        A state saved before the worker's pass started starts a pass of its
        ``next_epoch``; one saved after it ended gives an empty pass, and the next pass
        runs the epoch after it.

        Args:
            state: This worker's state from an identically built wrapper.

        Raises:
            TypeError: If a part of ``state`` has the wrong type.
            ValueError: If ``state`` comes from something else.
        """
        if (
            not isinstance(state, dict)
            or state.get("format") != FORMAT
            or (state.get("class"), state.get("stream")) != (type(self).__qualname__, self.stream)
        ):
            raise ValueError(
                f"state must come from {type(self).__name__}.state_dict() of an identically "
                f"built wrapper (format {FORMAT!r}), got {state!r:.200}"
            )
        worker_id, workers = current_worker()
        saved, after = streams.check_pass(state.get("pass")), state.get("next_epoch")
        self._next(worker_id, workers, checks.uint(after, "state['next_epoch']", 32))
        if saved is None:  # the pass runs the epoch the state names, from its start
            saved = {"epoch": after, "position": 0, "generator": None, "py_random": None,
                     "source": None}  # fmt: skip
        self._resume[worker_id] = (state, saved)

    def _next(self, worker_id: int, workers: int, epoch: int) -> None:
        """Make ``epoch`` the worker's next pass; in the main process, every worker's."""
        if workers:
            self._passes.put(worker_id, epoch)
        else:  # as a pass there does: a later DataLoader's workers start on one epoch
            self._passes.set_all(epoch)

    # ---------------------------------------------------------------- pickling
    __copy__ = own_count  # its map-style wrapper copied too (see own_count)

    def __getstate__(self) -> dict[str, Any]:
        check_pickled(self)  # for spawned workers: accelerate's dispatcher is seen here
        state = self.__dict__.copy()
        state["_live"], state["_resume"], state["_running"] = None, {}, set()
        return state

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self.dataset).__name__}, seed={self.seed}, "
            f"keying={self.keying!r}, epoch={self.epoch})"
        )
