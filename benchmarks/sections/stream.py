"""Section 9, streaming: the wrappers over a stream against the same work without them.

Two races, each like for like (the same pipeline, the same samples, the same output):

* **webdataset, 2 DataLoader workers.** The square sources are written as tar shards
  (JPEG image, boxes and labels as ``.npy``) into the run's data folder, not timed. Both
  contenders read the same shards through the same webdataset pipeline
  (``WebDataset(...).decode("rgb8").map(unpack)``, split by worker) and the same
  albumentations pipeline as section 2: the baseline applies it in a bare ``.map()``,
  rankaug wraps the un-augmented stream, ``RandomAugmentWrapper(stream, pipeline,
  seed=...)`` (a :class:`rankaug.stream.StreamingAugment`). A round is one whole pass
  over the shards per loader (persistent workers, numpy batches of ``--batch-size``),
  the loaders taking turns, the order reversed every round; the first pass is warm-up.
  The baseline's ``Compose`` is handed, once per pass and worker, the random state the
  wrapper's key gives that pass (:class:`_Matched`), so both draw the same augmentations
  (checked: their first outputs are equal, ``stream_draws_matched``). The figure is CPU time (the
  main process and both workers, every thread, from ``/proc``): on a shared machine the
  wall time of a pass mostly measures the other work (it is printed below the table).
  Its rounds move by a tenth or more, and whole runs either way: each loader's workers
  keep their own allocator state (in one pair measured, the bare ``.map()``'s workers
  faulted in 507 fresh pages per sample, the wrapper's none; see the batches guide), so
  the goal reads the same two streams **paired in this process** (:func:`paired_contenders`):
  fresh ones, one sample each in turns, both listings, as section 2 does; sample ``k``
  of the two decoded the same JPEG and drew the same augmentations, and
  :func:`~benchmarks._timing.paired_overhead` gives the wrapper's cost per sample
  (``stream_wrapper_paired``), the loaders' ratio beside it.
* **mosaic, in process.** ``MosaicDataset(sources, ...)[i]`` against
  ``MosaicDataset(stream, ...)`` (a :class:`rankaug.stream.StreamingMosaic`, window of
  ``buffer_size`` 16) over an ``IterableDataset`` that yields the same decoded samples
  in turn, ``4 x mosaics`` at a time, the order reversed every round, in this thread's
  CPU time. The sources are the square ones, all of one size: the partners differ
  (drawn from the whole list or from the window), and with sources of several sizes the
  tiles' cost would differ with them (``cv2.resize`` is about two thirds of a mosaic).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from torch.utils.data import DataLoader, IterableDataset

import rankaug
from benchmarks._bench import Bench, Sample
from benchmarks._catalogue import section
from benchmarks._loaders import collate_numpy, cpu_ns
from benchmarks._report import print_rows, ratio_text
from benchmarks._same_work import describe, print_work, tagged
from benchmarks._timing import Op, counted, interleave, paired_overhead, race_both_listings
from benchmarks.sections.wrapper import make_pipeline
from rankaug.context import current_worker

__all__ = ["SECTION", "SHARDS", "measure", "paired_contenders", "prepare", "write_shards"]

SECTION = section("stream")
SHARDS = 4
"""Tar shards the samples are spread over (two per worker)."""
WORKERS = 2
BUFFER = 16
MOSAIC_ROUND = 4
"""Mosaics per round, in units of ``Settings.mosaics`` (a mosaic of square sources is cheap)."""
RATIOS = (("stream/wds_wrapper", "stream/wds_map"), ("stream/mosaic_stream", "stream/mosaic_map"))


def write_shards(samples: list[Sample], count: int, folder: Path) -> str:
    """``count`` samples (the sources in turn) as ``SHARDS`` tar files; their url pattern."""
    import webdataset as wds

    folder.mkdir(parents=True, exist_ok=True)
    per_shard = -(-count // SHARDS)
    for shard in range(SHARDS):
        with wds.TarWriter(str(folder / f"shard-{shard:04d}.tar")) as sink:
            for k in range(shard * per_shard, min(count, (shard + 1) * per_shard)):
                sample = samples[k % len(samples)]
                ok, jpeg = cv2.imencode(".jpg", sample["image"], [cv2.IMWRITE_JPEG_QUALITY, 90])
                if not ok:
                    raise RuntimeError("cv2.imencode failed")
                sink.write({
                    "__key__": f"s{k:06d}",
                    "jpg": jpeg.tobytes(),
                    "boxes.npy": sample["bboxes"],
                    "labels.npy": sample["labels"],
                })  # fmt: skip
    return str(folder / f"shard-{{0000..{SHARDS - 1:04d}}}.tar")


def _unpack(sample: dict[str, Any]) -> dict[str, Any]:
    return {
        "image": sample["jpg"],
        "bboxes": sample["boxes.npy"],
        "labels": sample["labels.npy"],
        "id": sample["__key__"],
    }


class _Augment:
    """The bare ``.map()`` stage: the albumentations pipeline on one sample."""

    def __init__(self, compose: Any) -> None:
        self.compose = compose

    def __call__(self, sample: dict[str, Any]) -> dict[str, Any]:
        out = self.compose(image=sample["image"], bboxes=sample["bboxes"], labels=sample["labels"])
        return {
            **sample,
            "image": out["image"],
            "bboxes": np.asarray(out["bboxes"], np.float32).reshape(-1, 4),
            "labels": np.asarray(out["labels"], np.int64).reshape(-1),
        }


class _Matched(IterableDataset[Any]):
    """The bare ``.map()`` pipeline, its ``Compose`` given the wrapper's draws.

    At the start of each pass in each worker (one call per pass, nothing per sample) the
    ``Compose`` gets the random state the wrapper's ``keying="stream"`` key gives that
    worker and pass, so both contenders draw the same augmentations sample for sample (an
    ``Affine``'s cost depends on its draw), as section 2 does.
    """

    def __init__(self, urls: str, compose: Any, wrapped: Any) -> None:
        self.pipeline = _stream(urls).map(_Augment(compose))
        self.compose = compose  # the same object as the map stage's, also once pickled
        self.key = wrapped._stream_key  # (rank, worker, epoch) -> the wrapper's key
        self.passes = 0

    def __iter__(self) -> Iterator[Any]:
        worker, _ = current_worker()
        keyed = rankaug.KeyedRandom(self.key(0, worker, self.passes))
        self.passes += 1
        self.compose.set_random_state(keyed.generator, keyed.py_random)
        return iter(self.pipeline)


def paired_contenders(urls: str, seed: int) -> dict[str, Any]:
    """The two streams over ``urls`` in this process: ``make(i)``, each stream's next sample.

    Built afresh for each listing of the paired race: the bare ``.map()`` pipeline given
    the wrapper's draws (:class:`_Matched`) and ``RandomAugmentWrapper`` over the same
    shards, each going round its passes endlessly. Both start a pass together (passes of
    one length), so call ``k`` of the two decodes the same sample and draws the same
    augmentations, pass after pass.

    Returns:
        Row id -> ``make``.
    """
    wrapped = rankaug.RandomAugmentWrapper(_stream(urls), make_pipeline(seed), seed=seed, rank=0)
    baseline = _Matched(urls, make_pipeline(seed), wrapped)
    return {"stream/wds_map": _endless(baseline), "stream/wds_wrapper": _endless(wrapped)}


def _stream(urls: str) -> Any:
    import webdataset as wds

    return wds.WebDataset(urls, shardshuffle=False, empty_check=False).decode("rgb8").map(_unpack)


def _loader(dataset: Any, batch_size: int) -> DataLoader[Any]:
    return DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=WORKERS,
        persistent_workers=True,
        collate_fn=collate_numpy,
        prefetch_factor=2,
    )


@dataclass
class _Pass:
    """What one timed pass over a loader read and spent."""

    samples: int
    cpu: float | None  # seconds, the main process and its workers together
    wall: float


def _passes(loader: DataLoader[Any], log: list[_Pass]) -> Op:
    """``op(k)``: ``k`` whole passes over ``loader``, each appended to ``log``.

    The CPU time is read from ``/proc`` around the pass for the main process and the
    loader's (persistent) workers, all their threads (:func:`~benchmarks._loaders.cpu_ns`).
    """

    def op(k: int) -> None:
        for _ in range(k):
            iterator = iter(loader)
            # A private attribute of the multi-process iterator; without it, this process.
            workers = getattr(iterator, "_workers", [])
            pids = [os.getpid(), *(int(process.pid) for process in workers)]
            before, t0 = cpu_ns(pids), time.perf_counter()
            samples = sum(len(batch) for batch in iterator)
            wall, after = time.perf_counter() - t0, cpu_ns(pids)
            cpu = None if before is None or after is None else (after[0] - before[0]) / 1e9
            log.append(_Pass(samples, cpu, wall))

    return op


class _Cycle(IterableDataset[Sample]):
    """The decoded sources in turn, ``length`` samples per pass (no ``__getitem__``)."""

    def __init__(self, samples: list[Sample], length: int) -> None:
        self.samples, self.length = samples, length

    def __iter__(self) -> Iterator[Sample]:
        return itertools.islice(itertools.cycle(self.samples), self.length)


def _endless(stream: Any) -> Any:
    """``make(i)``: the next sample of endless passes over ``stream`` (``i`` unused)."""
    state = [iter(stream)]

    def make(i: int) -> Any:
        try:
            return next(state[0])
        except StopIteration:
            state[0] = iter(stream)
            return next(state[0])

    return make


@dataclass
class Prepared:
    """The shards and the loaders (their workers start at the warm-up pass)."""

    folder: Path | None
    loaders: dict[str, DataLoader[Any]]
    subjects: dict[str, Any]
    samples: int
    matched: bool = False  # whether the baseline's first output is the wrapper's
    urls: str = ""  # the shards' url pattern


def prepare(bench: Bench) -> Prepared:
    """Write the shards (not timed) and build both loaders (none without webdataset)."""
    if importlib.util.find_spec("webdataset") is None:
        return Prepared(None, {}, {}, 0)
    base = bench.data_dir if bench.data_dir is not None else Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)  # --data-dir may name a folder not made yet
    folder = Path(tempfile.mkdtemp(prefix="rankaug-bench-stream-", dir=base))
    count = bench.settings.stream_samples
    urls = write_shards(bench.sources.square, count, folder)
    baseline_compose = make_pipeline(bench.seed)
    wrapped = rankaug.RandomAugmentWrapper(
        _stream(urls), make_pipeline(bench.seed), seed=bench.seed, rank=0
    )
    baseline = _Matched(urls, baseline_compose, wrapped)
    check = rankaug.RandomAugmentWrapper(
        _stream(urls), make_pipeline(bench.seed), seed=bench.seed, rank=0
    )
    first = [next(iter(d))["image"] for d in (_Matched(urls, make_pipeline(0), check), check)]
    loaders = {
        "stream/wds_map": _loader(baseline, bench.batch_size),
        "stream/wds_wrapper": _loader(wrapped, bench.batch_size),
    }
    subjects = {"stream/wds_map": baseline_compose, "stream/wds_wrapper": wrapped}
    return Prepared(folder, loaders, subjects, count, bool(np.array_equal(*first)), urls)


def measure(bench: Bench, prepared: Prepared) -> None:
    """Both races, then the table and the ratios."""
    settings, report = bench.settings, bench.report
    if prepared.folder is None:
        rows = ["stream/wds_map", "stream/wds_wrapper"]
        bench.missing(SECTION, rows, "unavailable: webdataset is not installed")
    else:
        try:
            _loader_race(bench, prepared)
            _paired_race(bench, prepared)
        finally:
            prepared.loaders.clear()  # the persistent workers end with their loaders
            shutil.rmtree(prepared.folder, ignore_errors=True)
    _mosaic_race(bench)
    bench.out(
        f"{SECTION.number}. "
        f"Streaming, samples per CPU second: webdataset shards of {prepared.samples} "
        f"JPEGs ({SHARDS} shards, {WORKERS} workers, batches of {bench.batch_size}; the "
        f"main process and its workers); mosaics {bench.size}x{bench.size} from the same "
        f"square in-memory sources ({MOSAIC_ROUND * settings.mosaics} per round, one thread)"
    )
    works = {k.split("/")[1]: report.work[k] for k in SECTION.rows if k in report.work}
    print_work(bench.out, "the streams", works, aspects=("mosaic", "affine", "flip"))
    print_rows(bench.out, report, list(SECTION.rows))
    bench.out("  ratios (medians; per-round range in brackets):")
    for numerator, denominator in RATIOS:
        entry = report.ratio(numerator, denominator)
        bench.out(
            f"    {numerator.split('/')[1]:>14s} vs {denominator.split('/')[1]:<12s} "
            f"{ratio_text(entry)}"
        )
    paired = report.diagnostics.get("stream_wrapper_paired")
    if paired is not None:
        bench.out(
            f"  paired in this process (same samples, same draws, {paired['pairs']:.0f} "
            f"pairs, both orders, both listings): wrapper/baseline {paired['ratio']:.3f}x; "
            f"the wrapper adds {paired['extra_us']:+.0f} µs per sample"
        )
    wall = report.diagnostics.get("stream_wall_samples_per_s", {})
    if wall:
        medians = {row.split("/")[1]: sorted(v)[len(v) // 2] for row, v in wall.items()}
        bench.out(
            "  wall time (what a loaded machine makes noisy), samples/s: "
            + ", ".join(f"{name} {value:.1f}" for name, value in medians.items())
        )
    bench.out()


def _loader_race(bench: Bench, prepared: Prepared) -> None:
    logs: dict[str, list[_Pass]] = {row: [] for row in prepared.loaders}
    ops = {row: _passes(loader, logs[row]) for row, loader in prepared.loaders.items()}
    for row, subject in prepared.subjects.items():
        bench.report.work[row] = describe(tagged(ops[row], subject))
    interleave(
        ops,
        per_round=1,
        repeats=bench.settings.repeats,
        warmup=1,
        progress=bench.progress,
        label=f"{SECTION.number} stream: webdataset",
    )
    per_sample: dict[str, list[float]] = {}
    wall: dict[str, list[float]] = {}
    for row, log in logs.items():
        timed = log[1:]  # the first pass was the warm-up
        if any(entry.samples != prepared.samples for entry in log):
            read = [entry.samples for entry in log]
            raise RuntimeError(f"{row} read {read} samples per pass, not {prepared.samples}")
        cpu = [entry.cpu for entry in timed]
        seconds = [entry.wall for entry in timed] if None in cpu else cpu
        per_sample[row] = [float(x) / prepared.samples for x in seconds if x is not None]
        wall[row] = [prepared.samples / entry.wall for entry in timed]
    bench.rows(SECTION, per_sample)
    bench.report.meta["stream_samples_per_pass"] = prepared.samples
    bench.report.meta["stream_draws_matched"] = prepared.matched
    bench.report.diagnostics["stream_wall_samples_per_s"] = wall


def _paired_race(bench: Bench, prepared: Prepared) -> None:
    """The two streams in this process, sample for sample (see the module docstring)."""
    settings = bench.settings

    def build() -> dict[str, Op]:
        makers = paired_contenders(prepared.urls, bench.seed)
        return {row: counted(make, start=1) for row, make in makers.items()}

    _, per_op, firsts = race_both_listings(
        build,
        per_round=settings.wrapper_samples,
        repeats=settings.repeats,
        warmup=settings.warmup,
        progress=None,  # (not in the progress bar's total: its rows are the loaders')
        label=f"{SECTION.number} stream: paired in process",
    )
    bench.report.diagnostics["stream_wrapper_paired"] = paired_overhead(
        per_op["stream/wds_map"],
        per_op["stream/wds_wrapper"],
        [first == "stream/wds_map" for first in firsts],
    )


def _mosaic_race(bench: Bench) -> None:
    # Sources of one size: whichever partners each draws, the tiles cost alike.
    sources = bench.sources.square
    n = len(sources)
    mapped: Any = rankaug.MosaicDataset(sources, seed=bench.seed, output_size=bench.size)
    length = max(4 * n, 4 * BUFFER)
    streamed: Any = rankaug.MosaicDataset(
        _Cycle(sources, length), seed=bench.seed, output_size=bench.size, buffer_size=BUFFER
    )
    makers = {
        "stream/mosaic_map": tagged(lambda i: mapped[i % n], mapped),
        "stream/mosaic_stream": tagged(_endless(streamed), streamed),
    }
    for row, make in makers.items():
        bench.report.work[row] = describe(make)
    seconds = interleave(
        {row: counted(make, start=1) for row, make in makers.items()},
        per_round=MOSAIC_ROUND * bench.settings.mosaics,
        repeats=bench.settings.repeats,
        warmup=bench.settings.warmup,
        progress=bench.progress,
        label=f"{SECTION.number} stream: mosaic",
        clock=time.thread_time,  # single-threaded: this thread's CPU time
    )
    bench.rows(SECTION, seconds)
