"""A streaming wrapper built before its ranks are forked: each rank counts its own passes.

2 gloo ranks forked from the test process after the wrappers were built (as
``multiprocessing.get_context("fork")`` launches them), each looping over the same
wrapper objects with its own DataLoader: forked workers, persistent or not, and none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch.distributed as dist
from torch.utils.data import DataLoader

from rankaug import RandomAugmentWrapper
from tests.ddp.harness import launch_forked
from tests.stream.helpers import EpochShards, noise

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(600)]

PASSES = 3
LOADERS = {"workers": (2, False), "persistent": (2, True), "main": (0, False)}


def make() -> Any:
    return RandomAugmentWrapper(EpochShards(12), noise, seed=0)


def passes(wrapper: Any, workers: int, persistent: bool) -> list[list[list[Any]]]:
    """Per pass, ``[id, epoch told to the stream, noise]`` of each output, the ranks in step."""
    context = "fork" if workers else None
    loader = DataLoader(wrapper, batch_size=None, num_workers=workers,
                        persistent_workers=persistent, multiprocessing_context=context)  # fmt: skip
    out = []
    for _ in range(PASSES):
        out.append(sorted([s["id"], s["epoch"], s["noise"]] for s in loader))
        dist.barrier()  # the other rank's pass has ended too
    return out


def rank_passes(rank: int, world_size: int, wrappers: dict[str, Any]) -> dict[str, Any]:
    """Each loader's passes over the inherited wrapper, and over one made in this rank."""
    report = {}
    for name, (workers, persistent) in LOADERS.items():
        shared, own = wrappers[name], make()
        if rank == 1:  # one rank starts elsewhere: its epochs are its own
            shared.set_epoch(5)
            own.set_epoch(5)
        dist.barrier()  # both ranks' set_epoch made before either pass
        report[name] = {"shared": passes(shared, workers, persistent),
                        "own": passes(own, workers, persistent)}  # fmt: skip
    return report


class TestForkedRanks:
    def test_each_rank_counts_its_passes(self, tmp_path: Path) -> None:
        wrappers = {name: make() for name in LOADERS}  # before the ranks
        reports = launch_forked(rank_passes, 2, tmp_path, wrappers)
        for rank, report in enumerate(reports):
            first = 5 * rank
            for name in LOADERS:
                shared = report[name]["shared"]
                told = [sorted({epoch for _, epoch, _ in outputs}) for outputs in shared]
                assert (name, rank, told) == (name, rank, [[first + e] for e in range(PASSES)])
                assert shared == report[name]["own"]  # as a wrapper of its own draws
        assert reports[0]["workers"]["shared"] != reports[1]["workers"]["shared"]
        assert [wrapper.epoch for wrapper in wrappers.values()] == [0, 0, 0]  # the parent's
