"""torchdata's StatefulDataLoader over the pipeline (run by tests/recipes/test_torchdata.py).

``python stateful_train.py OUT --workers W full`` runs 3 epochs uninterrupted;
``... save`` runs epoch 0 and the first 3 batches of epoch 1, then writes
``loader.state_dict()`` to ``OUT/state.pt`` and exits; ``... resume`` starts a new
process, loads that state and runs to the end of epoch 2. The loop never calls
``set_epoch``: EpochSampler advances on its own. Each batch becomes one JSON line in
``OUT/rank0.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from torch.utils.data import DistributedSampler
from torchdata.stateful_dataloader import StatefulDataLoader

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rankaug import EpochSampler
from tests.recipes.pipeline import BATCH, AllKeyings, collate_all, rows_all

EPOCHS = 3
SAVE_AT = (1, 3)  # epoch 1, after its first 3 batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("mode", choices=("full", "save", "resume"))
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    dataset = AllKeyings()
    sampler = EpochSampler(DistributedSampler(dataset, num_replicas=1, rank=0, seed=0))
    loader = StatefulDataLoader(
        dataset, sampler=sampler, batch_size=BATCH, num_workers=args.workers,
        collate_fn=collate_all,
    )  # fmt: skip
    first = 0
    if args.mode == "resume":
        loader.load_state_dict(torch.load(args.out / "state.pt", weights_only=False))
        first = SAVE_AT[0]
    with open(args.out / "rank0.jsonl", "a") as file:
        for epoch in range(first, EPOCHS):
            for step, batch in enumerate(loader):
                file.write(json.dumps({"epoch": epoch, "rows": rows_all(batch)}) + "\n")
                if args.mode == "save" and (epoch, step + 1) == SAVE_AT:
                    torch.save(loader.state_dict(), args.out / "state.pt")
                    return


if __name__ == "__main__":
    main()
