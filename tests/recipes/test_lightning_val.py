"""Issue 30 item 12: a Lightning validation loader over an ``EpochSampler``.

Lightning's validation loop reads ``len(loader)`` batches and asks no more, and keeps
the iterator while the next training epoch runs: the validation pass never stopped, and
``BatchAugment`` (on training batches, plain collated indices) found it read beside the
training pass ("passes of epochs [0, 1] are read at once"). A real ``Trainer`` on the
CPU, a tiny model, three epochs of three training and three validation batches.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

from rankaug import BatchAugment, EpochSampler, RankaugWarning
from rankaug.sampler_read import read_epoch
from tests import ahead

pytestmark = pytest.mark.framework
pytest.importorskip("kornia.augmentation")  # BatchAugment's (none on Python 3.10 here)

WORKERS: dict[str, dict[str, Any]] = {
    "none": {"num_workers": 0},
    "two": {"num_workers": 2},
    "persistent": {"num_workers": 2, "persistent_workers": True},
}


class _Images:
    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"image": torch.full((3, 4, 4), index / 20), "index": index}


def _fit(options: dict[str, Any]) -> dict[str, Any]:
    import kornia.augmentation as K
    import pytorch_lightning as pl

    class Model(pl.LightningModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.aug = BatchAugment(K.RandomAffine(degrees=40.0, p=1.0), seed=3)
            self.epochs: list[Any] = []

        def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
            if self.trainer.training:  # training batches only
                self.epochs.append(read_epoch(batch["index"]))
                batch["image"] = self.aug(batch["image"], index=batch["index"])
            return batch

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch["image"].mean().reshape(1, 1)).sum()

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            return None

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    shuffle = torch.Generator().manual_seed(0)
    train = EpochSampler(RandomSampler(range(10), generator=shuffle))
    val = EpochSampler(SequentialSampler(range(12)))
    trainer = pl.Trainer(
        accelerator="cpu", max_epochs=3, num_sanity_val_steps=0, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )  # fmt: skip
    model = Model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.fit(
            model,
            DataLoader(_Images(10), batch_size=4, sampler=train, **options),
            DataLoader(_Images(12), batch_size=4, sampler=val, **options),
        )
    return {
        "epochs": [str(epoch) for epoch in model.epochs],
        "warnings": [str(w.message) for w in caught if issubclass(w.category, RankaugWarning)],
    }


def fit_with_validation(_: Path) -> dict[str, dict[str, Any]]:
    """One fit per worker setting: the epoch each training batch was read with, and the
    RankaugWarnings."""
    return {name: _fit(options) for name, options in WORKERS.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return ahead.result("lightning-val", lambda: tmp_path_factory.mktemp("val"))


class TestLightningValidationLoader:
    @pytest.mark.parametrize("workers", list(WORKERS))
    def test_training_batches_take_their_epoch_beside_it(
        self, runs: dict[str, dict[str, Any]], workers: str
    ) -> None:
        assert runs[workers]["warnings"] == []
        assert runs[workers]["epochs"] == [str(epoch) for epoch in (0, 0, 0, 1, 1, 1, 2, 2, 2)]
