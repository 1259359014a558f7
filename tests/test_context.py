from __future__ import annotations

import numpy as np
import pytest
from torch.utils.data import DataLoader, Dataset

from rankaug.context import (
    SampleContext,
    current_worker,
    pinned_rank,
    pinning_rank,
    process_group_rank,
    resolve_rank,
)
from rankaug.epoch import carried_epoch
from rankaug.errors import RankaugWarning, SampleError


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


class TestPinningRank:
    def test_pins_inside_the_block_and_nests(self) -> None:
        assert pinned_rank() is None
        with pinning_rank(3):
            assert pinned_rank() == 3
            with pinning_rank(0):
                assert pinned_rank() == 0
            assert pinned_rank() == 3
        assert pinned_rank() is None

    def test_an_error_inside_unpins(self) -> None:
        with pytest.raises(KeyError), pinning_rank(5):
            raise KeyError
        assert pinned_rank() is None


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


class TestSampleContext:
    @pytest.mark.parametrize(
        ("field", "value", "error", "message"),
        [
            ("index", -1, ValueError, "index must be an integer >= 0, got -1"),
            ("index", 1.0, TypeError, "index must be an integer >= 0, got 1.0 of type float"),
            ("rank", 2**32, ValueError, r"rank must be an integer in \[0, 2\*\*32\)"),
            ("rank", True, TypeError, "rank must be an integer in .* got True of type bool"),
            ("worker_id", -1, ValueError, r"worker_id must be an integer in \[0, 2\*\*32\)"),
            ("worker_id", "0", TypeError, "worker_id must be an integer"),
            ("epoch", 2**32, ValueError, r"epoch must be an integer in \[0, 2\*\*32\)"),
            ("epoch", None, TypeError, "epoch must be an integer .* got None"),
        ],
    )
    def test_fields_are_checked(
        self, field: str, value: object, error: type[Exception], message: str
    ) -> None:
        # once anything was taken, and a bad field surfaced (if at all) inside a key
        fields: dict[str, object] = {"index": 3, "rank": 1, "worker_id": 0, "epoch": 2}
        fields[field] = value
        with pytest.raises(error, match=message):
            SampleContext(**fields)  # type: ignore[arg-type]

    def test_numpy_integers_become_python_ints(self) -> None:
        rank, epoch = np.uint32(1), np.int32(2)
        context = SampleContext(np.int64(3), rank=rank, worker_id=0, epoch=epoch)  # type: ignore[arg-type]
        assert (context.index, context.rank, context.epoch) == (3, 1, 2)
        assert type(context.index) is int
        assert type(context.epoch) is int

    def test_guard_names_the_sample_and_keeps_the_cause(self) -> None:
        context = SampleContext(4, rank=1, worker_id=2, epoch=3)
        expected = r"^transform failed at index 4 \(rank 1, worker 2, epoch 3\): KeyError"
        with pytest.raises(SampleError, match=expected) as caught, context.guard("transform"):
            raise KeyError("x")
        assert isinstance(caught.value.__cause__, KeyError)
        assert (caught.value.index, caught.value.stage) == (4, "transform")

    def test_a_streamed_samples_id_is_named(self) -> None:
        context = SampleContext(4, rank=1, worker_id=2, epoch=3, sample_id="s0013")
        expected = r"^transform failed at index 4 \(id 's0013', rank 1, worker 2, epoch 3\)"
        with pytest.raises(SampleError, match=expected) as caught, context.guard("transform"):
            raise KeyError("x")
        assert caught.value.sample_id == "s0013"
        assert "sample_id='s0013'" in repr(context)

    def test_inner_sample_errors_and_non_exceptions_pass_through(self) -> None:
        context = SampleContext(4, rank=1, worker_id=2, epoch=3)
        inner = SampleError("inner", index=9)
        with pytest.raises(SampleError) as caught, context.guard("outer"):
            raise inner
        assert caught.value is inner
        with pytest.raises(KeyboardInterrupt), context.guard("outer"):
            raise KeyboardInterrupt

    def test_loading_carries_the_epoch_and_names_the_index(self) -> None:
        context = SampleContext(4, rank=0, worker_id=0, epoch=7)
        with context.loading(11):
            assert carried_epoch() == 7
        assert carried_epoch() is None
        failed = pytest.raises(SampleError, match=r"^dataset\[11\] failed at index 4")
        with failed, context.loading(11):
            raise OSError("unreadable")
        assert carried_epoch() is None
