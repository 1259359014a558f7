"""The accelerate-over-a-stream recipe of docs/guides/frameworks.md, run for real
(test_accelerate_stream.py).

``accelerate launch --multi_gpu --num_processes 2 accelerate_stream_train.py OUT`` (or
``accelerate_train.py --stream``, after its trainings, in the same processes) reads
a Hugging Face stream of :data:`SAMPLES` samples (8 shards) for 2 epochs through the
page's ``stream_loader`` (2 workers) and writes ``OUT/whole/rank{r}.json``: per epoch,
``[id, digest]`` of each sample the rank got. Then, as the page warns against, the same
loader over the stream split by node (``split_dataset_by_node``), loaded in the main
process: ``OUT/split/rank{r}.json`` holds its ids and the ``RankaugWarning`` messages;
``OUT/dispatched`` likewise, with accelerate's default ``dispatch_batches``, and
``OUT/dispatched-spawn`` with it over a spawned DataLoader worker.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rankaug.errors import RankaugWarning
from tests.recipes.blocks import load_recipe

recipe = load_recipe("accelerate_stream")
SAMPLES = 32


def noise(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    image = sample["image"] + rng.integers(0, 200, sample["image"].shape, dtype=np.uint8)
    return {**sample, "image": image}


def stream(split: bool, rank: int) -> Any:
    import datasets
    from datasets.distributed import split_dataset_by_node

    table = {"image": [np.full((4, 4), k, np.uint8) for k in range(SAMPLES)],
             "id": list(range(SAMPLES))}  # fmt: skip
    whole = datasets.Dataset.from_dict(table).to_iterable_dataset(num_shards=8)
    if split:
        whole = split_dataset_by_node(whole, rank=rank, world_size=2)
    return whole.with_format("numpy")


def epochs(loader: Any, count: int) -> list[list[list[Any]]]:
    out = []
    for epoch in range(count):
        loader.set_epoch(epoch)
        rows = []
        for batch in loader:
            for sample_id, image in zip(batch["id"], batch["image"], strict=True):
                digest = hashlib.sha256(image.numpy().tobytes()).hexdigest()[:16]
                rows.append([int(sample_id), digest])
        out.append(rows)
    return out


def main(out: Path) -> None:
    """Write the reports in ``out`` (run alone, or by ``accelerate_train.py --stream``)."""
    accelerator, loader = recipe.stream_loader(stream(False, 0), noise, batch_size=4)
    rank = accelerator.process_index
    (out / "whole").mkdir(parents=True, exist_ok=True)
    (out / "whole" / f"rank{rank}.json").write_text(json.dumps(epochs(loader, 2)))
    split = functools.partial(recipe.stream_loader, batch_size=4, num_workers=0)
    split_run(out / "split", rank, lambda: split(stream(True, rank), noise)[1])
    split_run(out / "dispatched", rank, lambda: dispatched(stream(True, rank)))
    split_run(out / "dispatched-spawn", rank, lambda: dispatched(stream(True, rank), "spawn"))
    accelerator.wait_for_everyone()


def dispatched(split: Any, context: str | None = None) -> Any:
    """accelerate's default for a streamed loader: the main process reads, and deals (with
    a ``context`` such as ``"spawn"``, through a DataLoader worker started so)."""
    from accelerate import Accelerator  # type: ignore[import-untyped]
    from torch.utils.data import DataLoader

    from rankaug import RandomAugmentWrapper

    train = RandomAugmentWrapper(split, noise, seed=0, keying="sample", sample_id="id")
    workers = {"num_workers": 1, "multiprocessing_context": context} if context else {}
    return Accelerator(cpu=True).prepare(DataLoader(train, batch_size=4, **workers))


def split_run(out: Path, rank: int, make: Callable[[], Any]) -> None:
    """One epoch of ``make()``'s loader: its ids and the ``RankaugWarning`` messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RankaugWarning)
        ids = [row[0] for row in epochs(make(), 1)[0]]
    messages = [str(w.message) for w in caught if issubclass(w.category, RankaugWarning)]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rank{rank}.json").write_text(json.dumps({"ids": ids, "warnings": messages}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
