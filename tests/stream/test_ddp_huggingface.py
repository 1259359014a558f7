"""Hugging Face datasets recipe, for real: a local dataset streamed as an IterableDataset
(``to_iterable_dataset(num_shards=...)`` + ``split_dataset_by_node``), 2 ranks x 2 workers.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from rankaug import RandomAugmentWrapper
from tests.ddp.harness import launch
from tests.stream.ddp_checks import check_reports, drawn, rank_report, torchrun_environment
from tests.stream.helpers import detection, noise

datasets = pytest.importorskip("datasets")

pytestmark = [
    pytest.mark.ddp,
    pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning"),
]
SAMPLES = 32


def write_dataset(directory: Path) -> str:
    datasets.disable_progress_bars()
    features = datasets.Features(
        {"image": datasets.Array3D((32, 32, 3), "uint8"), "id": datasets.Value("string")}
    )
    rows = [detection(k) for k in range(SAMPLES)]
    table = {"image": [r["image"] for r in rows], "id": [r["id"] for r in rows]}
    datasets.Dataset.from_dict(table, features=features).save_to_disk(str(directory / "hf"))
    return str(directory / "hf")


def make(path: str, rank: int, world_size: int, keying: str) -> Any:
    """The recipe: 8 shards, split over the ranks, then over each rank's workers."""
    from datasets.distributed import split_dataset_by_node

    stream = datasets.load_from_disk(path).to_iterable_dataset(num_shards=8)
    stream = split_dataset_by_node(stream, rank=rank, world_size=world_size)
    stream = stream.with_format("numpy")
    return RandomAugmentWrapper(stream, noise, seed=0, keying=keying, sample_id="id")


def on_rank(rank: int, world_size: int, path: str) -> dict[str, Any]:
    torchrun_environment(rank, world_size)
    datasets.disable_progress_bars()
    return rank_report(functools.partial(make, path, rank, world_size))


class TestHuggingFace:
    def test_two_ranks_two_workers(self, tmp_path: Path) -> None:
        path = write_dataset(tmp_path)
        reference = drawn(make(path, 0, 1, "sample"), workers=0)
        reports = launch(on_rank, 2, tmp_path, path=path)
        check_reports(reports, reference)
        assert [r["resumes"] for r in reports] == [True, True], "resume"  # HF's own state
        assert len(reference[0]) == SAMPLES
