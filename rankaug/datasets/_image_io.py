"""Reading and writing image files with OpenCV, in RGB order."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

__all__ = ["read_rgb", "write_png"]


def read_rgb(path: Path) -> np.ndarray:
    """Decode an image file to an ``HxWx3`` uint8 RGB array.

    Grayscale files come back with three equal channels, an alpha channel is
    dropped, and 16-bit files are scaled to 8 bits (OpenCV's ``IMREAD_COLOR``).
    Non-ASCII paths work (the bytes are read by numpy, not OpenCV).

    Args:
        path: The image file.

    Returns:
        The decoded image.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        ValueError: If the file is empty or OpenCV cannot decode it.
    """
    data = np.fromfile(path, dtype=np.uint8)
    if data.size == 0:
        raise ValueError(f"cannot decode image {path}: the file is empty")
    try:
        bgr = cv2.imdecode(data, cv2.IMREAD_COLOR)
    except cv2.error as error:
        raise ValueError(f"cannot decode image {path}: OpenCV failed ({error})") from None
    if bgr is None:
        raise ValueError(f"cannot decode image {path}: not an image format OpenCV can read")
    rgb: np.ndarray = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    return rgb


def write_png(path: Path, image: np.ndarray) -> None:
    """Write an ``HxW`` or ``HxWx3`` uint8 RGB image losslessly as PNG.

    Args:
        path: The target file; its folder must exist.
        image: The image.

    Raises:
        ValueError: If OpenCV cannot encode the image.
    """
    pixels = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    ok, encoded = cv2.imencode(".png", pixels)
    if not ok:
        raise ValueError(f"cannot encode image for {path} as PNG")
    encoded.tofile(path)
