from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image

from rankaug.samples import (
    DEFAULT_TARGETS,
    DefaultAdapter,
    attach,
    passthrough,
    restore_like,
    view,
)

TARGETS = DEFAULT_TARGETS | {"labels"}


def roundtrip(sample: Any, edit: Any = None) -> Any:
    adapter = DefaultAdapter()
    data, state = adapter.unpack(sample, TARGETS)
    if edit is not None:
        edit(data)
    return adapter.repack(data, state)


class TestDefaultAdapter:
    def test_dict_only_targets_are_handed_out_and_extras_kept_as_objects(self) -> None:
        extra = {"anything": [1, 2]}
        sample = {"image": np.zeros((4, 5, 3), np.uint8), "labels": [1], "meta": extra}
        data, _ = DefaultAdapter().unpack(sample, TARGETS)
        assert set(data) == {"image", "labels"}
        out = roundtrip(sample)
        assert out["meta"] is extra
        assert out is not sample

    def test_tensor_image_goes_hwc_and_back_chw(self) -> None:
        chw = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 4)
        data, state = DefaultAdapter().unpack({"image": chw}, TARGETS)
        assert data["image"].shape == (3, 4, 2)
        assert data["image"].flags.c_contiguous
        out = DefaultAdapter().repack(data, state)
        assert torch.equal(out["image"], chw)

    def test_grayscale_tensor_and_pil(self) -> None:
        hw = torch.zeros(3, 4, dtype=torch.uint8)
        assert roundtrip((hw, 0))[0].shape == (3, 4)
        pil = Image.fromarray(np.zeros((3, 4), np.uint8))
        back = roundtrip((pil, 0))[0]
        assert isinstance(back, Image.Image)
        assert back.mode == "L"
        assert back.size == (4, 3)

    def test_pil_rgba(self) -> None:
        rgba = Image.fromarray(np.zeros((3, 4, 4), np.uint8), mode="RGBA")
        assert roundtrip([rgba, 1])[0].mode == "RGBA"

    def test_torchvision_target_names(self) -> None:
        boxes = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
        target = {"boxes": boxes, "labels": torch.tensor([2]), "iscrowd": torch.tensor([0])}
        data, state = DefaultAdapter().unpack((np.zeros((5, 5, 3), np.uint8), target), TARGETS)
        assert set(data) == {"image", "bboxes", "labels"}
        assert isinstance(data["bboxes"], np.ndarray)
        data["bboxes"] = data["bboxes"] + 1
        _, new_target = DefaultAdapter().repack(data, state)
        assert set(new_target) == {"boxes", "labels", "iscrowd"}
        assert new_target["iscrowd"] is target["iscrowd"]
        torch.testing.assert_close(new_target["boxes"], boxes + 1)

    def test_float_output_cannot_go_back_into_pil(self) -> None:
        def to_float(data: dict[str, Any]) -> None:
            data["image"] = data["image"].astype(np.float32)

        with pytest.raises(TypeError, match="returned a float32 image, which cannot go back"):
            roundtrip((Image.fromarray(np.zeros((3, 4, 3), np.uint8)), 0), to_float)

    @pytest.mark.parametrize(
        ("sample", "error", "message"),
        [
            (7, TypeError, "cannot handle a sample of type int"),
            ((1, 2, 3), TypeError, "cannot handle a sample of type tuple"),
            ({"img": np.zeros((2, 2))}, ValueError, r"needs an 'image' key; .* \['img'\]"),
            ({"image": "x.jpg"}, TypeError, "image must be a numpy array, .* got str"),
            ({"image": np.zeros((2, 2, 2, 2))}, ValueError, r"shape \(2, 2, 2, 2\)"),
            ((torch.zeros(1, 1, 2, 2), 0), ValueError, r"CxHxW or HxW tensor, .* \(1, 1, 2, 2\)"),
            ((Image.new("P", (2, 2)), 0), ValueError, "PIL image of mode 'P'"),
            ((np.zeros((2, 2)), {"image": 1}), ValueError, "must not have an 'image' key"),
        ],
    )  # fmt: skip
    def test_unhandled_shapes_are_explained(
        self, sample: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            DefaultAdapter().unpack(sample, TARGETS)


class TestRestoreLike:
    def test_containers_and_dtypes(self) -> None:
        assert restore_like(np.array([1.5]), torch.tensor([1.0])).dtype == torch.float32
        assert restore_like(np.array([2.0]), np.array([1], np.int64)).dtype == np.int64
        assert restore_like(np.array([1, 2]), (0, 0)) == (1, 2)
        assert restore_like("x", 5) == "x"

    def test_fractional_values_are_not_truncated_into_integers(self) -> None:
        out = restore_like(np.array([[1.5, 2.0, 3.0, 4.0]]), np.array([[1, 2, 3, 4]], np.int32))
        assert out.dtype.kind == "f"
        assert out[0, 0] == 1.5
        tensor = restore_like(np.array([0.5]), torch.tensor([1]))
        assert tensor.dtype.is_floating_point

    def test_empty_results_keep_their_trailing_shape(self) -> None:
        assert restore_like(np.zeros((0,)), torch.zeros(2, 4)).shape == (0, 4)
        assert restore_like([], np.zeros((1, 4), np.float32)).shape == (0, 4)

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


class TestView:
    def test_plain_dicts_are_their_own_view(self) -> None:
        sample = {"image": np.zeros((2, 2), np.uint8), "bboxes": [[0, 0, 1, 1]]}
        assert view(DefaultAdapter(), sample, TARGETS) is sample

    def test_other_samples_are_unpacked(self) -> None:
        pair = (torch.zeros(3, 2, 2), {"boxes": torch.ones(1, 4), "labels": [1]})
        data = view(DefaultAdapter(), pair, TARGETS)
        assert data["image"].shape == (2, 2, 3)
        assert isinstance(data["bboxes"], np.ndarray)

    def test_adapters_without_the_hook(self) -> None:
        class Only:
            def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], Any]:
                return {"image": sample}, None

            def repack(self, data: Any, state: Any) -> Any:
                return data["image"]

        assert view(Only(), 5, TARGETS) == {"image": 5}
        assert passthrough(Only(), {"iscrowd": [1]}, TARGETS) == {}
        assert attach(Only(), {"a": 1}, "mosaic", 2) == {"a": 1, "mosaic": 2}


class TestPassthrough:
    def test_dicts_and_pair_targets(self) -> None:
        sample = {"image": 0, "bboxes": 1, "labels": 2, "iscrowd": 3, "boxes": 4}
        assert passthrough(DefaultAdapter(), sample, TARGETS) == {"iscrowd": 3, "boxes": 4}
        target = {"boxes": 1, "labels": 2, "area": 3}
        assert passthrough(DefaultAdapter(), (0, target), TARGETS) == {"area": 3}
        assert passthrough(DefaultAdapter(), (0, 7), TARGETS) == {}
        assert passthrough(DefaultAdapter(), {"image": 0, "labels": 1}, TARGETS) == {}
        assert passthrough(DefaultAdapter(), {"image": 0, "x": 1}, ["image"]) == {"x": 1}


class TestAttach:
    def test_dicts_pairs_and_other_shapes(self) -> None:
        assert attach(DefaultAdapter(), {"image": 0}, "k", 1) == {"image": 0, "k": 1}
        assert attach(DefaultAdapter(), [0, {"labels": 2}], "k", 1) == [0, {"labels": 2, "k": 1}]
        assert attach(DefaultAdapter(), (0, 5), "k", 1) == (0, 5)
