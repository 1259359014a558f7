"""Issue 21 item 4: ``EpochSampler`` under Lightning's default ``use_distributed_sampler=True``.

Lightning replaces a loader's sampler by its ``DistributedSamplerWrapper`` unless the
sampler is a ``DistributedSampler``; around ``EpochSampler(DistributedSampler(...))``
that sharded each rank's shard again (2 batches per epoch instead of 4). The Trainer is
built for 2 CPU processes with ``strategy="ddp"`` but never fitted: deciding on the
sampler needs no process group.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler

from rankaug import EpochSampler, RankaugWarning

pl = pytest.importorskip("pytorch_lightning")
distributed = pytest.importorskip("lightning_fabric.utilities.distributed")

pytestmark = pytest.mark.framework

DATA = list(range(16))


@pytest.fixture(scope="module")
def trainer() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's own tips about the CPU set-up
        return pl.Trainer(
            accelerator="cpu", devices=2, strategy="ddp", logger=False,
            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        )  # fmt: skip


def prepared(trainer: Any, loader: DataLoader[Any]) -> DataLoader[Any]:
    from pytorch_lightning.trainer.states import RunningStage

    with warnings.catch_warnings():
        warnings.simplefilter("error", RankaugWarning)
        out: DataLoader[Any] = trainer._data_connector._prepare_dataloader(
            loader, shuffle=True, mode=RunningStage.TRAINING
        )
    return out


class TestLightningDefaultSampler:
    @pytest.mark.parametrize("rank", [0, 1])
    def test_each_rank_gets_exactly_its_shard(self, trainer: Any, rank: int) -> None:
        inner = DistributedSampler(DATA, num_replicas=2, rank=rank, seed=3)
        loader = DataLoader(DATA, sampler=EpochSampler(inner), batch_size=2)
        out = prepared(trainer, loader)
        for epoch in (0, 1):
            batches = [[(int(i), i.epoch) for i in batch] for batch in out.batch_sampler]  # type: ignore[union-attr]
            reference = DistributedSampler(DATA, num_replicas=2, rank=rank, seed=3)
            reference.set_epoch(epoch)
            assert len(batches) == 4  # before: 2, the shard sharded again
            assert [pair for batch in batches for pair in batch] == [(i, epoch) for i in reference]

    def test_an_unsharded_sampler_is_sharded_once_by_lightning(self, trainer: Any) -> None:
        loader = DataLoader(DATA, sampler=EpochSampler(RandomSampler(DATA)), batch_size=2)
        out = prepared(trainer, loader)
        assert isinstance(out.sampler, distributed.DistributedSamplerWrapper)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            indices = list(out.sampler)
        assert len(indices) == 8
        assert {i.epoch for i in indices} == {0}

    @pytest.mark.parametrize("rank", [0, 1])
    def test_its_wrapper_around_a_shard_warns_once(self, rank: int) -> None:
        shard = EpochSampler(DistributedSampler(DATA, num_replicas=2, rank=rank, shuffle=False))
        twice = distributed.DistributedSamplerWrapper(shard, num_replicas=2, rank=rank)
        with pytest.warns(RankaugWarning, match=r"use_distributed_sampler=False"):
            assert len(list(twice)) == 4
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            list(twice)
