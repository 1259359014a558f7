"""The accelerate recipe of docs/guides/frameworks.md, trained for real (test_accelerate.py).

``accelerate launch --multi_gpu --num_processes 2 accelerate_train.py OUT --epochs N
--runs NAME,... [--stream]`` trains once per name, one after the other in the same
processes (a name ``seedable`` with ``use_seedable_sampler=True``); with ``--stream``,
the same processes then run the stream recipe (accelerate_stream_train.py) in ``OUT``.
Each run loads the page's recipe block as it is written (``fit``:
``Accelerator(cpu=True)`` on this GPU-less machine, accelerate's MULTI_CPU over gloo;
``DataLoader(train, sampler=EpochSampler(RandomSampler(train, generator=...)),
collate_fn=BatchCollator())`` handed to ``accelerator.prepare``, which shards its
batches and synchronises the sampler's generator before every pass; ``loader.set_epoch``
on the prepared loader). Only the dataset and the model are the test's own: the model
writes every batch it gets to ``OUT/NAME/rank{r}.jsonl``, one JSON line per batch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.recipes.blocks import load_recipe
from tests.recipes.pipeline import BATCH, SAMPLES, AllKeyings, rows_all

recipe = load_recipe("accelerate")
STEPS = SAMPLES // (2 * BATCH)  # batches per process and epoch


class Recorder(recipe.StandIn):  # type: ignore[misc, name-defined]
    """The page's stand-in model, writing down every batch it is given.

    ``fit`` runs ``STEPS`` batches per epoch on each process, so the ``n``-th batch
    belongs to epoch ``n // STEPS``.
    """

    def __init__(self, out: Path) -> None:
        super().__init__()
        self.out, self.calls = out, 0

    def forward(self, batch: dict[str, Any]) -> torch.Tensor:
        epoch, step = divmod(self.calls, STEPS)
        self.calls += 1
        line = {"epoch": epoch, "step": step, "rows": rows_all(batch)}
        with open(self.out / f"rank{dist.get_rank()}.jsonl", "a") as file:
            file.write(json.dumps(line) + "\n")
        loss: torch.Tensor = super().forward(batch)
        return loss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--runs", required=True, help="names; seedable: use_seedable_sampler")
    parser.add_argument("--stream", action="store_true", help="then accelerate_stream_train")
    args = parser.parse_args()
    for name in args.runs.split(","):
        out = args.out / name
        out.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)  # the same on every rank, as everybody does
        recipe.fit(
            AllKeyings(),
            Recorder(out),
            epochs=args.epochs,
            batch_size=BATCH,
            use_seedable_sampler=name == "seedable",
        )
    if args.stream:  # a launch of its own would start three more interpreters
        from tests.recipes import accelerate_stream_train

        accelerate_stream_train.main(args.out)


if __name__ == "__main__":
    main()
