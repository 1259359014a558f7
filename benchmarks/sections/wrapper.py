"""Section 2, wrapper overhead: the wrapper against its pipeline called directly.

``RandomAugmentWrapper(ds, pipeline)[i]`` against the same albumentations pipeline
called directly in a loop over the same square samples. The two take turns one sample
at a time, with the same draws (see :func:`wrapper_contenders`), so their per-sample
times pair up (:func:`benchmarks._timing.paired_overhead`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import rankaug
from benchmarks._bench import Bench, Sample
from benchmarks._catalogue import section
from benchmarks._report import print_rows
from benchmarks._same_work import describe, tagged
from benchmarks._timing import Op, counted, paired_overhead, race_both_listings
from rankaug import RandomAugmentWrapper
from rankaug.keys import make_seed_sequence

__all__ = [
    "SECTION",
    "control_contenders",
    "make_pipeline",
    "measure",
    "prepare",
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
    :func:`~benchmarks._timing.paired_overhead` reports for it is the harness's own
    spread for two distinct pipeline objects doing the same work.

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
        f"{SECTION.number}. "
        f"Wrapper overhead: samples/s on {bench.size}x{bench.size} images, HorizontalFlip "
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
