"""The paired A/B's parts (``benchmarks/compare.py``): the cases, the export, the race.

Kept apart from ``compare.py``, which pins thread counts when run, so that the tests can
import them in their own process. Benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks._bench import Sources
from benchmarks._timing import Progress, counted, paired_overhead, race_both_listings
from benchmarks.sections.wrapper import make_pipeline

__all__ = ["BASE", "CASES", "compare", "export", "rounds_for", "same_outputs"]

ROOT = Path(__file__).resolve().parent.parent

BASE = "rankaug_base"
"""The name the revision's package is imported under."""

Make = Callable[[int], Any]
Build = Callable[[ModuleType, Sources, int], tuple[Any, int]]


def _mosaic(mod: ModuleType, sources: Sources, seed: int) -> tuple[Any, int]:
    data, layout = sources.mosaic, mod.MosaicGrid(grid=(2, 2))
    dataset = mod.MosaicDataset(data, seed=seed, output_size=640, layout=layout, stream="ab")
    return dataset, len(data)


def _affine(mod: ModuleType, sources: Sources, seed: int) -> tuple[Any, int]:
    affine = mod.MosaicAffine(degrees=0.0, translate=0.1, scale=0.5, shear=0.0, flip=0.5)
    data = sources.mosaic
    dataset = mod.MosaicDataset(
        data, seed=seed, output_size=640, affine=affine, color=mod.HSVJitter(), stream="ab"
    )
    return dataset, len(data)


def _cutmix(mod: ModuleType, sources: Sources, seed: int) -> tuple[Any, int]:
    mix = importlib.import_module(f"{mod.__name__}.mix")
    return mix.CutMixDataset(sources.square, seed=seed, stream="ab"), len(sources.square)


def _copypaste(mod: ModuleType, sources: Sources, seed: int) -> tuple[Any, int]:
    from benchmarks._mix_peers import with_instances

    mix = importlib.import_module(f"{mod.__name__}.mix")
    outlined = [
        {k: v for k, v in s.items() if k != "masks"} for s in with_instances(sources.square)
    ]
    dataset = mix.CopyPasteDataset(
        outlined, seed=seed, p=1.0, max_overlap=0.3, keying="sample", stream="ab"
    )
    return dataset, len(outlined)


def _wrapper(mod: ModuleType, sources: Sources, seed: int) -> tuple[Any, int]:
    data = sources.square
    wrapped = mod.RandomAugmentWrapper(data, make_pipeline(seed), seed=seed, rank=0, stream="ab")
    return wrapped, len(data)


CASES: dict[str, Build] = {
    "2x2": _mosaic,
    "affine": _affine,
    "cutmix": _cutmix,
    "copypaste": _copypaste,
    "wrapper": _wrapper,
}
"""Each case: ``build(package, sources, seed) -> (dataset, length)``."""


def export(revision: str, into: Path, root: Path = ROOT) -> Path:
    """Export ``revision``'s ``rankaug/`` into ``into`` as the package :data:`BASE`.

    Every whole word ``rankaug`` in its Python sources becomes ``rankaug_base``, so its
    absolute imports resolve to itself.

    Returns:
        The folder to put on ``sys.path``.

    Raises:
        ValueError: If git cannot export ``rankaug/`` at ``revision``.
    """
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", revision, "rankaug"],
        capture_output=True,
        check=False,
    )
    if archive.returncode:
        raise ValueError(
            f"revision {revision!r}: git archive failed: {archive.stderr.decode().strip()}"
        )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    package = into / BASE
    (into / "rankaug").rename(package)
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"\brankaug\b", BASE, text), encoding="utf-8")
    return into


def same_outputs(a: Any, b: Any) -> bool:
    """Whether two outputs are equal: arrays by value and dtype, containers item by item."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_outputs(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(same_outputs(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and bool(a == b)


def _ops(
    build: Build, base: ModuleType, current: ModuleType, sources: Sources, seed: int
) -> dict[str, Any]:
    """Both packages' datasets, built afresh, as operations (one call: one sample)."""
    made = {}
    for name, package in (("base", base), ("current", current)):
        dataset, length = build(package, sources, seed)
        made[name] = counted(_cycling(dataset, length))
    return made


def _cycling(dataset: Any, length: int) -> Make:
    def make(i: int) -> Any:
        return dataset[i % length]

    return make


def rounds_for(ops: int) -> int:
    """Rounds of the race for ``ops`` pairs: each round, 32 pairs in each of two listings."""
    return max(1, ops // 64)


def compare(
    case: str,
    base: ModuleType,
    current: ModuleType,
    sources: Sources,
    *,
    ops: int,
    seed: int,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One case, paired (see the module docstring).

    Returns:
        ``difference_us`` (this checkout minus the revision, µs per operation, the
        median paired difference of the two orders averaged), ``ratio`` (this
        checkout's rate over the revision's: above 1, this checkout is faster),
        ``order_us`` (what going second saves), ``pairs``, both means and whether the
        first calls' outputs are the same.
    """
    build = CASES[case]
    outputs = []
    for package in (base, current):  # datasets of their own: the raced ones start afresh
        dataset, length = build(package, sources, seed)
        outputs.append([dataset[i % length] for i in range(8)])
    same = all(same_outputs(a, b) for a, b in zip(*outputs, strict=True))
    _, record, firsts = race_both_listings(
        lambda: _ops(build, base, current, sources, seed),
        per_round=64,
        repeats=rounds_for(ops),
        warmup=8,
        progress=progress,
        label=f"compare {case}",
    )
    paired = paired_overhead(record["base"], record["current"], [f == "base" for f in firsts])
    means = {name: float(np.mean(values)) * 1e6 for name, values in record.items()}
    return {
        "case": case,
        "same_outputs": same,
        "difference_us": paired["extra_us"],
        "ratio": paired["ratio"],
        "order_us": paired["cache_us"],
        "pairs": paired["pairs"],
        "base_mean_us": means["base"],
        "current_mean_us": means["current"],
    }
