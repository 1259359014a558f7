"""Section 2, wrapper overhead: the wrapper against its pipeline called directly.

``RandomAugmentWrapper(ds, pipeline)[i]`` against the same albumentations pipeline
called directly in a loop over the same square samples. The two take turns one sample
at a time, with the same draws (see :func:`wrapper_contenders`), so their per-sample
times pair up (:func:`paired_overhead`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import rankaug
from benchmarks._bench import Bench, Sample
from benchmarks._catalogue import section
from benchmarks._report import print_rows
from benchmarks._same_work import describe, tagged
from benchmarks._timing import Op, Progress, alternate, counted, summarize
from rankaug import RandomAugmentWrapper
from rankaug.keys import make_seed_sequence

__all__ = [
    "SECTION",
    "control_contenders",
    "make_pipeline",
    "measure",
    "paired_overhead",
    "prepare",
    "race_both_listings",
    "wrapper_contenders",
]

SECTION = section("wrapper")


def make_pipeline(seed: int) -> Any:
    """The albumentations pipeline both wrapper contenders run.

    Args:
        seed: The ``Compose`` seed (used by the direct loop; the wrapper supersedes it).

    Returns:
        ``A.Compose([HorizontalFlip, Affine, RandomBrightnessContrast])`` with boxes.
    """
    import albumentations as A

    return A.Compose(
        [
            A.HorizontalFlip(p=0.5),
            A.Affine(scale=(0.75, 1.25), translate_percent=(-0.1, 0.1), rotate=(-10, 10), p=1.0),
            A.RandomBrightnessContrast(p=0.5),
        ],
        bbox_params=A.BboxParams("pascal_voc", label_fields=["labels"]),
        seed=seed,
    )


def wrapper_contenders(square: Sequence[Sample], seed: int) -> tuple[dict[str, Op], bool]:
    """The wrapper-overhead contenders: one operation augments one sample.

    The baseline draws exactly the augmentations the wrapper (default
    ``keying="stream"``) draws: its ``Compose`` is given, once, the random state of the
    wrapper's stream key (rank 0, main process, epoch 0), and both go through the same
    indices in the same order. So the two do the same pixel work, sample for sample, and
    only the wrapper's own bookkeeping differs (an ``Affine``'s cost depends on its draw,
    which would otherwise add noise of several percent).

    Args:
        square: The square source samples.
        seed: The run's seed.

    Returns:
        (row id -> operation, whether the baseline's first output equals the wrapper's,
        that is, whether the draws are matched).
    """
    n = len(square)
    wrapped: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        square, make_pipeline(seed), seed=seed, rank=0
    )
    pipeline = make_pipeline(seed)
    keyed = rankaug.KeyedRandom(
        make_seed_sequence(seed, rank=0, worker_id=0, epoch=0, stream=wrapped.stream)
    )
    pipeline.set_random_state(keyed.generator, keyed.py_random)

    def direct(i: int) -> Any:
        sample = square[i % n]
        return pipeline(image=sample["image"], bboxes=sample["bboxes"], labels=sample["labels"])

    matched = bool(np.array_equal(direct(0)["image"], wrapped[0]["image"]))
    return {
        "wrapper/direct": tagged(counted(direct, start=1), pipeline),
        "wrapper/stream": tagged(counted(lambda i: wrapped[i % n], start=1), wrapped),
    }, matched


def control_contenders(square: Sequence[Sample], seed: int) -> tuple[dict[str, Op], bool]:
    """An A/A race: two pipelines built as the baseline is, with the same draws.

    No rankaug code runs in either: each is :func:`make_pipeline`, given the random
    state the baseline gets (that of the wrapper's stream key), so what
    :func:`paired_overhead` reports for it is the harness's own spread for two distinct
    pipeline objects doing the same work.

    Returns:
        (``{"direct": ..., "control": ...}``, whether their outputs are equal sample
        for sample over the first ``len(square)`` samples).
    """
    n = len(square)
    stream = RandomAugmentWrapper(square, make_pipeline(seed), seed=seed, rank=0).stream
    pipelines = [make_pipeline(seed) for _ in range(2)]
    for pipeline in pipelines:
        keyed = rankaug.KeyedRandom(
            make_seed_sequence(seed, rank=0, worker_id=0, epoch=0, stream=stream)
        )
        pipeline.set_random_state(keyed.generator, keyed.py_random)

    def calls(pipeline: Any) -> Any:
        def call(i: int) -> Any:
            sample = square[i % n]
            return pipeline(image=sample["image"], bboxes=sample["bboxes"], labels=sample["labels"])

        return call

    direct, control = (calls(pipeline) for pipeline in pipelines)
    matched = all(np.array_equal(direct(i)["image"], control(i)["image"]) for i in range(n))
    return {"direct": counted(direct, start=n), "control": counted(control, start=n)}, matched


def paired_overhead(
    direct: Sequence[float], wrapped: Sequence[float], direct_first: Sequence[bool]
) -> dict[str, float]:
    """The wrapper's overhead from pairs of samples that did the same work.

    Within a turn the contender that goes first may find the sample cold in cache and
    the second warm; the order alternates, so the per-sample differences form two
    groups, ``overhead - c`` and ``overhead + c``. The median of each group, averaged,
    cancels ``c``; so does the geometric mean of the two groups' median time ratios.

    Args:
        direct: Seconds of each baseline sample.
        wrapped: Seconds of the same samples through the wrapper.
        direct_first: Whether the baseline went first in each pair.

    Returns:
        ``ratio`` (wrapper rate / baseline rate), ``extra_us`` (µs per sample),
        ``cache_us`` (the advantage of going second) and ``pairs``.
    """
    groups: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for d, w, first in zip(direct, wrapped, direct_first, strict=True):
        groups[first].append((d, w))
    if not groups[True] or not groups[False]:  # a single turn: no balance possible
        groups = {True: groups[True] + groups[False], False: groups[True] + groups[False]}
    extra = [summarize(w - d for d, w in pairs).median for pairs in groups.values()]
    ratio = [summarize(d / w for d, w in pairs).median for pairs in groups.values()]
    return {
        "ratio": math.sqrt(ratio[0] * ratio[1]),
        "extra_us": (extra[0] + extra[1]) / 2 * 1e6,
        "cache_us": (extra[1] - extra[0]) / 2 * 1e6,
        "pairs": float(len(direct)),
    }


class _Halved(Progress):
    """Forwards every second unit to ``progress``: two listings fill one section's bar."""

    def __init__(self, progress: Progress) -> None:  # draws nothing itself
        self._bar = None
        self.progress, self.owed = progress, 0

    def set_label(self, label: str) -> None:
        self.progress.set_label(label)

    def advance(self, units: int = 1) -> None:
        self.owed += units
        self.progress.advance(self.owed // 2)
        self.owed %= 2


def race_both_listings(
    build: Callable[[], dict[str, Op]],
    *,
    per_round: int,
    repeats: int,
    warmup: int,
    progress: Progress | None,
    label: str,
) -> tuple[dict[str, list[float]], dict[str, list[float]], list[str]]:
    """A two-contender :func:`~benchmarks._timing.alternate` race, run in both listings.

    Which contender is listed first (warmed up first, first in the first turn) moves
    the paired figure by about 10 µs per sample here, either way, even with the turns'
    order alternating (measured: wrapper +48 µs listed second, +31 listed first, the
    same objects' A/A race ±10). So the race is run twice, each time with contenders
    freshly built by ``build`` and ``per_round // 2`` samples per round, listed one way
    and then the other, and the two runs are pooled: the listing's effect cancels.

    Returns:
        (name -> seconds per operation, one value per repeat: round k of either run,
        averaged, so a round is ``per_round`` samples as in any other race; name -> every
        operation's seconds, in order; the name that went first in each turn).
    """
    runs: list[dict[str, list[float]]] = []
    record: dict[str, list[float]] = {}
    firsts: list[str] = []
    halved = None if progress is None else _Halved(progress)
    for backward in (False, True):
        ops = build()
        names = list(ops)[::-1] if backward else list(ops)
        per_op: dict[str, list[float]] = {}
        turns: list[str] = []
        rounds = alternate(
            {name: ops[name] for name in names},
            per_round=max(1, per_round // 2),
            repeats=repeats,
            warmup=warmup,
            progress=halved,
            label=label,
            record=per_op,
            firsts=turns,
        )
        runs.append(rounds)
        for name in ops:
            record.setdefault(name, []).extend(per_op[name])
        firsts.extend(turns)
    seconds = {
        name: [(a + b) / 2 for a, b in zip(runs[0][name], runs[1][name], strict=True)]
        for name in runs[0]
    }
    return seconds, record, firsts


def prepare(bench: Bench) -> None:
    """Nothing to build before the timing starts (the sources are loaded by the run)."""


def measure(bench: Bench, prepared: None) -> None:
    """The wrapper against the same albumentations pipeline called directly."""
    settings, report = bench.settings, bench.report
    ops, matched = wrapper_contenders(bench.sources.square, bench.seed)
    report.meta["wrapper_draws_matched"] = matched
    report.work |= {row_id: describe(op) for row_id, op in ops.items()}
    seconds, per_op, firsts = race_both_listings(
        lambda: wrapper_contenders(bench.sources.square, bench.seed)[0],
        per_round=settings.wrapper_samples,
        repeats=settings.repeats,
        warmup=settings.warmup,
        progress=bench.progress,
        label="2 wrapper",
    )
    bench.rows(SECTION, seconds)
    report.rows["wrapper/direct"].note = (
        "draws matched to the wrapper's"
        if matched
        else "draws NOT matched (albumentations changed?): ratios carry draw noise"
    )
    bench.out(
        f"2. Wrapper overhead: samples/s on {bench.size}x{bench.size} images, HorizontalFlip "
        f"+ Affine + RandomBrightnessContrast with boxes ({settings.wrapper_samples} samples "
        "per round)"
    )
    print_rows(bench.out, report, list(SECTION.rows), baseline="wrapper/direct")
    if matched:
        # Sample k of the two did the same pixel work, one right after the other.
        paired = paired_overhead(
            per_op["wrapper/direct"],
            per_op["wrapper/stream"],
            [first == "wrapper/direct" for first in firsts],
        )
        report.diagnostics["wrapper_paired"] = paired
        bench.out(
            f"  paired per sample (same draws, adjacent in time, {paired['pairs']:.0f} pairs, "
            f"both orders, both listings): wrapper/baseline {paired['ratio']:.3f}x; the "
            f"wrapper adds {paired['extra_us']:+.0f} µs per sample (going second saves "
            f"{paired['cache_us']:.0f} µs)"
        )
    # the A/A race: two pipelines alike, no rankaug code: the harness's own spread
    control_matched = control_contenders(bench.sources.square, bench.seed)[1]
    _, per_control, control_firsts = race_both_listings(
        lambda: control_contenders(bench.sources.square, bench.seed)[0],
        per_round=settings.wrapper_samples,
        repeats=settings.repeats,
        warmup=settings.warmup,
        progress=None,  # (not in the progress bar's total: its rows' rounds)
        label="2 wrapper: A/A control",
    )
    control = paired_overhead(
        per_control["direct"],
        per_control["control"],
        [first == "direct" for first in control_firsts],
    )
    control["matched"] = float(control_matched)
    report.diagnostics["wrapper_control_paired"] = control
    bench.out(
        f"  A/A control (a second pipeline built alike, the same draws, no rankaug code; "
        f"{control['pairs']:.0f} pairs): second/first {control['ratio']:.3f}x, "
        f"{control['extra_us']:+.0f} µs per sample: the harness's own spread"
    )
    summaries = [
        None if row is None else row.summary
        for row in (report.rows.get(k) for k in ("key/sample_item", "key/stream_item"))
    ]
    direct = report.rows["wrapper/direct"].summary
    by_sample, by_stream = summaries
    if by_sample is not None and by_stream is not None and direct is not None:
        extra = by_sample.median - by_stream.median
        bench.out(
            f'  keying="sample" costs {extra:+.1f} µs per sample more than "stream" '
            f"(section 1): {extra * 1e-6 * direct.median:.2%} of a sample here"
        )
    bench.out()
