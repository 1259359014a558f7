"""Pixels: each tile's visible window resized straight into its place, the rest filled.

Only what the output shows is built: no full-size tile, no ``2h x 2w`` canvas unless
asked for, and only the strips no tile covers are filled. With an affine that rotates
or shears (a :class:`~rankaug.mosaic.fused.Warp`), each tile's crop is warped once into
the region of the output it can reach and copied where the tile owns the pixels, over
an output filled first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

import cv2
import numpy as np

from rankaug.mosaic.fused import TileWarp, Warp
from rankaug.mosaic.layout import Layout, Rect, Window
from rankaug.mosaic.prefetch import prefetched

__all__ = [
    "canvas", "fill", "mirror", "paint_image", "paint_warp", "paint_window", "resize_into",
    "warp_tile",
]  # fmt: skip

# warpAffine has neither INTER_NEAREST_EXACT nor INTER_AREA; with the half-pixel shift
# of TileWarp.inverse its INTER_NEAREST is the pixel-centre nearest neighbour
_WARP_FLAGS: Final = {cv2.INTER_NEAREST_EXACT: cv2.INTER_NEAREST, cv2.INTER_AREA: cv2.INTER_LINEAR}
# the dtypes warpAffine keeps (it makes int64 int32 and refuses uint32, float16, bool);
# resize keeps all but the 8-byte integers. Others go through as bytes (nearest only).
_WARPABLE: Final = frozenset({"uint8", "int8", "uint16", "int16", "int32", "float32", "float64"})
# the dtypes (with 1, 3 or 4 channels) whose nearest warpAffine picks the source pixels an
# 8-bit image's does; the others (int8, int32, float64, 2 or more than 4 channels) round
# some ties the other way (OpenCV 5.1: 405 of 1.2 million pixels over random warps), so
# that a mask of another dtype disagreed with its image: they go through as bytes
_SAME_NEAREST: Final = frozenset({"uint8", "uint16", "int16", "float32"})


def _resizes_by_warp(version: str) -> bool:
    """Whether OpenCV ``version`` (``"5.1.0"``, ``"5.1.0-dev"``) resamples by warpAffine.

    From OpenCV 5.1 warpAffine's bilinear 8-bit path is 1.4 to 2 times as fast as
    cv2.resize's for the same map where measured (before, 3 to 10 times slower): there a
    linear window of uint8 pixels is resampled by warpAffine (see resize_into). Fixed per
    OpenCV version, never timed: the same version gives the same pixels. ``False`` for a
    version that does not parse.
    """
    match = re.match(r"(\d+)\.(\d+)", version)
    return match is not None and (int(match[1]), int(match[2])) >= (5, 1)


_RESIZE_BY_WARP: Final = _resizes_by_warp(cv2.__version__)


def canvas(like: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """An uninitialised ``hw`` image with the channels and dtype of ``like``."""
    height, width = hw
    shape = (height, width) if like.ndim == 2 else (height, width, like.shape[2])
    return np.empty(shape, dtype=like.dtype)


def fill(out: np.ndarray, rects: Sequence[Rect], values: tuple[float, ...]) -> None:
    """Set every ``(y0, y1, x0, x1)`` rectangle of ``out`` to ``values`` (one, or per channel)."""
    for y0, y1, x0, x1 in rects:
        _set(out[y0:y1, x0:x1], values)


def _set(target: np.ndarray, values: tuple[float, ...]) -> None:
    """``target[...] = values``: one value, or one per channel.

    Numpy sets a per-channel tuple pixel by pixel (about 15 ns each: 6 ms for a 640x640
    output); set in one row, then copied down whole rows, it costs about one row of that.
    """
    if len(values) == 1:
        target[...] = values[0]
    else:
        target[:1] = values
        target[1:] = target[:1]


def paint_window(
    out: np.ndarray, source: np.ndarray, window: Window, interpolation: int, *,
    mirrored: bool = False,
) -> None:  # fmt: skip
    """Resize the source window straight into the output window (no full-tile copy).

    ``mirrored``: into the output window's mirror image across the output, mirrored (a
    flipped layout's: resampled mirrored by :func:`resize_into`, no pass of its own).

    >>> from rankaug.mosaic.layout import Window
    >>> out = np.zeros((4, 4), np.uint8)
    >>> paint_window(out, np.full((2, 2), 7, np.uint8), Window((2, 2), 0, 0, 2, 2, 0, 0, 4, 2),
    ...              cv2.INTER_NEAREST_EXACT)
    >>> out.tolist()
    [[7, 7, 7, 7], [7, 7, 7, 7], [0, 0, 0, 0], [0, 0, 0, 0]]
    """
    crop = source[window.sy0 : window.sy1, window.sx0 : window.sx1]
    if mirrored:
        width = out.shape[1]
        target = out[window.dy0 : window.dy1, width - window.dx1 : width - window.dx0]
    else:
        target = out[window.dy0 : window.dy1, window.dx0 : window.dx1]
    if crop.shape[:2] == target.shape[:2]:
        target[...] = (crop[:, ::-1] if mirrored else crop).reshape(target.shape)
    elif crop.dtype.kind in "iu" and crop.dtype.itemsize == 8:  # resize would make them int32
        size = (window.dx1 - window.dx0, window.dy1 - window.dy0)
        resized = cv2.resize(_bytes(crop), size, None, 0.0, 0.0, interpolation)
        made = _from_bytes(resized, crop.dtype, target.shape)
        target[...] = made[:, ::-1] if mirrored else made
    else:
        resize_into(crop, target, interpolation, mirrored=mirrored)


def resize_into(
    crop: np.ndarray, target: np.ndarray, interpolation: int, *, mirrored: bool = False
) -> None:
    """``cv2.resize(crop)`` to ``target``'s size, written into ``target`` (a view).

    The map is ``cv2.resize``'s: output pixel ``x`` reads source ``(x + 0.5) * s - 0.5``,
    ``s`` = source / output size, the crop's edges replicated. From OpenCV 5.1 (see
    :data:`_RESIZE_BY_WARP`) an ``HxWx3`` uint8 crop under ``INTER_LINEAR`` goes through
    ``cv2.warpAffine`` with that map as its inverse, reading the crop
    :func:`prefetched`; OpenCV resolves the position to a fraction of a pixel there, so
    a pixel may differ from resize's by a level. ``mirrored``: the result mirrored left to right;
    through warpAffine, folded into its map (pixel ``x`` of ``w`` reads what ``w - 1 - x``
    reads unmirrored: one resampling, nothing more per pixel), else resized, then copied
    mirrored.

    >>> out = np.zeros((2, 6, 3), np.uint8)
    >>> resize_into(np.full((4, 4, 3), 9, np.uint8), out[:, 1:5], cv2.INTER_LINEAR)
    >>> out[..., 0].tolist()
    [[0, 9, 9, 9, 9, 0], [0, 9, 9, 9, 9, 0]]
    >>> ramp = np.repeat(np.arange(0, 80, 10, dtype=np.uint8), 3).reshape(1, 8, 3)
    >>> resize_into(ramp, out[:1, 2:6], cv2.INTER_LINEAR, mirrored=True)
    >>> out[0, :, 0].tolist()
    [0, 9, 65, 45, 25, 5]
    """
    (rows, cols), shape = target.shape[:2], crop.shape
    if (
        _RESIZE_BY_WARP
        and interpolation == cv2.INTER_LINEAR
        and crop.dtype == np.uint8
        and len(shape) == 3
        and shape[2] == 3
    ):
        sx, sy = shape[1] / cols, shape[0] / rows
        # mirrored: x reads (cols - 1 - x + 0.5) * sx - 0.5
        row = [-sx, 0.0, (cols - 0.5) * sx - 0.5] if mirrored else [sx, 0.0, 0.5 * sx - 0.5]
        inverse = np.array([row, [0.0, sy, 0.5 * sy - 0.5]])
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        source = prefetched(crop)
        made = cv2.warpAffine(source, inverse, (cols, rows), target, flags, cv2.BORDER_REPLICATE)
    elif interpolation == cv2.INTER_AREA and len(shape) == 3 and shape[2] > 4:
        made = _resize_area(crop, (cols, rows))  # OpenCV's area resize takes 4 at a time
        target[...] = made[:, ::-1] if mirrored else made
        return
    elif mirrored:
        made = cv2.resize(crop, (cols, rows), None, 0.0, 0.0, interpolation)
        target[...] = made.reshape(target.shape)[:, ::-1]
        return
    else:
        made = cv2.resize(crop, (cols, rows), target, 0.0, 0.0, interpolation)
    if made is not target:  # OpenCV could not write in place (e.g. HxWx1)
        target[...] = made.reshape(target.shape)


def paint_image(
    layout: Layout,
    images: Sequence[np.ndarray],
    hw: tuple[int, int],
    values: tuple[float, ...],
    interpolation: int,
    rows: tuple[int, int] | None = None,
) -> np.ndarray:
    """The output image: the fills, then each visible window, mirrored if ``layout.flipped``.

    A flipped layout's fills and windows go straight to their mirrored places, each
    window resampled mirrored (:func:`paint_window`): no pass over the image to mirror it.

    Args:
        layout: Where each tile goes.
        images: The tiles' images, aligned with ``layout.windows``.
        hw: The canvas' ``(height, width)``.
        values: The fill, one value or one per channel.
        interpolation: The OpenCV interpolation flag.
        rows: Fill only the rows ``[y0, y1)`` (the windows' rows, at least): the caller
            sets the others (the colour pass sets them to the jittered grey, see
            :mod:`~rankaug.mosaic.colour`); ``None``: every row.

    Returns:
        The image.
    """
    out = canvas(images[0], hw)
    flipped, width = layout.flipped, hw[1]
    fills = layout.fills if rows is None else _on_rows(layout.fills, rows)
    if flipped:
        fill(out, [(y0, y1, width - x1, width - x0) for y0, y1, x0, x1 in fills], values)
    else:
        fill(out, fills, values)
    for window, image in zip(layout.windows, images, strict=True):
        kx = window.kx  # 1.0 where the crop and its place are as wide (ints: exact)
        if not kx:
            continue
        if flipped or (kx == 1.0 and window.ky == 1.0) or image.dtype.itemsize == 8:
            paint_window(out, image, window, interpolation, mirrored=flipped)
        else:  # paint_window's usual case written out: a resize
            crop = image[window.sy0 : window.sy1, window.sx0 : window.sx1]
            resize_into(crop, out[window.dy0 : window.dy1, window.dx0 : window.dx1], interpolation)
    return out


def _on_rows(rects: Sequence[Rect], rows: tuple[int, int]) -> list[Rect]:
    """The parts of ``rects`` on the rows ``[top, bottom)``, the empty ones left out.

    >>> _on_rows([(0, 10, 0, 4), (10, 12, 0, 4), (2, 3, 1, 2)], (3, 11))
    [(3, 10, 0, 4), (10, 11, 0, 4)]
    """
    top, bottom = rows
    kept = []
    for y0, y1, x0, x1 in rects:
        y0, y1 = (top if y0 < top else y0), (bottom if y1 > bottom else y1)
        if y1 > y0:
            kept.append((y0, y1, x0, x1))
    return kept


def warp_tile(
    out: np.ndarray,
    source: np.ndarray,
    tile: TileWarp,
    owners: np.ndarray,
    interpolation: int,
    border: int = cv2.BORDER_REPLICATE,
) -> None:
    """Warp the tile's crop into its region of ``out``, writing only the pixels it owns.

    The warp reads the crop :func:`prefetched`.

    Args:
        out: The output (image or mask), ``HxW`` or ``HxWxC``.
        source: The tile's image or mask.
        tile: Where it goes.
        owners: The owner of each output pixel.
        interpolation: An OpenCV interpolation flag (``INTER_NEAREST_EXACT`` is taken as
            the pixel-centre nearest neighbour, ``INTER_AREA`` as ``INTER_LINEAR``).
        border: How the warp reads past the tile's edge.
    """
    y0, y1, x0, x1 = tile.roi
    owned = owners[y0:y1, x0:x1] == tile.label
    target = out[y0:y1, x0:x1]
    cy0, cy1, cx0, cx1 = tile.crop
    crop = prefetched(source[cy0:cy1, cx0:cx1])
    method = _WARP_FLAGS.get(interpolation, interpolation)
    size = (x1 - x0, y1 - y0)
    name = crop.dtype.name
    if name in _WARPABLE and (method != cv2.INTER_NEAREST or _same_nearest(crop, name)):
        flags = method | cv2.WARP_INVERSE_MAP
        warped = _warp(crop, tile.inverse, size, flags, border).reshape(target.shape)
    else:  # nearest neighbour copies whole pixels: their bytes go through unchanged
        raw = _nearest_bytes(_bytes(crop), tile.inverse, size, border)
        warped = _from_bytes(raw, crop.dtype, target.shape)
    # cv2.copyTo writes in place (it has no 8-byte integers); np.copyto is slower
    copyable = target.dtype.itemsize < 8 or target.dtype.kind == "f"
    if copyable and cv2.copyTo(warped, owned.view(np.uint8), target) is target:
        return
    np.copyto(target, warped, where=owned[:, :, None] if target.ndim == 3 else owned)


def _same_nearest(crop: np.ndarray, name: str) -> bool:
    """Whether OpenCV's nearest warp of ``crop`` picks the pixels an 8-bit image's does."""
    return name in _SAME_NEAREST and (crop.ndim == 2 or crop.shape[2] in (1, 3, 4))


def _nearest_bytes(
    raw: np.ndarray, inverse: np.ndarray, size: tuple[int, int], border: int
) -> np.ndarray:
    """The nearest-neighbour warp of ``HxWxN`` uint8 bytes, as pixels of 1, 3 or 4 units.

    OpenCV's nearest warp of uint8 or uint16 pixels of 1, 3 or 4 channels picks the
    same source pixels as every 8-bit image's (see :data:`_SAME_NEAREST`), so the bytes
    go through as such pixels: in one warp where ``N`` is 1, 3 or 4 (or ``N / 2``, as
    uint16: an int64 or float64 mask is one 4-channel uint16 warp); else 4 bytes at a
    time where ``N`` is a multiple of 4 (numpy copies whole 4-byte words fast), or in
    groups of 4 units (of 3 where 2 or 6 would be left, of 1 for 2).

    >>> same = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    >>> for n in (2, 10, 12, 5):
    ...     raw = np.arange(2 * 3 * n, dtype=np.uint8).reshape(2, 3, n)
    ...     assert np.array_equal(_nearest_bytes(raw, same, (3, 2), cv2.BORDER_REPLICATE), raw)
    """
    height, width = raw.shape[:2]
    count = raw.shape[2]
    flags = cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP
    shape = (size[1], size[0])
    # (the last axis is whole: uint16 and uint32 views hold)
    units = raw if count in (1, 3, 4) or count % 2 else raw.view(np.uint16)
    channels = units.shape[2]
    if channels in (1, 3, 4):
        made = cv2.warpAffine(units, inverse, size, flags=flags, borderMode=border)
        return made.reshape(*shape, channels).view(np.uint8)
    out = np.empty((*shape, count), np.uint8)
    if count % 4 == 0:  # several channels of a 4- or 8-byte dtype: a warp per word
        words, into = raw.view(np.uint32), out.view(np.uint32)
        for k in range(count // 4):
            word = np.ascontiguousarray(words[:, :, k]).view(np.uint8)
            made = cv2.warpAffine(word.reshape(height, width, 4), inverse, size, flags=flags,
                                  borderMode=border)  # fmt: skip
            into[:, :, k] = made.view(np.uint32).reshape(shape)
        return out
    into = out.view(units.dtype)
    start = 0
    while start < channels:  # (rare: masks of several channels of a 1- or 2-byte dtype)
        left = channels - start
        step = 4 if left >= 4 and left != 6 else 3 if left >= 3 else 1
        group = np.ascontiguousarray(units[:, :, start : start + step])
        made = cv2.warpAffine(group, inverse, size, flags=flags, borderMode=border)
        into[:, :, start : start + step] = made.reshape(*shape, step)
        start += step
    return out


def _bytes(array: np.ndarray) -> np.ndarray:
    """``HxW[xC]`` as ``HxWx(C * itemsize)`` uint8: a pixel's bytes as its channels."""
    height, width = array.shape[:2]
    return array.view(np.uint8).reshape(height, width, -1)


def _from_bytes(raw: np.ndarray, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of :func:`_bytes`, shaped ``shape``."""
    return np.ascontiguousarray(raw).reshape(shape[0], shape[1], -1).view(dtype).reshape(shape)


def _resize_area(crop: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``cv2.resize(crop, size, INTER_AREA)`` of more than 4 channels, 4 at a time.

    OpenCV's area resize asserts at most 4 channels; each group of 4 is resized alone
    (the channels do not mix, so that is the same resampling) into its slice.
    """
    channels = crop.shape[2]
    out = np.empty((size[1], size[0], channels), crop.dtype)
    for k in range(0, channels, 4):
        group = np.ascontiguousarray(crop[:, :, k : k + 4])
        made = cv2.resize(group, size, None, 0.0, 0.0, cv2.INTER_AREA)
        out[:, :, k : k + 4] = made.reshape(size[1], size[0], -1)
    return out


def _warp(
    crop: np.ndarray, inverse: np.ndarray, size: tuple[int, int], flags: int, border: int
) -> np.ndarray:
    """``cv2.warpAffine`` of any channel count (cubic and Lanczos take 4 at a time)."""
    channels = 1 if crop.ndim == 2 else crop.shape[2]
    if channels <= 4 or flags & ~cv2.WARP_INVERSE_MAP in (cv2.INTER_NEAREST, cv2.INTER_LINEAR):
        return cv2.warpAffine(crop, inverse, size, flags=flags, borderMode=border)
    parts = [
        cv2.warpAffine(
            np.ascontiguousarray(crop[:, :, k : k + 4]), inverse, size, flags=flags,
            borderMode=border,
        ).reshape(size[1], size[0], -1)
        for k in range(0, channels, 4)
    ]  # fmt: skip
    return np.concatenate(parts, axis=2)


def paint_warp(
    warp: Warp,
    images: Sequence[np.ndarray],
    hw: tuple[int, int],
    values: tuple[float, ...],
    interpolation: int,
) -> np.ndarray:
    """The output image of a :class:`~rankaug.mosaic.fused.Warp`: filled, then each tile.

    Args:
        warp: Where each tile goes.
        images: The tiles' images, aligned with ``warp.tiles``.
        hw: The output's ``(height, width)``.
        values: The fill, one value or one per channel.
        interpolation: The OpenCV interpolation flag.

    Returns:
        The image.
    """
    out = canvas(images[0], hw)
    _set(out, values)
    for tile, image in zip(warp.tiles, images, strict=True):
        if tile.visible:
            warp_tile(out, image, tile, warp.owners, interpolation)
    return out


def mirror(image: np.ndarray) -> np.ndarray:
    """``image`` mirrored left to right, in place (OpenCV for up to 4 channels)."""
    if image.ndim == 2 or image.shape[2] <= 4:
        cv2.flip(image, 1, dst=image)
    else:  # numpy buffers the overlapping copy
        image[:] = image[:, ::-1]
    return image
