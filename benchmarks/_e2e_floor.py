"""The end-to-end floor: the pixel work of the YOLO recipe alone, as a physical limit.

Per sample: four images read from memory (decoded once at build, as ``cache="ram"``
does: ``cv2.imread``, the long side to the output's by ``INTER_LINEAR`` with
ultralytics' sizes, then converted to RGB, the order every contender's batches are in),
the 2x2 mosaic and the random affine (scale ``1 +- 0.5``, translate ``0.1``)
composed into one axis-aligned map per tile, so that each tile's visible region is
resampled once, straight into the output (``rankaug.mosaic.paint.resize_into``,
``cv2.resize``'s map by the faster of ``cv2.resize`` and ``cv2.warpAffine`` for the
OpenCV version, as ``MosaicDataset`` paints); HSV with
ultralytics' gains between two in-place colour conversions, by the fastest primitives
known here (split into kept planes, the hue shifted with wrap-round in whole numbers,
one ``cv2.convertScaleAbs`` each for saturation and value, merged into a kept image:
``HSVJitter``'s, without its exactness probes), on the rows the tiles reach, the rows
of fill alone set to the jittered grey (as ``MosaicDataset(color=)`` does, see
``rankaug.mosaic.colour``); the horizontal flip folded into each tile's resampling
(``resize_into(..., mirrored=True)`` into the mirrored place, as ``MosaicDataset``
paints a flipped layout); the channels-first layout in the collate's one copy
(``cv2.split`` into the batch's planes, as ``collate_detection`` writes them). No keys (one
``random.Random``), no checks, no targets, no record. A batch is one ``(B, 3, S, S)``
uint8 tensor; inside a worker it goes into a shared-memory buffer of a pool the worker
keeps, reused once the main process has let go of the batch before: the pool
``rankaug.BatchCollator`` recycles rankaug's batches with (``rankaug.collate._pool``), so
that the floor moves its batches as the recipe does, with no collate work around them.

With ``cache_dir`` the floor reads its images as ``rankaug cached`` does: each image (decoded
the same way) is stored once, at construction, in a ``rankaug.CachedDataset`` there, and
every tile is then read back from that cache (``read_only_arrays=True``: each file kept
mapped, read-only, between reads, as ``rankaug cached`` reads its tiles) rather than from
a list in memory; the pixel work is the same.

This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset, get_worker_info

from benchmarks._same_work import FloorWork, decoded
from rankaug import CachedDataset
from rankaug.collate._pool import Pool, Tally, register
from rankaug.datasets._image_io import fit_size
from rankaug.mosaic.paint import resize_into

__all__ = [
    "CACHED_FLOOR_WORK",
    "FLOOR_TALLY",
    "FLOOR_WORK",
    "FloorDataset",
    "collate_floor",
    "floor_work",
]

FILL = 114
_DOWN = -0.5 + 2.0**-14  # round(k * x + _DOWN): k * x rounded down, as the tables
FLOOR_WORK = FloorWork(
    grid=(2, 2),
    channels="RGB",
    scale=0.5,
    translate=0.1,
    hsv=(0.015, 0.7, 0.4),
    flip=0.5,
    via="the e2e floor: one resampling per visible tile region (the flip folded in), HSV by "
    "planes (hue shift, two scales) on the rows tiles reach, layout in the collate's one copy",
)
"""What the floor does, for the same-work table (its side, tiles and decode: :func:`floor_work`)."""
CACHED_FLOOR_WORK = dataclasses.replace(
    FLOOR_WORK, via=FLOOR_WORK.via.replace("the e2e floor:", "the e2e floor, cached reads:")
)
"""What the floor with cached reads does (the same pixel work, read from the cache)."""


def floor_work(side: int, cached: bool = False) -> FloorWork:
    """What the floor at ``side`` does: its tiles fit in ``side``, decoded as ultralytics."""
    base = CACHED_FLOOR_WORK if cached else FLOOR_WORK
    return dataclasses.replace(base, tile=(side, side), decode=decoded(side))


def _load(path: Path, side: int) -> np.ndarray:
    """Decode as ultralytics' ``load_image`` (its sizes, ``INTER_LINEAR``), then to RGB."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"cannot read {path}")
    h, w = image.shape[:2]
    height, width = fit_size(h, w, side)
    if (height, width) != (h, w):
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)
    rgb: np.ndarray = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    return rgb


