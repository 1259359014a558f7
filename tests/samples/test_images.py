from __future__ import annotations

import re
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch
from albumentations.pytorch import ToTensorV2
from PIL import Image

from rankaug import RandomAugmentWrapper, SampleError
from rankaug.adapters import KeyMap
from rankaug.samples.images import image_from_numpy, image_hw, image_to_numpy, value_to_numpy

HWC = np.random.default_rng(0).integers(0, 255, (16, 20, 3), dtype=np.uint8)


class TestImageToNumpy:
    def test_a_chw_tensor_comes_back_chw_with_its_pixels(self) -> None:
        hwc = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
        image, kind, mode = image_to_numpy(torch.from_numpy(hwc).permute(2, 0, 1))
        np.testing.assert_array_equal(image, hwc)
        back = image_from_numpy(image, kind, mode)
        assert type(back) is torch.Tensor
        assert back.shape == (3, 5, 7)
        np.testing.assert_array_equal(back.permute(1, 2, 0).numpy(), hwc)

    def test_a_channels_last_tensor_is_refused_not_scrambled(self) -> None:
        # (64, 48, 3) read as CxHxW would be 64 channels of 48x3: a flip reversed colours
        hwc = torch.zeros(64, 48, 3, dtype=torch.uint8)
        message = re.escape(
            "image must be a CxHxW tensor, got a tensor of shape (64, 48, 3), which looks "
            "HxWxC (3 channels last): give image.permute(2, 0, 1)"
        )
        with pytest.raises(ValueError, match=message):
            image_to_numpy(hwc)
        wrapper = RandomAugmentWrapper([{"image": hwc}], A.HorizontalFlip(p=1.0), seed=0)
        with pytest.raises(SampleError, match=message):
            wrapper[0]
        # many channels first, more than 4 last: a multispectral CxHxW image, read as one
        assert image_to_numpy(torch.zeros(13, 8, 6))[0].shape == (8, 6, 13)

    def test_a_tensor_off_the_cpu_is_refused_not_moved(self) -> None:
        on_meta = torch.empty(3, 4, 6, device="meta")
        with pytest.raises(ValueError, match=re.escape(
            "a sample's tensors must be on the CPU, got one on meta (shape (3, 4, 6))"
        )):  # fmt: skip
            image_to_numpy(on_meta)

    @pytest.mark.parametrize("mode", ["I;16", "I", "F"])
    def test_a_deep_pil_image_is_told_a_fix_that_keeps_its_values(self, mode: str) -> None:
        # It was told image.convert('RGB'), which clips a 16-bit PNG's 40000 to 255.
        deep = Image.new(mode, (6, 4), 40000)
        with pytest.raises(ValueError, match=re.escape("np.asarray(image)")) as caught:
            image_to_numpy(deep)
        assert "would clip them to 255" in str(caught.value)
        assert "e.g. image.convert('RGB')" not in str(caught.value)
        fixed = np.asarray(deep).astype(np.uint16) if mode == "I" else np.asarray(deep)
        flipped = RandomAugmentWrapper([{"image": fixed}], A.HorizontalFlip(p=1.0), seed=0)[0]
        assert flipped["image"].max() == fixed.max() == 40000  # read, values kept

    def test_other_pil_modes_are_told_to_convert(self) -> None:
        with pytest.raises(ValueError, match=re.escape("(convert it in the dataset: e.g. im")):
            image_to_numpy(Image.new("P", (6, 4)))


