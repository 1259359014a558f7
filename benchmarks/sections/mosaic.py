"""Section 3, mosaic: ``MosaicDataset(ds)[i]`` (2x2, 3x3, fused affine) against the peers.

albumentations ``A.Mosaic``, ultralytics ``Mosaic`` (+ its affine crop, and alone), a
YOLOv5-style mosaic and the floor (the pixel work alone, and with the boxes and labels
mapped), all on the same in-memory sources and output size,
one mosaic at a time in turns; then MosaicDataset 2x2 and the floor raced again alone
(a diagnostic beside the group's figure, which the goal reads: see
:func:`paired_floor`); then the floor's and MosaicDataset's time split into the
resampling (``cv2.resize`` and ``cv2.warpAffine``, whichever paints) and the rest.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import rankaug
from benchmarks import peers
from benchmarks._bench import Bench, Sample
from benchmarks._catalogue import MOSAIC_RATIOS, section
from benchmarks._cv2_split import cv2_split
from benchmarks._goal_table import GOALS
from benchmarks._report import print_rows, ratio_text
from benchmarks._same_work import FloorWork, describe, print_work, tagged, with_output
from benchmarks._timing import alternate, counted
from rankaug import MosaicGrid

__all__ = [
    "SECTION",
    "Contenders",
    "check_mosaic",
    "cycling",
    "fused_affine",
    "measure",
    "mosaic_contenders",
    "paired_floor",
    "prepare",
]

SECTION = section("mosaic")
Make = Callable[[int], Any]


def cycling(dataset: Any, n: int) -> Make:
    """``make(i) = dataset[i % n]``: one output per call, the indices going round."""

    def make(i: int) -> Any:
        return dataset[i % n]

    return tagged(make, dataset)


def fused_affine() -> Any:
    """YOLO's default affine as ``rankaug.MosaicAffine``.

    ``degrees=0, translate=0.1, scale=0.5, shear=0``: ultralytics' defaults, in its meaning
    (scale drawn in ``1 +- 0.5``), the same as the ultralytics peer's ``RandomPerspective``.
    """
    return rankaug.MosaicAffine(degrees=0.0, translate=0.1, scale=0.5, shear=0.0)


def mosaic_contenders(
    sources: Sequence[Sample],
    size: int,
    seed: int,
) -> tuple[dict[str, Make], dict[str, str]]:
    """Build every mosaic contender on the same sources and output size.

    Each contender is ``make(i)``: one ``size x size`` mosaic whose main tile is source
    ``i % len(sources)`` and whose partners the contender draws itself (ultralytics'
    mosaic-only row returns its ``2 * size`` canvas).

    Args:
        sources: The in-memory source samples.
        size: Output side.
        seed: Seed of every contender's draws.

    Returns:
        (row id -> ``make``, row id -> why that contender is unavailable).
    """
    makers: dict[str, Make] = {}
    unavailable: dict[str, str] = {}
    n = len(sources)
    hw = (size, size)
    for row_id, grid in (("mosaic/rankaug_2x2", (2, 2)), ("mosaic/rankaug_3x3", (3, 3))):
        dataset: Any = rankaug.MosaicDataset(
            sources, seed=seed, output_size=size, layout=MosaicGrid(grid=grid)
        )
        makers[row_id] = cycling(dataset, n)
    dataset = rankaug.MosaicDataset(sources, seed=seed, output_size=size, affine=fused_affine())
    makers["mosaic/rankaug_affine"] = cycling(dataset, n)
    builders: dict[str, Callable[[], peers.Step]] = {
        "mosaic/floor": lambda: tagged(
            peers.floor_mosaic(sources, hw, rng=random.Random(seed)),
            FloorWork(
                grid=(2, 2),
                tile=hw,
                via="the mosaic floor: centre in (0.25, 0.75), as MosaicGrid's",
            ),
        ),
        "mosaic/floor_targets": lambda: tagged(
            peers.floor_mosaic(sources, hw, rng=random.Random(seed), targets=True),
            FloorWork(
                grid=(2, 2), tile=hw, via="the mosaic floor, with its boxes and labels mapped"
            ),
        ),
        # tiles fitted in the output, aspect kept, as rankaug's and ultralytics' tiles
        "mosaic/albumentations": lambda: peers.albumentations_mosaic(
            sources, hw, seed=seed, fit_mode="contain"
        ),
        "mosaic/ultralytics_affine": lambda: peers.ultralytics_mosaic(sources, size, seed=seed),
        "mosaic/ultralytics_mosaic": lambda: peers.ultralytics_mosaic(
            sources, size, affine=False, seed=seed
        ),
        "mosaic/yolov5_style": lambda: tagged(
            peers.yolov5_style_mosaic(sources, size, rng=random.Random(seed)),
            FloorWork(grid=(2, 2), tile=hw, via="YOLOv5-style: a 2x canvas, then its centre"),
        ),
        # cells of a third of the output (rounded up): all nine show, as in rankaug's 3x3;
        # a cell of the output's size would show four at most
        "mosaic/albumentations_3x3": lambda: peers.albumentations_mosaic(
            sources, hw, seed=seed, grid=(3, 3), cell_hw=(-(-size // 3), -(-size // 3))
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
    return {row_id: makers[row_id] for row_id in SECTION.rows if row_id in makers}, unavailable


def check_mosaic(row_id: str, output: Any, size: int) -> str:
    """Return a problem with a contender's output (shape, boxes), or ``""``."""
    image = output["image"] if isinstance(output, dict) else output[0]
    want = 2 * size if row_id == "mosaic/ultralytics_mosaic" else size
    if tuple(np.shape(image)[:2]) != (want, want):
        return f"output is {np.shape(image)}, expected {want}x{want}"
    if row_id != "mosaic/floor" and isinstance(output, dict) and "bboxes" not in output:
        return "output has no boxes"
    return ""


