"""The test harness itself: a rendezvous gloo cannot make is tried again, then named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch.distributed as dist

from tests.ddp.harness import launch

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(120)]


def world(rank: int, world_size: int) -> list[int]:
    return [dist.get_rank(), dist.get_world_size()]


class TestLaunch:
    def test_ranks_join_one_group(self, tmp_path: Path) -> None:
        assert launch(world, 2, tmp_path) == [[0, 2], [1, 2]]

    def test_a_rendezvous_that_always_fails_is_tried_three_times(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # a real failure: gloo told to use a network interface this machine lacks
        monkeypatch.setenv("GLOO_SOCKET_IFNAME", "rankaug-none0")
        with pytest.raises(RuntimeError, match="could not join their gloo group in 3 tries"):
            launch(world, 2, tmp_path)
        tries: list[Any] = sorted(tmp_path.glob("ddp-world-*"))
        assert len(tries) == 3
        assert all(len(list(t.glob("rank*.rendezvous"))) == 2 for t in tries)