class _Decoded(Dataset[np.ndarray]):
    """``decoded[i]``: image ``i`` as the floor decodes it (what its cache stores)."""

    def __init__(self, paths: Sequence[Path], side: int) -> None:
        self.paths, self.side = list(paths), side

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> np.ndarray:
        return _load(self.paths[i], self.side)

    def __repr__(self) -> str:  # the setting CachedDataset fingerprints with the files
        return f"_Decoded(side={self.side}, RGB)"

    def source_files(self) -> list[Path]:  # what CachedDataset fingerprints
        return self.paths


class FloorDataset(Dataset[tuple[np.ndarray, bool]]):
    """``floor[i] -> (image, flipped)``: the YOLO recipe's pixel work on decoded images.

    Args:
        root: A YOLO folder (``root/images/*.jpg``).
        side: The output side; images are decoded with their long side ``side``.
        seed: Seed of the one ``random.Random``.
        cache_dir: Read the images from a ``CachedDataset`` in this directory (filled
            here, at construction) instead of from memory.
    """

    def __init__(self, root: Path, side: int, seed: int = 0, cache_dir: Path | None = None) -> None:
        paths = sorted((root / "images").glob("*.jpg"))
        self.images: Sequence[np.ndarray] | CachedDataset[np.ndarray]
        if cache_dir is None:
            self.images = [_load(p, side) for p in paths]
            self.work = floor_work(side)
        else:
            cached: CachedDataset[np.ndarray] = CachedDataset(
                _Decoded(paths, side), cache_dir, read_only_arrays=True
            )
            for i in range(len(cached)):
                cached[i]  # stored now: every later read comes from the cache
            self.images = cached
            self.work = floor_work(side, cached=True)
        self.side = side
        self.rng = random.Random(seed)
        self._kept = np.empty(0, np.uint8)  # the HSV image and 7 planes, kept (made at use)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int) -> tuple[np.ndarray, bool]:
        rng, s, work = self.rng, self.side, self.work
        n = len(self.images)
        tiles = [self.images[i % n], *(self.images[rng.randrange(n)] for _ in range(3))]
        xc, yc = int(rng.uniform(0.5 * s, 1.5 * s)), int(rng.uniform(0.5 * s, 1.5 * s))
        assert work.scale is not None
        k = rng.uniform(1 - work.scale, 1 + work.scale)
        tx = rng.uniform(0.5 - work.translate, 0.5 + work.translate) * s
        ty = rng.uniform(0.5 - work.translate, 0.5 + work.translate) * s
        flipped = rng.random() < work.flip  # folded into each tile's resampling
        out = np.full((s, s, 3), FILL, np.uint8)
        top, bottom = s, 0  # the rows the tiles are painted on
        for q, image in enumerate(tiles):
            h, w = image.shape[:2]
            # the tile's rectangle on the 2s canvas, and its origin there (ultralytics' layout)
            x0, x1 = (max(xc - w, 0), xc) if q in (0, 2) else (xc, min(xc + w, 2 * s))
            y0, y1 = (max(yc - h, 0), yc) if q in (0, 1) else (yc, min(yc + h, 2 * s))
            ox = xc - w if q in (0, 2) else xc
            oy = yc - h if q in (0, 1) else yc
            # canvas -> output: k * (c - s) + t, clipped to the output
            u0, u1 = max(math.floor(k * (x0 - s) + tx), 0), min(math.ceil(k * (x1 - s) + tx), s)
            v0, v1 = max(math.floor(k * (y0 - s) + ty), 0), min(math.ceil(k * (y1 - s) + ty), s)
            if u1 <= u0 or v1 <= v0:
                continue
            # output -> source pixels, rounded outwards
            a0 = max(int((u0 - tx) / k + s - ox), 0)
            a1 = min(math.ceil((u1 - tx) / k + s - ox), w)
            b0 = max(int((v0 - ty) / k + s - oy), 0)
            b1 = min(math.ceil((v1 - ty) / k + s - oy), h)
            if a1 <= a0 or b1 <= b0:
                continue
            target = out[v0:v1, s - u1 : s - u0] if flipped else out[v0:v1, u0:u1]
            resize_into(image[b0:b1, a0:a1], target, cv2.INTER_LINEAR, mirrored=flipped)
            top, bottom = min(top, v0), max(bottom, v1)
        g = [rng.uniform(-1, 1) * gain for gain in FLOOR_WORK.hsv or (0.0, 0.0, 0.0)]
        if bottom > top:
            self.colour(out[top:bottom], g)
        # the rows of fill alone: its grey jittered, HSVJitter.grey's value table entry
        grey = min(math.floor(FILL * (g[2] + 1)), 255)
        out[:top] = grey
        out[bottom:] = grey
        return out, flipped

    def colour(self, out: np.ndarray, gains: Sequence[float]) -> None:
        """Apply ultralytics' HSV with drawn ``gains`` (hue, saturation, value) to ``out``."""
        shift = math.floor(gains[0] * 180) % 180  # ultralytics' hue table, (x + n) % 180
        turn = 180 - shift
        size = out.size // 3
        if self._kept.size < 10 * size:  # kept, for a whole output: fresh pages cost more
            self._kept = np.empty(10 * self.side * self.side, np.uint8)
        hsv = self._kept[: out.size].reshape(out.shape)
        h0, s0, v0, hue, sat, val, where = (
            self._kept[out.size + p * size : out.size + (p + 1) * size].reshape(out.shape[:2])
            for p in range(7)
        )
        cv2.cvtColor(out, cv2.COLOR_RGB2HSV, dst=out)
        cv2.split(out, [h0, s0, v0])
        if 0 < shift <= 75:  # h + n where h < 180 - n, h - (180 - n) elsewhere
            cv2.add(h0, shift, dst=hue)
            cv2.compare(h0, turn, cv2.CMP_GE, dst=where)  # type: ignore[call-overload]
            cv2.subtract(hue, 180, dst=hue, mask=where)  # type: ignore[call-overload]
        elif shift:
            cv2.subtract(h0, turn, dst=hue)  # type: ignore[call-overload]
            cv2.compare(h0, turn, cv2.CMP_LT, dst=where)  # type: ignore[call-overload]
            cv2.add(h0, shift, dst=hue, mask=where)
        cv2.convertScaleAbs(s0, sat, gains[1] + 1, _DOWN)  # x * k rounded down
        cv2.convertScaleAbs(v0, val, gains[2] + 1, _DOWN)
        cv2.merge([hue if shift else h0, sat, val], dst=hsv)
        cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB, dst=out)


