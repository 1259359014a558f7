from __future__ import annotations

import sys
import tracemalloc
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image

from rankaug.samples.restore import (
    holds_wrapped,
    is_wrapped,
    pil_like,
    restore_like,
    rewrap,
    rewrap_values,
)
from tests.samples import tv_standin


class TestRestoreLike:
    def test_containers_and_dtypes(self) -> None:
        assert restore_like(np.array([1.5]), torch.tensor([1.0])).dtype == torch.float32
        assert restore_like(np.array([2.0]), np.array([1], np.int64)).dtype == np.int64
        assert restore_like(np.array([1, 2]), (0, 0)) == (1, 2)
        assert restore_like("x", 5) == "x"

    @pytest.mark.parametrize(
        "old",
        [
            np.array([[0, 10, 5, 20]], np.int8),
            torch.tensor([[0, 10, 5, 20]], dtype=torch.int8),
            [[np.int8(0), np.int8(10), np.int8(5), np.int8(20)]],
        ],
    )
    def test_integers_the_old_dtype_cannot_hold_are_refused(self, old: Any) -> None:
        # it was: 295 and 300 came back int8 as 39 and 44, wrapped around
        moved = np.array([[295.0, 10.0, 300.0, 20.0]])
        said = (
            "'bboxes' came in as int8, which holds -128 to 127, but the transform gave "
            "values from 10 to 300, which it would wrap around"
        )
        with pytest.raises(ValueError, match=said):
            restore_like(moved, old, "bboxes")
        with pytest.raises(ValueError, match=r"^a value came in as int8"):
            restore_like(moved.astype(np.int64), old)
        held = restore_like(np.array([[-128.0, 10.0, 127.0, 20.0]]), old)
        assert np.asarray(held).tolist() == [[-128, 10, 127, 20]]

    def test_uint8_below_zero_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"holds 0 to 255, but .* from -3 to 40"):
            restore_like(np.array([-3, 40]), np.array([1, 2], np.uint8), "keypoints")

    @pytest.mark.parametrize("mode", ["1", "L", "P", "I;16", "F", "RGB"])
    def test_a_pil_image_gives_a_pil_image_of_its_mode(self, mode: str) -> None:
        old = Image.new(mode, (3, 2))
        if mode == "P":
            old.putpalette([0, 0, 0, 9, 8, 7])
        new = np.asarray(old)[:, ::-1]
        out = restore_like(new, old)
        assert isinstance(out, Image.Image)
        assert (out.mode, out.size, out.getpalette()) == (mode, (3, 2), old.getpalette())
        np.testing.assert_array_equal(np.asarray(out), new)
        listed = restore_like(np.stack([new, new]), [old])
        assert [(type(m), m.mode) for m in listed] == [(Image.Image, mode)] * 2

    def test_rows_keep_their_container(self) -> None:
        # a tuple of tuples came back a tuple of lists
        boxes = np.array([[1.0, 2.0, 3.0, 4.0], [5.5, 6.0, 7.0, 8.0]])
        assert restore_like(boxes, ((0.0, 0.0, 1.0, 1.0),)) == (
            (1.0, 2.0, 3.0, 4.0), (5.5, 6.0, 7.0, 8.0))  # fmt: skip
        assert restore_like(boxes, [(0.0, 0.0, 1.0, 1.0)]) == [
            (1.0, 2.0, 3.0, 4.0), (5.5, 6.0, 7.0, 8.0)]  # fmt: skip
        assert restore_like([[1, 2], [3]], ((0, 0), (0,))) == ((1, 2), (3,))  # ragged
        assert restore_like(boxes[:1], ([0.0, 0.0, 1.0, 1.0],)) == ([1.0, 2.0, 3.0, 4.0],)
        # polygons as lists of points, back as arrays of other lengths: lists again
        polygons = [np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]]), np.array([[7.0, 8.0]])]
        out = restore_like(polygons, [((0, 0), (1, 1))])
        assert out == [((1.0, 2.0), (3.0, 4.0), (5.0, 6.5)), ((7, 8),)]
        assert [type(v) for v in out[1][0]] == [int, int]  # whole numbers: the old ints

    def test_numpy_scalars_in_a_list_stay_numpy_scalars(self) -> None:
        # [np.int64(1), ...] came back [1, ...]: Python ints
        out = restore_like(np.array([2.0, 1.0]), [np.int64(1), np.int64(2)])
        assert [(type(v), v) for v in out] == [(np.int64, 2), (np.int64, 1)]
        out = restore_like([0.5], (np.float32(1.0),))
        assert type(out) is tuple
        assert [(type(v), v) for v in out] == [(np.float32, 0.5)]
        assert restore_like(np.array([1.5]), [np.int64(1)]) == [1.5]  # not truncated

    def test_fractional_values_are_not_truncated_into_integers(self) -> None:
        out = restore_like(np.array([[1.5, 2.0, 3.0, 4.0]]), np.array([[1, 2, 3, 4]], np.int32))
        assert out.dtype.kind == "f"
        assert out[0, 0] == 1.5
        tensor = restore_like(np.array([0.5]), torch.tensor([1]))
        assert tensor.dtype.is_floating_point

    def test_integers_back_with_float32_round_off_stay_integers(self) -> None:
        # albumentations' float32 normalised boxes: a flip of [5, 5, 25, 25] in a
        # 50-wide image gives x_max 44.999998807907104, which is 45, not 44 nor a float
        flipped = np.array([[25.0, 5.0, 44.999998807907104, 25.0], [43.00000071525574, 1.0, 50, 9]])
        want = [[25, 5, 45, 25], [43, 1, 50, 9]]
        out = restore_like(flipped, np.array([[5, 5, 25, 25], [0, 1, 7, 9]], np.int64))
        assert (out.dtype, out.tolist()) == (np.int64, want)
        tensor = restore_like(flipped, torch.tensor([[5, 5, 25, 25], [0, 1, 7, 9]]))
        assert (tensor.dtype, tensor.tolist()) == (torch.int64, want)
        rows = restore_like(flipped, [[5, 5, 25, 25], [0, 1, 7, 9]])
        assert rows == want
        assert all(type(v) is int for row in rows for v in row)
        assert restore_like(np.array([0.9999999]), [True]) == [True]
        fractional = restore_like(np.array([44.9999]), np.array([45], np.int64))  # not round-off
        assert (fractional.dtype, fractional.tolist()) == (np.float64, [44.9999])

    def test_round_off_of_a_wide_image_on_small_values_is_rounded(self) -> None:
        # the round-off is a fraction of the image's width: [630, 0, 639, 2] flipped in a
        # 640-wide image gave x_min 0.9999847, and the boxes stayed float64
        old = np.array([[630, 0, 639, 2]], np.int64)
        flipped = np.array([[0.9999847412109375, 0.0, 10.0, 2.0]])
        for like in (old, torch.from_numpy(old), old.tolist()):
            out = restore_like(flipped, like)
            assert np.asarray(out).tolist() == [[1, 0, 10, 2]]
            assert np.asarray(out).dtype == np.int64
        half = restore_like(np.array([[0.5, 0.0, 10.0, 2.0]]), old)  # a fraction: kept
        assert (half.dtype, half.tolist()) == (np.float64, [[0.5, 0.0, 10.0, 2.0]])
        small = restore_like(np.array([1.0001]), np.array([3], np.int64))  # nothing wide
        assert (small.dtype, small.tolist()) == (np.float64, [1.0001])

    def test_longer_strings_are_not_cut_to_the_old_width(self) -> None:
        out = restore_like(np.array(["cat", "elephant"]), np.array(["dog"]))
        assert (out.dtype, out.tolist()) == (np.dtype("<U8"), ["cat", "elephant"])
        out = restore_like(np.array([b"elephant"]), np.array([b"ox"]))
        assert (out.dtype, out.tolist()) == (np.dtype("S8"), [b"elephant"])
        assert restore_like(np.array(["ox"]), np.array(["dog"])).dtype == np.dtype("<U3")

    def test_empty_results_keep_their_trailing_shape(self) -> None:
        assert restore_like(np.zeros((0,)), torch.zeros(2, 4)).shape == (0, 4)
        assert restore_like([], np.zeros((1, 4), np.float32)).shape == (0, 4)

    def test_flat_results_get_the_trailing_shape_back_when_their_size_allows(self) -> None:
        # albumentations flattens (N, 1) label fields to (N,): they came back (N,)
        same = restore_like(np.array([1.0, 2.0, 3.0], np.float32), np.zeros((2, 1), np.float32))
        assert (same.shape, same.dtype) == ((3, 1), np.float32)
        assert restore_like(np.array([1.0, 2.0]), np.zeros((5, 1), np.int64)).tolist() == [[1], [2]]
        tensor = restore_like(np.array([1.0, 2.0]), torch.zeros(5, 1, dtype=torch.int64))
        assert (tuple(tensor.shape), tensor.dtype) == ((2, 1), torch.int64)
        assert restore_like(np.arange(6.0), np.zeros((1, 2, 3))).shape == (1, 2, 3)
        assert restore_like(np.arange(3.0), np.zeros((1, 2))).shape == (3,)  # no whole row
        assert restore_like(np.arange(3.0), np.zeros((1, 0))).shape == (3,)

    @pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
    def test_integer_tensors_stay_integer(self, dtype: torch.dtype) -> None:
        # a transform that drops every box returns float64 [] labels; integer tensors
        # came back float64 then, and integer boxes always (issue 9, item 1)
        old = torch.tensor([1, 0], dtype=dtype)
        assert restore_like(np.zeros((0,)), old).dtype == dtype
        assert restore_like(np.array([1.0, 0.0]), old).dtype == dtype
        boxes = torch.tensor([[1, 2, 3, 4]], dtype=torch.int32)
        flipped = restore_like(np.array([[5.0, 2.0, 7.0, 4.0]]), boxes)
        assert flipped.dtype == torch.int32
        assert flipped.tolist() == [[5, 2, 7, 4]]
        empty = restore_like(np.zeros((0,)), boxes)
        assert (empty.dtype, tuple(empty.shape)) == (torch.int32, (0, 4))

    def test_integer_arrays_and_lists_stay_integer(self) -> None:
        assert restore_like(np.zeros((0,)), np.array([3], np.int64)).dtype == np.int64
        assert restore_like(np.array([2.0, 7.0]), [1, 2]) == [2, 7]
        assert all(type(v) is int for v in restore_like(np.array([2.0, 7.0]), [1, 2]))
        assert restore_like(np.array([2.0]), (1,)) == (2,)
        assert restore_like(np.array([0.5]), [1]) == [0.5]  # fractional: not truncated
        assert restore_like(np.array([1.0, 0.0]), [True, False]) == [True, False]
        assert restore_like(np.array([2.0]), [True]) == [2.0]  # not made a bool
        assert restore_like(np.array([1.0]), ["a"]) == [1.0]  # not numbers: as it is
        assert restore_like(np.array([np.inf]), np.array([1], np.int64))[0] == np.inf

    def test_a_list_of_arrays_or_tensors_is_restored_item_by_item(self) -> None:
        new = np.arange(2 * 3 * 4, dtype=np.int64).reshape(2, 3, 4) % 2
        out = restore_like(new, [np.zeros((3, 4), np.uint8)])
        assert type(out) is list
        assert len(out) == 2
        assert all(type(m) is np.ndarray and m.dtype == np.uint8 for m in out)
        np.testing.assert_array_equal(np.stack(out), new)
        tensors = restore_like(list(new), (torch.zeros(3, 4, dtype=torch.bool),))
        assert type(tensors) is tuple
        assert len(tensors) == 2
        assert all(type(m) is torch.Tensor and m.dtype == torch.bool for m in tensors)
        assert torch.equal(torch.stack(tensors), torch.from_numpy(new.astype(bool)))
        assert restore_like(np.zeros((0, 3, 4)), [np.zeros((3, 4), np.uint8)]) == []
        polygons = [np.ones((3, 2), np.float32), np.ones((5, 2), np.float32)]  # ragged
        assert [p.shape for p in restore_like(polygons, polygons[:1])] == [(3, 2), (5, 2)]

    def test_an_empty_object_array_gives_no_dtype(self) -> None:
        untyped = np.array([], dtype=object)  # Hugging Face's numpy format, a box-less row
        boxes = restore_like(np.array([[1.0, 2.0, 3.0, 4.0]], np.float32), untyped)
        assert (boxes.dtype, boxes.shape) == (np.float32, (1, 4))
        assert restore_like(np.array([3]), untyped).dtype == np.int64
        names = restore_like(np.array(["cat"], dtype=object), untyped)
        assert names.dtype == object
        assert names.tolist() == ["cat"]
        assert restore_like(np.zeros(0), untyped).dtype == object  # still nothing: as it was
        assert restore_like(np.array([2.0]), np.array([1], object)).dtype == object  # typed

    def test_instances_into_an_empty_list_give_a_list_of_arrays(self) -> None:
        new = np.ones((2, 3, 4), np.bool_)
        out = restore_like(new, [])
        assert type(out) is list
        items = [(type(m), m.dtype, m.shape) for m in out]
        assert items == [(np.ndarray, np.dtype(np.bool_), (3, 4))] * 2
        assert restore_like(np.zeros((0, 3, 4), np.uint8), ()) == ()
        assert restore_like(np.array([[1.0, 2.0]]), []) == [[1.0, 2.0]]  # rows: as before


