from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug.boxes import (
    all_inside,
    box_area,
    check_filter_args,
    clip_xyxy,
    edge_tolerance,
    keep_mask,
    validate_xyxy,
)
from tests.boxes.helpers import (
    HW,
    XYXY,
    loose_boxes,
    overlapping_rows,
    unit,
)


class TestValidateXyxy:
    def test_inside_boxes_are_returned_unchanged(self) -> None:
        boxes = np.array([[0.0, 0.0, 200.0, 100.0], [5.0, 5.0, 5.0, 9.0]])
        result = validate_xyxy(boxes, HW)
        assert result is boxes

    @given(
        rows=st.lists(
            st.lists(
                st.sampled_from([-1.0, 0.0, 0.5, 99.0, 100.0, 199.5, 200.0, 201.0, np.nan, np.inf]),
                min_size=4,
                max_size=4,
            ),
            min_size=1,
            max_size=8,
        )
    )
    def test_few_boxes_and_many_agree(self, rows: list[list[float]]) -> None:
        # up to 32 boxes are checked row by row, more with numpy: the same outcome
        few = np.array(rows)
        many = np.tile(few, (40 // len(few) + 1, 1))
        outcomes = []
        for boxes in (few, many):
            try:
                outcomes.append(validate_xyxy(boxes, HW)[: len(few)].tolist())
            except ValueError as exc:
                outcomes.append(str(exc).split(";")[0].split("=")[0] + type(exc).__name__)
        assert outcomes[0] == outcomes[1]

    def test_empty(self) -> None:
        assert validate_xyxy(np.zeros((0, 4)), HW).shape == (0, 4)

    def test_converts_to_float64(self) -> None:
        result = validate_xyxy(np.array([[1, 2, 3, 4]], dtype=np.int32), HW)
        assert result.dtype == np.float64

    @pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
    def test_non_finite_names_field_and_row(self, bad: float) -> None:
        boxes = np.array([[0.0, 0.0, 5.0, 5.0], [1.0, 1.0, bad, 5.0]])
        with pytest.raises(
            ValueError,
            match=r"gt\[1\] = \[1\.0, 1\.0, -?(nan|inf), 5\.0\] contains NaN or infinity",
        ):
            validate_xyxy(boxes, HW, name="gt")

    def test_inverted_x(self) -> None:
        boxes = np.array([[0.0, 0.0, 5.0, 5.0], [0.0, 0.0, 5.0, 5.0], [9.0, 0.0, 8.0, 5.0]])
        with pytest.raises(
            ValueError, match=r"bboxes\[2\] = \[9\.0, 0\.0, 8\.0, 5\.0\] has x_max < x_min"
        ):
            validate_xyxy(boxes, HW)

    def test_inverted_y(self) -> None:
        with pytest.raises(ValueError, match=r"bboxes\[0\] = \[0\.0, 7\.0, 5\.0, 6\.0\]"):
            validate_xyxy(np.array([[0.0, 7.0, 5.0, 6.0]]), HW)

    def test_counts_further_bad_rows(self) -> None:
        boxes = np.array([[9.0, 0.0, 8.0, 5.0]] * 3)
        with pytest.raises(ValueError, match=r"bboxes\[0\].*2 more such rows"):
            validate_xyxy(boxes, HW)

    @pytest.mark.parametrize(
        "box",
        [
            [-10.0, 0.0, 0.0, 10.0],  # touches the left edge from outside
            [0.0, -10.0, 10.0, 0.0],  # touches the top edge
            [200.0, 0.0, 210.0, 10.0],  # touches the right edge
            [0.0, 100.0, 10.0, 110.0],  # touches the bottom edge
            [300.0, 300.0, 310.0, 310.0],
            [0.0, 0.0, 0.0, 0.0],  # a point on the corner
            [200.0, 50.0, 200.0, 60.0],  # zero width on the right border
        ],
    )
    def test_entirely_outside(self, box: list[float]) -> None:
        with pytest.raises(ValueError, match=r"bboxes\[0\] = .* lies entirely outside the 100x200"):
            validate_xyxy(np.array([box]), HW)

    def test_entirely_outside_even_with_clip_false(self) -> None:
        with pytest.raises(ValueError, match="entirely outside"):
            validate_xyxy(np.array([[-10.0, 0.0, -1.0, 10.0]]), HW, clip=False)

    def test_partly_outside_is_clipped(self) -> None:
        boxes = np.array([[10.0, 10.0, 20.0, 20.0], [-5.0, -6.0, 250.0, 150.0]])
        result = validate_xyxy(boxes, HW)
        np.testing.assert_array_equal(result, [[10, 10, 20, 20], [0, 0, 200, 100]])
        assert boxes[1, 0] == -5.0  # the input is left alone

    def test_partly_outside_refused_without_clip(self) -> None:
        boxes = np.array([[10.0, 10.0, 20.0, 20.0], [10.0, 10.0, 201.0, 20.0]])
        with pytest.raises(
            ValueError,
            match=r"bboxes\[1\] = \[10\.0, 10\.0, 201\.0, 20\.0\] lies partly outside.*clip=False",
        ):
            validate_xyxy(boxes, HW, clip=False)

    def test_float_rounding_overshoot_is_the_edge_without_clip(self) -> None:
        boxes = np.array([[-1e-9, 0.0, 200.0 + 1e-9, 100.0]])
        assert validate_xyxy(boxes, HW, clip=False) is boxes

    @pytest.mark.parametrize("clip", [True, False])
    def test_a_float32_edge_past_the_image_by_rounding_is_left_as_it_is(self, clip: bool) -> None:
        # before: float32(640) after a scale, 640.00006, was clipped on every read (or,
        # with clip=False, refused: 6e-5 past the edge, beyond the 1e-6 pixel then allowed)
        edge = float(np.nextafter(np.float32(640), np.float32(641)))
        boxes = np.array([[0.0, -1e-5, edge, 300.0], [10.0, 10.0, 20.0, 480.0 + 1e-4]])
        assert (edge > 640, edge - 640 < edge_tolerance(640, 480)) == (True, True)
        assert validate_xyxy(boxes, (480, 640), clip=clip) is boxes

    def test_an_edge_past_the_tolerance_is_still_clipped(self) -> None:
        further = np.array([[0.0, 0.0, 640.0 + 2 * edge_tolerance(640, 480), 300.0]])
        assert validate_xyxy(further, (480, 640))[0, 2] == 640.0

    def test_an_edge_past_the_tolerance_is_still_refused_without_clip(self) -> None:
        further = np.array([[0.0, 0.0, 640.0 + 2 * edge_tolerance(640, 480), 300.0]])
        with pytest.raises(ValueError, match=r"lies partly outside .* clip=False"):
            validate_xyxy(further, (480, 640), clip=False)

    def test_zero_size_boxes_are_allowed(self) -> None:
        boxes = np.array([[5.0, 5.0, 5.0, 20.0], [5.0, 5.0, 20.0, 5.0]])
        np.testing.assert_array_equal(validate_xyxy(boxes, HW), boxes)

    def test_bad_image_size(self) -> None:
        with pytest.raises(ValueError, match="image_hw"):
            validate_xyxy(XYXY, (0, 10))

    @given(boxes=loose_boxes().map(overlapping_rows))
    def test_boxes_overlapping_the_image_are_clipped_to_it(self, boxes: np.ndarray) -> None:
        result = validate_xyxy(boxes, (100, 100))
        tolerance = edge_tolerance(100, 100)  # edges past it by rounding alone: left as they are
        beyond = bool(((boxes < -tolerance) | (boxes > 100.0 + tolerance)).any())
        np.testing.assert_array_equal(result, np.clip(boxes, 0.0, 100.0) if beyond else boxes)

    @given(boxes=loose_boxes().map(overlapping_rows), where=st.integers(0, 8), data=st.data())
    def test_first_box_outside_the_image_is_named(
        self, boxes: np.ndarray, where: int, data: st.DataObject
    ) -> None:
        outside = data.draw(st.sampled_from([[-9.0, 0.0, 0.0, 5.0], [10.0, 100.0, 20.0, 120.0]]))
        where = min(where, len(boxes))
        boxes = np.insert(boxes, where, outside, axis=0)
        with pytest.raises(ValueError, match=rf"bboxes\[{where}\] = .* entirely outside"):
            validate_xyxy(boxes, (100, 100))


# with rounding past the edges (1e-4, within edge_tolerance) and further (1e-3)
_EDGES = [-1.0, -1e-4, 0.0, 0.5, 99.0, 100.0, 100.0001, 100.5, 199.5, 200.0, 200.0001,
          200.001, 201.0, np.nan, np.inf]  # fmt: skip


class TestAllInside:
    @given(
        rows=st.lists(
            st.lists(st.sampled_from(_EDGES), min_size=4, max_size=4), min_size=1, max_size=8
        ),
        copies=st.sampled_from([1, 5]),
    )
    def test_true_exactly_when_validation_has_nothing_to_do(
        self, rows: list[list[float]], copies: int
    ) -> None:
        # 8 rows or fewer are checked row by row, 40 (5 copies) with numpy
        boxes = np.tile(np.array(rows), (copies, 1))
        try:
            untouched = validate_xyxy(boxes, HW, clip=False) is boxes
        except ValueError:
            untouched = False
        assert all_inside(boxes, HW[1], HW[0]) == untouched

    def test_the_image_edges_are_inside(self) -> None:
        assert all_inside(np.array([[0.0, 0.0, 200.0, 100.0], [5.0, 5.0, 5.0, 9.0]]), 200, 100)

    def test_edges_past_the_image_by_float32_rounding_are_inside(self) -> None:
        # before: 640.00006 (float32(640) after a scale) sent every read to the clipping
        edge = float(np.nextafter(np.float32(640), np.float32(641)))
        for count in (1, 40):  # row by row, and with numpy
            boxes = np.tile([[-1e-5, 0.0, edge, 480.0001]], (count, 1))
            assert all_inside(boxes, 640, 480)
            assert not all_inside(boxes + np.array([0.0, 0.0, 1e-3, 0.0]), 640, 480)  # further

    @pytest.mark.parametrize(
        "row",
        [
            [-0.5, 0.0, 10.0, 10.0],  # starts left of the image
            [0.0, 0.0, 200.5, 10.0],  # ends right of it
            [0.0, 0.0, 10.0, 100.5],  # ends below it
            [20.0, 0.0, 10.0, 10.0],  # x_max < x_min
            [200.0, 0.0, 200.0, 10.0],  # on the right border, outside
            [0.0, 0.0, 0.0, 10.0],  # on the left border, outside
            [np.nan, 0.0, 10.0, 10.0],
        ],
    )
    def test_one_bad_row_among_good_ones_is_found(self, row: list[float]) -> None:
        good = np.array([[1.0, 1.0, 50.0, 50.0]])
        for count in (3, 40):  # row by row, and with numpy
            boxes = np.concatenate([np.tile(good, (count, 1)), [row]])
            assert not all_inside(boxes, 200, 100)


class TestBoxArea:
    def test_known(self) -> None:
        boxes = np.array([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 1.0, 5.0], [0.5, 0.5, 1.0, 0.75]])
        np.testing.assert_array_equal(box_area(boxes), [6.0, 0.0, 0.125])

    def test_negative_extent_is_zero(self) -> None:
        boxes = np.array([[5.0, 0.0, 4.0, 10.0], [0.0, 5.0, 10.0, 4.0], [5.0, 5.0, 4.0, 4.0]])
        np.testing.assert_array_equal(box_area(boxes), [0.0, 0.0, 0.0])

    def test_empty(self) -> None:
        result = box_area(np.zeros((0, 4)))
        assert result.shape == (0,)
        assert result.dtype == np.float64

    def test_wrong_shape(self) -> None:
        with pytest.raises(ValueError, match=r"xyxy must have shape \(N, 4\)"):
            box_area(np.zeros((2, 3)))


class TestClipXyxy:
    def test_known(self) -> None:
        boxes = np.array([[-5.0, 2.0, 15.0, 8.0], [20.0, 20.0, 30.0, 30.0]])
        result = clip_xyxy(boxes, 0.0, 0.0, 10.0, 10.0)
        np.testing.assert_array_equal(result, [[0, 2, 10, 8], [10, 10, 10, 10]])

    def test_offset_window(self) -> None:
        result = clip_xyxy(np.array([[0.0, 0.0, 100.0, 100.0]]), 10.0, 20.0, 30.0, 50.0)
        np.testing.assert_array_equal(result, [[10, 20, 30, 50]])

    def test_returns_new_array(self) -> None:
        boxes = np.array([[1.0, 1.0, 2.0, 2.0]])
        result = clip_xyxy(boxes, 0.0, 0.0, 10.0, 10.0)
        assert result is not boxes
        result[:] = 0.0
        np.testing.assert_array_equal(boxes, [[1, 1, 2, 2]])

    def test_empty(self) -> None:
        assert clip_xyxy(np.zeros((0, 4)), 0.0, 0.0, 1.0, 1.0).shape == (0, 4)

    @pytest.mark.parametrize(
        "window", [(5.0, 0.0, 4.0, 1.0), (0.0, 5.0, 1.0, 4.0), (np.nan, 0.0, 1.0, 1.0)]
    )
    def test_bad_window(self, window: tuple[float, float, float, float]) -> None:
        with pytest.raises(ValueError, match="clip window must have x0 <= x1 and y0 <= y1"):
            clip_xyxy(XYXY, *window)

    @given(boxes=loose_boxes(), window=st.tuples(unit, unit, unit, unit))
    def test_result_lies_in_window(
        self, boxes: np.ndarray, window: tuple[float, float, float, float]
    ) -> None:
        x0, x1 = sorted((window[0] * 100, window[2] * 100))
        y0, y1 = sorted((window[1] * 100, window[3] * 100))
        result = clip_xyxy(boxes, x0, y0, x1, y1)
        assert np.all(result[:, [0, 2]] >= x0)
        assert np.all(result[:, [0, 2]] <= x1)
        assert np.all(result[:, [1, 3]] >= y0)
        assert np.all(result[:, [1, 3]] <= y1)


class TestKeepMask:
    def test_default_keeps_positive_boxes_only(self) -> None:
        clipped = np.array(
            [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], [2.0, 2.0, 1.0, 3.0]]
        )
        result = keep_mask(clipped, np.ones(4))
        assert result.dtype == np.bool_
        np.testing.assert_array_equal(result, [True, False, False, False])

    def test_zero_full_area_is_dropped(self) -> None:
        clipped = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
        np.testing.assert_array_equal(keep_mask(clipped, np.array([0.0, 1.0])), [False, True])

    def test_min_visibility_boundary_is_kept(self) -> None:
        clipped = np.array([[0.0, 0.0, 5.0, 10.0], [0.0, 0.0, 4.0, 10.0]])
        full = np.array([100.0, 100.0])
        np.testing.assert_array_equal(keep_mask(clipped, full, min_visibility=0.5), [True, False])

    def test_full_visibility_one_keeps_uncut_boxes(self) -> None:
        boxes = np.array([[0.1, 0.2, 3.3, 4.7], [0.0, 0.0, 30.0, 30.0]])
        clipped = clip_xyxy(boxes, 0.0, 0.0, 10.0, 10.0)
        result = keep_mask(clipped, box_area(boxes), min_visibility=1.0)
        np.testing.assert_array_equal(result, [True, False])

    def test_min_area(self) -> None:
        clipped = np.array([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.5]])
        np.testing.assert_array_equal(
            keep_mask(clipped, np.ones(2) * 4, min_area=4.0), [True, False]
        )

    def test_min_width_and_height(self) -> None:
        clipped = np.array([[0.0, 0.0, 3.0, 1.0], [0.0, 0.0, 1.0, 3.0], [0.0, 0.0, 3.0, 3.0]])
        full = np.full(3, 9.0)
        np.testing.assert_array_equal(keep_mask(clipped, full, min_width=3.0), [True, False, True])
        np.testing.assert_array_equal(keep_mask(clipped, full, min_height=3.0), [False, True, True])

    def test_empty(self) -> None:
        result = keep_mask(np.zeros((0, 4)), np.zeros(0), min_visibility=0.5)
        assert result.shape == (0,)
        assert result.dtype == np.bool_

    def test_full_area_shape_mismatch(self) -> None:
        with pytest.raises(ValueError, match=r"full_area must have shape \(2,\).*got shape \(3,\)"):
            keep_mask(np.zeros((2, 4)), np.ones(3))

    @given(
        boxes=loose_boxes(),
        window=st.tuples(unit, unit, unit, unit),
        min_visibility=unit,
        min_area=st.floats(0.0, 50.0),
    )
    def test_kept_boxes_are_positive_inside_and_visible(
        self,
        boxes: np.ndarray,
        window: tuple[float, float, float, float],
        min_visibility: float,
        min_area: float,
    ) -> None:
        x0, x1 = sorted((window[0] * 100, window[2] * 100))
        y0, y1 = sorted((window[1] * 100, window[3] * 100))
        clipped = clip_xyxy(boxes, x0, y0, x1, y1)
        full = box_area(boxes)
        keep = keep_mask(clipped, full, min_visibility=min_visibility, min_area=min_area)
        kept = clipped[keep]
        assert np.all(kept[:, 2] > kept[:, 0])
        assert np.all(kept[:, 3] > kept[:, 1])
        assert np.all(kept[:, [0, 2]] >= x0)
        assert np.all(kept[:, [0, 2]] <= x1)
        assert np.all(kept[:, [1, 3]] >= y0)
        assert np.all(kept[:, [1, 3]] <= y1)
        assert np.all(box_area(kept) >= min_area)
        assert np.all(box_area(kept) >= min_visibility * full[keep])
        # and every dropped box fails one of the rules
        dropped = ~keep
        fails = (
            (box_area(clipped) <= 0.0)
            | (box_area(clipped) < min_area)
            | (box_area(clipped) < min_visibility * full)
            | (full <= 0.0)
        )
        assert np.all(fails[dropped])


