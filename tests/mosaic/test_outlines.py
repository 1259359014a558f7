from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug import MosaicDataset, MosaicGrid, Partners
from rankaug._multi.tiles import Tile
from rankaug.mosaic import MosaicAffine
from rankaug.mosaic.fused import TileWarp, Warp, invert
from rankaug.mosaic.layout import Window
from rankaug.mosaic.outlines import map_polygons, on_warp, on_window
from rankaug.polygons import clip, fill, outline, pixel_box, read_polygons, resample
from tests.boxes.polygons import clip_polygon
from tests.mosaic.painted import GEOMETRY, colour_of, grouped, painted_datasets
from tests.mosaic.warped import apply

NEAREST = cv2.INTER_NEAREST_EXACT
KERNEL = np.ones((3, 3), np.uint8)


def rectangle(x0: float, y0: float, x1: float, y1: float, dtype: Any = np.float32) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype)


def constant(index: int, hw: tuple[int, int], form: str = "list") -> dict[str, Any]:
    """A tile of one colour, one box over all of it, its polygon the whole image."""
    h, w = hw
    polygon = rectangle(0, 0, w, h)
    return {
        "image": np.full((h, w, 3), colour_of(index + 1), np.uint8),
        "bboxes": np.array([[0.0, 0.0, w, h]]),
        "labels": np.array([index + 1]),
        "segments": [polygon] if form == "list" else polygon[None],
    }


def same_corners(polygon: np.ndarray | None, corners: np.ndarray) -> bool:
    """Whether a polygon has exactly these points, in any order (a cut may start elsewhere)."""
    assert polygon is not None
    return sorted(map(tuple, polygon.tolist())) == sorted(map(tuple, corners.tolist()))


def drawn(polygons: list[np.ndarray], hw: tuple[int, int]) -> np.ndarray:
    """The union of the polygons' pixels over an ``hw`` image (bool)."""
    out = np.zeros(hw, bool)
    for polygon in polygons:
        out |= fill(np.asarray(polygon, np.float64), (0, hw[0], 0, hw[1])).astype(bool)
    return out


def agree(polygon: np.ndarray, pixels: np.ndarray) -> int:
    """Check that the polygons' pixels are the tile's pixels up to their boundary (their
    interiors equal); returns how many drawn pixels are not next to one of the tile's (0
    for axis-aligned windows, where the fill draws at most a row and a column more)."""
    assert pixels.any()
    inner_polygon, inner_pixels = _inner(polygon), _inner(pixels)
    assert not (inner_pixels & ~polygon).any()
    assert not (inner_polygon & ~pixels).any()
    near = cv2.dilate(pixels.astype(np.uint8), KERNEL).astype(bool)
    return int((polygon & ~near).sum())


def check_pixels(out: dict[str, Any], iou: float) -> tuple[int, int]:
    """Each tile's polygon against the pixels of its colour (:func:`agree`; every tile
    a different sample), and the IoU over all of them; returns how many tiles showed and
    how many drawn pixels are not next to their tile's."""
    image, labels = out["image"], out["labels"].tolist()
    assert len(set(labels)) == len(labels)
    meet = union = stray = 0
    for polygon, label in zip(out["segments"], labels, strict=True):
        pixels = (image == colour_of(label)).all(axis=2)
        inside = drawn([polygon], image.shape[:2])
        stray += agree(inside, pixels)
        meet, union = meet + (inside & pixels).sum(), union + (inside | pixels).sum()
    assert meet / union >= iou
    return len(labels), stray


def tile(points: Any, hw: tuple[int, int] = (8, 8)) -> Tile:
    count = len(points)
    image = np.zeros((*hw, 3), np.uint8)
    boxes = np.tile([0.0, 0.0, hw[1], hw[0]], (count, 1))
    polygons = read_polygons(points, count, "dataset[0]")
    return Tile(0, image, boxes, {}, None, None, None, {}, None, polygons)


