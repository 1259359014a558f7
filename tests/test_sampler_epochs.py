"""Which epoch each pass of an EpochSampler gets, under loaders that draw ahead.

Real DataLoader workers, the real call sequences of ultralytics' trainer
(``InfiniteDataLoader``, ``reset()``), Lightning (the sampler's ``set_epoch`` after the
iterator is built) and accelerate (``DataLoaderShard.set_epoch(self.iteration)``).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from rankaug import EpochIndex, EpochSampler, RankaugWarning
from rankaug.sampler_epochs import lightning_validation
from tests.recipes.infinite import InfiniteDataLoader


class Seen(Dataset[tuple[int, int]]):
    """(index, epoch its index carries), as the worker received it."""

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[int, int]:
        assert isinstance(index, EpochIndex), type(index)
        return int(index), index.epoch


def shuffled(length: int, epoch: int) -> list[int]:
    reference = DistributedSampler(range(length), num_replicas=1, rank=0, seed=0)
    reference.set_epoch(epoch)
    return list(reference)


def train(loader: InfiniteDataLoader, epochs: range, reset_at: int | None = None) -> list[Any]:
    """ultralytics' BaseTrainer: set_epoch at the top of each epoch (and close_mosaic)."""
    seen = []
    for epoch in epochs:
        loader.sampler.set_epoch(epoch)  # type: ignore[attr-defined]
        if epoch == reset_at:
            loader.reset()
        rows = [(int(i), int(e)) for batch in loader for i, e in zip(*batch, strict=True)]
        seen.append(rows)
    loader.reset()
    return seen


def infinite(length: int, batch_size: int, workers: int = 2) -> InfiniteDataLoader:
    sampler = EpochSampler(DistributedSampler(Seen(length), num_replicas=1, rank=0, seed=0))
    return InfiniteDataLoader(
        Seen(length), sampler=sampler, batch_size=batch_size, num_workers=workers
    )


