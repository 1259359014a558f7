from __future__ import annotations

from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch

from rankaug.keys import KeyedRandom, make_seed_sequence
from rankaug.samples import DefaultAdapter
from rankaug.transforms import AlbumentationsLike, albumentations_targets, make_driver
from tests.albu import bbox_params, keypoint_params


def keyed(index: int = 0) -> KeyedRandom:
    return KeyedRandom(make_seed_sequence(0, epoch=0, index=index))


class Module(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.rand(())


class TestMakeDriver:
    def test_albumentations_draws_from_the_key(self) -> None:
        driver = make_driver(
            A.Compose([A.Affine(rotate=(-40, 40), p=1), A.RandomBrightnessContrast(p=1)]),
            DefaultAdapter(),
        )
        ramp = np.arange(16 * 16 * 3, dtype=np.int64).reshape(16, 16, 3)
        sample = {"image": (ramp * 7 % 251).astype(np.uint8)}
        outputs = []
        for index, global_seed in ((0, 1), (0, 2), (1, 1)):
            torch.manual_seed(global_seed)  # global state plays no part
            outputs.append(driver(sample, keyed(index))["image"])
        assert np.array_equal(outputs[0], outputs[1])
        assert not np.array_equal(outputs[0], outputs[2])

    def test_rng_callables_get_the_generator(self) -> None:
        k = keyed()
        driver = make_driver(lambda sample, *, rng: rng, DefaultAdapter())
        assert driver("anything", k) is k.generator

    def test_modules_with_rng_in_forward(self) -> None:
        class WithRng(torch.nn.Module):
            def forward(self, x: Any, rng: np.random.Generator) -> Any:
                return rng

        k = keyed()
        assert make_driver(WithRng(), DefaultAdapter())(0, k) is k.generator

    def test_torch_global_callables_run_under_a_keyed_generator(self) -> None:
        driver = make_driver(Module(), DefaultAdapter())
        state = torch.get_rng_state()
        a = driver(torch.zeros(()), keyed(1))
        b = driver(torch.zeros(()), keyed(1))
        c = driver(torch.zeros(()), keyed(2))
        assert torch.equal(a, b)
        assert not torch.equal(a, c)
        assert torch.equal(torch.get_rng_state(), state)

    def test_torch_state_is_restored_when_the_transform_raises(self) -> None:
        def boom(sample: Any) -> Any:
            torch.rand(3)
            raise RuntimeError("boom")

        state = torch.get_rng_state()
        with pytest.raises(RuntimeError, match="boom"):
            make_driver(boom, DefaultAdapter())(None, keyed())
        assert torch.equal(torch.get_rng_state(), state)

    def test_builtins_without_signature_are_torch_global(self) -> None:
        assert make_driver(abs, DefaultAdapter())(-3, keyed()) == 3

    def test_non_callables_are_refused(self) -> None:
        with pytest.raises(TypeError, match=r"transform must be .* got 3 of type int"):
            make_driver(3, DefaultAdapter())


class TestAlbumentationsTargets:
    def test_label_fields_and_additional_targets(self) -> None:
        compose = A.Compose(
            [A.HorizontalFlip()],
            bbox_params=bbox_params("coco", ["cls", "track"]),
            keypoint_params=keypoint_params("xy"),
            additional_targets={"image2": "image"},
        )
        keys = albumentations_targets(compose)
        assert {"image", "mask", "bboxes", "keypoints", "cls", "track", "image2"} <= keys
        assert isinstance(compose, AlbumentationsLike)
