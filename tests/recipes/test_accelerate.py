"""The accelerate recipe of docs/guides/frameworks.md, run for real (accelerate_train.py).

``accelerate launch --multi_gpu --num_processes 2`` runs the page's own ``fit``.
Without a GPU, ``Accelerator(cpu=True)`` makes those two processes accelerate's
MULTI_CPU job over gloo. ``accelerator.prepare`` shards the loader's batches; the
sampler is ``EpochSampler(RandomSampler(train, generator=...))``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import ahead
from tests.recipes import accelerate_launch
from tests.recipes.conftest import lines
from tests.recipes.pipeline import KEYINGS

pytestmark = [pytest.mark.framework, pytest.mark.timeout(300)]


def launch(root: Path) -> Path:
    """The recipes' one launch: "first", "seedable", "again" (the rerun of "first"),
    then the stream recipe of test_accelerate_stream.py, which takes it too (a job of
    tests.ahead, named so in its JOBS)."""
    return accelerate_launch.trained(root)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = ahead.result("accelerate", lambda: tmp_path_factory.mktemp("accelerate"))
    return {name: root / name for name in accelerate_launch.RUNS}


class TestAccelerateRecipe:
    @pytest.mark.parametrize("name", ["first", "seedable"])
    def test_epochs_reach_every_sample_and_ranks_get_their_shard(
        self, runs: dict[str, Path], name: str
    ) -> None:
        rank0, rank1 = lines(runs[name], 0), lines(runs[name], 1)
        assert len(rank0) == len(rank1) == 12  # 24 samples, 2 processes, batches of 3
        for epoch in range(3):
            mains = []
            for records in (rank0, rank1):
                rows = [row for r in records if r["epoch"] == epoch for row in r["rows"]["sample"]]
                assert {row["epoch"] for row in rows} == {epoch}
                mains.append({row["indices"][0] for row in rows})
            assert not mains[0] & mains[1]  # sharded: each index on one process
            assert len(mains[0] | mains[1]) == 24
        for records in (rank0, rank1):
            for record in records:
                assert {row["epoch"] for row in record["rows"]["stream"]} == {record["epoch"]}

    def test_no_epoch_replays_and_ranks_differ(self, runs: dict[str, Path]) -> None:
        digests: dict[str, list[str]] = {}
        for rank in (0, 1):
            for record in lines(runs["first"], rank):
                for keying in KEYINGS:
                    for row in record["rows"][keying]:
                        digests.setdefault(keying, []).append(row["digest"])
        for keying, seen in digests.items():  # type: ignore[assignment]
            assert len(seen) == 72
            assert len(set(seen)) == 72, keying

    def test_a_rerun_is_bit_identical(self, runs: dict[str, Path]) -> None:
        # new objects in the same processes, after "seedable": new loaders and workers
        for rank in (0, 1):
            assert lines(runs["first"], rank) == lines(runs["again"], rank)
