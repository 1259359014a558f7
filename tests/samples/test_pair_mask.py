"""An ``(image, mask)`` pair's mask: moved with its image, back in its own type."""

from __future__ import annotations

import albumentations as A
import numpy as np
import pytest
import torch
from PIL import Image

from rankaug import CutMixDataset, MixUpDataset, MosaicDataset, RandomAugmentWrapper
from rankaug.samples.pair_mask import (
    channels_first,
    is_pair_mask,
    mask_layout,
    mask_like,
    pair_mask,
    reads_first,
)
from tests.samples import tv_standin


def left_half(value: int, hw: tuple[int, int] = (8, 12)) -> np.ndarray:
    mask = np.zeros(hw, np.uint8)
    mask[:, : hw[1] // 2] = value
    return mask


def palette_image(mask: np.ndarray) -> Image.Image:
    made = Image.fromarray(mask, mode="L")
    made.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0] + [0] * (768 - 9))
    assert made.mode == "P"
    return made


class TestIsPairMask:
    def test_a_single_channel_target_of_the_image_s_size(self) -> None:
        image = np.zeros((8, 12, 3), np.uint8)
        assert is_pair_mask(image, left_half(1))
        assert is_pair_mask(torch.zeros(3, 8, 12), torch.zeros(8, 12, dtype=torch.long))
        assert is_pair_mask(Image.new("RGB", (12, 8)), palette_image(left_half(1)))
        assert is_pair_mask(image, Image.new("L", (12, 8)))
        # of its height and width in any layout: HxWxC, CxHxW (passed through, it went stale)
        assert is_pair_mask(image, np.zeros((8, 12, 3)))
        assert is_pair_mask(image, torch.zeros(1, 8, 12))
        assert is_pair_mask(torch.zeros(3, 8, 12), np.zeros((2, 8, 12)))

    def test_anything_else_is_not(self) -> None:
        image = np.zeros((8, 12, 3), np.uint8)
        assert not is_pair_mask(image, 3)  # a class index
        assert not is_pair_mask(image, np.zeros((12, 8)))  # another size
        assert not is_pair_mask(image, Image.new("RGB", (12, 8)))
        assert not is_pair_mask(image, np.zeros(10))  # one value per class


class TestMaskLayout:
    def test_each_layout_of_the_image_s_size(self) -> None:
        assert mask_layout(np.zeros((8, 12)), (8, 12), False) == "hw"
        assert mask_layout(np.zeros((8, 12, 1)), (8, 12), True) == "hwc"
        assert mask_layout(np.zeros((2, 8, 12)), (8, 12), False) == "chw"
        assert mask_layout(np.zeros((12, 8)), (8, 12), False) is None
        assert mask_layout(np.zeros((8, 12, 1, 1)), (8, 12), False) is None

    def test_both_ways_a_tensor_is_channels_first_an_array_last(self) -> None:
        assert mask_layout(torch.zeros(4, 4, 4), (4, 4), True) == "chw"
        assert mask_layout(np.zeros((4, 4, 4)), (4, 4), False) == "hwc"


class TestChannelsFirst:
    def test_hxwxc_and_hxw_come_back_cxhxw(self) -> None:
        mask = np.arange(24).reshape(2, 3, 4)
        np.testing.assert_array_equal(channels_first(np.moveaxis(mask, 0, -1)), mask)
        assert channels_first(np.zeros((3, 4))).shape == (1, 3, 4)


class TestReadsFirst:
    def test_a_tensor_mask_of_a_tensor_image(self) -> None:
        assert reads_first(torch.zeros(1, 8, 12), "tensor", (8, 12))
        assert not reads_first(torch.zeros(8, 12, 1), "tensor", (8, 12))  # HxWxC: so
        assert not reads_first(np.zeros((1, 8, 12)), "tensor", (8, 12))  # an array: HxWxC
        assert not reads_first(torch.zeros(1, 8, 12), "numpy", (8, 12))


class TestMaskLike:
    def test_each_type_comes_back_as_it_came(self) -> None:
        moved = left_half(2)[:, ::-1]
        assert mask_like(moved, left_half(2)).dtype == np.uint8
        back = mask_like(moved, torch.zeros(8, 12, dtype=torch.int64))
        assert type(back) is torch.Tensor
        assert back.dtype == torch.int64
        palette = palette_image(left_half(2))
        again = mask_like(pair_mask(palette)[:, ::-1], palette)
        assert again.mode == "P"
        assert again.getpalette() == palette.getpalette()
        np.testing.assert_array_equal(np.asarray(again), moved)

    @pytest.mark.parametrize("shape", [(8, 12), (1, 8, 12)])
    def test_a_torchvision_mask_keeps_its_class(
        self, monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...]
    ) -> None:
        # (image, Mask), as wrap_dataset_for_transforms_v2(VOCSegmentation) gives: a tensor
        tv = tv_standin.install(monkeypatch)
        mask = tv_standin.make(tv.Mask, left_half(1).reshape(shape))
        image = tv_standin.make(tv.Image, torch.zeros(3, 8, 12, dtype=torch.uint8))
        out = RandomAugmentWrapper([(image, mask)], A.HorizontalFlip(p=1.0), seed=0)[0]
        assert type(out[1]) is tv.Mask
        np.testing.assert_array_equal(
            out[1].as_subclass(torch.Tensor).numpy(), left_half(1)[:, ::-1].reshape(shape)
        )


