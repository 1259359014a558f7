from __future__ import annotations

import pytest
from torch.utils.data import DataLoader, Dataset

from rankaug.context import current_worker, process_group_rank, resolve_rank
from rankaug.errors import RankaugWarning


class TestResolveRank:
    def test_explicit_rank_wins(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("RANK", "5")
        with pytest.warns(RankaugWarning, match="rank=2 was given, but the RANK environment"):
            assert resolve_rank(2, captured=3) == 2

    def test_captured_rank_before_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("RANK", "5")
        assert resolve_rank(None, captured=3) == 3

    def test_environment_then_zero(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("RANK", "5")
        assert resolve_rank() == 5
        monkeypatch.delenv("RANK")
        assert resolve_rank() == 0
        monkeypatch.setenv("RANK", "")
        assert resolve_rank() == 0

    @pytest.mark.parametrize("value", ["one", "1.5", "-1", str(2**32)])
    def test_bad_environment_variable_is_named(
        self, monkeypatch: pytest.MonkeyPatch, value: str
    ) -> None:
        monkeypatch.setenv("RANK", value)
        with pytest.raises(ValueError, match="RANK environment variable must be an integer"):
            resolve_rank()

    def test_no_process_group_here(self) -> None:
        assert process_group_rank() is None


class _WorkerIds(Dataset[tuple[int, int]]):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> tuple[int, int]:
        return current_worker()


class TestCurrentWorker:
    def test_main_process(self) -> None:
        assert current_worker() == (0, 0)

    def test_inside_workers(self) -> None:
        loader = DataLoader(_WorkerIds(), batch_size=None, num_workers=2)
        assert sorted((int(w), int(n)) for w, n in loader) == [(0, 2), (0, 2), (1, 2), (1, 2)]
