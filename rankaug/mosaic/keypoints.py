"""Keypoints: every tile's, on the output, with their fields.

``keypoints`` (``(K, 2+)``, pixel ``x, y`` first) go through their tile's map and are
kept where they land on its visible window (half-open: ``dx0 <= x < dx1``, in the
unmirrored output: a flip keeps the same keypoints, mirrored); under a
warp (:class:`~rankaug.mosaic.fused.Warp`) where their canvas point lies in the tile's
visible canvas window, and on an output pixel the tile owns. A flipped output (the
affine's ``flip``) first reorders each tile's keypoints by the affine's ``flip_index``
(groups of ``len(flip_index)``, one per instance: left and right swap, as ultralytics'
``flip_idx`` does, so that row ``j`` of a group is still joint ``j``; whole groups, one
per box where the tile has boxes, checked on every output while ``flip > 0``); their
``keypoint_fields`` stay with the rows (a joint id still names the row's joint, an
instance id its instance), while the columns after ``x, y`` (a visibility) move with
their points. An output painted mirrored (an axis-aligned flip) mirrors those kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankaug._multi.fields import join
from rankaug._multi.tiles import Tile
from rankaug.mosaic.config import MosaicConfig
from rankaug.mosaic.fused import TileWarp, Warp
from rankaug.mosaic.layout import Window

__all__ = ["map_keypoints", "unindexed_flip"]


def unindexed_flip(config: MosaicConfig) -> str | None:
    """The warning for a flip of keypoints without ``flip_index``, or ``None``.

    A flip without ``flip_index`` mirrors each keypoint and keeps the rows in order:
    under ultralytics' pose layout (``J`` joints per instance) the left joints come out
    on the right, labelled left. ultralytics turns ``fliplr`` off, with a warning,
    where pose data has no ``flip_idx``; :class:`~rankaug.MosaicDataset` warns (a
    :class:`~rankaug.RankaugWarning`, once) at its first sample with keypoints.
    """
    flip, index = _flip_of(config)
    kind = "layout=rankaug.MosaicGrid" if config.affine is None else "affine=rankaug.MosaicAffine"
    owner = f"{kind}(flip={flip})"
    if not flip or index is not None:
        return None
    return (
        f"{owner} mirrors keypoints without flip_index: each point keeps its row, so "
        "the left and right joints of an instance trade places (a left eye comes out "
        "on the right, still in the left eye's row; ultralytics turns fliplr off where "
        "pose data has no flip_idx). Pass flip_index= (ultralytics' flip_idx: which "
        "joint each becomes), flip_index=(0,) for keypoints that have no left and "
        "right (one per instance), or flip=0"
    )


def map_keypoints(
    config: MosaicConfig,
    places: Sequence[Window | TileWarp],
    warp: Warp | None,
    tiles: Sequence[Tile],
    flipped: bool,
) -> dict[str, np.ndarray]:
    """All tiles' keypoints on the output, with their ``keypoint_fields``.

    Args:
        config: The mosaic's configuration.
        places: Where each tile went, aligned with ``tiles``.
        warp: The :class:`~rankaug.mosaic.fused.Warp` of an affine that rotates or
            shears, else ``None``.
        tiles: The tiles, main first; each has ``keypoints``.
        flipped: Whether the output is painted mirrored (an axis-aligned flip).

    Returns:
        ``keypoints`` and each keypoint field, concatenated over the tiles.

    Raises:
        ValueError: If the mosaic may flip and reorder keypoints (``flip > 0`` with a
            ``flip_index``), and a tile's are not whole groups of ``len(flip_index)``,
            or it has boxes and not one group per box (the message names the tile);
            checked on every output, flipped or not.
    """
    groups = _flip_groups(config)
    if groups is not None:
        for tile in tiles:
            _check_groups(tile, groups)
    order = _flip_order(config, warp, flipped)
    mirrored = config.image_hw[1] if flipped else None
    moved = [_keypoints(places[k], tile, warp, order, mirrored) for k, tile in enumerate(tiles)]
    data = {"keypoints": np.concatenate([m[0] for m in moved])}
    for field in config.targets.keypoint_fields:
        data[field] = join(field, [m[1][field] for m in moved], tiles)
    return data


def _flip_order(config: MosaicConfig, warp: Warp | None, flipped: bool) -> tuple[int, ...] | None:
    """The affine's ``flip_index`` when this output is flipped, else ``None``."""
    index = _flip_of(config)[1]
    if index is None:
        return None
    if flipped:
        return index
    record = None if warp is None else warp.record.get("affine")
    return index if record is not None and record["flip"] else None


def _flip_of(config: MosaicConfig) -> tuple[float, tuple[int, ...] | None]:
    """The mosaic's flip probability and ``flip_index``: the affine's, else the grid's."""
    affine = config.affine
    if affine is None:
        return config.layout.flip, config.layout.flip_index
    return affine.flip, affine.flip_index