class TestPilLike:
    def test_mode_and_palette_kept(self) -> None:
        old = Image.new("P", (3, 2))
        old.putpalette([0, 0, 0, 255, 0, 0])
        made = pil_like(np.ones((2, 3), np.int64), old)
        assert (made.mode, made.size) == ("P", (3, 2))
        assert made.getpalette() == old.getpalette()
        assert np.asarray(made).tolist() == [[1, 1, 1], [1, 1, 1]]

    @pytest.mark.parametrize("mode", ["1", "L", "I;16", "I", "F"])
    def test_the_old_image_is_not_read_whole(self, mode: str) -> None:
        # Its dtype was read by converting it whole to an array (35 us for a 640x640 mask).
        old = Image.new(mode, (2000, 1000))
        new = np.zeros((1000, 2000), np.asarray(old.crop((0, 0, 1, 1))).dtype)
        tracemalloc.start()
        try:
            made = pil_like(new, old)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert made.mode == mode
        assert peak < 100_000


class _Datapoint(torch.Tensor):
    """Like torchvision 0.15's datapoints: a ``wrap_like`` classmethod."""

    @classmethod
    def wrap_like(cls, other: Any, tensor: torch.Tensor, **metadata: Any) -> Any:
        out = tensor.as_subclass(cls)
        out.__dict__.update({**other.__dict__, **metadata})
        return out


