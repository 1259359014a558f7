"""A crop read into cache in order before warpAffine reads it in blocks."""

from __future__ import annotations

from typing import Final

import numpy as np

__all__ = ["prefetched"]

_LINE: Final = 64  # bytes in a cache line


def prefetched(crop: np.ndarray) -> np.ndarray:
    """``crop`` itself, once one value of each of its cache lines has been read, in order.

    warpAffine reads its source in small blocks, an access pattern the processor's
    prefetcher does not follow: from memory that is not in cache (a mapped cache file,
    a large dataset in memory, a tile decoded before the others) every block waits on
    memory. One sequential pass over the crop's rows, a value per 64-byte line, streams
    it into cache first, and the warp then reads it there: the same pixels, in about two
    thirds of the time where the tiles are not in cache (see the speed page's notes).
    A copy (the crop staged, as before) did the same and also wrote every line once
    more: in the e2e pipeline with the cache the pass costs 37 µs per sample less.

    >>> crop = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)[:, 1:3]
    >>> prefetched(crop) is crop
    True
    """
    if crop.ndim >= 2 and crop.size:
        step = max(1, _LINE // (abs(crop.strides[1]) or 1))  # pixels per cache line
        touched = crop[:, ::step]
        # the ufunc's own reduce: ndarray.max goes through a Python function of numpy's
        np.maximum.reduce(touched[..., 0] if touched.ndim == 3 else touched, axis=None)
    return crop