def _flip_groups(config: MosaicConfig) -> tuple[int, ...] | None:
    """The ``flip_index`` when the mosaic may flip (``flip > 0``), else ``None``."""
    flip, index = _flip_of(config)
    return index if flip else None


def _check_groups(tile: Tile, order: tuple[int, ...]) -> None:
    """Refuse keypoints a flip would reorder across instances.

    The groups of ``len(order)`` are the instances: whole groups, and, where the tile
    has boxes, one per box (ultralytics' pose layout), so that a ``flip_index`` of the
    wrong length, dividing the count by chance, does not swap joints across instances.
    """
    points = tile.keypoints
    count, size, boxes = (0 if points is None else len(points)), len(order), len(tile.boxes)
    if count % size:
        raise ValueError(
            f"dataset[{tile.index}] keypoints has {count} points, not whole groups of "
            f"len(flip_index) = {size} (one group per instance)"
        )
    if size > 1 and count and boxes and count != boxes * size:
        raise ValueError(
            f"dataset[{tile.index}] keypoints has {count} points for {boxes} boxes, not "
            f"one group of len(flip_index) = {size} per box: a flip would swap joints "
            "across instances. flip_index must list each instance's joints (ultralytics' "
            "flip_idx, kpt_shape[0] long); keypoints not grouped by box cannot be reordered: "
            "pass flip_index=(0,) (each keeps its row, left and right joints trading "
            "places) or flip=0"
        )


def _swapped(tile: Tile, order: tuple[int, ...]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The tile's keypoints, each group of ``len(order)`` reordered by it, and its fields.

    The fields stay in place: they describe the rows (row ``j`` of a group is joint
    ``j`` before and after), so a joint id carried in one names the joint its row holds
    now (the left eye, where the right one was), as regrouping by it needs. The groups
    were checked (:func:`_check_groups`).
    """
    points = tile.keypoints
    assert points is not None
    count, size = len(points), len(order)
    index = (np.arange(count) // size * size + np.tile(order, count // size)).astype(np.intp)
    return points[index], tile.keypoint_fields


def _keypoints(
    window: Window | TileWarp,
    tile: Tile,
    warp: Warp | None,
    order: tuple[int, ...] | None,
    mirrored: int | None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A tile's keypoints on the output (``mirrored``: the width of a mirrored output)."""
    if not isinstance(window, Window):
        assert warp is not None
        return _warped_keypoints(window, tile, warp, order)
    points = tile.keypoints
    assert points is not None
    fields = tile.keypoint_fields
    if order is not None:  # flipped: left and right swap
        points, fields = _swapped(tile, order)
    if window.kx == 0.0:
        keep = np.zeros(len(points), dtype=bool)
    else:
        moved = points.copy()
        moved[:, :2] = window.map_xy(points[:, :2])
        x, y = moved[:, 0], moved[:, 1]
        keep = (x >= window.dx0) & (x < window.dx1) & (y >= window.dy0) & (y < window.dy1)
        if mirrored is not None:  # kept as unmirrored, then mirrored: the same ones
            moved[:, 0] = mirrored - x
        points = moved
    return points[keep], {k: v[keep] for k, v in fields.items()}


def _warped_keypoints(
    tile: TileWarp, source: Tile, warp: Warp, order: tuple[int, ...] | None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    points = source.keypoints
    assert points is not None
    fields = source.keypoint_fields
    if order is not None:  # flipped: left and right swap
        points, fields = _swapped(source, order)
    if not tile.visible:
        keep = np.zeros(len(points), dtype=bool)
    else:
        kx, ky, ox, oy = tile.placement
        x0, y0, x1, y1 = tile.window
        cx, cy = points[:, 0] * kx + ox, points[:, 1] * ky + oy  # on the canvas
        keep = (cx >= x0) & (cx < x1) & (cy >= y0) & (cy < y1)
        (a, b, c), (d, e, f) = warp.matrix
        moved = points.copy()
        moved[:, 0] = x = a * cx + b * cy + c
        moved[:, 1] = y = d * cx + e * cy + f
        height, width = warp.owners.shape
        record = warp.record.get("affine")
        flipped = record is not None and record["flip"]
        u = width - x if flipped else x  # tested unmirrored: a flip keeps the same ones
        keep &= (u >= 0) & (u < width) & (y >= 0) & (y < height)
        rows = np.minimum(y[keep].astype(np.int64), height - 1)
        cols = np.minimum(u[keep].astype(np.int64), width - 1)
        if flipped:  # the pixel under it, unmirrored, mirrored
            cols = width - 1 - cols
        keep[keep] = warp.owners[rows, cols] == tile.label  # on a pixel its tile owns
        points = moved
    return points[keep], {k: v[keep] for k, v in fields.items()}
