"""rankaug's scoreboard: what its guarantees cost, and its mosaic against the peers'.

Run from the repository root (the peers and the photographs are optional; install them
with the step in ``benchmarks/README_peers.md``)::

    .venv/bin/python benchmarks/throughput.py                # full run, about 2 minutes
    .venv/bin/python benchmarks/throughput.py --quick        # under a minute
    .venv/bin/python benchmarks/throughput.py --json out.json --repeats 9

Sections, each measured side by side in one run (contenders interleaved: in blocks per
round for the microsecond-scale keys and the loaders, one operation at a time for the
wrapper and the mosaics; medians and min..max over the rounds, ratios of the medians):

1. Key cost: microseconds per sample to derive the key's Generator, for both keyings,
   against building a numpy Generator directly.
2. Wrapper overhead: ``RandomAugmentWrapper(ds, pipeline)[i]`` against calling the same
   albumentations pipeline directly in a loop over the same samples (square images).
3. Mosaic: ``MosaicDataset(ds)[i]`` (2x2 and 3x3) against albumentations ``A.Mosaic``,
   ultralytics ``Mosaic`` (+ its affine crop, and alone), a YOLOv5-style mosaic and the
   floor, all on the same in-memory sources and output size.
4. Scaling: a DataLoader over ``MosaicDataset`` with 0, 1 and 2 workers, numpy samples
   (pickled through the worker pipe), torch tensors (shared memory) and, as an
   experiment, tensors in shared buffers reused across batches; with the CPU time the
   loader's processes got and how long they waited for a CPU (other work on the
   machine), read from ``/proc``.

Every process runs one thread: the OpenMP/BLAS thread variables are set to 1 before numpy,
cv2 and torch load, and ``cv2.setNumThreads(1)`` and ``torch.set_num_threads(1)`` are
called after the peers are imported (importing ultralytics changes cv2's setting). Sources
are decoded and held in memory before any timing starts: decoding is not timed.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import gc
import importlib
import importlib.metadata
import io
import json
import math
import os
import platform
import pstats
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

# One thread everywhere, set before numpy, cv2 and torch start their thread pools.
os.environ.update(
    OMP_NUM_THREADS="1",
    OPENBLAS_NUM_THREADS="1",
    MKL_NUM_THREADS="1",
    NUMEXPR_NUM_THREADS="1",
    VECLIB_MAXIMUM_THREADS="1",
)
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")  # before rankaug imports albumentations
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np
import torch

import rankaug
from benchmarks import peers  # sets the variables that keep ultralytics offline
from benchmarks._loaders import Chunk, make_loaders, time_chunk, transport_costs
from benchmarks._timing import (
    Op,
    Progress,
    Summary,
    alternate,
    counted,
    interleave,
    paired_ratios,
    peak_rss_mib,
    summarize,
)
from benchmarks.photos import load_photos, photos_available
from rankaug import RandomAugmentWrapper, SampleContext
from rankaug.datasets import SyntheticDetection
from rankaug.keys import Domain, KeyTemplate

__all__ = ["GOALS", "ROW_IDS", "main"]

Sample = dict[str, np.ndarray]
Better = Literal["higher", "lower"]

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
"""The thread variables set to 1 at the top of this module (reported with the figures)."""

# ------------------------------------------------------------------------------ rows
KEY_ROWS: dict[str, str] = {
    "key/numpy_default_rng": "numpy: np.random.default_rng(i) (baseline)",
    "key/numpy_seedsequence": "numpy: Generator(PCG64(SeedSequence(8 words)))",
    "key/sample_derive": 'keying="sample": derive the Generator (key_random)',
    "key/sample_item": 'keying="sample": wrapper[i], no-op transform',
    "key/stream_new": 'keying="stream": derive a new stream (1st sample/epoch)',
    "key/stream_item": 'keying="stream": wrapper[i], no-op transform',
}
WRAPPER_ROWS: dict[str, str] = {
    "wrapper/direct": "albumentations pipeline called directly (baseline)",
    "wrapper/stream": "RandomAugmentWrapper(ds, pipeline)",
}
MOSAIC_ROWS: dict[str, str] = {
    "mosaic/rankaug_2x2": "rankaug MosaicDataset 2x2: ds[i]",
    "mosaic/rankaug_3x3": "rankaug MosaicDataset 3x3: ds[i]",
    "mosaic/floor": "floor: 4 visible regions resized in, no targets",
    "mosaic/albumentations": "albumentations A.Mosaic 2x2 (cell = output)",
    "mosaic/ultralytics_affine": "ultralytics Mosaic + RandomPerspective",
    "mosaic/ultralytics_mosaic": "ultralytics Mosaic alone (2x output canvas)",
    "mosaic/yolov5_style": "YOLOv5-style canvas-then-crop",
    "mosaic/albumentations_3x3": "albumentations A.Mosaic 3x3 (cell = output)",
    "mosaic/ultralytics9_affine": "ultralytics Mosaic n=9 + RandomPerspective",
}
TRANSPORTS: dict[str, str] = {
    "tensor": "torch tensors (shared memory)",
    "numpy": "numpy samples (pickled)",
    "reused": "experiment: tensors, reused shm",
}
"""How batches leave the workers (``benchmarks._loaders.COLLATES``)."""
WORKERS = (0, 1, 2)
SCALING_ROWS: dict[str, str] = {
    f"scaling/{transport}_{w}w": f"{what}, {w} worker{'s' if w != 1 else ''}"
    for transport, what in TRANSPORTS.items()
    for w in WORKERS
}
ROW_IDS: tuple[str, ...] = (*KEY_ROWS, *WRAPPER_ROWS, *MOSAIC_ROWS, *SCALING_ROWS)
"""Every row the JSON holds, measured or marked unavailable."""


class Goal(NamedTuple):
    """One of the issue's goals.

    Attributes:
        id: Stable identifier, in the JSON's ``goals``.
        what: What is compared, for the table.
        numerator: The row measured.
        denominator: The row it is divided by; ``None`` for an absolute figure.
        op: ``"<="`` or ``">="``.
        target: The goal.
    """

    id: str
    what: str
    numerator: str
    denominator: str | None
    op: Literal["<=", ">="]
    target: float


GOALS: tuple[Goal, ...] = (
    Goal(
        "key_sample",
        'key + wrapper path, keying="sample", µs/sample',
        "key/sample_item",
        None,
        "<=",
        15,
    ),
    Goal(
        "key_stream",
        'key + wrapper path, keying="stream", µs/sample',
        "key/stream_item",
        None,
        "<=",
        15,
    ),
    Goal(
        "wrapper", "wrapper / direct albumentations", "wrapper/stream", "wrapper/direct", ">=", 0.98
    ),
    Goal(
        "mosaic_floor", "MosaicDataset 2x2 / floor", "mosaic/rankaug_2x2", "mosaic/floor", ">=", 0.8
    ),
    Goal(
        "mosaic_albumentations",
        "MosaicDataset 2x2 / albumentations A.Mosaic",
        "mosaic/rankaug_2x2",
        "mosaic/albumentations",
        ">=",
        5.0,
    ),
    Goal(
        "mosaic_ultralytics",
        "MosaicDataset 2x2 / ultralytics Mosaic+affine",
        "mosaic/rankaug_2x2",
        "mosaic/ultralytics_affine",
        ">=",
        2.5,
    ),
    Goal(
        "scaling_tensor",
        "2 workers / 1 worker, torch tensors",
        "scaling/tensor_2w",
        "scaling/tensor_1w",
        ">=",
        1.6,
    ),
    Goal(
        "scaling_numpy",
        "2 workers / 1 worker, numpy samples",
        "scaling/numpy_2w",
        "scaling/numpy_1w",
        ">=",
        1.6,
    ),
)
"""The issue's goals, in the order of the goals table."""

