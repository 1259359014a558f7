"""The scoreboard's catalogue: its sections, their rows, the goals and how much to measure.

Everything the JSON holds is declared here, in the order it is reported; the code that
measures a section lives in ``benchmarks/sections/<name>.py``. To add a section: declare
it in :data:`SECTIONS` (its rows), add its goals to ``benchmarks/_goal_table.py``, write its module
(``prepare`` and ``measure``, see ``benchmarks/sections/__init__.py``) and register it
there. This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks._report import Better

__all__ = [
    "E2E_FIRST",
    "E2E_PIPELINES",
    "E2E_WORKERS",
    "EPOCH_WORKERS",
    "FULL",
    "MIX_GROUPS",
    "MIX_PAIRS",
    "MOSAIC_RATIOS",
    "QUICK",
    "ROW_IDS",
    "SECTIONS",
    "TRANSPORTS",
    "WORKERS",
    "Section",
    "Settings",
    "section",
]


@dataclass(frozen=True)
class Section:
    """One section of the scoreboard.

    Attributes:
        name: Its name for ``--only``.
        number: Its number in the printed output.
        unit: The unit of its rows: ``"µs/..."`` (lower is better) or ``".../s"``.
        rows: Row id -> description, in the order printed.
        needs_sources: Whether it runs on the in-memory source images.
        rounds: The :class:`Settings` field that says how many rounds it runs.
    """

    name: str
    number: int
    unit: str
    rows: Mapping[str, str]
    needs_sources: bool = True
    rounds: str = "repeats"

    @property
    def better(self) -> Better:
        """``"lower"`` for times per operation and memory, ``"higher"`` for rates."""
        return "lower" if self.unit.startswith("µs") or self.unit == "MiB" else "higher"

    def values(self, seconds: Sequence[float]) -> list[float]:
        """Seconds per operation, one per round, in this section's unit."""
        if self.better == "lower":
            return [x * 1e6 for x in seconds]
        return [1 / x for x in seconds]


TRANSPORTS: dict[str, str] = {
    "tensor": "tensors, collate_detection (fresh shm)",
    "recycled": "tensors, BatchCollator (recycled shm)",
    "numpy": "numpy samples (pickled)",
}
"""How batches leave the workers (``benchmarks._loaders.COLLATES``)."""
WORKERS = (0, 1, 2)
EPOCH_WORKERS = (0, 1)
"""Worker counts of the epoch section's loaders."""
E2E_WORKERS = (0, 2)
"""Worker counts of the end-to-end section's loaders."""
E2E_PIPELINES: dict[str, str] = {
    "ultralytics": "ultralytics YOLODataset, cache=False",
    "ultralytics_ram": 'ultralytics YOLODataset, cache="ram"',
    "rankaug": "rankaug: Mosaic, A.Affine, HSV, flip",
    "rankaug_cached": "rankaug + CachedDataset",
    "fused": "rankaug: Mosaic+MosaicAffine, HSV, flip",
    "fused_cached": "rankaug fused + CachedDataset",
    "floor": "floor: the pixel work alone",
    "floor_cached": "floor: the pixel work alone, cached reads",
    "fused_reduced": "rankaug fused, reduced JPEG decode (unlike)",
}
"""The end-to-end contenders, built by ``benchmarks._pipelines.build``."""
E2E_FIRST = ("ultralytics", "ultralytics_ram", "rankaug_cached", "fused_cached")
"""The contenders whose first epoch (construction included) is reported apart."""


def _workers(w: int) -> str:
    return f"{w} worker{'s' if w != 1 else ''}"


