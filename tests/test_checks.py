from __future__ import annotations

import functools
import inspect
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rankaug import checks


class TestUint:
    @pytest.mark.parametrize("value", [0, 5, np.int64(5), np.uint32(5), np.uint64(2**64 - 1)])
    def test_accepts_python_and_numpy_integers(self, value: object) -> None:
        assert checks.uint(value, "x", 64) == int(value)  # type: ignore[call-overload]

    @pytest.mark.parametrize("value", [True, np.bool_(False), 1.0, np.float32(2), "3", None])
    def test_refuses_non_integers_naming_the_argument(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"^base_seed must be an integer in \[0, 2\*\*64\)"):
            checks.uint(value, "base_seed", 64)

    @pytest.mark.parametrize(("value", "bits"), [(-1, 32), (2**32, 32), (2**64, 64)])
    def test_refuses_out_of_range_values_naming_them(self, value: int, bits: int) -> None:
        with pytest.raises(ValueError, match=rf"^epoch must be .* got {value}$"):
            checks.uint(value, "epoch", bits)


class TestStream:
    @pytest.mark.parametrize("value", ["", "view-1", 0, np.uint32(7), 2**32 - 1])
    def test_accepts_names_and_32_bit_words(self, value: object) -> None:
        assert checks.stream(value) == (value if isinstance(value, str) else int(value))  # type: ignore[call-overload]

    @pytest.mark.parametrize("value", [True, 1.5, None, b"view"])
    def test_refuses_other_types_naming_both_forms(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"^stream must be a name \(a string\) or an integer"):
            checks.stream(value)

    @pytest.mark.parametrize("value", [-1, 2**32])
    def test_refuses_out_of_range_words(self, value: int) -> None:
        with pytest.raises(ValueError, match=rf"^stream must be .* got {value}$"):
            checks.stream(value)


class TestInteger:
    def test_bounds(self) -> None:
        assert checks.integer(3, "n", low=1, high=3) == 3
        with pytest.raises(ValueError, match=r"^n must be an integer in \[1, 3\], got 4$"):
            checks.integer(4, "n", low=1, high=3)
        with pytest.raises(ValueError, match=r"^n must be an integer <= 3, got 4$"):
            checks.integer(4, "n", high=3)

    @pytest.mark.parametrize("value", [(3, 4), 3.0, True, None, "3"])
    def test_wrong_types(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"^epochs must be an integer >= 1, got .* of type"):
            checks.integer(value, "epochs", low=1)


class TestBoolean:
    @pytest.mark.parametrize("value", [0, 1, "yes", None])
    def test_only_bools(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"^clip must be True or False"):
            checks.boolean(value, "clip")


class TestReal:
    @pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
    def test_refuses_non_finite(self, value: float) -> None:
        with pytest.raises(ValueError, match=r"^min_area must be a finite number >= 0.0"):
            checks.real(value, "min_area", low=0.0)

    def test_open_bounds(self) -> None:
        with pytest.raises(ValueError, match=r"must be a finite number > 0.0"):
            checks.real(0, "alpha", low=0.0, low_open=True)
        with pytest.raises(ValueError, match=r"< 1.0"):
            checks.real(1.0, "x", high=1.0, high_open=True)

    @pytest.mark.parametrize("value", [True, "1", None, [1]])
    def test_wrong_types(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"^p must be a finite number >= 0.0 and <= 1.0"):
            checks.probability(value, "p")


class TestPairsAndRanges:
    def test_int_pair(self) -> None:
        assert checks.int_pair((2, 3), "grid") == (2, 3)
        with pytest.raises(ValueError, match="grid must be an integer or a pair of integers >= 1"):
            checks.int_pair((0, 3), "grid")
        with pytest.raises(TypeError, match="grid must be"):
            checks.int_pair((1, 2, 3), "grid")

    @pytest.mark.parametrize("value", [(0.1,), "ab", None, (0.1, "x"), (True, 0.5)])
    def test_real_range_types(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"scale_range must be a .low, high. pair"):
            checks.real_range(value, "scale_range", low=0.0, high=2.0)

    @pytest.mark.parametrize("value", [(0.5, 0.1), (-1.0, 0.5), (0.5, 3.0), (math.nan, 1.0)])
    def test_real_range_values(self, value: object) -> None:
        with pytest.raises(ValueError, match=r"scale_range must be a .low, high. pair"):
            checks.real_range(value, "scale_range", low=0.0, high=2.0)