MOSAIC_RATIOS: tuple[tuple[str, str], ...] = (
    ("mosaic/rankaug_2x2", "mosaic/floor"),
    ("mosaic/rankaug_2x2", "mosaic/albumentations"),
    ("mosaic/rankaug_2x2", "mosaic/ultralytics_affine"),
    ("mosaic/rankaug_2x2", "mosaic/ultralytics_mosaic"),
    ("mosaic/rankaug_2x2", "mosaic/yolov5_style"),
    ("mosaic/rankaug_3x3", "mosaic/albumentations_3x3"),
    ("mosaic/rankaug_3x3", "mosaic/ultralytics9_affine"),
    ("mosaic/rankaug_3x3", "mosaic/rankaug_2x2"),
)


@dataclass(frozen=True)
class Settings:
    """How much to measure (``--quick`` shrinks everything).

    Attributes:
        repeats: Interleaved rounds per section.
        key_calls: Calls per contender per round in the key section.
        wrapper_samples: Samples per contender per round in the wrapper section.
        mosaics: Mosaics per contender per round in the mosaic section.
        batches: Timed batches per loader per round in the scaling section (even).
        warmup: Untimed operations per contender first (samples or mosaics).
    """

    repeats: int
    key_calls: int
    wrapper_samples: int
    mosaics: int
    batches: int
    warmup: int


FULL = Settings(repeats=9, key_calls=4000, wrapper_samples=48, mosaics=60, batches=16, warmup=12)
QUICK = Settings(repeats=3, key_calls=1000, wrapper_samples=16, mosaics=20, batches=6, warmup=4)


@dataclass
class Row:
    """One contender's figures.

    Attributes:
        id: Stable identifier (``section/name``), a key of the JSON's ``rows``.
        name: Human-readable description.
        unit: ``"µs/sample"``, ``"samples/s"`` or ``"mosaics/s"``.
        better: Whether higher or lower values are better.
        values: One value per round.
        status: ``"ok"``, ``"unavailable"`` (a peer not installed) or ``"error"``.
        reason: Why the row is not ``"ok"``.
        note: Anything else worth saying about the row.
        extra: Other figures per round. The scaling rows have ``cores`` (CPU time the
            loader's processes got per second), ``waiting`` (time they were runnable but
            waited for a CPU, per second), ``per_cpu_second`` (samples per CPU-second)
            and ``projected`` (samples/s on idle cores: ``per_cpu_second`` times
            ``min(cpus, cores + waiting)``, an estimate for a machine nobody else uses).
    """

    id: str
    name: str
    unit: str
    better: Better
    values: list[float] = field(default_factory=list)
    status: str = "ok"
    reason: str = ""
    note: str = ""
    extra: dict[str, list[float]] = field(default_factory=dict)

    @property
    def summary(self) -> Summary | None:
        """Median and range over the rounds, ``None`` when nothing was measured."""
        return summarize(self.values) if self.values and self.status == "ok" else None

    def to_json(self) -> dict[str, Any]:
        s = self.summary
        return {
            "id": self.id,
            "name": self.name,
            "unit": self.unit,
            "better": self.better,
            "status": self.status,
            "reason": self.reason,
            "note": self.note,
            "median": None if s is None else s.median,
            "min": None if s is None else s.low,
            "max": None if s is None else s.high,
            "values": list(self.values),
            **{f"{key}_median": summarize(v).median for key, v in self.extra.items() if v},
            **{f"{key}_values": list(v) for key, v in self.extra.items()},
        }


@dataclass
class Report:
    """Everything measured, for printing and for ``--json``."""

    meta: dict[str, Any]
    rows: dict[str, Row] = field(default_factory=dict)
    ratios: dict[str, dict[str, Any]] = field(default_factory=dict)
    goals: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, str] = field(default_factory=dict)

    def add(self, row: Row) -> Row:
        self.rows[row.id] = row
        return row

    def ratio(self, numerator: str, denominator: str) -> dict[str, Any] | None:
        """Ratio of the medians of two rows (and the per-round ratios), if both measured."""
        a, b = self.rows[numerator], self.rows[denominator]
        sa, sb = a.summary, b.summary
        if sa is None or sb is None or sb.median == 0:
            return None
        paired = paired_ratios(a.values, b.values) if len(a.values) == len(b.values) else []
        entry = {
            "numerator": numerator,
            "denominator": denominator,
            "ratio": sa.median / sb.median,
            "paired_median": summarize(paired).median if paired else None,
            "paired_min": min(paired) if paired else None,
            "paired_max": max(paired) if paired else None,
        }
        self.ratios[f"{numerator} / {denominator}"] = entry
        return entry

    def to_json(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "rows": {
                key: self.rows[key].to_json()
                for key in sorted(self.rows, key=lambda k: ROW_IDS.index(k) if k in ROW_IDS else 99)
            },
            "ratios": self.ratios,
            "goals": self.goals,
            "diagnostics": self.diagnostics,
            "profiles": self.profiles,
        }


