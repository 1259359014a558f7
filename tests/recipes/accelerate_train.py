"""A real accelerate run with the README's recipe (run by tests/recipes/test_accelerate.py).

``accelerate launch --multi_gpu --num_processes 2 accelerate_train.py OUT --epochs N``
(with ``Accelerator(cpu=True)``: accelerate's MULTI_CPU, gloo). The loader is
``DataLoader(train, sampler=EpochSampler(RandomSampler(train, generator=...)))``,
handed to ``accelerator.prepare``, which shards its batches across the processes and
synchronises the sampler's generator before every pass (EpochSampler forwards
``generator``). Nothing calls ``set_epoch`` on the dataset; the
loop below calls it on the prepared loader, as accelerate's examples do. Every process
appends one JSON line per batch to ``OUT/rank{r}.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, RandomSampler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rankaug import EpochSampler
from tests.recipes.pipeline import BATCH, AllKeyings, collate_all, rows_all


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--seedable", action="store_true", help="use_seedable_sampler=True")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)  # the same on every rank, as everybody does
    from accelerate.utils import DataLoaderConfiguration

    # cpu=True: without a GPU, `--multi_gpu` processes run accelerate's MULTI_CPU (gloo)
    accelerator = Accelerator(
        cpu=True, dataloader_config=DataLoaderConfiguration(use_seedable_sampler=args.seedable)
    )
    train = AllKeyings()
    sampler = EpochSampler(RandomSampler(train, generator=torch.Generator().manual_seed(0)))
    loader = DataLoader(
        train, sampler=sampler, batch_size=BATCH, num_workers=2, collate_fn=collate_all
    )
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    rank = accelerator.process_index
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        for step, batch in enumerate(loader):
            line = {"epoch": epoch, "step": step, "rows": rows_all(batch)}
            with open(args.out / f"rank{rank}.jsonl", "a") as file:
                file.write(json.dumps(line) + "\n")
            loss = model(torch.ones(1, 1)).sum()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
