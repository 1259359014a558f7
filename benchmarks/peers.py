"""The peers' mosaics, behind one interface, for side-by-side timing against rankaug.

Each factory takes the same list of source samples (``{"image": HxWx3 uint8, "bboxes":
float32 (N, 4) pascal_voc pixels, "labels": int64 (N,)}``, e.g. from
``benchmarks.photos.load_photos``) and returns ``step(i) -> dict``, which makes one mosaic
whose main tile is ``samples[i % len(samples)]`` and whose three partners the peer draws
itself. The returned dict has ``image`` and, except for the floor, ``bboxes`` (float32
(N, 4) xyxy pixels) and ``labels`` (int64 (N,)).

Peers:

* ``albumentations_mosaic``: albumentations' own ``A.Mosaic`` in an ``A.Compose``.
* ``ultralytics_mosaic``: ultralytics' own ``Mosaic`` (+ its ``RandomPerspective`` crop).
* ``yolov5_style_mosaic``: a minimal YOLOv5-style canvas-then-crop mosaic written here.
* ``floor_mosaic``: the lower bound: four visible regions resized straight into the output.

albumentations and ultralytics are optional: their factories raise ``PeerUnavailable`` when
the package cannot be imported (``benchmarks/requirements.txt`` installs them). Every step
is deterministic given ``seed`` and the sequence of calls.

Importing this module sets, unless already set, the environment variables that keep the
peers off the network and out of the home directory (``QUIET_ENV``). albumentations reads
``NO_ALBUMENTATIONS_UPDATE`` when it is first imported, so import this module (or set the
variable) before anything imports albumentations, rankaug included.

This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import importlib.metadata
import math
import os
import random
import tempfile
from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import cv2
import numpy as np

__all__ = [
    "PEERS",
    "QUIET_ENV",
    "PeerUnavailable",
    "Sample",
    "Step",
    "albumentations_mosaic",
    "floor_mosaic",
    "make_peer",
    "peer_versions",
    "ultralytics_mosaic",
    "yolov5_style_mosaic",
]

Sample = dict[str, np.ndarray]
"""``{"image": HxWx3 uint8, "bboxes": float32 (N, 4) xyxy pixels, "labels": int64 (N,)}``."""

Step = Callable[[int], dict[str, np.ndarray]]
"""``step(i)`` makes one mosaic whose main tile is sample ``i % len(samples)``."""

FILL = 114
"""YOLO's grey for the canvas and for everything no tile covers."""

QUIET_ENV: dict[str, str] = {
    # albumentations: no version check against the package index at import.
    "NO_ALBUMENTATIONS_UPDATE": "1",
    # ultralytics: is_online() answers False at once (no DNS look-ups of one.one.one.one and
    # dns.google at import), so no Sentry and no hub traffic either.
    "YOLO_OFFLINE": "1",
    # ultralytics writes settings.json at import; keep it out of ~/.config/Ultralytics.
    "YOLO_CONFIG_DIR": os.path.join(tempfile.gettempdir(), f"rankaug-bench-yolo-{os.getuid()}"),
    # ultralytics: no "Creating new Ultralytics Settings" banner, no pip auto-installs.
    "YOLO_VERBOSE": "False",
    "YOLO_AUTOINSTALL": "False",
}
"""Environment defaults set (``os.environ.setdefault``) when this module is imported."""

for _key, _value in QUIET_ENV.items():
    os.environ.setdefault(_key, _value)


class PeerUnavailable(RuntimeError):
    """A peer's package is missing or cannot be imported here.

    Attributes:
        name: The peer (``"albumentations"``, ``"ultralytics"``).
        reason: Why it is unavailable, with the install hint.
    """

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"peer {name!r} unavailable: {reason}")
        self.name = name
        self.reason = reason