# ---------------------------------------------------------------------------- output
class Console:
    """Prints tables to stdout, clearing the progress bar first."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def __call__(self, text: str = "") -> None:
        self.progress.close()
        print(text, flush=True)


def _num(value: float) -> str:
    """Format a figure with three significant digits or so."""
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _range(s: Summary) -> str:
    return f"{_num(s.low)}..{_num(s.high)}"


def _ratio_text(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "n/a"
    text = f"{entry['ratio']:.2f}x"
    if entry["paired_min"] is not None and len({entry["paired_min"], entry["paired_max"]}) > 1:
        text += f" (per round {entry['paired_min']:.2f}..{entry['paired_max']:.2f})"
    return text


def print_rows(
    out: Console, report: Report, ids: Sequence[str], *, baseline: str | None = None
) -> None:
    """Print one section's rows: median, min..max and, optionally, the ratio to a baseline."""
    unit = report.rows[ids[0]].unit
    header = f"  {'contender':54s} {unit:>10s} {'min..max':>15s}"
    if baseline is not None:
        header += f"  {'vs ' + baseline.split('/')[-1]:>22s}"
    out(header)
    for row_id in ids:
        row = report.rows[row_id]
        s = row.summary
        if s is None:
            out(f"  {row.name:54s} {row.status + ': ' + row.reason}")
            continue
        line = f"  {row.name:54s} {_num(s.median):>10s} {_range(s):>15s}"
        if baseline is not None:
            entry = report.ratio(row_id, baseline)
            line += f"  {'' if entry is None else format(entry['ratio'], '.2f') + 'x':>22s}"
        if row.note:
            line += f"  [{row.note}]"
        out(line)


# ------------------------------------------------------------------------------ data
@dataclass
class Sources:
    """The in-memory source samples every contender uses.

    Attributes:
        kind: ``"photos"`` or ``"synthetic"``.
        description: What they are, for the report.
        mosaic: Sources of the mosaics, in their own sizes.
        square: ``side x side`` versions for the wrapper section.
    """

    kind: str
    description: str
    mosaic: list[Sample]
    square: list[Sample]


def _plain(sample: Any) -> Sample:
    """A dict sample with exactly image (contiguous), bboxes float32 (N, 4) and labels int64."""
    return {
        "image": np.ascontiguousarray(sample["image"]),
        "bboxes": np.asarray(sample["bboxes"], dtype=np.float32).reshape(-1, 4),
        "labels": np.asarray(sample["labels"], dtype=np.int64).reshape(-1),
    }


def _squared(sample: Sample, side: int) -> Sample:
    """Resize a sample to ``side x side`` (aspect not kept), boxes scaled with it."""
    h, w = sample["image"].shape[:2]
    image = cv2.resize(sample["image"], (side, side), interpolation=cv2.INTER_AREA)
    scale = np.array([side / w, side / h, side / w, side / h], dtype=np.float32)
    return {"image": image, "bboxes": sample["bboxes"] * scale, "labels": sample["labels"].copy()}


def load_sources(kind: str, n: int, side: int) -> Sources:
    """Load (decode) the sources once, before any timing.

    Args:
        kind: ``"photos"`` (skimage.data; fails without scikit-image), ``"synthetic"``
            (``rankaug.datasets.SyntheticDetection`` with varied sizes) or ``"auto"``
            (photos when scikit-image is installed).
        n: How many source samples.
        side: Output side; also the side of the wrapper section's square images.

    Returns:
        The sources.
    """
    if kind == "photos" or (kind == "auto" and photos_available()):
        mosaic = [_plain(p) for p in load_photos(n)]
        what = "skimage.data photographs with hand-placed boxes"
        kind = "photos"
    else:
        synthetic = SyntheticDetection(
            n, image_size=(side * 3 // 4, side), varied_sizes=True, masks=False, seed=0
        )
        mosaic = [_plain(synthetic[i]) for i in range(n)]
        what = "SyntheticDetection(varied_sizes=True) images"
        if kind == "auto":
            what += " (scikit-image is not installed)"
        kind = "synthetic"
    by_area = sorted((s["image"].shape[:2] for s in mosaic), key=lambda hw: hw[0] * hw[1])
    description = (
        f"{n} {what}, {by_area[0][0]}x{by_area[0][1]}..{by_area[-1][0]}x{by_area[-1][1]} (h x w)"
    )
    square = [_squared(s, side) for s in mosaic]
    return Sources(kind, description, mosaic, square)


# ------------------------------------------------------------------- 1. key cost
def _identity(sample: Any, rng: np.random.Generator) -> Any:
    """A no-op rng transform: what remains is the wrapper's own per-sample cost."""
    return sample


def key_contenders(seed: int) -> dict[str, Op]:
    """The key-cost contenders: one operation derives one sample's Generator.

    Args:
        seed: The run's seed.

    Returns:
        Row id -> operation.
    """
    n = 4096
    items = list(range(n))
    by_sample: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        items, _identity, seed=seed, keying="sample"
    )
    by_stream: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        items, _identity, seed=seed, keying="stream"
    )
    # the key's words, filled by the one template (keys.py), then numpy alone
    build = KeyTemplate(Domain.SAMPLE, seed=seed, stream=0).builder("epoch", "index")

    def numpy_seedsequence(i: int) -> None:
        np.random.Generator(np.random.PCG64(build(0, i)))

    return {
        "key/numpy_default_rng": counted(np.random.default_rng),
        "key/numpy_seedsequence": counted(numpy_seedsequence),
        "key/sample_derive": counted(
            lambda i: by_sample.key_random(SampleContext(i % n, rank=0, worker_id=0, epoch=0))
        ),
        "key/sample_item": counted(lambda i: by_sample[i % n]),
        # A new epoch every call: the stream is derived anew each time.
        "key/stream_new": counted(
            lambda i: by_stream.key_random(SampleContext(i % n, rank=0, worker_id=0, epoch=i))
        ),
        "key/stream_item": counted(lambda i: by_stream[i % n]),
    }


