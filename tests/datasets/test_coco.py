"""Tests for rankaug.datasets.coco."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from torch.utils.data import Dataset

from rankaug import CachedDataset, RankaugWarning
from rankaug.boxes import BOX_FORMATS, BoxFormat, to_xyxy
from rankaug.datasets import CocoDetection, SyntheticDetection
from rankaug.datasets._image_io import fit_size
from tests.datasets.helpers import assert_rectangles_land, paint, write_coco


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

    @pytest.mark.parametrize(
        "name", ["annotation_file", "tolerance", "image_ids", "category_ids", "category_names",
                 "category_to_label", "num_crowd_skipped", "box_format"],
    )  # fmt: skip
    def test_what_the_file_was_read_with_cannot_be_assigned(
        self, coco: tuple[Path, dict[str, Any]], name: str
    ) -> None:
        # before: ds.tolerance or ds.annotation_file assigned were not used (the file was
        # read when the dataset was made), and ds.image_ids changed len() alone
        ds = CocoDetection(coco[0], coco[0].parent / "images")
        before = getattr(ds, name)
        with pytest.raises(AttributeError, match=rf"^CocoDetection\.{name} cannot be assigned"):
            setattr(ds, name, before)
        assert (len(ds), getattr(ds, name)) == (5, before)

    def test_one_file_however_spelled_is_one_dataset(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        relative = CocoDetection(coco[0].relative_to(tmp_path), "images")
        absolute = CocoDetection(coco[0], tmp_path / "images")
        assert repr(relative) == repr(absolute)
        assert relative.image_root == (tmp_path / "images").resolve()
        monkeypatch.chdir(tmp_path / "images")  # read after the working folder moved
        np.testing.assert_array_equal(relative[0]["image"], absolute[0]["image"])

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

    @pytest.mark.parametrize(("flag", "crowd"), [(True, 1), (1.0, 1), (False, 0), (0.0, 0)])
    def test_iscrowd_as_a_boolean_or_a_float(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], flag: object, crowd: int
    ) -> None:
        before = CocoDetection(coco[0], tmp_path / "images")[0]["labels"].tolist()
        data = coco[1]
        data["annotations"].append(
            {"id": 1, "image_id": 1000, "category_id": 30, "bbox": [1, 2, 5, 6], "iscrowd": flag}
        )
        ds = CocoDetection(self.rewrite(coco[0], data), tmp_path / "images")
        assert ds.num_crowd_skipped == 5 + crowd
        assert ds[0]["labels"].tolist() == before + [2] * (1 - crowd)

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
            ({"iscrowd": 0.5}, r"annotation id 1: 'iscrowd' must be 0 or 1, got 0.5"),
            ({"iscrowd": "1"}, r"annotation id 1: 'iscrowd' must be 0 or 1, got '1'"),
            ({"iscrowd": None}, r"annotation id 1: 'iscrowd' must be 0 or 1, got None"),
            # crowd annotations are checked as the others, then skipped
            ({"iscrowd": 1, "image_id": 5}, r"annotation id 1: image_id 5 is not in 'images'"),
            ({"iscrowd": True, "category_id": 15}, r"annotation id 1: category_id 15 is not in"),
            ({"iscrowd": 1, "image_id": "1000"}, r"annotation id 1: 'image_id' must be of type"),
            ({"iscrowd": 1.0, "bbox": [40, 0, 10, 5]}, r"annotation id 1: 'bbox' .* sticks out"),
            ({"iscrowd": 1, "bbox": None}, r"annotation id 1: 'bbox' must be a list \[x, y"),
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
            (lambda d: d.pop("images"), r"the required key 'images' is missing"),
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

    def test_a_utf8_byte_order_mark_is_skipped(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        coco[0].write_bytes(b"\xef\xbb\xbf" + json.dumps(coco[1]).encode())
        assert len(CocoDetection(coco[0], tmp_path / "images")) == 5

    def test_a_file_that_is_not_utf8_is_named(self, tmp_path: Path) -> None:
        path = tmp_path / "latin1.json"
        path.write_bytes('{"images": [], "info": "café"}'.encode("latin-1"))
        with pytest.raises(
            ValueError, match=rf"^{re.escape(str(path))}: not UTF-8 text \(byte 0xe9 at offset 27"
        ):
            CocoDetection(path, tmp_path)

    def test_two_image_ids_of_one_file_warn(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        data = coco[1]
        data["images"].append({**data["images"][0], "id": 5, "file_name": "./4.png"})
        path = self.rewrite(coco[0], data)
        with pytest.warns(RankaugWarning, match=r"image ids 1028 and 5 have the same file '\./4"):
            ds = CocoDetection(path, tmp_path / "images")
        assert (len(ds), ds[0]["labels"].size) == (6, 0)

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

    def test_a_missing_image_root_is_refused_when_made(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        # not at the first sample, in a DataLoader worker
        with pytest.raises(
            FileNotFoundError, match=r"image_root must be an existing folder, got '.*imgs'"
        ):
            CocoDetection(coco[0], tmp_path / "imgs")

    def test_an_image_root_assigned_is_resolved_checked_and_used(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # before: ds.image_root = "moved" was kept unresolved and unchecked: a missing folder
        # failed at the first sample, in a worker, and a relative one depended on the cwd
        ds = CocoDetection(coco[0], tmp_path / "images")
        first = ds[0]["image"]
        (tmp_path / "images").rename(tmp_path / "moved")
        monkeypatch.chdir(tmp_path)
        ds.image_root = "moved"
        assert ds.image_root == (tmp_path / "moved").resolve()
        monkeypatch.chdir(tmp_path.parent)
        assert (ds[0]["image"] == first).all()
        with pytest.raises(
            FileNotFoundError, match=r"^image_root must be an existing folder, got 'images'"
        ):
            ds.image_root = "images"
        with pytest.raises(TypeError, match=r"^image_root must be a path \(str or os.PathLike\)"):
            ds.image_root = None  # type: ignore[assignment]
        assert ds.image_root == (tmp_path / "moved").resolve()
        assert str(ds.image_root) in repr(ds)

    @pytest.mark.parametrize("name", ["annotation_file", "image_root"])
    def test_a_path_of_the_wrong_type_is_named(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], name: str
    ) -> None:
        paths: dict[str, Any] = {"annotation_file": coco[0], "image_root": tmp_path / "images"}
        paths[name] = None
        with pytest.raises(
            TypeError, match=rf"^{name} must be a path \(str or os.PathLike\), got None"
        ):
            CocoDetection(**paths)

    @pytest.mark.parametrize("tolerance", [np.float32(2.5), np.int64(2)])
    def test_a_numpy_tolerance_is_taken(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], tolerance: Any
    ) -> None:
        ds = CocoDetection(coco[0], tmp_path / "images", tolerance=tolerance)
        assert ds.tolerance == float(tolerance)
        assert type(ds.tolerance) is float

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
            (
                {"tolerance": None},
                TypeError,
                r"tolerance must be a finite number >= 0\.0, got None",
            ),
            ({"tolerance": float("nan")}, ValueError, r"tolerance must be .*, got nan"),
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

    # ------------------------------------------------------------ resize on load
    @staticmethod
    def painted_coco(
        root: Path, height: int, width: int, rects: list[tuple[int, int, int, int]], name: str
    ) -> Path:
        """One image with constant-colour rectangles, annotated with their boxes."""
        image = paint(height, width, rects)
        bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
        assert cv2.imwrite(str(root / name), bgr, [cv2.IMWRITE_JPEG_QUALITY, 95])
        annotations = [
            {"id": k + 1, "image_id": 5, "category_id": k, "bbox": [x0, y0, x1 - x0, y1 - y0]}
            for k, (x0, y0, x1, y1) in enumerate(rects)
        ]
        data = {
            "images": [{"id": 5, "file_name": name, "height": height, "width": width}],
            "categories": [{"id": k} for k in range(len(rects))],
            "annotations": annotations,
        }
        path = root / "coco.json"
        path.write_text(json.dumps(data))
        return path

    @pytest.mark.parametrize("image_size", [30, 45, 61, 89, 90, 91, 200])
    def test_resize_on_load_moves_pixels_with_the_boxes(
        self, tmp_path: Path, image_size: int
    ) -> None:
        rects = [(6, 9, 40, 30), (50, 20, 83, 55)]
        path = self.painted_coco(tmp_path, 60, 90, rects, "a.png")
        sample = CocoDetection(path, tmp_path, image_size=image_size)[0]
        new_h, new_w = fit_size(60, 90, image_size)
        assert sample["image"].shape == (new_h, new_w, 3)
        scale = (new_h / 60, new_w / 90)
        expected = np.array(rects, np.float64) * [scale[1], scale[0], scale[1], scale[0]]
        np.testing.assert_allclose(sample["bboxes"], expected, rtol=1e-6, atol=1e-5)
        assert_rectangles_land(sample["image"], expected, scale)  # PNG: exact

    @pytest.mark.parametrize("reduced_decode", [True, False])
    def test_resize_on_load_of_a_jpeg(self, tmp_path: Path, reduced_decode: bool) -> None:
        rects = [(96, 64, 400, 320), (512, 336, 960, 720)]  # on 16-pixel JPEG blocks
        path = self.painted_coco(tmp_path, 768, 1024, rects, "a.jpg")
        ds = CocoDetection(path, tmp_path, image_size=200, reduced_decode=reduced_decode)
        sample = ds[0]
        assert sample["image"].shape == (150, 200, 3)
        scale = (150 / 768, 200 / 1024)
        expected = np.array(rects, np.float64) * [scale[1], scale[0], scale[1], scale[0]]
        np.testing.assert_allclose(sample["bboxes"], expected, rtol=1e-6, atol=1e-4)
        assert_rectangles_land(sample["image"], expected, scale, tolerance=6, slack=1.0)

    def test_linear_interpolation_reads_as_ultralytics_load_image(self, tmp_path: Path) -> None:
        path = self.painted_coco(tmp_path, 768, 1024, [(96, 64, 400, 320)], "a.jpg")
        ds = CocoDetection(
            path, tmp_path, image_size=256, reduced_decode=False, interpolation="linear"
        )
        bgr = cv2.imread(str(tmp_path / "a.jpg"))
        expected = cv2.resize(bgr, (256, 192), interpolation=cv2.INTER_LINEAR)
        np.testing.assert_array_equal(ds[0]["image"], cv2.cvtColor(expected, cv2.COLOR_BGR2RGB))

    @pytest.mark.parametrize("fmt", BOX_FORMATS)
    def test_image_size_scales_boxes_in_every_format(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]], fmt: BoxFormat
    ) -> None:
        full = CocoDetection(coco[0], tmp_path / "images")  # 36x48 images
        ds = CocoDetection(coco[0], tmp_path / "images", box_format=fmt, image_size=20)
        scale = np.array([20 / 48, 15 / 36, 20 / 48, 15 / 36])
        for index in range(len(ds)):
            sample = ds[index]
            assert sample["image"].shape == (15, 20, 3)
            boxes = to_xyxy(sample["bboxes"].astype(np.float64), fmt, (15, 20))
            np.testing.assert_allclose(boxes, full[index]["bboxes"] * scale, atol=1e-4)
            np.testing.assert_array_equal(sample["labels"], full[index]["labels"])
            assert sample["labels"].dtype == np.int64

    def test_image_size_of_the_long_side_changes_nothing(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        plain = CocoDetection(coco[0], tmp_path / "images")
        same = CocoDetection(coco[0], tmp_path / "images", image_size=48)
        for index in range(len(plain)):
            for key in ("image", "bboxes", "labels"):
                np.testing.assert_array_equal(same[index][key], plain[index][key])

    def test_image_size_still_checks_the_full_size(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        data = coco[1]
        data["images"][-1]["width"] = 50  # the entry of image id 1000
        ds = CocoDetection(self.rewrite(coco[0], data), tmp_path / "images", image_size=24)
        with pytest.raises(
            ValueError, match=r"0\.png: the image is 36x48 .* gives 36x50 for image id 1000"
        ):
            ds[0]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"image_size": 0}, ValueError, r"image_size must be an integer >= 1, got 0"),
            ({"image_size": 64.0}, TypeError, r"image_size must be an integer >= 1, got 64.0"),
            ({"image_size": False}, TypeError, r"image_size must be an integer >= 1, got False"),
            ({"reduced_decode": None}, TypeError, r"reduced_decode must be True or False"),
            ({"interpolation": "cubic"}, ValueError, r"interpolation must be one of 'auto'"),
        ],
    )
    def test_bad_resize_arguments(
        self,
        tmp_path: Path,
        coco: tuple[Path, dict[str, Any]],
        kwargs: dict[str, Any],
        error: type[Exception],
        message: str,
    ) -> None:
        with pytest.raises(error, match=message):
            CocoDetection(coco[0], tmp_path / "images", **kwargs)

    def test_source_files(self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]) -> None:
        ds = CocoDetection(coco[0], tmp_path / "images")
        files = ds.source_files()
        assert files[0] == coco[0]
        assert files[1:] == tuple(
            tmp_path / "images" / name for name in ("0.png", "sub/1.png", "2.png", "sub/3.png",
                                                    "4.png")
        )  # fmt: skip
        assert all(path.is_file() for path in files)

    def test_annotation_edits_after_parsing_never_reach_the_cache(self, tmp_path: Path) -> None:
        cv2.imwrite(str(tmp_path / "a.png"), np.zeros((20, 20, 3), np.uint8))
        data: dict[str, Any] = {
            "images": [{"id": 1, "file_name": "a.png", "height": 20, "width": 20}],
            "categories": [{"id": 1}],
            "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5]}],
        }
        path = self.rewrite(tmp_path / "ann.json", data)
        parsed = CocoDetection(path, tmp_path)
        data["annotations"][0]["bbox"] = [9, 9, 5, 5]  # fixed after parsing
        self.rewrite(path, data)
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # surely newer
        first = CachedDataset(parsed, tmp_path / "c")[0]["bboxes"]
        np.testing.assert_array_equal(first, [[0, 0, 5, 5]])
        fresh = CocoDetection(path, tmp_path)  # a later run: the fixed file, its own cache
        np.testing.assert_array_equal(
            CachedDataset(fresh, tmp_path / "c")[0]["bboxes"], [[9, 9, 14, 14]]
        )

    def test_repr_names_every_setting(
        self, tmp_path: Path, coco: tuple[Path, dict[str, Any]]
    ) -> None:
        text = repr(CocoDetection(coco[0], tmp_path / "images", image_size=32))
        assert text == (
            f"CocoDetection({str(coco[0])!r}, {str(tmp_path / 'images')!r}, "
            "box_format='pascal_voc', tolerance=1.0, as_tuple=False, tensors=False, "
            "image_size=32, reduced_decode=True, interpolation='auto')"
        )