class TestOnWindow:
    def test_the_boxes_map_then_the_output_window(self) -> None:
        window = Window((4, 4), 1, 0, 3, 4, 10, 10, 16, 18)  # x: [1, 3] -> [10, 16], 3x
        inside = rectangle(1.5, 1.0, 2.5, 3.0, np.float64)
        across = rectangle(0.0, 1.0, 2.0, 3.0, np.float64)
        beyond = rectangle(2.0, 3.0, 4.0, 5.0, np.float64)  # past the right and bottom edges
        points = np.concatenate([inside, across, beyond])
        mapped = on_window(window, points, np.array([0, 4, 8]))
        moved = mapped.polygons
        np.testing.assert_array_equal(moved[0], rectangle(11.5, 12.0, 14.5, 16.0, np.float64))
        np.testing.assert_array_equal(moved[1], rectangle(10.0, 12.0, 13.0, 16.0, np.float64))
        # cut at the centres of the window's last column and row (pixel_clip)
        assert same_corners(moved[2], rectangle(13.0, 16.0, 15.5, 17.5))
        # the whole polygons' bounds through the map, and the clipped ones'
        np.testing.assert_array_equal(
            mapped.full, [[11.5, 12, 14.5, 16], [7, 12, 13, 16], [13, 16, 19, 20]]
        )
        np.testing.assert_array_equal(
            mapped.bounds, [[11.5, 12, 14.5, 16], [10, 12, 13, 16], [13, 16, 15.5, 17.5]]
        )

    def test_a_polygon_of_no_area_is_kept_whole_or_cut(self) -> None:
        # its fill draws pixels: kept whole, it was dropped once an edge cut it
        window = Window((4, 4), 1, 0, 3, 4, 10, 10, 16, 18)  # output pixels [10, 16) x [10, 18)

        def line(x0: float, x1: float, y: float) -> np.ndarray:
            return np.array([[x0, y], [x1, y], [(x0 + x1) / 2, y]])

        points = np.concatenate([line(1.5, 2.5, 1.0), line(0.0, 2.5, 1.0), line(0.0, 2.5, 0.0),
                                 line(0.0, 1.0, 1.0), line(0.0, 2.5, 4.0)])  # fmt: skip
        mapped = on_window(window, points, np.arange(0, 15, 3))
        inside, across, on_edge, beyond, below = mapped.polygons
        np.testing.assert_array_equal(inside, [[11.5, 12], [14.5, 12], [13, 12]])
        assert across is not None
        assert (across.min(axis=0).tolist(), across.max(axis=0).tolist()) == ([10, 12], [14.5, 12])
        assert on_edge is not None  # on the window's top edge: its pixels are the window's
        assert on_edge[:, 1].tolist() == [10.0] * len(on_edge)
        assert beyond is None  # ends on the left edge: touches it from outside
        assert below is None  # the window's last row is at 17.5, the line at 18

    def test_nothing_left_is_none(self) -> None:
        window = Window((4, 4), 1, 0, 3, 4, 10, 10, 16, 18)
        outside = rectangle(3.5, 0.0, 4.0, 4.0, np.float64)
        assert on_window(window, outside, np.array([0])).polygons == [None]
        whole = rectangle(0, 0, 4, 4, np.float64)
        assert on_window(Window.empty((4, 4)), whole, np.array([0])).polygons == [None]


