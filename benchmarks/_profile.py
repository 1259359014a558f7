"""``--profile``: where rankaug's time goes.

The wrapper's time split into the pipeline, ``set_random_state`` and its own path, and
cProfile listings of rankaug's contenders (top functions by own time). cProfile inflates
Python-heavy code; read its figures as proportions, next to section 3's split of the
mosaic time into ``cv2.resize`` and the rest. This is benchmark code, never imported by
rankaug.
"""

from __future__ import annotations

import copy
import cProfile
import io
import itertools
import pstats
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from torch.utils.data import DistributedSampler

from benchmarks._bench import Bench, Sample, identity
from benchmarks._pipelines import HSV_GAINS
from benchmarks.sections.mosaic import cycling
from benchmarks.sections.wrapper import make_pipeline
from rankaug import (
    EpochIndex,
    EpochSampler,
    HSVJitter,
    MosaicDataset,
    MosaicGrid,
    RandomAugmentWrapper,
)

__all__ = ["TimedTransform", "profile_op", "profile_rankaug", "wrapper_breakdown"]


class TimedTransform:
    """Wraps an albumentations transform and times its calls (for ``--profile``).

    It implements what rankaug needs of an albumentations transform
    (``set_random_state`` and ``transform(**data)``) and passes everything else through,
    so the wrapper drives it exactly as the real one; its deep copy (the wrapper makes
    one) copies the transform but keeps the shared clock.

    Args:
        transform: The albumentations transform.
    """

    def __init__(self, transform: Any) -> None:
        self.transform = transform
        self.seconds = {"set_random_state": 0.0, "pipeline": 0.0}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["transform"], name)

    def __deepcopy__(self, memo: dict[int, Any]) -> TimedTransform:
        clone = TimedTransform(copy.deepcopy(self.transform, memo))
        clone.seconds = self.seconds
        return clone

    def set_random_state(self, random_generator: Any, py_random: Any) -> None:
        t0 = time.perf_counter()
        self.transform.set_random_state(random_generator, py_random)
        self.seconds["set_random_state"] += time.perf_counter() - t0

    def __call__(self, **data: Any) -> Any:
        t0 = time.perf_counter()
        out = self.transform(**data)
        self.seconds["pipeline"] += time.perf_counter() - t0
        return out


def wrapper_breakdown(square: Sequence[Sample], seed: int, count: int) -> dict[str, float]:
    """Split ``RandomAugmentWrapper[i]`` into the pipeline, ``set_random_state`` and the rest.

    Returns:
        µs per sample: ``total``, ``pipeline``, ``set_random_state`` and ``own`` (key,
        context, adapter unpack/repack, dispatch).
    """
    timed = TimedTransform(make_pipeline(seed))
    wrapped: RandomAugmentWrapper[Any] = RandomAugmentWrapper(square, timed, seed=seed, rank=0)
    n = len(square)
    for i in range(10):
        wrapped[i % n]
    seconds = wrapped.transform.seconds
    seconds.update(dict.fromkeys(seconds, 0.0))
    t0 = time.perf_counter()
    for i in range(count):
        wrapped[i % n]
    total = (time.perf_counter() - t0) / count * 1e6
    pipeline = seconds["pipeline"] / count * 1e6
    reseed = seconds["set_random_state"] / count * 1e6
    return {
        "total": total,
        "pipeline": pipeline,
        "set_random_state": reseed,
        "own": total - pipeline - reseed,
    }


def profile_op(op: Callable[[int], Any], count: int, top: int = 14) -> str:
    """Profile ``count`` operations with cProfile and return the top functions by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(count):
        op(i)
    profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.strip_dirs().sort_stats(pstats.SortKey.TIME).print_stats(top)
    lines = [line for line in text.getvalue().splitlines() if line.strip()]
    start = next((k for k, line in enumerate(lines) if "ncalls" in line), 0)
    header = next((line for line in lines if "function calls" in line), "").strip()
    return "\n".join([header, *lines[start:]])


def _epoch_targets(seed: int) -> dict[str, tuple[Callable[[int], Any], int]]:
    """Section 5's rankaug contenders, one index per call."""
    items = list(range(4096))
    inner: DistributedSampler[int] = DistributedSampler(
        items,  # type: ignore[arg-type]
        num_replicas=1,
        rank=0,
        seed=seed,
    )
    sampler = EpochSampler(inner)
    indices = itertools.chain.from_iterable(itertools.repeat(sampler))
    by_index: RandomAugmentWrapper[Any] = RandomAugmentWrapper(items, identity, seed=seed, rank=0)
    carried = [EpochIndex(i, 1) for i in items]
    return {
        "epoch/sampler_carried (EpochSampler(DistributedSampler))": (
            lambda i: next(indices),
            20000,
        ),
        "epoch/wrapper_carried (wrapper[EpochIndex(i, e)])": (
            lambda i: by_index[carried[i % len(carried)]],
            3000,
        ),
    }


def profile_rankaug(bench: Bench, selected: Sequence[str]) -> None:
    """Profile rankaug's contenders of the selected sections with cProfile."""
    report, out, seed, size = bench.report, bench.out, bench.seed, bench.size
    targets: dict[str, tuple[Callable[[int], Any], int]] = {}
    if "keys" in selected:
        items: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
            list(range(4096)), identity, seed=seed, rank=0, keying="sample"
        )
        targets['key/sample_item (wrapper[i], keying="sample")'] = (lambda i: items[i], 3000)
    if "wrapper" in selected:
        square = bench.sources.square
        n_sq = len(square)
        wrapped: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
            square, make_pipeline(seed), seed=seed, rank=0
        )
        targets["wrapper/stream (RandomAugmentWrapper + albumentations)"] = (
            lambda i: wrapped[i % n_sq],
            60,
        )
        parts = wrapper_breakdown(square, seed, 200)
        report.diagnostics["wrapper_breakdown_us"] = parts
        out(
            f"RandomAugmentWrapper[i], µs per sample (200 samples): {parts['total']:.0f} = "
            f"pipeline {parts['pipeline']:.0f} + set_random_state "
            f"{parts['set_random_state']:.1f} + the wrapper's own path {parts['own']:.1f} "
            "(key, context, adapter unpack/repack)"
        )
        out()
    if "mosaic" in selected:
        mosaic = bench.sources.mosaic
        for grid in ((2, 2), (3, 3)):
            dataset: Any = MosaicDataset(
                mosaic, seed=seed, output_size=size, layout=MosaicGrid(grid=grid)
            )
            targets[f"mosaic/rankaug_{grid[0]}x{grid[1]}"] = (cycling(dataset, len(mosaic)), 300)
    if "epoch" in selected:
        targets.update(_epoch_targets(seed))
    if "color" in selected:
        colour: Any = MosaicDataset(bench.sources.mosaic, seed=seed, output_size=size)
        image: np.ndarray = colour[0]["image"]
        jitter, rng = HSVJitter(*HSV_GAINS), np.random.default_rng(seed)
        targets["color/rankaug_hsv (HSVJitter, in place)"] = (
            lambda i: jitter.apply(image, jitter.draw(rng), out=image),
            300,
        )
    for name, (op, count) in targets.items():
        text = profile_op(op, count)
        report.profiles[name] = text
        out(f"Profile: {name}, {count} calls, top functions by own time")
        out("\n".join("  " + line for line in text.splitlines()))
        out()
