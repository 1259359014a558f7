"""Masks on the output: a semantic mask and instance masks moved with their tiles' pixels.

Nearest neighbour, through the same window or warp as the tile's pixels
(:mod:`~rankaug.mosaic.paint`), so each mask pixel stays on its object's pixel.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import cast

import cv2
import numpy as np

from rankaug._multi.tiles import Tile
from rankaug.mosaic.config import MosaicConfig
from rankaug.mosaic.fused import TileWarp, Warp
from rankaug.mosaic.layout import Window
from rankaug.mosaic.paint import paint_window, warp_tile

__all__ = ["instance_masks", "semantic_mask"]


def _paint(
    out: np.ndarray, source: np.ndarray, place: Window | TileWarp, warp: Warp | None
) -> None:
    """Nearest-neighbour ``source`` into ``out`` where its tile goes (nothing if hidden)."""
    if isinstance(place, Window):
        if place.kx:
            paint_window(out, source, place, cv2.INTER_NEAREST_EXACT)
    elif warp is not None and place.visible:
        warp_tile(out, source, place, warp.owners, cv2.INTER_NEAREST)


def semantic_mask(
    config: MosaicConfig,
    places: Sequence[Window | TileWarp],
    warp: Warp | None,
    tiles: Sequence[Tile],
    like: np.ndarray,
) -> np.ndarray:
    """The semantic mask on the output: each tile's where it goes, ``fill_mask`` elsewhere."""
    height, width = config.image_hw
    out = np.full((height, width, *like.shape[2:]), config.layout.fill_mask, like.dtype)
    for place, tile in zip(places, tiles, strict=True):
        if tile.mask is not None:
            _paint(out, tile.mask, place, warp)
    return out


def instance_masks(
    config: MosaicConfig,
    places: Sequence[Window | TileWarp],
    warp: Warp | None,
    tiles: Sequence[Tile],
    keep: np.ndarray | list[bool] | None,
    counts: list[int],
) -> np.ndarray:
    """The kept boxes' instance masks on the output (``keep``: of all tiles' boxes; all)."""
    keep = np.array(keep, dtype=bool) if type(keep) is list else keep  # (the rows' list)
    height, width = config.image_hw
    dtype = cast(np.ndarray, tiles[0].masks).dtype
    ends = list(itertools.accumulate(counts))
    kept = []
    for place, tile, start, end in zip(places, tiles, [0, *ends[:-1]], ends, strict=True):
        sources = tile.masks
        assert sources is not None
        for source in sources if keep is None else sources[keep[start:end]]:
            target = np.zeros((height, width), dtype=dtype)
            _paint(target, source, place, warp)
            kept.append(target)
    return np.stack(kept) if kept else np.zeros((0, height, width), dtype=dtype)
