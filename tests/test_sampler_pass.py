"""An EpochSampler's iterator and its own state, which torchdata's loader saves and restores."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
import torch
from torch.utils.data import Dataset, DistributedSampler

from rankaug import EpochIndex, EpochSampler


class Seen(Dataset[tuple[int, int]]):
    def __len__(self) -> int:
        return 10

    def __getitem__(self, index: int) -> tuple[int, int]:
        assert isinstance(index, EpochIndex), type(index)
        return int(index), index.epoch


def loader(workers: int) -> Any:
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    sampler = EpochSampler(DistributedSampler(Seen(), num_replicas=1, rank=0, seed=0))
    return stateful.StatefulDataLoader(Seen(), sampler=sampler, batch_size=3, num_workers=workers)


def epoch_rows(batches: Any) -> list[tuple[int, int]]:
    return [(int(i), int(e)) for batch in batches for i, e in zip(*batch, strict=True)]


class TestPassIterator:
    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    @pytest.mark.parametrize("workers", [0, 1])
    def test_a_state_saved_at_an_epochs_end_resumes_the_next_epoch(self, workers: int) -> None:
        # StatefulDataLoader restores an iterator (whose workers prefetch) from the state,
        # sees it finished and makes another: the resumed run skipped epoch 1
        first = loader(workers)
        uninterrupted = [epoch_rows(first) for _ in range(3)]
        first = loader(workers)
        epoch_rows(first)
        state = pickle.dumps(first.state_dict())
        resumed = loader(workers)
        resumed.load_state_dict(pickle.loads(state))
        assert [epoch_rows(resumed) for _ in range(2)] == uninterrupted[1:]

    def test_its_state_resumes_its_pass_in_another_iterator(self) -> None:
        sampler = EpochSampler(range(5), epoch=3)
        running = iter(sampler)
        next(running), next(running)
        state = running.state_dict()  # type: ignore[attr-defined]
        assert (state["pass"], state["epoch"], state["position"]) == ("running", 3, 2)
        fresh = iter(EpochSampler(range(5)))
        fresh.load_state_dict(pickle.loads(pickle.dumps(state)))  # type: ignore[attr-defined]
        assert [(int(i), i.epoch) for i in fresh] == [(k, 3) for k in (2, 3, 4)]

    def test_a_finished_iterator_comes_back_finished(self) -> None:
        sampler = EpochSampler(range(3))
        done = iter(sampler)
        list(done)
        saved, between = done.state_dict(), sampler.state_dict()  # type: ignore[attr-defined]
        assert saved == {"format": "rankaug.EpochSampler.iterator/1", "pass": "finished",
                         "epoch": 0}  # fmt: skip
        fresh = EpochSampler(range(3))
        fresh.load_state_dict(between)
        restored = iter(fresh)
        restored.load_state_dict(saved)  # type: ignore[attr-defined]
        assert list(restored) == []
        assert [i.epoch for i in fresh] == [1, 1, 1]  # the next iterator: the next epoch

    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    @pytest.mark.parametrize("inner", ["random", "batches_of_a_stateful_distributed"])
    def test_the_epoch_after_a_finished_one_runs_as_the_uninterrupted_run_did(
        self, inner: str
    ) -> None:
        # random: the finished iterator's state dropped the wrapped iterator's, which holds
        # the generator: the epoch after the saved one replayed epoch 0's order.
        # batches_of_a_stateful_distributed: that state, put back, left its sampler
        # skipping a whole pass: an empty epoch
        stateful = pytest.importorskip("torchdata.stateful_dataloader")
        samplers = stateful.sampler

        def make() -> Any:
            if inner == "random":
                shuffled = samplers.RandomSampler(
                    Seen(), generator=torch.Generator().manual_seed(1)
                )
                return stateful.StatefulDataLoader(Seen(), sampler=EpochSampler(shuffled),
                                                   batch_size=4)  # fmt: skip
            shard = samplers.StatefulDistributedSampler(Seen(), num_replicas=1, rank=0)
            batches = EpochSampler(samplers.BatchSampler(shard, 4, drop_last=False))
            return stateful.StatefulDataLoader(Seen(), batch_sampler=batches)

        first = make()
        uninterrupted = [epoch_rows(first) for _ in range(3)]
        first = make()
        epoch_rows(first)
        resumed = make()
        resumed.load_state_dict(pickle.loads(pickle.dumps(first.state_dict())))
        assert [epoch_rows(resumed) for _ in range(2)] == uninterrupted[1:]

    def test_an_unstarted_iterator_leaves_the_samplers_state_to_decide(self) -> None:
        sampler = EpochSampler(range(3), epoch=2)
        unstarted = iter(sampler).state_dict()  # type: ignore[attr-defined]
        assert unstarted == {"format": "rankaug.EpochSampler.iterator/1", "pass": "unstarted"}
        fresh = EpochSampler(range(3))
        fresh.load_state_dict(sampler.state_dict())
        restored = iter(fresh)
        restored.load_state_dict(unstarted)  # type: ignore[attr-defined]
        assert [i.epoch for i in restored] == [2, 2, 2]

    def test_bad_states(self) -> None:
        running = iter(EpochSampler(range(3)))
        with pytest.raises(ValueError, match=r"EpochSampler\.iter\(\.\.\.\)\.state_dict\(\)"):
            running.load_state_dict(EpochSampler(range(3)).state_dict())  # type: ignore[attr-defined]
        state = {"format": "rankaug.EpochSampler.iterator/1", "pass": "done"}
        with pytest.raises(ValueError, match=r"state\['pass'\] must be one of"):
            running.load_state_dict(state)  # type: ignore[attr-defined]
        next(running)
        with pytest.raises(ValueError, match="must come before its first index"):
            running.load_state_dict(running.state_dict())  # type: ignore[attr-defined]
