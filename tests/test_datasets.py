"""Tests for rankaug.datasets."""

from __future__ import annotations

import json
import pickle
import random
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.data import Dataset

import rankaug.datasets
from rankaug.boxes import BOX_FORMATS, BoxFormat, from_xyxy, to_xyxy
from rankaug.datasets import CocoDetection, SyntheticDetection, YoloFolder, write_yolo_folder


def assert_boxes_match_mask(bboxes: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> None:
    """Boxes are tight around visible pixels of their class, and cover all of them."""
    height, width = mask.shape
    boxes = bboxes.astype(np.int64)
    np.testing.assert_array_equal(boxes, bboxes)  # pixel-edge coordinates are integers
    assert np.all(boxes[:, :2] >= 0)
    assert np.all(boxes[:, 2] <= width)
    assert np.all(boxes[:, 3] <= height)
    assert np.all(boxes[:, 2:] > boxes[:, :2])
    for (x0, y0, x1, y1), label in zip(boxes, labels, strict=True):
        region = mask[y0:y1, x0:x1] == label + 1
        # every edge of a tight box touches a pixel of the object
        assert region[0].any()
        assert region[-1].any()
        assert region[:, 0].any()
        assert region[:, -1].any()
    covered = np.zeros(mask.shape, dtype=bool)
    for (x0, y0, x1, y1), label in zip(boxes, labels, strict=True):
        covered[y0:y1, x0:x1] |= mask[y0:y1, x0:x1] == label + 1
    np.testing.assert_array_equal(covered, mask > 0)


def write_coco(
    dataset: SyntheticDetection, root: Path, *, crowd: bool = True
) -> tuple[Path, dict[str, Any]]:
    """Write ``dataset`` as PNGs plus a COCO JSON with shuffled, sparse ids."""
    (root / "images").mkdir(parents=True)
    images, annotations = [], []
    annotation_id = 500
    for index in reversed(range(len(dataset))):
        sample = dataset[index]
        height, width = sample["image"].shape[:2]
        name = f"sub/{index}.png" if index % 2 else f"{index}.png"
        (root / "images" / name).parent.mkdir(exist_ok=True)
        cv2.imwrite(str(root / "images" / name), cv2.cvtColor(sample["image"], cv2.COLOR_RGB2BGR))
        image_id = 1000 + 7 * index
        images.append({"id": image_id, "file_name": name, "height": height, "width": width})
        coco = from_xyxy(sample["bboxes"].astype(np.float64), "coco", (height, width))
        for box, label in zip(coco.tolist(), sample["labels"].tolist(), strict=True):
            annotation_id += 3
            annotations.append(
                {
                    "id": annotation_id,
                    "image_id": image_id,
                    "category_id": 10 * (label + 1),
                    "bbox": box,
                    "area": box[2] * box[3],
                    "iscrowd": 0,
                }
            )
        if crowd:
            annotations.append(
                {
                    "id": 7 + index,
                    "image_id": image_id,
                    "category_id": 10,
                    "bbox": [0, 0, 5, 5],
                    "iscrowd": 1,
                }
            )
    categories = [
        {"id": 10 * (c + 1), "name": f"shape{c}"} for c in reversed(range(dataset.num_classes))
    ]
    data = {"images": images, "annotations": annotations, "categories": categories}
    path = root / "instances.json"
    path.write_text(json.dumps(data))
    return path, data


class TestPackage:
    def test_exports(self) -> None:
        assert sorted(rankaug.datasets.__all__) == [
            "CocoDetection",
            "SyntheticDetection",
            "YoloFolder",
            "write_yolo_folder",
        ]


class TestSyntheticDetection:
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
        assert after[0] == np_state[0]
        np.testing.assert_array_equal(after[1], np_state[1])
        assert after[2:] == np_state[2:]
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
            ({"length": -1}, ValueError, r"length must be an integer >= 0, got -1"),
            ({"length": 2.0}, TypeError, r"length must be an integer >= 0, got 2.0 of type float"),
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
            ({"masks": 1}, TypeError, r"masks must be a bool, got 1"),
            ({"channels": 2}, ValueError, r"channels must be 1 .* or 3"),
            ({"channels": 4}, ValueError, r"channels must be an integer in \[1, 3\], got 4"),
            (
                {"dtype": "float64"},
                ValueError,
                r"dtype must be 'uint8' or 'float32', got 'float64'",
            ),
            ({"dtype": np.float32}, TypeError, r"dtype must be the str 'uint8' or 'float32'"),
            ({"as_tuple": "yes"}, TypeError, r"as_tuple must be a bool"),
            ({"tensors": True}, ValueError, r"tensors=True needs as_tuple=True"),
            (
                {"as_tuple": True, "box_format": "yolo"},
                ValueError,
                r"box_format must be 'pascal_voc'",
            ),
            ({"varied_sizes": None}, TypeError, r"varied_sizes must be a bool"),
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


class TestYoloFolder:
    @pytest.fixture
    def root(self, tmp_path: Path) -> Path:
        return write_yolo_folder(
            SyntheticDetection(6, image_size=(40, 56), seed=2), tmp_path / "ds"
        )

    @staticmethod
    def make(tmp_path: Path, labels: dict[str, str], images: tuple[str, ...] = ("a.png",)) -> Path:
        """A folder of 16x20 black PNGs with the given label files."""
        for name in images:
            path = tmp_path / "images" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(path), np.zeros((16, 20, 3), dtype=np.uint8))
        (tmp_path / "labels").mkdir(exist_ok=True)
        for name, text in labels.items():
            path = tmp_path / "labels" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return tmp_path

    def test_round_trip_of_synthetic_data(self, root: Path) -> None:
        original = SyntheticDetection(6, image_size=(40, 56), seed=2)
        ds = YoloFolder(root)
        assert isinstance(ds, Dataset)
        assert len(ds) == 6
        for index in range(6):
            expected, sample = original[index], ds[index]
            assert set(sample) == {"image", "bboxes", "labels"}
            np.testing.assert_array_equal(sample["image"], expected["image"])
            assert sample["bboxes"].dtype == np.float32
            np.testing.assert_allclose(sample["bboxes"], expected["bboxes"], rtol=0, atol=1e-4)
            np.testing.assert_array_equal(sample["labels"], expected["labels"])
            assert sample["labels"].dtype == np.int64

    def test_round_trip_of_varied_sizes_in_yolo_format(self, tmp_path: Path) -> None:
        original = SyntheticDetection(
            5, image_size=(40, 56), seed=4, box_format="yolo", varied_sizes=True
        )
        ds = YoloFolder(write_yolo_folder(original, tmp_path, box_format="yolo"), box_format="yolo")
        for index in range(5):
            np.testing.assert_array_equal(ds[index]["image"], original[index]["image"])
            np.testing.assert_allclose(ds[index]["bboxes"], original[index]["bboxes"], atol=1e-6)

    def test_grayscale_reads_back_as_rgb(self, tmp_path: Path) -> None:
        original = SyntheticDetection(2, image_size=24, channels=1)
        image = YoloFolder(write_yolo_folder(original, tmp_path))[1]["image"]
        assert image.shape == (24, 24, 3)
        for channel in range(3):
            np.testing.assert_array_equal(image[:, :, channel], original[1]["image"])

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_box_formats(self, root: Path, fmt: BoxFormat) -> None:
        reference = YoloFolder(root)[3]["bboxes"].astype(np.float64)
        boxes = YoloFolder(root, box_format=fmt)[3]["bboxes"].astype(np.float64)
        np.testing.assert_allclose(to_xyxy(boxes, fmt, (40, 56)), reference, atol=1e-4)

    def test_as_tuple_and_tensors(self, root: Path) -> None:
        sample = YoloFolder(root)[2]
        image, target = YoloFolder(root, as_tuple=True)[2]
        np.testing.assert_array_equal(image, sample["image"])
        np.testing.assert_array_equal(target["boxes"], sample["bboxes"])
        image, target = YoloFolder(root, as_tuple=True, tensors=True)[2]
        assert image.shape == (3, 40, 56)
        assert target["labels"].dtype == torch.int64

    def test_missing_label_file_means_no_objects(self, tmp_path: Path) -> None:
        ds = YoloFolder(self.make(tmp_path, {}))
        sample = ds[0]
        assert sample["bboxes"].shape == (0, 4)
        assert sample["bboxes"].dtype == np.float32
        assert sample["labels"].shape == (0,)
        assert sample["labels"].dtype == np.int64

    def test_nested_folders_sorted_and_case_insensitive(self, tmp_path: Path) -> None:
        root = self.make(
            tmp_path,
            {"b/x.txt": "1 0.5 0.5 0.5 0.5\n", "a.txt": "0 0.25 0.25 0.5 0.5\n"},
            images=("b/x.PNG", "a.png", "c.jpeg"),
        )
        (root / "images" / "notes.txt").write_text("not an image")
        ds = YoloFolder(root)
        assert [p.relative_to(root / "images").as_posix() for p in ds.image_paths] == [
            "a.png",
            "b/x.PNG",
            "c.jpeg",
        ]
        assert ds.label_paths[1] == root / "labels" / "b" / "x.txt"
        np.testing.assert_array_equal(ds[0]["bboxes"], [[0, 0, 10, 8]])
        np.testing.assert_array_equal(ds[1]["labels"], [1])
        np.testing.assert_array_equal(ds[1]["bboxes"], [[5, 4, 15, 12]])
        assert len(ds[2]["labels"]) == 0

    def test_blank_lines_and_integral_float_class(self, tmp_path: Path) -> None:
        ds = YoloFolder(self.make(tmp_path, {"a.txt": "\n3.0 0.5 0.5 1 1\n   \n2 0.5 0.5 0 0\n"}))
        np.testing.assert_array_equal(ds[0]["labels"], [3, 2])
        np.testing.assert_array_equal(ds[0]["bboxes"], [[0, 0, 20, 16], [10, 8, 10, 8]])

    def test_edges_within_tolerance_are_clipped(self, tmp_path: Path) -> None:
        ds = YoloFolder(self.make(tmp_path, {"a.txt": "0 0.5 0.5 1.0005 1.0\n"}))
        np.testing.assert_array_equal(ds[0]["bboxes"], [[0, 0, 20, 16]])

    def test_custom_tolerance(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"a.txt": "0 0.5 0.5 1.1 1.0\n"})
        np.testing.assert_array_equal(
            YoloFolder(root, tolerance=0.06)[0]["bboxes"], [[0, 0, 20, 16]]
        )
        with pytest.raises(ValueError, match="outside"):
            YoloFolder(root)

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("0 0.5 0.5 0.5", r"expected 5 fields 'class cx cy w h', got 4"),
            ("0 0.5 0.5 0.5 0.5 0.9", r"got 6: .*sixth column"),
            (
                "0 0.1 0.1 0.9 0.1 0.9 0.9",
                r"got 7: .*segment polygons .* does not support segments",
            ),
            ("0 0.1 0.1 0.9 0.1 0.9 0.9 0.1 0.9", r"got 9: .*segment"),
            ("x 0.5 0.5 0.5 0.5", r"class 'x' is not a number"),
            ("1.5 0.5 0.5 0.5 0.5", r"class must be an integer, got '1.5'"),
            ("-1 0.5 0.5 0.5 0.5", r"class must be an integer >= 0, got '-1'"),
            ("0 0.5 abc 0.5 0.5", r"cy = 'abc' is not a number"),
            ("0 0.5 0.5 nan 0.5", r"w = 'nan' is not finite"),
            ("0 0.5 0.5 inf 0.5", r"w = 'inf' is not finite"),
            ("0 0.5 0.5 -0.1 0.5", r"width and height must be >= 0"),
            ("0 0.9 0.5 0.4 0.2", r"edges .* outside \[0, 1\] by more than tolerance=0.001"),
            ("0 5 5 0.5 0.5", r"outside \[0, 1\].*normalised by the image size"),
        ],
    )
    def test_bad_lines_name_file_and_line(self, tmp_path: Path, line: str, message: str) -> None:
        root = self.make(tmp_path, {"a.txt": f"0 0.5 0.5 0.2 0.2\n\n{line}\n"})
        label_file = root / "labels" / "a.txt"
        with pytest.raises(ValueError, match=rf"^{re.escape(str(label_file))}:3: .*{message}"):
            YoloFolder(root)

    def test_undecodable_image(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {})
        (root / "images" / "broken.jpg").write_bytes(b"this is not a jpeg")
        ds = YoloFolder(root)
        with pytest.raises(ValueError, match=r"cannot decode image .*broken\.jpg"):
            ds[1]

    def test_empty_image_file(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {})
        (root / "images" / "empty.png").write_bytes(b"")
        with pytest.raises(
            ValueError, match=r"cannot decode image .*empty\.png: the file is empty"
        ):
            YoloFolder(root)[1]

    def test_no_images(self, tmp_path: Path) -> None:
        images = tmp_path / "images"
        (images / "sub").mkdir(parents=True)
        (tmp_path / "labels").mkdir()
        with pytest.raises(
            ValueError,
            match=rf"no images with extensions .*\.png found under {re.escape(str(images))}",
        ):
            YoloFolder(tmp_path)

    def test_missing_image_dir(self, tmp_path: Path) -> None:
        with pytest.raises(
            FileNotFoundError,
            match=rf"image_dir: folder {re.escape(str(tmp_path / 'images'))} does not exist",
        ):
            YoloFolder(tmp_path)

    def test_missing_label_dir(self, tmp_path: Path) -> None:
        (tmp_path / "images").mkdir()
        with pytest.raises(FileNotFoundError, match=r"label_dir: .*make an empty label folder"):
            YoloFolder(tmp_path)

    def test_custom_folders_and_extensions(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {}, images=("a.png", "b.bmp"))
        (root / "images").rename(root / "img")
        (root / "labels").rename(root / "lbl")
        ds = YoloFolder(root, image_dir="img", label_dir="lbl", extensions=[".BMP"])
        assert [p.name for p in ds.image_paths] == ["b.bmp"]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"extensions": ".jpg"}, TypeError, r"extensions must be a tuple of strings"),
            ({"extensions": ("jpg",)}, ValueError, r"extensions must look like '.jpg', got 'jpg'"),
            ({"extensions": ()}, ValueError, r"extensions must not be empty"),
            ({"tolerance": -0.1}, ValueError, r"tolerance must be in \[0, 0.5\), got -0.1"),
            ({"tolerance": "0"}, TypeError, r"tolerance must be a real number"),
            ({"box_format": "cxcywh"}, ValueError, r"box_format must be one of"),
            ({"tensors": True}, ValueError, r"tensors=True needs as_tuple=True"),
        ],
    )
    def test_bad_arguments(
        self, root: Path, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            YoloFolder(root, **kwargs)

    def test_indexing(self, root: Path) -> None:
        ds = YoloFolder(root)
        np.testing.assert_array_equal(ds[-1]["image"], ds[5]["image"])
        with pytest.raises(IndexError, match="index 6 is out of range for a dataset of length 6"):
            ds[6]
        with pytest.raises(TypeError, match="index must be an integer"):
            ds["0"]  # type: ignore[index]

    def test_stored_labels_are_not_shared_with_samples(self, root: Path) -> None:
        ds = YoloFolder(root)
        ds[0]["labels"][:] = 99
        assert not np.any(ds[0]["labels"] == 99)


class TestWriteYoloFolder:
    def test_layout_and_label_text(self, tmp_path: Path) -> None:
        samples = [
            {
                "image": np.zeros((10, 20, 3), dtype=np.uint8),
                "bboxes": np.array([[0.0, 0.0, 10.0, 5.0]]),
                "labels": np.array([4]),
            },
            {
                "image": np.zeros((10, 20), dtype=np.uint8),
                "bboxes": [],
                "labels": np.zeros(0, dtype=np.int64),
            },
        ]
        root = write_yolo_folder(samples, tmp_path / "out")
        assert root == tmp_path / "out"
        assert sorted(p.name for p in (root / "images").iterdir()) == ["000000.png", "000001.png"]
        assert (root / "labels" / "000000.txt").read_text() == "4 0.25 0.25 0.5 0.5\n"
        assert (root / "labels" / "000001.txt").read_text() == ""

    def test_masks_are_not_written(self, tmp_path: Path) -> None:
        root = write_yolo_folder(SyntheticDetection(1, image_size=16), tmp_path)
        assert sorted(p.name for p in root.iterdir()) == ["images", "labels"]

    def test_refuses_non_empty_target(self, tmp_path: Path) -> None:
        (tmp_path / "labels").mkdir()
        (tmp_path / "labels" / "old.txt").write_text("0 0.5 0.5 0.1 0.1\n")
        with pytest.raises(
            FileExistsError, match=r"labels is not empty; write_yolo_folder never overwrites"
        ):
            write_yolo_folder(SyntheticDetection(1, image_size=16), tmp_path)

    def test_format_must_match_dataset(self, tmp_path: Path) -> None:
        with pytest.raises(
            ValueError, match=r"box_format='pascal_voc' but the dataset's box_format is 'coco'"
        ):
            write_yolo_folder(SyntheticDetection(1, image_size=16, box_format="coco"), tmp_path)

    def test_tuple_samples_are_refused(self, tmp_path: Path) -> None:
        with pytest.raises(TypeError, match=r"dataset\[0\] must be a dict sample.*as_tuple=False"):
            write_yolo_folder(SyntheticDetection(1, image_size=16, as_tuple=True), tmp_path)

    def test_not_a_dataset(self, tmp_path: Path) -> None:
        with pytest.raises(TypeError, match="dataset must be a map-style dataset"):
            write_yolo_folder(42, tmp_path)

    def test_float_images_are_refused(self, tmp_path: Path) -> None:
        with pytest.raises(TypeError, match=r"dataset\[0\]\['image'\] must be a uint8 numpy array"):
            write_yolo_folder(SyntheticDetection(1, image_size=16, dtype="float32"), tmp_path)

    @pytest.mark.parametrize(
        ("sample", "error", "message"),
        [
            (
                {"image": np.zeros((4, 4, 3), np.uint8), "bboxes": []},
                ValueError,
                r"lacks the key\(s\) \['labels'\]",
            ),
            (
                {"image": np.zeros((4, 4, 4), np.uint8), "bboxes": [], "labels": []},
                ValueError,
                r"must be HxW, HxWx1 or HxWx3, got shape \(4, 4, 4\)",
            ),
            (
                {"image": np.zeros((4, 4), np.uint8), "bboxes": [[0, 0, 1, 1]], "labels": [0, 1]},
                ValueError,
                r"dataset\[0\]\['labels'\] must be 1 integers \(one per box\)",
            ),
            (
                {"image": np.zeros((4, 4), np.uint8), "bboxes": [[0, 0, 1, 1]], "labels": [0.0]},
                ValueError,
                r"\['labels'\] must be 1 integers",
            ),
            (
                {"image": np.zeros((4, 4), np.uint8), "bboxes": [[0, 0, 1, 1]], "labels": [-2]},
                ValueError,
                r"\['labels'\] must be >= 0, got \[-2\]",
            ),
            (
                {"image": np.zeros((4, 4), np.uint8), "bboxes": [[0, 0, 1, 1, 0]], "labels": [0]},
                ValueError,
                r"dataset\[0\]\['bboxes'\] must have shape \(N, 4\)",
            ),
            (
                {"image": np.zeros((4, 4), np.uint8), "bboxes": [[0, 0, 5, 1]], "labels": [0]},
                ValueError,
                r"dataset\[0\]\['bboxes'\]\[0\] = \[0.0, 0.0, 5.0, 1.0\] lies partly outside",
            ),
        ],
    )
    def test_bad_samples_name_the_index(
        self, tmp_path: Path, sample: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            write_yolo_folder([sample], tmp_path)

    def test_hxwx1_image(self, tmp_path: Path) -> None:
        sample = {"image": np.full((4, 6, 1), 7, np.uint8), "bboxes": [], "labels": []}
        root = write_yolo_folder([sample], tmp_path)
        np.testing.assert_array_equal(YoloFolder(root)[0]["image"], np.full((4, 6, 3), 7))


class TestCocoDetection:
    @pytest.fixture
    def synthetic(self) -> SyntheticDetection:
        return SyntheticDetection(5, image_size=(36, 48), seed=9, num_classes=4)

    @pytest.fixture
    def coco(self, tmp_path: Path, synthetic: SyntheticDetection) -> tuple[Path, dict[str, Any]]:
        return write_coco(synthetic, tmp_path)

    @staticmethod
    def rewrite(path: Path, data: dict[str, Any]) -> Path:
        path.write_text(json.dumps(data))
        return path

    def test_matches_the_source(
        self, tmp_path: Path, synthetic: SyntheticDetection, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        ds = CocoDetection(coco[0], tmp_path / "images")
        assert isinstance(ds, Dataset)
        assert len(ds) == 5
        assert ds.image_ids == tuple(1000 + 7 * i for i in range(5))
        for index in range(5):
            expected, sample = synthetic[index], ds[index]
            np.testing.assert_array_equal(sample["image"], expected["image"])
            assert sample["bboxes"].dtype == np.float32
            np.testing.assert_allclose(sample["bboxes"], expected["bboxes"], atol=1e-5)
            np.testing.assert_array_equal(sample["labels"], expected["labels"])
            assert sample["labels"].dtype == np.int64

    def test_category_mapping(self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]) -> None:
        ds = CocoDetection(coco[0], tmp_path / "images")
        assert ds.category_ids == (10, 20, 30, 40)
        assert ds.category_names == ("shape0", "shape1", "shape2", "shape3")
        assert ds.category_to_label == {10: 0, 20: 1, 30: 2, 40: 3}

    def test_crowd_annotations_are_skipped_and_counted(
        self, tmp_path: Path, synthetic: SyntheticDetection, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        ds = CocoDetection(coco[0], tmp_path / "images")
        assert ds.num_crowd_skipped == 5
        assert len(ds[0]["labels"]) == len(synthetic[0]["labels"])

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_box_formats(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], fmt: BoxFormat
    ) -> None:
        reference = CocoDetection(coco[0], tmp_path / "images")[1]["bboxes"].astype(np.float64)
        boxes = CocoDetection(coco[0], tmp_path / "images", box_format=fmt)[1]["bboxes"]
        np.testing.assert_allclose(
            to_xyxy(boxes.astype(np.float64), fmt, (36, 48)), reference, atol=1e-4
        )

    def test_as_tuple_and_tensors(self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]) -> None:
        sample = CocoDetection(coco[0], tmp_path / "images")[4]
        image, target = CocoDetection(coco[0], tmp_path / "images", as_tuple=True, tensors=True)[4]
        assert image.shape == (3, 36, 48)
        np.testing.assert_array_equal(target["boxes"].numpy(), sample["bboxes"])
        np.testing.assert_array_equal(target["labels"].numpy(), sample["labels"])

    def test_without_annotations(self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]) -> None:
        data = dict(coco[1])
        del data["annotations"]
        ds = CocoDetection(self.rewrite(coco[0], data), tmp_path / "images")
        assert ds[2]["bboxes"].shape == (0, 4)
        assert ds[2]["labels"].shape == (0,)

    def test_boxes_within_tolerance_are_clipped(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        data = coco[1]
        data["annotations"] = [
            {"id": 1, "image_id": 1000, "category_id": 20, "bbox": [-0.5, 30.0, 48.8, 6.9]}
        ]
        ds = CocoDetection(self.rewrite(coco[0], data), tmp_path / "images")
        np.testing.assert_allclose(ds[0]["bboxes"], [[0.0, 30.0, 48.0, 36.0]])
        np.testing.assert_array_equal(ds[0]["labels"], [1])

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            (
                {"bbox": [0, 0, 5]},
                r"annotation id 1: 'bbox' must be a list \[x, y, w, h\] of 4 numbers",
            ),
            ({"bbox": [0, 0, "5", 5]}, r"annotation id 1: 'bbox' must be a list"),
            ({"bbox": [0, 0, True, 5]}, r"annotation id 1: 'bbox' must be a list"),
            ({"bbox": [0, 0, -1, 5]}, r"annotation id 1: 'bbox' width and height must be >= 0"),
            ({"bbox": [0, 0, float("nan"), 5]}, r"annotation id 1: 'bbox' must be finite"),
            ({"bbox": [40, 0, 10, 5]}, r"annotation id 1: 'bbox' .* sticks out of its 36x48"),
            ({"bbox": [-2, 0, 10, 5]}, r"annotation id 1: 'bbox' .* tolerance=1.0 pixels"),
            ({"image_id": 5}, r"annotation id 1: image_id 5 is not in 'images'"),
            ({"image_id": "1000"}, r"annotation id 1: 'image_id' must be of type int"),
            ({"category_id": 15}, r"annotation id 1: category_id 15 is not in 'categories'"),
            ({"iscrowd": 2}, r"annotation id 1: 'iscrowd' must be 0 or 1, got 2"),
        ],
    )
    def test_bad_annotations_name_file_and_id(
        self,
        tmp_path: Path,
        coco: tuple[Path, dict[str, Any]],
        change: dict[str, Any],
        message: str,
    ) -> None:
        data = coco[1]
        annotation = {"id": 1, "image_id": 1000, "category_id": 10, "bbox": [1, 1, 5, 5]}
        annotation.update(change)
        data["annotations"].append(annotation)
        path = self.rewrite(coco[0], data)
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: {message}"):
            CocoDetection(path, tmp_path / "images")

    @pytest.mark.parametrize(
        ("mutate", "message"),
        [
            (
                lambda d: d["annotations"].append(dict(d["annotations"][0])),
                r"annotation id 503 appears more than once",
            ),
            (
                lambda d: d["annotations"].append({"image_id": 1000}),
                r"annotations\[\d+\] has no 'id'",
            ),
            (
                lambda d: d["annotations"].append([1, 2]),
                r"annotations\[\d+\] must be a JSON object",
            ),
            (
                lambda d: d["images"].append(dict(d["images"][0])),
                r"image id 1028 appears more than once",
            ),
            (lambda d: d["images"][0].pop("width"), r"image id 1028 has no 'width'"),
            (
                lambda d: d["images"][0].update(height=0),
                r"image id 1028: height and width must be > 0",
            ),
            (
                lambda d: d["images"][0].update(file_name=3),
                r"image id 1028: 'file_name' must be of type str",
            ),
            (
                lambda d: d["categories"].append({"id": 10}),
                r"category id 10 appears more than once",
            ),
            (
                lambda d: d["categories"][0].update(name=None),
                r"category id 40: 'name' must be of type str",
            ),
            (lambda d: d.pop("images"), r"'images' must be a list, got NoneType"),
            (lambda d: d.update(categories={}), r"'categories' must be a list, got dict"),
        ],
    )
    def test_bad_structure(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], mutate: Any, message: str
    ) -> None:
        data = coco[1]
        mutate(data)
        path = self.rewrite(coco[0], data)
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: {message}"):
            CocoDetection(path, tmp_path / "images")

    def test_invalid_json(self, tmp_path: Path) -> None:
        path = tmp_path / "bad.json"
        path.write_text("{not json")
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: not valid JSON"):
            CocoDetection(path, tmp_path)

    def test_top_level_must_be_an_object(self, tmp_path: Path) -> None:
        path = self.rewrite(tmp_path / "list.json", [])  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"expected a JSON object at the top, got list"):
            CocoDetection(path, tmp_path)

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(FileNotFoundError):
            CocoDetection(tmp_path / "nope.json", tmp_path)

    def test_image_size_mismatch(self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]) -> None:
        data = coco[1]
        data["images"][-1]["width"] = 50  # the entry of image id 1000
        ds = CocoDetection(self.rewrite(coco[0], data), tmp_path / "images")
        with pytest.raises(
            ValueError, match=r"0\.png: the image is 36x48 .* gives 36x50 for image id 1000"
        ):
            ds[0]

    def test_missing_image(self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]) -> None:
        (tmp_path / "images" / "sub" / "1.png").unlink()
        ds = CocoDetection(coco[0], tmp_path / "images")
        with pytest.raises(FileNotFoundError):
            ds[1]

    def test_indexing(self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]) -> None:
        ds = CocoDetection(coco[0], tmp_path / "images")
        np.testing.assert_array_equal(ds[-5]["image"], ds[0]["image"])
        with pytest.raises(IndexError, match="index -6 is out of range"):
            ds[-6]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"tolerance": -1.0}, ValueError, r"tolerance must be a finite number >= 0"),
            ({"tolerance": float("inf")}, ValueError, r"tolerance must be a finite number >= 0"),
            ({"tolerance": None}, TypeError, r"tolerance must be a real number"),
            (
                {"as_tuple": True, "box_format": "coco"},
                ValueError,
                r"box_format must be 'pascal_voc'",
            ),
        ],
    )
    def test_bad_arguments(
        self,
        tmp_path: Path,
        coco: tuple[Path, dict[str, Any]],
        kwargs: dict[str, Any],
        error: type[Exception],
        message: str,
    ) -> None:
        with pytest.raises(error, match=message):
            CocoDetection(coco[0], tmp_path / "images", **kwargs)
