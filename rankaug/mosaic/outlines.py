"""Instance polygons (``segments``): every tile's, mapped onto the output with its boxes.

A polygon goes through exactly the map its box goes through (:mod:`rankaug.polygons`
for the representation: pixel ``x, y`` whatever ``box_format``):

* for a :class:`~rankaug.mosaic.layout.Window` (a plain mosaic, a letterbox,
  ``canvas="yolo"``, and a fused affine that neither rotates nor shears): the window's
  affine map (the boxes' ``x -> k * x + b``, the map ``cv2.resize`` applies), then
  :func:`~rankaug.polygons.clip` to the output window ``[dx0, dx1] x [dy0, dy1]``;
* for a :class:`~rankaug.mosaic.fused.TileWarp` (an affine that rotates or shears): the
  tile's placement ``(kx, ky, ox, oy)`` onto the canvas, clipped to its visible canvas
  window, through ``M``, then clipped to the output ``[0, W] x [0, H]``.

A polygon with nothing left (:func:`~rankaug.polygons.clip` gives ``None``) is ``None``
here: :func:`~rankaug.mosaic.targets.map_targets` drops its instance (box, label fields,
mask), whose object does not show.

All the polygons of a tile go through each step at once: their points in one
``(P, 2)`` array (``starts`` says where each polygon begins), each polygon's bounds by
one reduction, and only the polygons that cross an edge are cut one by one.

>>> from rankaug.mosaic.layout import Window
>>> window = Window((4, 4), 0, 0, 4, 4, 10, 10, 18, 18)  # a 4x4 tile at 2x, at (10, 10)
>>> square = np.array([[-1.0, -1.0], [2.0, -1.0], [2.0, 2.0], [-1.0, 2.0]])
>>> on_window(window, square, np.array([0]))[0].tolist()
[[10.0, 10.0], [14.0, 10.0], [14.0, 14.0], [10.0, 14.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankaug.mosaic.fused import TileWarp, Warp
from rankaug.mosaic.layout import Window
from rankaug.mosaic.tiles import Tile
from rankaug.polygons import clip

__all__ = ["map_polygons", "on_warp", "on_window"]

Outline = np.ndarray | None


def map_polygons(
    places: Sequence[Window | TileWarp],
    warp: Warp | None,
    tiles: Sequence[Tile],
    keep: np.ndarray,
    hw: tuple[int, int],
) -> list[Outline]:
    """The polygons of the kept boxes, on the output (``None``: nothing shows).

    Args:
        places: Where each tile went, aligned with ``tiles``.
        warp: The :class:`~rankaug.mosaic.fused.Warp` of an affine that rotates or
            shears, else ``None``.
        tiles: The tiles, main first; each has ``segments``.
        keep: Which of all the tiles' boxes (concatenated) are kept so far.
        hw: The output's ``(height, width)``.

    Returns:
        One entry per kept box, in order: its polygon (float64), or ``None``.
    """
    out: list[Outline] = []
    start = 0
    for place, tile in zip(places, tiles, strict=True):
        count = len(tile.boxes)
        chosen = np.flatnonzero(keep[start : start + count])
        start += count
        if not len(chosen):
            continue
        polygons = tile.segments
        assert polygons is not None
        points = polygons.points
        if isinstance(points, np.ndarray):  # (N, K, 2): every polygon K points long
            flat = points[chosen].reshape(-1, 2).astype(np.float64)
            starts = np.arange(len(chosen)) * points.shape[1]
        else:
            flat, starts = _flatten([points[k] for k in chosen])
        if isinstance(place, Window):
            out += on_window(place, flat, starts)
        else:
            assert warp is not None
            out += on_warp(place, warp, flat, starts, hw)
    return out


def on_window(window: Window, points: np.ndarray, starts: np.ndarray) -> list[Outline]:
    """Tile polygons through a window's map, clipped to its output window.

    Args:
        window: The tile's window.
        points: ``(P, 2)`` tile pixels, the polygons' points one after the other.
        starts: Where each polygon begins in ``points``.

    Returns:
        Each polygon on the output, or ``None``.
    """
    if not window.kx:  # the tile shows nothing
        return [None] * len(starts)
    row = window.row
    moved = points * (row[2], row[3]) + (row[6], row[7])  # the boxes' map, k * x + b
    return _clipped(moved, starts, (window.dx0, window.dy0, window.dx1, window.dy1))


def on_warp(
    tile: TileWarp, warp: Warp, points: np.ndarray, starts: np.ndarray, hw: tuple[int, int]
) -> list[Outline]:
    """Tile polygons through a warp, clipped on the way.

    Onto the canvas by the tile's placement, clipped to its visible canvas window,
    through ``M``, clipped to the ``hw`` output.

    Args:
        tile: The tile's part of the warp.
        warp: The warp.
        points: ``(P, 2)`` tile pixels, the polygons' points one after the other.
        starts: Where each polygon begins in ``points``.
        hw: The output's ``(height, width)``.

    Returns:
        Each polygon on the output, or ``None``.
    """
    if not tile.visible:
        return [None] * len(starts)
    kx, ky, ox, oy = tile.placement
    on_canvas = _clipped(points * (kx, ky) + (ox, oy), starts, tile.window)
    shown = [k for k, polygon in enumerate(on_canvas) if polygon is not None]
    out: list[Outline] = [None] * len(starts)
    if shown:
        flat, kept_starts = _flatten([on_canvas[k] for k in shown])
        (a, b, c), (d, e, f) = warp.matrix
        moved = flat @ np.array([[a, d], [b, e]]) + (c, f)
        height, width = hw
        for k, polygon in zip(shown, _clipped(moved, kept_starts, (0, 0, width, height)),
                              strict=True):  # fmt: skip
            out[k] = polygon
    return out


def _flatten(polygons: Sequence[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """The polygons' points one after the other (float64), and where each begins."""
    lengths = [len(p) for p in polygons if p is not None]
    flat = np.concatenate([p for p in polygons if p is not None]).astype(np.float64, copy=False)
    return flat, np.cumsum([0, *lengths[:-1]])


def _clipped(
    points: np.ndarray, starts: np.ndarray, box: tuple[float, float, float, float]
) -> list[Outline]:
    """Each polygon clipped to ``box`` (``x0, y0, x1, y1``).

    One reduction gives every polygon's bounds; those inside the box are given back as
    they are (views of ``points``), only the others go through
    :func:`~rankaug.polygons.clip`.
    """
    x0, y0, x1, y1 = box
    low, high = np.minimum.reduceat(points, starts), np.maximum.reduceat(points, starts)
    inside = (low[:, 0] >= x0) & (low[:, 1] >= y0) & (high[:, 0] <= x1) & (high[:, 1] <= y1)
    return [
        polygon if within else clip(polygon, box)
        for polygon, within in zip(np.split(points, starts[1:]), inside.tolist(), strict=True)
    ]
