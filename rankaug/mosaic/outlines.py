"""Instance polygons (``segments``): every tile's, mapped onto the output with its boxes.

A polygon goes through exactly the map its box goes through (:mod:`rankaug.polygons`
for the representation: pixel ``x, y`` whatever ``box_format``):

* for a :class:`~rankaug.mosaic.layout.Window` (a plain mosaic, a letterbox,
  ``canvas="yolo"``, and a fused affine that neither rotates nor shears): the window's
  affine map (the boxes' ``x -> k * x + b``, the map ``cv2.resize`` applies), then
  :func:`~rankaug.polygons.clip` to the output window's pixels ``[dx0, dx1 - 0.5] x
  [dy0, dy1 - 0.5]``;
* for a :class:`~rankaug.mosaic.fused.TileWarp` (an affine that rotates or shears): the
  tile's placement ``(kx, ky, ox, oy)`` onto the canvas, clipped to the pixels of its
  visible canvas window, through ``M``, then clipped to the output's pixels ``[0, W -
  0.5] x [0, H - 0.5]``.

Each cut keeps a polygon to the pixels of its window (:func:`~rankaug.polygons.pixel_clip`):
the fill draws the pixels its edges run through, so a cut at the window's far edge
``dx1`` itself would draw the column ``dx1``, the neighbouring tile's, and the far
edges go through the centres of the window's last pixels instead.

A polygon with nothing left (:func:`~rankaug.polygons.clip` gives ``None``) is ``None``
here: :func:`~rankaug.mosaic.targets.map_targets` drops its instance (box, label fields,
mask), whose object does not show. **A polygon of no area** (a line, a point: what
:func:`~rankaug.polygons.outline` makes of a region one pixel thin) draws the pixels
along it, as in the mixes: it is kept wherever some of it shows, whole or cut (a line
lying on a window's edge shows), with the box of those pixels, and dropped only where
nothing of it shows. Every polygon comes with two bounds: those of the
whole polygon through the map (nothing clipped: for the reference of
``min_visibility``) and those of what is left of it; :func:`pixel_boxes` makes the
boxes of their objects' pixels of them (the instances' boxes).

All the polygons of a tile go through each step at once: their points in one
``(P, 2)`` array (``starts`` says where each polygon begins), each polygon's bounds by
one reduction, and only the polygons that cross an edge are cut one by one (those
beyond an edge are ``None`` at once).

>>> from rankaug.mosaic.layout import Window
>>> window = Window((4, 4), 0, 0, 4, 4, 10, 10, 18, 18)  # a 4x4 tile at 2x, at (10, 10)
>>> square = np.array([[-1.0, -1.0], [2.0, -1.0], [2.0, 2.0], [-1.0, 2.0]])
>>> mapped = on_window(window, square, np.array([0]))
>>> mapped.polygons[0].tolist()
[[10.0, 10.0], [14.0, 10.0], [14.0, 14.0], [10.0, 14.0]]
>>> mapped.full.tolist(), mapped.bounds.tolist()
([[8.0, 8.0, 14.0, 14.0]], [[10.0, 10.0, 14.0, 14.0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import cv2
import numpy as np

from rankaug._multi.tiles import Tile
from rankaug.mosaic.fused import TileWarp, Warp
from rankaug.mosaic.layout import Window
from rankaug.polygons import clip, pixel_box, pixel_clip

__all__ = ["Mapped", "map_polygons", "on_warp", "on_window", "pixel_boxes"]

Outline = np.ndarray | None


class Mapped(NamedTuple):
    """Polygons on the output, with their boxes.

    Attributes:
        polygons: Each polygon on the output (float64), or ``None`` where nothing of it
            shows.
        full: ``(N, 4)`` xyxy: the bounds of each whole polygon through its map.
        bounds: ``(N, 4)`` xyxy: the bounds of each output polygon (any value where it
            is ``None``).
    """

    polygons: list[Outline]
    full: np.ndarray
    bounds: np.ndarray


def map_polygons(
    places: Sequence[Window | TileWarp],
    warp: Warp | None,
    tiles: Sequence[Tile],
    hw: tuple[int, int],
) -> Mapped:
    """The polygons of all the tiles' boxes, on the output.

    Args:
        places: Where each tile went, aligned with ``tiles``.
        warp: The :class:`~rankaug.mosaic.fused.Warp` of an affine that rotates or
            shears, else ``None``.
        tiles: The tiles, main first; each has ``segments``.
        hw: The output's ``(height, width)``.

    Returns:
        One entry per box of the tiles (concatenated), in order.
    """
    pieces: list[np.ndarray] = []
    lengths: list[int] = []
    counts: list[int] = []  # polygons per tile
    for tile in tiles:
        polygons = tile.segments
        assert polygons is not None
        points = polygons.points
        if isinstance(points, np.ndarray):  # (N, K, 2): every polygon K points long
            pieces.append(points.reshape(-1, 2))
            lengths += [points.shape[1]] * len(points)
        else:
            pieces += points
            lengths += [len(p) for p in points]
        counts.append(len(points))
    if not lengths:
        return _hidden(0)
    flat = np.concatenate(pieces).astype(np.float64, copy=False)  # all tiles' points, float64
    ends = np.cumsum(lengths)
    starts = ends - lengths
    if warp is None:  # all the windows in one pass
        windows = [cast(Window, place) for place in places]
        return _through_windows(flat, starts, windows, counts)
    parts, first = [], 0
    for place, count in zip(places, counts, strict=True):
        if count:
            begin, end = int(starts[first]), int(ends[first + count - 1])
            own = starts[first : first + count] - begin
            parts.append(on_warp(cast(TileWarp, place), warp, flat[begin:end], own, hw))
            first += count
    return Mapped(
        [p for part in parts for p in part.polygons],
        np.concatenate([part.full for part in parts]),
        np.concatenate([part.bounds for part in parts]),
    )


def on_window(window: Window, points: np.ndarray, starts: np.ndarray) -> Mapped:
    """Tile polygons through a window's map, clipped to its output window.

    Args:
        window: The tile's window.
        points: ``(P, 2)`` tile pixels, the polygons' points one after the other.
        starts: Where each polygon begins in ``points``.

    Returns:
        Each polygon on the output (or ``None``), with its boxes.
    """
    return _through_windows(points, starts, [window], [len(starts)])


def _through_windows(
    points: np.ndarray, starts: np.ndarray, windows: Sequence[Window], counts: Sequence[int]
) -> Mapped:
    """:func:`on_window` for several tiles at once (``counts`` polygons each)."""
    # per tile: the boxes' map k * x + b, and the output window (nowhere if it shows nothing)
    maps = np.array([(w.kx, w.ky, w.bx, w.by) for w in windows])
    edges = [pixel_clip((w.dx0, w.dy0, w.dx1, w.dy1)) if w.kx else _NOWHERE for w in windows]
    if len(windows) == 1:
        box = np.array(edges, np.float64)
        tile_of = np.zeros(len(starts), np.int64)
    else:
        tile_of = np.repeat(np.arange(len(windows)), counts)  # per polygon
        box = np.array(edges, np.float64)[tile_of]
    # per point, as (P, 2) arrays: a (2,) operand broadcast over (P, 2) is ~10x slower
    lengths = np.diff(starts, append=len(points))
    scale = maps[tile_of, :2].repeat(lengths, axis=0)
    moved = points * scale + maps[tile_of, 2:].repeat(lengths, axis=0)
    return Mapped(*_clipped(moved, starts, box))


_NOWHERE = (np.inf, np.inf, -np.inf, -np.inf)  # a window that holds no point


def on_warp(
    tile: TileWarp, warp: Warp, points: np.ndarray, starts: np.ndarray, hw: tuple[int, int]
) -> Mapped:
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
        Each polygon on the output (or ``None``), with its boxes.
    """
    if not tile.visible:
        return _hidden(len(starts))
    kx, ky, ox, oy = tile.placement
    count = len(points)  # (a (2,) operand broadcast over (P, 2) is ~10x slower)
    canvas = points * np.tile((kx, ky), (count, 1)) + np.tile((ox, oy), (count, 1))
    matrix = np.array(warp.matrix)
    whole = _through(canvas, matrix)  # every point through M: the full bounds
    full = np.concatenate(
        (np.minimum.reduceat(whole, starts), np.maximum.reduceat(whole, starts)), axis=1
    )
    on_canvas = _clipped(canvas, starts, np.array([pixel_clip(tile.window)], np.float64))[0]
    shown = [k for k, polygon in enumerate(on_canvas) if polygon is not None]
    out: list[Outline] = [None] * len(starts)
    bounds = np.zeros((len(starts), 4))
    if shown:
        flat, kept_starts = _flatten([p for p in on_canvas if p is not None])
        height, width = hw
        output = np.array([pixel_clip((0, 0, width, height))])
        polygons, _, kept = _clipped(_through(flat, matrix), kept_starts, output)
        for k, polygon in zip(shown, polygons, strict=True):
            out[k] = polygon
        bounds[shown] = kept
    return Mapped(out, full, bounds)


