"""Targets: every tile's boxes, label fields, masks and keypoints, mapped onto the output.

Boxes of all tiles go through one vectorised pass: converted from ``box_format`` to
pixel xyxy (once, on the way in), clipped to their tile image (boxes that reach a
little outside it, as real annotations do; ``clip=False`` makes that an error),
mapped with their window's affine map (:class:`~rankaug.mosaic.layout.Window`),
clipped to the visible window and filtered: wider and higher than :data:`TOLERANCE`
(a thousandth of an output pixel) always, then ``min_area``, ``min_width``, ``min_height`` and
``min_visibility``, measured against the box's full mapped size before any cropping;
converted back to ``box_format`` (once, on the way out). Every label field and
instance mask stays aligned with its box. A semantic ``mask`` moves with its pixels
(nearest neighbour, ``fill_mask`` elsewhere); ``keypoints`` (x, y first) and their
fields are kept where they land on a visible window.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from typing import Any, Final, cast

import cv2
import numpy as np

from rankaug.boxes import from_xyxy, keep_mask, to_pixel_xyxy, validate_xyxy
from rankaug.mosaic.config import MosaicConfig
from rankaug.mosaic.layout import Layout, Window
from rankaug.mosaic.paint import paint_window
from rankaug.mosaic.tiles import Tile

__all__ = ["TOLERANCE", "map_targets"]

TOLERANCE: Final = 1e-3
"""The width and height (output pixels) a box must exceed to be kept at all.

