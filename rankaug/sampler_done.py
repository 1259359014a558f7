"""The end of an :class:`~rankaug.EpochSampler` pass: when it is known, and what it records.

A pass ends when the wrapped sampler's iterator stops. A loader that reads ``len(loader)``
batches and asks no more (PyTorch Lightning's validation loop) never makes it stop: its
pass would stay running while its loader iterator lives, and read beside the next
training pass. Where the wrapped sampler's ``len()`` is what each pass gives (PyTorch's
own samplers, batch samplers over them, lists and ranges), the pass is given whole with
the index that brings it to that length (counted from a resumed pass's position too):
its batches are read to its end from then on, as when its iterator stops. A sampler of
another kind may give more or fewer than its ``len()``: its pass is whole when its
iterator stops. What else a pass's end decides (its epoch ran, the state saved at its
end) still waits for its iterator to stop.
"""

from __future__ import annotations

from types import FrameType
from typing import Any, Final

from torch.utils.data import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

from rankaug.sampler_epochs import Epochs
from rankaug.sampler_pass import Pass, iterator_state, prefetching
from rankaug.sampler_read import last_given

__all__ = ["complete", "exact_length", "given_whole"]

_EXACT: Final = (
    DistributedSampler, RandomSampler, SequentialSampler, SubsetRandomSampler,
    WeightedRandomSampler, list, range, tuple,
)  # fmt: skip


def exact_length(sampler: object) -> int | None:
    """``len(sampler)`` where each pass gives exactly that many items, else ``None``.

    Only these exact types (not subclasses, whose ``__iter__`` may give another count):
    PyTorch's samplers, a ``BatchSampler`` over one of them, a list, tuple or range.
    """
    kind = type(sampler)
    if kind is BatchSampler:
        inner = sampler.sampler  # type: ignore[attr-defined]
        return None if exact_length(inner) is None else len(sampler)  # type: ignore[arg-type]
    return len(sampler) if kind in _EXACT else None  # type: ignore[arg-type]


def given_whole(run: Pass, value: Any, frame: FrameType | None) -> None:
    """Record that ``run`` gave its last item, ``value``, drawn by the caller at ``frame``.

    Once only: a pass given whole at its length is not counted again when its iterator
    stops. The pass is read to its end from then on (:mod:`~rankaug.sampler_read`); it
    finishes (``done``: its epoch ran, its iterator's state is final) when it stops.
    """
    if not run.whole:
        run.last = last_given(run, value, frame)
        run.whole = True


def complete(run: Pass, value: Any, frame: FrameType | None, epochs: Epochs) -> None:
    """Record that ``run``'s wrapped iterator stopped after ``value``, drawn at ``frame``."""
    given_whole(run, value, frame)
    run.final = iterator_state(run.inner)  # a torchdata RandomSampler's generator
    run.done = True
    run.prefetched = prefetching(frame)
    if not run.prefetched:  # else it ran once a later pass begins
        epochs.ran = max(epochs.ran, run.epoch)