# fmt: off
SECTIONS: tuple[Section, ...] = (
    Section("keys", 1, "µs/sample", needs_sources=False, rows={
        "key/numpy_default_rng": "numpy: np.random.default_rng(i) (baseline)",
        "key/numpy_seedsequence": "numpy: Generator(PCG64(SeedSequence(8 words)))",
        "key/sample_derive": 'keying="sample": derive the Generator (key_random)',
        "key/sample_item": 'keying="sample": wrapper[i], no-op transform',
        "key/stream_new": 'keying="stream": derive a new stream (1st sample/epoch)',
        "key/stream_item": 'keying="stream": wrapper[i], no-op transform',
    }),
    Section("wrapper", 2, "samples/s", rows={
        "wrapper/direct": "albumentations pipeline called directly (baseline)",
        "wrapper/stream": "RandomAugmentWrapper(ds, pipeline)",
    }),
    Section("mosaic", 3, "mosaics/s", rows={
        "mosaic/rankaug_2x2": "rankaug MosaicDataset 2x2: ds[i]",
        "mosaic/rankaug_3x3": "rankaug MosaicDataset 3x3: ds[i]",
        "mosaic/rankaug_affine": "rankaug MosaicDataset 2x2 + fused MosaicAffine",
        "mosaic/floor": "floor: 4 visible regions resized in, no targets",
        "mosaic/floor_targets": "floor with targets: + boxes, labels row by row",
        "mosaic/albumentations": "albumentations A.Mosaic 2x2 (cell = output, contain)",
        "mosaic/ultralytics_affine": "ultralytics Mosaic + RandomPerspective",
        "mosaic/ultralytics_mosaic": "ultralytics Mosaic alone (2x output canvas)",
        "mosaic/yolov5_style": "YOLOv5-style canvas-then-crop",
        "mosaic/albumentations_3x3": "albumentations A.Mosaic 3x3 (cell = output / 3)",
        "mosaic/ultralytics9_affine": "ultralytics Mosaic n=9 + RandomPerspective",
    }),
    Section("scaling", 4, "samples/s", rows={
        f"scaling/{transport}_{w}w": f"{what}, {_workers(w)}"
        for transport, what in TRANSPORTS.items() for w in WORKERS
    }),
    Section("epoch", 5, "µs/index", needs_sources=False, rows={
        "epoch/sampler_plain": "iterate DistributedSampler (baseline)",
        "epoch/sampler_carried": "iterate EpochSampler(DistributedSampler)",
        "epoch/wrapper_plain": "wrapper[i]: epoch from set_epoch (shared memory)",
        "epoch/wrapper_carried": "wrapper[EpochIndex(i, e)]: epoch from the index",
        **{f"epoch/loader_{kind}_{w}w": f"DataLoader, {_workers(w)}, {sampler}"
           for w in EPOCH_WORKERS
           for kind, sampler in (("plain", "DistributedSampler"),
                                 ("carried", "EpochSampler(DistributedSampler)"),
                                 ("batches", "batch_sampler=EpochSampler(BatchSampler)"))},
    }),
    Section("e2e", 6, "samples/s", needs_sources=False, rounds="e2e_repeats", rows={
        **{f"e2e/{name}_first_{w}w": f"{E2E_PIPELINES[name]}, {_workers(w)}"
           for w in E2E_WORKERS for name in E2E_FIRST},
        **{f"e2e/{name}_{w}w": f"{what}, {_workers(w)}"
           for w in E2E_WORKERS for name, what in E2E_PIPELINES.items()},
    }),
    Section("memory", 7, "MiB", needs_sources=False, rounds="memory_rounds", rows={
        "memory/ultralytics_ram": 'ultralytics cache="ram": PSS',
        "memory/rankaug_cached": "rankaug CachedDataset: PSS + cache in page cache",
        "memory/rankaug_cached_pss": "rankaug CachedDataset: PSS alone, cache mappings apart",
    }),
    Section("mix", 8, "samples/s", rows={
        "mix/rankaug_mixup": "rankaug MixUpDataset: ds[i]",
        "mix/ultralytics_mixup": "ultralytics MixUp (p=1)",
        "mix/rankaug_cutmix": "rankaug CutMixDataset: ds[i]",
        "mix/ultralytics_cutmix": "ultralytics CutMix (p=1)",
        "mix/rankaug_copypaste": "rankaug CopyPasteDataset, partner",
        "mix/rankaug_copypaste_polygons": "rankaug CopyPasteDataset, partner, polygons",
        "mix/copypaste_floor": "floor: the same output arrays, copied alone",
        "mix/copypaste_polygon_floor": "floor by polygons: the drawing alone",
        "mix/ultralytics_copypaste": "ultralytics CopyPaste, mode=mixup (p=1)",
        "mix/ultralytics_copypaste_masks": "ultralytics CopyPaste + polygons2masks",
        "mix/rankaug_copypaste_flip": 'rankaug CopyPasteDataset, source="flip"',
        "mix/rankaug_copypaste_flip_polygons": 'rankaug CopyPaste, "flip", polygons',
        "mix/ultralytics_copypaste_flip": "ultralytics CopyPaste, mode=flip (p=1)",
        "mix/ultralytics_copypaste_flip_masks": "ultralytics CopyPaste flip + polygons2masks",
    }),
    Section("color", 9, "images/s", rows={
        "color/rankaug_hsv": "rankaug HSVJitter(0.015, 0.7, 0.4), in place",
        "color/ultralytics_hsv": "ultralytics RandomHSV(0.015, 0.7, 0.4)",
    }),
    Section("stream", 10, "samples/s", rows={  # per CPU second (sections/stream.py)
        "stream/wds_map": "webdataset .map(albumentations), 2 workers (baseline)",
        "stream/wds_wrapper": "RandomAugmentWrapper(webdataset stream), 2 workers",
        "stream/mosaic_map": "MosaicDataset(list)[i], map-style (baseline)",
        "stream/mosaic_stream": "MosaicDataset(stream), window of 16",
    }),
)
# fmt: on
"""Every section, in the order they run and print."""

ROW_IDS: tuple[str, ...] = tuple(row for s in SECTIONS for row in s.rows)
"""Every row the JSON holds, measured or marked unavailable."""


def section(name: str) -> Section:
    """The section called ``name``."""
    for s in SECTIONS:
        if s.name == name:
            return s
    raise KeyError(f"no section {name!r}; the sections are {[s.name for s in SECTIONS]}")


