"""Tests for rankaug.datasets.yolo_writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankaug.datasets import SyntheticDetection, YoloFolder, write_yolo_folder


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
