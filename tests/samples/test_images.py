from __future__ import annotations

import re

import albumentations as A
import numpy as np
import pytest
import torch

from rankaug import RandomAugmentWrapper, SampleError
from rankaug.samples.images import image_from_numpy, image_to_numpy, value_to_numpy


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


class TestValueToNumpy:
    def test_tensors_and_lists_of_tensors_become_arrays(self) -> None:
        masks = torch.arange(6, dtype=torch.uint8).reshape(2, 3)
        assert type(value_to_numpy(masks)) is np.ndarray
        listed = value_to_numpy([masks, masks + 1])
        assert type(listed) is list
        assert [(type(m), m.dtype) for m in listed] == [(np.ndarray, np.dtype(np.uint8))] * 2
        np.testing.assert_array_equal(listed[1], masks.numpy() + 1)
        assert type(value_to_numpy((masks,))) is tuple

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