class TestIsWrapped:
    def test_tv_tensors_by_their_base_class(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tv = tv_standin.install(monkeypatch)
        assert not hasattr(tv.BoundingBoxes, "wrap_like")  # torchvision 0.16+: none
        assert is_wrapped(tv_standin.make(tv.BoundingBoxes, [[0.0, 0.0, 1.0, 1.0]]))
        assert is_wrapped(tv_standin.make(tv.Mask, torch.zeros(1, 2, 2)))
        assert is_wrapped(tv_standin.make(_Datapoint, [1.0]))  # wrap_like: 0.15
        assert not is_wrapped(torch.zeros(2))
        assert not is_wrapped(torch.zeros(2).as_subclass(torch.nn.Parameter))
        assert not is_wrapped(np.zeros(2))
        assert not is_wrapped(None)

    def test_torchvision_is_never_imported(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delitem(sys.modules, "torchvision.tv_tensors", raising=False)
        assert not is_wrapped(torch.zeros(2).as_subclass(torch.nn.Parameter))
        assert "torchvision.tv_tensors" not in sys.modules


class TestHoldsWrapped:
    def test_a_tv_tensor_or_a_list_of_them(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tv = tv_standin.install(monkeypatch)
        mask = tv_standin.make(tv.Mask, torch.zeros(2, 2))
        assert holds_wrapped(mask)
        assert holds_wrapped([mask, mask])
        assert holds_wrapped((mask,))
        assert not holds_wrapped([])
        assert not holds_wrapped([torch.zeros(2, 2)])
        assert not holds_wrapped(torch.zeros(2, 2))
        assert not holds_wrapped([np.zeros((2, 2))])


class TestRewrap:
    def test_boxes_keep_their_metadata_and_get_the_canvas(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        tv = tv_standin.install(monkeypatch)
        like = tv_standin.make(tv.BoundingBoxes, [[0.0, 0.0, 1.0, 1.0]], format="XYXY",
                               canvas_size=(4, 6))  # fmt: skip
        out = rewrap(np.array([[1.0, 1.0, 2.0, 2.0]]), like, (8, 12))
        assert type(out) is tv.BoundingBoxes
        assert (out.format, out.canvas_size) == ("XYXY", (8, 12))
        assert out.tolist() == [[1.0, 1.0, 2.0, 2.0]]
        assert rewrap(torch.zeros(0, 4), like, None).canvas_size == (4, 6)
        points = rewrap(torch.zeros(1, 2), tv_standin.make(tv.KeyPoints, torch.zeros(1, 2),
                                                           canvas_size=(4, 6)), (2, 3))  # fmt: skip
        assert (type(points), points.canvas_size) == (tv.KeyPoints, (2, 3))
        mask = rewrap(torch.ones(1, 8, 12), tv_standin.make(tv.Mask, torch.zeros(1, 4, 6)), (8, 12))
        assert type(mask) is tv.Mask
        assert "canvas_size" not in mask.__dict__  # a mask has none

    def test_wrap_like_classes(self) -> None:
        like = tv_standin.make(_Datapoint, [[0.0, 0.0, 1.0, 1.0]], canvas_size=(4, 6))
        out = rewrap(torch.ones(1, 4), like, (8, 12))
        assert (type(out), out.canvas_size) == (_Datapoint, (8, 12))


class TestRewrapValues:
    def test_only_wrapped_originals_with_the_output_image_canvas(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        tv = tv_standin.install(monkeypatch)
        boxes = tv_standin.make(tv.BoundingBoxes, torch.zeros(1, 4), canvas_size=(4, 6))
        values: dict[str, Any] = {"bboxes": torch.ones(1, 4), "labels": torch.tensor([1])}
        originals = {"bboxes": boxes, "labels": torch.tensor([0])}
        rewrap_values(values, originals, {"image": np.zeros((10, 20, 3), np.uint8)})
        assert type(values["bboxes"]) is tv.BoundingBoxes
        assert values["bboxes"].canvas_size == (10, 20)
        assert type(values["labels"]) is torch.Tensor

    @pytest.mark.parametrize("container", [list, tuple])
    def test_a_list_of_masks_gives_each_item_its_class_and_metadata(
        self, monkeypatch: pytest.MonkeyPatch, container: Any
    ) -> None:
        tv = tv_standin.install(monkeypatch)
        masks = container(
            tv_standin.make(tv.Mask, torch.zeros(4, 6, dtype=torch.uint8), note="instance")
            for _ in range(2)
        )
        restored = restore_like(np.ones((3, 8, 12), np.uint8), masks)  # three, resized
        values: dict[str, Any] = {"masks": restored}
        rewrap_values(values, {"masks": masks}, {"image": np.zeros((8, 12, 3), np.uint8)})
        out = values["masks"]
        assert type(out) is container
        assert [type(item) for item in out] == [tv.Mask] * 3
        assert [item.note for item in out] == ["instance"] * 3
        assert [tuple(item.shape) for item in out] == [(8, 12)] * 3
