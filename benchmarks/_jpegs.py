"""A YOLO folder of JPEG photographs for the end-to-end section, written once and reused.

:func:`jpeg_folder` returns ``root`` with ``root/images/NNNNNN.jpg`` (quality 90) and
``root/labels/NNNNNN.txt`` (``class cx cy w h``, YOLO's layout, which both
``rankaug.datasets.YoloFolder`` and ultralytics' ``YOLODataset`` read). Each image is a
crop of one of the photographs bundled with scikit-image (``benchmarks.photos``: no
download), flipped or not, its crop window drawn at random, then resized to one of the
sizes of a phone or web data set: 640x480-class (landscape 4:3 and 3:2, portrait 3:4) and
1280x720, scaled by ``side / 640`` for another output side. The hand-placed boxes follow
the crop (clipped; boxes left with under a quarter of their area or under 2 pixels are
dropped), so some images have none, as in real data.

Without scikit-image the images are synthetic but photo-like (a smooth random field,
a few filled shapes as the objects, sensor-like noise), so that they compress and decode
about as a photograph does; the folder's ``kind`` says which.

The folder is built in a temporary directory and renamed into place when complete, under
``data_dir`` (by default ``<tmp>/rankaug-bench-<uid>``), named by everything it depends
on: a later run with the same settings reuses it. This is benchmark code, never imported
by rankaug.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from benchmarks.photos import load_photos, photos_available

__all__ = ["FORMAT", "JpegFolder", "SIZES", "default_data_dir", "jpeg_folder", "make_image"]

FORMAT = 1
"""Bumped whenever what the folder holds changes, so that old folders are not reused."""
QUALITY = 90
"""JPEG quality of every image."""
SIZES: tuple[tuple[tuple[int, int], float], ...] = (
    ((480, 640), 0.40),  # 4:3 landscape
    ((427, 640), 0.15),  # 3:2 landscape
    ((640, 480), 0.15),  # 3:4 portrait
    ((720, 1280), 0.30),  # 720p
)
"""``((height, width) at a 640 output, share of the images)``."""
_MARKER = "folder.json"


@dataclass(frozen=True)
class JpegFolder:
    """A YOLO folder of JPEGs on disk.

    Attributes:
        root: The folder (``root/images``, ``root/labels``).
        count: Its number of images.
        kind: ``"photos"`` or ``"synthetic"``.
        description: What it holds, for the report.
        megabytes: The JPEG files' total size.
        built: Whether this call built it (``False``: reused from an earlier run).
    """

    root: Path
    count: int
    kind: str
    description: str
    megabytes: float
    built: bool


def default_data_dir() -> Path:
    """``<tmp>/rankaug-bench-<uid>``: where the folders go unless ``--data-dir`` says."""
    return Path(tempfile.gettempdir()) / f"rankaug-bench-{os.getuid()}"


def _sizes(side: int, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Every image's (height, width): the shares of :data:`SIZES`, shuffled."""
    scale = side / 640
    shapes: list[tuple[int, int]] = []
    for (h, w), share in SIZES:
        shapes += [(max(8, round(h * scale)), max(8, round(w * scale)))] * round(share * count)
    while len(shapes) < count:
        shapes.append(shapes[0])
    del shapes[count:]
    order = rng.permutation(count)
    return [shapes[k] for k in order]