class TestEpochs:
    def test_passes_an_infinite_loader_began_ahead_keep_their_epochs(self) -> None:
        # 2 batches a pass, 4 prefetched: the loader has begun pass k+2 when the trainer
        # calls set_epoch(k+1); epoch 3 replayed epoch 1 (same order, same keys)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            seen = train(infinite(8, 4), range(5))
        assert seen == [[(i, epoch) for i in shuffled(8, epoch)] for epoch in range(5)]

    # the prefetch holds part of pass 3 / all of pass 3 and the start of pass 4
    @pytest.mark.parametrize(("length", "workers"), [(6, 1), (4, 2)])
    def test_a_loader_reset_after_set_epoch_runs_that_epoch(
        self, length: int, workers: int
    ) -> None:
        # ultralytics' close_mosaic: set_epoch(3), then reset(): the prefetched pass of
        # epoch 3 was thrown away and the new iterator began epoch 4 (epoch 5 replayed 3)
        seen = train(infinite(length, 2, workers), range(6), reset_at=3)
        assert seen == [[(i, epoch) for i in shuffled(length, epoch)] for epoch in range(6)]
        resumed = train(infinite(length, 2, workers), range(4, 6), reset_at=4)
        assert resumed == seen[4:]

    def test_a_pass_drawn_before_set_epoch_keeps_its_epoch_and_warns(self) -> None:
        # Lightning without EpochSampler(..., epoch=): after a resume it builds the
        # iterator (the workers prefetch pass 0), then calls set_epoch(1) on the sampler
        loader = DataLoader(Seen(40), sampler=EpochSampler(range(40)), batch_size=2, num_workers=2)
        batches = iter(loader)
        with pytest.warns(
            RankaugWarning, match=r"set_epoch\(1\) came while .* epoch 0.*epoch=\.\.\."
        ):
            loader.sampler.set_epoch(1)  # type: ignore[attr-defined]
        assert {int(e) for batch in batches for e in batch[1]} == {0}
        assert {int(e) for batch in loader for e in batch[1]} == {1}

    def test_the_sampler_built_at_its_epoch_is_right_and_quiet(self) -> None:
        # the recipe: EpochSampler(..., epoch=...), and Lightning's own calls after;
        # limit_train_batches: the pass is read in part and still held at the next call
        loader = DataLoader(
            Seen(40), sampler=EpochSampler(range(40), epoch=1), batch_size=2, num_workers=2
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            batches = iter(loader)
            loader.sampler.set_epoch(1)  # type: ignore[attr-defined]
            assert {int(e) for e in next(batches)[1]} == {1}
            loader.sampler.set_epoch(2)  # type: ignore[attr-defined]
            later = iter(loader)
            loader.sampler.set_epoch(2)  # type: ignore[attr-defined]
            assert {int(e) for batch in later for e in batch[1]} == {2}
            del batches

    def test_going_back_to_an_epoch_that_ran_warns_under_accelerate(self) -> None:
        # accelerate's loader calls set_epoch(self.iteration) before each pass; a loader
        # made for the resumed epoch (skip_first_batches) and the prepared one count apart
        shard = pytest.importorskip("accelerate.data_loader").DataLoaderShard
        sampler = EpochSampler(range(4))
        skipping, prepared = (shard(Seen(4), sampler=sampler, batch_size=2) for _ in range(2))
        assert {int(e) for batch in skipping for e in batch[1]} == {0}
        with pytest.warns(RankaugWarning, match=r"set_epoch\(0\) goes back.*loader\.set_epoch"):
            assert {int(e) for batch in prepared for e in batch[1]} == {0}

    def test_accelerate_loaders_told_the_epoch_are_right_and_quiet(self) -> None:
        shard = pytest.importorskip("accelerate.data_loader").DataLoaderShard
        sampler = EpochSampler(range(4), epoch=1)
        skipping, prepared = (shard(Seen(4), sampler=sampler, batch_size=2) for _ in range(2))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            epochs = []
            for epoch, loader in ((1, skipping), (2, prepared), (3, prepared)):
                loader.set_epoch(epoch)  # the docs' loop: required after a resume
                epochs.append({int(e) for batch in loader for e in batch[1]})
        assert epochs == [{1}, {2}, {3}]

    def test_a_set_epoch_made_twice_is_made_once(self) -> None:
        sampler = EpochSampler(range(4))
        list(sampler)
        with pytest.warns(RankaugWarning, match="goes back"):
            sampler.set_epoch(0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            sampler.set_epoch(0)  # accelerate reaches the sampler twice in one call
        assert [i.epoch for i in sampler] == [0] * 4

    def test_a_copy_after_a_reset_starts_the_epoch_set(self) -> None:
        sampler = EpochSampler(range(4))
        ahead = iter(sampler)
        next(ahead)
        sampler.set_epoch(0)  # names the pass begun
        del ahead  # thrown away unread
        assert sampler.epoch == 0
        assert torch.tensor([i.epoch for i in sampler]).unique().tolist() == [0]

    @pytest.mark.parametrize("iterator_first", [False, True])
    def test_a_pass_prefetched_whole_before_set_epoch_is_that_epoch(
        self, iterator_first: bool
    ) -> None:
        # 3 batches a pass, 4 prefetched: building the iterator draws the pass to its end;
        # Lightning builds it before set_epoch(0) (later epochs after), or every epoch
        loader = DataLoader(Seen(3), sampler=EpochSampler(range(3)), batch_size=1, num_workers=2)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            batches = iter(loader)
            epochs = []
            for epoch in range(4):
                if epoch and iterator_first:
                    batches = iter(loader)
                    loader.sampler.set_epoch(epoch)  # type: ignore[attr-defined]
                elif epoch:
                    loader.sampler.set_epoch(epoch)  # type: ignore[attr-defined]
                    batches = iter(loader)
                else:
                    loader.sampler.set_epoch(0)  # type: ignore[attr-defined]
                epochs.append({int(e) for batch in batches for e in batch[1]})
        assert epochs == [{0}, {1}, {2}, {3}]

    def test_going_back_to_a_prefetched_pass_once_the_next_began_warns(self) -> None:
        loader = DataLoader(Seen(3), sampler=EpochSampler(range(3)), batch_size=1, num_workers=2)
        assert {int(e) for batch in loader for e in batch[1]} == {0}
        batches = iter(loader)  # epoch 1, drawn whole
        with pytest.warns(RankaugWarning, match=r"set_epoch\(0\) goes back"):
            loader.sampler.set_epoch(0)  # type: ignore[attr-defined]
        assert {int(e) for batch in batches for e in batch[1]} == {1}
        assert {int(e) for batch in loader for e in batch[1]} == {0}


def _set_sampler_epoch(sampler: EpochSampler, epoch: int) -> None:
    """Lightning's helper between its loop and the sampler (lightning_fabric's)."""
    sampler.set_epoch(epoch)


def _loop(module: str) -> Any:
    """An object of a class named as Lightning's evaluation loop, from ``module``."""
    kind = type("_EvaluationLoop", (), {"__module__": module})

    def reset(self: Any, sampler: EpochSampler, epoch: int) -> None:
        _set_sampler_epoch(sampler, epoch)  # then it builds the loader's iterator

    kind.reset = reset  # type: ignore[attr-defined]
    return kind()


class TestLightningValidation:
    @pytest.mark.parametrize("module", ["pytorch_lightning.loops", "lightning.pytorch.loops"])
    def test_lightnings_evaluation_loop_reads_the_epoch_again_quietly(self, module: str) -> None:
        # a validation run of each half epoch (val_check_interval=0.5): set_epoch(0) twice
        sampler = EpochSampler(range(3))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            passes = []
            for epoch in (0, 0, 1, 1):
                _loop(module).reset(sampler, epoch)
                passes.append({i.epoch for i in sampler})
        assert passes == [{0}, {0}, {1}, {1}]

    def test_a_loop_of_another_package_going_back_warns(self) -> None:
        sampler = EpochSampler(range(3))
        _loop("mytrainer.loops").reset(sampler, 0)
        assert {i.epoch for i in sampler} == {0}
        with pytest.warns(RankaugWarning, match=r"set_epoch\(0\) goes back"):
            _loop("mytrainer.loops").reset(sampler, 0)

    def test_only_the_loops_reset_is_found(self) -> None:
        loop = _loop("pytorch_lightning.loops")
        found = []

        def reset(self: Any) -> None:  # the loop's own, and a user's function of that name
            found.append(lightning_validation(sys._getframe()))

        reset(loop)
        reset(object())
        found.append(lightning_validation(sys._getframe()))  # the test's own frame
        assert found == [True, False, False]

    def test_lightnings_data_connector_is_found(self) -> None:
        # trainer.validate/test/predict: _process_dataloader, a function of that module
        found: list[bool] = []
        for package in ("pytorch_lightning", "lightning.pytorch", "mytrainer"):
            space: dict[str, Any] = {"__name__": f"{package}.trainer.connectors.data_connector"}
            space |= {"found": found, "sys": sys, "is_it": lightning_validation}
            exec("def _process_dataloader():\n    found.append(is_it(sys._getframe()))", space)
            space["_process_dataloader"]()
        assert found == [True, True, False]