# ------------------------------------------------------------- 2. wrapper overhead
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
        bbox_params=A.BboxParams(format="pascal_voc", label_fields=["labels"]),
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
        rankaug.make_seed_sequence(seed, rank=0, worker_id=0, epoch=0, stream=wrapped.stream)
    )
    pipeline.set_random_state(keyed.generator, keyed.py_random)

    def direct(i: int) -> Any:
        sample = square[i % n]
        return pipeline(image=sample["image"], bboxes=sample["bboxes"], labels=sample["labels"])

    matched = bool(np.array_equal(direct(0)["image"], wrapped[0]["image"]))
    return {
        "wrapper/direct": counted(direct, start=1),
        "wrapper/stream": counted(lambda i: wrapped[i % n], start=1),
    }, matched


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


# ----------------------------------------------------------------------- 3. mosaic
def cycling(dataset: Any, n: int) -> Callable[[int], Any]:
    """``make(i) = dataset[i % n]``: one output per call, the indices going round."""

    def make(i: int) -> Any:
        return dataset[i % n]

    return make


def find_mosaic_class() -> tuple[type[Any] | None, str]:
    """``rankaug.MosaicDataset`` if it can be imported, else ``None`` and why not."""
    cls = getattr(rankaug, "MosaicDataset", None)
    if cls is not None:
        return cls, ""
    try:
        module = importlib.import_module("rankaug.mosaic")
    except ImportError as exc:
        return None, f"rankaug.MosaicDataset cannot be imported ({exc})"
    cls = getattr(module, "MosaicDataset", None)
    if cls is None:
        return None, "rankaug.mosaic has no MosaicDataset"
    return cls, ""


def mosaic_contenders(
    mosaic_cls: type[Any] | None,
    sources: Sequence[Sample],
    size: int,
    seed: int,
    *,
    missing: str = "",
) -> tuple[dict[str, Callable[[int], Any]], dict[str, str]]:
    """Build every mosaic contender on the same sources and output size.

    Each contender is ``make(i)``: one ``size x size`` mosaic whose main tile is source
    ``i % len(sources)`` and whose partners the contender draws itself (ultralytics'
    mosaic-only row returns its ``2 * size`` canvas).

    Args:
        mosaic_cls: ``rankaug.MosaicDataset``, or ``None`` while it cannot be imported.
        sources: The in-memory source samples.
        size: Output side.
        seed: Seed of every contender's draws.
        missing: Why ``mosaic_cls`` is ``None``.

    Returns:
        (row id -> ``make``, row id -> why that contender is unavailable).
    """
    makers: dict[str, Callable[[int], Any]] = {}
    unavailable: dict[str, str] = {}
    n = len(sources)
    hw = (size, size)
    for row_id, grid in (("mosaic/rankaug_2x2", (2, 2)), ("mosaic/rankaug_3x3", (3, 3))):
        if mosaic_cls is None:
            unavailable[row_id] = missing
            continue
        dataset = mosaic_cls(sources, seed=seed, output_size=size, grid=grid)
        makers[row_id] = cycling(dataset, n)
    builders: dict[str, Callable[[], peers.Step]] = {
        "mosaic/floor": lambda: peers.floor_mosaic(sources, hw, rng=random.Random(seed)),
        "mosaic/albumentations": lambda: peers.albumentations_mosaic(sources, hw, seed=seed),
        "mosaic/ultralytics_affine": lambda: peers.ultralytics_mosaic(sources, size, seed=seed),
        "mosaic/ultralytics_mosaic": lambda: peers.ultralytics_mosaic(
            sources, size, affine=False, seed=seed
        ),
        "mosaic/yolov5_style": lambda: peers.yolov5_style_mosaic(
            sources, size, rng=random.Random(seed)
        ),
        "mosaic/albumentations_3x3": lambda: peers.albumentations_mosaic(
            sources, hw, seed=seed, grid=(3, 3)
        ),
        "mosaic/ultralytics9_affine": lambda: peers.ultralytics_mosaic(
            sources, size, seed=seed, n_tiles=9
        ),
    }
    for row_id, build in builders.items():
        try:
            makers[row_id] = build()
        except peers.PeerUnavailable as exc:
            unavailable[row_id] = f"not installed: {exc.reason}"
    return {row_id: makers[row_id] for row_id in MOSAIC_ROWS if row_id in makers}, unavailable


def check_mosaic(row_id: str, output: Any, size: int) -> str:
    """Return a problem with a contender's output (shape, boxes), or ``""``."""
    image = output["image"] if isinstance(output, dict) else output[0]
    want = 2 * size if row_id == "mosaic/ultralytics_mosaic" else size
    if tuple(np.shape(image)[:2]) != (want, want):
        return f"output is {np.shape(image)}, expected {want}x{want}"
    if row_id != "mosaic/floor" and isinstance(output, dict) and "bboxes" not in output:
        return "output has no boxes"
    return ""


# ---------------------------------------------------------------------- profiles
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


def resize_split(op: Callable[[int], Any], count: int) -> tuple[float, float]:
    """Run ``count`` operations; return ms per operation in all and inside ``cv2.resize``.

    ``cv2.resize`` is replaced by a timing wrapper for the duration (the code under test
    looks it up on the module at each call), then put back.
    """
    real = cv2.resize
    spent = [0.0]

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t0

    for i in range(10):  # warm up
        op(i)
    cv2.resize = timed
    try:
        t0 = time.perf_counter()
        for i in range(count):
            op(i)
        total = time.perf_counter() - t0
    finally:
        cv2.resize = real
    return total / count * 1000, spent[0] / count * 1000


