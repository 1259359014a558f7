"""The seeds' scenario for the mixing family under real DDP: 3 gloo ranks that all called
``torch.manual_seed(0)``, DataLoaders with 2 persistent workers, 2 epochs. An
ultralytics-style MixUp draws its partner from the global ``random`` and its ratio from
``np.random.beta``, and repeats both on every rank; MixUpDataset, CutMixDataset and
CopyPasteDataset draw from the key and do not."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from rankaug import EpochSampler
from rankaug.datasets import SyntheticDetection
from rankaug.mix import CopyPasteDataset, CutMixDataset, MixUpDataset
from tests import ahead
from tests.ddp.harness import digest, launch

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(600)]

WORLD = 3
LENGTH = 24  # 8 samples per rank and epoch
EPOCHS = 2


class Source(Dataset[dict[str, Any]]):
    """Tiny detection samples with one instance mask per box."""

    def __init__(self) -> None:
        self.shapes = SyntheticDetection(LENGTH, image_size=16, max_objects=2, masks=False)

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> dict[str, Any]:
        sample = self.shapes[index]
        masks = np.zeros((len(sample["bboxes"]), 16, 16), np.uint8)
        for k, (x0, y0, x1, y1) in enumerate(sample["bboxes"].astype(int)):
            masks[k, y0:y1, x0:x1] = 1
        return {**sample, "masks": masks}


class UltralyticsStyleMixUp(Dataset[list[Any]]):
    """ultralytics' MixUp draws: ``random.randint`` for the partner, ``np.random.beta``."""

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> list[Any]:
        partner = random.randint(0, LENGTH - 1)
        ratio = float(np.random.beta(32.0, 32.0))  # noqa: NPY002 (the control's global state)
        return [index, [partner, ratio]]


class Family(Dataset[list[Any]]):
    """The three keyed wrappers on the same index: each one's partner, draw and pixels."""

    def __init__(self) -> None:
        source = Source()
        self.wrappers = {
            "mixup": MixUpDataset(source, seed=0),
            "cutmix": CutMixDataset(source, seed=0),
            "copypaste": CopyPasteDataset(source, seed=0, p=1.0),
        }

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> list[Any]:
        row: list[Any] = [int(index)]
        for name, wrapper in self.wrappers.items():
            sample = wrapper[index]
            record = sample[name]
            draw = {"mixup": "ratio", "cutmix": "rect", "copypaste": "pasted"}[name]
            row.append(
                [record["indices"][1], record[draw], record["epoch"], digest(sample["image"])]
            )
        return row


def run(dataset: Dataset[Any], keyed: bool) -> list[list[Any]]:
    shares = DistributedSampler(dataset, seed=0)
    loader = DataLoader(
        dataset, sampler=EpochSampler(shares) if keyed else shares, batch_size=None,
        num_workers=2, persistent_workers=True, collate_fn=lambda sample: sample,
        multiprocessing_context="fork",
    )  # fmt: skip
    rows = []
    for epoch in range(EPOCHS):
        if not keyed:
            shares.set_epoch(epoch)
        for step, row in enumerate(loader):
            rows.append([epoch, step, *row])
    return rows


def rank_main(rank: int, world_size: int) -> dict[str, Any]:
    results = {"rankaug": run(Family(), keyed=True)}
    results["ultralytics"] = run(UltralyticsStyleMixUp(), keyed=False)
    # The rerun: new wrappers, new workers, the rank's global state moved on.
    results["rerun"] = run(Family(), keyed=True)
    return results


def launch_once(tmp: Path) -> list[Any]:
    """The one launch of this file (a job of tests.ahead)."""
    return launch(rank_main, WORLD, tmp)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any]]:
    first = ahead.result("ddp-mix", lambda: tmp_path_factory.mktemp("ddp-mix"))
    return first, [{"rankaug": result["rerun"]} for result in first]


def by_step(run: list[dict[str, Any]], key: str, column: int) -> dict[tuple[int, int], list[Any]]:
    """(epoch, step) -> every rank's (partner, draw) of one wrapper, by rank."""
    table: dict[tuple[int, int], list[Any]] = {}
    for result in run:
        for row in result[key]:
            table.setdefault((row[0], row[1]), []).append(tuple(map(str, row[column][:2])))
    return table


WRAPPERS = {"mixup": 3, "cutmix": 4, "copypaste": 5}


class TestSeedsScenario:
    def test_the_ultralytics_style_control_repeats_on_every_rank(self, runs: Any) -> None:
        table = by_step(runs[0], "ultralytics", 3)
        assert len(table) == EPOCHS * LENGTH // WORLD
        for per_rank in table.values():
            assert len(per_rank) == WORLD
            assert len(set(per_rank)) == 1  # the same partner and ratio on every rank

    @pytest.mark.parametrize("name", ["mixup", "cutmix"])
    def test_partners_and_draws_differ_across_ranks(self, runs: Any, name: str) -> None:
        table = by_step(runs[0], "rankaug", WRAPPERS[name])
        assert len(table) == EPOCHS * LENGTH // WORLD
        for per_rank in table.values():
            assert len(set(per_rank)) == WORLD
        for rank in range(WORLD):  # and each rank's sequence of partners is its own
            partners = [per_rank[rank][0] for per_rank in table.values()]
            others = [[per_rank[r][0] for per_rank in table.values()] for r in range(WORLD)]
            assert others.count(partners) == 1

    def test_copy_paste_partners_differ_across_ranks(self, runs: Any) -> None:
        table = by_step(runs[0], "rankaug", WRAPPERS["copypaste"])
        sequences = [[per_rank[r][0] for per_rank in table.values()] for r in range(WORLD)]
        assert len({tuple(s) for s in sequences}) == WORLD

    @pytest.mark.parametrize("name", ["mixup", "cutmix"])
    def test_draws_differ_across_epochs_keyed_by_the_index(self, runs: Any, name: str) -> None:
        column = WRAPPERS[name]
        for result in runs[0]:
            rows = {(row[0], row[1]): row[column] for row in result["rankaug"]}
            for step in range(LENGTH // WORLD):
                assert rows[(0, step)][:2] != rows[(1, step)][:2]
                assert (rows[(0, step)][2], rows[(1, step)][2]) == (0, 1)

    def test_a_rerun_is_bit_identical(self, runs: Any) -> None:
        first, second = runs
        assert [r["rankaug"] for r in second] == [r["rankaug"] for r in first]