FLOOR_TALLY = Tally()
"""What the floor's workers sent this process, by kind of buffer (as ``BatchCollator.stats``)."""
_TOKEN = register(FLOOR_TALLY)  # made in the main process, before any worker starts
_BUFFERS = 8  # BatchCollator's default
_POOL: list[Pool] = []  # this worker's, made at its first batch (as BatchCollator's)


def collate_floor(batch: list[tuple[np.ndarray, bool]]) -> torch.Tensor:
    """One ``(B, 3, H, W)`` uint8 tensor, each image copied once (already flipped).

    In a worker, into a recycled shared-memory buffer (see the module docstring).
    """
    h, w = batch[0][0].shape[:2]
    shape = (len(batch), 3, h, w)
    if get_worker_info() is None:
        out = torch.empty(shape, dtype=torch.uint8)
    else:
        if not _POOL or not _POOL[0].owned():  # a forked worker makes its own
            _POOL[:] = [Pool(_BUFFERS, _TOKEN)]
        out = _POOL[0].take(shape, torch.uint8)
    view = out.numpy()
    for b, (image, _) in enumerate(batch):
        planes = list(view[b])
        written = cv2.split(image, planes)
        if written[0] is not planes[0]:  # OpenCV did not write in place: copy instead
            np.copyto(view[b], np.stack(written))
    return out