# ------------------------------------------------------------------------- meta
def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def pin_threads() -> None:
    """One thread for cv2 and torch (called again after the peers are imported)."""
    cv2.setNumThreads(1)
    torch.set_num_threads(1)


def describe_run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """Versions, thread settings and the machine, for the report."""
    versions: dict[str, str | None] = {
        "python": platform.python_version(),
        "rankaug": rankaug.__version__,
        "numpy": np.__version__,
        "torch": torch.__version__,
        "opencv": cv2.__version__,
    }
    for dist in ("albumentations", "ultralytics", "scikit-image"):
        versions[dist] = _version(dist)
    return {
        "versions": versions,
        "threads": {
            **{name: os.environ.get(name) for name in THREAD_VARIABLES},
            "cv2.getNumThreads": cv2.getNumThreads(),
            "torch.get_num_threads": torch.get_num_threads(),
        },
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_start": [round(x, 2) for x in os.getloadavg()],
        },
        "settings": {
            "quick": args.quick,
            **settings.__dict__,
            "size": args.size,
            "sources": args.sources,
            "batch_size": args.batch_size,
            "seed": args.seed,
        },
    }


# ------------------------------------------------------------------------- goals
MISS_HINTS: dict[str, str] = {
    "key_sample": "numpy's SeedSequence + PCG64 is most of it: see key/numpy_seedsequence",
    "key_stream": "the per-sample path (index check, context, epoch read): run --profile",
    "wrapper": "the wrapper's own path per sample (key, context, adapter unpack/repack, "
    "set_random_state): run --profile for the split",
    "mosaic_floor": "Python per mosaic beyond cv2.resize (draws, tiles, boxes): --profile",
    "mosaic_albumentations": "run --profile",
    "mosaic_ultralytics": "run --profile",
    "scaling_tensor": "needs 2 idle cores (see 'got N cores, waited'); a fresh shared-memory "
    "batch per step costs page faults (see the transport lines)",
    "scaling_numpy": "numpy batches are pickled through the worker pipe and unpickled by the "
    "main process: return torch tensors",
}
"""What to look at when a goal is missed (printed under the goals table)."""


def evaluate_goals(report: Report) -> None:
    """Fill ``report.goals``: PASS/MISS with the measured figure and the margin."""
    for goal_id, what, numerator, denominator, op, target in GOALS:
        paired = report.diagnostics.get("wrapper_paired")
        if denominator is None:
            s = report.rows[numerator].summary
            measured = None if s is None else s.median
        elif goal_id == "wrapper" and paired is not None:
            measured = paired["ratio"]  # the drift-free estimate (see section 2)
        else:
            entry = report.ratio(numerator, denominator)
            measured = None if entry is None else entry["ratio"]
        if measured is None:
            status, margin = "N/A", None
        else:
            ok = measured <= target if op == "<=" else measured >= target
            status = "PASS" if ok else "MISS"
            # how far from the goal, relative to it (negative: missed by that much)
            margin = (target - measured) / target if op == "<=" else measured / target - 1
        notes = [report.rows[numerator].note] if goal_id.startswith("scaling") else []
        if goal_id == "wrapper" and paired is not None and denominator is not None:
            of_medians = report.ratio(numerator, denominator)
            if of_medians is not None:
                notes.append(
                    f"from {paired['pairs']:.0f} paired samples (same draws), "
                    f"{paired['extra_us']:+.0f} µs per sample; ratio of the round medians "
                    f"{of_medians['ratio']:.3f}"
                )
        if goal_id.startswith("scaling") and denominator is not None:
            projected = [
                report.rows[k].extra.get("projected", []) for k in (numerator, denominator)
            ]
            if projected[0] and projected[1]:
                notes.append(
                    f"projected on {os.cpu_count()} idle cores from CPU efficiency and demand: "
                    f"{summarize(projected[0]).median / summarize(projected[1]).median:.2f}x"
                )
        summary = report.rows[numerator].summary
        baseline = report.rows["key/numpy_default_rng"].summary
        if goal_id.startswith("key") and summary is not None and baseline is not None:
            notes.append(
                f"best round {summary.low:.1f}; np.random.default_rng alone "
                f"{baseline.median:.1f} in the same rounds"
            )
        if status == "MISS":
            notes.append(MISS_HINTS[goal_id])
        report.goals.append(
            {
                "id": goal_id,
                "goal": what,
                "op": op,
                "target": target,
                "measured": measured,
                "status": status,
                "margin": margin,
                "note": "; ".join(note for note in notes if note),
            }
        )


def print_goals(out: Console, report: Report) -> None:
    """The goals table: PASS/MISS, measured, target, margin (and why, for a miss)."""
    out("Goals (ratios of medians measured side by side in this run)")
    out(f"  {'':4s} {'goal':48s} {'measured':>9s} {'target':>9s}  margin")
    for goal in report.goals:
        value = goal["measured"]
        # ratios with three decimals, so that a near miss never prints as the target
        measured = "n/a" if value is None else f"{value:.3f}" if value < 10 else _num(value)
        margin = "" if goal["margin"] is None else f"{goal['margin']:+.1%}"
        if goal["status"] == "MISS":
            margin += " (missed)"
        target = f"{goal['op']} {_num(goal['target'])}"
        out(f"  {goal['status']:4s} {goal['goal']:48s} {measured:>9s} {target:>9s}  {margin}")
        if goal["note"]:
            out(f"       {goal['note']}")


