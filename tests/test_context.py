from __future__ import annotations

import copy
import pickle

import pytest
from torch.utils.data import DataLoader, Dataset

from rankaug.context import SharedEpoch, current_worker, process_group_rank, resolve_rank


class TestResolveRank:
    def test_explicit_rank_wins(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("RANK", "5")
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


class _ReadsEpoch(Dataset[int]):
    def __init__(self, epoch: SharedEpoch) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> int:
        return self.epoch.get()


class TestSharedEpoch:
    def test_get_set_and_validation(self) -> None:
        epoch = SharedEpoch(4)
        assert epoch.get() == 4
        assert repr(epoch) == "SharedEpoch(4)"
        with pytest.raises(ValueError, match="epoch must be an integer"):
            epoch.set(-1)
        with pytest.raises(TypeError, match="epoch must be an integer"):
            epoch.set("2")  # type: ignore[arg-type]
        assert epoch.get() == 4

    @pytest.mark.parametrize("context", ["fork", "spawn"])
    def test_persistent_workers_see_every_set(self, context: str) -> None:
        epoch = SharedEpoch()
        loader = DataLoader(
            _ReadsEpoch(epoch),
            batch_size=None,
            num_workers=2,
            persistent_workers=True,
            multiprocessing_context=context,
        )
        seen = []
        for value in (0, 1, 5):
            epoch.set(value)
            seen.append(sorted(int(x) for x in loader))
        assert seen == [[0, 0], [1, 1], [5, 5]]

    @pytest.mark.parametrize("clone", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
    def test_plain_copies_are_independent_and_shared_again(self, clone: object) -> None:
        epoch = SharedEpoch(2)
        other = clone(epoch)  # type: ignore[operator]
        assert other.get() == 2
        other.set(9)
        assert epoch.get() == 2
        assert other._tensor.is_shared()
