"""Tests for rankaug.datasets.yolo_writer."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rankaug.boxes import to_xyxy
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

    def test_a_root_of_the_wrong_type_is_named(self) -> None:
        with pytest.raises(
            TypeError, match=r"^root must be a path \(str or os.PathLike\), got None"
        ):
            write_yolo_folder(SyntheticDetection(1, image_size=16), None)  # type: ignore[arg-type]

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
                r"must be a non-empty HxW, HxWx1 or HxWx3 array, got shape \(4, 4, 4\)",
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
            (
                {"image": np.zeros((0, 4, 3), np.uint8), "bboxes": [], "labels": []},
                ValueError,
                r"dataset\[0\]\['image'\] must be a non-empty .*got shape \(0, 4, 3\)",
            ),
            (
                {"image": np.zeros((4, 4), np.uint8), "bboxes": [[0, 0, 1, 1]],
                 "labels": np.array([2**63], np.uint64)},
                ValueError,
                r"dataset\[0\]\['labels'\] must be below 2\*\*63 \(YoloFolder reads int64",
            ),
        ],
    )  # fmt: skip
    def test_bad_samples_name_the_index(
        self, tmp_path: Path, sample: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            write_yolo_folder([sample], tmp_path)

    @pytest.mark.parametrize("box_format", ["yolo", "coco"])
    def test_float32_boxes_touching_the_edge_are_written(
        self, tmp_path: Path, box_format: Any
    ) -> None:
        # 298.31... to the right edge of a 333-wide image: in float32 yolo (and coco) its
        # right edge converts back to 333.00001, a rounding error, not a box outside
        box = [298.3136456253863, 0.0, 333.0, 10.0]
        sample = {"image": np.zeros((100, 333, 3), np.uint8), "bboxes": [box], "labels": [1]}
        ds = YoloFolder(write_yolo_folder([sample], tmp_path / "a"), box_format=box_format)
        assert to_xyxy(ds[0]["bboxes"], box_format, (100, 333))[0, 2] > 333 + 1e-6
        again = YoloFolder(write_yolo_folder(ds, tmp_path / "b", box_format=box_format))
        assert again[0]["bboxes"][0, 2] == 333.0  # clipped to the edge
        np.testing.assert_allclose(again[0]["bboxes"], [box], atol=1e-4)

    def test_the_synthetic_dataset_writes_in_every_format(self, tmp_path: Path) -> None:
        for box_format in ("yolo", "coco", "albumentations", "pascal_voc"):
            ds = SyntheticDetection(8, image_size=(333, 517), seed=3, box_format=box_format)
            root = write_yolo_folder(ds, tmp_path / box_format, box_format=box_format)
            assert len(YoloFolder(root)) == 8

    def test_hxwx1_image(self, tmp_path: Path) -> None:
        sample = {"image": np.full((4, 6, 1), 7, np.uint8), "bboxes": [], "labels": []}
        root = write_yolo_folder([sample], tmp_path)
        np.testing.assert_array_equal(YoloFolder(root)[0]["image"], np.full((4, 6, 3), 7))

    # ------------------------------------------------------------ instance polygons
    @staticmethod
    def triangle_sample(**changes: Any) -> dict[str, Any]:
        """A 10x20 image with one triangle and its bounds."""
        sample = {
            "image": np.zeros((10, 20, 3), np.uint8),
            "bboxes": np.array([[2.0, 1.0, 18.0, 9.0]]),
            "labels": np.array([3]),
            "segments": [np.array([[2.0, 1.0], [18.0, 1.0], [10.0, 9.0]], np.float32)],
        }
        sample.update(changes)
        return sample

    def test_polygon_label_text(self, tmp_path: Path) -> None:
        empty = self.triangle_sample(bboxes=[], labels=[], segments=[])
        root = write_yolo_folder([self.triangle_sample(), empty], tmp_path)
        assert (root / "labels" / "000000.txt").read_text() == "3 0.1 0.1 0.9 0.1 0.5 0.9\n"
        assert (root / "labels" / "000001.txt").read_text() == ""

    def test_a_segments_folder_reads_back_and_writes_again(self, tmp_path: Path) -> None:
        first = YoloFolder(
            write_yolo_folder([self.triangle_sample()], tmp_path / "a"), segments=True
        )
        ds = YoloFolder(first.root, segments=True, box_format="yolo")
        again = YoloFolder(write_yolo_folder(ds, tmp_path / "b", box_format="yolo"), segments=True)
        assert (again.label_paths[0]).read_text() == (first.label_paths[0]).read_text()
        np.testing.assert_array_equal(again[0]["segments"][0], first[0]["segments"][0])

    @pytest.mark.parametrize("segments_first", [True, False])
    def test_samples_with_and_without_segments_are_refused(
        self, tmp_path: Path, segments_first: bool
    ) -> None:
        with_seg = self.triangle_sample()
        without = {key: value for key, value in with_seg.items() if key != "segments"}
        samples = [with_seg, without] if segments_first else [without, with_seg]
        has, lacks = ("lacks", "has") if segments_first else ("has", "lacks")
        with pytest.raises(
            ValueError,
            match=rf"dataset\[1\] {has} 'segments' but dataset\[0\] {lacks} them: a YOLO-seg",
        ):
            write_yolo_folder(samples, tmp_path)

    @pytest.mark.parametrize(
        ("changes", "error", "message"),
        [
            (
                {"segments": np.zeros((1, 3, 2))},
                TypeError,
                r" must be a list of 1 \(K, 2\) pixel polygons "
                r"\(one per box\), got ndarray",
            ),
            ({"segments": []}, ValueError, r" must hold one polygon per box \(1\), got 0"),
            (
                {"segments": [np.zeros((3, 3))]},
                ValueError,
                r"\[0\] must be a \(K, 2\) array .*shape \(3, 3\)",
            ),
            (
                {"segments": [np.array([["a", "b"]] * 3)]},
                ValueError,
                r"\[0\] must be a \(K, 2\) array .*dtype <U1",
            ),
            (
                {"segments": [np.array([[2.0, 1.0], [18.0, 9.0]])]},
                ValueError,
                r"\[0\] must have at least 3 points, got 2",
            ),
            (
                {"segments": [np.array([[2.0, 1.0], [18.0, np.nan], [10.0, 9.0]])]},
                ValueError,
                r"\[0\] contains NaN or infinity",
            ),
            (
                {"segments": [np.array([[2.0, 1.0], [18.0, 1.0], [10.0, 10.5]])]},
                ValueError,
                r"\[0\] has points outside the 10x20 \(height x width\) image: "
                r"x in \[2.0, 18.0\], y in \[1.0, 10.5\]",
            ),
            (
                {"bboxes": np.array([[2.0, 1.0, 17.0, 9.0]])},
                ValueError,
                r"\[0\] has bounds \[2.0, 1.0, 18.0, 9.0\] but its box is "
                r"\[2.0, 1.0, 17.0, 9.0\] .*the two must agree",
            ),
        ],
    )
    def test_bad_segments_name_the_index(
        self, tmp_path: Path, changes: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=r"^dataset\[1\]\['segments'\]" + message):
            write_yolo_folder([self.triangle_sample(), self.triangle_sample(**changes)], tmp_path)

    def test_points_a_rounding_error_outside_are_clipped(self, tmp_path: Path) -> None:
        points = np.array([[-1e-7, 0.0], [20.0 + 1e-7, 0.0], [10.0, 10.0]])
        sample = self.triangle_sample(bboxes=[[0.0, 0.0, 20.0, 10.0]], segments=[points])
        root = write_yolo_folder([sample], tmp_path)
        assert (root / "labels" / "000000.txt").read_text() == "3 0.0 0.0 1.0 0.0 0.5 1.0\n"

    @given(
        height=st.integers(1, 700),
        width=st.integers(1, 700),
        polygons=st.lists(
            st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), min_size=3, max_size=12),
            max_size=5,
        ),
    )
    def test_random_polygons_read_back(
        self, height: int, width: int, polygons: list[list[tuple[float, float]]]
    ) -> None:
        segments = [
            (np.array(points, np.float64) * [width, height]).astype(np.float32)
            for points in polygons
        ]
        segments = [np.minimum(points, np.float32([width, height])) for points in segments]
        bounds = [np.concatenate([p.min(axis=0), p.max(axis=0)]) for p in segments]
        # the writer refuses boxes outside the image or touching it from outside
        assume(all(b[2] > 0 and b[3] > 0 and b[0] < width and b[1] < height for b in bounds))
        sample = {
            "image": np.zeros((height, width, 3), np.uint8),
            "bboxes": np.array(bounds, np.float64).reshape(-1, 4),
            "labels": np.arange(len(segments)),
            "segments": segments,
        }
        with tempfile.TemporaryDirectory() as tmp:
            read = YoloFolder(write_yolo_folder([sample], tmp), segments=True)[0]
        assert len(read["segments"]) == len(segments)
        for points, expected in zip(read["segments"], segments, strict=True):
            assert points.dtype == np.float32
            np.testing.assert_allclose(points, expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(read["bboxes"], sample["bboxes"], rtol=1e-5, atol=1e-5)  # type: ignore[call-overload]
        np.testing.assert_array_equal(read["labels"], sample["labels"])