# -------------------------------------------------------------------------- main
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="rankaug's throughput scoreboard (side by side, ratios, goals)."
    )
    parser.add_argument("--quick", action="store_true", help="a short run (under a minute)")
    parser.add_argument("--repeats", type=int, default=None, help="interleaved rounds")
    parser.add_argument("--json", type=Path, default=None, help="also write everything here")
    parser.add_argument("--size", type=int, default=640, help="output side (default 640)")
    parser.add_argument("--sources", type=int, default=16, help="source samples (default 16)")
    parser.add_argument(
        "--data",
        choices=("auto", "photos", "synthetic"),
        default="auto",
        help="photos from skimage.data when installed (auto), or synthetic images",
    )
    parser.add_argument("--batch-size", type=int, default=16, help="DataLoader batch size")
    parser.add_argument("--seed", type=int, default=0, help="seed of every contender")
    parser.add_argument("--profile", action="store_true", help="also cProfile rankaug's contenders")
    parser.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)",
    )
    args = parser.parse_args(argv)
    if args.size < 16 or args.sources < 1 or args.batch_size < 1:
        parser.error("--size must be >= 16, --sources and --batch-size >= 1")
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be >= 1")
    return args


@dataclass
class Bench:
    """What every section needs: the settings, the sources, the report and the output."""

    settings: Settings
    sources: Sources
    size: int
    seed: int
    batch_size: int
    report: Report
    progress: Progress
    out: Console

    def rows(self, ids: Sequence[str], names: dict[str, str], unit: str, values: Any) -> None:
        """Add measured rows; ``values[id]`` is seconds per operation for each round."""
        for row_id in ids:
            per_op = values[row_id]
            if unit == "µs/sample":
                self.report.add(
                    Row(row_id, names[row_id], unit, "lower", [x * 1e6 for x in per_op])
                )
            else:
                self.report.add(Row(row_id, names[row_id], unit, "higher", [1 / x for x in per_op]))

    def missing(self, ids: Sequence[str], names: dict[str, str], unit: str, why: str) -> None:
        """Add rows that could not be measured (``why`` starts with the status)."""
        status, _, reason = why.partition(": ")
        for row_id in ids:
            self.report.add(
                Row(row_id, names[row_id], unit, "higher", status=status, reason=reason)
            )
            self.progress.advance(self.settings.repeats)


def section_keys(bench: Bench) -> None:
    """Section 1: the key's cost per sample, both keyings, against numpy alone."""
    settings = bench.settings
    seconds = interleave(
        key_contenders(bench.seed),
        per_round=settings.key_calls,
        repeats=settings.repeats,
        warmup=settings.key_calls // 4,
        progress=bench.progress,
        label="1 key cost",
    )
    bench.rows(list(KEY_ROWS), KEY_ROWS, "µs/sample", seconds)
    bench.out(f"1. Key cost: µs per sample, lower is better ({settings.key_calls} calls per round)")
    print_rows(bench.out, bench.report, list(KEY_ROWS), baseline="key/numpy_default_rng")
    bench.out()


def section_wrapper(bench: Bench) -> None:
    """Section 2: the wrapper against the same albumentations pipeline called directly."""
    settings, report = bench.settings, bench.report
    ops, matched = wrapper_contenders(bench.sources.square, bench.seed)
    report.meta["wrapper_draws_matched"] = matched
    per_op: dict[str, list[float]] = {}
    firsts: list[str] = []
    seconds = alternate(
        ops,
        per_round=settings.wrapper_samples,
        repeats=settings.repeats,
        warmup=settings.warmup,
        progress=bench.progress,
        label="2 wrapper",
        record=per_op,
        firsts=firsts,
    )
    bench.rows(list(WRAPPER_ROWS), WRAPPER_ROWS, "samples/s", seconds)
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
    print_rows(bench.out, report, list(WRAPPER_ROWS), baseline="wrapper/direct")
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
            f"both orders): wrapper/baseline {paired['ratio']:.3f}x; the wrapper adds "
            f"{paired['extra_us']:+.0f} µs per sample (going second saves "
            f"{paired['cache_us']:.0f} µs)"
        )
    by_sample = report.rows["key/sample_item"].summary
    by_stream = report.rows["key/stream_item"].summary
    direct = report.rows["wrapper/direct"].summary
    if by_sample is not None and by_stream is not None and direct is not None:
        extra = by_sample.median - by_stream.median
        bench.out(
            f'  keying="sample" costs {extra:+.1f} µs per sample more than "stream" '
            f"(section 1): {extra * 1e-6 * direct.median:.2%} of a sample here"
        )
    bench.out()


def section_mosaic(
    bench: Bench, makers: dict[str, Callable[[int], Any]], unavailable: dict[str, str]
) -> None:
    """Section 3: every mosaic contender on the same sources, interleaved."""
    settings, report = bench.settings, bench.report
    for row_id, reason in unavailable.items():
        bench.missing([row_id], MOSAIC_ROWS, "mosaics/s", f"unavailable: {reason}")
    makers = dict(makers)
    for row_id, make in list(makers.items()):
        try:
            problem = check_mosaic(row_id, make(0), bench.size)
        except Exception as exc:  # a broken contender must not stop the scoreboard
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            bench.missing([row_id], MOSAIC_ROWS, "mosaics/s", f"error: {problem}")
            del makers[row_id]
    seconds = alternate(
        {row_id: counted(make, start=1) for row_id, make in makers.items()},
        per_round=settings.mosaics,
        repeats=settings.repeats,
        warmup=settings.warmup,
        progress=bench.progress,
        label="3 mosaic",
    )
    bench.rows(list(seconds), MOSAIC_ROWS, "mosaics/s", seconds)
    bench.out(
        f"3. Mosaic: mosaics/s at {bench.size}x{bench.size} from the same in-memory sources, "
        f"with boxes except the floor ({settings.mosaics} mosaics per round)"
    )
    print_rows(bench.out, report, list(MOSAIC_ROWS))
    bench.out("  ratios (medians; per-round range in brackets):")
    for numerator, denominator in MOSAIC_RATIOS:
        entry = report.ratio(numerator, denominator)
        bench.out(
            f"    {numerator.split('/')[1]:>12s} vs {denominator.split('/')[1]:<22s} "
            f"{_ratio_text(entry)}"
        )
    print_resize_split(bench, makers)
    bench.out()


