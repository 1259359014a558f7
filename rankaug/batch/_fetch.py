"""The DataLoader fetch around a :class:`~rankaug.BatchAugment` call: its batch's epoch, its pass.

A ``collate_fn`` or a dataset's ``__getitems__`` that augments whole batches runs inside
PyTorch's ``_MapDatasetFetcher.fetch`` (torchdata's ``StatefulDataLoader`` uses it too),
in a DataLoader worker or, without workers, in the main process. That frame holds the
batch of indices the sampler gave: under an :class:`~rankaug.EpochSampler`, the
:class:`~rankaug.EpochIndex` values whose epoch torch's ``default_collate`` drops, so
the epoch of the batch is known there exactly, whenever a worker fetches it (before or
after a late ``set_epoch``). It also holds the fetcher, which the loader makes anew for
each pass: once per iterator without workers, and in every worker once per pass (a
persistent worker makes it again when the next iterator resumes it). Two calls with the
same fetcher augment batches of one pass, or of a pass left unfinished: a worker still
fetches the batches it was sent before a ``break``, which nobody reads. Those are at
most the ones waiting in its index queue (:meth:`Fetch.queued`) when it meets them.
"""

from __future__ import annotations

import sys
import threading
from types import FrameType
from typing import NamedTuple

import torch

from rankaug import passes
from rankaug.epoch import _CLASSES

__all__ = ["Fetch", "current_fetch"]


class Fetch(NamedTuple):
    """The fetch around a call.

    Attributes:
        epoch: The epoch the batch's indices carry, or :data:`rankaug.passes.PLAIN`
            (none carries one) or :data:`rankaug.passes.MIXED` (several, or some none).
        fetcher: The loader's fetcher: one per pass of a worker or loader iterator.
        batch: The batch of indices being fetched (one object per fetch).
        caller: The frame that called the fetch: a DataLoader worker's loop, or the
            loader iterator's in the main process.
    """

    epoch: int
    fetcher: object
    batch: object
    caller: FrameType | None

    def each(self, indices: torch.Tensor) -> torch.Tensor | None:
        """Each index's epoch, for a batch of several epochs; ``None`` unless all can be told.

        A batch that runs on from one pass into the next (a batch sampler over a sampler
        that chains passes) carries several: they key ``indices`` where those are the
        fetched batch's, in its order (a CPU tensor, read back), and each carries one.
        """
        batch = self.batch
        if indices.device.type != "cpu" or not isinstance(batch, list | tuple):
            return None
        epochs = [getattr(index, "epoch", None) for index in batch]
        if None in epochs or [int(index) for index in batch] != indices.tolist():
            return None
        return torch.tensor(epochs, dtype=torch.int64)

    def queued(self) -> int:
        """The batches a DataLoader worker was sent and has not begun: ``-1`` if not one.

        Read from the worker loop's ``index_queue`` (torch's, torchdata's), where the
        platform counts a queue (not macOS); without workers the loader fetches a batch
        when it is read, and none waits.
        """
        queue = None if self.caller is None else self.caller.f_locals.get("index_queue")
        try:
            return -1 if queue is None else int(queue.qsize())
        except (NotImplementedError, AttributeError, OSError, TypeError, ValueError):
            return -1


def current_fetch() -> Fetch | None:
    """The DataLoader fetch the calling thread runs inside (or waits on), or ``None``.

    A thread that is not the main thread and runs outside any fetch borrows the fetch
    of the one other thread that runs one: a thread pool that a ``collate_fn`` or a
    dataset's ``__getitems__`` augments in, while the fetch waits for it (as
    :mod:`rankaug.passes` does for the wrappers). Threads fetching at once leave it
    unknown.

    >>> current_fetch() is None  # no DataLoader here
    True
    """
    found = _fetch_at(sys._getframe(1))
    if found is not None or threading.get_ident() == threading.main_thread().ident:
        return found
    me = threading.get_ident()
    for ident, top in sys._current_frames().items():
        fetch = None if ident == me else _fetch_at(top)
        if fetch is not None:
            if found is not None:
                return None  # two threads fetch: whose batch this call augments is unknown
            found = fetch
    return found


def _fetch_at(frame: FrameType | None) -> Fetch | None:
    """The innermost fetch at or above ``frame``, or ``None``."""
    code = passes._FETCH
    while frame is not None:
        if frame.f_code is code:
            held = frame.f_locals
            batch = held.get("possibly_batched_index")
            epoch = passes._batch_epoch(batch) if _CLASSES else passes.PLAIN
            return Fetch(epoch, held.get("self"), batch, frame.f_back)
        frame = frame.f_back
    return None
