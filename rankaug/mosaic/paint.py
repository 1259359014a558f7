"""Pixels: each tile's visible window resized straight into its place, the rest filled.

Only what the output shows is built: no full-size tile, no ``2h x 2w`` canvas unless
asked for, and only the strips no tile covers are filled.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from rankaug.mosaic.layout import Layout, Rect, Window

__all__ = ["canvas", "fill", "paint_image", "paint_window"]


def canvas(like: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """An uninitialised ``hw`` image with the channels and dtype of ``like``."""
    height, width = hw
    shape = (height, width) if like.ndim == 2 else (height, width, like.shape[2])
    return np.empty(shape, dtype=like.dtype)


def fill(out: np.ndarray, rects: Sequence[Rect], values: tuple[float, ...]) -> None:
    """Set every ``(y0, y1, x0, x1)`` rectangle of ``out`` to ``values`` (one, or per channel)."""
    value = values if len(values) > 1 else values[0]
    for y0, y1, x0, x1 in rects:
        out[y0:y1, x0:x1] = value


def paint_window(out: np.ndarray, source: np.ndarray, window: Window, interpolation: int) -> None:
    """Resize the source window straight into the output window (no full-tile copy).

    >>> from rankaug.mosaic.layout import Window
    >>> out = np.zeros((4, 4), np.uint8)
    >>> paint_window(out, np.full((2, 2), 7, np.uint8), Window((2, 2), 0, 0, 2, 2, 0, 0, 4, 2),
    ...              cv2.INTER_NEAREST_EXACT)
    >>> out.tolist()
    [[7, 7, 7, 7], [7, 7, 7, 7], [0, 0, 0, 0], [0, 0, 0, 0]]
    """
    crop = source[window.sy0 : window.sy1, window.sx0 : window.sx1]
    target = out[window.dy0 : window.dy1, window.dx0 : window.dx1]
    if crop.shape[:2] == target.shape[:2]:
        target[...] = crop.reshape(target.shape)
        return
    size = (window.dx1 - window.dx0, window.dy1 - window.dy0)
    resized = cv2.resize(crop, size, target, 0.0, 0.0, interpolation)
    if resized is not target:  # OpenCV could not write in place (e.g. HxWx1)
        target[...] = resized.reshape(target.shape)


def paint_image(
    layout: Layout,
    images: Sequence[np.ndarray],
    hw: tuple[int, int],
    values: tuple[float, ...],
    interpolation: int,
) -> np.ndarray:
    """The output image: the fills, then each visible window.

    Args:
        layout: Where each tile goes.
        images: The tiles' images, aligned with ``layout.windows``.
        hw: The canvas' ``(height, width)``.
        values: The fill, one value or one per channel.
        interpolation: The OpenCV interpolation flag.

    Returns:
        The image.
    """
    out = canvas(images[0], hw)
    fill(out, layout.fills, values)
    for window, image in zip(layout.windows, images, strict=True):
        if window.kx:
            paint_window(out, image, window, interpolation)
    return out
