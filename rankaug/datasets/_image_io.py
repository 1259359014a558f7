"""Reading and writing image files with OpenCV, in RGB order.

:func:`read_rgb` decodes a file as it is. :func:`read_rgb_resized` resizes on load, as
ultralytics' ``YOLODataset.load_image`` does: the long side becomes ``image_size``
(larger images shrink, smaller ones grow), the aspect ratio is kept, and each side is
``min(ceil(side * r), image_size)`` with ``r = image_size / max(height, width)``.

A JPEG that shrinks by 2x or more is decoded at 1/2, 1/4 or 1/8 of its size by the
JPEG decoder itself (OpenCV's ``IMREAD_REDUCED_COLOR_*``, which scales in the DCT
domain): the largest reduction whose result is still at least the target size in
both axes, followed by one ``cv2.resize`` to the exact size. That decodes a 1280x720
photograph to 640x360 directly, but its pixels differ slightly (a few levels) from a
full decode followed by a resize; ``reduced_decode=False`` gives the full decode.

The final resize (``interpolation="auto"``) uses ``INTER_LINEAR`` (what ultralytics
uses) when each axis changes by less than 2x: growing, or what is left after a reduced
decode. A shrink by 2x or more (PNG and other formats, or ``reduced_decode=False``) uses
``INTER_AREA``, because linear interpolation then skips source pixels and aliases.
``interpolation="linear"`` uses ``INTER_LINEAR`` for every resize, as ultralytics'
``load_image`` does: with ``reduced_decode=False``, its pixels exactly.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Final, Literal

import cv2
import numpy as np

__all__ = [
    "INTERPOLATIONS",
    "Interpolation",
    "fit_size",
    "jpeg_size",
    "read_rgb",
    "read_rgb_resized",
    "write_png",
]

Interpolation = Literal["auto", "linear"]
INTERPOLATIONS: Final[tuple[Interpolation, ...]] = ("auto", "linear")
"""The resize on load's interpolations (see the module docstring)."""

_REDUCED: Final = ((8, cv2.IMREAD_REDUCED_COLOR_8), (4, cv2.IMREAD_REDUCED_COLOR_4),
                   (2, cv2.IMREAD_REDUCED_COLOR_2))  # fmt: skip
# Start-of-frame markers (baseline, extended, progressive, lossless; Huffman or
# arithmetic): they hold the frame's height and width.
_SOF: Final = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7,
                         0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})  # fmt: skip


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
    bgr = _decode(_read_bytes(path), cv2.IMREAD_COLOR, path)
    rgb: np.ndarray = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    return rgb


def read_rgb_resized(
    path: Path, image_size: int, *, reduced_decode: bool, interpolation: Interpolation = "auto"
) -> tuple[np.ndarray, tuple[int, int]]:
    """Decode an image file resized so that its long side is ``image_size``.

    See the module docstring for the sizes, the reduced JPEG decode and the
    interpolation.

    Args:
        path: The image file.
        image_size: The long side of the result, ``>= 1``.
        reduced_decode: Let the JPEG decoder shrink by 2, 4 or 8 where it can.
        interpolation: ``"auto"`` (``INTER_AREA`` for shrinks of 2x or more, else
            ``INTER_LINEAR``) or ``"linear"`` (``INTER_LINEAR`` always, as ultralytics).

    Returns:
        The ``HxWx3`` uint8 RGB image and the ``(height, width)`` of the full-size
        image (after EXIF orientation, as :func:`read_rgb` would return it).

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        ValueError: If the file is empty or OpenCV cannot decode it.
    """
    data = _read_bytes(path)
    bgr: np.ndarray | None = None
    original = (0, 0)
    header = jpeg_size(data) if reduced_decode else None
    if header is not None:
        bgr, original = _reduced_decode(data, header, image_size, path)
    if bgr is None:
        bgr = _decode(data, cv2.IMREAD_COLOR, path)
        original = (bgr.shape[0], bgr.shape[1])
    target = fit_size(original[0], original[1], image_size)
    if (bgr.shape[0], bgr.shape[1]) == target:
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), original
    shrink = bgr.shape[0] >= 2 * target[0] or bgr.shape[1] >= 2 * target[1]
    flag = cv2.INTER_AREA if shrink and interpolation == "auto" else cv2.INTER_LINEAR
    if target[0] * target[1] > bgr.shape[0] * bgr.shape[1]:  # convert the smaller image
        bgr = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        return cv2.resize(bgr, (target[1], target[0]), interpolation=flag), original
    small = cv2.resize(bgr, (target[1], target[0]), interpolation=flag)
    return cv2.cvtColor(small, cv2.COLOR_BGR2RGB), original


