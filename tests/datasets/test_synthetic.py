"""Tests for rankaug.datasets.synthetic."""

from __future__ import annotations

import pickle
import random
from typing import Any

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.data import Dataset

from rankaug.boxes import BOX_FORMATS, BoxFormat, to_xyxy
from rankaug.datasets import SyntheticDetection
from tests.datasets.helpers import assert_boxes_match_mask


class TestSyntheticDetection:
    @pytest.mark.parametrize(("name", "value"), [("box_format", "coco"), ("num_classes", 9)])
    def test_its_arguments_cannot_be_assigned(self, name: str, value: Any) -> None:
        # the wrappers read the declared box_format once: a dataset that then gave coco
        # boxes was read as corners (a wide box stays valid, silently wrong); the class
        # colours were not redrawn for a new num_classes
        ds = SyntheticDetection(4, image_size=32, seed=0)
        with pytest.raises(AttributeError, match=rf"^SyntheticDetection\.{name} cannot be"):
            setattr(ds, name, value)
        assert (ds.box_format, ds.num_classes) == ("pascal_voc", 5)

    def test_a_subclass_may_set_its_arguments_before_the_constructor(self) -> None:
        # before: refused, by the constructor's own assignment (Small.length cannot be
        # assigned: it is fixed)
        class Small(SyntheticDetection):
            def __init__(self, length: int, image_size: Any, seed: int = 3) -> None:
                self.length, self.image_size, self.seed = length, image_size, 3
                super().__init__(length, image_size, seed=seed)

        ds = Small(2, 16)  # 16 given and set: kept as (16, 16), made of it
        assert (len(ds), ds.image_size, ds[1]["image"].shape) == (2, (16, 16), (16, 16, 3))
        with pytest.raises(AttributeError, match=r"^Small\.length cannot be assigned: it is fixed"):
            ds.length = 3
        with pytest.raises(AttributeError, match=(
            r"^Small\.seed cannot be assigned: it was set before the constructor, which sets "
            r"seed itself, to another value \(set: 3; the constructor's: 4\)"
        )):  # fmt: skip
            Small(2, 16, seed=4)

    def test_defaults(self) -> None:
        ds = SyntheticDetection()
        assert isinstance(ds, Dataset)
        assert len(ds) == 64
        sample = ds[0]
        assert set(sample) == {"image", "bboxes", "labels", "mask"}
        assert sample["image"].shape == (480, 640, 3)
        assert sample["image"].dtype == np.uint8
        assert sample["mask"].shape == (480, 640)
        assert sample["mask"].dtype == np.uint8
        assert sample["bboxes"].dtype == np.float32
        assert sample["labels"].dtype == np.int64
        assert 1 <= len(sample["labels"]) <= 6
        assert sample["bboxes"].shape == (len(sample["labels"]), 4)
        assert np.all((sample["labels"] >= 0) & (sample["labels"] < 5))

    def test_boxes_are_tight_around_visible_pixels(self) -> None:
        ds = SyntheticDetection(20, image_size=(96, 128), max_objects=12)
        for index in range(len(ds)):
            sample = ds[index]
            assert_boxes_match_mask(sample["bboxes"], sample["labels"], sample["mask"])

    def test_heavy_occlusion_emits_only_visible_objects(self) -> None:
        ds = SyntheticDetection(30, image_size=24, max_objects=40, num_classes=7)
        counts = []
        for index in range(len(ds)):
            sample = ds[index]
            assert_boxes_match_mask(sample["bboxes"], sample["labels"], sample["mask"])
            counts.append(len(sample["labels"]))
        assert max(counts) <= 40
        assert min(counts) >= 1

    @given(
        seed=st.integers(0, 2**64 - 1),
        index=st.integers(0, 2**40),
        height=st.integers(8, 80),
        width=st.integers(8, 80),
        max_objects=st.integers(1, 10),
    )
    def test_any_key_gives_consistent_samples(
        self, seed: int, index: int, height: int, width: int, max_objects: int
    ) -> None:
        ds = SyntheticDetection(
            2**40 + 1, image_size=(height, width), seed=seed, max_objects=max_objects, num_classes=9
        )
        sample = ds[index]
        assert sample["image"].shape == (height, width, 3)
        assert 1 <= len(sample["labels"]) <= max_objects
        assert np.all(sample["labels"] < 9)
        assert_boxes_match_mask(sample["bboxes"], sample["labels"], sample["mask"])

    def test_mask_values_are_background_or_label_plus_one(self) -> None:
        sample = SyntheticDetection(1, image_size=64, num_classes=3)[0]
        assert set(np.unique(sample["mask"]).tolist()) <= {0, *(sample["labels"] + 1).tolist()}

    def test_deterministic_per_seed_and_index(self) -> None:
        first = SyntheticDetection(8, image_size=48, seed=11)
        second = SyntheticDetection(8, image_size=48, seed=11)
        for index in (5, 0, 7, 5):
            a, b = first[index], second[index]
            for key in a:
                np.testing.assert_array_equal(a[key], b[key])

    def test_indices_and_seeds_differ(self) -> None:
        images = [
            SyntheticDetection(4, image_size=48, seed=s)[i]["image"] for s in (0, 1) for i in (0, 1)
        ]
        for a in range(4):
            for b in range(a + 1, 4):
                assert not np.array_equal(images[a], images[b])

    def test_key_words_do_not_alias(self) -> None:
        # (seed 2**32, index 0) and (seed 0, index 2**32) would collide if words were mixed.
        a = SyntheticDetection(2**33, image_size=32, seed=2**32)[0]["image"]
        b = SyntheticDetection(2**33, image_size=32, seed=0)[2**32]["image"]
        c = SyntheticDetection(2**33, image_size=32, seed=1)[0]["image"]
        d = SyntheticDetection(2**33, image_size=32, seed=0)[1]["image"]
        assert not np.array_equal(a, b)
        assert not np.array_equal(c, d)

    def test_negative_index_counts_from_end(self) -> None:
        ds = SyntheticDetection(5, image_size=32)
        np.testing.assert_array_equal(ds[-1]["image"], ds[4]["image"])
        np.testing.assert_array_equal(ds[-5]["image"], ds[0]["image"])

    @pytest.mark.parametrize("index", [5, -6, 100])
    def test_index_out_of_range(self, index: int) -> None:
        with pytest.raises(
            IndexError, match=rf"index {index} is out of range for a dataset of length 5"
        ):
            SyntheticDetection(5, image_size=32)[index]

    @pytest.mark.parametrize("index", [1.0, "1", True, None, slice(0, 2), torch.tensor(1.0)])
    def test_index_type(self, index: object) -> None:
        with pytest.raises(TypeError, match="index must be an integer"):
            SyntheticDetection(5, image_size=32)[index]  # type: ignore[index]

    @pytest.mark.parametrize("index", [np.int64(2), np.uint8(2), torch.tensor(2)])
    def test_integer_like_indices(self, index: object) -> None:
        ds = SyntheticDetection(5, image_size=32)
        np.testing.assert_array_equal(ds[index]["image"], ds[2]["image"])  # type: ignore[index]

    def test_empty_dataset(self) -> None:
        ds = SyntheticDetection(0)
        assert len(ds) == 0
        with pytest.raises(IndexError):
            ds[0]

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_box_formats_convert_to_the_same_boxes(self, fmt: BoxFormat) -> None:
        reference = SyntheticDetection(3, image_size=(40, 60), seed=3)
        ds = SyntheticDetection(3, image_size=(40, 60), seed=3, box_format=fmt)
        assert ds.box_format == fmt
        for index in range(3):
            boxes = ds[index]["bboxes"]
            assert boxes.dtype == np.float32
            xyxy = to_xyxy(boxes.astype(np.float64), fmt, (40, 60))
            np.testing.assert_allclose(xyxy, reference[index]["bboxes"], atol=1e-4)

    def test_masks_off(self) -> None:
        sample = SyntheticDetection(2, image_size=32, masks=False)[1]
        assert set(sample) == {"image", "bboxes", "labels"}

    def test_grayscale(self) -> None:
        rgb = SyntheticDetection(2, image_size=(30, 40))[1]["image"]
        gray = SyntheticDetection(2, image_size=(30, 40), channels=1)[1]["image"]
        assert gray.shape == (30, 40)
        assert gray.dtype == np.uint8
        np.testing.assert_array_equal(gray, cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))

    def test_float32_images(self) -> None:
        uint8 = SyntheticDetection(1, image_size=32)[0]["image"]
        floats = SyntheticDetection(1, image_size=32, dtype="float32")[0]["image"]
        assert floats.dtype == np.float32
        assert floats.min() >= 0.0
        assert floats.max() <= 1.0
        np.testing.assert_allclose(floats * 255.0, uint8, atol=1e-3)

    def test_as_tuple(self) -> None:
        sample = SyntheticDetection(2, image_size=32)[1]
        image, target = SyntheticDetection(2, image_size=32, as_tuple=True)[1]
        assert isinstance(image, np.ndarray)
        assert set(target) == {"boxes", "labels", "mask"}
        np.testing.assert_array_equal(image, sample["image"])
        np.testing.assert_array_equal(target["boxes"], sample["bboxes"])
        assert target["boxes"].dtype == np.float32
        np.testing.assert_array_equal(target["labels"], sample["labels"])
        np.testing.assert_array_equal(target["mask"], sample["mask"])

    def test_tensors(self) -> None:
        sample = SyntheticDetection(2, image_size=(30, 40))[0]
        image, target = SyntheticDetection(2, image_size=(30, 40), as_tuple=True, tensors=True)[0]
        assert isinstance(image, torch.Tensor)
        assert image.dtype == torch.uint8
        assert image.shape == (3, 30, 40)
        assert image.is_contiguous()
        np.testing.assert_array_equal(image.permute(1, 2, 0).numpy(), sample["image"])
        assert target["boxes"].dtype == torch.float32
        assert target["labels"].dtype == torch.int64
        assert target["mask"].dtype == torch.uint8
        np.testing.assert_array_equal(target["boxes"].numpy(), sample["bboxes"])

    def test_tensors_grayscale_float(self) -> None:
        image, _ = SyntheticDetection(
            1,
            image_size=(30, 40),
            channels=1,
            dtype="float32",
            as_tuple=True,
            tensors=True,
            masks=False,
        )[0]
        assert image.shape == (1, 30, 40)
        assert image.dtype == torch.float32

    def test_varied_sizes(self) -> None:
        ds = SyntheticDetection(40, image_size=(100, 200), varied_sizes=True)
        sizes = set()
        for index in range(len(ds)):
            sample = ds[index]
            height, width = sample["image"].shape[:2]
            assert ds.image_hw(index) == (height, width)
            assert 50 <= height <= 150
            assert 100 <= width <= 300
            assert_boxes_match_mask(sample["bboxes"], sample["labels"], sample["mask"])
            sizes.add((height, width))
        assert len(sizes) > 30
        assert len({round(h / w, 2) for h, w in sizes}) > 20  # aspect ratios vary

    def test_varied_sizes_never_below_eight(self) -> None:
        ds = SyntheticDetection(50, image_size=8, varied_sizes=True)
        assert min(min(ds.image_hw(i)) for i in range(len(ds))) == 8

    def test_image_hw_without_varied_sizes(self) -> None:
        assert SyntheticDetection(3, image_size=(30, 50)).image_hw(-1) == (30, 50)

    def test_does_not_touch_global_random_state(self) -> None:
        # Reading (never setting) the legacy global state is the point of this test.
        np_state = np.random.get_state()  # noqa: NPY002
        py_state = random.getstate()
        torch_state = torch.get_rng_state()
        ds = SyntheticDetection(3, image_size=32, varied_sizes=True)
        for index in range(3):
            ds[index]
        after = np.random.get_state()  # noqa: NPY002
        assert after[0] == np_state[0]  # type: ignore[index]
        np.testing.assert_array_equal(after[1], np_state[1])  # type: ignore[index]
        assert after[2:] == np_state[2:]  # type: ignore[index]
        assert random.getstate() == py_state
        assert torch.equal(torch.get_rng_state(), torch_state)

    def test_pickles(self) -> None:
        ds = SyntheticDetection(3, image_size=32, seed=5, box_format="yolo")
        clone = pickle.loads(pickle.dumps(ds))
        np.testing.assert_array_equal(clone[2]["bboxes"], ds[2]["bboxes"])

    def test_worker_processes_give_the_same_samples(self) -> None:
        ds = SyntheticDetection(6, image_size=32, seed=3, varied_sizes=True)
        samples = list(torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2))
        assert len(samples) == 6
        for index, sample in enumerate(samples):
            np.testing.assert_array_equal(sample["image"], ds[index]["image"])
            np.testing.assert_array_equal(sample["bboxes"], ds[index]["bboxes"])

    def test_works_in_a_dataloader(self) -> None:
        ds = SyntheticDetection(6, image_size=32, as_tuple=True, tensors=True)
        loader = torch.utils.data.DataLoader(ds, batch_size=3, collate_fn=list)
        batches = list(loader)
        assert [len(batch) for batch in batches] == [3, 3]
        assert torch.equal(batches[1][2][0], ds[5][0])

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"length": -1}, ValueError, r"length must be an integer in \[0, \d+\], got -1"),
            ({"length": 2.0}, TypeError, r"length must be an integer in \[0, \d+\], got 2.0 of"),
            # accepted once, then len() raised an OverflowError
            ({"length": 2**64}, ValueError, r"length must be an integer in \[0, 92233720\d+\]"),
            ({"image_size": 7}, ValueError, r"image_size height must be an integer >= 8, got 7"),
            ({"image_size": (64, 0)}, ValueError, r"image_size width must be an integer >= 8"),
            ({"image_size": (64,)}, TypeError, r"image_size must be an int or a \(height, width\)"),
            ({"image_size": "64"}, TypeError, r"image_size must be an int or a \(height, width\)"),
            ({"image_size": (64.0, 64)}, TypeError, r"image_size height must be an integer"),
            (
                {"num_classes": 0},
                ValueError,
                r"num_classes must be an integer in \[1, 255\], got 0",
            ),
            ({"num_classes": 256}, ValueError, r"num_classes must be an integer in \[1, 255\]"),
            ({"max_objects": 0}, ValueError, r"max_objects must be an integer in \[1, 255\]"),
            (
                {"seed": -1},
                ValueError,
                r"seed must be an integer in \[0, 18446744073709551615\], got -1",
            ),
            (
                {"seed": 2**64},
                ValueError,
                r"seed must be an integer in \[0, 18446744073709551615\]",
            ),
            ({"seed": True}, TypeError, r"seed must be an integer"),
            ({"seed": 1.0}, TypeError, r"seed must be an integer"),
            ({"box_format": "xyxy"}, ValueError, r"box_format must be one of"),
            ({"masks": 1}, TypeError, r"masks must be True or False, got 1"),
            ({"channels": 2}, ValueError, r"channels must be 1 .* or 3"),
            ({"channels": 4}, ValueError, r"channels must be an integer in \[1, 3\], got 4"),
            (
                {"dtype": "float64"},
                ValueError,
                r"dtype must be 'uint8' or 'float32', got 'float64'",
            ),
            ({"dtype": np.float32}, TypeError, r"dtype must be the str 'uint8' or 'float32'"),
            ({"as_tuple": "yes"}, TypeError, r"as_tuple must be True or False"),
            ({"tensors": True}, ValueError, r"tensors=True needs as_tuple=True"),
            (
                {"as_tuple": True, "box_format": "yolo"},
                ValueError,
                r"box_format must be 'pascal_voc'",
            ),
            ({"varied_sizes": None}, TypeError, r"varied_sizes must be True or False"),
        ],
    )
    def test_bad_arguments(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            SyntheticDetection(**kwargs)

    def test_largest_seed(self) -> None:
        sample = SyntheticDetection(1, image_size=16, seed=2**64 - 1)[0]
        assert sample["image"].shape == (16, 16, 3)

    def test_repr_names_every_setting(self) -> None:
        ds = SyntheticDetection(3, image_size=(20, 30), seed=5, masks=False, varied_sizes=True)
        assert repr(ds) == (
            "SyntheticDetection(3, image_size=(20, 30), num_classes=5, max_objects=6, seed=5, "
            "box_format='pascal_voc', masks=False, channels=3, dtype='uint8', as_tuple=False, "
            "tensors=False, varied_sizes=True)"
        )
        rebuilt = eval(repr(ds), {"SyntheticDetection": SyntheticDetection})
        np.testing.assert_array_equal(rebuilt[2]["image"], ds[2]["image"])
