"""An ``(image, mask)`` pair's mask: moved with its image, back in its own type."""

from __future__ import annotations

import albumentations as A
import numpy as np
import pytest
import torch
from PIL import Image

from rankaug import CutMixDataset, MosaicDataset, RandomAugmentWrapper
from rankaug.samples.pair_mask import is_pair_mask, mask_like, pair_mask


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

    def test_anything_else_is_not(self) -> None:
        image = np.zeros((8, 12, 3), np.uint8)
        assert not is_pair_mask(image, 3)  # a class index
        assert not is_pair_mask(image, np.zeros((12, 8)))  # another size
        assert not is_pair_mask(image, np.zeros((8, 12, 3)))  # an image: not one channel
        assert not is_pair_mask(image, Image.new("RGB", (12, 8)))
        assert not is_pair_mask(image, np.zeros(10))  # one value per class


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
