"""The Lightning recipe of docs/guides/frameworks.md, trained for real (test_lightning.py).

``python lightning_train.py OUT --epochs N [--resume CKPT] [--then-resume EPOCH OUT2]``
(keeping every epoch's checkpoint in ``OUT/checkpoints``) loads the page's recipe
block as it is written (``Detector``, ``fit``: ``Trainer(strategy="ddp", devices=2,
accelerator="cpu", use_distributed_sampler=False)``, ``train_dataloader()`` with
``EpochSampler(DistributedSampler(train), epoch=...)`` and ``BatchCollator()``) and
trains it on the test pipeline for N epochs. With ``--then-resume``, the same
processes then resume from that run's checkpoint of epoch EPOCH into ``OUT2``, as
``fit(..., ckpt_path=...)`` does in a new program: a new model, dataset, trainer,
loaders and workers, nothing kept from the first run but the checkpoint (the ranks'
processes and process group are Lightning's to reuse; a launch of its own cost 2 more
interpreters, each importing torch and Lightning, about 14 CPU-s). Only the dataset
and a record of every batch are the test's own: every rank appends one JSON line per
batch to ``OUT/rank{r}.jsonl``, the trainer's epoch and the batch's rows for every
keying (see pipeline.rows_all).
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


def train(out: Path, epochs: int, resume: str | None) -> None:
    """One ``fit`` of a new ``Recorded`` model, writing in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)  # the same on every rank, as everybody does
    # Every epoch's checkpoint is kept (the default keeps the last), to resume from any.
    every_epoch = ModelCheckpoint(dirpath=out / "checkpoints", save_top_k=-1)
    recipe.fit(
        Recorded(out),
        epochs=epochs,
        ckpt_path=resume,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(out),
        callbacks=[every_epoch],
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--resume", default=None)
    parser.add_argument("--then-resume", nargs=2, metavar=("EPOCH", "OUT2"), default=None)
    args = parser.parse_args()
    train(args.out, args.epochs, args.resume)
    if args.then_resume is not None:
        epoch, again = args.then_resume
        # (every rank runs this script: Lightning starts rank 1 with its command line)
        (checkpoint,) = (args.out / "checkpoints").glob(f"epoch={int(epoch)}-*.ckpt")
        train(Path(again), args.epochs, str(checkpoint))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
