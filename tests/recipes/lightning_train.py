"""A real PyTorch Lightning run with the README's recipe (run by tests/recipes/test_lightning.py).

``python lightning_train.py OUT --epochs N [--resume CKPT]`` trains a tiny model for N
epochs with ``Trainer(strategy="ddp", devices=2, accelerator="cpu",
use_distributed_sampler=False)``; ``train_dataloader()`` builds
``EpochSampler(DistributedSampler(train), epoch=self.current_epoch)`` and nobody calls
``set_epoch`` on the dataset. Every rank appends one JSON line per batch to
``OUT/rank{r}.jsonl``: the trainer's epoch and the batch's rows for every keying
(see pipeline.rows_all).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, DistributedSampler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rankaug import EpochSampler
from tests.recipes.pipeline import BATCH, AllKeyings, collate_all, rows_all


class Tiny(pl.LightningModule):
    def __init__(self, out: Path) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)
        self.out = out

    def train_dataloader(self) -> DataLoader[Any]:
        train = AllKeyings()
        # Lightning builds the iterator before it calls set_epoch, so the first pass
        # takes its epoch from here. After a resume, train_dataloader() runs before
        # Lightning updates current_epoch; the epoch about to run is `processed`.
        epoch = self.trainer.fit_loop.epoch_progress.current.processed
        sampler = EpochSampler(DistributedSampler(train, seed=0), epoch=epoch)
        return DataLoader(
            train, sampler=sampler, batch_size=BATCH, num_workers=2, collate_fn=collate_all
        )

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> torch.Tensor:
        line = {"epoch": self.current_epoch, "step": batch_idx, "rows": rows_all(batch)}
        with open(self.out / f"rank{self.global_rank}.jsonl", "a") as file:
            file.write(json.dumps(line) + "\n")
        return self.layer(torch.ones(1, 1)).sum()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)  # the same on every rank, as everybody does
    trainer = pl.Trainer(
        strategy="ddp",
        accelerator="cpu",
        devices=2,
        max_epochs=args.epochs,
        use_distributed_sampler=False,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(args.out),
    )
    trainer.fit(Tiny(args.out), ckpt_path=args.resume)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
