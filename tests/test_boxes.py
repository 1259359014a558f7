"""Tests for rankaug.boxes."""

from __future__ import annotations

import itertools
import typing

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rankaug.boxes import (
    BOX_FORMATS,
    BoxFormat,
    as_box_array,
    box_area,
    check_box_format,
    check_filter_args,
    clip_xyxy,
    from_xyxy,
    keep_mask,
    to_xyxy,
    validate_xyxy,
)

# One 100 (high) x 200 (wide) image and one box in it, in every format.
HW = (100, 200)
XYXY = np.array([[20.0, 10.0, 120.0, 60.0]])
KNOWN: dict[str, list[float]] = {
    "pascal_voc": [20.0, 10.0, 120.0, 60.0],
    "coco": [20.0, 10.0, 100.0, 50.0],
    "yolo": [0.35, 0.35, 0.5, 0.5],
    "albumentations": [0.1, 0.1, 0.6, 0.6],
}

image_sizes = st.tuples(st.integers(1, 4096), st.integers(1, 4096))
unit = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def boxes_in_image(draw: st.DrawFn, max_boxes: int = 8) -> tuple[np.ndarray, tuple[int, int]]:
    """Upright xyxy boxes inside a random image (zero extents allowed)."""
    height, width = draw(image_sizes)
    rows = draw(st.lists(st.tuples(unit, unit, unit, unit), max_size=max_boxes))
    boxes = np.array(rows, dtype=np.float64).reshape(-1, 4)
    xs = np.sort(boxes[:, [0, 2]], axis=1) * width
    ys = np.sort(boxes[:, [1, 3]], axis=1) * height
    return np.stack([xs[:, 0], ys[:, 0], xs[:, 1], ys[:, 1]], axis=1), (height, width)


@st.composite
def loose_boxes(draw: st.DrawFn) -> np.ndarray:
    """Upright xyxy boxes anywhere in [-50, 150]^2, zero extents included."""
    coords = st.floats(-50.0, 150.0, allow_nan=False)
    rows = draw(st.lists(st.tuples(coords, coords, coords, coords), max_size=8))
    boxes = np.array(rows, dtype=np.float64).reshape(-1, 4)
    xs = np.sort(boxes[:, [0, 2]], axis=1)
    ys = np.sort(boxes[:, [1, 3]], axis=1)
    return np.stack([xs[:, 0], ys[:, 0], xs[:, 1], ys[:, 1]], axis=1)


def _overlapping_rows(boxes: np.ndarray) -> np.ndarray:
    """Keep the rows that overlap the 100 x 100 image (boundary contact excluded)."""
    inside = (boxes[:, 2] > 0) & (boxes[:, 3] > 0) & (boxes[:, 0] < 100) & (boxes[:, 1] < 100)
    return boxes[inside]


class TestBoxFormats:
    def test_order(self) -> None:
        assert BOX_FORMATS == ("pascal_voc", "coco", "yolo", "albumentations")

    def test_literal_matches_tuple(self) -> None:
        assert typing.get_args(BoxFormat) == BOX_FORMATS


class TestCheckBoxFormat:
    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_accepts_every_format(self, fmt: str) -> None:
        assert check_box_format(fmt) == fmt

    def test_unknown_is_value_error(self) -> None:
        with pytest.raises(ValueError, match=r"box_format must be one of 'pascal_voc'.*'xywh'"):
            check_box_format("xywh")

    def test_wrong_case_is_refused(self) -> None:
        with pytest.raises(ValueError, match="'YOLO'"):
            check_box_format("YOLO")

    def test_non_string_is_type_error(self) -> None:
        # rankaug.checks' wording since issue 9 made the messages uniform
        with pytest.raises(
            TypeError, match=r"fmt must be one of 'pascal_voc'.*albumentations.*got 3 of type int"
        ):
            check_box_format(3, name="fmt")


