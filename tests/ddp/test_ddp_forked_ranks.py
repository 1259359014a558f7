"""A map-style wrapper built before its ranks are forked: each rank's set_epoch is its own.

2 gloo ranks forked from the test process after the wrappers were built (as
``multiprocessing.get_context("fork")`` launches them); each sets its own epochs on the
same wrapper objects and reads them through its own DataLoader: forked workers,
persistent or not, and none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch.distributed as dist
from torch.utils.data import DataLoader

from rankaug import KeyedDataset, SampleContext
from rankaug.keys import KeyedRandom
from tests.ddp.harness import launch_forked

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(600)]

LOADERS = {"workers": (2, False), "persistent": (2, True), "main": (0, False)}


class Epochs(KeyedDataset[list[int]]):
    """Each sample's epoch and first draw (keyed by seed, rank, epoch and index)."""

    def augment(self, context: SampleContext, keyed: KeyedRandom) -> list[int]:
        return [context.epoch, int(keyed.generator.integers(2**31))]


def rank_epochs(rank: int, world_size: int, wrappers: dict[str, Any]) -> dict[str, Any]:
    """Per loader and pass, the sorted ``[epoch, draw]`` of each sample this rank read."""
    report = {}
    for name, (workers, persistent) in LOADERS.items():
        wrapper = wrappers[name]
        loader = DataLoader(wrapper, batch_size=None, num_workers=workers,
                            persistent_workers=persistent,
                            multiprocessing_context="fork" if workers else None)  # fmt: skip
        report[name] = []
        for epoch in (10 + rank, 20 + rank):  # each rank's own epochs
            wrapper.set_epoch(epoch)
            dist.barrier()  # both ranks' set_epoch made before either pass
            report[name].append(sorted(loader))
            dist.barrier()
    return report


class TestForkedRanks:
    def test_each_ranks_set_epoch_reaches_its_workers_alone(self, tmp_path: Path) -> None:
        wrappers = {
            name: Epochs(list(range(8)), seed=0, keying="sample_rank") for name in LOADERS
        }  # before the ranks
        reports = launch_forked(rank_epochs, 2, tmp_path, wrappers)
        for rank, report in enumerate(reports):
            for name in LOADERS:
                own = Epochs(list(range(8)), seed=0, keying="sample_rank", rank=rank)
                expected = []
                for epoch in (10 + rank, 20 + rank):
                    own.set_epoch(epoch)
                    expected.append(sorted(own[i] for i in range(8)))
                assert (name, rank, report[name]) == (name, rank, expected)
        assert [wrapper.epoch for wrapper in wrappers.values()] == [0, 0, 0]  # the parent's