class TestChoiceAndNames:
    def test_choice(self) -> None:
        with pytest.raises(ValueError, match=r"^canvas must be one of 'output', 'yolo', got 'x'$"):
            checks.choice("x", "canvas", ("output", "yolo"))
        with pytest.raises(TypeError, match=r"^canvas must be one of .* got None of type NoneType"):
            checks.choice(None, "canvas", ("output", "yolo"))

    def test_names(self) -> None:
        with pytest.raises(ValueError, match="every entry of label_fields must be a key that"):
            checks.names(["bboxes"], "label_fields", forbidden={"bboxes"})
        with pytest.raises(ValueError, match="distinct"):
            checks.names(["a", "a"], "label_fields")
        with pytest.raises(TypeError, match="every entry of label_fields must be a key name"):
            checks.names([1], "label_fields")
        with pytest.raises(ValueError, match="label_fields must be a non-empty key name, got ''"):
            checks.names(["labels", ""], "label_fields")  # Targets(label_fields=[""]) was taken

    def test_folder(self, tmp_path: Path) -> None:
        (tmp_path / "a").mkdir()
        (tmp_path / "f").write_text("")
        assert checks.folder(tmp_path / "a", "image_root") == (tmp_path / "a").resolve()
        with pytest.raises(FileNotFoundError, match=r"^image_root must be an existing folder"):
            checks.folder(tmp_path / "f", "image_root")  # a file
        with pytest.raises(TypeError, match=r"^image_root must be a path"):
            checks.folder(3, "image_root")

    def test_key_name(self) -> None:
        assert checks.key_name(None, "record", forbidden={"image"}) is None
        with pytest.raises(TypeError, match="record must be None or a key name"):
            checks.key_name(3, "record", forbidden={"image"})


class TestGenerator:
    def test_generators_of_ones_own_pass(self) -> None:
        rng, legacy = np.random.default_rng(0), np.random.RandomState(0)
        assert checks.generator(rng, "rng") is rng
        assert checks.generator(legacy, "rng") is legacy

    @pytest.mark.parametrize("value", [None, 0, np.random])
    def test_anything_else_is_a_type_error_naming_the_argument(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"^rng must be a numpy Generator \(np\.random\."):
            checks.generator(value, "rng")


class TestMessages:
    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (torch.zeros(3, 40, 50, dtype=torch.uint8), r"\(3, 40, 50\) and dtype torch\.uint8"),
            (np.zeros((40, 50, 3), np.float32), r"\(40, 50, 3\) and dtype float32"),
        ],
    )
    def test_a_long_array_or_tensor_is_shown_by_shape_and_dtype(
        self, value: object, shown: str
    ) -> None:
        # a tensor's repr ran over lines into the message
        with pytest.raises(TypeError, match=rf"^x must be a dict, got a value of shape {shown} "):
            checks.mapping(value, "x", required=(), what="a dict")
        with pytest.raises(TypeError, match=rf"^x must be a dict, got a value of shape {shown} "):
            checks.function(value, "x", "a dict")

    def test_a_short_array_is_shown_as_it_is(self) -> None:
        with pytest.raises(TypeError, match=r"^x must be a dict, got array\(\[1, 2\]\) of type"):
            checks.mapping(np.array([1, 2]), "x", required=(), what="a dict")


