"""Tests for rankaug.datasets.coco."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from torch.utils.data import Dataset

from rankaug.boxes import BOX_FORMATS, BoxFormat, to_xyxy
from rankaug.datasets import CocoDetection, SyntheticDetection
from tests.datasets.helpers import write_coco


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
