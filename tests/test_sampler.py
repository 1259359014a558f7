from __future__ import annotations

import copy
import pickle
import pickletools
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
)

from rankaug import EpochIndex, EpochSampler, RankaugWarning
from rankaug.epoch import EpochBatch
from tests import ahead


class Seen(Dataset[tuple[int, int]]):
    """Returns (index, epoch carried by the index) as the worker received it."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> tuple[int, int]:
        assert isinstance(index, EpochIndex), type(index)
        return int(index), index.epoch


def epochs_of(sampler: EpochSampler) -> list[int]:
    return sorted({index.epoch for index in sampler})


class TestEpochSampler:
    def test_each_pass_advances_by_one_without_set_epoch(self) -> None:
        sampler = EpochSampler(range(3), epoch=4)
        assert [epochs_of(sampler) for _ in range(3)] == [[4], [5], [6]]

    def test_indices_are_the_wrapped_samplers_and_len_is_its(self) -> None:
        inner = RandomSampler(range(10), generator=torch.Generator().manual_seed(3))
        again = RandomSampler(range(10), generator=torch.Generator().manual_seed(3))
        sampler = EpochSampler(inner)
        assert [int(i) for i in sampler] == list(again)
        assert len(sampler) == 10

    def test_set_epoch_sets_the_next_pass_and_reaches_the_distributed_sampler(self) -> None:
        inner = DistributedSampler(range(16), num_replicas=2, rank=1, seed=5)
        sampler = EpochSampler(inner)
        sampler.set_epoch(3)
        indices = list(sampler)
        reference = DistributedSampler(range(16), num_replicas=2, rank=1, seed=5)
        reference.set_epoch(3)
        assert [int(i) for i in indices] == list(reference)
        assert {i.epoch for i in indices} == {3}
        assert inner.epoch == 3

    def test_auto_advance_reshuffles_the_distributed_sampler(self) -> None:
        sampler = EpochSampler(DistributedSampler(range(32), num_replicas=1, rank=0, seed=0))
        first, second = [int(i) for i in sampler], [int(i) for i in sampler]
        assert first != second
        reference = DistributedSampler(range(32), num_replicas=1, rank=0, seed=0)
        reference.set_epoch(1)
        assert second == list(reference)

    def test_set_epoch_for_the_running_pass_changes_nothing(self) -> None:
        # Lightning builds the iterator (and prefetches) before calling set_epoch;
        # ultralytics' InfiniteDataLoader starts the next pass before it.
        sampler = EpochSampler(range(4), epoch=0)
        running = iter(sampler)
        assert next(running).epoch == 0
        sampler.set_epoch(0)  # for the pass already running
        assert [i.epoch for i in running] == [0, 0, 0]
        assert epochs_of(sampler) == [1]  # not a replay of epoch 0

    def test_set_epoch_for_the_running_pass_before_it_started_is_the_same(self) -> None:
        # the same two events in the other order give the same epochs: no timing
        early, late = EpochSampler(range(4)), EpochSampler(range(4))
        list(early), list(late)
        early.set_epoch(1)
        pass_early = list(early)
        running = iter(late)
        late.set_epoch(1)
        pass_late = list(running)
        assert [i.epoch for i in pass_early] == [i.epoch for i in pass_late] == [1] * 4
        assert epochs_of(early) == epochs_of(late) == [2]

    def test_set_epoch_for_another_epoch_during_a_pass_sets_the_next_and_warns(self) -> None:
        # the running pass's indices are drawn (with the workers): it cannot change epoch
        sampler = EpochSampler(range(4))
        running = iter(sampler)
        next(running)
        with pytest.warns(RankaugWarning, match=r"set_epoch\(7\) came while the pass of epoch 0"):
            sampler.set_epoch(7)
        assert {i.epoch for i in running} == {0}
        assert epochs_of(sampler) == [7]

    def test_going_back_to_an_epoch_that_ran_replays_it_and_warns(self) -> None:
        sampler = EpochSampler(range(4))
        list(sampler)
        with pytest.warns(RankaugWarning, match=r"set_epoch\(0\) goes back: epoch 0 already ran"):
            sampler.set_epoch(0)
        assert epochs_of(sampler) == [0]

    def test_epoch_property(self) -> None:
        sampler = EpochSampler(range(2), epoch=2)
        assert sampler.epoch == 2
        running = iter(sampler)
        next(running)
        assert sampler.epoch == 2
        list(running)
        assert sampler.epoch == 3
        assert repr(sampler) == "EpochSampler(range(0, 2), epoch=3)"

    def test_bad_arguments(self) -> None:
        with pytest.raises(TypeError, match="sampler must be a sampler or an iterable of indices"):
            EpochSampler(3)  # type: ignore[arg-type]
        # a generator gave its indices to epoch 0 and none to every later epoch
        with pytest.raises(TypeError, match="got a one-shot iterator"):
            EpochSampler(iter(range(4)))
        with pytest.raises(TypeError, match="got a one-shot iterator"):
            EpochSampler(i for i in range(4))
        with pytest.raises(ValueError, match=r"epoch must be an integer in \[0, 2\*\*32\)"):
            EpochSampler(range(2), epoch=-1)
        with pytest.raises(TypeError, match="epoch must be an integer"):
            EpochSampler(range(2)).set_epoch(1.0)  # type: ignore[arg-type]

    def test_items_that_are_neither_indices_nor_batches_are_refused(self) -> None:
        with pytest.raises(TypeError, match="a sampler of indices or a batch sampler"):
            list(EpochSampler([{"i": 1}]))  # type: ignore[list-item]
        with pytest.raises(TypeError, match=r"yielded 1.5 of type float"):
            list(EpochSampler(BatchSampler([0, 1.5], batch_size=2, drop_last=False)))  # type: ignore[list-item]

    def test_numpy_indices_become_plain_epoch_indices(self) -> None:
        indices = list(EpochSampler(np.arange(3), epoch=1))
        assert indices == [0, 1, 2]
        assert all(isinstance(i, EpochIndex) and i.epoch == 1 for i in indices)

    @pytest.mark.parametrize("clone", [copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))])
    def test_a_copy_taken_mid_pass_resumes_the_running_pass(self, clone: Any) -> None:
        # Issue 19: the copy lost the running pass (it began epoch 6 from the start).
        sampler = EpochSampler(DistributedSampler(range(12), num_replicas=2, rank=1, seed=4))
        sampler.set_epoch(5)
        running = iter(sampler)
        taken = [next(running), next(running)]
        again = clone(sampler)
        assert again.epoch == 5
        rest = list(again)
        assert [(int(i), i.epoch) for i in taken + rest] == [
            (int(i), 5) for i in EpochSampler(again.sampler, epoch=5)
        ]
        assert epochs_of(again) == [6]
        assert [(int(i), i.epoch) for i in running] == [(int(i), 5) for i in rest]

    def test_a_copy_between_passes_starts_the_next(self) -> None:
        sampler = EpochSampler(range(3), epoch=5)
        list(sampler)
        assert epochs_of(pickle.loads(pickle.dumps(sampler))) == [6]

    def test_the_last_epoch_runs_once_then_the_range_is_exhausted(self) -> None:
        # Issue 19: at epoch 2**32 - 1 every later pass repeated that epoch.
        last = 2**32 - 1
        sampler = EpochSampler(range(2), epoch=last)
        assert epochs_of(sampler) == [last]
        assert sampler.epoch == 2**32
        with pytest.raises(ValueError, match=r"epoch range is exhausted.*set_epoch"):
            list(sampler)
        with pytest.raises(ValueError, match="exhausted"):  # still, not a silent replay
            list(sampler)
        state = sampler.state_dict()
        restored = EpochSampler(range(2))
        restored.load_state_dict(state)
        with pytest.raises(ValueError, match="exhausted"):
            list(restored)
        with pytest.warns(RankaugWarning, match="goes back"):  # starting over replays
            sampler.set_epoch(0)
        assert epochs_of(sampler) == [0]

    def test_a_resumed_last_pass_is_exhausted_after(self) -> None:
        sampler = EpochSampler(range(3), epoch=2**32 - 1)
        running = iter(sampler)
        next(running)
        resumed = EpochSampler(range(3))
        resumed.load_state_dict(sampler.state_dict())
        assert [i.epoch for i in resumed] == [2**32 - 1] * 2
        with pytest.raises(ValueError, match="exhausted"):
            list(resumed)

    def test_forwards_the_generator_of_the_wrapped_sampler(self) -> None:
        # accelerate synchronises `sampler.generator` across processes before each pass
        generator = torch.Generator().manual_seed(1)
        sampler = EpochSampler(RandomSampler(range(4), generator=generator))
        assert sampler.generator is generator
        other = torch.Generator()
        sampler.generator = other
        assert sampler.sampler.generator is other  # type: ignore[attr-defined]
        assert not hasattr(EpochSampler(range(3)), "generator")

    @pytest.mark.parametrize("given", [iter(()), range(2), DistributedSampler(range(4), 2, 0)])
    def test_the_sampler_cannot_be_assigned(self, given: Any) -> None:
        # before: a one-shot iterator assigned was taken (every pass after the first empty),
        # and a DistributedSampler assigned left a plain EpochSampler, which Lightning and
        # Fabric shard again
        sampler = EpochSampler(range(3))
        with pytest.raises(
            AttributeError,
            match=r"^EpochSampler\.sampler cannot be assigned: it is fixed when the "
            r"EpochSampler is made.*make a new EpochSampler with the sampler you want$",
        ):
            sampler.sampler = given
        assert [int(i) for i in sampler] == [0, 1, 2]

    def test_a_subclass_may_set_the_sampler_before_the_constructor(self) -> None:
        # before: refused, though the constructor sets the same sampler again
        class Tagged(EpochSampler):
            def __init__(self, sampler: Any) -> None:
                self.sampler = sampler
                super().__init__(sampler)

        sampler = Tagged(range(3))
        assert [int(i) for i in sampler] == [0, 1, 2]
        with pytest.raises(
            AttributeError, match=r"^Tagged\.sampler cannot be assigned: it is fixed"
        ):
            sampler.sampler = range(2)

    def test_a_subclass_setting_another_sampler_before_the_constructor_is_refused(self) -> None:
        class Other(EpochSampler):
            def __init__(self, sampler: Any) -> None:
                self.sampler = range(5)
                super().__init__(sampler)

        with pytest.raises(
            AttributeError,
            match=r"^Other\.sampler cannot be assigned: it was set "
            r"before the constructor",
        ):
            Other(range(3))


class Reshards(DistributedSampler[int]):
    """What Lightning's DistributedSamplerWrapper does: shard another sampler's indices."""

    def __init__(self, sampler: Any, **kwargs: Any) -> None:
        super().__init__(range(len(sampler)), **kwargs)
        self.inner = sampler

    def __iter__(self) -> Any:
        indices = list(self.inner)
        return iter([indices[i] for i in super().__iter__()])


def left_open(_: Path) -> subprocess.CompletedProcess[str]:
    """A loader iterator kept at module level (a peek at one batch): its pass is dropped
    while the interpreter exits, after the modules' globals are gone (a job of
    tests.ahead)."""
    code = (
        "from torch.utils.data import DataLoader\n"
        "import rankaug\n"
        "loader = DataLoader(list(range(10)), sampler=rankaug.EpochSampler(range(10)), "
        "batch_size=2)\n"
        "batches = iter(loader)\n"
        "print(next(batches).tolist())\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_a_pass_left_open_at_exit_ends_quietly(tmp_path: Path) -> None:
    done = ahead.result("sampler-left-open", lambda: tmp_path)
    assert done.stdout == "[0, 1]\n"
    assert done.stderr == ""


class Yours(EpochSampler):
    """A subclass of EpochSampler (its own method first)."""

    def __repr__(self) -> str:
        return "Yours"


class Named(EpochSampler):
    """A subclass of EpochSampler whose constructor takes other arguments than its own."""

    def __init__(self, name: str, sampler: Any, *, first: int) -> None:
        self.name = name
        super().__init__(sampler, epoch=first)


class TestOverADistributedSampler:
    def test_is_a_distributed_sampler_with_its_attributes(self) -> None:
        # Issue 21 item 4: Lightning and Fabric re-shard any sampler that is not one.
        inner = DistributedSampler(range(10), num_replicas=2, rank=1, shuffle=False, seed=3)
        sampler = EpochSampler(inner, epoch=2)
        assert isinstance(sampler, DistributedSampler)
        assert isinstance(sampler, EpochSampler)
        forwarded = ("num_replicas", "rank", "shuffle", "seed", "drop_last", "num_samples",
                     "total_size", "dataset")  # fmt: skip
        assert {a: getattr(sampler, a) for a in forwarded} == {
            a: getattr(inner, a) for a in forwarded
        }
        assert (sampler.epoch, len(sampler), repr(sampler).startswith("EpochSampler(")) == (
            2, 5, True,
        )  # fmt: skip
        assert [(int(i), i.epoch) for i in sampler] == [(i, 2) for i in (1, 3, 5, 7, 9)]
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            sampler.nope  # type: ignore[attr-defined]  # noqa: B018
        again = pickle.loads(pickle.dumps(sampler))
        assert (type(again), again.rank, again.epoch) == (type(sampler), 1, 3)

    def test_its_distributed_attributes_are_assigned_to_the_wrapped_sampler(self) -> None:
        # before: sampler.rank = 1 made an attribute of the EpochSampler nothing read: the
        # wrapped sampler went on giving rank 0's shard
        inner = DistributedSampler(range(8), num_replicas=2, rank=0, shuffle=False)
        sampler: Any = EpochSampler(inner)  # a DistributedSampler too
        sampler.rank = 1
        assert (sampler.rank, inner.rank) == (1, 1)
        assert "rank" not in vars(sampler)
        assert [int(i) for i in sampler] == [1, 3, 5, 7]
        with pytest.raises(AttributeError, match=r"^EpochSampler\.sampler cannot be assigned"):
            sampler.sampler = DistributedSampler(range(8), num_replicas=2, rank=0)
        assert sampler.sampler is inner

    def test_a_subclass_of_yours_is_a_distributed_sampler_too(self) -> None:
        # before: Yours(DistributedSampler(...)) was no DistributedSampler, so Lightning
        # and Fabric sharded its shard again
        inner = DistributedSampler(range(8), num_replicas=2, rank=1, shuffle=False)
        sampler: Any = Yours(inner, epoch=2)
        assert (isinstance(sampler, DistributedSampler), isinstance(sampler, Yours)) == (True, True)
        assert (type(sampler).__name__, repr(sampler)) == ("Yours", "Yours")
        again: Any = Yours(inner)
        assert type(again) is type(sampler)  # one class, made once
        sampler.rank = 0  # assigned to the sampler wrapped, as for EpochSampler
        assert (inner.rank, "rank" in vars(sampler)) == (0, False)
        passing = iter(sampler)
        assert (int(next(passing)), sampler.epoch) == (0, 2)
        for copied in (pickle.loads(pickle.dumps(sampler)), copy.copy(sampler)):
            assert type(copied) is type(sampler)
            assert [(int(i), i.epoch) for i in copied] == [(2, 2), (4, 2), (6, 2)]  # resumed
        with pytest.raises(AttributeError, match=r"^Yours\.sampler cannot be assigned"):
            sampler.sampler = inner
        plain: Any = Yours(range(4))
        assert not isinstance(plain, DistributedSampler)

    @pytest.mark.parametrize("distributed", [True, False])
    def test_a_subclass_of_yours_may_take_other_arguments(self, distributed: bool) -> None:
        # before: EpochSampler.__new__, which took EpochSampler's arguments only, refused
        # Named("a", inner, first=3) (TypeError: unexpected keyword argument 'first')
        inner = DistributedSampler(range(8), num_replicas=2, rank=1, shuffle=False)
        sampler: Any = Named("a", inner if distributed else range(1, 8, 2), first=3)
        assert (isinstance(sampler, Named), isinstance(sampler, DistributedSampler)) == (
            True, distributed,
        )  # fmt: skip
        assert (type(sampler).__name__, sampler.name, sampler.epoch) == ("Named", "a", 3)
        passing = iter(sampler)
        assert int(next(passing)) == 1
        for copied in (pickle.loads(pickle.dumps(sampler)), copy.copy(sampler),
                       copy.deepcopy(sampler)):  # fmt: skip
            assert (type(copied), copied.name) == (type(sampler), "a")
            assert [(int(i), i.epoch) for i in copied] == [(3, 3), (5, 3), (7, 3)]  # resumed
        assert [(int(i), i.epoch) for i in passing] == [(3, 3), (5, 3), (7, 3)]

    def test_other_samplers_stay_plain_epoch_samplers(self) -> None:
        for inner in (range(4), RandomSampler(range(4)), BatchSampler(range(4), 2, False)):
            assert not isinstance(EpochSampler(inner), DistributedSampler)  # type: ignore[arg-type]

    def test_sharding_a_shard_again_warns_once(self) -> None:
        shard = EpochSampler(DistributedSampler(range(16), num_replicas=2, rank=0, shuffle=False))
        twice = Reshards(shard, num_replicas=2, rank=0, shuffle=False)
        with pytest.warns(RankaugWarning, match=r"1/2 of its shard.*use_distributed_sampler=False"):
            assert len(list(twice)) == 4
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            list(twice)

    def test_accelerates_sharding_of_a_shard_warns(self) -> None:
        # Accelerator.prepare() puts every map-style loader's batches in a BatchSamplerShard
        accelerate = pytest.importorskip("accelerate.data_loader")
        for rank in (0, 1):
            inner = DistributedSampler(range(16), num_replicas=2, rank=rank, shuffle=False)
            for batches in (
                BatchSampler(EpochSampler(inner), 2, drop_last=False),
                EpochSampler(BatchSampler(inner, 2, drop_last=False)),
            ):
                shard = accelerate.BatchSamplerShard(batches, num_processes=2, process_index=rank)
                with pytest.warns(RankaugWarning, match=r"BatchSamplerShard \(num_processes=2\)"
                                  r".*1/2 of its shard.*not a DistributedSampler"):  # fmt: skip
                    assert sum(len(batch) for batch in shard) == 4  # of its 8

    def test_accelerates_sharding_of_the_whole_dataset_is_right_and_quiet(self) -> None:
        accelerate = pytest.importorskip("accelerate.data_loader")
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            shards = [
                list(accelerate.BatchSamplerShard(
                    BatchSampler(EpochSampler(range(8)), 2, drop_last=False),
                    num_processes=2, process_index=rank,
                ))
                for rank in (0, 1)
            ]  # fmt: skip
        assert sorted(int(i) for shard in shards for batch in shard for i in batch) == list(
            range(8)
        )

    def test_sharding_an_unsharded_sampler_is_right_and_quiet(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            shards = [
                list(Reshards(EpochSampler(range(8), epoch=1), num_replicas=2, rank=r,
                              shuffle=False))
                for r in (0, 1)
            ]  # fmt: skip
        assert sorted(int(i) for shard in shards for i in shard) == list(range(8))
        assert {i.epoch for shard in shards for i in shard} == {1}


def two_epochs(context: str, workers: int = 2) -> list[list[tuple[int, int]]]:
    """What ``workers`` persistent workers of ``context`` see over two passes of an
    EpochSampler."""
    sampler = EpochSampler(SequentialSampler(range(8)))
    loader = DataLoader(
        Seen(),
        sampler=sampler,
        batch_size=3,
        num_workers=workers,
        persistent_workers=True,
        multiprocessing_context=context,
    )
    seen = []
    for _ in range(2):
        seen.append(sorted(tuple(row) for batch in loader for row in zip(*batch, strict=True)))
    return seen


def two_spawned_epochs(_: Path) -> list[list[tuple[int, int]]]:
    """:func:`two_epochs` with one spawned worker (a job of tests.ahead: each imports torch;
    the fork case has two)."""
    return two_epochs("spawn", workers=1)


EVERY_INDEX = [[(i, 0) for i in range(8)], [(i, 1) for i in range(8)]]


class TestEpochSamplerInDataLoader:
    def test_epochs_reach_workers_with_every_index(self) -> None:
        assert two_epochs("fork") == EVERY_INDEX

    @pytest.mark.slow  # each spawned worker imports torch: run ahead (tests/ahead.py)
    def test_epochs_reach_spawned_workers_with_every_index(self, tmp_path: Path) -> None:
        assert ahead.result("sampler-spawn", lambda: tmp_path) == EVERY_INDEX


class TestEpochSamplerState:
    def test_state_of_a_running_pass_resumes_there(self) -> None:
        inner = DistributedSampler(range(20), num_replicas=2, rank=0, seed=1)
        sampler = EpochSampler(inner, epoch=3)
        running = iter(sampler)
        taken = [next(running) for _ in range(4)]
        state = sampler.state_dict()
        assert state["epoch"] == 3
        assert state["position"] == 4
        rest = list(running)
        fresh = EpochSampler(DistributedSampler(range(20), num_replicas=2, rank=0, seed=1))
        fresh.load_state_dict(pickle.loads(pickle.dumps(state)))
        resumed = list(fresh)
        assert resumed == rest
        assert [i.epoch for i in resumed] == [3] * len(rest)
        assert taken + resumed == list(EpochSampler(inner, epoch=3))
        assert epochs_of(fresh) == [4]  # and the run goes on from there

    def test_state_between_passes_is_the_next_pass(self) -> None:
        sampler = EpochSampler(range(3))
        list(sampler)
        fresh = EpochSampler(range(3))
        fresh.load_state_dict(sampler.state_dict())
        assert epochs_of(fresh) == [1]

    def test_state_between_passes_keeps_the_wrapped_generator(self) -> None:
        # the next pass's order comes from RandomSampler's generator: a state without it
        # made the resumed pass draw the first epoch's order again
        def make() -> EpochSampler:
            return EpochSampler(RandomSampler(range(8), generator=torch.Generator().manual_seed(3)))

        sampler = make()
        first = [int(i) for i in sampler]
        state = pickle.loads(pickle.dumps(sampler.state_dict()))
        after = [(int(i), i.epoch) for i in sampler]
        fresh = make()
        fresh.load_state_dict(state)
        assert [(int(i), i.epoch) for i in fresh] == after
        assert [i for i, _ in after] != first

    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    @pytest.mark.parametrize(("workers", "batches"), [(0, False), (1, False), (0, True)])
    def test_a_loader_state_saved_before_a_pass_s_first_batch_keeps_its_order(
        self, workers: int, batches: bool
    ) -> None:
        # saved after iter(loader), before its first batch: the pass had not begun, and the
        # resumed epoch 1 ran epoch 0's order (a bare torchdata RandomSampler keeps it)
        stateful = pytest.importorskip("torchdata.stateful_dataloader")

        def make() -> Any:
            shuffled = stateful.sampler.RandomSampler(
                Seen(), generator=torch.Generator().manual_seed(1)
            )
            if batches:  # the generator is the batch sampler's sampler's
                sampler = EpochSampler(stateful.sampler.BatchSampler(shuffled, 3, False))
                return stateful.StatefulDataLoader(Seen(), batch_sampler=sampler)
            return stateful.StatefulDataLoader(
                Seen(), sampler=EpochSampler(shuffled), batch_size=3, num_workers=workers
            )

        def rows(loader: Any) -> list[tuple[int, int]]:
            return [(int(i), int(e)) for batch in loader for i, e in zip(*batch, strict=True)]

        first = make()
        uninterrupted = [rows(first) for _ in range(3)]
        first = make()
        rows(first)
        iterator = iter(first)
        state = pickle.dumps(first.state_dict())
        del iterator
        resumed = make()
        resumed.load_state_dict(pickle.loads(state))
        assert [rows(resumed) for _ in range(2)] == uninterrupted[1:]

    @pytest.mark.parametrize("position", [3, 8])
    def test_a_running_pass_keeps_the_generator_it_shuffled_from(self, position: int) -> None:
        # torch's RandomSampler(generator=...) keeps no iterator state: the resumed pass
        # skipped its position in a fresh generator's order, the next pass drew from it
        def make() -> EpochSampler:
            return EpochSampler(RandomSampler(range(8), generator=torch.Generator().manual_seed(3)))

        uninterrupted = make()
        order = [[(int(i), i.epoch) for i in uninterrupted] for _ in range(3)]
        sampler = make()
        list(sampler)
        running = iter(sampler)
        for _ in range(position):  # 8: its last index given, the pass not ended
            next(running)
        state = pickle.loads(pickle.dumps(sampler.state_dict()))
        fresh = make()
        fresh.load_state_dict(state)
        resumed = [[(int(i), i.epoch) for i in fresh] for _ in range(2)]
        assert resumed == [order[1][position:], order[2]]

    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    @pytest.mark.parametrize("size", [2, 4])
    def test_a_loader_state_saved_at_a_pass_s_last_batch_keeps_the_next_order(
        self, size: int
    ) -> None:
        # with workers, a state saved after the loader's last batch is its snapshot at that
        # batch: a running pass (at its end), whose torch RandomSampler's generator was lost
        stateful = pytest.importorskip("torchdata.stateful_dataloader")

        def make() -> Any:
            shuffled = RandomSampler(range(8), generator=torch.Generator().manual_seed(1))
            return stateful.StatefulDataLoader(
                Seen(), sampler=EpochSampler(shuffled), batch_size=size, num_workers=2
            )

        def rows(loader: Any) -> list[tuple[int, int]]:
            return [(int(i), int(e)) for batch in loader for i, e in zip(*batch, strict=True)]

        first = make()
        uninterrupted = [rows(first) for _ in range(4)]
        first = make()
        rows(first), rows(first)
        state = pickle.dumps(first.state_dict())
        resumed = make()
        resumed.load_state_dict(pickle.loads(state))
        assert [rows(resumed) for _ in range(2)] == uninterrupted[2:]

    def test_set_epoch_to_another_epoch_after_a_load_keeps_the_wrapped_generator(self) -> None:
        # the resume was dropped with its generator: the next pass drew a fresh generator's
        # order (the first epoch's), not the one the uninterrupted run drew
        def make() -> EpochSampler:
            return EpochSampler(RandomSampler(range(8), generator=torch.Generator().manual_seed(5)))

        uninterrupted = make()
        list(uninterrupted)
        state = uninterrupted.state_dict()
        uninterrupted.set_epoch(5)
        fresh = make()
        fresh.load_state_dict(state)
        fresh.set_epoch(5)
        assert [(int(i), i.epoch) for i in fresh] == [(int(i), i.epoch) for i in uninterrupted]

    def test_set_epoch_keeps_a_pending_resume_of_the_same_epoch(self) -> None:
        sampler = EpochSampler(range(5))
        running = iter(sampler)
        next(running), next(running)
        fresh = EpochSampler(range(5))
        fresh.load_state_dict(sampler.state_dict())
        fresh.set_epoch(0)  # Lightning calls it again for the resumed epoch
        assert [int(i) for i in fresh] == [2, 3, 4]
        fresh.load_state_dict(sampler.state_dict())
        fresh.set_epoch(4)  # another epoch: the resume is dropped
        assert [(int(i), i.epoch) for i in fresh] == [(k, 4) for k in range(5)]

    def test_wrapped_iterators_with_state_are_restored_through_it(self) -> None:
        class CountingIter:
            def __init__(self) -> None:
                self.at = 0

            def __iter__(self) -> CountingIter:
                return self

            def __next__(self) -> int:
                if self.at >= 6:
                    raise StopIteration
                self.at += 1
                return self.at - 1

            def state_dict(self) -> dict[str, Any]:
                return {"at": self.at}

            def load_state_dict(self, state: dict[str, Any]) -> None:
                self.at = state["at"]

        class Stateful:
            def __iter__(self) -> CountingIter:
                return CountingIter()

        sampler = EpochSampler(Stateful())
        running = iter(sampler)
        next(running), next(running)
        state = sampler.state_dict()
        assert state["sampler_iter"] == {"at": 2}
        fresh = EpochSampler(Stateful())
        fresh.load_state_dict(state)
        assert [int(i) for i in fresh] == [2, 3, 4, 5]

    def test_bad_states(self) -> None:
        sampler = EpochSampler(range(3))
        with pytest.raises(ValueError, match=r"state must be a dict from EpochSampler\.state_dict"):
            sampler.load_state_dict({"epoch": 1})
        good = sampler.state_dict()
        with pytest.raises(ValueError, match=r"state\['position'\] must be an integer >= 0"):
            sampler.load_state_dict({**good, "position": -1})
        sampler.load_state_dict({**good, "position": 7})
        with pytest.raises(ValueError, match="cannot resume at position 7 of epoch 0"):
            list(sampler)


class TestWhenAPassBegins:
    def test_an_iterator_that_is_never_read_starts_no_pass(self) -> None:
        # DataLoader iterators call iter() on their sampler twice and read the last one;
        # torchdata's batch sampler iterator calls iter() on ours eagerly.
        sampler = EpochSampler(range(3))
        iter(sampler), iter(sampler)
        assert epochs_of(sampler) == [0]
        assert sampler.epoch == 1

    @pytest.mark.parametrize("batch_size", [None, 2])
    def test_each_dataloader_pass_is_one_epoch(self, batch_size: int | None) -> None:
        # batch_size=None: the multi-worker iterator calls iter(sampler) twice per pass
        loader = DataLoader(
            EpochOf(), sampler=EpochSampler(range(4)), batch_size=batch_size, num_workers=2
        )
        epochs = [sorted({int(e) for batch in loader for e in torch.as_tensor(batch).reshape(-1)})
                  for _ in range(3)]  # fmt: skip
        assert epochs == [[0], [1], [2]]

    def test_a_resume_goes_to_the_iterator_that_is_read(self) -> None:
        sampler = EpochSampler(range(4), epoch=2)
        running = iter(sampler)
        next(running)
        fresh = EpochSampler(range(4))
        fresh.load_state_dict(sampler.state_dict())
        unread = iter(fresh)
        assert [(int(i), i.epoch) for i in fresh] == [(1, 2), (2, 2), (3, 2)]
        del unread


class EpochOf(Dataset[int]):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> int:
        assert isinstance(index, EpochIndex)
        return index.epoch


class TestEpochSamplerOverBatches:
    def test_batches_carry_the_epoch_of_their_pass(self) -> None:
        inner = DistributedSampler(range(12), num_replicas=2, rank=0, seed=3)
        sampler = EpochSampler(BatchSampler(inner, batch_size=4, drop_last=False), epoch=2)
        batches = list(sampler)
        reference = DistributedSampler(range(12), num_replicas=2, rank=0, seed=3)
        reference.set_epoch(2)
        assert [int(i) for batch in batches for i in batch] == list(reference)  # type: ignore[attr-defined]
        assert all(type(batch) is EpochBatch for batch in batches)  # type: ignore[comparison-overlap]
        assert {i.epoch for batch in batches for i in batch} == {2}  # type: ignore[attr-defined]
        assert len(sampler) == 2
        assert inner.epoch == 2  # set_epoch reaches the sampler inside the batch sampler
        sampler.set_epoch(7)
        assert inner.epoch == 7
        assert {i.epoch for batch in sampler for i in batch} == {7}  # type: ignore[attr-defined]

    def test_a_batch_pickles_as_one_epoch_and_comes_back_as_epoch_indices(self) -> None:
        batch = next(iter(EpochSampler(BatchSampler(range(64), 16, False), epoch=9)))
        packed, loose = pickle.dumps(batch), pickle.dumps(list(batch))  # type: ignore[call-overload]
        # one reduce per batch (the epoch and the packed ints), not one per index
        assert pickletools_reduces(packed) == 1
        assert pickletools_reduces(loose) == 16
        again = pickle.loads(packed)
        assert type(again) is EpochBatch
        assert [(int(i), i.epoch) for i in again] == [(k, 9) for k in range(16)]
        mixed = EpochBatch([EpochIndex(1, epoch=1), EpochIndex(2, epoch=2)])
        assert [i.epoch for i in pickle.loads(pickle.dumps(mixed))] == [1, 2]

    # Fork only: the indices cross the worker queue pickled with either start method
    # (spawned workers: test_epochs_reach_spawned_workers_with_every_index).
    @pytest.mark.parametrize("context", ["fork"])
    def test_workers_receive_epoch_indices(self, context: str) -> None:
        sampler = EpochSampler(BatchSampler(SequentialSampler(range(8)), 3, drop_last=False))
        loader = DataLoader(
            Seen(), batch_sampler=sampler, num_workers=2, multiprocessing_context=context
        )
        seen = [sorted(tuple(row) for batch in loader for row in zip(*batch, strict=True))
                for _ in range(2)]  # fmt: skip
        assert seen == [[(i, 0) for i in range(8)], [(i, 1) for i in range(8)]]

    def test_resumes_mid_pass(self) -> None:
        sampler = EpochSampler(BatchSampler(range(10), 3, drop_last=False), epoch=4)
        running = iter(sampler)
        first = next(running)
        fresh = EpochSampler(BatchSampler(range(10), 3, drop_last=False))
        fresh.load_state_dict(sampler.state_dict())
        assert [list(b) for b in fresh] == [list(b) for b in running]  # type: ignore[call-overload]
        assert [int(i) for i in first] == [0, 1, 2]  # type: ignore[attr-defined]


def pickletools_reduces(data: bytes) -> int:
    return sum(op.name in ("REDUCE", "NEWOBJ") for op, _, _ in pickletools.genops(data))
