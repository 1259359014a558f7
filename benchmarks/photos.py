"""Real photographs with hand-placed boxes, for benchmarking mosaics.

The photographs are the ones that ship inside the scikit-image wheel (``skimage/data/*.png``
and ``*.jpg``); none of them is downloaded. scikit-image is an optional benchmark dependency
(``benchmarks/requirements.txt``), never a dependency of rankaug itself.

Every sample is a dict::

    {"image": HxWx3 uint8 RGB, "bboxes": float32 (N, 4) pascal_voc xyxy pixels,
     "labels": int64 (N,)}

The boxes were placed by eye on each photograph (3 to 8 per photograph); they are plausible
objects (the astronaut's face, the cat's eyes, the espresso cup, ...), not ground truth.

Example:
    >>> from benchmarks.photos import load_photos, photos_available
    >>> if photos_available():
    ...     photos = load_photos()
    ...     assert all(p["image"].dtype.name == "uint8" for p in photos)
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CLASSES", "PHOTO_NAMES", "load_photos", "photos_available"]

CLASSES: tuple[str, ...] = (
    "person",  # 0
    "face",  # 1
    "helmet",  # 2
    "rocket",  # 3
    "flag",  # 4
    "badge",  # 5
    "cat",  # 6
    "eye",  # 7
    "nose",  # 8
    "cup",  # 9
    "saucer",  # 10
    "spoon",  # 11
    "tower",  # 12
    "light",  # 13
    "galaxy",  # 14
    "star",  # 15
    "fundus",  # 16
    "optic_disc",  # 17
    "fovea",  # 18
    "motorcycle",  # 19
    "wheel",  # 20
    "headlight",  # 21
    "engine",  # 22
    "carton",  # 23
    "bench",  # 24
    "camera",  # 25
    "tripod",  # 26
    "building",  # 27
    "coin",  # 28
    "crater",  # 29
    "gland",  # 30
)
"""Class names; a sample's ``labels`` index into this tuple."""

_C = {name: i for i, name in enumerate(CLASSES)}

# name -> (skimage.data loader name, expected (H, W), [(class, x1, y1, x2, y2), ...])
_PHOTOS: dict[str, tuple[str, tuple[int, int], list[tuple[str, int, int, int, int]]]] = {
    "astronaut": (
        "astronaut",
        (512, 512),
        [
            ("person", 25, 15, 365, 512),
            ("face", 170, 55, 285, 175),
            ("helmet", 275, 340, 505, 512),
            ("rocket", 350, 0, 470, 280),
            ("flag", 0, 0, 95, 512),
            ("badge", 130, 345, 215, 425),
        ],
    ),
    "chelsea": (
        "chelsea",
        (300, 451),
        [
            ("cat", 20, 0, 400, 300),
            ("eye", 135, 85, 210, 150),
            ("eye", 290, 105, 345, 165),
            ("nose", 230, 215, 295, 270),
        ],
    ),
    "coffee": (
        "coffee",
        (400, 600),
        [
            ("cup", 170, 15, 420, 290),
            ("saucer", 75, 60, 480, 390),
            ("spoon", 320, 65, 425, 325),
        ],
    ),
    "rocket": (
        "rocket",
        (427, 640),
        [
            ("rocket", 297, 125, 340, 410),
            ("tower", 0, 0, 90, 427),
            ("tower", 555, 0, 640, 427),
            ("tower", 165, 120, 210, 400),
            ("tower", 435, 120, 480, 427),
            ("light", 95, 395, 125, 425),
            ("light", 350, 380, 380, 410),
        ],
    ),
    "hubble_deep_field": (
        "hubble_deep_field",
        (872, 1000),
        [
            ("galaxy", 265, 85, 310, 130),
            ("galaxy", 100, 375, 145, 420),
            ("galaxy", 700, 445, 760, 500),
            ("galaxy", 955, 465, 1000, 515),
            ("galaxy", 470, 420, 540, 455),
            ("star", 735, 555, 770, 595),
            ("galaxy", 400, 690, 445, 735),
            ("galaxy", 425, 125, 475, 175),
        ],
    ),
    "retina": (
        "retina",
        (1411, 1411),
        [
            ("fundus", 15, 10, 1400, 1400),
            ("optic_disc", 110, 560, 330, 780),
            ("fovea", 600, 600, 800, 800),
        ],
    ),
    "motorcycle": (
        "stereo_motorcycle",
        (500, 741),
        [
            ("motorcycle", 90, 95, 690, 440),
            ("wheel", 505, 290, 685, 450),
            ("wheel", 120, 245, 285, 400),
            ("headlight", 510, 120, 565, 190),
            ("engine", 345, 240, 480, 360),
            ("carton", 610, 185, 685, 275),
            ("bench", 40, 105, 285, 305),
        ],
    ),
    "camera": (
        "camera",
        (512, 512),
        [
            ("person", 0, 65, 330, 512),
            ("face", 155, 65, 270, 200),
            ("camera", 255, 135, 330, 190),
            ("tripod", 225, 195, 410, 512),
            ("building", 410, 115, 445, 200),
        ],
    ),
    "coins": (
        "coins",
        (303, 384),
        [
            ("coin", 20, 35, 75, 85),
            ("coin", 80, 38, 125, 80),
            ("coin", 130, 28, 180, 78),
            ("coin", 190, 28, 240, 75),
            ("coin", 255, 35, 300, 80),
            ("coin", 300, 15, 365, 100),
            ("coin", 15, 230, 75, 290),
            ("coin", 315, 155, 380, 222),
        ],
    ),
    "moon": (
        "moon",
        (512, 512),
        [
            ("crater", 95, 60, 150, 112),
            ("crater", 295, 80, 370, 190),
            ("crater", 200, 400, 300, 480),
            ("crater", 170, 175, 195, 195),
        ],
    ),
    "immunohistochemistry": (
        "immunohistochemistry",
        (512, 512),
        [
            ("gland", 0, 0, 270, 260),
            ("gland", 250, 0, 460, 300),
            ("gland", 250, 305, 390, 510),
            ("gland", 0, 200, 160, 512),
        ],
    ),
}

