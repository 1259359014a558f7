from __future__ import annotations

from typing import Any
from unittest import mock

import albumentations as A
import numpy as np
import pytest

from rankaug._albumentations import AlbumentationsDriver
from rankaug.keys import KeyedRandom, make_seed_sequence
from rankaug.samples import DefaultAdapter
from rankaug.transforms import make_driver
from tests.albu import bbox_params, keypoint_params


class Own(DefaultAdapter):
    """A subclass: its samples go through unpack and repack (no plain call)."""


def keyed(index: int) -> KeyedRandom:
    return KeyedRandom(make_seed_sequence(0, epoch=0, index=index))


def geometric(**params: Any) -> A.Compose:
    return A.Compose([A.Affine(rotate=(-30, 30), scale=(0.5, 1.5), p=1), A.HorizontalFlip()],
                     bbox_params=bbox_params("pascal_voc", ["labels"]), **params)  # fmt: skip


def driver(adapter: DefaultAdapter, **params: Any) -> AlbumentationsDriver:
    made = make_driver(geometric(**params), adapter)
    assert isinstance(made, AlbumentationsDriver)
    return made


def boxed(**more: Any) -> dict[str, Any]:
    ramp = np.arange(24 * 32 * 3).reshape(24, 32, 3) % 251
    boxes = np.array([[2, 3, 12, 15], [18, 1, 30, 9], [1, 1, 31, 23]], np.float32)
    return {"image": ramp.astype(np.uint8), "bboxes": boxes, "labels": np.arange(3), **more}


class TestAlbumentationsDriver:
    @pytest.mark.parametrize(
        "sample",
        [
            boxed(),  # plain: the adapter's one call
            boxed(mask=np.eye(24, 32, dtype=np.uint8)),  # a mask to check: the steps
            boxed(masks=[np.eye(24, 32, dtype=np.uint8)] * 3),  # instance masks: the steps
            boxed(path="a.png"),  # a value kept aside: the steps
            {
                "image": np.zeros((8, 8), np.uint8),
                "labels": np.zeros(0, np.int64),
                "bboxes": np.zeros((0, 4), np.float32),
            },
        ],
    )
    def test_plain_samples_give_what_the_steps_give(self, sample: dict[str, Any]) -> None:
        plain, steps = driver(DefaultAdapter()), driver(Own())
        assert plain.plain is not None
        assert steps.plain is None
        for index in range(6):
            got, want = plain(dict(sample), keyed(index)), steps(dict(sample), keyed(index))
            assert list(got) == list(want)
            for key, value in want.items():
                assert type(got[key]) is type(value)
                assert np.array_equal(np.asarray(got[key]), np.asarray(value))
                assert np.asarray(got[key]).dtype == np.asarray(value).dtype

    def test_the_plain_keys_leave_out_those_it_checks(self) -> None:
        moved = driver(DefaultAdapter())  # keypoints refused (no keypoint_params), a mask moved
        assert moved.refused == {"keypoints"}
        assert moved.moves_masks
        assert moved.plain == moved.targets - {"keypoints", "mask", "masks"}
        points = driver(DefaultAdapter(), keypoint_params=keypoint_params("xy"))
        assert points.points == ("keypoints",)
        assert points.plain == points.targets - {"keypoints", "mask", "masks"}
        pixels = make_driver(A.Compose([A.RandomBrightnessContrast()]), DefaultAdapter())
        assert isinstance(pixels, AlbumentationsDriver)
        assert not pixels.moves_masks
        assert pixels.plain == pixels.targets - {"masks"}
        assert {"image", "mask"} <= pixels.plain

    def test_a_mask_that_does_not_cover_its_image_is_refused_still(self) -> None:
        sample = boxed(mask=np.zeros((1, 24, 32), np.uint8))
        with pytest.raises(ValueError, match="the sample's mask"):
            driver(DefaultAdapter())(sample, keyed(0))

    def test_moved_masks_of_additional_targets_and_wide_labels_take_the_steps(self) -> None:
        # OpenCV warps no bool mask, albumentations hashes no (N, K) label: the steps
        # convert them, so the one call must not take them
        made = driver(DefaultAdapter(), additional_targets={"seg": "mask"})
        assert "seg" in made.targets
        assert "seg" not in made.plain  # type: ignore[operator]
        seg = np.zeros((24, 32), bool)
        seg[4:12, 6:20] = True
        as_bool = made(boxed(seg=seg), keyed(1))
        as_uint8 = made(boxed(seg=seg.view(np.uint8)), keyed(1))
        assert as_bool["seg"].dtype == np.bool_
        assert np.array_equal(as_bool["seg"], as_uint8["seg"].astype(bool))
        wide = made(boxed(labels=np.arange(6).reshape(3, 2)), keyed(1))
        narrow = made(boxed(), keyed(1))
        assert np.array_equal(wide["labels"], np.arange(6).reshape(3, 2)[narrow["labels"]])

    @pytest.mark.parametrize("step", ["unpack", "repack"])
    def test_a_step_patched_on_the_adapter_class_is_used(self, step: str) -> None:
        made = driver(DefaultAdapter())
        made(boxed(), keyed(0))
        original = getattr(DefaultAdapter, step)
        calls = []

        def spy(self: DefaultAdapter, *args: Any) -> Any:
            calls.append(step)
            return original(self, *args)

        # before: a plain sample took the one call, the patched step passed over
        with mock.patch.object(DefaultAdapter, step, spy):
            out = made(boxed(), keyed(1))
        assert calls == [step]
        want = driver(Own())(boxed(), keyed(1))
        assert all(np.array_equal(out[key], value) for key, value in want.items())

    def test_a_step_given_to_the_adapter_afterwards_is_used(self) -> None:
        adapter = DefaultAdapter()
        made = make_driver(A.Compose([A.RandomBrightnessContrast()]), adapter)
        assert isinstance(made, AlbumentationsDriver)
        assert made.adapter is adapter  # no box format to tell it: not copied
        sample = {"image": boxed()["image"]}
        made(dict(sample), keyed(0))

        def unpack(sample: Any, targets: Any) -> Any:
            raise RuntimeError("the adapter's own unpack")

        # before: the one call went on without it, as without the wrapper's other steps
        adapter.unpack = unpack  # type: ignore[method-assign]
        with pytest.raises(RuntimeError, match="the adapter's own unpack"):
            made(dict(sample), keyed(1))
