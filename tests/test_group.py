from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest
import torch.distributed as dist
from torch.distributed import distributed_c10d

from rankaug import _group
from rankaug._group import default_group


class TestDefaultGroup:
    def test_it_follows_a_process_group_made_and_destroyed(
        self, process_group: Callable[[], None]
    ) -> None:
        assert default_group() is None
        process_group()
        assert default_group() is not None
        assert default_group() is dist.group.WORLD
        dist.destroy_process_group()
        assert default_group() is None

    def test_another_layout_of_torch_is_read_through_the_public_group(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        marker = object()
        monkeypatch.setattr(distributed_c10d, "_world", SimpleNamespace(default_pg=marker))
        reader = _group._reader()
        assert reader is _group._world
        assert reader() is marker