class TestIndexArrayAndWeights:
    def test_index_array_refuses_duplicates(self) -> None:
        with pytest.raises(ValueError, match=r"pool must be distinct indices, got .*\[0\]"):
            checks.index_array([0, 0, 0, 1], "pool", length=4)

    def test_index_array_range_and_types(self) -> None:
        with pytest.raises(ValueError, match=r"pool must be indices in \[0, 4\)"):
            checks.index_array([1, 4], "pool", length=4)
        with pytest.raises(ValueError, match="non-empty"):
            checks.index_array([], "pool", length=4)
        for huge in (2**63, 2**64, -(2**63) - 1):  # once numpy's OverflowError
            with pytest.raises(ValueError, match=rf"pool must be indices in \[0, 4\), .*{huge}"):
                checks.index_array([0, huge], "pool", length=4)
        with pytest.raises(TypeError, match="pool must be a sequence of indices"):
            checks.index_array("abc", "pool", length=4)

    def test_weights(self) -> None:
        with pytest.raises(TypeError, match="weights must be a sequence of 2 numbers"):
            checks.weights("abc", "weights", count=2)
        with pytest.raises(TypeError, match="every entry of weights must be a real number"):
            checks.weights(["a", 1], "weights", count=2)
        with pytest.raises(ValueError, match="weights must be a sequence of 2 numbers"):
            checks.weights([0, 0], "weights", count=2)
        with pytest.raises(ValueError, match="got 3 weights"):
            checks.weights([1, 1, 1], "weights", count=2)
        with pytest.raises(ValueError, match="weights must"):
            checks.weights([1, math.inf], "weights", count=2)

    def test_index_and_weight_tuples_are_python_numbers(self) -> None:
        pool = checks.index_tuple(np.arange(3, dtype=np.uint8), "pool")
        assert pool == (0, 1, 2)
        assert all(type(entry) is int for entry in pool)
        assert checks.index_tuple(range(2), "pool") == (0, 1)
        assert checks.index_tuple([np.int64(2**40), 2**64], "pool") == (2**40, 2**64)
        weights = checks.weight_tuple(np.array([1, 2]), "weights")
        assert weights == (1.0, 2.0)
        assert all(type(entry) is float for entry in weights)
        assert checks.weight_tuple([np.float32(0.5), math.nan], "weights")[0] == 0.5

    def test_index_and_weight_tuples_check_types_and_shapes(self) -> None:
        with pytest.raises(TypeError, match="pool must be a sequence of indices, got 'ab'"):
            checks.index_tuple("ab", "pool")
        with pytest.raises(TypeError, match=r"pool must be a sequence of indices, got \{1\}"):
            checks.index_tuple({1}, "pool")
        with pytest.raises(TypeError, match=r"every entry of pool must be an index .* got 1.0"):
            checks.index_tuple(np.ones(2), "pool")
        with pytest.raises(TypeError, match=r"every entry of pool must be an index .* got True"):
            checks.index_tuple([True], "pool")
        with pytest.raises(ValueError, match=r"pool must be .*\(one dimension\), got an array"):
            checks.index_tuple(np.zeros((2, 2), int), "pool")
        with pytest.raises(TypeError, match="every entry of weights must be a real number"):
            checks.weight_tuple(["1"], "weights")
        with pytest.raises(ValueError, match="every entry of weights must be a finite number"):
            checks.weight_tuple([2**2000], "weights")

    @given(st.lists(st.floats(0, 1e308), min_size=1, max_size=20).filter(any))
    def test_weights_give_a_cdf_ending_in_one(self, values: list[float]) -> None:
        cdf = checks.weights(values, "weights", count=len(values))
        assert cdf[-1] == 1.0
        assert np.isfinite(cdf).all()
        assert (np.diff(cdf) >= 0).all()


class TestPerSample:
    def test_flat_forms_pass(self) -> None:
        for value in (3, np.int64(3), [1, 2], (1, 2), np.arange(2), np.array(5), range(2)):
            checks.per_sample(value, "index", 2)  # no error

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (np.zeros((2, 2), dtype=np.int64), r"an array of shape \(2, 2\)"),
            (np.zeros((1, 2), dtype=np.uint8), r"an array of shape \(1, 2\)"),
            ([[0, 1], [2, 3]], r"a nested sequence \(shape \(2, 2\)\)"),
            ([[0, 1], [2]], r"a nested sequence \(ragged\)"),
            ([np.arange(2), np.arange(2)], r"a nested sequence \(shape \(2, 2\)\)"),
        ],
        ids=["array", "uint8", "lists", "ragged", "arrays"],
    )
    def test_two_dimensions_are_refused_naming_the_shape(self, value: object, shown: str) -> None:
        with pytest.raises(
            ValueError, match=r"index must be one value per sample, shape \(4,\), got " + shown
        ):
            checks.per_sample(value, "index", 4)

    def test_a_wrong_type_names_the_types_taken(self) -> None:
        with pytest.raises(
            TypeError,
            match=r"epoch must be an integer, a sequence of integers or a 1-D integer numpy array "
            r"or tensor \(one per sample\), got 1.5 of type float",
        ):
            checks.per_sample(1.5, "epoch", 4)
        with pytest.raises(TypeError, match="index must be an integer array, got dtype float64"):
            checks.per_sample(np.zeros(4), "index", 4)
        with pytest.raises(TypeError, match="index must be an integer array, got dtype bool"):
            checks.per_sample(np.ones(4, dtype=bool), "index", 4)
        with pytest.raises(TypeError, match="got 'abcd' of type str"):
            checks.per_sample("abcd", "index", 4)


