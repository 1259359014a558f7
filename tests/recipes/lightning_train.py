"""The Lightning recipe of docs/guides/frameworks.md, trained for real (test_lightning.py).

``python lightning_train.py OUT --epochs N [--resume CKPT]`` (keeping every epoch's
checkpoint in ``OUT/checkpoints``) loads the page's recipe
block as it is written (``Detector``, ``fit``: ``Trainer(strategy="ddp", devices=2,
accelerator="cpu", use_distributed_sampler=False)``, ``train_dataloader()`` with
``EpochSampler(DistributedSampler(train), epoch=...)`` and ``BatchCollator()``) and
trains it on the test pipeline for N epochs. Only the dataset and a record of every
batch are the test's own: every rank appends one JSON line per batch to
``OUT/rank{r}.jsonl``, the trainer's epoch and the batch's rows for every keying (see
pipeline.rows_all).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import torch
from pytorch_lightning.callbacks import ModelCheckpoint

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.recipes.blocks import load_recipe
from tests.recipes.pipeline import BATCH, AllKeyings, rows_all

recipe = load_recipe("lightning")


class Recorded(recipe.Detector):  # type: ignore[misc, name-defined]
    """The page's ``Detector`` on the test pipeline, writing down every batch."""

    def __init__(self, out: Path) -> None:
        super().__init__(AllKeyings(), batch_size=BATCH, num_workers=2)
        self.out = out

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> torch.Tensor:
        line = {"epoch": self.current_epoch, "step": batch_idx, "rows": rows_all(batch)}
        with open(self.out / f"rank{self.global_rank}.jsonl", "a") as file:
            file.write(json.dumps(line) + "\n")
        loss: torch.Tensor = super().training_step(batch, batch_idx)
        return loss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)  # the same on every rank, as everybody does
    # Every epoch's checkpoint is kept (the default keeps the last), to resume from any.
    every_epoch = ModelCheckpoint(dirpath=args.out / "checkpoints", save_top_k=-1)
    recipe.fit(
        Recorded(args.out),
        epochs=args.epochs,
        ckpt_path=args.resume,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(args.out),
        callbacks=[every_epoch],
    )


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
