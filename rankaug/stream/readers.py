"""Who reads a streaming wrapper: accelerate's sharding over a stream that splits by rank.

``accelerator.prepare(DataLoader(stream))`` deals an ``IterableDataset``'s samples among
the processes itself: with ``dispatch_batches`` (its default for one) the main process
alone reads the loader and hands each process a slice of its batches; without, each
process reads the whole stream through an ``IterableDatasetShard`` and keeps a slice. Over
a stream that already splits by rank (Hugging Face's ``split_dataset_by_node``,
webdataset's ``nodesplitter=split_by_node``, litdata, mosaicml-streaming) each rank's
share is dealt again: without a word, half the samples (on 2 processes) are never read,
or never kept. A pass read by either warns (:func:`check_reader`); accelerate and the
libraries are recognised by type name, never imported here.
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any, Final

from rankaug.errors import RankaugWarning

__all__ = ["check_reader", "rank_split"]

#: accelerate's classes that deal an IterableDataset's samples among the processes.
_READERS: Final = frozenset({"IterableDatasetShard", "DataLoaderDispatcher"})
#: How far up the calls a reader is looked for (a DataLoader's iterator and fetcher between).
_DEPTH: Final = 16


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


def _reader(frame: FrameType | None) -> tuple[str, int] | None:
    """The accelerate reader among the callers from ``frame`` up, and its process count."""
    for _ in range(_DEPTH):
        if frame is None:
            return None
        owner: Any = frame.f_locals.get("self")
        kind = type(owner)
        if kind.__name__ in _READERS and kind.__module__.partition(".")[0] == "accelerate":
            count: Any = getattr(owner, "num_processes", None)
            if count is None:  # the dispatcher's is its state's
                count = getattr(getattr(owner, "state", None), "num_processes", 1)
            return kind.__name__, int(count)
        frame = frame.f_back
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
    how = rank_split(wrapper.dataset)
    found = None if how is None else _reader(sys._getframe(1))
    if found is None or found[1] < 2:
        return
    reader, count = found
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
        stacklevel=2,
    )