class TestImagesAndFills:
    @pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float16, np.bool_, np.int64])
    def test_unsupported_dtypes_name_the_supported_ones(self, dtype: type) -> None:
        with pytest.raises(TypeError, match="uint8, uint16, int16, float32, float64, got"):
            checks.image_layout(np.zeros((2, 2), dtype), "dataset[1] image")

    def test_too_many_channels(self) -> None:
        with pytest.raises(ValueError, match="1 to 511 channels"):
            checks.image_layout(np.zeros((2, 2, 512), np.uint8), "image")

    def test_fill_fits(self) -> None:
        checks.fill_fits((0.0, 255.0), "fill", np.dtype(np.uint8))
        with pytest.raises(ValueError, match="whole numbers in"):
            checks.fill_fits((0.5,), "fill", np.dtype(np.uint16))
        with pytest.raises(ValueError, match=r"\[-32768, 32767\]"):
            checks.fill_fits((-40000.0,), "fill_mask", np.dtype(np.int16))
        checks.fill_fits((-3.5,), "fill", np.dtype(np.float32))

    def test_fills_fit_name_the_sample_and_what_is_filled(self) -> None:
        # fill_mask's message said "the image's dtype" and showed (300.0,) for 300
        image, mask = np.zeros((2, 2, 3), np.float32), np.zeros((2, 2), np.uint8)
        expected = (
            r"^fill_mask must be whole numbers in \[0, 255\] \(dataset\[4\] mask's dtype is "
            r"uint8\), got 300$"
        )
        with pytest.raises(ValueError, match=expected):
            checks.fills_fit((0.0,), 300, image, mask, "dataset[4]")
        expected = (
            r"^fill must be whole numbers in \[0, 255\] \(dataset\[4\] image's dtype is "
            r"uint8\), got \(300\.0,\)$"
        )
        with pytest.raises(ValueError, match=expected):
            checks.fills_fit((300.0,), 0, mask, None, "dataset[4]")

    def test_the_default_fill_is_yolos_grey_for_integer_images_only(self) -> None:
        # the default 114 was painted into float images in [0, 1]
        assert checks.fill_setting(None, "fill") == ((114.0,), True)
        assert checks.fill_setting(114, "fill") == ((114.0,), False)
        for dtype in (np.uint8, np.uint16, np.int16):
            checks.fills_fit((114.0,), 0, np.zeros((2, 2), dtype), None, "dataset[1]", default=True)
        for floating in (np.float32, np.float64):
            with pytest.raises(ValueError, match=rf"^fill must be given for float images: .* "
                               rf"dataset\[1\] image is {np.dtype(floating)}, .*\(fill=114 / 255 "
                               r"for images in \[0, 1\]"):  # fmt: skip
                checks.fills_fit(
                    (114.0,), 0, np.zeros((2, 2), floating), None, "dataset[1]", default=True
                )
            checks.fills_fit((114.0,), 0, np.zeros((2, 2), floating), None, "dataset[1]")

    def test_fill_values(self) -> None:
        assert checks.fill_values((1, 2, 3), "fill") == (1.0, 2.0, 3.0)
        with pytest.raises(ValueError, match="fill must be finite"):
            checks.fill_values(math.nan, "fill")
        with pytest.raises(TypeError, match="fill must be a number or a sequence"):
            checks.fill_values([], "fill")

    def test_out_array_names_each_condition_it_fails(self) -> None:
        out = np.zeros((2, 3, 3), np.uint8)
        assert checks.out_array(out, "out", (2, 3, 3), np.dtype(np.uint8)) is out
        expected = r"^out must be a writeable C-contiguous uint8 array of shape \(2, 3, 3\), got"
        floats = np.zeros((3, 2, 3), np.float32).T
        with pytest.raises(ValueError, match=rf"{expected} one that is of shape \(3, 2, 3\), "):
            checks.out_array(floats, "out", (2, 3, 3), np.dtype(np.uint8))
        with pytest.raises(ValueError, match=r"of dtype float32, not C-contiguous$"):
            checks.out_array(floats, "out", (2, 3, 3), np.dtype(np.uint8))
        out.flags.writeable = False
        with pytest.raises(ValueError, match=rf"{expected} one that is read-only$"):
            checks.out_array(out, "out", (2, 3, 3), np.dtype(np.uint8))
        with pytest.raises(TypeError, match=rf"{expected} \[1\] of type list$"):
            checks.out_array([1], "out", (2, 3, 3), np.dtype(np.uint8))