class TestAsBoxArray:
    def test_list_of_tuples(self) -> None:
        result = as_box_array([(1, 2, 3, 4), (5, 6, 7, 8)])
        assert result.dtype == np.float64
        np.testing.assert_array_equal(result, [[1, 2, 3, 4], [5, 6, 7, 8]])

    def test_tuple_of_lists(self) -> None:
        np.testing.assert_array_equal(as_box_array(([1.5, 2, 3, 4],)), [[1.5, 2, 3, 4]])

    def test_float64_array_is_not_copied(self) -> None:
        boxes = np.zeros((3, 4))
        assert as_box_array(boxes) is boxes

    @pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.uint8, np.int64])
    def test_other_numeric_dtypes_become_float64(self, dtype: type) -> None:
        result = as_box_array(np.array([[1, 2, 3, 4]], dtype=dtype))
        assert result.dtype == np.float64
        np.testing.assert_array_equal(result, [[1, 2, 3, 4]])

    @pytest.mark.parametrize(
        "empty",
        [[], (), np.zeros((0, 4)), np.array([]), np.zeros((0, 4), dtype=np.float32)],
        ids=["list", "tuple", "array04", "array0", "float32"],
    )
    def test_empty_gives_0x4(self, empty: object) -> None:
        result = as_box_array(empty)
        assert result.shape == (0, 4)
        assert result.dtype == np.float64

    def test_torch_float_tensor(self) -> None:
        tensor = torch.tensor([[1.0, 2.0, 3.0, 4.0]], requires_grad=True)
        result = as_box_array(tensor)
        assert isinstance(result, np.ndarray)
        assert result.dtype == np.float64
        np.testing.assert_array_equal(result, [[1, 2, 3, 4]])

    @pytest.mark.parametrize("dtype", [torch.int64, torch.bfloat16, torch.float16, torch.uint8])
    def test_torch_other_dtypes(self, dtype: torch.dtype) -> None:
        result = as_box_array(torch.tensor([[1, 2, 3, 4]], dtype=dtype))
        np.testing.assert_array_equal(result, [[1, 2, 3, 4]])

    @pytest.mark.parametrize("empty", [torch.zeros(0), torch.zeros(0, 4)], ids=["0", "0x4"])
    def test_torch_empty(self, empty: torch.Tensor) -> None:
        assert as_box_array(empty).shape == (0, 4)

    def test_torch_bool_is_type_error(self) -> None:
        with pytest.raises(TypeError, match=r"bboxes must hold real numbers.*torch.bool"):
            as_box_array(torch.ones(1, 4, dtype=torch.bool))

    def test_five_columns_names_field_shape_and_labels(self) -> None:
        with pytest.raises(
            ValueError, match=r"targets must have shape \(N, 4\), got shape \(2, 5\)"
        ) as info:
            as_box_array([[0, 0, 1, 1, 3], [0, 0, 2, 2, 1]], name="targets")
        assert "separate per-box field" in str(info.value)
        assert "labels" in str(info.value)

    def test_empty_five_columns_is_refused_too(self) -> None:
        with pytest.raises(ValueError, match=r"\(0, 5\)"):
            as_box_array(np.zeros((0, 5)))

    def test_single_flat_box_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"got shape \(4,\)"):
            as_box_array([1.0, 2.0, 3.0, 4.0])

    def test_three_dimensional_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"got shape \(1, 1, 4\)"):
            as_box_array(np.zeros((1, 1, 4)))

    def test_ragged_rows_are_value_error(self) -> None:
        with pytest.raises(ValueError, match="bboxes must be a sequence of boxes of 4 numbers"):
            as_box_array([[1, 2, 3, 4], [1, 2, 3]])

    @pytest.mark.parametrize(
        "bad",
        [[[True, False, True, True]], [["1", "2", "3", "4"]], [[1, 2, 3, None]], [[1j, 0, 0, 0]]],
        ids=["bool", "str", "none", "complex"],
    )
    def test_non_numbers_are_type_error(self, bad: object) -> None:
        with pytest.raises(TypeError, match="bboxes must hold real numbers"):
            as_box_array(bad)

    def test_masked_array_is_refused(self) -> None:
        with pytest.raises(TypeError, match="bboxes must not be a masked array"):
            as_box_array(np.ma.masked_array(np.zeros((1, 4)), mask=[[0, 0, 0, 1]]))

    def test_array_like_objects(self) -> None:
        class ArrayLike:
            def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
                return np.ones((2, 4))

        np.testing.assert_array_equal(as_box_array(ArrayLike()), np.ones((2, 4)))

    @pytest.mark.parametrize("bad", [{"x": 1}, "0 0 1 1", 5, None])
    def test_non_array_like_is_type_error(self, bad: object) -> None:
        with pytest.raises(TypeError, match="bboxes must be a list or tuple"):
            as_box_array(bad)

    @given(st.lists(st.tuples(*[st.floats(allow_nan=True)] * 4), max_size=10))
    def test_any_rows_round_trip_unchanged(self, rows: list[tuple[float, ...]]) -> None:
        result = as_box_array(rows)
        assert result.shape == (len(rows), 4)
        np.testing.assert_array_equal(result, np.array(rows, dtype=np.float64).reshape(-1, 4))


