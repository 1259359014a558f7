"""The peers written here: a YOLOv5-style canvas-then-crop mosaic and the floor."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import cv2
import numpy as np

from benchmarks.peers._common import FILL, Sample, Step, check_samples
from rankaug.mosaic.paint import resize_into
from rankaug.mosaic.targets import TOLERANCE

__all__ = ["floor_mosaic", "yolov5_style_mosaic"]


def yolov5_style_mosaic(
    samples: Sequence[Sample],
    s: int = 640,
    *,
    rng: random.Random | None = None,
) -> Step:
    """A minimal YOLOv5-style mosaic: resize, paste on a 2s canvas, then the central crop.

    Per call: partners ``rng.choices`` (3, with replacement) and the four shuffled; each
    tile resized long side to ``s`` (INTER_LINEAR, ``ceil`` sizes, as YOLOv5's
    ``load_image``); a ``2s x 2s`` canvas of 114; centre ``int(U(s/2, 3s/2))`` per axis;
    tiles pasted around it; boxes scaled, offset and clipped to the canvas; then the central
    ``s x s`` crop (copied), boxes shifted and clipped into it and filtered like YOLOv5's
    ``box_candidates`` (w and h > 2 px, area kept > 10 %, aspect < 100). No affine.

    Args:
        samples: Source samples.
        s: Output side.
        rng: Source of every draw; ``random.Random(0)`` when ``None``.

    Returns:
        ``step(i)``: ``{"image", "bboxes", "labels"}`` of one ``s x s`` mosaic.
    """
    n = check_samples(samples)
    rng = rng if rng is not None else random.Random(0)
    population = range(n)
    lo, hi = s // 2, 2 * s - s // 2

    def load(j: int) -> tuple[np.ndarray, float]:
        img = samples[j]["image"]
        h0, w0 = img.shape[:2]
        r = s / max(h0, w0)
        if r != 1:
            size = (math.ceil(w0 * r), math.ceil(h0 * r))
            img = cv2.resize(img, size, interpolation=cv2.INTER_LINEAR)
        return img, r

    def step(i: int) -> dict[str, np.ndarray]:
        indices = [i % n, *rng.choices(population, k=3)]
        rng.shuffle(indices)
        yc, xc = int(rng.uniform(lo, hi)), int(rng.uniform(lo, hi))
        canvas = np.full((2 * s, 2 * s, 3), FILL, dtype=np.uint8)
        boxes: list[np.ndarray] = []
        labels: list[np.ndarray] = []
        for k, j in enumerate(indices):
            img, r = load(j)
            h, w = img.shape[:2]
            if k == 0:  # top left
                x1a, y1a, x2a, y2a = max(xc - w, 0), max(yc - h, 0), xc, yc
                x1b, y1b, x2b, y2b = w - (x2a - x1a), h - (y2a - y1a), w, h
            elif k == 1:  # top right
                x1a, y1a, x2a, y2a = xc, max(yc - h, 0), min(xc + w, 2 * s), yc
                x1b, y1b, x2b, y2b = 0, h - (y2a - y1a), min(w, x2a - x1a), h
            elif k == 2:  # bottom left
                x1a, y1a, x2a, y2a = max(xc - w, 0), yc, xc, min(2 * s, yc + h)
                x1b, y1b, x2b, y2b = w - (x2a - x1a), 0, w, min(y2a - y1a, h)
            else:  # bottom right
                x1a, y1a, x2a, y2a = xc, yc, min(xc + w, 2 * s), min(2 * s, yc + h)
                x1b, y1b, x2b, y2b = 0, 0, min(w, x2a - x1a), min(y2a - y1a, h)
            canvas[y1a:y2a, x1a:x2a] = img[y1b:y2b, x1b:x2b]
            b = samples[j]["bboxes"] * np.float32(r)
            b[:, 0::2] += x1a - x1b
            b[:, 1::2] += y1a - y1b
            boxes.append(b)
            labels.append(samples[j]["labels"])
        b = np.clip(np.concatenate(boxes), 0, 2 * s)
        cls = np.concatenate(labels).astype(np.int64, copy=False)

        off = s // 2
        image = canvas[off : off + s, off : off + s].copy()
        crop = np.clip(b - np.float32(off), 0, s)
        w0, h0 = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        w1, h1 = crop[:, 2] - crop[:, 0], crop[:, 3] - crop[:, 1]
        aspect = np.maximum(w1 / (h1 + 1e-16), h1 / (w1 + 1e-16))
        keep = (w1 > 2) & (h1 > 2) & (w1 * h1 / (w0 * h0 + 1e-16) > 0.1) & (aspect < 100)
        return {
            "image": image,
            "bboxes": crop[keep].astype(np.float32, copy=False),
            "labels": cls[keep],
        }

    return step


# --------------------------------------------------------------------------------------------
# The floor
# --------------------------------------------------------------------------------------------


def floor_mosaic(
    samples: Sequence[Sample],
    out_hw: tuple[int, int] = (640, 640),
    *,
    rng: random.Random | None = None,
    targets: bool = False,
) -> Step:
    """The floor of any mosaic's cost: the four visible regions resized into the output.

    Per call: three partners and a centre ``(cx, cy)`` are drawn, each uniform over the
    middle half of its axis (``MosaicGrid``'s default ``center_range=(0.25, 0.75)``, and
    YOLO's ``U(s/2, 3s/2)`` on its ``2s`` canvas: so the floor resizes as much of its tiles
    as they do);
    each tile is scaled (as in the YOLO peers) to fit an ``out_hw`` box, the part of it that
    falls in its quadrant is worked out, mapped back to source pixels, and that source
    region alone is resized (INTER_LINEAR) straight into its place in the one output array,
    by ``rankaug.mosaic.paint.resize_into`` (``cv2.resize``'s map by the faster of
    ``cv2.resize`` and ``cv2.warpAffine`` for the OpenCV version, as ``MosaicDataset``
    paints). A quadrant is filled with 114 only where its tile does
    not cover it. No targets; nothing that depends on the draw is precomputed. The source
    crop is rounded outwards to whole pixels, so the result may differ from
    resize-then-crop by under a pixel of scale: it is a cost floor, not a reference image.

    ``targets=True`` adds the least a mosaic with boxes does: each tile's pixel
    ``bboxes`` and ``labels`` read as they are (no checks), mapped by the tile's scale and
    offset, clipped to its visible part and kept where wider and higher than a thousandth
    of a pixel, row by row in Python (the fastest way for a few boxes), gathered as a
    float32 ``(N, 4)`` array and an int64 array. Still no checks, no record, no sample
    shape of the dataset's: what any mosaic that maps targets pays over the floor.

    Args:
        samples: Source samples.
        out_hw: Output (height, width).
        rng: Source of every draw; ``random.Random(0)`` when ``None``.
        targets: Also map the boxes and labels.

    Returns:
        ``step(i)``: ``{"image"}`` of one ``out_hw`` mosaic, with ``"bboxes"`` and
        ``"labels"`` for ``targets=True``.
    """
    n = check_samples(samples)
    rng = rng if rng is not None else random.Random(0)
    out_h, out_w = (int(v) for v in out_hw)
    population = range(n)

    def step(i: int) -> dict[str, np.ndarray]:
        indices = [i % n, *rng.choices(population, k=3)]
        cx = int(rng.uniform(0.25 * out_w, 0.75 * out_w))
        cy = int(rng.uniform(0.25 * out_h, 0.75 * out_h))
        out = np.empty((out_h, out_w, 3), dtype=np.uint8)
        kept: list[float] = []
        labels: list[int] = []
        for k, j in enumerate(indices):
            sample = samples[j]
            src = sample["image"]
            h0, w0 = src.shape[:2]
            r = min(out_h / h0, out_w / w0)
            tw, th = math.ceil(w0 * r), math.ceil(h0 * r)
            # quadrant [qx0, qx1) x [qy0, qy1), and the tile's visible part in it [x0, x1) x ...
            if k == 0:  # top left: tile's bottom-right corner at the centre
                qx0, qx1, qy0, qy1 = 0, cx, 0, cy
                x0, y0, x1, y1 = max(cx - tw, 0), max(cy - th, 0), cx, cy
                tx0, ty0 = cx - tw, cy - th
            elif k == 1:  # top right: bottom-left corner at the centre
                qx0, qx1, qy0, qy1 = cx, out_w, 0, cy
                x0, y0, x1, y1 = cx, max(cy - th, 0), min(cx + tw, out_w), cy
                tx0, ty0 = cx, cy - th
            elif k == 2:  # bottom left: top-right corner at the centre
                qx0, qx1, qy0, qy1 = 0, cx, cy, out_h
                x0, y0, x1, y1 = max(cx - tw, 0), cy, cx, min(cy + th, out_h)
                tx0, ty0 = cx - tw, cy
            else:  # bottom right: top-left corner at the centre
                qx0, qx1, qy0, qy1 = cx, out_w, cy, out_h
                x0, y0, x1, y1 = cx, cy, min(cx + tw, out_w), min(cy + th, out_h)
                tx0, ty0 = cx, cy
            if qx1 <= qx0 or qy1 <= qy0:
                continue  # empty quadrant: the centre sits on the border
            if (x0, y0, x1, y1) != (qx0, qy0, qx1, qy1):
                out[qy0:qy1, qx0:qx1] = FILL
            if x1 <= x0 or y1 <= y0:
                continue
            # visible part in tile pixels -> source pixels, rounded outwards
            sx0 = max(int((x0 - tx0) / r), 0)
            sy0 = max(int((y0 - ty0) / r), 0)
            sx1 = min(math.ceil((x1 - tx0) / r), w0)
            sy1 = min(math.ceil((y1 - ty0) / r), h0)
            resize_into(src[sy0:sy1, sx0:sx1], out[y0:y1, x0:x1], cv2.INTER_LINEAR)
            if targets:
                rows = zip(sample["bboxes"].tolist(), sample["labels"].tolist(), strict=True)
                for (a, b, c, d), label in rows:
                    a, b, c, d = a * r + tx0, b * r + ty0, c * r + tx0, d * r + ty0
                    a = x1 if a > x1 else x0 if a < x0 else a
                    b = y1 if b > y1 else y0 if b < y0 else b
                    c = x1 if c > x1 else x0 if c < x0 else c
                    d = y1 if d > y1 else y0 if d < y0 else d
                    if c - a > TOLERANCE and d - b > TOLERANCE:  # MosaicDataset's rule
                        kept += a, b, c, d
                        labels.append(label)
        if not targets:
            return {"image": out}
        return {
            "image": out,
            "bboxes": np.array(kept, dtype=np.float32).reshape(-1, 4),
            "labels": np.array(labels, dtype=np.int64),
        }

    return step