class TestMaskCovers:
    @pytest.mark.parametrize("shape", [(4, 6), (4, 6, 1), (4, 6, 2)])
    def test_hxw_and_hxwxc_of_the_image_s_size_pass(self, shape: tuple[int, ...]) -> None:
        try:
            checks.mask_covers(np.zeros(shape), np.zeros((4, 6, 3)), "dataset[0] mask")
        except ValueError as error:
            pytest.fail(f"a mask of the image's size was refused: {error}")
        assert shape[:2] == (4, 6)  # it reached here: not refused

    @pytest.mark.parametrize("shape", [(2, 3), (6, 4), (4, 6, 1, 1), (24,)])
    def test_another_size_is_refused_with_the_image_s(self, shape: tuple[int, ...]) -> None:
        with pytest.raises(ValueError, match="dataset") as caught:
            checks.mask_covers(np.zeros(shape), np.zeros((4, 6, 3)), "dataset[2] mask")
        assert str(caught.value).startswith(
            "dataset[2] mask must be an HxW or HxWxC array of its image's height and width "
            f"(4, 6) (the image unpacked: shape (4, 6, 3)), got shape {shape}: "
        )

    def test_a_channels_first_mask_is_told_how_to_give_it(self) -> None:
        with pytest.raises(ValueError, match=r"got shape \(1, 4, 6\): it looks channels-first"):
            checks.mask_covers(np.zeros((1, 4, 6)), np.zeros((4, 6)), "the sample's mask")


class TestIntChoiceMappingSequence:
    def test_int_choice(self) -> None:
        names = {0: "A", 2: "B"}
        assert checks.int_choice(np.int64(2), "mode", names) == 2
        with pytest.raises(ValueError, match=r"^mode must be one of A, B, got 1$"):
            checks.int_choice(1, "mode", names)
        with pytest.raises(TypeError, match=r"^mode must be one of A, B, got 'B' of type str$"):
            checks.int_choice("B", "mode", names)

    def test_mapping(self) -> None:
        assert checks.mapping({"a": 1}, "r", required=("a",), what="a record") == {"a": 1}
        with pytest.raises(TypeError, match=r"^r must be a record, got 3 of type int$"):
            checks.mapping(3, "r", required=("a",), what="a record")
        with pytest.raises(
            ValueError, match=r"^r must be a record with 'a', 'b', got one without 'b'$"
        ):
            checks.mapping({"a": 1}, "r", required=("a", "b"), what="a record")

    def test_sequence(self) -> None:
        assert checks.sequence((1,), "s") == (1,)
        with pytest.raises(ValueError, match=r"^s must be a non-empty sequence, got \(\)$"):
            checks.sequence((), "s")
        with pytest.raises(
            TypeError, match=r"^s must be a non-empty sequence, got 'ab' of type str$"
        ):
            checks.sequence("ab", "s")


class TestRows:
    def test_finite_rows_names_the_first_bad_row_and_the_layout(self) -> None:
        boxes = np.array([[0.0, 0.0, 1.0, 1.0], [np.inf, 0.0, 1.0, 1.0], [0.0, np.nan, 1.0, 1.0]])
        with pytest.raises(
            ValueError,
            match=r"^b\[1\] = \[inf, 0.0, 1.0, 1.0\] contains NaN or infinity; boxes are "
            r"\(x_min, y_min, x_max, y_max\) in pixels \(1 more such rows\)$",
        ):
            checks.finite_rows(boxes, "b")
        checks.finite_rows(boxes[:1], "b")

    def test_finite_points_reads_x_and_y_only(self) -> None:
        checks.finite_points(np.array([[1.0, 2.0, np.nan, np.inf]]), "keypoints")
        with pytest.raises(
            ValueError,
            match=r"^kp\[0\] = \[1.0, -inf\] contains NaN or infinity; keypoints are \(x, y",
        ):
            checks.finite_points(np.array([[1.0, -np.inf]]), "kp")

    def test_point_rows_takes_k_rows_of_two_or_more_and_empty_ones(self) -> None:
        for points in (np.zeros((3, 2)), np.zeros((1, 4)), np.zeros(0), np.zeros((0, 3))):
            checks.point_rows(points, "kp")
        with pytest.raises(ValueError, match=r"^kp must be keypoints of shape \(K, 2\+\), one "):
            checks.point_rows(np.zeros((0, 17, 3)), "kp")  # no instance: refused as any
        with pytest.raises(ValueError, match=r"got shape \(2,\): a flat list such as COCO's"):
            checks.point_rows(np.zeros(2), "kp")

    def test_point_rows_refuses_rows_without_x_and_y_even_empty_ones(self) -> None:
        # before: (2, 0), two keypoints of no coordinates, passed as empty keypoints
        with pytest.raises(ValueError, match=r"got shape \(2, 0\): each row needs at least x"):
            checks.point_rows(np.zeros((2, 0)), "kp")

    def test_point_rows_names_where_a_pose_array_s_instances_go(self) -> None:
        with pytest.raises(ValueError, match=r"instance \(and joint\) in where they go$"):
            checks.point_rows(np.zeros((2, 17, 3)), "kp", "where they go")


