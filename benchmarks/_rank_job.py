"""One rank of the memory section's 2-rank jobs (run as a script by ``sections/memory.py``).

It builds one end-to-end pipeline (``benchmarks._pipelines``) as a training rank would,
iterates ``--batches`` batches of a ``DataLoader`` with ``--workers`` persistent workers and
this rank's ``DistributedSampler`` shard, prints ``work {...}`` (its same-work record as
JSON, ``benchmarks._same_work``, the output's layout read from its first batch) and
``ready`` (its workers still alive, the state the parent measures), and waits for its
standard input to close. The rank comes
from ``RANK`` and ``WORLD_SIZE`` in the environment, as under ``torchrun``; no process
group is started (memory needs none). This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._threads import THREAD_VARIABLES

os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

import cv2
import torch
from torch.utils.data import DataLoader, DistributedSampler

from benchmarks import peers  # noqa: F401  (keeps ultralytics offline and quiet)
from benchmarks._pipelines import build, pipeline_work


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipeline", required=True)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--side", type=int, default=640)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    t0 = time.perf_counter()
    pipeline = build(
        args.pipeline,
        args.root,
        args.side,
        cache_dir=args.cache_dir,
        batch_size=args.batch_size,
        seed=args.seed,
        rank=rank,
    )
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    built = time.perf_counter() - t0
    sampler: DistributedSampler[Any] = DistributedSampler(
        pipeline.dataset, num_replicas=world, rank=rank, shuffle=True, seed=args.seed
    )
    loader = DataLoader(
        pipeline.dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        num_workers=args.workers,
        collate_fn=pipeline.collate,
        persistent_workers=args.workers > 0,
    )
    done = 0
    work = ""
    while done < args.batches:
        for batch in loader:
            if not work:  # the layout of a real batch; no batch kept while measured
                settings = pipeline_work(pipeline, batch)
                work = json.dumps({a: vars(s) for a, s in settings.items()})
            del batch
            done += 1
            if done >= args.batches:
                break
    print(f"work {work}")
    print(f"built {built:.2f} s, {done} batches in {time.perf_counter() - t0 - built:.2f} s")
    print("ready", flush=True)
    sys.stdin.read()  # the parent closes it once it has measured
    del loader
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
