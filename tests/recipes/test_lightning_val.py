"""Issue 30 item 12: a Lightning validation loader over an ``EpochSampler``.

Lightning's validation loop reads ``len(loader)`` batches and asks no more, and keeps
the iterator while the next training epoch runs: the validation pass never stopped, and
``BatchAugment`` (on training batches, plain collated indices) found it read beside the
training pass ("passes of epochs [0, 1] are read at once"). A real ``Trainer`` on the
CPU, a tiny model, three epochs of three training and three validation batches.

It validates after every training batch (``val_check_interval=0.5`` of three batches),
its last run at the epoch's end as before, after a sanity check of two batches, and
``trainer.validate`` twice after the fit. Each run calls ``set_epoch(e)`` again on the
validation sampler, ``e`` the training epoch (3 after the fit): the second one of an
epoch warned "goes back" where workers had finished the first run's pass, or the run
took ``e + 1``, ``e + 2``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

from rankaug import BatchAugment, EpochIndex, EpochSampler, RankaugWarning
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

    def __getitem__(self, index: EpochIndex) -> dict[str, Any]:  # from the EpochSampler
        epoch = index.epoch
        return {"image": torch.full((3, 4, 4), index / 20), "index": index, "epoch": epoch}


def _fit(options: dict[str, Any]) -> dict[str, Any]:
    import kornia.augmentation as K
    import pytorch_lightning as pl

    class Model(pl.LightningModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.aug = BatchAugment(K.RandomAffine(degrees=40.0, p=1.0), seed=3)
            self.epochs: list[Any] = []
            self.validated: list[tuple[int, list[int]]] = []

        def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
            if self.trainer.training:  # training batches only
                self.epochs.append(read_epoch(batch["index"]))
                batch["image"] = self.aug(batch["image"], index=batch["index"])
            else:  # the training epoch, and the epoch its validation batch carries
                self.validated.append((self.current_epoch, batch["epoch"].tolist()))
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
        accelerator="cpu", max_epochs=3, val_check_interval=0.5, num_sanity_val_steps=2,
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False,
    )  # fmt: skip
    model = Model()
    validation = DataLoader(_Images(12), batch_size=4, sampler=val, **options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.fit(
            model, DataLoader(_Images(10), batch_size=4, sampler=train, **options), validation
        )
        for _ in range(2):  # validated again, twice, after the three epochs
            trainer.validate(model, validation, verbose=False)
    return {
        "epochs": [str(epoch) for epoch in model.epochs],
        "validated": model.validated,
        "warnings": [str(w.message) for w in caught if issubclass(w.category, RankaugWarning)],
    }


def fit_with_validation(_: Path) -> dict[str, dict[str, Any]]:
    """One fit per worker setting: the epoch each training batch was read with, those of
    each validation batch, and the RankaugWarnings."""
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

    @pytest.mark.parametrize("workers", list(WORKERS))
    def test_every_validation_run_reads_its_training_epoch(
        self, runs: dict[str, dict[str, Any]], workers: str
    ) -> None:
        sanity = [(0, [0] * 4)] * 2  # the sanity check's two batches of four
        # each epoch e: three runs (one after each training batch) of three batches
        expected = sanity + [(e, [e] * 4) for e in range(3) for _ in range(3 * 3)]
        expected += [(3, [3] * 4)] * (2 * 3)  # trainer.validate twice, after epoch 2
        assert [(e, list(b)) for e, b in runs[workers]["validated"]] == expected
