"""What every rank of ``rankaug audit`` runs on a stream: iterate it, fingerprint each sample.

An iterable dataset has no index to hand every rank, so the audit reads it as training
does: each rank builds the stream, a DataLoader of ``workers`` workers iterates it once
per epoch (``dataset.set_epoch(epoch)`` first under ``--epoch-from set_epoch``), and
:class:`_StreamProbe` fingerprints the first ``probe x repeats`` samples of every
worker's pass inside the worker, with each sample's id (``--sample-id``, webdataset's
``__key__`` by default; the position in the pass when a sample has none). The
verdicts then compare the same sample id across ranks, workers, epochs and runs
(:mod:`rankaug.cli.stream_verdicts`).

After the epochs, the rank process reads two more passes itself, one after the other:
the same sample in two passes of one process is the baseline, how often a sample
gives the same output when the random draws are not aligned (over a stream there is no
other position to load it at).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from torch.utils.data import DataLoader, IterableDataset

from rankaug.cli.adapter import build_adapter
from rankaug.cli.failure import Failure
from rankaug.cli.launch import only_sample, progress
from rankaug.context import current_worker

if TYPE_CHECKING:
    from rankaug.cli.probe import AuditConfig, _Probe

__all__ = ["BASELINE_EPOCH", "StreamItem", "StreamRows", "sample_limit", "stream_records"]

#: The epoch number of the baseline passes' rows (pass ``-1`` and ``-2``).
BASELINE_EPOCH = -1

# (worker id, position in the pass, sample id, digest, skipped types), or a failure
StreamItem = tuple[int, int, Any, str, tuple[str, ...]] | Failure
# (epoch, worker, position, sample id, digest); the baseline passes have epochs -1, -2
StreamRows = list[tuple[int, int, int, Any, str]]


def sample_limit(config: AuditConfig) -> int:
    """The samples fingerprinted per worker and pass: ``probe x repeats``."""
    return config.probe * config.repeats


def _sample_id(sample: Any, key: str, position: int) -> Any:
    """``sample[key]`` when the sample is a mapping holding it, else the position."""
    if isinstance(sample, Mapping) and key in sample:
        value = sample[key]
        return value if isinstance(value, int | str) else repr(value)
    return position


class _StreamProbe(IterableDataset[StreamItem]):
    """Iterates ``dataset`` and fingerprints its first ``limit`` samples in each pass."""

    def __init__(self, dataset: Any, probe: _Probe, limit: int, key: str) -> None:
        self.dataset = dataset
        self.probe = probe
        self.limit = limit
        self.key = key

    def __iter__(self) -> Iterator[StreamItem]:
        worker, _ = current_worker()
        iterator = iter(self.dataset)
        for position in range(self.limit):
            try:
                sample = next(iterator)
            except StopIteration:
                return
            except Exception as error:
                yield Failure.of(f"sample {position} of the stream", position, worker, error)
                return
            found = self.probe.fingerprint(sample, position, worker)
            if isinstance(found, Failure):
                yield found
                return
            yield worker, position, _sample_id(sample, self.key, position), *found


def _rows(items: Any, epoch: int, target: str, rank: int) -> tuple[StreamRows, set[str]]:
    rows: StreamRows = []
    skipped: set[str] = set()
    for item in items:
        if isinstance(item, Failure):
            raise item.error(target, rank=rank, epoch=max(epoch, 0))
        worker, position, sample_id, digest, types = item
        rows.append((epoch, worker, position, sample_id, digest))
        skipped.update(types)
    return rows, skipped


def stream_records(
    config: AuditConfig, dataset: Any, target: str, rank: int, run: int
) -> tuple[StreamRows, set[str]]:
    """One rank's rows for a stream target: its epochs, then the two baseline passes."""
    from rankaug.cli.probe import _Probe  # it imports this module

    adapter = build_adapter(config.adapter, config.keys)
    probe = _Probe(None, adapter, config.reader, config.box_format)
    limit = sample_limit(config)
    streamed = _StreamProbe(dataset, probe, limit, config.sample_id)
    loader: DataLoader[Any] = DataLoader(
        streamed,
        batch_size=1,
        num_workers=config.workers,
        persistent_workers=config.persistent and config.workers > 0,
        multiprocessing_context=config.start_method if config.workers > 0 else None,
        collate_fn=only_sample,
    )
    rows: StreamRows = []
    skipped: set[str] = set()
    set_epoch = getattr(dataset, "set_epoch", None) if config.epoch_from == "set_epoch" else None
    for epoch in range(config.epochs):
        if callable(set_epoch):
            set_epoch(epoch)
        found, types = _rows(loader, epoch, target, rank)
        rows += found
        skipped |= types
        progress(
            config.progress,
            rank,
            f"{target}: run {run + 1}, epoch {epoch + 1}/{config.epochs}, "
            f"{len(found)} streamed samples fingerprinted",
        )
    del loader
    for baseline in (BASELINE_EPOCH, BASELINE_EPOCH - 1):
        found, types = _rows(iter(streamed), baseline, target, rank)
        rows += found
        skipped |= types
    return rows, skipped