class TestToXyxy:
    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_known_conversion(self, fmt: BoxFormat) -> None:
        result = to_xyxy(np.array([KNOWN[fmt]]), fmt, HW)
        assert result.dtype == np.float64
        np.testing.assert_allclose(result, XYXY, rtol=0, atol=1e-12)

    def test_full_image_yolo_box(self) -> None:
        result = to_xyxy(np.array([[0.5, 0.5, 1.0, 1.0]]), "yolo", (480, 640))
        np.testing.assert_array_equal(result, [[0.0, 0.0, 640.0, 480.0]])

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_returns_new_array(self, fmt: BoxFormat) -> None:
        boxes = np.array([KNOWN[fmt]])
        before = boxes.copy()
        result = to_xyxy(boxes, fmt, HW)
        result[:] = -1.0
        np.testing.assert_array_equal(boxes, before)

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_empty(self, fmt: BoxFormat) -> None:
        assert to_xyxy(np.zeros((0, 4)), fmt, HW).shape == (0, 4)

    def test_accepts_lists(self) -> None:
        np.testing.assert_array_equal(
            to_xyxy([[1, 2, 3, 4]], "coco", HW),  # type: ignore[arg-type]
            [[1, 2, 4, 6]],
        )

    def test_unknown_format(self) -> None:
        with pytest.raises(ValueError, match=r"fmt must be one of .*'xyxy'"):
            to_xyxy(XYXY, "xyxy", HW)  # type: ignore[arg-type]

    def test_wrong_shape(self) -> None:
        with pytest.raises(ValueError, match=r"boxes must have shape \(N, 4\), got shape \(1, 5\)"):
            to_xyxy(np.zeros((1, 5)), "coco", HW)

    @pytest.mark.parametrize("image_hw", [(0, 10), (10, -1)])
    def test_non_positive_size(self, image_hw: tuple[int, int]) -> None:
        with pytest.raises(ValueError, match="image_hw must hold positive integers"):
            to_xyxy(XYXY, "yolo", image_hw)

    @pytest.mark.parametrize("image_hw", [(10.0, 10), (10,), "ab", None, (True, 10)])
    def test_bad_size_type(self, image_hw: object) -> None:
        with pytest.raises(TypeError, match=r"image_hw must be a \(height, width\) pair of int"):
            to_xyxy(XYXY, "yolo", image_hw)  # type: ignore[arg-type]

    def test_numpy_integer_size(self) -> None:
        size = (np.int64(100), np.int64(200))
        result = to_xyxy(np.array([KNOWN["yolo"]]), "yolo", size)  # type: ignore[arg-type]
        np.testing.assert_allclose(result, XYXY, rtol=0, atol=1e-12)


