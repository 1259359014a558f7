"""ultralytics' InfiniteDataLoader pattern on 2 real gloo ranks, 2 workers each.

With a shared-memory epoch set by ``set_epoch``, part of every pass was keyed with the
previous epoch, depending on timing (two identical runs agreed on 40-47 of 128
samples). With ``EpochSampler`` every sample of pass k is keyed with epoch k.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.ddp.harness import launch_forked
from tests.recipes.infinite import train
from tests.recipes.pipeline import KEYINGS

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(300)]


def train_twice(rank: int, world_size: int, epochs: int) -> list[list[dict[str, Any]]]:
    """The run, then the rerun: a new loader, new workers, in the same rank process."""
    return [train(rank, world_size, epochs=epochs) for _ in range(2)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[list[list[dict[str, Any]]]]:
    ranks = launch_forked(train_twice, 2, tmp_path_factory.mktemp("infinite"), 3)
    return [[twice[run] for twice in ranks] for run in range(2)]


class TestInfiniteDataLoaderRecipe:
    def test_every_sample_of_pass_k_is_keyed_with_epoch_k(
        self, runs: list[list[list[dict[str, Any]]]]
    ) -> None:
        for rank_records in runs[0]:
            assert len(rank_records) == 12
            for record in rank_records:
                for keying in KEYINGS:
                    epochs = {row["epoch"] for row in record["rows"][keying]}
                    assert epochs == {record["epoch"]}, (keying, record["step"])

    def test_reruns_are_bit_identical(self, runs: list[list[list[dict[str, Any]]]]) -> None:
        assert runs[0] == runs[1]

    def test_ranks_and_epochs_differ(self, runs: list[list[list[dict[str, Any]]]]) -> None:
        for keying in KEYINGS:
            digests = [row["digest"] for records in runs[0] for record in records
                       for row in record["rows"][keying]]  # fmt: skip
            assert len(digests) == 72
            assert len(set(digests)) == 72
