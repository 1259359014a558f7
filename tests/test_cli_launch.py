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

from rankaug.cli import launch as launch_module
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


class TestRendezvousRetry:
    """gloo's full-mesh connect fails now and then; a launch is then tried again, fresh.

    The failure is real: gloo told to use a network interface this machine lacks.
    """

    def test_a_rendezvous_that_fails_once_is_tried_again(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        real = launch_module._attempt
        tries: list[list[Any] | str] = []

        def attempt(job: Any, world_size: int, seed: int) -> list[Any] | str:
            if tries:  # the second try: the interface is back
                monkeypatch.delenv("GLOO_SOCKET_IFNAME")
            else:
                monkeypatch.setenv("GLOO_SOCKET_IFNAME", "rankaug-none0")
            tries.append(real(job, world_size, seed))
            return tries[-1]

        monkeypatch.setattr(launch_module, "_attempt", attempt)
        results = launch(Report(), 2, seed=7)
        assert [r["group"] for r in results] == [(0, 2, 3), (1, 2, 3)]
        assert len(tries) == 2
        assert isinstance(tries[0], str)
        assert "Unable to find address for: rankaug-none0" in tries[0]

    def test_a_rendezvous_that_always_fails_is_named_after_three_tries(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("GLOO_SOCKET_IFNAME", "rankaug-none0")
        # one rank: the interface is looked up before any peer is reached, alone or not
        with pytest.raises(
            LaunchError, match=r"1 rank\(s\) could not join their gloo group in 3 tries"
        ) as e:
            launch(Report(), 1, seed=0)
        assert str(e.value).count("Unable to find address for: rankaug-none0") == 3
