"""What a streaming wrapper asks of the stream it wraps: take an epoch, save a position.

A pass tells the stream its epoch (:func:`forward_epoch`) before ``iter(dataset)``, reads
it with that epoch handed down to the rankaug wrappers the stream calls
(:class:`Reading`), and a pass's state holds the stream's own position where it saves
one (:func:`resumable`; see :mod:`rankaug.stream.state`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any, Final

import torch

from rankaug.epoch import carry_epoch, drop_epoch

__all__ = ["Reading", "forward_epoch", "resumable"]

#: webdataset's stages that count their own epochs: by type name (never imported here).
_EPOCH_STAGES: Final = frozenset({"detshuffle", "ResampledShards"})


def forward_epoch(dataset: object, epoch: int) -> None:
    """Hand ``epoch`` to the wrapped dataset, where it keeps one.

    ``dataset.set_epoch(epoch)`` when it has one (litdata, a rankaug wrapper; Hugging
    Face's shared epoch tensor is written directly); mosaicml-streaming's
    ``next_epoch``; for a webdataset pipeline, its
    ``detshuffle`` stages and its ``ResampledShards`` (which both add one to their
    ``epoch`` before each pass, from -1 in a fresh worker) are set to shuffle, or draw
    their shards, by ``epoch``.
    """
    set_epoch = getattr(dataset, "set_epoch", None)
    shared = getattr(dataset, "_epoch", None)
    if callable(set_epoch) and isinstance(shared, torch.Tensor):
        # Hugging Face's epoch is one shared tensor for all workers, and its set_epoch
        # (``_epoch += epoch - _epoch``) races when two workers call it: write it whole.
        shared.fill_(epoch)
        return
    if callable(set_epoch):
        set_epoch(epoch)
        return
    counted = getattr(type(dataset), "next_epoch", None)
    if isinstance(counted, property) and counted.fset is not None:
        # mosaicml-streaming shuffles by its own count, from 0 in a fresh process (a
        # resumed run) and moved on by each of its passes: all the workers set it before
        # any of them reads it (its __iter__ waits for them all before moving it on)
        dataset.next_epoch = epoch  # type: ignore[attr-defined]
        return
    stages = getattr(dataset, "pipeline", None)
    if isinstance(stages, list):
        for stage in stages:
            if type(stage).__name__ in _EPOCH_STAGES and hasattr(stage, "epoch"):
                stage.epoch = epoch - 1


def resumable(dataset: object) -> bool:
    """Whether ``dataset`` saves its own position, as Hugging Face's ``IterableDataset``.

    That is ``state_dict()`` (no arguments needed) and ``load_state_dict(state)``, and a
    state that holds every sample still to come.

    litdata's ``state_dict(num_samples_yielded, num_workers, batch_size)``, meant for its
    own loader in the main process, is not one; nor is a Hugging Face dataset with a
    shuffle buffer (``.shuffle(buffer_size=...)``), whose state leaves the buffer out:
    resumed from it, the samples in the buffer were lost and others came twice.
    """
    save, load = getattr(dataset, "state_dict", None), getattr(dataset, "load_state_dict", None)
    if not (callable(save) and callable(load)) or _buffered(dataset):
        return False
    try:
        parameters = inspect.signature(save).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in parameters)  # fmt: skip


def _buffered(dataset: object) -> bool:
    """Whether a Hugging Face ``IterableDataset``'s examples pass a shuffle buffer.

    Its ``_ex_iterable`` chain (``ex_iterable``, ``ex_iterables`` of an interleave) holds a
    ``BufferShuffledExamplesIterable`` (by type name: ``datasets`` is never imported here).
    """
    found: list[object] = [getattr(dataset, "_ex_iterable", None)]
    while found:
        stage = found.pop()
        if stage is None:
            continue
        if type(stage).__name__ == "BufferShuffledExamplesIterable":
            return True
        found.append(getattr(stage, "ex_iterable", None))
        inner = getattr(stage, "ex_iterables", None)
        if isinstance(inner, list | tuple):
            found.extend(inner)
    return False


class Reading(Iterator[Any]):
    """``iter(dataset)`` read with ``epoch`` handed down (:func:`rankaug.epoch.carrying`).

    ``iter()`` and each ``next()`` run with the pass's epoch carried, so the rankaug
    wrappers the stream calls while it makes a sample (a map-style wrapper it reads,
    held as ``.dataset`` or not, a streaming wrapper nested in it) are keyed with the
    pass's epoch, in every worker, persistent or not. A sample the stream read ahead is
    of the same pass and epoch. Not inherited by a thread the stream starts
    (:mod:`contextvars`): wrappers called there fall back to their ``set_epoch`` value.

    >>> from rankaug.epoch import carried_epoch
    >>> list(Reading(map(lambda _: carried_epoch(), range(2)), 3)), carried_epoch()
    ([3, 3], None)
    """

    __slots__ = ("_epoch", "_iterator")

    def __init__(self, dataset: Any, epoch: int) -> None:
        self._epoch = epoch
        token = carry_epoch(epoch)
        try:
            self._iterator: Iterator[Any] = iter(dataset)
        finally:
            drop_epoch(token)

    def __next__(self) -> Any:
        token = carry_epoch(self._epoch)
        try:
            return next(self._iterator)
        finally:
            drop_epoch(token)
