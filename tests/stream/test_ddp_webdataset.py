"""webdataset recipe, for real: local TarWriter shards, 2 gloo ranks x 2 workers."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from rankaug import RandomAugmentWrapper
from tests.ddp.harness import launch
from tests.stream.ddp_checks import check_reports, drawn, rank_report, torchrun_environment
from tests.stream.helpers import detection, noise

wds = pytest.importorskip("webdataset")

pytestmark = [
    pytest.mark.ddp,
    pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning"),
    # webdataset 1.0.2 leaves its tar files to the garbage collector
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
SHARDS, PER_SHARD = 8, 4


def write_shards(directory: Path) -> str:
    for shard in range(SHARDS):
        with wds.TarWriter(str(directory / f"train-{shard:04d}.tar")) as sink:
            for k in range(shard * PER_SHARD, (shard + 1) * PER_SHARD):
                sink.write({"__key__": f"s{k:04d}", "npy": detection(k)["image"]})
    return str(directory / f"train-{{0000..{SHARDS - 1:04d}}}.tar")


def unpack(sample: dict[str, Any]) -> dict[str, Any]:
    return {"image": sample["npy"], "id": sample["__key__"]}


def make(urls: str, keying: str) -> Any:
    """The recipe: shards split by node then worker, shuffled by rankaug's epoch."""
    stream = wds.WebDataset(
        urls,
        nodesplitter=wds.split_by_node,
        workersplitter=wds.split_by_worker,
        shardshuffle=SHARDS,
        detshuffle=True,  # its epoch comes from the wrapper, also in fresh workers
        seed=7,
        empty_check=False,
    ).decode().map(unpack)  # fmt: skip
    return RandomAugmentWrapper(stream, noise, seed=0, keying=keying, sample_id="id")


def on_rank(rank: int, world_size: int, urls: str) -> dict[str, Any]:
    torchrun_environment(rank, world_size)
    return rank_report(functools.partial(make, urls))


class TestWebDataset:
    def test_two_ranks_two_workers(self, tmp_path: Path) -> None:
        urls = write_shards(tmp_path)
        reference = drawn(make(urls, "sample"), workers=0)
        reports = launch(on_rank, 2, tmp_path, urls=urls)
        check_reports(reports, reference)
        assert [r["resumes"] for r in reports] == [True, True]
        assert len(reference[0]) == SHARDS * PER_SHARD
