"""Section 9, colour: ``rankaug.HSVJitter`` against ultralytics' ``RandomHSV``, same image.

One ``size x size`` image (a rankaug mosaic of the sources), the same gains for every
operation: numpy's global state is seeded before the checks and before the timing (and
put back after), ultralytics' ``RandomHSV`` draws its ``k``-th gains from it as it
always does, and rankaug is handed the same ``k``-th gains, drawn the same way from a
``RandomState`` of the same seed. One thread, one operation at a time in turns. Each operation
copies the image into the contender's own buffer, then jitters that buffer in place
(ultralytics writes into ``labels["img"]``; rankaug's ``apply(buffer, gains,
out=buffer)``), as both do to a mosaic's output. The image is taken as BGR by both
(``HSVJitter(channel_order="bgr")``), so their outputs are compared pixel for pixel
before the timing, and the largest difference printed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import rankaug
from benchmarks import peers
from benchmarks._bench import Bench
from benchmarks._catalogue import section
from benchmarks._pipelines import HSV_GAINS
from benchmarks._report import print_rows, ratio_text
from benchmarks._same_work import describe, print_work, tagged, with_output
from benchmarks._timing import alternate, counted
from rankaug.hsv import HSVDraw

__all__ = ["SECTION", "Contenders", "measure", "prepare"]

SECTION = section("color")
OURS, THEIRS = "color/rankaug_hsv", "color/ultralytics_hsv"
Make = Callable[[int], np.ndarray]
PER_MOSAIC = 5
"""Operations per round, per mosaic of the mosaic section's rounds (each is a few ms)."""


class _Gains:
    """Operation ``k``'s gains, as ``RandomHSV`` draws its ``k``-th after ``seed``."""

    def __init__(self, seed: int) -> None:
        self.state = np.random.RandomState(seed)
        self.draws: list[HSVDraw] = []

    def __getitem__(self, k: int) -> HSVDraw:
        while len(self.draws) <= k:
            r = self.state.uniform(-1, 1, 3) * list(HSV_GAINS)  # RandomHSV's own draw
            self.draws.append(HSVDraw(*r.tolist()))
        return self.draws[k]


@dataclass
class Contenders:
    """The image, each contender's ``make(k)`` and why any is unavailable."""

    image: np.ndarray
    makers: dict[str, Make]
    unavailable: dict[str, str]


def prepare(bench: Bench) -> Contenders:
    """The image, rankaug's contender, and ultralytics' (this imports it)."""
    mosaic: Any = rankaug.MosaicDataset(
        bench.sources.mosaic, seed=bench.seed, output_size=bench.size
    )
    image = np.ascontiguousarray(mosaic[0]["image"])
    jitter = rankaug.HSVJitter(*HSV_GAINS, channel_order="bgr")
    ours, gains = np.empty_like(image), _Gains(bench.seed)

    def rankaug_hsv(k: int) -> np.ndarray:
        np.copyto(ours, image)
        return jitter.apply(ours, gains[k], out=ours)

    makers: dict[str, Make] = {OURS: tagged(rankaug_hsv, jitter)}
    unavailable: dict[str, str] = {}
    try:
        with peers.ultralytics_settings_kept():
            from ultralytics.data.augment import RandomHSV
    except peers.PeerUnavailable as exc:
        unavailable[THEIRS] = f"not installed: {exc.reason}"
    else:
        random_hsv = RandomHSV(*HSV_GAINS)
        theirs = np.empty_like(image)

        def ultralytics_hsv(k: int) -> np.ndarray:
            np.copyto(theirs, image)  # its k-th call: its k-th draw from numpy's global state
            out: np.ndarray = random_hsv({"img": theirs})["img"]
            return out

        makers[THEIRS] = tagged(ultralytics_hsv, random_hsv)
    return Contenders(image, makers, unavailable)


def measure(bench: Bench, prepared: Contenders) -> None:
    """Both contenders on the same image and gains, in turns."""
    settings, report = bench.settings, bench.report
    for row_id, reason in prepared.unavailable.items():
        bench.missing(SECTION, [row_id], f"unavailable: {reason}")
    makers, image = prepared.makers, prepared.image
    shape = f"{image.shape} {image.dtype}"
    for row_id, make in makers.items():
        report.work[row_id] = with_output(describe(make), shape)
    outer = np.random.get_state()  # noqa: NPY002
    try:
        difference = None
        if THEIRS in makers:
            np.random.seed(bench.seed)  # noqa: NPY002
            worst = 0
            for k in range(8):
                a, b = makers[OURS](k).astype(np.int16), makers[THEIRS](k).astype(np.int16)
                worst = max(worst, int(np.abs(a - b).max()))
            difference = worst
            report.diagnostics["hsv_max_pixel_difference"] = worst
        np.random.seed(bench.seed)  # noqa: NPY002
        seconds = alternate(
            {row_id: counted(make) for row_id, make in makers.items()},
            per_round=PER_MOSAIC * settings.mosaics,
            repeats=settings.repeats,
            warmup=settings.warmup,
            progress=bench.progress,
            label="9 colour",
        )
    finally:
        np.random.set_state(outer)  # noqa: NPY002
    bench.rows(SECTION, seconds)
    bench.out(
        f"{SECTION.number}. "
        f"Colour: images/s, ultralytics' HSV jitter on one {image.shape[1]}x{image.shape[0]} "
        f"mosaic, the same gains per operation ({PER_MOSAIC * settings.mosaics} per round, "
        "in turns)"
    )
    works = {k.split("/")[1]: report.work[k] for k in SECTION.rows if k in report.work}
    print_work(bench.out, "the HSV jitters", works, aspects=("hsv", "output"))
    if difference is not None:
        bench.out(f"  largest pixel difference, rankaug vs ultralytics, 8 draws: {difference}")
    print_rows(bench.out, report, list(SECTION.rows))
    bench.out(f"  ratio: rankaug_hsv vs ultralytics_hsv {ratio_text(report.ratio(OURS, THEIRS))}")
    bench.out()
