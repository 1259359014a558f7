"""Kornia's draws, keyed (rankaug.batch._kornia): instances used twice, per-patch draws."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from rankaug import BatchAugment
from tests.batch.helpers import images as _images

K = pytest.importorskip("kornia.augmentation")


def _children(params: list[Any]) -> list[dict[str, torch.Tensor]]:
    """The parameters of each augmentation applied, in order (sub-containers unrolled)."""
    found: list[dict[str, torch.Tensor]] = []
    for item in params:
        if isinstance(item.data, list):
            found += _children(item.data)
        else:
            found.append(item.data)
    return found


class TestKeyedDrawing:
    def test_an_instance_used_twice_draws_its_gate_anew_for_each_use(self) -> None:
        # both uses got the same gate: two p=0.5 flips always cancelled (0.0 flipped)
        flip = K.RandomHorizontalFlip(p=0.5)
        seq = K.AugmentationSequential(K.ImageSequential(flip), K.ImageSequential(flip))
        images = torch.arange(4.0).expand(256, 1, 1, 4).clone()  # every row reads 0 1 2 3
        out, params = BatchAugment(seq, seed=0, stream=1)(
            images, index=list(range(256)), epoch=0, return_params=True
        )
        first, second = (child["batch_prob"] for child in _children(params))
        assert 0.3 < first.mean().item() < 0.7
        assert 0.3 < second.mean().item() < 0.7
        assert not torch.equal(first, second)
        flipped = (out[:, 0, 0, 0] == 3).float().mean().item()
        assert 0.3 < flipped < 0.7
        alone = K.AugmentationSequential(K.ImageSequential(K.RandomHorizontalFlip(p=0.5)))
        _, once = BatchAugment(alone, seed=0, stream=1)(  # one stream: the same keys
            images, index=list(range(256)), epoch=0, return_params=True
        )
        (gate,) = (child["batch_prob"] for child in _children(once))
        assert torch.equal(gate, first)  # the first use draws as before

    def test_a_colour_jitter_used_twice_draws_its_order_anew_for_each_use(self) -> None:
        jitter = K.ColorJitter(0.3, 0.3, 0.3, 0.1, p=1.0)
        seq = K.AugmentationSequential(K.ImageSequential(jitter), K.ImageSequential(jitter))
        images = _images(32, side=8)
        _, params = BatchAugment(seq, seed=0, stream=1)(
            images, index=list(range(32)), epoch=0, return_params=True
        )
        first, second = (child["order"] for child in _children(params))
        assert first.shape == second.shape == (32, 4)
        assert not torch.equal(first, second)
        _, once = BatchAugment(K.ImageSequential(jitter), seed=0, stream=1)(
            images, index=list(range(32)), epoch=0, return_params=True
        )
        (order,) = (child["order"] for child in _children(once))
        assert torch.equal(order, first)

    @pytest.mark.parametrize(
        ("augmentation", "label"),
        [
            (lambda: K.RandomAffine(10.0, p=1.0), r"\(RandomAffine\), sampler degree_sampler"),
            (lambda: K.RandomHorizontalFlip(p=0.5), r"\(RandomHorizontalFlip\), its apply gate"),
        ],
        ids=["sampler", "gate"],
    )
    def test_a_draw_per_patch_is_refused_as_one(self, augmentation: Any, label: str) -> None:
        # it was called "a batch-level value of shape (12,) for a batch of 3"
        patches = K.PatchSequential(augmentation(), grid_size=(2, 2), patchwise_apply=False)
        with pytest.raises(
            ValueError,
            match=rf"augmentation 0 {label}(?: \(p=0.5\))? drew 12 values for a batch of 3, 4 "
            r"per sample: kornia draws it per patch \(PatchSequential with "
            r"patchwise_apply=False augments a batch of 12 patches",
        ):
            BatchAugment(patches, seed=0)(_images(3, side=16), index=[0, 1, 2], epoch=0)

    def test_patchwise_apply_is_keyed_per_sample(self) -> None:
        patches = K.PatchSequential(
            *(K.RandomAffine(10.0, p=1.0) for _ in range(4)),
            grid_size=(2, 2),
            patchwise_apply=True,
        )
        aug = BatchAugment(patches, seed=0)
        images = _images(6, side=16)
        out = aug(images, index=list(range(6)), epoch=0)
        assert (aug(images[3:4], index=[3], epoch=0) - out[3:4]).abs().max() <= 1e-5