class TestOnWarp:
    def test_placement_canvas_window_matrix_then_the_output(self) -> None:
        matrix = ((0.8, -0.6, 20.0), (0.6, 0.8, -5.0))  # a rotation, moved
        place = TileWarp(0, (10, 10), (5, 5, 20, 25), (20, 20, 5, 5), matrix, (30, 30))
        warp = Warp([place], np.zeros((30, 30), np.uint8), 255, matrix, {})
        triangle = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]])  # tile pixels
        hidden = rectangle(8.0, 0.0, 10.0, 4.0, np.float64)  # right of the canvas window
        small = rectangle(1.0, 4.0, 3.0, 6.0, np.float64)  # inside it
        points = np.concatenate([triangle, hidden, small])
        mapped = on_warp(place, warp, points, np.array([0, 3, 7]), (30, 30))
        first, second, third = mapped.polygons
        assert second is None
        for k, out, polygon in ((0, first, triangle), (2, third, small)):
            canvas = [(2 * x + 5, 2 * y + 5) for x, y in polygon.tolist()]  # 2x, at (5, 5)
            # to the centres of the canvas window's and the output's last pixels
            cut = clip_polygon(canvas, (5, 5, 19.5, 24.5))
            expected = clip_polygon([apply(matrix, x, y) for x, y in cut], (0, 0, 29.5, 29.5))
            assert out is not None
            np.testing.assert_allclose(out, expected, atol=1e-9)
            ends = np.array(expected)
            np.testing.assert_allclose(mapped.bounds[k], [*ends.min(0), *ends.max(0)], atol=1e-9)
            whole = np.array([apply(matrix, x, y) for x, y in canvas])  # nothing clipped
            np.testing.assert_allclose(mapped.full[k], [*whole.min(0), *whole.max(0)], atol=1e-9)

    def test_a_tile_that_does_not_reach_the_output_gives_none(self) -> None:
        matrix = ((1.0, 0.1, 100.0), (0.0, 1.0, 0.0))  # sheared, far to the right
        place = TileWarp(0, (10, 10), (0, 0, 10, 10), (10, 10, 0, 0), matrix, (30, 30))
        warp = Warp([place], np.zeros((30, 30), np.uint8), 255, matrix, {})
        assert not place.visible
        whole = rectangle(0, 0, 10, 10, np.float64)
        assert on_warp(place, warp, whole, np.array([0]), (30, 30)).polygons == [None]