class TestFromXyxy:
    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_known_conversion(self, fmt: BoxFormat) -> None:
        result = from_xyxy(XYXY, fmt, HW)
        assert result.dtype == np.float64
        np.testing.assert_allclose(result, [KNOWN[fmt]], rtol=0, atol=1e-12)

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_does_not_modify_input(self, fmt: BoxFormat) -> None:
        boxes = XYXY.copy()
        from_xyxy(boxes, fmt, HW)[:] = 0.0
        np.testing.assert_array_equal(boxes, XYXY)

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_empty(self, fmt: BoxFormat) -> None:
        assert from_xyxy(np.zeros((0, 4)), fmt, HW).shape == (0, 4)

    def test_unknown_format(self) -> None:
        with pytest.raises(ValueError, match="fmt must be one of"):
            from_xyxy(XYXY, "cxcywh", HW)  # type: ignore[arg-type]

    def test_wrong_shape(self) -> None:
        with pytest.raises(ValueError, match=r"xyxy must have shape \(N, 4\), got shape \(4,\)"):
            from_xyxy(np.zeros(4), "yolo", HW)

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    @given(data=boxes_in_image())
    def test_inverse_of_to_xyxy(
        self, fmt: BoxFormat, data: tuple[np.ndarray, tuple[int, int]]
    ) -> None:
        xyxy, image_hw = data
        back = to_xyxy(from_xyxy(xyxy, fmt, image_hw), fmt, image_hw)
        np.testing.assert_allclose(back, xyxy, rtol=1e-12, atol=1e-9)

    @pytest.mark.parametrize(("src", "dst"), list(itertools.permutations(BOX_FORMATS, 2)))
    @given(data=boxes_in_image())
    def test_round_trip_between_formats(
        self, src: BoxFormat, dst: BoxFormat, data: tuple[np.ndarray, tuple[int, int]]
    ) -> None:
        xyxy, image_hw = data
        boxes = from_xyxy(xyxy, src, image_hw)
        converted = from_xyxy(to_xyxy(boxes, src, image_hw), dst, image_hw)
        back = from_xyxy(to_xyxy(converted, dst, image_hw), src, image_hw)
        # Pixel formats hold values up to 4096, normalised ones up to 1.
        atol = 1e-9 if src in ("pascal_voc", "coco") else 1e-12
        np.testing.assert_allclose(back, boxes, rtol=1e-12, atol=atol)
        np.testing.assert_allclose(converted, from_xyxy(xyxy, dst, image_hw), rtol=1e-12, atol=1e-9)


class TestValidateXyxy:
    def test_inside_boxes_are_returned_unchanged(self) -> None:
        boxes = np.array([[0.0, 0.0, 200.0, 100.0], [5.0, 5.0, 5.0, 9.0]])
        result = validate_xyxy(boxes, HW)
        assert result is boxes

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

    def test_float_rounding_overshoot_is_clipped_without_clip(self) -> None:
        boxes = np.array([[-1e-9, 0.0, 200.0 + 1e-9, 100.0]])
        np.testing.assert_array_equal(validate_xyxy(boxes, HW, clip=False), [[0, 0, 200, 100]])

    def test_zero_size_boxes_are_allowed(self) -> None:
        boxes = np.array([[5.0, 5.0, 5.0, 20.0], [5.0, 5.0, 20.0, 5.0]])
        np.testing.assert_array_equal(validate_xyxy(boxes, HW), boxes)

    def test_bad_image_size(self) -> None:
        with pytest.raises(ValueError, match="image_hw"):
            validate_xyxy(XYXY, (0, 10))

    @given(boxes=loose_boxes().map(_overlapping_rows))
    def test_boxes_overlapping_the_image_are_clipped_to_it(self, boxes: np.ndarray) -> None:
        result = validate_xyxy(boxes, (100, 100))
        np.testing.assert_array_equal(result, np.clip(boxes, 0.0, 100.0))

    @given(boxes=loose_boxes().map(_overlapping_rows), where=st.integers(0, 8), data=st.data())
    def test_first_box_outside_the_image_is_named(
        self, boxes: np.ndarray, where: int, data: st.DataObject
    ) -> None:
        outside = data.draw(st.sampled_from([[-9.0, 0.0, 0.0, 5.0], [10.0, 100.0, 20.0, 120.0]]))
        where = min(where, len(boxes))
        boxes = np.insert(boxes, where, outside, axis=0)
        with pytest.raises(ValueError, match=rf"bboxes\[{where}\] = .* entirely outside"):
            validate_xyxy(boxes, (100, 100))


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