def peer_versions() -> dict[str, str | None]:
    """Return the installed versions of the peers' packages, ``None`` where missing.

    Returns:
        ``{"albumentations": "2.0.8", "ultralytics": "8.4.190", ...}``; reads package
        metadata only, imports nothing.
    """
    out: dict[str, str | None] = {}
    for dist in ("albumentations", "ultralytics", "opencv-python-headless", "numpy", "torch"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _check_samples(samples: Sequence[Sample]) -> int:
    """Validate the source samples and return how many there are."""
    if len(samples) == 0:
        raise ValueError("need at least one source sample")
    for k, s in enumerate(samples):
        img = s["image"]
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise ValueError(f"sample {k}: image must be HxWx3 uint8, got {img.dtype} {img.shape}")
    return len(samples)


def _square(out_hw: tuple[int, int], peer: str) -> int:
    """Return the side of a square output, or raise for the YOLO peers that need one."""
    h, w = out_hw
    if h != w:
        raise ValueError(f"{peer} makes square mosaics only, got out_hw={out_hw}")
    return int(h)


# --------------------------------------------------------------------------------------------
# albumentations
# --------------------------------------------------------------------------------------------


def albumentations_mosaic(
    samples: Sequence[Sample],
    out_hw: tuple[int, int] = (640, 640),
    *,
    cell_hw: tuple[int, int] | None = None,
    seed: int = 0,
    grid: tuple[int, int] = (2, 2),
) -> Step:
    """Run albumentations' ``A.Mosaic`` (2x2 grid by default) inside an ``A.Compose`` with boxes.

    Three partners per call (``rows * cols - 1`` with another ``grid``) are drawn from a
    local ``random.Random(seed)`` (with replacement, like YOLOv5) and handed over through
    ``mosaic_metadata``; with exactly that many items ``A.Mosaic`` uses them all and only
    shuffles their cells. Each cell is ``cell_hw``
    (default ``out_hw``, so that a tile is about as big as in the YOLO peers), filled with
    ``fit_mode="cover"`` (albumentations' default), and the output is ``out_hw``.
    ``A.Compose(seed=seed)`` makes the rest of the draws reproducible.

    Args:
        samples: Source samples.
        out_hw: Output (height, width), ``A.Mosaic``'s ``target_size``.
        cell_hw: ``A.Mosaic``'s ``cell_shape``; ``None`` for ``out_hw``.
        seed: Seed of the partner draws and of the ``Compose``.
        grid: ``A.Mosaic``'s ``grid_yx`` (rows, columns).

    Returns:
        ``step(i)``: ``{"image", "bboxes", "labels"}`` of one ``out_hw`` mosaic.

    Raises:
        PeerUnavailable: albumentations cannot be imported.
    """
    n = _check_samples(samples)
    try:
        import albumentations as A
    except ImportError as exc:
        raise PeerUnavailable(
            "albumentations", f"{exc} (pip install 'albumentations==2.0.8')"
        ) from exc

    transform = A.Compose(
        [
            A.Mosaic(
                grid_yx=tuple(grid),
                target_size=tuple(out_hw),
                cell_shape=tuple(cell_hw or out_hw),
                p=1.0,
            )
        ],
        bbox_params=A.BboxParams("pascal_voc", label_fields=["labels"]),
        seed=seed,
    )
    rng = random.Random(seed)
    population = range(n)
    k_partners = int(grid[0]) * int(grid[1]) - 1

    def step(i: int) -> dict[str, np.ndarray]:
        main = samples[i % n]
        partners = [samples[j] for j in rng.choices(population, k=k_partners)]
        out = transform(
            image=main["image"],
            bboxes=main["bboxes"],
            labels=main["labels"],
            mosaic_metadata=partners,
        )
        return {
            "image": out["image"],
            "bboxes": np.asarray(out["bboxes"], dtype=np.float32).reshape(-1, 4),
            "labels": np.asarray(out["labels"], dtype=np.int64).reshape(-1),
        }

    return step


# --------------------------------------------------------------------------------------------
# ultralytics
# --------------------------------------------------------------------------------------------


def _import_ultralytics() -> dict[str, Any]:
    """Import ultralytics' augmentations, undoing the global settings its import changes.

    ``import ultralytics`` calls ``cv2.setNumThreads(0)``, sets numpy's and torch's print
    options and replaces ``torch.save``; the first and second would skew a benchmark of the
    other peers (and numpy's print options would break doctests), so they are put back.
    """
    import torch

    threads = cv2.getNumThreads()
    np_print = np.get_printoptions()
    torch_save = torch.save
    try:
        from ultralytics.data.augment import Compose, Mosaic, RandomPerspective
        from ultralytics.utils.instance import Instances
    except (ImportError, RuntimeError) as exc:
        # PackageNotFoundError (an ImportError) here means torchvision's metadata is missing.
        raise PeerUnavailable(
            "ultralytics",
            f"{type(exc).__name__}: {exc} (see benchmarks/requirements.txt: ultralytics and "
            "torchvision are installed with --no-deps)",
        ) from exc
    finally:
        cv2.setNumThreads(threads)
        np.set_printoptions(**np_print)
        torch.save = torch_save
    return {
        "Compose": Compose,
        "Mosaic": Mosaic,
        "RandomPerspective": RandomPerspective,
        "Instances": Instances,
    }


_Loaded = tuple[np.ndarray, tuple[int, int], tuple[int, int]]
"""``load_image``'s answer: (image, original (h, w), resized (h, w))."""


class _UltralyticsSource:
    """Just enough of ultralytics' ``BaseDataset``/``YOLODataset`` for its ``Mosaic``.

    ``Mosaic`` asks its dataset for ``cache``, ``buffer``, ``len()`` and
    ``get_image_and_label(i)``. Labels are kept as ``YOLODataset`` keeps them (normalised
    xywh boxes, ``cls`` float32 (N, 1), no segments) and deep-copied per call as its
    ``get_image_and_label`` does; images are resized long side to ``imgsz`` with
    INTER_LINEAR as its ``load_image`` does.

    With ``buffer=False`` (``cache="ram"`` to ``Mosaic``) partners are drawn uniformly from
    all samples and every tile is resized from the source on every call, as the other peers
    do. With ``buffer=True`` ultralytics' own scheme is emulated: loaded images stay resized
    in a buffer of ``min(n, 128, 1000)`` (batch 16) and partners come from it, so a small
    source list ends up with no resizes at all.
    """

    def __init__(
        self,
        samples: Sequence[Sample],
        imgsz: int,
        buffer: bool,
        instances_cls: Any,
    ) -> None:
        self.samples = samples
        self.imgsz = imgsz
        self.cache: str | None = None if buffer else "ram"
        self.use_obb = False
        self.buffer: list[int] = []
        self.max_buffer_length = min(len(samples), 16 * 8, 1000)
        self._buffered = buffer
        self._ims: list[_Loaded | None] = [None] * len(samples)
        self._instances_cls = instances_cls
        self.labels: list[dict[str, Any]] = []
        for k, s in enumerate(samples):
            h, w = s["image"].shape[:2]
            b = np.asarray(s["bboxes"], dtype=np.float32).reshape(-1, 4)
            xywh = np.stack(
                [
                    (b[:, 0] + b[:, 2]) / (2 * w),
                    (b[:, 1] + b[:, 3]) / (2 * h),
                    (b[:, 2] - b[:, 0]) / w,
                    (b[:, 3] - b[:, 1]) / h,
                ],
                axis=1,
            ).astype(np.float32)
            self.labels.append(
                {
                    "im_file": f"sample_{k}",
                    "shape": (h, w),
                    "cls": np.asarray(s["labels"], dtype=np.float32).reshape(-1, 1),
                    "bboxes": xywh,
                    "segments": [],
                    "keypoints": None,
                    "normalized": True,
                    "bbox_format": "xywh",
                }
            )

    def __len__(self) -> int:
        return len(self.samples)

    def load_image(self, i: int) -> _Loaded:
        cached = self._ims[i]
        if cached is not None:
            return cached
        im = self.samples[i]["image"]
        h0, w0 = im.shape[:2]
        r = self.imgsz / max(h0, w0)
        if r != 1:
            w, h = min(math.ceil(w0 * r), self.imgsz), min(math.ceil(h0 * r), self.imgsz)
            im = cv2.resize(im, (w, h), interpolation=cv2.INTER_LINEAR)
        out = (im, (h0, w0), im.shape[:2])
        if self._buffered:
            self._ims[i] = out
            self.buffer.append(i)
            if 1 < len(self.buffer) >= self.max_buffer_length:
                self._ims[self.buffer.pop(0)] = None
        return out

    def get_image_and_label(self, index: int) -> dict[str, Any]:
        label = deepcopy(self.labels[index])
        label.pop("shape", None)
        label["img"], label["ori_shape"], label["resized_shape"] = self.load_image(index)
        label["ratio_pad"] = (
            label["resized_shape"][0] / label["ori_shape"][0],
            label["resized_shape"][1] / label["ori_shape"][1],
        )
        bboxes = label.pop("bboxes")
        label.pop("segments")
        keypoints = label.pop("keypoints")
        label["instances"] = self._instances_cls(
            bboxes,
            np.zeros((0, 1000, 2), dtype=np.float32),  # YOLODataset's "no segments"
            keypoints,
            bbox_format=label.pop("bbox_format"),
            normalized=label.pop("normalized"),
        )
        return label


def ultralytics_mosaic(
    samples: Sequence[Sample],
    imgsz: int = 640,
    affine: bool = True,
    *,
    buffer: bool = False,
    seed: int = 0,
    n_tiles: int = 4,
) -> Step:
    """Run ultralytics' own ``Mosaic`` and, with ``affine``, its ``RandomPerspective`` crop.

    This is the detection training pre-transform of ``v8_transforms`` with the default
    hyperparameters (mosaic=1.0, degrees=0, translate=0.1, scale=0.5, shear=0,
    perspective=0, copy_paste=0): a 4-tile mosaic on a ``2*imgsz`` canvas filled with 114,
    then an affine warp (``cv2.warpAffine``) back to ``imgsz`` that also drops boxes
    ``box_candidates`` rejects. ``affine=False`` returns the mosaic alone, on its
    ``2*imgsz`` canvas.

    ultralytics draws from the global ``random`` module. ``step`` swaps in a private state
    seeded from ``seed`` around each call and puts the caller's state back afterwards, so the
    draws are reproducible and the global stream is left as it was.

    Args:
        samples: Source samples.
        imgsz: Output side with ``affine``; the canvas is ``2*imgsz``.
        affine: Whether to apply ``RandomPerspective`` as training does.
        buffer: Emulate ultralytics' buffer of resized images (see ``_UltralyticsSource``);
            the default resizes every tile from the source on every call, like the other
            peers.
        seed: Seed of the private ``random`` state.
        n_tiles: ``Mosaic``'s ``n``: 4 (2x2) or 9 (3x3, cropped to the same ``2*imgsz``
            canvas).

    Returns:
        ``step(i)``: ``{"image", "bboxes", "labels"}``; the image is ``imgsz`` square with
        ``affine``, ``2*imgsz`` square without.

    Raises:
        PeerUnavailable: ultralytics (or torchvision's metadata) is missing.
    """
    n = _check_samples(samples)
    ul = _import_ultralytics()
    source = _UltralyticsSource(samples, imgsz, buffer, ul["Instances"])
    mosaic = ul["Mosaic"](source, imgsz=imgsz, p=1.0, n=n_tiles)
    pipeline: Callable[[dict[str, Any]], dict[str, Any]]
    if affine:
        perspective = ul["RandomPerspective"](
            degrees=0.0,
            translate=0.1,
            scale=0.5,
            shear=0.0,
            perspective=0.0,
            size=(imgsz, imgsz),
        )
        pipeline = ul["Compose"]([mosaic, perspective])
    else:
        pipeline = mosaic
    state = random.Random(seed).getstate()

    def step(i: int) -> dict[str, np.ndarray]:
        nonlocal state
        outer = random.getstate()
        random.setstate(state)
        try:
            labels = pipeline(source.get_image_and_label(i % n))
        finally:
            state = random.getstate()
            random.setstate(outer)
        instances = labels["instances"]
        instances.convert_bbox(format="xyxy")
        return {
            "image": labels["img"],
            "bboxes": np.asarray(instances.bboxes, dtype=np.float32).reshape(-1, 4),
            "labels": np.asarray(labels["cls"]).reshape(-1).astype(np.int64),
        }

    return step


# --------------------------------------------------------------------------------------------
# YOLOv5-style canvas-then-crop, written here
# --------------------------------------------------------------------------------------------


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
    n = _check_samples(samples)
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
) -> Step:
    """The floor of any mosaic's cost: the four visible regions resized into the output.

    Per call: three partners and a centre ``(cx, cy)`` uniform over the output are drawn;
    each tile is scaled (as in the YOLO peers) to fit an ``out_hw`` box, the part of it that
    falls in its quadrant is worked out, mapped back to source pixels, and that source
    region alone is resized (``cv2.resize``, INTER_LINEAR) with ``dst=`` straight into its
    place in the one output array. A quadrant is filled with 114 only where its tile does
    not cover it. No targets; nothing that depends on the draw is precomputed. The source
    crop is rounded outwards to whole pixels, so the result may differ from
    resize-then-crop by under a pixel of scale: it is a cost floor, not a reference image.

    Args:
        samples: Source samples.
        out_hw: Output (height, width).
        rng: Source of every draw; ``random.Random(0)`` when ``None``.

    Returns:
        ``step(i)``: ``{"image"}`` of one ``out_hw`` mosaic.
    """
    n = _check_samples(samples)
    rng = rng if rng is not None else random.Random(0)
    out_h, out_w = (int(v) for v in out_hw)
    population = range(n)

    def step(i: int) -> dict[str, np.ndarray]:
        indices = [i % n, *rng.choices(population, k=3)]
        cx, cy = int(rng.uniform(0, out_w)), int(rng.uniform(0, out_h))
        out = np.empty((out_h, out_w, 3), dtype=np.uint8)
        for k, j in enumerate(indices):
            src = samples[j]["image"]
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
            cv2.resize(
                src[sy0:sy1, sx0:sx1],
                (x1 - x0, y1 - y0),
                dst=out[y0:y1, x0:x1],
                interpolation=cv2.INTER_LINEAR,
            )
        return {"image": out}

    return step