class TestMapPolygons:
    def test_one_entry_per_box_in_order(self) -> None:
        window = Window((8, 8), 0, 0, 4, 8, 0, 0, 4, 8)  # the left half of the tile
        points = np.stack([rectangle(0, 0, 2, 2), rectangle(5, 0, 7, 2), rectangle(1, 1, 6, 3)])
        empty = Window.empty((8, 8))
        mapped = map_polygons([window, empty], None, [tile(points), tile(points)], (8, 4))
        moved = mapped.polygons
        assert len(moved) == len(mapped.full) == len(mapped.bounds) == 6
        np.testing.assert_array_equal(moved[0], rectangle(0, 0, 2, 2, np.float64))
        assert moved[1] is None  # right of the window
        assert same_corners(moved[2], rectangle(1, 1, 3.5, 3))
        np.testing.assert_array_equal(mapped.bounds[2], [1, 1, 3.5, 3])
        assert moved[3:] == [None] * 3  # the tile that shows nothing

    @pytest.mark.parametrize("affine", [None, MosaicAffine(degrees=30.0)])
    def test_a_line_is_kept_as_a_thin_polygon_is(self, affine: MosaicAffine | None) -> None:
        # a polygon of no area draws its line's pixels: it was kept or dropped by the draw
        def data(polygon: list[list[float]]) -> list[dict[str, Any]]:
            return [{"image": np.full((32, 32, 3), 100, np.uint8), "labels": np.array([1]),
                     "bboxes": np.array([[2.0, 5.0, 21.0, 6.0]], np.float32),
                     "segments": [np.array(polygon, np.float32)]} for _ in range(4)]  # fmt: skip

        line = data([[2, 5], [20, 5], [10, 5]])
        thin = data([[2, 5], [20, 5], [10, 5.01]])  # 0.09 px^2
        kept = []
        for seed in range(6):
            ours = MosaicDataset(line, seed=seed, output_size=64, affine=affine)[0]
            theirs = MosaicDataset(thin, seed=seed, output_size=64, affine=affine)[0]
            assert len(ours["bboxes"]) == len(theirs["bboxes"]) == len(ours["segments"])
            kept.append(len(ours["bboxes"]))
            if affine is None:  # (a rotated thin triangle can round to other pixels)
                np.testing.assert_array_equal(ours["bboxes"], theirs["bboxes"])
        assert sum(kept) > 6  # cut ones among them

    def test_a_sequence_gives_the_same_polygons_as_an_array(self) -> None:
        window = Window((8, 8), 2, 1, 8, 8, 3, 0, 15, 14)
        points = np.stack([rectangle(0, 0, 5, 5), rectangle(3, 2, 8, 8)])
        as_array = map_polygons([window], None, [tile(points)], (14, 15))
        as_list = map_polygons([window], None, [tile(list(points))], (14, 15))
        for a, b in zip(as_array.polygons, as_list.polygons, strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(as_array.full, as_list.full)
        np.testing.assert_array_equal(as_array.bounds, as_list.bounds)

    @pytest.mark.parametrize("seed", range(3))
    @pytest.mark.parametrize("scale_mode", ["keep", "fill"])
    @pytest.mark.parametrize("grid", [(2, 2), (3, 3)])
    def test_whole_tile_polygons_draw_their_tiles_pixels(
        self, seed: int, scale_mode: str, grid: tuple[int, int]
    ) -> None:
        # "fill" covers each cell: tiles are cut by their windows, and so are the polygons
        # (a 3x3 grid's middle row and column are centred: cut on both sides)
        data = [constant(k, (18 + 3 * k, 34 - 2 * k)) for k in range(9)]
        mosaic = MosaicDataset(
            data,
            seed=seed,
            output_size=(40, 44),
            layout=MosaicGrid(
                scale_mode=scale_mode, scale_range=(0.6, 1.4), interpolation=NEAREST, grid=grid
            ),
            partners=Partners(replace=False),
        )
        out = mosaic[seed]
        assert check_pixels(out, iou=0.85)[1] == 0

    @pytest.mark.parametrize("seed", range(4))
    @pytest.mark.parametrize("grid", [(2, 2), (3, 3)])
    @pytest.mark.parametrize("kind", ["outline", "edges"])
    @pytest.mark.parametrize("flip", [0.0, 1.0])
    def test_every_polygon_draws_only_its_own_windows_pixels(
        self, seed: int, grid: tuple[int, int], kind: str, flip: float
    ) -> None:
        # a polygon over the whole tile: through the centres of its boundary pixels
        # (rankaug.polygons.outline) or along the image's edges; cut at a window's far
        # edge itself, it drew a column (row) of the neighbouring tile; mirrored as
        # x -> W - x, one cut at a window's near edge (or along it) drew the column
        # beyond the mirrored window and lost its first
        data = []
        for k in range(9):
            sample = constant(k, (40 + 5 * k, 64 - 3 * k))
            if kind == "outline":
                h, w = sample["image"].shape[:2]
                sample["segments"] = [outline(np.ones((h, w), np.uint8)).astype(np.float32)]
            data.append(sample)
        mosaic = MosaicDataset(
            data,
            seed=seed,
            output_size=(64, 72),
            keying="sample",
            layout=MosaicGrid(grid=grid, scale_mode="fill", interpolation=NEAREST, flip=flip),
            partners=Partners(replace=False),
        )
        out = mosaic[seed]
        record = out["mosaic"]
        assert record.get("flip", False) == bool(flip)
        assert len(out["segments"]) == len(record["indices"])  # every tile shows
        for polygon, label, box in zip(out["segments"], out["labels"].tolist(),
                                       out["bboxes"].tolist(), strict=True):  # fmt: skip
            x0, y0, x1, y1 = record["dst"][record["indices"].index(label - 1)]
            if flip:  # the windows of the unflipped map, painted mirrored
                x0, x1 = 72 - x1, 72 - x0
            own = np.zeros((64, 72), bool)
            own[y0:y1, x0:x1] = True
            np.testing.assert_array_equal((out["image"] == colour_of(label)).all(axis=2), own)
            np.testing.assert_array_equal(drawn([polygon], (64, 72)), own)
            assert box == [x0, y0, x1, y1]

    @given(
        corners=st.lists(st.integers(0, 39), min_size=4, max_size=4),  # inside the image
        affine=st.booleans(),
        flip=st.sampled_from([0.0, 1.0]),
    )
    def test_a_rectangle_on_pixel_edges_draws_its_painted_pixels_flipped_or_not(
        self, corners: list[int], affine: bool, flip: float
    ) -> None:
        # one 40x30 sample letterboxed 1:1, a rectangle painted where its polygon along
        # pixel edges draws (its far edges' pixels too: x0 to x1, y0 to y1, within the
        # image); the plain mosaic's flip or the aligned affine's. Mirrored as x -> W - x,
        # the polygon drew one column right of the painted ones, the box not its pixels'
        x0, x1 = sorted(corners[:2])
        y0, y1 = sorted(v * 3 // 4 for v in corners[2:])
        image = np.zeros((30, 40, 3), np.uint8)
        image[y0 : y1 + 1, x0 : x1 + 1] = colour_of(1)
        polygon = rectangle(x0, y0, x1, y1)
        box = [x0, y0, min(x1 + 1, 40), min(y1 + 1, 30)]
        sample = {"image": image, "bboxes": np.array([box], np.float32),
                  "labels": np.array([1]), "segments": [polygon]}  # fmt: skip
        flips: dict[str, Any]
        if affine:
            flips = {"affine": MosaicAffine(translate=0.0, scale=0.0, flip=flip)}
        else:
            flips = {"layout": MosaicGrid(flip=flip, interpolation=NEAREST)}
        out = MosaicDataset([sample], seed=0, output_size=(30, 40), p=0.0, **flips)[0]
        painted = (out["image"] == colour_of(1)).all(axis=2)
        painted_in = (image == colour_of(1)).all(axis=2)
        np.testing.assert_array_equal(painted, painted_in[:, ::-1] if flip else painted_in)
        (drawn_polygon,) = out["segments"]
        np.testing.assert_array_equal(drawn([drawn_polygon], (30, 40)), painted)
        columns, rows = np.flatnonzero(painted.any(axis=0)), np.flatnonzero(painted.any(axis=1))
        pixels = [columns[0], rows[0], columns[-1] + 1, rows[-1] + 1]
        assert out["bboxes"].tolist() == [pixels]
        bounds = np.concatenate((drawn_polygon.min(axis=0), drawn_polygon.max(axis=0)))
        assert pixel_box(bounds).tolist() == pixels

    def test_a_letterbox_draws_the_window_its_pixels_land_on(self) -> None:
        mosaic = MosaicDataset([constant(0, (100, 160))], seed=0, output_size=240, p=0.0)
        out = mosaic[0]
        # 160x100 fit in 240: 1.5x, 240x150, centred from row 45
        (polygon,) = out["segments"]
        assert same_corners(polygon, rectangle(0, 45, 239.5, 194.5))
        np.testing.assert_array_equal(out["bboxes"], [[0.0, 45.0, 240.0, 195.0]])
        assert check_pixels(out, iou=0.99) == (1, 0)

    def test_a_letterbox_on_yolos_canvas(self) -> None:
        mosaic = MosaicDataset([constant(0, (10, 16))], seed=0, output_size=32, p=0.0,
                               layout=MosaicGrid(canvas="yolo"))  # fmt: skip
        (polygon,) = mosaic[0]["segments"]
        assert same_corners(polygon, rectangle(16, 22, 47.5, 41.5))

    @pytest.mark.parametrize("form", ["list", "array"])
    def test_the_output_takes_the_main_samples_form_and_dtype(self, form: str) -> None:
        data = [constant(k, (20, 24), form) for k in range(4)]
        out = MosaicDataset(data, seed=3, output_size=32, layout=MosaicGrid(scale_mode="fill"))[0]
        count = len(out["bboxes"])
        assert count >= 1
        segments = out["segments"]
        if form == "array":
            assert isinstance(segments, np.ndarray)
            assert segments.shape == (count, 4, 2)
            assert segments.dtype == np.float32
        else:
            assert isinstance(segments, list)
            assert len(segments) == count
            assert all(p.dtype == np.float32 and p.shape[1] == 2 for p in segments)

    def test_an_array_output_resamples_only_the_clipped_polygons(self) -> None:
        whole, inside = rectangle(0, 0, 40, 20), rectangle(12, 2, 16, 6)
        diamond = np.array([[8.0, 10.0], [12.0, 6.0], [16.0, 10.0], [12.0, 14.0]])
        sample = {"image": np.zeros((20, 40, 3), np.uint8), "labels": np.array([1, 2, 3]),
                  "bboxes": np.array([[0, 0, 40, 20], [12, 2, 16, 6], [8, 6, 16, 14.0]]),
                  "segments": np.stack([whole, inside, diamond]).astype(np.float32)}  # fmt: skip
        # one 1x1 cell, 20x20, the tile covering it: its x in [10, 30] shows at [0, 20]
        out = MosaicDataset(
            [sample], seed=0, output_size=20, layout=MosaicGrid(grid=(1, 1), scale_mode="fill")
        )[0]
        segments = out["segments"]
        assert segments.shape == (3, 4, 2)
        assert segments.dtype == np.float32
        assert same_corners(segments[0], rectangle(0, 0, 19.5, 19.5))
        np.testing.assert_array_equal(segments[1], rectangle(2, 2, 6, 6))
        cut = clip(diamond - (10.0, 0.0), (0.0, 0.0, 19.5, 19.5))  # a pentagon
        assert cut is not None
        assert len(cut) == 5
        np.testing.assert_allclose(segments[2], resample(cut, 4), atol=1e-6)

    @pytest.mark.parametrize("seed", range(3))
    def test_a_warp_maps_the_clipped_canvas_polygon_through_m(self, seed: int) -> None:
        data = [constant(k, (48 + 12 * k, 72 - 8 * k)) for k in range(4)]
        affine = MosaicAffine(degrees=30.0, translate=0.0, scale=0.2)
        mosaic = MosaicDataset(
            data,
            seed=seed,
            output_size=128,
            layout=MosaicGrid(interpolation=NEAREST),
            partners=Partners(replace=False),
            affine=affine,
        )
        out = mosaic[seed]
        record = out["mosaic"]
        matrix = record["affine"]["matrix"]
        labels = out["labels"].tolist()
        expected: list[list[tuple[float, float]]] = []
        for k, index in enumerate(record["indices"]):
            h, w = data[index]["image"].shape[:2]
            to_canvas = [apply(invert(matrix), *apply(record["affine"]["maps"][k], x, y))
                         for x, y in rectangle(0, 0, w, h).tolist()]  # fmt: skip
            x0, y0, x1, y1 = record["dst"][k]  # to the centres of the last pixels
            cut = clip_polygon(to_canvas, (x0, y0, x1 - 0.5, y1 - 0.5))
            shown = clip_polygon([apply(matrix, x, y) for x, y in cut], (0, 0, 127.5, 127.5))
            if shown:
                expected.append(shown)
        assert len(expected) == len(labels) >= 1
        for polygon, points in zip(out["segments"], expected, strict=True):
            assert _distance(polygon, np.array(points)) < 1e-4
        # over all tiles; thin slivers draw stray pixels
        assert check_pixels(out, iou=0.95)[0] >= 1

    def test_the_aligned_fused_affine_takes_the_plain_path(self) -> None:
        data = [constant(k, (20, 30)) for k in range(4)]
        mosaic = MosaicDataset(
            data,
            seed=1,
            output_size=48,
            layout=MosaicGrid(interpolation=NEAREST),
            partners=Partners(replace=False),
            affine=MosaicAffine(translate=0.1, scale=0.3),
        )
        out = mosaic[2]
        assert check_pixels(out, iou=0.85)[1] == 0
        for polygon, box in zip(out["segments"], out["bboxes"], strict=True):
            # a whole-tile polygon clipped to its window: to the centres of its last
            # pixels, its box the window
            x0, y0, x1, y1 = box.tolist()
            assert len(polygon) == 4
            assert _distance(polygon, rectangle(x0, y0, x1 - 0.5, y1 - 0.5)) < 1e-4

    @settings(max_examples=40, deadline=None)
    @given(data=painted_datasets(), geometry=GEOMETRY, seed=st.integers(0, 2**32 - 1))
    def test_every_polygon_lies_inside_the_output_and_its_tiles_window(
        self, data: list[dict[str, Any]], geometry: dict[str, Any], seed: int
    ) -> None:
        for sample in data:  # each box's rectangle, grown so that some cross the window
            sample["segments"] = [rectangle(x0 - 2, y0 - 2, x1 + 2, y1 + 2)
                                  for x0, y0, x1, y1 in sample["bboxes"].tolist()]  # fmt: skip
            del sample["masks"], sample["mask"]
        mosaic = MosaicDataset(data, seed=seed, keying="sample", **grouped(geometry))
        for index in range(len(data)):
            out = mosaic[index]
            height, width = out["image"].shape[:2]
            record = out["mosaic"]
            assert len(out["segments"]) == len(out["bboxes"]) == len(out["labels"])
            for polygon, label in zip(out["segments"], out["labels"].tolist(), strict=True):
                x, y = polygon[:, 0], polygon[:, 1]
                assert x.min() >= 0
                assert y.min() >= 0
                assert x.max() <= width
                assert y.max() <= height
                windows = [d for i, d in zip(record["indices"], record["dst"], strict=True)
                           if i == (label - 1) // 8]  # fmt: skip
                assert any(x.min() >= x0 and y.min() >= y0 and x.max() <= x1 and y.max() <= y1
                           for x0, y0, x1, y1 in windows)  # fmt: skip

    @settings(max_examples=25, deadline=None)
    @given(data=painted_datasets(), seed=st.integers(0, 2**32 - 1),
           degrees=st.sampled_from([10.0, 45.0]), shear=st.sampled_from([0.0, 20.0]))  # fmt: skip
    def test_under_a_warp_every_polygon_lies_inside_the_output_and_its_tiles_window(
        self, data: list[dict[str, Any]], seed: int, degrees: float, shear: float
    ) -> None:
        for sample in data:
            sample["segments"] = [rectangle(x0 - 2, y0 - 2, x1 + 2, y1 + 2)
                                  for x0, y0, x1, y1 in sample["bboxes"].tolist()]  # fmt: skip
            del sample["masks"], sample["mask"]
        affine = MosaicAffine(degrees=degrees, shear=shear, scale=0.5)
        mosaic = MosaicDataset(data, seed=seed, keying="sample", output_size=48, affine=affine)
        for index in range(len(data)):
            out = mosaic[index]
            record = out["mosaic"]
            back = invert(record["affine"]["matrix"])
            for polygon, label in zip(out["segments"], out["labels"].tolist(), strict=True):
                x, y = polygon[:, 0], polygon[:, 1]
                assert x.min() >= 0
                assert y.min() >= 0
                assert x.max() <= 48
                assert y.max() <= 48
                cx, cy = apply(back, x, y)  # on the canvas
                windows = [d for i, d in zip(record["indices"], record["dst"], strict=True)
                           if i == (label - 1) // 8]  # fmt: skip
                # (float32 points: a canvas edge near 100 moves by up to about 1e-5)
                assert any(cx.min() >= x0 - 1e-4 and cy.min() >= y0 - 1e-4
                           and cx.max() <= x1 + 1e-4 and cy.max() <= y1 + 1e-4
                           for x0, y0, x1, y1 in windows)  # fmt: skip


def _inner(mask: np.ndarray) -> np.ndarray:
    """The pixels whose eight neighbours are in the mask too (none on the image's edge)."""
    eroded = cv2.erode(mask.astype(np.uint8), KERNEL, borderType=cv2.BORDER_CONSTANT,
                       borderValue=0)  # fmt: skip
    return eroded.astype(bool)


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    """The Hausdorff distance between two point sets (near-duplicate points aside)."""
    gaps = np.linalg.norm(np.asarray(a, np.float64)[:, None] - b[None], axis=2)
    return float(max(gaps.min(axis=1).max(), gaps.min(axis=0).max()))