def print_resize_split(bench: Bench, makers: dict[str, Callable[[int], Any]]) -> None:
    """Split the floor's and MosaicDataset's time into ``cv2.resize`` and the rest."""
    report = bench.report
    ids = [k for k in ("mosaic/floor", "mosaic/rankaug_2x2", "mosaic/rankaug_3x3") if k in makers]
    if not ids:
        return
    count = 3 * bench.settings.mosaics
    bench.progress.set_label("3 mosaic: cv2.resize split")
    bench.out(f"  where the time goes, ms per mosaic ({count} each, cv2.resize timed apart):")
    splits = report.diagnostics.setdefault("resize_split", {})
    for row_id in ids:
        total, pixels = resize_split(makers[row_id], count)
        splits[row_id] = {"total_ms": total, "resize_ms": pixels}
        bench.out(
            f"    {row_id.split('/')[1]:12s} {total:.3f} = cv2.resize {pixels:.3f} + the "
            f"rest {total - pixels:.3f} ({(total - pixels) / total:.0%})"
        )
    if "mosaic/floor" in splits and "mosaic/rankaug_2x2" in splits:
        floor, ours = splits["mosaic/floor"], splits["mosaic/rankaug_2x2"]
        budget = floor["total_ms"] / 0.8 - ours["resize_ms"]
        report.diagnostics["rest_budget_ms_for_0.8_floor"] = budget
        bench.out(
            f"    0.8x the floor leaves MosaicDataset 2x2 {budget:.3f} ms per mosaic beyond "
            f"cv2.resize; it spends {ours['total_ms'] - ours['resize_ms']:.3f}"
        )


def section_scaling(bench: Bench, mosaic_cls: type[Any] | None, missing: str) -> None:
    """Section 4: DataLoader scaling over MosaicDataset, three transports."""
    settings, report, out = bench.settings, bench.report, bench.out
    if mosaic_cls is None:
        bench.missing(list(SCALING_ROWS), SCALING_ROWS, "samples/s", f"unavailable: {missing}")
    else:
        dataset = mosaic_cls(bench.sources.mosaic, seed=bench.seed, output_size=bench.size)
        measure_scaling(report, dataset, bench.batch_size, settings, bench.progress)
    out(
        f"4. Scaling: DataLoader over MosaicDataset 2x2, batch {bench.batch_size}, samples/s "
        f"in steady state ({settings.batches + settings.batches % 2} timed batches per round)"
    )
    for transport in TRANSPORTS:
        ids = [f"scaling/{transport}_{w}w" for w in WORKERS]
        print_rows(out, report, ids, baseline=ids[0])
        line = f"    speed-up 2 workers vs 1: {_ratio_text(report.ratio(ids[2], ids[1]))}"
        two, one = (report.rows[k].extra.get("projected") for k in (ids[2], ids[1]))
        if two and one:
            line += (
                f"; projected on {os.cpu_count()} idle cores "
                f"{summarize(two).median / summarize(one).median:.2f}x"
            )
        out(line)
    costs = report.diagnostics.get("transport")
    if costs:
        make = costs["make_ms"]
        out(
            "  moving one batch out of a worker, measured in-process (making the batch: "
            f"{make:.1f} ms):"
        )
        out(
            f"    numpy: {costs['batch_mb']:.1f} MB pickled, dumps + loads "
            f"{costs['pickle_ms']:.1f} ms ({costs['pickle_ms'] / make:.0%}), plus the pipe"
        )
        out(
            "    tensors: stacking into fresh shared memory (default_collate in a worker) "
            f"{costs['shm_fresh_ms']:.1f} ms ({costs['shm_fresh_ms'] / make:.0%}); into a "
            f"reused shared buffer {costs['shm_reused_ms']:.1f} ms "
            f"({costs['shm_reused_ms'] / make:.0%})"
        )
    out()


