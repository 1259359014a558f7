"""What every section of the scoreboard shares: the run's context and its source images.

:class:`Bench` carries the settings, the sources, the report, the progress bar and the
console; :func:`load_sources` decodes the source images once, before any timing;
:func:`describe_run` records versions, threads and the machine. Import it after
``benchmarks._threads``. This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch

import rankaug
from benchmarks._catalogue import Section, Settings
from benchmarks._report import Console, Report, Row
from benchmarks._threads import THREAD_VARIABLES
from benchmarks._timing import Progress, counted, paired_throughput, race_both_listings
from benchmarks.photos import load_photos, photos_available
from rankaug.datasets import SyntheticDetection

__all__ = [
    "Bench",
    "Sample",
    "Sources",
    "describe_run",
    "identity",
    "load_sources",
    "pin_threads",
]

Sample = dict[str, np.ndarray]


def identity(sample: Any, rng: np.random.Generator) -> Any:
    """A no-op rng transform: what remains is the wrapper's own per-sample cost."""
    return sample


@dataclass
class Sources:
    """The in-memory source samples every contender uses.

    ``kind`` is ``"photos"`` or ``"synthetic"``, ``description`` what they are (for the
    report); ``mosaic`` the mosaics' sources in their own sizes, ``square`` their
    ``side x side`` versions for the wrapper section.
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
    """Decode ``n`` sources once, before any timing (``side``: the square ones' side).

    ``kind`` is ``"photos"`` (skimage.data; fails without scikit-image), ``"synthetic"``
    (``rankaug.datasets.SyntheticDetection`` with varied sizes) or ``"auto"`` (photos when
    scikit-image is installed).
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


@dataclass
class Bench:
    """What every section needs: the settings, the sources, the report and the output.

    ``size``, ``seed``, ``batch_size``, ``data`` and ``data_dir`` are the command line's
    (``--data-dir`` ``None``: under the temporary directory); the progress bar counts one
    unit per row per round; ``loaded`` holds the sources once :meth:`load` has run;
    ``shared``, what sections hand on to later ones (the JPEG folder, a filled cache).
    """

    settings: Settings
    size: int
    seed: int
    batch_size: int
    report: Report
    progress: Progress
    out: Console
    loaded: Sources | None = None
    data: str = "auto"
    data_dir: Path | None = None
    shared: dict[str, Any] = field(default_factory=dict)

    @property
    def sources(self) -> Sources:
        """The in-memory sources (loaded by the run before any section that needs them)."""
        if self.loaded is None:
            raise RuntimeError("the sources were not loaded: Bench.load() runs before timing")
        return self.loaded

    def load(self, kind: str, n: int) -> Sources:
        """Decode the sources (not timed) and record what they are."""
        self.loaded = load_sources(kind, n, self.size)
        self.report.meta["data"] = {
            "kind": self.loaded.kind,
            "description": self.loaded.description,
        }
        return self.loaded

    def rows(self, section: Section, seconds: Mapping[str, Sequence[float]]) -> None:
        """Add measured rows of ``section``; ``seconds[id]``: seconds per operation per round."""
        for row_id, per_op in seconds.items():
            self._add(section, row_id, values=section.values(per_op))

    def missing(self, section: Section, ids: Iterable[str], why: str) -> None:
        """Add rows that could not be measured (``why`` starts with the status)."""
        status, _, reason = why.partition(": ")
        for row_id in ids:
            self._add(section, row_id, status=status, reason=reason)
            self.progress.advance(getattr(self.settings, section.rounds))

    def race_pair(
        self,
        makers: Mapping[str, Callable[[int], Any]],
        pair: tuple[str, str],
        label: str,
        diagnostic: str,
    ) -> dict[str, float] | None:
        """Race ``pair`` (baseline, contender) again alone, one operation each in turn.

        Both orders and both listings (:func:`~benchmarks._timing.race_both_listings`),
        the ratio of the total times (:func:`~benchmarks._timing.paired_throughput`),
        stored as the ``diagnostic``; ``None`` when either contender is missing.
        """
        if not all(row_id in makers for row_id in pair):
            return None
        settings = self.settings
        _, record, firsts = race_both_listings(
            lambda: {row_id: counted(makers[row_id], start=1) for row_id in pair},
            per_round=settings.mosaics,
            repeats=settings.repeats,
            warmup=settings.warmup,
            progress=None,  # (not in the progress bar's total: the group's rows are)
            label=label,
        )
        baseline, contender = pair
        paired = paired_throughput(
            record[baseline], record[contender], [first == baseline for first in firsts]
        )
        self.report.diagnostics[diagnostic] = paired
        return paired

    def _add(self, section: Section, row_id: str, **fields: Any) -> None:
        name = section.rows[row_id]
        self.report.add(Row(row_id, name, section.unit, section.better, **fields))


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def pin_threads() -> None:
    """One thread for cv2 and torch (called again after the peers are imported)."""
    cv2.setNumThreads(1)
    torch.set_num_threads(1)


def describe_run(
    args: argparse.Namespace, settings: Settings, only: Sequence[str]
) -> dict[str, Any]:
    """Versions, thread settings, the machine and the settings, for the report."""
    versions: dict[str, str | None] = {
        "python": platform.python_version(),
        "rankaug": rankaug.__version__,
        "numpy": np.__version__,
        "torch": torch.__version__,
        "opencv": cv2.__version__,
    }
    for dist in ("albumentations", "ultralytics", "scikit-image"):
        versions[dist] = _version(dist)
    if versions["albumentations"] is None:  # AlbumentationsX: the same import name
        other = _version("albumentationsx")
        versions["albumentations"] = None if other is None else f"{other} (AlbumentationsX)"
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
            "only": list(only),
        },
    }
