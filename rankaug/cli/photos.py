"""The demo's pictures: the photographs bundled with scikit-image, when it is installed.

scikit-image ships a few photographs in its wheel (``skimage/data/*.png``, ``*.jpg``;
the benchmark runs on them too, see ``benchmarks/photos.py``). The demo reads those files
with OpenCV, without importing scikit-image, and falls back to
:class:`~rankaug.datasets.SyntheticDetection` where scikit-image is absent (it is never a
dependency of rankaug). Photographs make the seams of a mosaic, and a tile repeated on
every rank, visible at a glance.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from torch.utils.data import Dataset

__all__ = ["PHOTO_FILES", "PhotoSource", "photo_folder"]

#: The bundled photographs the demo uses, in index order (colour ones first).
PHOTO_FILES: tuple[str, ...] = (
    "astronaut.png",
    "chelsea.png",
    "coffee.png",
    "rocket.jpg",
    "motorcycle_left.png",
    "ihc.png",
    "retina.jpg",
    "hubble_deep_field.jpg",
    "camera.png",
    "coins.png",
    "moon.png",
)


def photo_folder() -> Path | None:
    """scikit-image's data folder when every photograph of :data:`PHOTO_FILES` is there.

    Returns:
        The folder, or ``None`` without scikit-image (or with a wheel lacking one).
    """
    try:
        spec = importlib.util.find_spec("skimage")
    except (ImportError, ValueError):  # a broken or blocked install
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    return folder if all((folder / name).is_file() for name in PHOTO_FILES) else None


class PhotoSource(Dataset[dict[str, Any]]):
    """``length`` samples from the bundled photographs, each its long side ``size``.

    Index ``i`` shows photograph ``i % 11``; each later round over the photographs is
    mirrored (odd rounds) and cropped a little more, so no two indices look the same.
    Samples are ``{"image": HxWx3 uint8 RGB, "bboxes": float32 (0, 4), "labels": int64
    (0,)}`` (the demo is about the pictures, not their objects).

    Args:
        folder: The folder holding :data:`PHOTO_FILES` (see :func:`photo_folder`).
        length: Number of samples, at least 1.
        size: The long side of every image, at least 8.

    Raises:
        ValueError: If ``length`` or ``size`` is too small, or a file cannot be read.
    """

    def __init__(self, folder: Path, length: int, size: int) -> None:
        if length < 1 or size < 8:
            raise ValueError(f"length must be >= 1 and size >= 8, got {length} and {size}")
        self.length = length
        self.photos = [_read(folder / name, size) for name in PHOTO_FILES]

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> dict[str, Any]:
        index = range(self.length)[index]
        photo = self.photos[index % len(self.photos)]
        round_ = index // len(self.photos)
        if round_:
            height, width = photo.shape[:2]
            cut_y, cut_x = (height * round_) // 12, (width * round_) // 12
            photo = photo[cut_y : height - cut_y, cut_x : width - cut_x]
        if round_ % 2:
            photo = photo[:, ::-1]
        return {
            "image": np.ascontiguousarray(photo),
            "bboxes": np.zeros((0, 4), np.float32),
            "labels": np.zeros(0, np.int64),
        }


def _read(path: Path, size: int) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"cannot read the photograph {path}")
    height, width = image.shape[:2]
    scale = size / max(height, width)
    shape = (max(1, round(width * scale)), max(1, round(height * scale)))
    resized = cv2.resize(image, shape, interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(resized, cv2.COLOR_BGR2RGB)
