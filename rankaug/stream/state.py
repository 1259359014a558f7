"""A streaming wrapper's passes and their state: where each worker's pass stands, saved.

:class:`Pass` is one pass running in a process (a DataLoader worker, or the main process
as worker 0): its epoch, rank, position and Generator. :class:`SavedPasses`, a base of
:class:`~rankaug.stream.base.StreamDataset`, saves and resumes it.

State (:meth:`SavedPasses.state_dict`, one per worker, as torchdata's
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
from typing import Any, Final

from rankaug import checks, streams
from rankaug.context import ResolvedContext, SampleContext, current_worker
from rankaug.keys import KeyedRandom
from rankaug.stream.counter import PassCounter
from rankaug.stream.ids import Repeats
from rankaug.stream.source import resumable

__all__ = ["FORMAT", "Pass", "SavedPasses"]

FORMAT: Final = "rankaug.stream/1"


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


class SavedPasses:
    """``state_dict`` and ``load_state_dict`` of a streaming wrapper (see the module docstring).

    The wrapper (:class:`~rankaug.stream.base.StreamDataset`) sets the attributes below
    and runs the passes.
    """

    dataset: Any
    stream: int
    reads_ahead: bool
    _passes: PassCounter
    _live: Pass | None  # this worker's latest pass
    _running: set[Pass]  # passes started and not ended (the latest, others)
    # worker id -> (the state loaded, the pass it resumes), until that pass starts
    _resume: dict[int, tuple[dict[str, Any], dict[str, Any]]]

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
            state["next_epoch"] = (
                self._passes.upcoming(worker_id) if workers else self._passes.front()
            )
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
