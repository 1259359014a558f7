from __future__ import annotations

from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch

from rankaug import MosaicDataset, RandomAugmentWrapper, SampleError
from rankaug.adapters import HuggingFace
from rankaug.mix import MixUpDataset
from rankaug.samples.sizes import resized_sizes
from tests.albu import bbox_params


class TestResizedSizes:
    @pytest.mark.parametrize(
        ("size", "want"),
        [
            ([16, 24], [8, 12]),
            ((16, 24), (8, 12)),
            (torch.tensor([16, 24]), torch.tensor([8, 12])),
            (torch.tensor([16, 24], dtype=torch.int32), torch.tensor([8, 12], dtype=torch.int32)),
            (np.array([16, 24], np.int16), np.array([8, 12], np.int16)),
            (torch.Size([16, 24]), torch.Size([8, 12])),
        ],
    )
    def test_size_is_the_new_height_and_width_in_its_type(self, size: Any, want: Any) -> None:
        got = resized_sizes({"size": size, "orig_size": size}, (16, 24), (8, 12), "the sample")
        assert list(got) == ["size"]  # orig_size stays the original
        assert type(got["size"]) is type(want)
        assert getattr(got["size"], "dtype", None) == getattr(want, "dtype", None)
        assert [int(v) for v in got["size"]] == [int(v) for v in want]

    @pytest.mark.parametrize("kind", [int, np.int64, float])
    def test_height_and_width_keep_their_type(self, kind: Any) -> None:
        got = resized_sizes({"width": kind(24), "height": kind(16)}, (16, 24), (32, 40), "x")
        assert got == {"height": kind(32), "width": kind(40)}
        assert type(got["height"]) is kind
        assert type(got["width"]) is kind

    def test_a_0d_tensor_stays_one(self) -> None:
        got = resized_sizes({"height": torch.tensor(16, dtype=torch.int32)}, (16, 24), (4, 4), "x")
        assert got["height"].dtype == torch.int32
        assert got["height"].ndim == 0
        assert int(got["height"]) == 4

    def test_nothing_changes_when_the_size_does_not(self) -> None:
        values = {"size": [99, 99], "width": 7}  # would be refused, were the size to change
        assert resized_sizes(values, (16, 24), (16, 24), "the sample") == {}

    def test_values_of_other_forms_pass(self) -> None:
        values = {"size": 7, "width": "wide", "height": [16], "shape": (16, 24, 3)}
        assert resized_sizes(values, (16, 24), (8, 12), "the sample") == {}

    @pytest.mark.parametrize(
        ("values", "message"),
        [
            ({"size": [24, 16]}, r"^the sample's 'size' is \(24, 16\), but its image's \(height, "),
            ({"width": 25}, r"^the sample's 'width' is 25, but its image is 24 wide \(height"),
            ({"height": 15}, r"^the sample's 'height' is 15, but its image is 16 high \("),
        ],
    )
    def test_a_value_that_does_not_describe_the_image_is_refused(
        self, values: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(ValueError, match=message):
            resized_sizes(values, (16, 24), (8, 12), "the sample")


def detr(index: int) -> tuple[np.ndarray, dict[str, Any]]:
    """A torchvision/DETR-style pair: ``size`` and ``orig_size`` are ``(H, W)`` tensors."""
    target = {"boxes": np.array([[2.0, 2.0, 10.0, 10.0]], np.float32), "labels": [index % 3],
              "size": torch.tensor([16, 24]), "orig_size": torch.tensor([16, 24]),
              "image_id": index}  # fmt: skip
    return np.full((16, 24, 3), 50 * index, np.uint8), target


def hf_row(index: int) -> dict[str, Any]:
    """A Hugging Face detection row: ``width`` and ``height`` are the image's, ints."""
    return {"image": np.full((16, 24, 3), 50 * index, np.uint8), "width": 24, "height": 16,
            "image_id": index, "objects": {"bbox": [[2.0, 2.0, 8.0, 8.0]],
                                           "category": [index % 3]}}  # fmt: skip


class TestWrappersKeepSizesCurrent:
    # a mosaic or a resize left "size", "width", "height" at the input's size
    def test_a_resize_updates_a_detr_target(self) -> None:
        resize = A.Compose([A.Resize(8, 12)], bbox_params=bbox_params("pascal_voc", ["labels"]))
        image, target = RandomAugmentWrapper([detr(0)], resize, seed=0)[0]
        assert image.shape == (8, 12, 3)
        assert torch.equal(target["size"], torch.tensor([8, 12]))
        assert target["size"].dtype == torch.int64
        assert torch.equal(target["orig_size"], torch.tensor([16, 24]))

    def test_a_mosaic_updates_hugging_face_rows(self) -> None:
        out = MosaicDataset([hf_row(i) for i in range(4)], seed=0, output_size=(32, 40),
                            adapter=HuggingFace())[0]  # fmt: skip
        assert out["image"].shape == (32, 40, 3)
        assert (out["height"], out["width"]) == (32, 40)
        assert type(out["height"]) is int
        assert type(out["width"]) is int

    def test_a_mosaic_updates_a_dict_samples_size(self) -> None:
        samples = [{"image": np.zeros((16, 24, 3), np.uint8), "size": (16, 24)}] * 4
        out = MosaicDataset(samples, seed=0, output_size=32)[0]
        assert out["size"] == (32, 32)

    def test_what_keeps_the_size_leaves_them_as_they_are(self) -> None:
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc", ["labels"]))
        pair = detr(1)
        _, target = RandomAugmentWrapper([pair], flip, seed=0)[0]
        assert target["size"] is pair[1]["size"]
        rows = [hf_row(i) for i in range(3)]
        out = MixUpDataset(rows, seed=0, adapter=HuggingFace())[0]
        assert (out["height"], out["width"]) == (16, 24)

    def test_a_stale_size_is_refused_when_the_image_is_resized(self) -> None:
        resize = A.Compose([A.Resize(8, 12)], bbox_params=bbox_params("pascal_voc", ["labels"]))
        image, target = detr(0)
        target["size"] = torch.tensor([24, 16])  # (W, H): rankaug cannot tell
        with pytest.raises(SampleError) as caught:
            RandomAugmentWrapper([(image, target)], resize, seed=0)[0]
        assert isinstance(caught.value.__cause__, ValueError)
        assert "'size' is (24, 16), but its image's (height, width) is (16, 24)" in str(
            caught.value.__cause__
        )