def _crop(
    photo: dict[str, np.ndarray], hw: tuple[int, int], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random window of ``photo`` with ``hw``'s aspect ratio, resized to ``hw``; its boxes."""
    image, boxes, labels = photo["image"], photo["bboxes"], photo["labels"]
    if rng.random() < 0.5:  # mirror
        width = image.shape[1]
        image = image[:, ::-1]
        boxes = np.stack([width - boxes[:, 2], boxes[:, 1], width - boxes[:, 0], boxes[:, 3]], 1)
    ph, pw = image.shape[:2]
    h, w = hw
    # the largest window of the target aspect ratio, then 55..100 % of it
    fit = min(ph / h, pw / w)
    zoom = rng.uniform(0.55, 1.0)
    ch, cw = max(2, round(h * fit * zoom)), max(2, round(w * fit * zoom))
    y0 = int(rng.integers(0, ph - ch + 1))
    x0 = int(rng.integers(0, pw - cw + 1))
    window = np.ascontiguousarray(image[y0 : y0 + ch, x0 : x0 + cw])
    shrink = cw > w
    out = cv2.resize(window, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC)
    shifted = boxes - np.array([x0, y0, x0, y0], dtype=np.float32)
    clipped = np.clip(shifted, 0, [cw, ch, cw, ch]).astype(np.float32)
    full = (shifted[:, 2] - shifted[:, 0]) * (shifted[:, 3] - shifted[:, 1])
    area = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
    scaled = clipped * np.array([w / cw, h / ch, w / cw, h / ch], dtype=np.float32)
    keep = (area >= 0.25 * full) & (scaled[:, 2] - scaled[:, 0] >= 2)
    keep &= scaled[:, 3] - scaled[:, 1] >= 2
    return out, scaled[keep], labels[keep]


def make_image(
    hw: tuple[int, int], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A synthetic photo-like RGB image with 1 to 6 objects, and their boxes and labels.

    >>> image, boxes, labels = make_image((48, 64), np.random.default_rng(0))
    >>> image.shape, image.dtype.name, boxes.shape[1], len(boxes) == len(labels) > 0
    ((48, 64, 3), 'uint8', 4, True)
    """
    h, w = hw
    field = rng.integers(0, 256, size=(max(2, h // 48), max(2, w // 48), 3)).astype(np.uint8)
    image = cv2.resize(field, (w, h), interpolation=cv2.INTER_CUBIC)
    count = int(rng.integers(1, 7))
    boxes = np.zeros((count, 4), dtype=np.float32)
    labels = rng.integers(0, 8, size=count).astype(np.int64)
    for k in range(count):
        bw, bh = rng.uniform(0.08, 0.45) * w, rng.uniform(0.08, 0.45) * h
        x0, y0 = rng.uniform(0, w - bw), rng.uniform(0, h - bh)
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        centre = (round(x0 + bw / 2), round(y0 + bh / 2))
        axes = (max(1, round(bw / 2)), max(1, round(bh / 2)))
        if k % 2:
            cv2.ellipse(image, centre, axes, 0, 0, 360, colour, -1)
        else:
            cv2.rectangle(
                image, (round(x0), round(y0)), (round(x0 + bw), round(y0 + bh)), colour, -1
            )
        boxes[k] = (x0, y0, x0 + bw, y0 + bh)
    noise = rng.integers(-10, 11, size=image.shape, dtype=np.int16)
    image = np.clip(image + noise, 0, 255).astype(np.uint8)
    return image, np.clip(boxes, 0, [w, h, w, h]).astype(np.float32), labels


def _write(root: Path, stem: str, image: np.ndarray, boxes: np.ndarray, labels: np.ndarray) -> None:
    ok, data = cv2.imencode(
        ".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, QUALITY]
    )
    if not ok:
        raise RuntimeError(f"cv2.imencode failed for {stem}")
    (root / "images" / f"{stem}.jpg").write_bytes(data.tobytes())
    h, w = image.shape[:2]
    lines = [
        f"{label} {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} {(x1 - x0) / w:.6f} "
        f"{(y1 - y0) / h:.6f}\n"
        for label, (x0, y0, x1, y1) in zip(labels.tolist(), boxes.tolist(), strict=True)
    ]
    (root / "labels" / f"{stem}.txt").write_text("".join(lines), encoding="utf-8")


def _build(root: Path, count: int, side: int, kind: str, seed: int) -> None:
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    rng = np.random.default_rng([FORMAT, seed, count, side])
    photos = load_photos() if kind == "photos" else []
    for k, hw in enumerate(_sizes(side, count, rng)):
        if photos:
            image, boxes, labels = _crop(photos[int(rng.integers(len(photos)))], hw, rng)
        else:
            image, boxes, labels = make_image(hw, rng)
        _write(root, f"{k:06d}", image, boxes, labels)


def _describe(root: Path, count: int, side: int, kind: str, built: bool) -> JpegFolder:
    jpegs = list((root / "images").glob("*.jpg"))
    megabytes = sum(p.stat().st_size for p in jpegs) / 1e6
    scale = side / 640
    sizes = ", ".join(
        f"{round(w * scale)}x{round(h * scale)} {share:.0%}" for (h, w), share in SIZES
    )
    what = (
        "crops of the skimage.data photographs (no download)"
        if kind == "photos"
        else "synthetic photo-like images (scikit-image is not installed: no photographs)"
    )
    description = (
        f"{count} JPEGs (quality {QUALITY}, w x h: {sizes}), {megabytes:.0f} MB, {what}, "
        f"YOLO layout in {root}"
    )
    return JpegFolder(root, count, kind, description, megabytes, built)


def jpeg_folder(
    count: int,
    side: int = 640,
    *,
    data: str = "auto",
    data_dir: Path | None = None,
    seed: int = 0,
) -> JpegFolder:
    """The YOLO folder of ``count`` JPEGs for output side ``side``: reused, or built once.

    Args:
        count: Number of images (at least 1).
        side: The output side the sizes are scaled for (640: 640x480-class and 1280x720).
        data: ``"photos"`` (fails without scikit-image), ``"synthetic"`` or ``"auto"``.
        data_dir: Where folders are kept; :func:`default_data_dir` when ``None``.
        seed: Seed of the crops, sizes and synthetic images.

    Returns:
        The folder.
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    kind = "photos" if data == "photos" or (data == "auto" and photos_available()) else "synthetic"
    base = default_data_dir() if data_dir is None else Path(data_dir)
    name = f"jpegs-v{FORMAT}-{kind}-{count}-{side}-s{seed}"
    root = base / name
    marker = {"format": FORMAT, "kind": kind, "count": count, "side": side, "seed": seed}
    try:
        if json.loads((root / _MARKER).read_text(encoding="utf-8")) == marker:
            return _describe(root, count, side, kind, built=False)
    except (OSError, ValueError):
        pass
    base.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f"{name}.building-", dir=base))
    try:
        _build(building / "data", count, side, kind, seed)
        (building / "data" / _MARKER).write_text(json.dumps(marker), encoding="utf-8")
        if root.exists():  # an incomplete or stale folder of the same name
            shutil.rmtree(root, ignore_errors=True)
        try:
            os.rename(building / "data", root)
        except OSError:  # another run finished the same folder first
            if not (root / _MARKER).exists():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return _describe(root, count, side, kind, built=True)