@dataclass
class Contenders:
    """The mosaic contenders, built before the timing.

    Importing ultralytics changes cv2's thread setting, which the run then pins again.
    """

    makers: dict[str, Make]
    unavailable: dict[str, str]


def prepare(bench: Bench) -> Contenders:
    """Build every contender (this imports the peers)."""
    makers, unavailable = mosaic_contenders(bench.sources.mosaic, bench.size, bench.seed)
    return Contenders(makers, unavailable)


def measure(bench: Bench, prepared: Contenders) -> None:
    """Every mosaic contender on the same sources, interleaved."""
    settings, report = bench.settings, bench.report
    for row_id, reason in prepared.unavailable.items():
        bench.missing(SECTION, [row_id], f"unavailable: {reason}")
    makers = dict(prepared.makers)
    for row_id, make in list(makers.items()):
        try:
            output = make(0)
            problem = check_mosaic(row_id, output, bench.size)
        except Exception as exc:  # a broken contender must not stop the scoreboard
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            bench.missing(SECTION, [row_id], f"error: {problem}")
            del makers[row_id]
            continue
        if hasattr(make, "subject"):
            image = np.asarray(output["image"] if isinstance(output, dict) else output[0])
            report.work[row_id] = with_output(describe(make), f"{image.shape} {image.dtype}")
    seconds = alternate(
        {row_id: counted(make, start=1) for row_id, make in makers.items()},
        per_round=settings.mosaics,
        repeats=settings.repeats,
        warmup=settings.warmup,
        progress=bench.progress,
        label="3 mosaic",
    )
    bench.rows(SECTION, seconds)
    bench.out(
        f"{SECTION.number}. "
        f"Mosaic: mosaics/s at {bench.size}x{bench.size} from the same in-memory sources, "
        f"with boxes except the floor without targets ({settings.mosaics} mosaics per round)"
    )
    works = {k.split("/")[1]: report.work[k] for k in SECTION.rows if k in report.work}
    print_work(bench.out, "the mosaics", works, aspects=("mosaic", "affine", "flip", "output"))
    print_rows(bench.out, report, list(SECTION.rows))
    bench.out("  ratios (medians; per-round range in brackets):")
    for numerator, denominator in MOSAIC_RATIOS:
        entry = report.ratio(numerator, denominator)
        bench.out(
            f"    {numerator.split('/')[1]:>12s} vs {denominator.split('/')[1]:<22s} "
            f"{ratio_text(entry)}"
        )
    paired = paired_floor(bench, makers)
    if paired is not None:
        group = report.ratio(*PAIRED[::-1])
        bench.out(
            f"  raced alone, one mosaic each in turn (both orders and listings): rankaug_2x2 "
            f"vs floor {paired['ratio']:.2f}x ({paired['extra_us']:+.0f} µs per mosaic; "
            f"the group race's {ratio_text(group)})"
        )
    _print_resample_split(bench, makers)
    bench.out()