PHOTO_NAMES: tuple[str, ...] = tuple(_PHOTOS)
"""The photographs, in the order ``load_photos`` returns them."""

_INSTALL_HINT = (
    "benchmarks.photos needs scikit-image (its wheel ships the photographs): "
    "pip install --no-deps -c constraints.txt -r benchmarks/requirements.txt"
)


def photos_available() -> bool:
    """Tell whether scikit-image, and so the photographs, can be imported.

    Returns:
        True when ``skimage`` is installed.
    """
    try:
        return importlib.util.find_spec("skimage") is not None
    except (ImportError, ValueError):  # a broken or blocked install
        return False


@functools.lru_cache(maxsize=1)
def _originals() -> tuple[dict[str, np.ndarray], ...]:
    """Decode every photograph once (about 0.1 s) and keep it for the process."""
    try:
        import skimage.data as skdata
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc

    out: list[dict[str, np.ndarray]] = []
    for name, (loader, hw, boxes) in _PHOTOS.items():
        fn: Callable[[], Any] = getattr(skdata, loader)
        try:
            img = fn()
        except ModuleNotFoundError as exc:  # a file skimage would have to download (pooch)
            raise ImportError(
                f"skimage.data.{loader}() is not bundled in this scikit-image wheel: {exc}"
            ) from exc
        if isinstance(img, tuple):  # stereo_motorcycle() -> (left, right, disparity)
            img = img[0]
        img = np.asarray(img)
        if img.ndim == 2:
            img = np.repeat(img[:, :, None], 3, axis=2)
        img = np.ascontiguousarray(img[:, :, :3], dtype=np.uint8)
        if img.shape[:2] != hw:
            raise RuntimeError(f"{name}: expected {hw}, scikit-image gave {img.shape[:2]}")
        bboxes = np.array([b[1:] for b in boxes], dtype=np.float32).reshape(-1, 4)
        labels = np.array([_C[b[0]] for b in boxes], dtype=np.int64)
        h, w = hw
        inside = (bboxes[:, :2] >= 0).all() and (bboxes[:, 2] <= w).all()
        inside = inside and (bboxes[:, 3] <= h).all()
        if not (inside and (bboxes[:, 2:] > bboxes[:, :2]).all()):
            raise RuntimeError(f"{name}: a hand-placed box is empty or outside the image")
        img.setflags(write=False)
        out.append({"image": img, "bboxes": bboxes, "labels": labels})
    return tuple(out)


def _hflip(sample: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Mirror a sample left-right, boxes included."""
    img = sample["image"]
    w = img.shape[1]
    b = sample["bboxes"]
    flipped = np.stack([w - b[:, 2], b[:, 1], w - b[:, 0], b[:, 3]], axis=1).astype(np.float32)
    return {
        "image": np.ascontiguousarray(img[:, ::-1]),
        "bboxes": flipped,
        "labels": sample["labels"].copy(),
    }


def load_photos(n: int | None = None) -> list[dict[str, np.ndarray]]:
    """Return real photographs from ``skimage.data`` as detection samples.

    The first ``len(PHOTO_NAMES)`` (11) samples are the photographs as they ship, from
    300x451 to 1411x1411, grayscale ones turned into RGB. Past that the list goes round
    again, each odd round mirrored left-right (boxes too), so asking for 16 gives 11
    photographs and 5 mirrored ones. Each call returns fresh, writable copies.

    Args:
        n: How many samples; ``None`` for the 11 photographs.

    Returns:
        A list of ``{"image", "bboxes", "labels"}`` dicts (uint8 RGB, float32 (N, 4)
        pascal_voc pixels, int64 (N,)).

    Raises:
        ImportError: scikit-image is not installed, or one photograph is not bundled.
        ValueError: ``n`` is negative.
    """
    originals = _originals()
    k = len(originals)
    if n is None:
        n = k
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    out: list[dict[str, np.ndarray]] = []
    for i in range(n):
        src = originals[i % k]
        if (i // k) % 2 == 1:
            out.append(_hflip(src))
        else:
            out.append(
                {
                    "image": src["image"].copy(),
                    "bboxes": src["bboxes"].copy(),
                    "labels": src["labels"].copy(),
                }
            )
    return out