def pixel_boxes(
    places: Sequence[Window | TileWarp],
    warp: Warp | None,
    owners: np.ndarray,
    bounds: np.ndarray,
    full: np.ndarray,
    dtype: np.dtype[Any] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The boxes of the objects of polygons with these output bounds (their instances' boxes).

    A polygon's box is the box of its object's pixels (:func:`~rankaug.polygons.pixel_box`,
    the box the mixes give a polygon's instance):

    * through a :class:`~rankaug.mosaic.layout.Window`, the box of the pixels the part
      of the polygon that shows draws in its tile (within the tile's image), mapped as
      boxes are (``x -> k * x + b``, onto the pixels the resize makes of them: a mosaic
      that moves nothing moves no box, a 4x nearest resize gives 4x the box), within
      its window; one cut at (or reaching) the centre of its window's last column or
      row reaches the window's edge, as a box cut there does;
    * under a :class:`~rankaug.mosaic.fused.Warp`, the box of the pixels the output
      polygon draws.

    Args:
        places: Where each tile went.
        warp: The warp of an affine that rotates or shears, else ``None``.
        owners: ``(N,)`` each polygon's tile (its index in ``places``).
        bounds: ``(N, 4)`` xyxy: the bounds of each output polygon (cut to its window).
        full: ``(N, 4)`` xyxy: the bounds of each whole polygon through its map.
        dtype: The dtype the output polygons are given back in (a fill of them draws in
            it), ``None`` for float64.

    Returns:
        ``(N, 4)`` float64 pixel xyxy twice: the boxes, and the whole polygons' boxes
        (the references of ``min_visibility``).
    """
    count = len(bounds)
    both = np.concatenate((bounds, full))
    if warp is not None:
        boxes = pixel_box(both if dtype is None else both.astype(dtype))  # as a fill sees them
        height, width = warp.owners.shape[:2]  # (float16 points can round past the edge)
        np.minimum(boxes[:count], (width, height, width, height), out=boxes[:count])
        return boxes[:count], boxes[count:]
    # per polygon: the tile's width and height, x -> k * x + b, the window (Window.row)
    rows = np.array([place.row for place in places], np.float64)
    table = rows.take(np.concatenate((owners, owners)), axis=0)
    scale, offset = table[:, 2:6], table[:, 6:10]
    source = pixel_box((both - offset) / scale)  # in its tile, within its image
    source = np.minimum(np.maximum(source, 0.0), table[:, (0, 1, 0, 1)])
    mapped = source * scale + offset
    shown, start, end = mapped[:count], table[:count, 10:14], table[:count, 14:18]
    far = end[:, 2:]
    shown[:, 2:] = np.where(bounds[:, 2:] >= far - 0.5, far, shown[:, 2:])
    return np.minimum(np.maximum(shown, start), end), mapped[count:]


def _through(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``(P, 2)`` points through a ``2 x 3`` affine (OpenCV's, to about 1e-13 pixels)."""
    return cast(np.ndarray, cv2.transform(points.reshape(-1, 1, 2), matrix)).reshape(-1, 2)


def _hidden(count: int) -> Mapped:
    """``count`` polygons of which nothing shows."""
    return Mapped([None] * count, np.zeros((count, 4)), np.zeros((count, 4)))


def _flatten(polygons: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The polygons' points one after the other (float64), and where each begins."""
    lengths = [len(p) for p in polygons]
    flat = np.concatenate(polygons).astype(np.float64, copy=False)
    return flat, np.cumsum([0, *lengths[:-1]])


def _clipped(
    points: np.ndarray, starts: np.ndarray, boxes: np.ndarray
) -> tuple[list[Outline], np.ndarray, np.ndarray]:
    """Each polygon clipped to its box, its full bounds and its bounds.

    ``boxes`` is ``(N, 4)`` (``x0, y0, x1, y1`` per polygon) or ``(1, 4)`` (one for all).
    One reduction gives every polygon's bounds; those inside their box are given back as
    they are (views of ``points``, a polygon of no area too: see the module docstring),
    those beyond one of its edges, or touching it from outside, are ``None`` (nothing of
    them is inside), only the others go through :func:`~rankaug.polygons.clip` (and a
    reduction of their own for their bounds).
    """
    full = np.concatenate(
        (np.minimum.reduceat(points, starts), np.maximum.reduceat(points, starts)), axis=1
    )
    lx, ly, hx, hy = full.T
    x0, y0, x1, y1 = boxes.T
    inside = (lx >= x0) & (ly >= y0) & (hx <= x1) & (hy <= y1)
    # beyond an edge, or touching it from outside; a line lying on it is drawn there
    beyond = ((hx <= x0) & (lx < x0)) | ((hy <= y0) & (ly < y0))
    beyond |= ((lx >= x1) & (hx > x1)) | ((ly >= y1) & (hy > y1))
    across = ~(inside | beyond)
    begins, ends = starts.tolist(), [*starts[1:].tolist(), len(points)]
    out: list[Outline] = [None] * len(begins)
    for k in np.flatnonzero(inside).tolist():
        out[k] = points[begins[k] : ends[k]]
    bounds = full
    cut_ones = np.flatnonzero(across).tolist()
    if cut_ones:
        bounds = full.copy()
        edges = boxes.tolist()
        for k in cut_ones:
            left, top, right, bottom = edges[k if len(edges) > 1 else 0]
            out[k] = cut = clip(points[begins[k] : ends[k]], (left, top, right, bottom))
            if cut is not None:
                bounds[k, :2], bounds[k, 2:] = cut.min(axis=0), cut.max(axis=0)
    return out, full, bounds
