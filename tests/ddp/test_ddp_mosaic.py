"""The seeds' scenario under real DDP: 3 gloo ranks that all called
``torch.manual_seed(0)`` (and, as the first article tried, ``random.seed(seed + rank)``),
DataLoaders with 2 persistent workers, 2 epochs. YOLOv5's approach draws the partner
tiles from the global ``random`` and repeats them on every rank; MosaicDataset does not."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from rankaug import MosaicDataset
from rankaug.datasets import SyntheticDetection
from tests import ahead
from tests.ddp.harness import digest, launch

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(600)]

WORLD = 3
LENGTH = 24  # 8 mosaics per rank and epoch
EPOCHS = 2


def source() -> SyntheticDetection:
    return SyntheticDetection(LENGTH, image_size=32, max_objects=3)


class YoloV5Partners(Dataset[dict[str, Any]]):
    """YOLOv5's load_mosaic: three partner indices from the global ``random``."""

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> dict[str, Any]:
        partners = [random.randint(0, LENGTH - 1) for _ in range(3)]
        return {"image": source()[index]["image"], "mosaic": {"indices": [index, *partners]}}

    def set_epoch(self, epoch: int) -> None:
        """Nothing to do: this is the approach that has no epoch."""


class Probe(Dataset[tuple[int, list[int], str]]):
    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> tuple[int, list[int], str]:
        sample = self.dataset[index]
        return index, list(sample["mosaic"]["indices"][1:]), digest(sample["image"])


def run(dataset: Any, workers: int) -> list[list[Any]]:
    probe = Probe(dataset)
    sampler = DistributedSampler(probe, seed=0)
    loader = DataLoader(
        probe, sampler=sampler, batch_size=None, num_workers=workers,
        persistent_workers=workers > 0, collate_fn=lambda sample: sample,
        multiprocessing_context="fork" if workers else None,
    )  # fmt: skip
    records = []
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        dataset.set_epoch(epoch)
        for step, (index, partners, fingerprint) in enumerate(loader):
            records.append([epoch, step, index, partners, fingerprint])
    return records


def rank_main(rank: int, world_size: int) -> dict[str, Any]:
    random.seed(0 + rank)  # the first article's fix, which the DataLoader undoes
    results = {"rankaug": run(MosaicDataset(source(), seed=0, output_size=48), workers=2)}
    results["yolov5"] = run(YoloV5Partners(), workers=2)
    for workers in (0, 2):
        sample_keyed = MosaicDataset(source(), seed=0, output_size=48, keying="sample")
        results[f"sample/{workers}"] = run(sample_keyed, workers=workers)
    # The rerun: a new dataset, new workers, the global ``random`` moved on by the above.
    results["rerun"] = run(MosaicDataset(source(), seed=0, output_size=48), workers=2)
    return results


def launch_once(tmp: Path) -> list[Any]:
    """The one launch of this file (a job of tests.ahead)."""
    return launch(rank_main, WORLD, tmp)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any]]:
    first = ahead.result("ddp-mosaic", lambda: tmp_path_factory.mktemp("ddp-mosaic"))
    return first, [{"rankaug": result["rerun"]} for result in first]


def partners_by_step(run: list[dict[str, Any]], key: str) -> dict[tuple[int, int], list[Any]]:
    table: dict[tuple[int, int], list[Any]] = {}
    for result in run:
        for epoch, step, _index, partners, _fingerprint in result[key]:
            table.setdefault((epoch, step), []).append(partners)
    return table


class TestSeedsScenario:
    def test_yolov5_approach_repeats_partners_on_every_rank(self, runs: Any) -> None:
        table = partners_by_step(runs[0], "yolov5")
        assert len(table) == EPOCHS * LENGTH // WORLD
        for per_rank in table.values():
            assert len(per_rank) == WORLD
            assert all(p == per_rank[0] for p in per_rank)

    def test_mosaic_dataset_partners_differ_across_ranks(self, runs: Any) -> None:
        table = partners_by_step(runs[0], "rankaug")
        assert len(table) == EPOCHS * LENGTH // WORLD
        for per_rank in table.values():
            assert len({tuple(p) for p in per_rank}) == WORLD

    def test_mosaic_dataset_partners_differ_across_epochs(self, runs: Any) -> None:
        table = partners_by_step(runs[0], "rankaug")
        steps = LENGTH // WORLD
        for step in range(steps):
            for rank in range(WORLD):
                assert table[(0, step)][rank] != table[(1, step)][rank]

    def test_second_run_is_bit_identical(self, runs: Any) -> None:
        first, second = runs
        assert [r["rankaug"] for r in second] == [r["rankaug"] for r in first]

    def test_sample_keying_gives_the_same_mosaic_with_zero_and_two_workers(self, runs: Any) -> None:
        def by_index(key: str) -> dict[tuple[int, int], Any]:
            return {(rec[0], rec[2]): (rec[3], rec[4]) for r in runs[0] for rec in r[key]}

        zero, two = by_index("sample/0"), by_index("sample/2")
        assert len(zero) == EPOCHS * LENGTH
        assert zero == two