Float error leaves slivers about ``1e-14`` pixels wide where a box meets a window's
edge; a thousandth of a pixel drops them, and what is kept stays wider than zero when
the boxes go back into float32 (the error there is below ``5e-4`` for coordinates up
to 8192).
"""

_NO_BOXES: Final = np.zeros((0, 4))
_NO_KEEP: Final = np.zeros(0, dtype=bool)
# Columns: x0, y0, w - x1, h - y1, x1 - x0, y1 - y0, w - x0, h - y0, x1, y1 from rows
# x0, y0, x1, y1, w, h (see _pixel_boxes).
_MARGINS: Final = np.array(
    [
        [1, 0, 0, 0, -1, 0, -1, 0, 0, 0],
        [0, 1, 0, 0, 0, -1, 0, -1, 0, 0],
        [0, 0, -1, 0, 1, 0, 0, 0, 1, 0],
        [0, 0, 0, -1, 0, 1, 0, 0, 0, 1],
        [0, 0, 1, 0, 0, 0, 1, 0, 0, 0],
        [0, 0, 0, 1, 0, 0, 0, 1, 0, 0],
    ],
    dtype=np.float64,
)


def map_targets(
    config: MosaicConfig, layout: Layout, tiles: Sequence[Tile], present: Collection[str]
) -> dict[str, Any]:
    """Map every tile's targets onto the output and gather those the main sample has.

    Args:
        config: The mosaic's configuration.
        layout: Where each tile went.
        tiles: The tiles, main first, aligned with ``layout.windows``.
        present: The target keys of the main sample (its adapter's data): ``bboxes``
            brings every label field along; without it only the label fields it has are
            given.

    Returns:
        The output's targets by key.

    Raises:
        ValueError: If a box is invalid for its tile (the message names the tile).
    """
    windows = layout.windows
    counts = [len(t.boxes) for t in tiles]
    if any(counts):
        keep, kept = _boxes(config, windows, tiles, counts)
    else:
        keep, kept = _NO_KEEP, _NO_BOXES
    data: dict[str, Any] = {}
    with_boxes = "bboxes" in present
    if with_boxes:
        if config.box_format != "pascal_voc":
            kept = from_xyxy(kept, config.box_format, config.canvas_hw)
        data["bboxes"] = kept
    for field in config.label_fields:
        if with_boxes or field in present:
            data[field] = np.concatenate([t.fields[field] for t in tiles])[keep]
    main = tiles[0]
    if main.mask is not None:
        data["mask"] = _semantic_mask(config, windows, tiles, main.mask)
    if main.masks is not None:
        data["masks"] = _instance_masks(config, windows, tiles, keep, counts)
    if main.keypoints is not None:
        points, fields = zip(
            *(_keypoints(w, t) for w, t in zip(windows, tiles, strict=True)), strict=True
        )
        data["keypoints"] = np.concatenate(points)
        for field in config.keypoint_fields:
            data[field] = np.concatenate([f[field] for f in fields])
    return data


def _boxes(
    config: MosaicConfig, windows: Sequence[Window], tiles: Sequence[Tile], counts: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """All tiles' boxes in one pass: which to keep, and the kept ones (pixel xyxy).

    One check covers the usual case of boxes inside their images; only when it fails
    does each tile go through :func:`~rankaug.boxes.validate_xyxy`, which clips what
    reaches a little outside its image or raises an error naming the index and row.
    """
    # per box: image width, height, then its window's map and edges (see Window.row)
    table = np.array([w.row for w in windows], np.float64).repeat(counts, axis=0)
    boxes = np.concatenate([t.boxes for t in tiles])
    if config.box_format != "pascal_voc":  # the way in: pixel xyxy, per tile size
        boxes = to_pixel_xyxy(boxes, config.box_format, table[:, :2])
    # One product gives x0, y0, w - x1, h - y1, x1 - x0, y1 - y0 (all >= 0) and
    # w - x0, h - y0, x1, y1 (all > 0: not entirely outside); NaN fails both.
    margins = (np.concatenate((boxes, table[:, :2]), axis=1) @ _MARGINS).min(axis=0).tolist()
    if not (min(margins[:6]) >= 0 and min(margins[6:]) > 0):
        boxes = _validated(config, tiles, counts, boxes)
    full = boxes * table[:, 2:6] + table[:, 6:10]  # source pixels -> output pixels
    clipped = np.minimum(np.maximum(full, table[:, 10:14]), table[:, 14:18])
    if config.filters:
        area = (full[:, 2] - full[:, 0]) * (full[:, 3] - full[:, 1])
        keep = keep_mask(
            clipped,
            area,
            min_area=config.min_area,
            min_visibility=config.min_visibility,
            min_width=config.min_width,
            min_height=config.min_height,
            tolerance=TOLERANCE,
        )
    else:  # keep_mask's rule without thresholds
        keep = cast(np.ndarray, (clipped[:, 2:] - clipped[:, :2] > TOLERANCE).all(axis=1))
    return keep, clipped[keep]


def _validated(
    config: MosaicConfig, tiles: Sequence[Tile], counts: list[int], boxes: np.ndarray
) -> np.ndarray:
    """Validate (clip or refuse) each tile's pixel boxes against its image."""
    checked, start = [], 0
    for tile, count in zip(tiles, counts, strict=True):
        checked.append(
            validate_xyxy(
                boxes[start : start + count],
                tile.image.shape[:2],
                name=f"dataset[{tile.index}] bboxes (as pixel x_min, y_min, x_max, y_max)",
                clip=config.clip,
            )
        )
        start += count
    return np.concatenate(checked)


def _semantic_mask(
    config: MosaicConfig, windows: Sequence[Window], tiles: Sequence[Tile], like: np.ndarray
) -> np.ndarray:
    height, width = config.canvas_hw
    out = np.full((height, width, *like.shape[2:]), config.fill_mask, like.dtype)
    for window, tile in zip(windows, tiles, strict=True):
        if window.kx and tile.mask is not None:
            paint_window(out, tile.mask, window, cv2.INTER_NEAREST_EXACT)
    return out


def _instance_masks(
    config: MosaicConfig,
    windows: Sequence[Window],
    tiles: Sequence[Tile],
    keep: np.ndarray,
    counts: list[int],
) -> np.ndarray:
    height, width = config.canvas_hw
    dtype = cast(np.ndarray, tiles[0].masks).dtype
    ends = list(itertools.accumulate(counts))
    kept = []
    for window, tile, start, end in zip(windows, tiles, [0, *ends[:-1]], ends, strict=True):
        sources = tile.masks
        assert sources is not None
        for source in sources[keep[start:end]]:
            target = np.zeros((height, width), dtype=dtype)
            paint_window(target, source, window, cv2.INTER_NEAREST_EXACT)
            kept.append(target)
    return np.stack(kept) if kept else np.zeros((0, height, width), dtype=dtype)


def _keypoints(window: Window, tile: Tile) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    points = tile.keypoints
    assert points is not None
    if window.kx == 0.0:
        keep = np.zeros(len(points), dtype=bool)
    else:
        moved = points.copy()
        moved[:, :2] = window.map_xy(points[:, :2])
        x, y = moved[:, 0], moved[:, 1]
        keep = (x >= window.dx0) & (x < window.dx1) & (y >= window.dy0) & (y < window.dy1)
        points = moved
    return points[keep], {k: v[keep] for k, v in tile.keypoint_fields.items()}
