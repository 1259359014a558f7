"""The StatefulDataLoader recipe of docs/guides/frameworks.md, run for real (test_torchdata.py).

``python stateful_train.py OUT save --workers W`` (or :func:`run`) runs 3 epochs
uninterrupted, saving the loader with the page's ``save`` after the first 3 batches of
epoch 1 (to ``OUT/rank0.jsonl``); ``... resume`` starts a new process, restores it with
the page's ``resume`` and runs from there to the end of epoch 2 (to
``OUT/resumed.jsonl``); ``--also OUT2 W2`` resumes a second saved loader after the
first, in the same new process (one interpreter's imports, not two). The loader is the
page's ``make_loader`` (``EpochSampler(DistributedSampler(train))``, ``BatchCollator()``)
in a one-process gloo group; the loop never calls ``set_epoch``: EpochSampler advances
on its own. Each batch becomes one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO, Any

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.recipes.blocks import load_recipe
from tests.recipes.pipeline import BATCH, AllKeyings, rows_all

recipe = load_recipe("stateful")
EPOCHS = 3
SAVE_AT = (1, 3)  # epoch 1, after its first 3 batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("mode", choices=("save", "resume"))
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--also", nargs=2, action="append", default=[], metavar=("OUT", "W"))
    args = parser.parse_args()
    run(args.out, args.mode, args.workers)
    for out, workers in args.also:
        run(Path(out), args.mode, int(workers))


def run(out: Path, mode: str, workers: int) -> None:
    """One run in this process, in a one-process gloo group of its own (destroyed after).

    test_torchdata.py runs ``save`` so, in its own process (inside
    ``torch.random.fork_rng``), and ``resume`` as a script, in a new one.
    """
    out.mkdir(parents=True, exist_ok=True)
    store = out / f"group-{mode}"
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    try:
        torch.manual_seed(0)
        loader = recipe.make_loader(AllKeyings(), batch_size=BATCH, num_workers=workers)
        first = 0
        if mode == "resume":
            recipe.resume(loader, out / "state.pt")
            first = SAVE_AT[0]
        name = "resumed.jsonl" if mode == "resume" else "rank0.jsonl"
        with open(out / name, "w") as file:
            train(loader, mode, first, file)
    finally:
        dist.destroy_process_group()


def train(loader: Any, mode: str, first: int, file: IO[str]) -> None:
    """Epochs ``first`` to the last, one line per batch; ``save`` saves at ``SAVE_AT``."""
    for epoch in range(first, EPOCHS):
        for step, batch in enumerate(loader):
            file.write(json.dumps({"epoch": epoch, "rows": rows_all(batch)}) + "\n")
            if mode == "save" and (epoch, step + 1) == SAVE_AT:
                recipe.save(loader, Path(file.name).with_name("state.pt"))


if __name__ == "__main__":
    main()
