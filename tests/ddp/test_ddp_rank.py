"""A wrong rank is not silent: 4 real gloo ranks laid out as 2 nodes x 2 processes.

The classic mistake is ``rank=int(os.environ["LOCAL_RANK"])``: the processes with the
same local rank on the two nodes then draw identical streams at every step.
"""

from __future__ import annotations

import os
import pickle
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch.distributed as dist

import rankaug.context
from rankaug import RandomAugmentWrapper, RankaugWarning
from tests.ddp.harness import launch

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(300)]

DATA = [{"image": np.zeros((4, 4), np.uint8)} for _ in range(4)]


def draw(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {"draw": int(rng.integers(2**62))}


def local_rank_job(rank: int, world_size: int) -> dict[str, Any]:
    os.environ["LOCAL_RANK"] = str(rank % 2)  # 2 nodes x 2 processes
    out: dict[str, Any] = {}
    for explicit in ("local", "none"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            given = int(os.environ["LOCAL_RANK"]) if explicit == "local" else None
            train = RandomAugmentWrapper(DATA, draw, seed=0, rank=given)
            draws = [train[i]["draw"] for i in range(4)]
        messages = [str(w.message) for w in caught if issubclass(w.category, RankaugWarning)]
        out[explicit] = {"draws": draws, "warnings": messages}
    return out


def built_before_init_job(rank: int, world_size: int, rendezvous: str) -> dict[str, Any]:
    """rank=LOCAL_RANK on a wrapper built before init_process_group, no RANK variable
    (mp.spawn, Lightning's ddp_spawn, SLURM): nothing to compare with at build time."""
    dist.destroy_process_group()  # the harness's group: this job makes its own, later
    os.environ.pop("RANK", None)
    os.environ["LOCAL_RANK"] = "0"  # one process per node: the same local rank
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train = RandomAugmentWrapper(DATA, draw, seed=0, rank=0)
        shipped = RandomAugmentWrapper(DATA, draw, seed=0, rank=0)
        built = [str(w.message) for w in caught]
        dist.init_process_group(
            "gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world_size
        )
        draws = [train[i]["draw"] for i in range(4)]
        drawn = len(caught)
        rankaug.context._WARNED.clear()  # each disagreement is told once per process
        pickle.dumps(shipped)  # as for a spawned DataLoader worker, which has no group
    after = [str(w.message) for w in caught[:drawn] if issubclass(w.category, RankaugWarning)]
    pickled = [str(w.message) for w in caught[drawn:] if issubclass(w.category, RankaugWarning)]
    return {"built": built, "after": after[len(built) :], "draws": draws, "pickled": pickled}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return launch(local_rank_job, 4, tmp_path_factory.mktemp("rank"))


class TestWrongRank:
    def test_a_local_rank_passed_for_the_global_one_is_reported(
        self, results: list[dict[str, Any]]
    ) -> None:
        local = [result["local"] for result in results]
        # the bug itself: nodes' processes with the same local rank draw alike
        assert local[0]["draws"] == local[2]["draws"]
        assert local[1]["draws"] == local[3]["draws"]
        # ... and it is reported, naming both numbers and the likely cause
        assert local[0]["warnings"] == local[1]["warnings"] == []
        for rank in (2, 3):
            (message,) = local[rank]["warnings"]
            assert (
                f"rank={rank - 2} was given, but torch.distributed says this process is "
                f"rank {rank}" in message
            )
            assert f"LOCAL_RANK is {rank - 2}: a local rank was passed for the global one" in (
                message
            )

    def test_rank_none_finds_the_global_rank(self, results: list[dict[str, Any]]) -> None:
        assert all(result["none"]["warnings"] == [] for result in results)
        assert len({tuple(result["none"]["draws"]) for result in results}) == 4


def test_a_rank_given_before_init_process_group_is_checked_once_it_exists(
    tmp_path: Path,
) -> None:
    rendezvous = str(tmp_path / "second-rendezvous")
    first, second = launch(built_before_init_job, 2, tmp_path, rendezvous=rendezvous)
    assert first["built"] == second["built"] == []  # nothing to compare with yet
    assert first["draws"] == second["draws"]  # the bug: both ranks draw alike
    assert first["after"] == []
    (message,) = second["after"]  # reported on its first sample, once
    assert "rank=0 was given, but torch.distributed says this process is rank 1" in message
    # one pickled for a spawned worker (no group there) is checked as it leaves
    assert first["pickled"] == []
    (message,) = second["pickled"]
    assert "rank=0 was given, but torch.distributed says this process is rank 1" in message