def fit_size(height: int, width: int, image_size: int) -> tuple[int, int]:
    """The ``(height, width)`` that an image is resized to on load.

    ``r = image_size / max(height, width)``; each side becomes
    ``min(ceil(side * r), image_size)`` (ultralytics' ``load_image``), so the long side
    is ``image_size`` and the aspect ratio is kept to within a pixel.

    >>> fit_size(480, 640, 320), fit_size(720, 1280, 640), fit_size(30, 20, 90)
    ((240, 320), (360, 640), (90, 60))
    """
    ratio = image_size / max(height, width)
    if ratio == 1:
        return height, width
    return min(math.ceil(height * ratio), image_size), min(math.ceil(width * ratio), image_size)


def jpeg_size(data: np.ndarray) -> tuple[int, int] | None:
    """The ``(height, width)`` in a JPEG file's frame header, or ``None``.

    ``None`` for anything that is not a JPEG with a readable start-of-frame segment.
    The size is the stored one, before any EXIF orientation.

    Args:
        data: The file's bytes, as a uint8 array.

    >>> ok, encoded = cv2.imencode(".jpg", np.zeros((30, 50, 3), np.uint8))
    >>> jpeg_size(encoded), jpeg_size(np.zeros(8, np.uint8))
    ((30, 50), None)
    """
    view = data.reshape(-1).data.cast("B")
    end = len(view)
    if end < 4 or view[0] != 0xFF or view[1] != 0xD8:
        return None
    position = 2
    while position + 4 <= end:
        if view[position] != 0xFF:
            return None
        marker = view[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
        elif marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:  # markers without a length
            position += 2
        elif marker in (0xD9, 0xDA):  # end of image, or scan data before any frame
            return None
        elif marker in _SOF:
            if position + 9 > end:
                return None
            height = view[position + 5] << 8 | view[position + 6]
            width = view[position + 7] << 8 | view[position + 8]
            return (height, width) if height > 0 and width > 0 else None
        else:
            position += 2 + (view[position + 2] << 8 | view[position + 3])
    return None


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


def _read_bytes(path: Path) -> np.ndarray:
    data = np.fromfile(path, dtype=np.uint8)
    if data.size == 0:
        raise ValueError(f"cannot decode image {path}: the file is empty")
    return data


def _decode(data: np.ndarray, flags: int, path: Path) -> np.ndarray:
    try:
        bgr = cv2.imdecode(data, flags)
    except cv2.error as error:
        raise ValueError(f"cannot decode image {path}: OpenCV failed ({error})") from None
    if bgr is None:
        raise ValueError(f"cannot decode image {path}: not an image format OpenCV can read")
    image: np.ndarray = bgr
    return image


def _reduced_decode(
    data: np.ndarray, header: tuple[int, int], image_size: int, path: Path
) -> tuple[np.ndarray | None, tuple[int, int]]:
    """Decode a JPEG at the largest reduction that stays >= the target size.

    Returns ``(None, header)`` when no reduction applies, or when the reduced image's
    shape does not tell the full-size orientation apart (the caller then decodes in
    full). OpenCV applies EXIF orientation to reduced decodes too, so the decoded shape
    is the stored one or its transpose.
    """
    height, width = header
    target = fit_size(height, width, image_size)
    fits = [
        (flags, reduced)
        for scale, flags in _REDUCED
        for reduced in [(-(-height // scale), -(-width // scale))]  # libjpeg rounds up
        if reduced[0] >= target[0] and reduced[1] >= target[1]
    ]
    if not fits:
        return None, header
    flags, reduced = fits[0]
    if reduced[0] == reduced[1] and height != width:
        return None, header  # a transposed decode would look the same
    bgr = _decode(data, flags, path)
    shape = (bgr.shape[0], bgr.shape[1])
    if shape == reduced:
        return bgr, header
    if shape == (reduced[1], reduced[0]):
        return bgr, (width, height)
    return None, header  # a decoder that does not scale as libjpeg does