MOSAIC_RATIOS: tuple[tuple[str, str], ...] = (
    ("mosaic/rankaug_2x2", "mosaic/floor"),
    ("mosaic/rankaug_2x2", "mosaic/floor_targets"),
    ("mosaic/floor_targets", "mosaic/floor"),
    ("mosaic/rankaug_2x2", "mosaic/albumentations"),
    ("mosaic/rankaug_2x2", "mosaic/ultralytics_affine"),
    ("mosaic/rankaug_2x2", "mosaic/ultralytics_mosaic"),
    ("mosaic/rankaug_2x2", "mosaic/yolov5_style"),
    ("mosaic/rankaug_3x3", "mosaic/albumentations_3x3"),
    ("mosaic/rankaug_3x3", "mosaic/ultralytics9_affine"),
    ("mosaic/rankaug_3x3", "mosaic/rankaug_2x2"),
    ("mosaic/rankaug_affine", "mosaic/rankaug_2x2"),
    ("mosaic/rankaug_affine", "mosaic/ultralytics_affine"),
)
"""The mosaic section's ratios, printed below its rows."""

MIX_GROUPS: tuple[tuple[str, ...], ...] = (
    ("mix/rankaug_mixup", "mix/ultralytics_mixup"),
    ("mix/rankaug_cutmix", "mix/ultralytics_cutmix"),
    ("mix/rankaug_copypaste", "mix/rankaug_copypaste_polygons", "mix/copypaste_floor",
     "mix/copypaste_polygon_floor", "mix/ultralytics_copypaste_masks", "mix/ultralytics_copypaste"),
    ("mix/rankaug_copypaste_flip", "mix/rankaug_copypaste_flip_polygons",
     "mix/ultralytics_copypaste_flip_masks", "mix/ultralytics_copypaste_flip"),
)  # fmt: skip
"""The mix section's contenders that take turns, ultralytics' last in each group."""

MIX_PAIRS: tuple[tuple[str, str], ...] = (
    ("mix/rankaug_mixup", "mix/ultralytics_mixup"),
    ("mix/rankaug_cutmix", "mix/ultralytics_cutmix"),
    ("mix/rankaug_copypaste", "mix/ultralytics_copypaste_masks"),
    ("mix/copypaste_floor", "mix/ultralytics_copypaste_masks"),
    ("mix/rankaug_copypaste_polygons", "mix/ultralytics_copypaste"),
    ("mix/copypaste_polygon_floor", "mix/ultralytics_copypaste"),
    ("mix/rankaug_copypaste_flip", "mix/ultralytics_copypaste_flip_masks"),
    ("mix/rankaug_copypaste_flip_polygons", "mix/ultralytics_copypaste_flip"),
)
"""The mix section's ratios, like for like (dense masks against ultralytics' polygons
made dense by its ``polygons2masks``; polygons against its polygons), printed below."""


@dataclass(frozen=True)
class Settings:
    """How much to measure: :data:`FULL` for a full run, :data:`QUICK` for ``--quick``."""

    repeats: int  # interleaved rounds per section
    key_calls: int  # calls per contender per round in the key section
    wrapper_samples: int  # samples per contender per round in the wrapper section
    mosaics: int  # mosaics per contender per round in the mosaic section
    batches: int  # timed batches per loader per round in the scaling section (even)
    warmup: int  # untimed operations per contender first (samples or mosaics)
    epoch_indices: int  # indices per contender per round, the epoch sampler and wrapper rows
    epoch_batches: int  # timed batches per loader per round in the epoch section
    e2e_images: int  # JPEGs in the end-to-end section's folder (--images overrides)
    e2e_scale: float  # the e2e and memory sections' output side, a fraction of --size
    e2e_repeats: int  # rounds of the end-to-end section's later epochs
    e2e_batches: int  # timed batches per loader per round of a later epoch (even)
    e2e_chunk: int  # batches per turn when the in-process first epochs are interleaved
    memory_rounds: int  # runs of the memory section's jobs (one figure per run)
    memory_batches: int  # batches each rank loads before its memory is read
    stream_samples: int  # samples in the stream section's shards (a pass per loader per round)


_AMOUNTS: dict[str, tuple[Any, Any]] = {  # field: (full run, --quick)
    "repeats": (9, 3),
    "key_calls": (4000, 1000),
    "wrapper_samples": (48, 16),
    "mosaics": (60, 20),
    "batches": (16, 4),
    "warmup": (12, 4),
    "epoch_indices": (8192, 4096),
    "epoch_batches": (200, 100),
    "e2e_images": (1200, 32),
    "e2e_scale": (1.0, 0.5),
    "e2e_repeats": (5, 1),
    "e2e_batches": (6, 2),
    "e2e_chunk": (4, 1),
    "memory_rounds": (1, 1),
    "memory_batches": (12, 2),
    "stream_samples": (384, 96),
}
FULL = Settings(**{name: full for name, (full, _) in _AMOUNTS.items()})
QUICK = Settings(**{name: quick for name, (_, quick) in _AMOUNTS.items()})
