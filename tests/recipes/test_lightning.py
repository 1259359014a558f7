"""The Lightning recipe of docs/guides/frameworks.md, run for real: 2 CPU processes.

lightning_train.py trains with the page's own ``Detector`` and ``fit``:
``train_dataloader()`` returns ``DataLoader(train, sampler=EpochSampler(
DistributedSampler(train), epoch=<the epoch about to run>), collate_fn=BatchCollator())``
with ``use_distributed_sampler=False``; nothing calls ``set_epoch`` on the dataset.
Lightning itself calls ``set_epoch`` on the sampler, after it has built the iterator.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests import ahead
from tests.recipes.conftest import lines, python
from tests.recipes.pipeline import KEYINGS

pytestmark = [pytest.mark.framework, pytest.mark.timeout(600)]


def by_epoch(records: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        out[record["epoch"]].append(record)
    return dict(out)


def train_and_resume(root: Path) -> dict[str, Path]:
    """Two runs in one launch: the uninterrupted one, then a new model and trainer (new
    loaders, new workers) resumed from its checkpoint of epoch 0, which runs epochs 1
    and 2 again (a job of tests.ahead). A resume in a new process is torchdata's
    (test_torchdata.py), on the same pipeline."""
    full, resumed = root / "full", root / "resumed"
    # (the two fits' time: each had 240 s of its own)
    then = ("--then-resume", "0", str(resumed))
    python("lightning_train.py", str(full), "--epochs", "3", *then, timeout=480)
    return {"full": full, "resumed": resumed}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return ahead.result("lightning", lambda: tmp_path_factory.mktemp("lightning"))


class TestLightningRecipe:
    @pytest.mark.parametrize("keying", KEYINGS)
    def test_every_sample_is_keyed_with_the_trainers_epoch(
        self, runs: dict[str, Path], keying: str
    ) -> None:
        for rank in (0, 1):
            records = lines(runs["full"], rank)
            assert sorted(by_epoch(records)) == [0, 1, 2]
            for record in records:
                assert {row["epoch"] for row in record["rows"][keying]} == {record["epoch"]}

    @pytest.mark.parametrize("keying", KEYINGS)
    def test_no_epoch_replays_an_earlier_one(self, runs: dict[str, Path], keying: str) -> None:
        # An index seen again in a later epoch gets a different augmentation (without the
        # epoch in the key, keying="sample" replayed 23 of 23).
        for rank in (0, 1):
            seen: dict[int, set[str]] = defaultdict(set)
            count = 0
            for record in lines(runs["full"], rank):
                for row in record["rows"][keying]:
                    main = row["indices"][0]
                    assert row["digest"] not in seen[main]
                    count += bool(seen[main])
                    seen[main].add(row["digest"])
            assert count >= 10  # indices really came back in later epochs

    def test_ranks_draw_differently(self, runs: dict[str, Path]) -> None:
        rank0, rank1 = lines(runs["full"], 0), lines(runs["full"], 1)
        assert len(rank0) == len(rank1) == 12
        for a, b in zip(rank0, rank1, strict=True):
            for keying in KEYINGS:
                digests0 = {row["digest"] for row in a["rows"][keying]}
                digests1 = {row["digest"] for row in b["rows"][keying]}
                assert not digests0 & digests1
            partners0 = [row["indices"][1:] for row in a["rows"]["stream"]]
            partners1 = [row["indices"][1:] for row in b["rows"]["stream"]]
            assert partners0 != partners1

    def test_a_rerun_is_bit_identical(self, runs: dict[str, Path]) -> None:
        # A new model and trainer run epoch 1 again (from the checkpoint of epoch 0),
        # with new loaders and workers: the same.
        for rank in (0, 1):
            full, again = (
                by_epoch(lines(runs["full"], rank)),
                by_epoch(lines(runs["resumed"], rank)),
            )
            assert len(full[1]) == 4
            assert again[1] == full[1]

    def test_a_resumed_run_continues_exactly(self, runs: dict[str, Path]) -> None:
        for rank in (0, 1):
            resumed = by_epoch(lines(runs["resumed"], rank))
            assert sorted(resumed) == [1, 2]
            assert resumed[2] == by_epoch(lines(runs["full"], rank))[2]