class TestRngCall:
    def test_how_each_signature_is_called(self) -> None:
        class Forward(torch.nn.Module):
            def forward(self, x: Any, rng: Any) -> Any:
                return x

        def keyword(sample: Any, *, rng: Any, size: int = 3) -> Any:
            return sample

        assert checks.rng_call(keyword) is True
        assert checks.rng_call(Forward()) is True  # by its forward
        assert checks.rng_call(functools.partial(keyword, size=4)) is True
        assert checks.rng_call(lambda *samples: samples) is False
        assert checks.rng_call(lambda sample, size=3, **options: sample) is False
        assert checks.rng_call(max) is None  # no signature to read

    @pytest.mark.parametrize(
        ("transform", "said"),
        [
            (lambda sample, rng, /: sample, "its parameter 'rng' would get no value; "),
            (lambda sample, rng, size: sample, "its parameter 'size' would get no value; "),
            (lambda sample, *, g: sample, "its parameter 'g' would get no value; "),
            (lambda: 0, "which transform(sample) does not fit (too many positional arguments); "),
        ],
        ids=["positional-only-rng", "another-beside-rng", "keyword-only", "no-sample"],
    )
    def test_a_call_that_cannot_fit_is_refused(self, transform: Any, said: str) -> None:
        with pytest.raises(TypeError, match=re.escape(said)) as raised:
            checks.rng_call(transform, "pre")
        message = str(raised.value)
        assert message.startswith("pre must take (sample, rng=generator) or (sample), got ")
        assert str(inspect.signature(transform)) in message
        assert checks.CALLS in message

    @pytest.mark.parametrize(
        ("transform", "advice"),
        [
            (lambda sample, rng, /: sample, "make rng a keyword parameter (drop the '/' before "
                                            "it)"),
            (lambda sample, rng, size: sample, "give it a default"),
            (lambda sample, g: sample, "rename it rng (if it takes the generator), or give it a "
                                       "default"),
        ],
    )  # fmt: skip
    def test_the_advice(self, transform: Any, advice: str) -> None:
        with pytest.raises(TypeError) as raised:
            checks.rng_call(transform)
        assert str(raised.value).endswith(f": {advice}")

    def test_what_the_call_runs_is_what_is_checked(self) -> None:
        def supplied(sample: Any) -> Any:  # a decorator supplying the generator
            return sample

        def generator_named_g(sample: Any, g: Any) -> Any:
            return sample

        decorated = functools.update_wrapper(supplied, generator_named_g)

        class OwnCall(torch.nn.Module):
            def forward(self, x: Any, g: Any) -> Any:
                return x

            def __call__(self, sample: Any) -> Any:
                return self.forward(sample, None)

        assert checks.rng_call(decorated) is False  # called as supplied(sample)
        assert checks.rng_call(OwnCall()) is False  # its __call__, not its forward

    def test_a_static_or_class_method_call_is_read_whole(self) -> None:
        # inspect.signature drops such a __call__'s first parameter as if it were self
        class Static:
            @staticmethod
            def __call__(sample: Any) -> Any:
                return sample

        class StaticRng:
            @staticmethod
            def __call__(sample: Any, rng: Any) -> Any:
                return sample

        class ClassRng:
            @classmethod
            def __call__(cls, sample: Any, rng: Any) -> Any:
                return sample

        assert checks.rng_call(Static()) is False
        assert checks.rng_call(StaticRng()) is True
        assert checks.rng_call(ClassRng()) is True
