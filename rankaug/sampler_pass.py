"""One pass over an :class:`~rankaug.EpochSampler`: its record, its iterator, its state.

``iter(sampler)`` returns a :class:`PassIterator`. Its pass begins when its first index
is drawn, and its ``state_dict()``/``load_state_dict()`` are the per-iterator state that
torchdata's ``StatefulDataLoader`` saves beside the sampler's own and restores into the
iterator it rebuilds: an iterator saved at the end of its pass comes back finished, so
the loader's next iterator starts the next epoch (see the sampler's module docstring).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Generator, Iterator
from typing import Any, Final

import torch

from rankaug import checks
from rankaug.epoch import EpochBatch, EpochIndex

__all__ = [
    "ITER_FORMAT",
    "STATE_FORMAT",
    "Pass",
    "PassIterator",
    "Ticket",
    "carry",
    "generator_state",
    "iterator_state",
    "prefetching",
    "put_generator",
]

STATE_FORMAT: Final = "rankaug.EpochSampler/1"
ITER_FORMAT: Final = "rankaug.EpochSampler.iterator/1"
END: Final = 1 << 32  # the first epoch a key cannot hold: the range is exhausted there
_PASSES: Final = ("unstarted", "running", "finished")


class Pass:
    """One pass over the wrapped sampler: its epoch and how many indices it has given.

    ``whole``: it gave its last index (its wrapped sampler's ``len()`` of them, where that
    is exact: :mod:`~rankaug.sampler_done`); ``done``: its wrapped iterator stopped after
    it; ``ended``: done, or dropped unfinished (a loader iterator thrown away, a
    ``break``); ``prefetched``: done while its loader iterator was
    being built (its workers' prefetch drew it all: none of it was read yet); ``final``:
    the wrapped sampler's iterator's state when the pass was done, if it keeps one;
    ``last``: the last item the wrapped sampler gave, once whole (``None`` for none);
    ``generator``: the state of the generator the wrapped sampler shuffles with, as the
    pass began (:func:`generator_state`), kept in its state.
    """

    __slots__ = (
        "done", "ended", "epoch", "final", "generator", "inner", "last", "position",
        "prefetched", "whole",
    )  # fmt: skip

    def __init__(self, epoch: int, inner: Iterator[Any] | None, position: int) -> None:
        self.epoch = epoch
        self.inner = inner
        self.position = position
        self.done = False
        self.ended = False
        self.prefetched = False
        self.whole = False
        self.final: Any = None
        self.last: Any = None
        self.generator: torch.Tensor | None = None


class Ticket:
    """What one iterator and its generator share: the pass, once begun, or a loaded state."""

    __slots__ = ("loaded", "run", "sampler")

    def __init__(self, sampler: Any) -> None:
        self.sampler = sampler
        self.run: Pass | None = None
        self.loaded: dict[str, Any] | None = None


class PassIterator(map):  # type: ignore[type-arg]
    """An EpochSampler's iterator: ``map(next, repeat(generator))``, with a state.

    A ``map`` subclass, so that drawing an index costs what resuming the generator costs
    (a Python ``__next__`` would double it); the generator ends the map when it ends.
    """

    __slots__ = ("_generator", "_ticket")

    _generator: Generator[Any, None, None]
    _ticket: Ticket

    def close(self) -> None:
        """End the pass now, unfinished (as a generator's ``close()`` does)."""
        self._generator.close()

    def state_dict(self) -> dict[str, Any]:
        """This iterator's pass: not begun, running (epoch and position) or finished."""
        ticket = self._ticket
        run = ticket.run
        if run is None:
            if ticket.loaded is not None:
                return dict(ticket.loaded)
            return {"format": ITER_FORMAT, "pass": "unstarted"}
        if run.done:
            done: dict[str, Any] = {"format": ITER_FORMAT, "pass": "finished", "epoch": run.epoch}
            if run.final is not None:
                done["sampler_iter"] = run.final
            return done
        state: dict[str, Any] = ticket.sampler._pass_state(run)
        return {**state, "format": ITER_FORMAT, "pass": "running"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Make this iterator continue the pass its :meth:`state_dict` describes.

        A finished pass gives nothing more (its wrapped iterator's state, if saved, is put
        back: torchdata's ``RandomSampler`` shuffles the next epoch from it); a running one
        resumes at its position.

        Args:
            state: A dict from :meth:`state_dict`.

        Raises:
            ValueError: If ``state`` is not such a dict, or this iterator has begun.
        """
        ticket = self._ticket
        if ticket.run is not None:
            raise ValueError(
                "EpochSampler iterator: load_state_dict() must come before its first index; "
                f"its pass of epoch {ticket.run.epoch} has begun"
            )
        ticket.loaded = loaded = check_iter_state(state)
        if loaded is not None and "sampler_iter" in loaded and loaded["pass"] == "finished":
            ticket.sampler._finish(loaded["sampler_iter"])


def start(ticket: Ticket, generator: Generator[Any, None, None]) -> PassIterator:
    """The iterator over ``generator`` (which shares ``ticket``, not the iterator: no cycle)."""
    made = PassIterator(next, itertools.repeat(generator))
    made._generator, made._ticket = generator, ticket
    return made


def _refused(state: object, fmt: str, what: str) -> ValueError:
    return ValueError(
        f"state must be a dict from EpochSampler.{what} (format {fmt!r}), got {state!r:.200}"
    )


def check_state(
    state: object, fmt: str = STATE_FORMAT, what: str = "state_dict()"
) -> dict[str, Any]:
    """A copy of a saved running pass (or next pass), its numbers checked."""
    if not isinstance(state, dict) or state.get("format") != fmt:
        raise _refused(state, fmt, what)
    checked = dict(state)
    # 2**32: a sampler whose epoch range is exhausted (its next pass refuses to run)
    checked["epoch"] = checks.integer(state.get("epoch"), "state['epoch']", low=0, high=END)
    checked["next_epoch"] = checks.integer(
        state.get("next_epoch"), "state['next_epoch']", low=0, high=END
    )
    checked["position"] = checks.integer(state.get("position"), "state['position']", low=0)
    return checked


def check_iter_state(state: object) -> dict[str, Any] | None:
    """A checked iterator state: ``None`` for an iterator that had not begun."""
    what = "iter(...).state_dict()"
    if not isinstance(state, dict) or state.get("format") != ITER_FORMAT:
        raise _refused(state, ITER_FORMAT, what)
    kind = checks.choice(state.get("pass"), "state['pass']", _PASSES)
    if kind == "unstarted":
        return None
    if kind == "finished":
        epoch = checks.integer(state.get("epoch"), "state['epoch']", low=0, high=END - 1)
        done = {"format": ITER_FORMAT, "pass": kind, "epoch": epoch}
        if state.get("sampler_iter") is not None:
            done["sampler_iter"] = state["sampler_iter"]
        return done
    return check_state(state, ITER_FORMAT, what)


def iterator_state(inner: object) -> Any:
    """The state of the wrapped sampler's iterator, or ``None`` when it keeps none."""
    save = getattr(inner, "state_dict", None)
    if callable(save) and callable(getattr(inner, "load_state_dict", None)):
        return save()
    return None


def _generator(sampler: object) -> torch.Generator | None:
    """``sampler.generator``, or that of the sampler a batch sampler holds, or ``None``."""
    for _ in range(3):  # a BatchSampler's sampler, a sampler of your own around one
        generator = getattr(sampler, "generator", None)
        if isinstance(generator, torch.Generator):
            return generator
        sampler = getattr(sampler, "sampler", None)
    return None


def generator_state(sampler: object) -> torch.Tensor | None:
    """The state of the generator ``sampler`` shuffles with (a ``RandomSampler``'s), or ``None``.

    Kept in the state of a pass not begun yet, and of a running one as it began: the pass
    draws its order from it (a resumed one draws it again, then skips its position).
    """
    generator = _generator(sampler)
    return None if generator is None else generator.get_state()


def put_generator(sampler: object, state: object) -> None:
    """Give the generator ``sampler`` shuffles with the saved ``state`` (where both are)."""
    generator = _generator(sampler)
    if generator is not None and isinstance(state, torch.Tensor):
        generator.set_state(state)


def prefetching(frame: Any) -> bool:
    """Whether ``frame`` (who drew an index) is a loader iterator being built.

    A ``DataLoader`` iterator with workers draws ``prefetch_factor * num_workers`` batches
    in its ``_reset()`` (torchdata's ``StatefulDataLoader`` alike), before anything is read.
    """
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_name == "_reset" and callable(
            getattr(frame.f_locals.get("self"), "_try_put_index", None)
        ):
            return True
        frame = frame.f_back
    return False


def as_index(value: object) -> int:
    """``value`` as an ``int`` index; a clear ``TypeError`` for anything else."""
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


def carry(value: object, make: Callable[[int], EpochIndex]) -> EpochIndex | EpochBatch:
    """One item of the wrapped sampler with its epoch: an index, or a batch of them."""
    if isinstance(value, list | tuple):
        return EpochBatch([make(i if type(i) is int else as_index(i)) for i in value])
    return make(as_index(value))
