"""Targets: every tile's boxes, label fields, masks, polygons and keypoints, on the output.

Boxes of all tiles go through one vectorised pass (up to
:data:`~rankaug.boxes.FEW_BOXES` pixel boxes without filters or warp: row by row,
:mod:`~rankaug.mosaic.few_boxes`, the same arithmetic, faster for so few): converted
from ``box_format`` to pixel xyxy (once, on the way in), clipped to their tile image
(boxes that reach a little outside it, as real annotations do, but not an edge past
it by float rounding only, :func:`~rankaug.boxes.edge_tolerance`; ``clip=False``
makes that an error), mapped with their window's
affine map (:class:`~rankaug.mosaic.layout.Window`), clipped to the visible window and
filtered: holding the centre of an output pixel always (no box without pixels:
:mod:`~rankaug.mosaic.centres`; a box that a window cuts, or a scale shrinks, to a
sliver between two centres shows no pixel of its object), then ``min_area``,
``min_width``, ``min_height`` and ``min_visibility``, measured against the box's full
mapped size before any cropping; converted back to ``box_format`` (once, on the way
out). Every label field, instance mask and instance polygon (``segments``) stays aligned
with its box. A semantic ``mask`` moves with its pixels (nearest neighbour,
``fill_mask`` elsewhere); ``keypoints`` (x, y first) and their fields are kept where
they land on a visible window (:mod:`~rankaug.mosaic.keypoints`).

With an affine that rotates or shears (a :class:`~rankaug.mosaic.fused.Warp`), boxes
are clipped to their visible canvas window (and must stay wider and higher than
:data:`~rankaug.mosaic.centres.TOLERANCE` there), then their corners go through ``M``
(:func:`~rankaug.boxes.affine_xyxy`): the full box's enclosing box is the reference for
``min_visibility``, and the kept box is the enclosing box of the part of the clipped
box's image inside the output (never larger than YOLO's clipped enclosing box, and
empty where that image misses the output); the filters then apply as above, and a
kept box holds an output pixel's centre whose preimage lies in the clipped box (the
pixels its mask and object show). Masks are
warped with nearest neighbour and kept where their tile owns the pixels, keypoints
where they lie in their tile's visible window and on a pixel their tile owns. An
output painted mirrored (an axis-aligned affine's flip or the grid's, see
:mod:`~rankaug.mosaic.fused`) has its boxes, polygons, masks and keypoints mirrored.

**With instance polygons** (``segments``, pixel ``x, y``) **the boxes come from the
polygons**, as ultralytics derives boxes from segments. The boxes are still converted
and checked (clipped to their tile image or refused) as above, but not mapped: each
polygon goes through its tile's map (:mod:`~rankaug.mosaic.outlines`), clipped to the
pixels of the tile's visible window (and, under a warp, of its visible canvas window,
through ``M``, of the output), and its box is the box of its object's pixels, as every
wrapper gives it (:func:`~rankaug.polygons.pixel_box`; the mosaic's way in
:func:`~rankaug.mosaic.outlines.pixel_boxes`): those its polygon (what shows of it, as
cut, before any resampling, see below) draws in its tile, mapped as boxes are, or under
a warp those the cut output polygon draws. A mosaic that moves nothing moves no box. The filters
apply to that box as above, ``min_visibility`` against the box of the whole polygon
by the same rule (nothing clipped: a polygon that shows whole has visibility 1). An
instance whose polygon has nothing left is dropped with its label fields and mask: its
object does not show. The output's polygons take the main sample's form
(:func:`~rankaug.polygons.gather`): an ``(N, K, 2)`` array again, or a list. In an
array a cut polygon is resampled to ``K`` points (:func:`~rankaug.polygons.resample`):
points spread along its edges where the cut left fewer, else those that matter least
dropped, the points the cut added along a window's edge first and its extremes last,
so that it keeps its bounds (all but a triangle, ``K = 3``, cut to four extremes); its
box stays that of the cut polygon's pixels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from rankaug._multi.fields import join, join_kept
from rankaug._multi.tiles import Tile
from rankaug.boxes import (
    FEW_BOXES,
    affine_xyxy,
    all_inside,
    from_xyxy,
    mirror_xyxy,
    to_pixel_xyxy,
    validate_xyxy,
)
from rankaug.boxes.whole import int_box_dtype, whole_boxes, whole_points
from rankaug.mosaic import centres
from rankaug.mosaic.centres import TOLERANCE
from rankaug.mosaic.config import MosaicConfig
from rankaug.mosaic.few_boxes import row_by_row
from rankaug.mosaic.fused import TileWarp, Warp
from rankaug.mosaic.keypoints import map_keypoints
from rankaug.mosaic.layout import Layout, Window
from rankaug.mosaic.masks import instance_masks, semantic_mask
from rankaug.mosaic.outlines import map_polygons, pixel_boxes
from rankaug.mosaic.paint import mirror
from rankaug.polygons import POLYGONS, Polygons, gather, pack

__all__ = ["TOLERANCE", "map_targets"]

_NO_BOXES: Final = np.zeros((0, 4))
_FLOAT32: Final = np.dtype(np.float32)  # float32 boxes cast here, not by the adapter (see _boxes)
_NO_KEEP: Final = np.zeros(0, dtype=bool)


def map_targets(
    config: MosaicConfig,
    layout: Layout | Warp,
    tiles: Sequence[Tile],
    present: Mapping[str, Any],
) -> dict[str, Any]:
    """Map every tile's targets onto the output and gather those the main sample has.

    Boxes, label fields, masks, instance polygons (``segments``) and keypoints; with
    polygons each box is the box of its object's pixels, and an instance whose polygon
    does not show is dropped with everything aligned with it (see the module
    docstring).

    Args:
        config: The mosaic's configuration.
        layout: Where each tile went (a :class:`Warp` for an affine that rotates or
            shears).
        tiles: The tiles, main first, aligned with ``layout.windows``.
        present: The main sample's targets (its adapter's data): ``bboxes`` brings
            every label field along; without it only the label fields it has are given.
            Integer boxes come back whole, integer keypoints whole numbers
            (:func:`~rankaug.boxes.whole.whole_points`), on every draw; float32 boxes float32.

    Returns:
        The output's targets by key.

    Raises:
        ValueError: If a box is invalid for its tile (the message names the tile), or
            integer boxes or keypoints cannot be whole (:mod:`~rankaug.boxes.whole`).
    """
    warp: Warp | None = None
    places: Sequence[Window | TileWarp]
    windows: list[Window] | None = None
    if isinstance(layout, Warp):
        warp, places = layout, layout.tiles
    else:
        places = windows = layout.windows
    counts, total = [], 0  # (a loop: a comprehension is a function, and sum() a call)
    for tile in tiles:
        counts.append(count := len(tile.boxes))
        total += count
    main = tiles[0]
    data: dict[str, Any] = {}
    width = config.image_hw[1]
    flipped = not isinstance(layout, Warp) and layout.flipped  # painted mirrored
    flip_width = width if flipped else None
    keep: np.ndarray | list[bool] | None  # None: all kept; a list: row by row, some not
    dtype = _FLOAT32 if getattr(present.get("bboxes"), "dtype", None) is _FLOAT32 else None
    if main.segments is not None:
        keep, kept, polygons = _outlined(config, places, warp, tiles, counts)
        data[POLYGONS] = pack(polygons.mirrored(width) if flipped else polygons)
        kept = kept if flip_width is None else mirror_xyxy(kept, flip_width)
    elif total:
        keep, kept = _boxes(config, places, tiles, counts, total, warp, flip_width, windows, dtype)
    else:
        keep, kept = _NO_KEEP, _NO_BOXES
    with_boxes = "bboxes" in present
    if with_boxes:
        box_dtype = int_box_dtype(present["bboxes"])  # integers: whole pixels, every draw
        if box_dtype is not None:  # (floats: as they are)
            kept = whole_boxes(kept, box_dtype, config.image_hw, config.box_format, main.index)
        if config.box_format != "pascal_voc":
            kept = from_xyxy(kept, config.box_format, config.image_hw)
        data["bboxes"] = kept if dtype is None or kept.dtype is dtype else kept.astype(dtype)
    for field in config.targets.label_fields:
        if with_boxes or field in present:  # the main sample's dtype, checked (join)
            values = []
            for tile in tiles:
                values.append(tile.fields[field])
            if type(keep) is list:  # the rows' (some dropped): only the kept entries joined
                data[field] = join_kept(field, values, keep, tiles)
                continue
            joined = join(field, values, tiles)  # a new array
            data[field] = joined if keep is None or len(joined) == len(kept) else joined[keep]
    if main.mask is not None:
        data["mask"] = semantic_mask(config, places, warp, tiles, main.mask)
        if flipped:
            data["mask"] = mirror(data["mask"])
    if main.masks is not None:
        data["masks"] = instance_masks(config, places, warp, tiles, keep, counts)
        if flipped:
            data["masks"] = np.ascontiguousarray(data["masks"][:, :, ::-1])
    if main.keypoints is not None:
        points = map_keypoints(config, places, warp, tiles, flipped)
        dtype = int_box_dtype(present.get("keypoints"))  # integers: whole numbers, every draw
        points["keypoints"] = whole_points(points["keypoints"], dtype, config.image_hw, main.index)
        data.update(points)
    return data


def _boxes(
    config: MosaicConfig,
    places: Sequence[Window | TileWarp],
    tiles: Sequence[Tile],
    counts: list[int],
    total: int,
    warp: Warp | None,
    flip_width: int | None = None,
    windows: Sequence[Window] | None = None,
    dtype: np.dtype[Any] | None = None,
) -> tuple[np.ndarray | list[bool] | None, np.ndarray]:
    """All tiles' boxes in one pass: which to keep (``None``: all), and the kept ones.

    The kept ones in pixel xyxy, mirrored in an output ``flip_width`` wide when given.
    Boxes are checked by :func:`_pixel_boxes`: a box inside its image (an edge past it
    by float rounding, :func:`~rankaug.boxes.edge_tolerance`, is on it) is taken as it
    is, and the window's map and clip bound it; a box further out is clipped to its
    image (``clip=False``: refused), an invalid one refused, naming the index and row.
    A few pixel boxes under an axis-aligned map without filters go row by row
    (:func:`~rankaug.mosaic.few_boxes.row_by_row`, the same arithmetic; ``windows``: the
    places, when they are windows, ``dtype`` its array's, float64 if ``None``: float32
    at once, no cast). ``total`` is the sum of ``counts``.
    """
    plain = not config.filters and config.box_format == "pascal_voc"
    if windows is not None and plain and total <= FEW_BOXES:
        found = row_by_row(windows, tiles, flip_width, dtype)
        if found is not None:
            return found
    # per box: image width, height, then its window's map and edges (see Window.row)
    table = np.array([p.row for p in places], np.float64).repeat(counts, axis=0)
    boxes = _pixel_boxes(config, table, tiles, counts)
    full = boxes * table[:, 2:6] + table[:, 6:10]  # source pixels -> output (canvas) pixels
    clipped = np.minimum(np.maximum(full, table[:, 10:14]), table[:, 14:18])
    alive, canvas = None, clipped
    if warp is not None:  # canvas pixels -> output pixels
        alive = (clipped[:, 2:] - clipped[:, :2] > TOLERANCE).all(axis=1)
        height, width = config.image_hw
        full = affine_xyxy(full, warp.matrix)
        clipped = affine_xyxy(clipped, warp.matrix, (0.0, 0.0, float(width), float(height)))
    # each kept box holds a pixel centre (rankaug.mosaic.centres): no box without pixels
    if warp is None and not config.filters:  # (which makes it wider than TOLERANCE)
        keep = centres.aligned(clipped)
    elif warp is None:
        keep = centres.filtered(config, clipped, full) & centres.aligned(clipped)
    else:  # a centre whose preimage lies in the box on the canvas
        assert alive is not None
        keep = centres.filtered(config, clipped, full) & alive
        keep[keep] = centres.warped(canvas[keep], clipped[keep], warp.matrix, config.image_hw)
    kept = clipped[keep]
    return keep, kept if flip_width is None else mirror_xyxy(kept, flip_width)


def _outlined(
    config: MosaicConfig,
    places: Sequence[Window | TileWarp],
    warp: Warp | None,
    tiles: Sequence[Tile],
    counts: list[int],
) -> tuple[np.ndarray, np.ndarray, Polygons]:
    """With polygons: which boxes to keep, the kept ones (pixel xyxy) and their polygons.

    The boxes are checked as without polygons; each kept box is the box of its output
    polygon's object's pixels (:func:`~rankaug.mosaic.outlines.pixel_boxes`), filtered
    against that of its whole mapped polygon.
    """
    main = tiles[0]
    assert main.segments is not None
    # in the main sample's form (the dtype of a partner's when it has none)
    typed = [t.segments for t in tiles if t.segments is not None and t.segments.dtype is not None]
    other = typed[0] if typed else None
    if not any(counts):
        return _NO_KEEP, _NO_BOXES, gather([], main.segments, other)
    table = np.array([p.row[:2] for p in places], np.float64).repeat(counts, axis=0)
    _pixel_boxes(config, table, tiles, counts)  # checked (clipped or refused), not used
    mapped = map_polygons(places, warp, tiles, config.image_hw)
    shown = np.array([p is not None for p in mapped.polygons], dtype=bool)
    shapes = [p for p in mapped.polygons if p is not None]
    polygons = gather(shapes, main.segments, other)
    # the boxes of the cut polygons' pixels: those resampled to fewer points keep their
    # extremes (rankaug.polygons.resample), not always all of their pixels
    bounds, points = mapped.bounds[shown], polygons.points
    owners = np.repeat(np.arange(len(places)), counts)[shown]
    boxes, whole = pixel_boxes(places, warp, owners, bounds, mapped.full[shown], polygons.dtype)
    chosen = centres.filtered(config, boxes, whole)
    keep = shown
    keep[shown] = chosen
    kept = Polygons(tuple(p for p, c in zip(points, chosen.tolist(), strict=True) if c),
                    polygons.points_per, polygons.dtype)  # fmt: skip
    return keep, boxes[chosen], kept


def _pixel_boxes(
    config: MosaicConfig, table: np.ndarray, tiles: Sequence[Tile], counts: list[int]
) -> np.ndarray:
    """All tiles' boxes in pixel xyxy, checked against their images.

    ``table`` holds a row per box, its image's width and height first. One cheap check
    per tile (:func:`~rankaug.boxes.all_inside`) covers the usual case of boxes inside
    their images; only when one fails does each tile go through
    :func:`~rankaug.boxes.validate_xyxy`.
    """
    boxes = np.concatenate([t.boxes for t in tiles], dtype=np.float64)  # float32 as read
    if config.box_format != "pascal_voc":  # the way in: pixel xyxy, per tile size
        boxes = to_pixel_xyxy(boxes, config.box_format, table[:, :2])
    start = 0
    for tile, count in zip(tiles, counts, strict=True):
        height, width = tile.image.shape[:2]
        if count and not all_inside(boxes[start : start + count], width, height):
            return _validated(config, tiles, counts, boxes)
        start += count
    return boxes


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
                clip=config.targets.clip,
            )
        )
        start += count
    return np.concatenate(checked)
