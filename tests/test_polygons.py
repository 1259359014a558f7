from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rankaug.polygons import (
    Polygons,
    clip,
    fill,
    gather,
    grids,
    outline,
    pack,
    pixel_box,
    pixel_clip,
    read_polygons,
    resample,
)

WHOLE = (0, 12, 0, 16)  # rows, columns of a 12x16 image


def rectangle(x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    """The polygon whose pixels are columns x0:x1 and rows y0:y1: the corner pixels' centres."""
    return np.array([[x0 + 0.5, y0 + 0.5], [x1 - 0.5, y0 + 0.5], [x1 - 0.5, y1 - 0.5],
                     [x0 + 0.5, y1 - 0.5]])  # fmt: skip


@st.composite
def masks(draw: st.DrawFn) -> np.ndarray:
    """A non-empty 12x16 mask of 1-3 rectangles."""
    out = np.zeros((12, 16), np.uint8)
    for _ in range(draw(st.integers(1, 3))):
        x0, y0 = draw(st.integers(0, 14)), draw(st.integers(0, 10))
        out[y0 : draw(st.integers(y0 + 1, 12)), x0 : draw(st.integers(x0 + 1, 16))] = 1
    return out


class TestReadPolygons:
    def test_an_array_stays_one(self) -> None:
        value = np.arange(24, dtype=np.float32).reshape(2, 6, 2)
        polygons = read_polygons(value, 2, "dataset[0]")
        assert polygons.points_per == 6
        assert polygons.dtype == np.float32
        assert isinstance(polygons.points, np.ndarray)
        assert polygons.points is value  # read, never copied or written

    def test_a_list_of_arrays_or_tensors(self) -> None:
        value = [np.zeros((3, 2), np.float32), torch.ones(5, 2, dtype=torch.float64)]
        polygons = read_polygons(value, 2, "dataset[0]")
        assert polygons.points_per is None
        assert polygons.dtype == np.float32  # the first polygon's
        assert [p.shape for p in polygons.points] == [(3, 2), (5, 2)]

    def test_integer_points_are_read_as_floats(self) -> None:
        polygons = read_polygons([np.array([[0, 0], [4, 0], [4, 4]])], 1, "dataset[0]")
        assert polygons.dtype == np.float64
        assert polygons.points[0].dtype == np.float64

    @pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
    def test_float16_points_that_are_not_finite_are_refused(self, bad: float) -> None:
        # the bound 2**24 is inf in float16: the check runs in float64
        points = np.zeros((3, 2), np.float16)
        points[1, 0] = bad
        with pytest.raises(ValueError, match=r"segments has points that are not finite"):
            read_polygons(points[None], 1, "dataset[0]")
        with pytest.raises(ValueError, match=r"segments\[1\] has points that are not finite"):
            read_polygons([np.zeros((3, 2), np.float16), points], 2, "dataset[0]")

    def test_float16_points_up_to_its_largest_are_read(self) -> None:
        points = np.full((1, 3, 2), 65504, np.float16)
        assert read_polygons(points, 1, "dataset[0]").dtype == np.float16

    @pytest.mark.parametrize(
        ("value", "error", "message"),
        [
            (np.zeros((2, 4, 2)), ValueError, r"dataset\[5\] segments must be an \(3, K, 2\)"),
            (np.zeros((3, 2, 2)), ValueError, r"K >= 3 points per polygon"),
            ([np.zeros((3, 2))] * 2, ValueError, r"has 2 polygons for 3 boxes"),
            ("abc", TypeError, r"dataset\[5\] segments must be an \(N, K, 2\) array or a seq"),
            (
                [np.zeros((3, 2)), np.zeros((3, 3)), np.zeros((3, 2))],
                ValueError,
                r"segments\[1\] must be a \(K, 2\) polygon",
            ),
            ([np.zeros((3, 2))] * 2 + [np.full((3, 2), np.nan)], ValueError, r"\[2\] has points"),
            (np.full((3, 3, 2), np.inf), ValueError, r"segments has points that are not finite"),
            (np.full((3, 3, 2), 3e7), ValueError, r"segments has points .* beyond \+-16777216"),
            (np.full((3, 3, 2), -3e7), ValueError, r"segments has points .* beyond \+-16777216"),
            ([np.zeros((3, 2), "U1")] * 3, TypeError, r"segments\[0\] must hold numbers"),
        ],
    )
    def test_bad_polygons_name_the_sample_and_entry(
        self, value: object, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            read_polygons(value, 3, "dataset[5]")


class TestPolygons:
    def test_regions_hold_every_pixel_and_stay_in_the_image(self) -> None:
        inside = rectangle(2, 3, 7, 9)
        outside = inside + 100.0
        polygons = Polygons((inside, outside), None, None)
        (y0, y1, x0, x1), empty = polygons.regions((12, 16))
        assert y0 <= 3
        assert x0 <= 2
        assert y1 >= 9
        assert x1 >= 7
        assert fill(inside, (y0, y1, x0, x1)).sum() == fill(inside, WHOLE).sum() == 30
        assert empty[0] == empty[1] or empty[2] == empty[3]

    def test_mirrored_and_mapped_keep_the_form_and_dtype(self) -> None:
        points = np.array([[[1.0, 2.0], [3.0, 2.0], [3.0, 5.0]]], np.float32)
        polygons = Polygons(points, 3, np.dtype(np.float32))
        mirrored = polygons.mirrored(10)
        assert isinstance(mirrored.points, np.ndarray)
        assert mirrored.points.dtype == np.float32
        # on the fill's grid: x -> 10 - 1/16 - x
        assert mirrored.points[0].tolist() == [[8.9375, 2.0], [6.9375, 2.0], [6.9375, 5.0]]
        mapped = Polygons(tuple(points), None, None).mapped((2.0, 0.5), (1.0, 1.0))
        assert mapped.points[0].tolist() == [[3.0, 2.0], [7.0, 2.0], [7.0, 3.5]]
        assert points[0, 0].tolist() == [1.0, 2.0]  # never written

    def test_float16_points_move_in_float32_and_pack_back(self) -> None:
        points = np.array([[[1.5, 2.0], [3.0, 2.0], [3.0, 5.0]]], np.float16)
        polygons = Polygons(points, 3, np.dtype(np.float16))
        mirrored = polygons.mirrored(3000)  # 2998.4375 is no float16: kept, not rounded
        assert mirrored.points[0].tolist() == [[2998.4375, 2.0], [2996.9375, 2.0],
                                               [2996.9375, 5.0]]  # fmt: skip
        assert pack(mirrored).dtype == np.float16
        far = Polygons(tuple(points), None, np.dtype(np.float16)).mapped((1.0, 1.0), (7e4, 0))
        assert np.isfinite(far.points[0]).all()  # past float16's 65504: no inf
        with pytest.raises(ValueError, match=r"segments do not fit their dtype float16"):
            pack(far)

    @given(
        st.lists(st.floats(-1e7, 1e7, width=32), min_size=6, max_size=6),
        st.integers(1, 1 << 23),
        st.sampled_from([np.float16, np.float32, np.float64]),
    )
    def test_mirrored_rounds_once_from_float64(self, values: list[float], width: int,
                                               dtype: type) -> None:  # fmt: skip
        with np.errstate(over="ignore"):
            points = np.array(values, dtype).reshape(1, 3, 2)
        points[~np.isfinite(points)] = 0
        working = np.result_type(points.dtype, np.float32)
        shift = (width - 1 / 16, 0.0)
        expected = (points.astype(np.float64) * (-1.0, 1.0) + shift).astype(working)
        for form in (points, tuple(points)):
            mirrored = Polygons(form, None, None).mirrored(width).points[0]
            assert mirrored.dtype == working
            assert mirrored.tobytes() == expected[0].tobytes()  # to the bit, signed zeros too

    def test_a_rectangle_on_pixel_edges_mirrors_onto_the_mirrored_pixels(self) -> None:
        # (10, 10)-(20, 20) draws the pixels 10 to 20 (its far edges' too); mirrored in a
        # 40-wide image those are 19 to 29. x -> 40 - x drew 20 to 30, its box [20, 31)
        square = rectangle(10, 10, 21, 21) - 0.5  # the corners (10, 10) and (20, 20)
        whole = (0, 32, 0, 40)
        drawn = fill(square, whole)
        assert np.flatnonzero(drawn.any(axis=0)).tolist() == list(range(10, 21))
        (mirrored,) = Polygons((square,), None, None).mirrored(40).points
        np.testing.assert_array_equal(fill(mirrored, whole), drawn[:, ::-1])
        bounds = np.concatenate((mirrored.min(axis=0), mirrored.max(axis=0)))
        assert pixel_box(bounds).tolist() == [19.0, 10.0, 30.0, 21.0]

    @given(
        st.lists(st.integers(-16, 16 * 33), min_size=4, max_size=4),
        st.integers(16, 40),
        st.sampled_from([np.float16, np.float32, np.float64]),
    )
    def test_an_upright_rectangle_draws_its_mirrored_pixels(
        self, sixteenths: list[int], width: int, dtype: type
    ) -> None:
        # corners on the fill's grid (pixel edges, centres and between), partly outside
        # the image too: the mirrored polygon draws the mirrored pixels, and its pixel box
        # is the mirrored pixel box
        x0, x1 = sorted(v / 16 for v in sixteenths[:2])
        y0, y1 = sorted(v / 32 for v in sixteenths[2:])
        corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype)
        (mirrored,) = Polygons((corners,), None, None).mirrored(width).points
        whole = (0, 20, 0, width)
        np.testing.assert_array_equal(fill(mirrored, whole), fill(corners, whole)[:, ::-1])
        x_min, y_min, x_max, y_max = pixel_box(np.array([x0, y0, x1, y1])).tolist()
        bounds = np.concatenate((mirrored.min(axis=0), mirrored.max(axis=0)))
        assert pixel_box(bounds).tolist() == [width - x_max, y_min, width - x_min, y_max]


class TestGatherAndPack:
    def test_an_array_sample_gets_k_points_per_polygon(self) -> None:
        like = read_polygons(np.zeros((1, 4, 2), np.float32), 1, "dataset[0]")
        out = pack(gather([rectangle(0, 0, 2, 2), np.ones((9, 2))], like))
        assert out.shape == (2, 4, 2)
        assert out.dtype == np.float32

    def test_a_list_sample_gets_a_list_in_its_dtype_or_the_others(self) -> None:
        empty = read_polygons([], 0, "dataset[0]")
        other = read_polygons([np.zeros((3, 2), np.float32)], 1, "dataset[1]")
        out = pack(gather([np.ones((5, 2))], empty, other))
        assert isinstance(out, list)
        assert [(p.shape, p.dtype) for p in out] == [((5, 2), np.float32)]
        assert pack(gather([], empty)) == []
        assert pack(read_polygons(np.zeros((0, 7, 2)), 0, "dataset[0]")).shape == (0, 7, 2)


class TestGrids:
    @given(
        st.lists(st.floats(-50.0, 90.0, width=32), min_size=12, max_size=12),
        st.sampled_from([np.float16, np.float32, np.float64]),
    )
    def test_fill_draws_the_same_from_them(self, values: list[float], dtype: type) -> None:
        points = np.array(values, dtype).reshape(2, 3, 2)
        polygons = Polygons(points, 3, np.dtype(dtype))
        regions = polygons.regions((40, 64))
        made = grids(points)
        assert made.shape == (2, 3, 2)
        assert made.dtype == np.int32
        for polygon, region, grid in zip(points, regions, made, strict=True):
            np.testing.assert_array_equal(fill(polygon, region, grid), fill(polygon, region))


class TestFill:
    @pytest.mark.parametrize(("x", "w"), [(300.25, 8.0), (5000.0, 8.0), (59968.0, 32.0)])
    def test_float16_points_draw_what_float64_ones_draw(self, x: float, w: float) -> None:
        # x * 16 overflows float16 past 4096, and rounds well before (every point here
        # is a float16)
        points = np.array([[x, 1.0], [x + w, 1.0], [x + w, 5.0], [x, 5.0]])
        assert points.astype(np.float16).astype(np.float64).tolist() == points.tolist()
        region = (0, 8, int(x) - 2, int(x + w) + 4)
        expected = fill(points, region)
        assert expected.sum() == 5 * (w + 1)
        np.testing.assert_array_equal(fill(points.astype(np.float16), region), expected)

    def test_the_corner_pixels_centres_give_exactly_those_pixels(self) -> None:
        out = fill(rectangle(2, 3, 7, 9), WHOLE)
        expected = np.zeros((12, 16), np.uint8)
        expected[3:9, 2:7] = 1
        np.testing.assert_array_equal(out, expected)

    def test_a_region_around_the_polygon_draws_the_same_pixels_there(self) -> None:
        points = np.array([[1.3, 0.7], [14.2, 3.1], [6.6, 11.4]])
        (region,) = Polygons((points,), None, None).regions((12, 16))
        y0, y1, x0, x1 = region
        np.testing.assert_array_equal(fill(points, region), fill(points, WHOLE)[y0:y1, x0:x1])
        assert fill(points, (4, 4, 0, 5)).shape == (0, 5)


POINTS = st.lists(
    st.tuples(
        st.integers(32, 16 * 32).map(lambda n: n / 32),  # on the 1/32 grid: the ties too
        st.integers(32, 16 * 32).map(lambda n: n / 32),
    ),
    min_size=3,
    max_size=7,
)


class TestPixelBox:
    @given(points=POINTS, dtype=st.sampled_from([np.float32, np.float64]))
    def test_the_box_of_the_pixels_the_fill_draws(self, points: list[Any], dtype: Any) -> None:
        polygon = np.array(points, dtype)
        ys, xs = np.nonzero(fill(polygon, (0, 20, 0, 20)))
        bounds = np.concatenate((polygon.min(axis=0), polygon.max(axis=0)))
        box = pixel_box(bounds)
        assert box.tolist() == [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
        assert box.dtype == np.float64

    def test_many_at_once(self) -> None:
        bounds = np.array([[[5.5, 10.5, 24.5, 19.5], [1.0, 1.0, 3.0, 3.0]]])
        assert pixel_box(bounds).tolist() == [[[5, 10, 25, 20], [1, 1, 4, 4]]]


class TestPixelClip:
    @given(x0=st.integers(0, 8), y0=st.integers(0, 8), w=st.integers(1, 8), h=st.integers(1, 8))
    def test_a_polygon_cut_to_it_draws_only_the_rectangles_pixels(
        self, x0: int, y0: int, w: int, h: int
    ) -> None:
        big = np.array([[-1.0, -1.0], [18.0, -1.0], [18.0, 18.0], [-1.0, 18.0]])  # over it all
        cut = clip(big, pixel_clip((x0, y0, x0 + w, y0 + h)))
        assert cut is not None
        expected = np.zeros((20, 20), np.uint8)
        expected[y0 : y0 + h, x0 : x0 + w] = 1
        np.testing.assert_array_equal(fill(cut, (0, 20, 0, 20)), expected)


class TestOutline:
    @given(mask=masks())
    def test_filling_the_outline_draws_at_least_the_mask(self, mask: np.ndarray) -> None:
        polygon = outline(mask, (2, 3))
        assert polygon.shape[1] == 2
        assert len(polygon) >= 3
        drawn = fill(polygon, (2, 14, 3, 19))
        assert (drawn >= mask).all()
        # where it draws more: only on the bridges between parts, one pixel wide
        assert drawn.sum() - mask.sum() <= 16 * (len(contours(mask)) - 1)

    @given(x0=st.integers(0, 14), y0=st.integers(0, 10), w=st.integers(1, 8), h=st.integers(1, 8))
    def test_one_piece_gives_exactly_its_pixels(self, x0: int, y0: int, w: int, h: int) -> None:
        mask = np.zeros((12, 16), np.uint8)
        mask[y0 : y0 + h, x0 : x0 + w] = 1
        mask[y0, x0] = 0 if w > 1 else 1  # a corner off: not a rectangle
        np.testing.assert_array_equal(fill(outline(mask), WHOLE), mask)

    def test_a_hole_stays_a_hole(self) -> None:
        mask = np.zeros((8, 8), np.uint8)
        mask[1:7, 1:7] = 1
        mask[3:5, 3:5] = 0
        drawn = fill(outline(mask), (0, 8, 0, 8))
        assert not drawn[3:5, 3:5].all()  # the bridge draws its edge pixels, no more
        assert drawn.sum() <= mask.sum() + 2


class TestResample:
    def test_the_points_lie_on_the_edges_and_keep_the_first(self) -> None:
        square = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
        out = resample(square, 16)
        assert out.shape == (16, 2)
        assert out[0].tolist() == [0.0, 0.0]
        on_edge = np.isclose(out, 0.0) | np.isclose(out, 4.0)
        assert on_edge.any(axis=1).all()

    def test_as_many_points_is_the_polygon(self) -> None:
        square = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
        assert resample(square, 4).tolist() == square.tolist()

    def test_fewer_drop_the_points_a_cut_adds_along_an_edge_first(self) -> None:
        # a diamond cut by x <= 6: the cut adds two corners on the edge, and a point
        # between them; back to 4 points, the diamond's extremes stay (they were taken
        # evenly by index: a corner went and the bounds shrank)
        diamond = np.array([[4.0, 0.0], [8.0, 4.0], [4.0, 8.0], [0.0, 4.0]])
        cut = clip(diamond, (0.0, 0.0, 6.0, 8.0))
        assert cut is not None
        cut = np.insert(cut, 2, [6.0, 4.0], axis=0)  # on the edge, between its corners
        assert len(cut) == 6
        fewer = resample(cut, 4)
        np.testing.assert_array_equal(fewer.min(axis=0), [0.0, 0.0])
        np.testing.assert_array_equal(fewer.max(axis=0), [6.0, 8.0])
        assert all(point in cut.tolist() for point in fewer.tolist())
        assert resample(cut, 5).tolist() == np.delete(cut, 2, axis=0).tolist()

    @given(points=st.lists(st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
                           min_size=13, max_size=40, unique=True),
           count=st.integers(4, 12))  # fmt: skip
    def test_fewer_keep_their_points_in_order_and_the_bounds(
        self, points: list[tuple[int, int]], count: int
    ) -> None:
        polygon = np.array(points, np.float64) / 4
        fewer = resample(polygon, count)
        assert fewer.shape == (count, 2)
        kept = [points.index((round(x * 4), round(y * 4))) for x, y in fewer.tolist()]
        assert kept == sorted(kept)
        np.testing.assert_array_equal(fewer.min(axis=0), polygon.min(axis=0))
        np.testing.assert_array_equal(fewer.max(axis=0), polygon.max(axis=0))

    def test_a_collinear_point_goes_before_any_corner(self) -> None:
        # an L of 6 corners with a point on each of its edges: back to 6, the corners
        l_shape = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 2.0], [2.0, 2.0], [2.0, 4.0],
                            [0.0, 4.0]])  # fmt: skip
        closed = np.concatenate((l_shape, l_shape[:1]))
        middles = (closed[:-1] + closed[1:]) / 2
        both = np.stack((l_shape, middles), axis=1).reshape(-1, 2)
        assert resample(both, 6).tolist() == l_shape.tolist()

    def test_fewer_than_the_extremes_drops_one_of_them(self) -> None:
        square = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
        assert resample(square, 2).tolist() == [[4.0, 0.0], [4.0, 4.0]]

    def test_a_point_repeated(self) -> None:
        assert resample(np.zeros((3, 2)), 5).tolist() == [[0.0, 0.0]] * 5


