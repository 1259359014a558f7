"""``rankaug.cli.launch``: real gloo ranks, fresh processes, the caller's environment now."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
import torch.distributed as dist

from rankaug.cli.launch import LaunchError, launch

pytestmark = pytest.mark.ddp

VARIABLE = "RANKAUG_TEST_LAUNCH"


@dataclass(frozen=True)
class Report:
    """What a rank sees: its environment, path, group and global random state."""

    def __call__(self, rank: int, world_size: int) -> dict[str, Any]:
        value = torch.tensor([rank + 1])
        dist.all_reduce(value)
        return {
            "rank": rank,
            "env": (os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ.get(VARIABLE)),
            "group": (dist.get_rank(), dist.get_world_size(), int(value)),
            "pid": os.getpid(),
            "path": list(sys.path),
            # what seed_everything left in the global state (read, not drawn from)
            "state": int(np.random.get_state()[1][0]),  # type: ignore[index]  # noqa: NPY002
            "torch": int(torch.initial_seed()),
        }


@dataclass(frozen=True)
class Fails:
    def __call__(self, rank: int, world_size: int) -> None:
        if rank == 1:
            raise KeyError("rank one's own error")


class TestLaunch:
    def test_ranks_are_fresh_gloo_processes_seeded_alike(self) -> None:
        results = launch(Report(), 2, seed=7)
        expected = int(np.random.RandomState(7).get_state()[1][0])  # type: ignore[index]
        assert [r["rank"] for r in results] == [0, 1]
        assert [r["group"] for r in results] == [(0, 2, 3), (1, 2, 3)]
        assert [r["env"][:2] for r in results] == [("0", "2"), ("1", "2")]
        assert len({r["pid"] for r in results} | {os.getpid()}) == 3
        # seed_everything(7) on every rank, the usual training script
        assert [(r["state"], r["torch"]) for r in results] == [(expected, 7), (expected, 7)]

    def test_each_launch_sees_the_callers_environment_and_path_as_they_are_then(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(VARIABLE, "first")
        first = launch(Report(), 1, seed=0)
        monkeypatch.setenv(VARIABLE, "second")
        monkeypatch.syspath_prepend("/rankaug-test-launch-path")
        second = launch(Report(), 1, seed=0)
        monkeypatch.delenv(VARIABLE)
        third = launch(Report(), 1, seed=0)
        assert [r[0]["env"][2] for r in (first, second, third)] == ["first", "second", None]
        assert "/rankaug-test-launch-path" not in first[0]["path"]
        assert "/rankaug-test-launch-path" in second[0]["path"]

    def test_a_ranks_error_comes_back_with_its_traceback(self) -> None:
        with pytest.raises(LaunchError, match=r"rank 1 failed \(KeyError: \"rank one's own"):
            launch(Fails(), 2, seed=0)

    def test_world_size_below_one_is_refused(self) -> None:
        with pytest.raises(ValueError, match="world_size must be at least 1, got 0"):
            launch(Report(), 0, seed=0)