# --------------------------------------------------------------------------------------------
# One interface
# --------------------------------------------------------------------------------------------


def _albumentations(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return albumentations_mosaic(samples, out_hw, seed=seed)


def _ultralytics(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return ultralytics_mosaic(samples, _square(out_hw, "ultralytics"), affine=True, seed=seed)


def _yolov5_style(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return yolov5_style_mosaic(samples, _square(out_hw, "yolov5_style"), rng=random.Random(seed))


def _floor(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return floor_mosaic(samples, out_hw, rng=random.Random(seed))


PEERS: dict[str, Callable[[Sequence[Sample], tuple[int, int], int], Step]] = {
    "albumentations": _albumentations,
    "ultralytics": _ultralytics,
    "yolov5_style": _yolov5_style,
    "floor": _floor,
}
"""``name -> factory(samples, out_hw, seed)``; every step's image is ``out_hw``."""


def make_peer(
    name: str,
    samples: Sequence[Sample],
    out_hw: tuple[int, int] = (640, 640),
    seed: int = 0,
) -> Step:
    """Build one peer by name with the uniform interface.

    Args:
        name: A key of ``PEERS``.
        samples: Source samples.
        out_hw: Output (height, width); the YOLO peers need it square.
        seed: Seed of the peer's draws.

    Returns:
        The peer's ``step(i)``.

    Raises:
        KeyError: Unknown name.
        PeerUnavailable: The peer's package is missing.
    """
    try:
        factory = PEERS[name]
    except KeyError:
        raise KeyError(f"unknown peer {name!r}; known: {', '.join(PEERS)}") from None
    return factory(samples, out_hw, seed)
