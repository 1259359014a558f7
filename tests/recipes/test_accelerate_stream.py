"""The accelerate-over-a-stream recipe of docs/guides/frameworks.md, run for real
(accelerate_stream_train.py): ``accelerate launch`` of 2 CPU processes over gloo, the
launch of test_accelerate.py's trainings, after them (accelerate_launch.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import ahead

pytestmark = [pytest.mark.framework, pytest.mark.timeout(300)]
SAMPLES = 32


def _read(out: Path, name: str) -> list[Any]:
    return [json.loads((out / name / f"rank{rank}.json").read_text()) for rank in (0, 1)]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # the recipes' one launch, test_accelerate.py's job: its trainings, then this recipe
    result: Path = ahead.result("accelerate", lambda: tmp_path_factory.mktemp("accelerate"))
    return result


class TestAccelerateStreamRecipe:
    def test_each_epoch_deals_every_sample_once_keyed_by_epoch(self, out: Path) -> None:
        first, second = _read(out, "whole")
        for epoch in range(2):
            ids = [row[0] for row in first[epoch] + second[epoch]]
            assert sorted(ids) == list(range(SAMPLES)), epoch
        digests = [
            dict(map(tuple, ranks[0] + ranks[1])) for ranks in zip(first, second, strict=True)
        ]
        assert sum(digests[0][k] != digests[1][k] for k in range(SAMPLES)) == SAMPLES

    @pytest.mark.parametrize(("name", "reader", "warned"), [
        ("split", "IterableDatasetShard", [True, True]),  # each rank keeps half its share
        ("dispatched", "DataLoaderDispatcher", [True, False]),  # rank 0's share alone
        # a spawned worker's calls hold no dispatcher: each rank's main process, pickling
        # the wrapper for its worker (every rank starts the loader's workers), tells
        ("dispatched-spawn", "DataLoaderDispatcher", [True, True]),
    ])  # fmt: skip
    def test_a_stream_split_by_rank_loses_half_and_warns(
        self, out: Path, name: str, reader: str, warned: list[bool]
    ) -> None:
        reports = _read(out, name)
        ids = reports[0]["ids"] + reports[1]["ids"]
        assert len(ids) == len(set(ids)) == SAMPLES // 2
        text = f"(Hugging Face's split_dataset_by_node), and accelerate's {reader} deals"
        assert [any(text in m for m in report["warnings"]) for report in reports] == warned