def print_header(bench: Bench) -> None:
    """Versions, threads, machine and data."""
    meta = bench.report.meta
    versions, threads, machine = meta["versions"], meta["threads"], meta["machine"]
    out = bench.out
    out("rankaug throughput: side by side in one run; compare ratios, not absolute figures")
    out("  versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None))
    out("  not installed: " + (", ".join(k for k, v in versions.items() if v is None) or "none"))
    out(
        f"  threads: pinned to 1 (OMP_NUM_THREADS={threads['OMP_NUM_THREADS']}, "
        f"cv2.getNumThreads()={threads['cv2.getNumThreads']}, "
        f"torch.get_num_threads()={threads['torch.get_num_threads']}): every figure is one "
        "thread per process"
    )
    out(f"  machine: {machine['cpus']} CPUs, load average {machine['load_average_start']} at start")
    out(f"  data: {bench.sources.description}; decoded into memory first, decoding is not timed")
    out(
        f"  gc: {meta['gc_frozen_objects']} objects of the imported libraries frozen "
        "(gc.freeze) before timing"
    )
    out(
        f"  {bench.settings.repeats} round{'s' if bench.settings.repeats != 1 else ''} per "
        "section, contenders interleaved (keys and loaders in blocks, wrapper and mosaics "
        "one operation at a time, order reversed at every turn); median and min..max over "
        "rounds"
    )
    out()


def run(args: argparse.Namespace) -> Report:
    """Measure every section and return the report (printing as it goes)."""
    base = QUICK if args.quick else FULL
    settings = Settings(**{**base.__dict__, "repeats": args.repeats or base.repeats})
    mosaic_cls, missing = find_mosaic_class()
    total = settings.repeats * len(ROW_IDS)
    progress = Progress(total, enabled={"auto": None, "on": True, "off": False}[args.progress])
    out = Console(progress)
    pin_threads()
    progress.set_label("loading sources (not timed)")
    sources = load_sources(args.data, args.sources, args.size)
    report = Report(meta=describe_run(args, settings))
    report.meta["data"] = {"kind": sources.kind, "description": sources.description}
    bench = Bench(settings, sources, args.size, args.seed, args.batch_size, report, progress, out)

    # The mosaic contenders first: importing ultralytics changes cv2's thread setting.
    makers, unavailable = mosaic_contenders(
        mosaic_cls, sources.mosaic, args.size, args.seed, missing=missing
    )
    pin_threads()
    report.meta["threads"]["cv2.getNumThreads"] = cv2.getNumThreads()
    report.meta["threads"]["torch.get_num_threads"] = torch.get_num_threads()
    # The imported libraries leave ~200k objects for the cyclic GC; a full collection
    # then takes ~100 ms and lands on whichever contender triggers it. Freeze them.
    gc.collect()
    gc.freeze()
    report.meta["gc_frozen_objects"] = gc.get_freeze_count()
    print_header(bench)

    section_keys(bench)
    section_wrapper(bench)
    section_mosaic(bench, makers, unavailable)
    section_scaling(bench, mosaic_cls, missing)
    if args.profile:
        profile_rankaug(report, sources, args.size, args.seed, mosaic_cls, out)

    report.meta["peak_rss_mib"] = peak_rss_mib()
    report.meta["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    evaluate_goals(report)
    rss = report.meta["peak_rss_mib"]
    out(
        f"Peak RSS: main process {rss['self']:.0f} MiB, largest worker {rss['children']:.0f} "
        f"MiB; load average {report.meta['machine']['load_average_end']} at the end"
    )
    out()
    print_goals(out, report)
    progress.close()
    return report


def measure_scaling(
    report: Report, dataset: Any, batch_size: int, settings: Settings, progress: Progress
) -> None:
    """Section 4: interleaved chunks of every loader, then the transport diagnostics."""
    batches = settings.batches + settings.batches % 2  # a multiple of 1 and 2 workers
    loaders = make_loaders(dataset, batch_size, list(TRANSPORTS), WORKERS)
    names = list(loaders)
    chunks: dict[str, list[Chunk]] = {name: [] for name in names}
    try:
        for name in names:  # start the workers, warm up
            progress.set_label(f"4 scaling: warm-up {name}")
            time_chunk(loaders[name], 2, batch_size)
        for r in range(settings.repeats):
            for name in names if r % 2 == 0 else names[::-1]:
                progress.set_label(f"4 scaling: {name}")
                chunks[name].append(time_chunk(loaders[name], batches, batch_size))
                progress.advance()
    finally:
        loaders.clear()  # shuts the persistent workers down
        gc.collect()
    for name in names:
        row = report.add(
            Row(name, SCALING_ROWS[name], "samples/s", "higher", [c.rate for c in chunks[name]])
        )
        measured = [c for c in chunks[name] if c.cores and c.waiting is not None]
        if measured:
            # Throughput = samples per CPU-second x cores running. Idle cores would run
            # everything that was runnable (got + waited), up to the machine's cores.
            cpus = os.cpu_count() or 1
            per_cpu = [c.rate / c.cores for c in measured if c.cores]
            projected = [
                c.rate / c.cores * min(cpus, c.cores + c.waiting)
                for c in measured
                if c.cores and c.waiting is not None
            ]
            row.extra = {
                "cores": [c.cores for c in measured if c.cores is not None],
                "waiting": [c.waiting for c in measured if c.waiting is not None],
                "per_cpu_second": per_cpu,
                "projected": projected,
            }
            row.note = (
                f"got {summarize(row.extra['cores']).median:.2f} cores, waited "
                f"{summarize(row.extra['waiting']).median:.2f}; "
                f"{summarize(per_cpu).median:.0f}/CPU-s; idle machine "
                f"≈{summarize(projected).median:.0f}/s"
            )
    report.diagnostics["transport"] = transport_costs(dataset, batch_size, settings.repeats)


def profile_rankaug(
    report: Report,
    sources: Sources,
    size: int,
    seed: int,
    mosaic_cls: type[Any] | None,
    out: Console,
) -> None:
    """Profile rankaug's contenders with cProfile: the top functions by own time.

    cProfile inflates Python-heavy code; read its figures as proportions, next to
    section 3's split of the mosaic time into ``cv2.resize`` and the rest.
    """
    n_sq, n_mo = len(sources.square), len(sources.mosaic)
    wrapped: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        sources.square, make_pipeline(seed), seed=seed, rank=0
    )
    items: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        list(range(4096)), _identity, seed=seed, rank=0, keying="sample"
    )
    targets: dict[str, tuple[Callable[[int], Any], int]] = {
        'key/sample_item (wrapper[i], keying="sample")': (lambda i: items[i], 3000),
        "wrapper/stream (RandomAugmentWrapper + albumentations)": (
            lambda i: wrapped[i % n_sq],
            60,
        ),
    }
    if mosaic_cls is not None:
        for grid in ((2, 2), (3, 3)):
            dataset = mosaic_cls(sources.mosaic, seed=seed, output_size=size, grid=grid)
            targets[f"mosaic/rankaug_{grid[0]}x{grid[1]}"] = (cycling(dataset, n_mo), 300)
    parts = wrapper_breakdown(sources.square, seed, 200)
    report.diagnostics["wrapper_breakdown_us"] = parts
    out(
        f"RandomAugmentWrapper[i], µs per sample (200 samples): {parts['total']:.0f} = pipeline "
        f"{parts['pipeline']:.0f} + set_random_state {parts['set_random_state']:.1f} + the "
        f"wrapper's own path {parts['own']:.1f} (key, context, adapter unpack/repack)"
    )
    out()
    for name, (op, count) in targets.items():
        text = profile_op(op, count)
        report.profiles[name] = text
        out(f"Profile: {name}, {count} calls, top functions by own time")
        out("\n".join("  " + line for line in text.splitlines()))
        out()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print the tables and the goals; write ``--json``.

    Args:
        argv: Command-line arguments (``sys.argv[1:]`` when ``None``).

    Returns:
        The exit status: 0, whether goals pass or miss (the table says which).
    """
    args = parse_args(argv)
    t0 = time.perf_counter()
    report = run(args)
    report.meta["wall_seconds"] = round(time.perf_counter() - t0, 1)
    print(f"\n(total {report.meta['wall_seconds']:.0f} s)")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