class TestImageFromNumpy:
    @pytest.mark.parametrize("kind", ["numpy", "pil", "tensor", "tensor_hw"])
    def test_a_result_the_transform_made_a_tensor_comes_back_as_it_is(self, kind: str) -> None:
        # ToTensorV2's CxHxW tensor was transposed again: (3, 16, 20) came back (20, 3, 16)
        chw = torch.zeros(3, 16, 20)
        assert image_from_numpy(chw, kind, "RGB" if kind == "pil" else None) is chw

    def test_an_hxw_result_of_a_chw_tensor_gets_its_channel_axis_back(self) -> None:
        grey = np.arange(6, dtype=np.uint8).reshape(2, 3)
        back = image_from_numpy(grey, "tensor", None)
        assert tuple(back.shape) == (1, 2, 3)
        np.testing.assert_array_equal(back[0].numpy(), grey)
        assert tuple(image_from_numpy(grey, "tensor_hw", None).shape) == (2, 3)
        assert tuple(image_from_numpy(grey[:, :, None], "tensor_hw", None).shape) == (1, 2, 3)

    @pytest.mark.parametrize(
        "image",
        [HWC, torch.from_numpy(HWC).permute(2, 0, 1), Image.fromarray(HWC)],
        ids=["numpy", "tensor", "pil"],
    )
    @pytest.mark.parametrize("adapter", [None, KeyMap(image="image")], ids=["default", "keymap"])
    def test_a_pipeline_ending_in_to_tensor_gives_its_chw_tensor_for_every_input(
        self, image: Any, adapter: Any
    ) -> None:
        # a tensor input came back (20, 3, 16), silently, and a PIL input failed in PIL
        pipe = A.Compose([A.HorizontalFlip(p=1), ToTensorV2()])
        out = RandomAugmentWrapper([{"image": image}], pipe, seed=0, adapter=adapter)[0]
        assert type(out["image"]) is torch.Tensor
        np.testing.assert_array_equal(out["image"].numpy(), HWC[:, ::-1].transpose(2, 0, 1))

    def test_one_channel_out_of_a_chw_tensor_is_1xhxw(self) -> None:
        # ToGray(num_output_channels=1) gives HxW: a CxHxW tensor came back 2-D
        chw = torch.from_numpy(HWC).permute(2, 0, 1)
        grey = A.ToGray(num_output_channels=1, p=1)
        out = RandomAugmentWrapper([{"image": chw}], grey, seed=0)[0]["image"]
        assert tuple(out.shape) == (1, 16, 20)
        hw = RandomAugmentWrapper([{"image": chw[0]}], A.HorizontalFlip(p=1), seed=0)[0]
        assert tuple(hw["image"].shape) == (16, 20)


class TestImageHw:
    def test_arrays_are_hwc_and_tensors_chw(self) -> None:
        assert image_hw(HWC) == image_hw(torch.zeros(3, 16, 20)) == (16, 20)
        assert image_hw(np.zeros((16, 20))) == image_hw(torch.zeros(16, 20)) == (16, 20)


class TestValueToNumpy:
    def test_tensors_and_lists_of_tensors_become_arrays(self) -> None:
        masks = torch.arange(6, dtype=torch.uint8).reshape(2, 3)
        assert type(value_to_numpy(masks)) is np.ndarray
        listed = value_to_numpy([masks, masks + 1])
        assert type(listed) is list
        assert [(type(m), m.dtype) for m in listed] == [(np.ndarray, np.dtype(np.uint8))] * 2
        np.testing.assert_array_equal(listed[1], masks.numpy() + 1)
        assert type(value_to_numpy((masks,))) is tuple

    def test_pil_images_and_lists_of_them_become_arrays(self) -> None:
        mask = Image.new("P", (3, 2), 5)
        assert type(value_to_numpy(mask)) is np.ndarray
        np.testing.assert_array_equal(value_to_numpy(mask), np.full((2, 3), 5, np.uint8))
        listed = value_to_numpy((mask, Image.new("1", (3, 2), 1)))
        assert type(listed) is tuple
        assert [(type(m), m.dtype) for m in listed] == [(np.ndarray, np.dtype(np.uint8)),
                                                        (np.ndarray, np.dtype(bool))]  # fmt: skip

    def test_a_tensor_off_the_cpu_is_refused_not_moved(self) -> None:
        with pytest.raises(ValueError, match="a sample's tensors must be on the CPU, got one on"):
            value_to_numpy(torch.empty(2, 4, device="meta"))

    def test_anything_else_is_as_it_is(self) -> None:
        labels = [1, 2]
        assert value_to_numpy(labels) is labels
        empty: list[int] = []
        assert value_to_numpy(empty) is empty
        array = np.zeros(3)
        assert value_to_numpy(array) is array
