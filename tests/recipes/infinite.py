"""ultralytics' InfiniteDataLoader pattern, as its trainer uses it (for test_infinite.py).

The loader's iterator is built once over a batch sampler that repeats forever, so the
DataLoader prefetches the first batches of pass k+1 while the training loop is still
in pass k, before the trainer calls ``sampler.set_epoch(k + 1)`` (ultralytics'
``BaseTrainer`` does exactly that at the top of each epoch).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch.utils.data import DataLoader, DistributedSampler

from rankaug import EpochSampler, collate_detection
from tests.recipes.pipeline import BATCH, AllKeyings, rows_all


class _RepeatSampler:
    def __init__(self, sampler: Any) -> None:
        self.sampler = sampler

    def __iter__(self) -> Iterator[Any]:
        while True:
            yield from iter(self.sampler)


class InfiniteDataLoader(DataLoader[Any]):
    """ultralytics' ``InfiniteDataLoader`` (8.4): one iterator for every epoch.

    It is made on the first pass; ``reset()`` stops it, for the next pass to make anew.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        object.__setattr__(self, "batch_sampler", _RepeatSampler(self.batch_sampler))
        self.iterator: Any = None

    def __len__(self) -> int:
        return len(self.batch_sampler.sampler)  # type: ignore[attr-defined, union-attr]

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        if self.iterator is None:
            self.iterator = self._get_iterator()
        for _ in range(len(self)):
            yield next(self.iterator)

    def close(self) -> None:
        """Stop the workers now (ultralytics' loader does it in ``__del__`` too)."""
        if hasattr(self.iterator, "_workers"):
            self.iterator._shutdown_workers()

    def reset(self) -> None:
        self.close()
        self.iterator = None


def train(rank: int, world_size: int, *, epochs: int) -> list[dict[str, Any]]:
    """The trainer's loop on one rank; returns one record per batch."""
    dataset = AllKeyings()
    sampler = EpochSampler(DistributedSampler(dataset, seed=0))
    loader = InfiniteDataLoader(
        dataset, batch_size=BATCH, sampler=sampler, num_workers=2, collate_fn=collate_detection
    )
    records = []
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)  # type: ignore[attr-defined]
        for step, batch in enumerate(loader):
            records.append({"epoch": epoch, "step": step, "rows": rows_all(batch)})
    loader.close()
    return records
