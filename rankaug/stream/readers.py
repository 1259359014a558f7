"""Who reads a streaming wrapper: accelerate's sharding over a stream that splits by rank.

``accelerator.prepare(DataLoader(stream))`` deals an ``IterableDataset``'s samples among
the processes itself: with ``dispatch_batches`` (its default for one) the main process
alone reads the loader and hands each process a slice of its batches; without, each
process reads the whole stream through an ``IterableDatasetShard`` and keeps a slice. Over
a stream that already splits by rank (Hugging Face's ``split_dataset_by_node``,
webdataset's ``nodesplitter=split_by_node``, litdata, mosaicml-streaming) each rank's
share is dealt again: without a word, half the samples (on 2 processes) are never read,
or never kept. A pass read by either warns (:func:`check_reader`); accelerate and the
libraries are recognised by type name, never imported here. The dispatcher reads in the
main process: its DataLoader's workers, forked, hold its frame among their callers, and
spawned ones do not, so a wrapper pickled for them looks there (:func:`check_pickled`).
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any, Final

from rankaug.context import current_worker
from rankaug.errors import RankaugWarning

__all__ = ["check_pickled", "check_reader", "rank_split"]

#: accelerate's classes that deal an IterableDataset's samples among the processes.
_READERS: Final = frozenset({"IterableDatasetShard", "DataLoaderDispatcher"})


def rank_split(dataset: object) -> str | None:
    """How ``dataset`` splits itself by rank, where it can be told; else ``None``.

    >>> rank_split([1, 2]) is None
    True
    """
    distributed = getattr(dataset, "_distributed", None)
    if isinstance(getattr(distributed, "world_size", None), int) and distributed.world_size > 1:  # type: ignore[union-attr]
        return "Hugging Face's split_dataset_by_node"
    root = type(dataset).__module__.partition(".")[0]
    if root in ("litdata", "streaming"):
        return f"{root}'s {type(dataset).__name__}, which reads the rank's share"
    stages = getattr(dataset, "pipeline", None)
    if isinstance(stages, list) and any(
        getattr(stage, "__name__", None) == "split_by_node" for stage in stages
    ):
        return "webdataset's nodesplitter=split_by_node"
    return None


def _reader(frame: FrameType | None) -> tuple[str, int, int] | None:
    """The accelerate reader among the callers from ``frame`` up, if any.

    Its name, its process count and how many calls up from ``frame`` it is.

    The whole stack is looked at: in a forked DataLoader worker it goes on with the main
    process's calls that started the worker (the dispatcher's ``__iter__`` among them).
    """
    up = 0
    while frame is not None:
        owner: Any = frame.f_locals.get("self")
        kind = type(owner)
        if kind.__name__ in _READERS and kind.__module__.partition(".")[0] == "accelerate":
            count: Any = getattr(owner, "num_processes", None)
            if count is None:  # the dispatcher's is its state's
                count = getattr(getattr(owner, "state", None), "num_processes", 1)
            return kind.__name__, int(count), up
        frame, up = frame.f_back, up + 1
    return None


def check_reader(wrapper: Any) -> None:
    """Warn if accelerate deals among processes a stream that splits by rank itself.

    Called by a pass as it starts reading: accelerate's reader is among its callers.

    Args:
        wrapper: The streaming wrapper whose pass starts.

    Warns:
        RankaugWarning: If ``wrapper``'s stream splits by rank and accelerate's
            ``IterableDatasetShard`` or ``DataLoaderDispatcher`` of more than one process
            reads it.
    """
    if current_worker()[0] == 0:  # one worker of a DataLoader tells
        _warn_reader(wrapper, sys._getframe(1))


def check_pickled(wrapper: Any) -> None:
    """:func:`check_reader`, for a wrapper pickled in the main process (for spawned workers).

    A spawned worker's calls start afresh, without the dispatcher that started it: the
    main process, pickling the wrapper for it, is where the dispatcher is seen.
    """
    if current_worker()[1] == 0:
        _warn_reader(wrapper, sys._getframe(1), only="DataLoaderDispatcher")


def _warn_reader(wrapper: Any, frame: FrameType, only: str | None = None) -> None:
    """Warn if an accelerate reader above ``frame`` deals ``wrapper``'s split stream again."""
    how = rank_split(wrapper.dataset)
    found = None if how is None else _reader(frame)
    if found is None or found[1] < 2 or only not in (None, found[0]):
        return
    reader, count, up = found
    lost = (
        "the main process alone reads its rank's share, and the other ranks' shares are never read"
        if reader == "DataLoaderDispatcher"
        else f"each rank keeps 1/{count} of its own share, and the rest is never trained on"
    )
    warnings.warn(
        f"{type(wrapper).__name__} reads {type(wrapper.dataset).__name__}, which splits by "
        f"rank itself ({how}), and accelerate's {reader} deals its samples among the "
        f"{count} processes again: {lost}. Either give accelerator.prepare a stream that "
        "every rank reads whole (and DataLoaderConfiguration(dispatch_batches=False): each "
        "process keeps its batches), or keep the stream's split and leave the DataLoader "
        "out of accelerator.prepare (move the batches to accelerator.device yourself)",
        RankaugWarning,
        # frame is at 3; the dispatcher's caller is the loop over the loader (the shard's
        # is the DataLoader's fetcher: frame, the pass reading the stream, is named)
        stacklevel=4 + up if reader == "DataLoaderDispatcher" else 3,
    )
