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
    check_box_format,
    from_xyxy,
    to_pixel_xyxy,
    to_xyxy,
)
from tests.boxes.helpers import (
    HW,
    KNOWN,
    XYXY,
    boxes_in_image,
)


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

    @pytest.mark.parametrize(
        "empty",
        [np.array([], dtype=object), np.zeros((0, 4), object), np.array([], dtype=str),
         np.zeros(0, bool)],
        ids=["object", "object04", "str", "bool"],
    )  # fmt: skip
    def test_empty_of_any_dtype_is_no_boxes(self, empty: np.ndarray) -> None:
        # Hugging Face's with_format("numpy") gives a box-less row's bbox as array([], object)
        result = as_box_array(empty)
        assert result.shape == (0, 4)
        assert result.dtype == np.float64

    def test_non_empty_objects_are_still_refused(self) -> None:
        with pytest.raises(TypeError, match="bboxes must hold real numbers"):
            as_box_array(np.array([[1.0, 2.0, 3.0, 4.0]], dtype=object))

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


class TestToPixelXyxy:
    @given(data=st.data(), fmt=st.sampled_from(BOX_FORMATS))
    def test_equals_to_xyxy_image_by_image(self, data: st.DataObject, fmt: BoxFormat) -> None:
        parts, expected, sizes = [], [], []
        for _ in range(data.draw(st.integers(1, 4))):
            boxes, (height, width) = data.draw(boxes_in_image())
            part = from_xyxy(boxes, fmt, (height, width))
            parts.append(part)
            expected.append(to_xyxy(part, fmt, (height, width)))
            sizes += [(width, height)] * len(part)
        stacked = np.concatenate(parts)
        out = to_pixel_xyxy(stacked, fmt, np.array(sizes, np.float64).reshape(-1, 2))
        np.testing.assert_array_equal(out, np.concatenate(expected))

    def test_pascal_voc_is_returned_as_it_is(self) -> None:
        boxes = XYXY.copy()
        assert to_pixel_xyxy(boxes, "pascal_voc", np.array([[200.0, 100.0]])) is boxes