class TestPairsInWrappers:
    @pytest.mark.parametrize("kind", ["numpy", "tensor", "pil"])
    def test_a_flip_moves_the_mask_with_its_image(self, kind: str) -> None:
        # the mask passed through as an opaque target: left where it was, under a
        # flipped image
        mask = left_half(1)
        image: object = np.zeros((8, 12, 3), np.uint8)
        target: object = mask
        if kind == "tensor":
            image, target = torch.zeros(3, 8, 12, dtype=torch.uint8), torch.from_numpy(mask)
        elif kind == "pil":
            image, target = Image.new("RGB", (12, 8)), palette_image(mask)
        out = RandomAugmentWrapper([(image, target)], A.HorizontalFlip(p=1.0), seed=0)[0]
        assert type(out[1]) is type(target)
        np.testing.assert_array_equal(np.asarray(out[1]), mask[:, ::-1])

    def test_cutmix_and_the_mosaic_paste_the_partners_masks(self) -> None:
        pairs = [(np.full((8, 12, 3), 10 * k, np.uint8), left_half(k + 1)) for k in range(4)]
        cut = CutMixDataset(pairs, seed=0)
        mixed = [cut[i] for i in range(4)]
        # the partner's mask where its pixels were pasted, the main's elsewhere
        for image, mask in mixed:
            for value in np.unique(image[:, :6, 0]):
                assert set(np.unique(mask[:, :6][image[:, :6, 0] == value])) == {value // 10 + 1}
        assert any(len(np.unique(mask)) > 2 for _, mask in mixed)
        image, mask = MosaicDataset(pairs, seed=0, output_size=24)[0]
        assert mask.shape == image.shape[:2]
        labelled = mask > 0  # each tile's left half: its own mask's value, under its pixels
        np.testing.assert_array_equal(mask[labelled], image[..., 0][labelled] // 10 + 1)
        assert len(np.unique(mask[labelled])) >= 2


LAYOUTS = {
    "numpy (H, W, 1)": lambda m: m[..., None],
    "numpy (1, H, W)": lambda m: m[None],
    "tensor (1, H, W)": lambda m: torch.from_numpy(m[None]),
    "tensor (2, H, W)": lambda m: torch.from_numpy(np.stack([m, 2 * m])),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
class TestPairMasksInEveryLayout:
    """A 3-D mask target passed through, unmoved, under a flipped or mosaicked image."""

    def test_a_flip_moves_it_in_its_layout(self, layout: str) -> None:
        target = LAYOUTS[layout](left_half(1))
        out = RandomAugmentWrapper(
            [(np.zeros((8, 12, 3), np.uint8), target)], A.HorizontalFlip(p=1.0), seed=0
        )[0]
        assert type(out[1]) is type(target)
        assert out[1].dtype == target.dtype
        expected = LAYOUTS[layout](left_half(1)[:, ::-1].copy())
        np.testing.assert_array_equal(np.asarray(out[1]), np.asarray(expected))

    @pytest.mark.parametrize("kind", ["mosaic", "mixup", "cutmix"])
    def test_the_multi_sample_wrappers_move_it(self, layout: str, kind: str) -> None:
        pairs = [(np.full((8, 12, 3), 10 * k, np.uint8), LAYOUTS[layout](left_half(k + 1)))
                 for k in range(3)]  # fmt: skip
        if kind == "mosaic":
            image, mask = MosaicDataset(pairs, seed=0, output_size=24)[0]
        else:
            image, mask = (MixUpDataset if kind == "mixup" else CutMixDataset)(pairs, seed=0)[0]
        first = layout.endswith(("(1, H, W)", "(2, H, W)"))
        hw = mask.shape[1:] if first else mask.shape[:2]
        assert tuple(hw) == image.shape[:2]
        assert type(mask) is type(pairs[0][1])
        channel = np.asarray(mask)[0] if first else np.asarray(mask)[..., 0]
        labelled = channel > 0
        if kind == "mixup":  # the heavier sample's mask, whole (pixels are blended)
            np.testing.assert_array_equal(labelled, left_half(1) > 0)
            assert len(np.unique(channel[labelled])) == 1
        else:  # each sample's left half: its own value, under its pixels
            np.testing.assert_array_equal(channel[labelled], image[..., 0][labelled] // 10 + 1)