class TestCheckFilterArgs:
    def test_accepts_valid_values(self) -> None:
        check_filter_args(min_area=0, min_visibility=1, min_width=2.5, min_height=np.float32(1.0))
        check_filter_args(min_area=np.int64(3), min_visibility=0.0, min_width=0, min_height=0)

    @pytest.mark.parametrize("arg", ["min_area", "min_visibility", "min_width", "min_height"])
    @pytest.mark.parametrize("bad", [True, "1", None, 1j])
    def test_non_real_is_type_error(self, arg: str, bad: object) -> None:
        values: dict[str, object] = {
            "min_area": 0.0,
            "min_visibility": 0.0,
            "min_width": 0.0,
            "min_height": 0.0,
        }
        values[arg] = bad
        with pytest.raises(TypeError, match=rf"{arg} must be a finite number.*got {bad!r} of type"):
            check_filter_args(**values)  # type: ignore[arg-type]

    @pytest.mark.parametrize("arg", ["min_area", "min_visibility", "min_width", "min_height"])
    @pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), -0.001])
    def test_out_of_range_is_value_error(self, arg: str, bad: float) -> None:
        values = {"min_area": 0.0, "min_visibility": 0.0, "min_width": 0.0, "min_height": 0.0}
        values[arg] = bad
        with pytest.raises(ValueError, match=rf"{arg} must be a finite number >= 0.0.*got {bad!r}"):
            check_filter_args(**values)

    def test_visibility_above_one(self) -> None:
        with pytest.raises(
            ValueError, match=r"min_visibility must be a finite number >= 0.0 and <= 1.0, got 1.01"
        ):
            check_filter_args(min_area=0, min_visibility=1.01, min_width=0, min_height=0)

    def test_large_area_is_fine(self) -> None:
        check_filter_args(min_area=1e9, min_visibility=0.5, min_width=1e4, min_height=1e4)


class TestKeepMaskTolerance:
    def test_slivers_below_the_tolerance_are_dropped(self) -> None:
        clipped = np.array([[0.0, 0.0, 1e-14, 5.0], [0.0, 0.0, 5.0, 2e-3], [0.0, 0.0, 5.0, 5.0]])
        full = box_area(clipped) + 1.0
        assert keep_mask(clipped, full).tolist() == [True, True, True]
        assert keep_mask(clipped, full, tolerance=1e-3).tolist() == [False, True, True]
        assert keep_mask(clipped, full, tolerance=1e-2).tolist() == [False, False, True]
