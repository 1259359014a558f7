"""What an :class:`~rankaug.EpochSampler` saves of a pass, and how a pass resumes from it.

A pass's state (:func:`pass_state`) is its epoch and position, the epoch of the pass
after it, the wrapped sampler's iterator's own state where it keeps one, and the state
of the generator the wrapped sampler shuffles with as the pass began; before a pass
begins, :func:`next_pass_state` is where it will start. :func:`resumed_pass` opens the
wrapped sampler's iterator where a saved pass was; :func:`finish_restored` puts back the
wrapped iterator's state of a pass restored at its end.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from rankaug.sampler_pass import (
    END,
    STATE_FORMAT,
    Pass,
    generator_state,
    iterator_state,
    put_generator,
)

__all__ = ["finish_restored", "next_pass_state", "pass_state", "resumed_pass"]


def pass_state(run: Pass, next_epoch: int) -> dict[str, Any]:
    """The state of the running pass ``run``, the pass after it of epoch ``next_epoch``."""
    state: dict[str, Any] = {
        "format": STATE_FORMAT,
        "epoch": run.epoch,
        "position": run.position,
        "next_epoch": next_epoch,
    }
    inner_state = iterator_state(run.inner)
    if inner_state is not None:
        state["sampler_iter"] = inner_state
    if run.generator is not None:  # a RandomSampler's iterator keeps none of its own
        state["generator"] = run.generator
    return state


def next_pass_state(sampler: object, upcoming: int) -> dict[str, Any]:
    """The state of the pass of epoch ``upcoming`` over ``sampler``, not begun yet."""
    state = {
        "format": STATE_FORMAT,
        "epoch": upcoming,
        "position": 0,
        "next_epoch": min(upcoming + 1, END),
    }
    generator = generator_state(sampler)  # the next pass draws its order from it
    return state if generator is None else {**state, "generator": generator}


def resumed_pass(
    sampler: Iterable[Any], epoch: int, position: int, saved: dict[str, Any] | None
) -> Pass:
    """A pass of ``epoch`` over ``sampler`` at ``position``: where ``saved`` was, if given.

    The wrapped sampler's generator is put back as the saved pass began, and its iterator
    restored from its own state where it keeps one, else skips ``position`` indices.

    Raises:
        ValueError: If the wrapped sampler gives fewer than ``position`` indices.
    """
    if saved is not None and "generator" in saved:  # as the saved pass began
        put_generator(sampler, saved["generator"])
    shuffled = generator_state(sampler)  # what this pass draws its order from
    inner = iter(sampler)
    inner_state = None if saved is None else saved.get("sampler_iter")
    if inner_state is not None and callable(getattr(inner, "load_state_dict", None)):
        inner.load_state_dict(inner_state)  # type: ignore[attr-defined]
    elif position:
        skipped = sum(1 for _ in itertools.islice(inner, position))
        if skipped != position:
            raise ValueError(
                f"cannot resume at position {position} of epoch {epoch}: the wrapped "
                f"sampler gives only {skipped} indices for that epoch"
            )
    run = Pass(epoch, inner, position)
    run.generator = shuffled
    return run


def finish_restored(sampler: Iterable[Any], saved: Any) -> None:
    """Put back ``saved``, the wrapped iterator's state at a restored pass's end, now.

    (A torchdata ``RandomSampler``'s generator: the loader drops the restored iterator
    unread.) Run to its end, it uses up what it left pending (``BatchSampler``'s).
    """
    inner = iter(sampler)
    load = getattr(inner, "load_state_dict", None)
    if callable(load):
        load(saved)
        for _ in inner:
            pass