class TestClip:
    def test_an_inside_polygon_is_returned_as_it_is(self) -> None:
        points = rectangle(2, 2, 6, 6)
        assert clip(points, (0.0, 0.0, 8.0, 8.0)) is points

    def test_a_concave_polygon_runs_along_the_cut(self) -> None:
        u = np.array([[0, 0], [6, 0], [6, 6], [4, 6], [4, 2], [2, 2], [2, 6], [0, 6]], float)
        out = clip(u, (0.0, 3.0, 6.0, 10.0))
        assert out is not None
        assert out[:, 1].min() == 3.0
        assert sorted(map(tuple, out.tolist())) == sorted(
            [(0, 3), (6, 3), (6, 6), (4, 6), (4, 3), (2, 3), (2, 6), (0, 6)]
        )

    @given(
        points=st.lists(st.tuples(st.floats(-20, 40), st.floats(-20, 40)), min_size=3, max_size=12),
        box=st.tuples(st.floats(0, 10), st.floats(0, 10), st.floats(11, 30), st.floats(11, 30)),
    )
    def test_what_is_left_lies_in_the_rectangle_and_fills_no_more(
        self, points: list[tuple[float, float]], box: tuple[float, float, float, float]
    ) -> None:
        out = clip(np.array(points), box)
        left = np.empty((0, 2)) if out is None else out  # None: under 1e-6 px^2 inside
        x0, y0, x1, y1 = box
        assert (left >= np.array([x0, y0]) - 1e-9).all()
        assert (left <= np.array([x1, y1]) + 1e-9).all()
        assert out is None or len(out) >= 3

    def test_nothing_left(self) -> None:
        assert clip(rectangle(0, 0, 4, 4), (5.0, 5.0, 9.0, 9.0)) is None
        sliver = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]])
        assert clip(sliver, (4.0, 0.0, 9.0, 9.0)) is None  # only an edge touches

    def test_a_polygon_of_no_area_keeps_what_of_it_is_inside(self) -> None:
        # fill draws a line's pixels: it was kept whole inside and dropped when cut
        line = np.array([[2.0, 5.0], [20.0, 5.0], [10.0, 5.0]])
        cut = clip(line, (0.0, 0.0, 14.5, 9.5))
        assert cut is not None
        assert sorted(map(tuple, cut.tolist())) == [(2, 5), (10, 5), (14.5, 5), (14.5, 5)]
        np.testing.assert_array_equal(fill(cut, (0, 10, 0, 16))[5, 2:15], 1)
        on_edge = clip(line, (0.0, 5.0, 14.5, 9.5))  # lying on the rectangle's edge
        assert on_edge is not None
        assert on_edge[:, 1].tolist() == [5.0] * len(on_edge)
        assert clip(line, (0.0, 6.0, 14.5, 9.5)) is None  # nothing of it inside
        point = np.array([[5.0, 5.0]] * 3)
        assert clip(point, (0.0, 0.0, 4.0, 9.0)) is None
        assert clip(point, (0.0, 0.0, 9.0, 9.0)) is point


def contours(mask: np.ndarray) -> list[np.ndarray]:
    found, _ = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    return list(found)