PAIRED: tuple[str, str] = ("mosaic/floor", "mosaic/rankaug_2x2")
"""The floor goal's pair, raced again alone by :func:`paired_floor`."""


def paired_floor(bench: Bench, makers: dict[str, Make]) -> dict[str, float] | None:
    """MosaicDataset 2x2 against the floor, the two alone, one mosaic each in turn.

    Both orders and both listings, as the wrapper and copy-paste pairs race
    (:func:`~benchmarks._timing.race_both_listings`), the ratio of the total times
    (:func:`~benchmarks._timing.paired_throughput`). In the group race the other
    contenders' work between two of rankaug's mosaics (ultralytics' 1280x1280 canvases
    among them) leaves rankaug's Python per mosaic cold, which costs it far more than
    the floor, whose Python is a few lines: alone with the floor it runs as it does in
    a loop of its own. A diagnostic (``mosaic_floor_paired``), printed beside the
    group's figure; the ``mosaic_floor`` goal reads the group race.
    """
    return bench.race_pair(
        makers, PAIRED, "3 mosaic: 2x2 and the floor, paired", "mosaic_floor_paired"
    )


def _print_resample_split(bench: Bench, makers: dict[str, Make]) -> None:
    """Split the floor's and MosaicDataset's time into the resampling and the rest."""
    report = bench.report
    rows = ("mosaic/floor", "mosaic/floor_targets", "mosaic/rankaug_2x2", "mosaic/rankaug_3x3")
    ids = [k for k in rows if k in makers]
    if not ids:
        return
    count = 3 * bench.settings.mosaics
    bench.progress.set_label("3 mosaic: resampling split")
    bench.out(
        f"  where the time goes, ms per mosaic ({count} each, the resampling, cv2.resize and "
        "cv2.warpAffine, timed apart):"
    )
    splits = report.diagnostics.setdefault("resample_split", {})
    for row_id in ids:
        split = cv2_split(makers[row_id], count)
        total, pixels = split["total"], split["resize"] + split["warp"]
        splits[row_id] = {"total_ms": total, "resample_ms": pixels}
        bench.out(
            f"    {row_id.split('/')[1]:13s} {total:.3f} = resampling {pixels:.3f} + the "
            f"rest {total - pixels:.3f} ({(total - pixels) / total:.0%})"
        )
    if "mosaic/floor" in splits and "mosaic/rankaug_2x2" in splits:
        floor, ours = splits["mosaic/floor"], splits["mosaic/rankaug_2x2"]
        target = next(g.target for g in GOALS if g.id == "mosaic_floor")
        budget = floor["total_ms"] / target - ours["resample_ms"]
        report.diagnostics["rest_budget_ms_for_the_floor_goal"] = budget
        bench.out(
            f"    {target:g}x the floor leaves MosaicDataset 2x2 {budget:.3f} ms per mosaic "
            f"beyond the resampling; it spends {ours['total_ms'] - ours['resample_ms']:.3f}"
        )
