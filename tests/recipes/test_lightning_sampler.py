"""Issue 21 item 4: ``EpochSampler`` under Lightning's default ``use_distributed_sampler=True``.

Lightning replaces a loader's sampler by its ``DistributedSamplerWrapper`` unless the
sampler is a ``DistributedSampler``; around ``EpochSampler(DistributedSampler(...))``
that sharded each rank's shard again (2 batches per epoch instead of 4). The Trainer is
built for 2 CPU processes with ``strategy="ddp"`` but never fitted: deciding on the
sampler needs no process group.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler

from rankaug import EpochSampler, RankaugWarning
from tests import ahead

pytestmark = pytest.mark.framework

DATA = list(range(16))


def _prepared(trainer: Any, loader: DataLoader[Any]) -> DataLoader[Any]:
    from pytorch_lightning.trainer.states import RunningStage

    with warnings.catch_warnings():
        warnings.simplefilter("error", RankaugWarning)
        out: DataLoader[Any] = trainer._data_connector._prepare_dataloader(
            loader, shuffle=True, mode=RunningStage.TRAINING
        )
    return out


def _pairs(indices: Any) -> list[tuple[int, int]]:
    return [(int(i), i.epoch) for i in indices]


def what_lightning_does(_: Path) -> dict[str, Any]:
    """Lightning's sampler handling, recorded as plain data (a job of tests.ahead): the
    Trainer's prepared loaders and its wrapper, by rank."""
    pl = pytest.importorskip("pytorch_lightning")
    distributed = pytest.importorskip("lightning_fabric.utilities.distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's own tips about the CPU set-up
        trainer = pl.Trainer(
            accelerator="cpu", devices=2, strategy="ddp", logger=False,
            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        )  # fmt: skip
    facts: dict[str, Any] = {"shard": {}, "wrapper": {}}
    for rank in (0, 1):
        inner = DistributedSampler(DATA, num_replicas=2, rank=rank, seed=3)
        out = _prepared(trainer, DataLoader(DATA, sampler=EpochSampler(inner), batch_size=2))
        facts["shard"][rank] = [
            [_pairs(batch) for batch in out.batch_sampler]  # type: ignore[union-attr]
            for _epoch in (0, 1)
        ]
        shard = EpochSampler(DistributedSampler(DATA, num_replicas=2, rank=rank, shuffle=False))
        twice = distributed.DistributedSamplerWrapper(shard, num_replicas=2, rank=rank)
        passes = []
        for _pass in (0, 1):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", RankaugWarning)
                length = len(list(twice))
            passes.append((length, [str(w.message) for w in caught]))
        facts["wrapper"][rank] = passes
    loader = DataLoader(DATA, sampler=EpochSampler(RandomSampler(DATA)), batch_size=2)
    out = _prepared(trainer, loader)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RankaugWarning)
        facts["unsharded"] = (
            isinstance(out.sampler, distributed.DistributedSamplerWrapper),
            _pairs(out.sampler),
        )
    return facts


@pytest.fixture(scope="module")
def lightning(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return ahead.result("lightning-sampler", lambda: tmp_path_factory.mktemp("sampler"))


class TestLightningDefaultSampler:
    @pytest.mark.parametrize("rank", [0, 1])
    def test_each_rank_gets_exactly_its_shard(self, lightning: Any, rank: int) -> None:
        for epoch, batches in enumerate(lightning["shard"][rank]):
            reference = DistributedSampler(DATA, num_replicas=2, rank=rank, seed=3)
            reference.set_epoch(epoch)
            assert len(batches) == 4  # before: 2, the shard sharded again
            assert [tuple(p) for b in batches for p in b] == [(i, epoch) for i in reference]

    def test_an_unsharded_sampler_is_sharded_once_by_lightning(self, lightning: Any) -> None:
        wrapped, indices = lightning["unsharded"]
        assert wrapped  # Lightning's DistributedSamplerWrapper
        assert len(indices) == 8
        assert {epoch for _, epoch in indices} == {0}

    @pytest.mark.parametrize("rank", [0, 1])
    def test_its_wrapper_around_a_shard_warns_once(self, lightning: Any, rank: int) -> None:
        (first, warned), (second, again) = lightning["wrapper"][rank]
        assert first == second == 4
        assert len(warned) == 1
        assert "use_distributed_sampler=False" in warned[0]
        assert again == []
