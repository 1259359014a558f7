"""Tests for rankaug.datasets.yolo."""

from __future__ import annotations

import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.data import Dataset

from rankaug import CachedDataset, RankaugWarning
from rankaug.boxes import BOX_FORMATS, BoxFormat, to_xyxy
from rankaug.datasets import SyntheticDetection, YoloFolder, write_yolo_folder
from rankaug.datasets._image_io import fit_size
from tests.datasets.helpers import assert_rectangles_land, paint


class TestYoloFolder:
    @pytest.fixture
    def root(self, tmp_path: Path) -> Path:
        return write_yolo_folder(
            SyntheticDetection(6, image_size=(40, 56), seed=2), tmp_path / "ds"
        )

    @pytest.mark.parametrize(
        ("name", "value"),
        [("segments", True), ("tolerance", 0.0), ("root", "elsewhere"), ("image_dir", "x"),
         ("label_dir", "x"), ("extensions", (".png",)), ("image_paths", ()), ("label_paths", ()),
         ("box_format", "yolo")],
    )  # fmt: skip
    def test_what_the_labels_were_read_with_cannot_be_assigned(
        self, root: Path, name: str, value: Any
    ) -> None:
        # before: ds.segments = True gave no segments, ds.root = other read the old files
        # (while the repr, the cache's key, named the new root), without a word
        ds = YoloFolder(root)
        with pytest.raises(AttributeError, match=rf"^YoloFolder\.{name} cannot be assigned"):
            setattr(ds, name, value)
        assert sorted(ds[0]) == ["bboxes", "image", "labels"]

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

    def test_one_folder_however_spelled_is_one_dataset_and_one_cache(
        self, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "link").symlink_to(root)
        monkeypatch.chdir(tmp_path)
        spellings = [YoloFolder(name) for name in ("ds", root, "link", "ds/../ds")]
        assert {repr(ds) for ds in spellings} == {repr(YoloFolder(root))}
        assert {ds.root for ds in spellings} == {root.resolve()}
        first = CachedDataset(spellings[0], tmp_path / "cache")
        assert CachedDataset(spellings[2], tmp_path / "cache").path == first.path  # one key
        monkeypatch.chdir(root)  # read after the working folder moved: its files still
        np.testing.assert_array_equal(spellings[0][1]["image"], YoloFolder(root)[1]["image"])

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

    def test_linked_folders_are_read(self, tmp_path: Path) -> None:
        root = self.make(tmp_path / "ds", {"a.txt": "0 0.5 0.5 0.5 0.5\n"})
        other = self.make(
            tmp_path / "other", {"b.txt": "1 0.5 0.5 0.5 0.5\n", "x.txt": ""}, images=("b.png",)
        )
        os.symlink(other / "images", root / "images" / "extra")
        os.symlink(other / "labels", root / "labels" / "extra")
        with pytest.warns(RankaugWarning, match=r"1 label file\(s\) .*extra/x\.txt"):
            ds = YoloFolder(root)  # the linked label folder is checked too
        assert [path.relative_to(root).as_posix() for path in ds.image_paths] == [
            "images/a.png",
            "images/extra/b.png",
        ]
        np.testing.assert_array_equal(ds[1]["labels"], [1])

    def test_hidden_files_and_folders_are_not_samples(self, tmp_path: Path) -> None:
        root = self.make(
            tmp_path, {"a.txt": "0 0.5 0.5 0.5 0.5\n", "._a.txt": "\x00"},
            images=("a.png", ".cache/a.png"),
        )  # fmt: skip
        (root / "images" / "._a.png").write_bytes(b"\x00\x05\x16\x07" + bytes(80))  # AppleDouble
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nor is the hidden label file an orphan
            ds = YoloFolder(root)
        assert [path.relative_to(root).as_posix() for path in ds.image_paths] == ["images/a.png"]
        np.testing.assert_array_equal(ds[0]["bboxes"], [[5, 4, 15, 12]])

    def test_a_dangling_image_link_is_refused(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {})
        os.symlink(root / "images" / "gone.png", root / "images" / "b.png")
        with pytest.raises(ValueError, match=r"b\.png has an extension of the image files read"):
            YoloFolder(root)

    def test_webp_and_tiff_images_are_read_by_default(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"c.txt": "0 0.5 0.5 0.5 0.5\n"}, images=("a.png",))
        image = np.full((16, 20, 3), (10, 60, 200), dtype=np.uint8)  # BGR
        for name in ("b.webp", "c.tif", "d.TIFF"):
            params = [cv2.IMWRITE_WEBP_QUALITY, 101] if name.endswith("webp") else []  # lossless
            assert cv2.imwrite(str(root / "images" / name), image, params)
        ds = YoloFolder(root)
        assert [path.name for path in ds.image_paths] == ["a.png", "b.webp", "c.tif", "d.TIFF"]
        for index in (1, 2, 3):  # background images (b, d) included
            np.testing.assert_array_equal(ds[index]["image"], image[..., ::-1])
        np.testing.assert_array_equal(ds[2]["labels"], [0])
        assert len(ds[1]["labels"]) == 0

    def test_blank_lines_and_integral_float_class(self, tmp_path: Path) -> None:
        ds = YoloFolder(self.make(tmp_path, {"a.txt": "\n3.0 0.5 0.5 1 1\n   \n2 0.5 0.5 0 0\n"}))
        np.testing.assert_array_equal(ds[0]["labels"], [3, 2])
        np.testing.assert_array_equal(ds[0]["bboxes"], [[0, 0, 20, 16], [10, 8, 10, 8]])

    def test_duplicate_box_lines_are_removed_with_a_warning(self, tmp_path: Path) -> None:
        # as ultralytics' verify_image_label: the first of each, here in file order
        text = "1 0.5 0.5 1 1\n0 0.25 0.25 0.5 0.5\n1 0.50 0.5 1.0 1\n0 0.25 0.25 0.5 0.5\n"
        root = self.make(tmp_path, {"a.txt": text, "b.txt": "2 0.5 0.5 1 1\n3 0.5 0.5 1 1\n"},
                         images=("a.png", "b.png"))  # fmt: skip
        with pytest.warns(RankaugWarning, match=r"2 duplicate label line\(s\) removed") as caught:
            ds = YoloFolder(root)
        assert len(caught) == 1
        assert f"{root / 'labels' / 'a.txt'} (2)" in str(caught[0].message)
        assert "b.txt" not in str(caught[0].message)
        np.testing.assert_array_equal(ds[0]["labels"], [1, 0])
        np.testing.assert_array_equal(ds[0]["bboxes"], [[0, 0, 20, 16], [0, 0, 10, 8]])
        np.testing.assert_array_equal(ds[1]["labels"], [2, 3])  # same box, other class: kept

    def test_labels_without_duplicates_do_not_warn(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"a.txt": "1 0.5 0.5 1 1\n1 0.5 0.5 1 0.5\n"})
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ds = YoloFolder(root)
        np.testing.assert_array_equal(ds[0]["labels"], [1, 1])

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
                r"got 7: .*segment polygons .*pass segments=True to read polygons",
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
            ("1_0 0.5 0.5 0.5 0.5", r"ASCII numbers without underscores, got '1_0 0.5"),
            ("\u0663 0.5 0.5 0.5 0.5", r"ASCII numbers without underscores, .*U\+0663 at column 1"),
            # a trailing no-break space was stripped from the line shown: it looked valid
            ("0 0.5 0.5 0.5 0.5\u00a0", r"got '0 0.5 0.5 0.5 0.5\\xa0': U\+00A0 at column 18"),
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
            match=rf"no images with extensions \.bmp, .*\.webp found under "
            rf"{re.escape(str(images))}",
        ):
            YoloFolder(tmp_path)

    def test_missing_image_dir(self, tmp_path: Path) -> None:
        with pytest.raises(
            FileNotFoundError,
            match=rf"image_dir: folder {re.escape(str(tmp_path / 'images'))} does not exist",
        ):
            YoloFolder(tmp_path)

    @pytest.mark.parametrize(
        ("kwargs", "shown"),
        [
            ({"image_dir": None}, "image_dir must be a path .*, got None of type NoneType"),
            ({"label_dir": 1}, "label_dir must be a path .*, got 1 of type int"),
            ({"image_dir": ["images"]}, r"image_dir must be a path .*, got \['images'\]"),
            ({"image_dir": b"images"}, "image_dir must be a path .* of type bytes"),
        ],
    )
    def test_folders_of_a_wrong_type_are_named(
        self, root: Path, kwargs: dict[str, Any], shown: str
    ) -> None:
        # once Python's "unsupported operand type(s) for /: 'PosixPath' and 'NoneType'"
        with pytest.raises(TypeError, match=shown):
            YoloFolder(root, **kwargs)
        with pytest.raises(TypeError, match="root must be a path"):
            YoloFolder(None)  # type: ignore[arg-type]
        assert len(YoloFolder(root, image_dir=Path("images"), label_dir=Path("labels"))) == 6

    def test_missing_label_dir(self, tmp_path: Path) -> None:
        (tmp_path / "images").mkdir()
        with pytest.raises(FileNotFoundError, match=r"label_dir: .*make an empty label folder"):
            YoloFolder(tmp_path)

    def test_two_images_on_one_label_file_are_refused(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"a.txt": "0 0.5 0.5 0.5 0.5\n"}, images=("a.png", "a.jpg"))
        with pytest.raises(
            ValueError, match=r"images .*a.jpg and .*a.png share the label file .*a.txt"
        ):
            YoloFolder(root)
        assert [path.name for path in YoloFolder(root, extensions=(".png",)).image_paths] == [
            "a.png"
        ]

    @pytest.mark.parametrize("orphan", ["b.txt", "sub/c.txt", "A.TXT"])
    def test_label_files_of_no_image_read_warn(self, tmp_path: Path, orphan: str) -> None:
        # b.gif is not among the extensions; A.TXT is not a.png's label file
        root = self.make(tmp_path, {"a.txt": "0 0.5 0.5 0.5 0.5\n", orphan: "1 0.5 0.5 0.5 0.5\n"})
        (root / "images" / "b.gif").write_bytes(b"")
        with pytest.warns(RankaugWarning, match=rf"1 label file\(s\) .*first: .*{orphan}\)"):
            ds = YoloFolder(root)
        assert ds[0]["labels"].tolist() == [0]

    def test_labelimgs_class_names_file_does_not_warn(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"a.txt": "0 0.5 0.5 0.5 0.5\n", "classes.txt": "cat\ndog\n"})
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            assert len(YoloFolder(root)) == 1
        (root / "labels" / "sub").mkdir()  # elsewhere it is a label file of no image
        (root / "labels" / "sub" / "classes.txt").write_text("0 0.5 0.5 0.5 0.5\n")
        with pytest.warns(RankaugWarning, match=r"1 label file\(s\)"):
            YoloFolder(root)

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
            ({"extensions": (1,)}, TypeError, r"extensions must hold strings like '.jpg', got 1"),
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

    # ------------------------------------------------------------ resize on load
    @staticmethod
    def painted_folder(
        root: Path, height: int, width: int, rects: list[tuple[int, int, int, int]], suffix: str
    ) -> Path:
        """One image with constant-colour rectangles, labelled with their boxes."""
        (root / "images").mkdir(parents=True)
        (root / "labels").mkdir()
        image = paint(height, width, rects)
        bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
        assert cv2.imwrite(str(root / "images" / f"a{suffix}"), bgr, [cv2.IMWRITE_JPEG_QUALITY, 95])
        lines = []
        for label, (x0, y0, x1, y1) in enumerate(rects):
            centre = ((x0 + x1) / 2 / width, (y0 + y1) / 2 / height)
            size = ((x1 - x0) / width, (y1 - y0) / height)
            lines.append(f"{label} {centre[0]!r} {centre[1]!r} {size[0]!r} {size[1]!r}\n")
        (root / "labels" / "a.txt").write_text("".join(lines))
        return root

    @given(
        height=st.integers(16, 80),
        aspect=st.floats(0.5, 2.0),
        image_size=st.integers(24, 200),
        corners=st.tuples(*(st.floats(0.0, 0.5) for _ in range(2))),
        sides=st.tuples(*(st.floats(0.34, 0.5) for _ in range(2))),
    )
    def test_resize_on_load_moves_pixels_with_the_boxes(
        self,
        height: int,
        aspect: float,
        image_size: int,
        corners: tuple[float, float],
        sides: tuple[float, float],
    ) -> None:
        width = max(16, round(height * aspect))
        x0, y0 = int(corners[0] * width), int(corners[1] * height)
        rect = (x0, y0, x0 + max(5, int(sides[0] * width)), y0 + max(5, int(sides[1] * height)))
        with tempfile.TemporaryDirectory() as tmp:
            root = self.painted_folder(Path(tmp), height, width, [rect], ".png")
            sample = YoloFolder(root, image_size=image_size)[0]
        new_h, new_w = fit_size(height, width, image_size)
        assert sample["image"].shape == (new_h, new_w, 3)
        assert max(new_h, new_w) == image_size
        scale = (new_h / height, new_w / width)
        expected = np.array([rect], np.float64) * [scale[1], scale[0], scale[1], scale[0]]
        np.testing.assert_allclose(sample["bboxes"], expected, rtol=1e-6, atol=1e-4)
        assert_rectangles_land(sample["image"], expected, scale)  # PNG: exact

    @pytest.mark.parametrize("reduced_decode", [True, False])
    @pytest.mark.parametrize("image_size", [640, 300, 1000, 1600])
    def test_resize_on_load_of_a_jpeg(
        self, tmp_path: Path, image_size: int, reduced_decode: bool
    ) -> None:
        rects = [(128, 96, 640, 400), (800, 304, 1184, 672)]  # on 16-pixel JPEG blocks
        root = self.painted_folder(tmp_path, 720, 1280, rects, ".jpg")
        ds = YoloFolder(root, image_size=image_size, reduced_decode=reduced_decode)
        sample = ds[0]
        new_h, new_w = fit_size(720, 1280, image_size)
        assert sample["image"].shape == (new_h, new_w, 3)
        scale = (new_h / 720, new_w / 1280)
        expected = np.array(rects, np.float64) * [scale[1], scale[0], scale[1], scale[0]]
        np.testing.assert_allclose(sample["bboxes"], expected, rtol=1e-6, atol=1e-3)
        assert_rectangles_land(sample["image"], expected, scale, tolerance=6, slack=1.0)

    def test_linear_interpolation_reads_as_ultralytics_load_image(self, tmp_path: Path) -> None:
        root = self.painted_folder(tmp_path, 720, 1280, [(128, 96, 640, 400)], ".jpg")
        ds = YoloFolder(root, image_size=320, reduced_decode=False, interpolation="linear")
        bgr = cv2.imread(str(root / "images" / "a.jpg"))
        expected = cv2.resize(bgr, (320, 180), interpolation=cv2.INTER_LINEAR)
        np.testing.assert_array_equal(ds[0]["image"], cv2.cvtColor(expected, cv2.COLOR_BGR2RGB))
        auto = YoloFolder(root, image_size=320, reduced_decode=False)[0]["image"]  # by area
        assert not np.array_equal(auto, ds[0]["image"])

    def test_image_size_scales_boxes_in_every_format(self, root: Path) -> None:
        full = YoloFolder(root)  # 40x56 images
        for fmt in BOX_FORMATS:
            ds = YoloFolder(root, box_format=fmt, image_size=100)
            for index in (0, 3):
                sample = ds[index]
                assert sample["image"].shape == (72, 100, 3)  # ceil(40 * 100 / 56) = 72
                boxes = to_xyxy(sample["bboxes"].astype(np.float64), fmt, (72, 100))
                scale = np.array([100 / 56, 72 / 40, 100 / 56, 72 / 40])
                np.testing.assert_allclose(boxes, full[index]["bboxes"] * scale, atol=1e-3)
                np.testing.assert_array_equal(sample["labels"], full[index]["labels"])

    def test_image_size_with_tuples_and_tensors(self, root: Path) -> None:
        sample = YoloFolder(root, image_size=28)[1]
        image, target = YoloFolder(root, image_size=28, as_tuple=True, tensors=True)[1]
        assert tuple(image.shape) == (3, 20, 28)
        np.testing.assert_array_equal(image.numpy().transpose(1, 2, 0), sample["image"])
        np.testing.assert_array_equal(target["boxes"].numpy(), sample["bboxes"])

    def test_image_size_of_the_long_side_changes_nothing(self, root: Path) -> None:
        plain, same = YoloFolder(root), YoloFolder(root, image_size=56)
        for index in range(len(plain)):
            for key in ("image", "bboxes", "labels"):
                np.testing.assert_array_equal(same[index][key], plain[index][key])
                assert same[index][key].dtype == plain[index][key].dtype

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"image_size": 0}, ValueError, r"image_size must be an integer >= 1, got 0"),
            ({"image_size": 640.0}, TypeError, r"image_size must be an integer >= 1, got 640.0"),
            ({"image_size": True}, TypeError, r"image_size must be an integer >= 1, got True"),
            ({"image_size": "640"}, TypeError, r"image_size must be an integer"),
            ({"reduced_decode": 1}, TypeError, r"reduced_decode must be True or False, got 1"),
            (
                {"interpolation": "area"},
                ValueError,
                r"interpolation must be one of 'auto', 'linear', got 'area'",
            ),
            ({"interpolation": 1}, TypeError, r"interpolation must be one of 'auto', 'linear'"),
        ],
    )
    def test_bad_resize_arguments(
        self, root: Path, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            YoloFolder(root, **kwargs)

    def test_source_files(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"b.txt": "0 0.5 0.5 0.2 0.2\n"}, images=("a.png", "b.png"))
        ds = YoloFolder(root)
        assert ds.source_files() == (
            root / "images" / "a.png",
            root / "images" / "b.png",
            root / "labels" / "a.txt",  # listed although missing: it may appear
            root / "labels" / "b.txt",
        )

    def test_label_edits_after_parsing_never_reach_the_cache(self, tmp_path: Path) -> None:
        root = self.make(tmp_path / "ds", {"a.txt": "3 0.5 0.5 0.5 0.5\n"})
        label = root / "labels" / "a.txt"
        parsed = YoloFolder(root)  # parses class 3
        label.write_text("1 0.5 0.5 0.5 0.5\n")  # fixed after parsing
        stat = label.stat()
        os.utime(label, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # surely newer
        np.testing.assert_array_equal(CachedDataset(parsed, tmp_path / "c")[0]["labels"], [3])
        fresh = YoloFolder(root)  # a later run: the fixed file, and a cache of its own
        np.testing.assert_array_equal(CachedDataset(fresh, tmp_path / "c")[0]["labels"], [1])

    def test_source_stats_are_the_label_files_as_parsed(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"b.txt": "0 0.5 0.5 0.2 0.2\n"}, images=("a.png", "b.png"))
        status = (root / "labels" / "b.txt").stat()
        assert YoloFolder(root).source_stats() == {
            str(root / "labels" / "a.txt"): None,  # no file: no objects
            str(root / "labels" / "b.txt"): (status.st_size, status.st_mtime_ns),
        }

    def test_repr_names_every_setting(self, root: Path) -> None:
        text = repr(YoloFolder(root, box_format="yolo", image_size=64, reduced_decode=False))
        assert text == (
            f"YoloFolder({str(root)!r}, box_format='yolo', image_dir='images', "
            "label_dir='labels', "
            "extensions=('.bmp', '.jpeg', '.jpg', '.png', '.tif', '.tiff', '.webp'), "
            "tolerance=0.001, segments=False, as_tuple=False, tensors=False, image_size=64, "
            "reduced_decode=False, interpolation='auto')"
        )
        assert repr(YoloFolder(root, interpolation="linear")).endswith("interpolation='linear')")

    # ------------------------------------------------------------ instance polygons
    @staticmethod
    def polygon_samples() -> list[dict[str, Any]]:
        """Two 40x56 samples with pixel polygons (float32) and their bounds as boxes."""
        polygons = [
            [
                np.array([[3.5, 2.0], [50.25, 4.0], [30.0, 37.75]], np.float32),
                np.array([[0.0, 0.0], [56.0, 0.0], [56.0, 40.0], [0.0, 40.0]], np.float32),
            ],
            [np.array([[10.0, 5.0], [20.0, 5.5], [22.0, 30.0], [12.0, 31.0], [9.0, 18.0]])],
        ]
        samples = []
        for value, points in enumerate(polygons):
            bounds = [np.concatenate([p.min(axis=0), p.max(axis=0)]) for p in points]
            samples.append(
                {
                    "image": np.full((40, 56, 3), 40 * value + 10, np.uint8),
                    "bboxes": np.array(bounds, np.float64),
                    "labels": np.arange(len(points), dtype=np.int64) + 2,
                    "segments": [p.astype(np.float32) for p in points],
                }
            )
        return samples

    @pytest.fixture
    def seg_root(self, tmp_path: Path) -> Path:
        return write_yolo_folder(self.polygon_samples(), tmp_path / "seg")

    @staticmethod
    def bounds(segments: list[np.ndarray]) -> np.ndarray:
        return np.array([np.concatenate([p.min(axis=0), p.max(axis=0)]) for p in segments])

    def test_segments_round_trip(self, seg_root: Path) -> None:
        ds = YoloFolder(seg_root, segments=True)
        for expected, sample in zip(self.polygon_samples(), (ds[0], ds[1]), strict=True):
            assert list(sample) == ["image", "bboxes", "labels", "segments"]
            assert isinstance(sample["segments"], list)
            assert len(sample["segments"]) == len(sample["labels"])
            for points, original in zip(sample["segments"], expected["segments"], strict=True):
                assert points.dtype == np.float32
                # float32 pixels / size in float64, times size again: back to the float32
                np.testing.assert_array_equal(points, original)
            np.testing.assert_array_equal(sample["bboxes"], self.bounds(sample["segments"]))
            np.testing.assert_array_equal(sample["labels"], expected["labels"])
            np.testing.assert_array_equal(sample["image"], expected["image"])

    def test_segments_stay_pixels_in_every_box_format(self, seg_root: Path) -> None:
        reference = YoloFolder(seg_root, segments=True)[0]
        for fmt in BOX_FORMATS:
            sample = YoloFolder(seg_root, segments=True, box_format=fmt)[0]
            for points, expected in zip(sample["segments"], reference["segments"], strict=True):
                np.testing.assert_array_equal(points, expected)
            boxes = to_xyxy(sample["bboxes"].astype(np.float64), fmt, (40, 56))
            np.testing.assert_allclose(boxes, self.bounds(sample["segments"]), atol=1e-4)

    def test_segments_scale_with_image_size(self, seg_root: Path) -> None:
        full = YoloFolder(seg_root, segments=True)
        ds = YoloFolder(seg_root, segments=True, image_size=100)  # 40x56 -> 72x100
        scale = np.array([100 / 56, 72 / 40])
        for index in (0, 1):
            sample = ds[index]
            assert sample["image"].shape == (72, 100, 3)
            for points, original in zip(sample["segments"], full[index]["segments"], strict=True):
                assert points.dtype == np.float32
                np.testing.assert_allclose(points, original * scale, rtol=1e-6, atol=1e-5)
            np.testing.assert_array_equal(sample["bboxes"], self.bounds(sample["segments"]))

    def test_rectangle_polygons_land_on_their_pixels_when_resized(self, tmp_path: Path) -> None:
        rects = [(8, 6, 30, 20), (36, 10, 50, 34)]
        root = self.painted_folder(tmp_path, 40, 56, rects, ".png")
        lines = [
            f"{label} {x0 / 56!r} {y0 / 40!r} {x1 / 56!r} {y0 / 40!r} "
            f"{x1 / 56!r} {y1 / 40!r} {x0 / 56!r} {y1 / 40!r}\n"
            for label, (x0, y0, x1, y1) in enumerate(rects)
        ]
        (root / "labels" / "a.txt").write_text("".join(lines))
        sample = YoloFolder(root, segments=True, image_size=112)[0]  # twice the size
        assert sample["image"].shape == (80, 112, 3)
        corners = self.bounds(sample["segments"])
        np.testing.assert_allclose(corners, np.array(rects) * 2.0, rtol=1e-6)
        assert_rectangles_land(sample["image"], corners, (2.0, 2.0))

    def test_segments_as_tuple_and_tensors(self, seg_root: Path) -> None:
        sample = YoloFolder(seg_root, segments=True)[0]
        image, target = YoloFolder(seg_root, segments=True, as_tuple=True)[0]
        np.testing.assert_array_equal(image, sample["image"])
        assert set(target) == {"boxes", "labels", "segments"}
        np.testing.assert_array_equal(target["boxes"], sample["bboxes"])
        for points, expected in zip(target["segments"], sample["segments"], strict=True):
            assert isinstance(points, np.ndarray)
            np.testing.assert_array_equal(points, expected)
        image, target = YoloFolder(seg_root, segments=True, as_tuple=True, tensors=True)[0]
        assert tuple(image.shape) == (3, 40, 56)
        assert isinstance(target["segments"], list)
        assert [tuple(points.shape) for points in target["segments"]] == [(3, 2), (4, 2)]
        for points, expected in zip(target["segments"], sample["segments"], strict=True):
            assert isinstance(points, torch.Tensor)
            assert points.dtype == torch.float32
            np.testing.assert_array_equal(points.numpy(), expected)

    def test_segments_of_an_image_without_objects(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"b.txt": ""}, images=("a.png", "b.png"))
        ds = YoloFolder(root, segments=True)
        for index in (0, 1):
            sample = ds[index]
            assert sample["segments"] == []
            assert sample["bboxes"].shape == (0, 4)
            assert sample["labels"].dtype == np.int64

    def test_duplicate_polygon_lines_are_removed_with_a_warning(self, tmp_path: Path) -> None:
        # a polygon repeated is removed; another polygon of the same class and box is kept
        first = "0 0 0 1 0 0.5 1\n"
        text = first + "0 0 0 1 0 0.5 1 0 1\n" + first + "1 0 0 1 0 0.5 1\n"
        root = self.make(tmp_path, {"a.txt": text})
        with pytest.warns(RankaugWarning, match=r"1 duplicate label line\(s\) removed") as caught:
            ds = YoloFolder(root, segments=True)
        assert f"{root / 'labels' / 'a.txt'} (1)" in str(caught[0].message)
        sample = ds[0]
        np.testing.assert_array_equal(sample["labels"], [0, 0, 1])
        assert [len(points) for points in sample["segments"]] == [3, 4, 3]
        np.testing.assert_array_equal(sample["bboxes"], [[0, 0, 20, 16]] * 3)

    def test_box_line_in_a_segments_dataset(self, tmp_path: Path) -> None:
        text = "0 0.1 0.1 0.9 0.1 0.5 0.9\n1 0.5 0.5 0.2 0.2\n"
        root = self.make(tmp_path, {"a.txt": text})
        label_file = root / "labels" / "a.txt"
        with pytest.raises(
            ValueError,
            match=rf"^{re.escape(str(label_file))}:2: a box line 'class cx cy w h' in a "
            r"segments=True dataset: '1 0.5 0.5 0.2 0.2'; every line must be a polygon",
        ):
            YoloFolder(root, segments=True)
        with pytest.raises(ValueError, match=rf"^{re.escape(str(label_file))}:1: .*segments=True"):
            YoloFolder(root)

    # pose lines: two people of 2 keypoints, with and without a visibility
    POSE_V = "0 0.5 0.5 0.4 0.4 0.45 0.5 1 0 0 0\n0 0.3 0.3 0.2 0.2 0.3 0.3 1 0.35 0.35 1\n"
    POSE_XY = "0 0.5 0.5 0.4 0.4 0.45 0.5 0.6 0.6\n0 0.3 0.3 0.2 0.2 0 0 0.35 0.35\n"

    @pytest.mark.parametrize("text", [POSE_V, POSE_XY])
    def test_pose_labels_declared_by_a_data_yaml_are_refused(
        self, tmp_path: Path, text: str
    ) -> None:
        root = self.make(tmp_path, {"a.txt": text})
        (root / "data.yaml").write_text("path: .\nkpt_shape: [2, 3]  # joints\nflip_idx: [1, 0]\n")
        with pytest.raises(
            ValueError,
            match=rf"^segments=True: {re.escape(str(root / 'data.yaml'))} declares kpt_shape: "
            r"\[2, 3\], so .* holds YOLO pose labels .*not keypoints$",
        ):
            YoloFolder(root, segments=True)

    # one x y pose line, no sure sign: too few lines to warn about without the data YAML
    POSE_FEW = "0 0.5 0.5 0.4 0.4 0.45 0.5 0.6 0.6\n"

    @pytest.mark.parametrize("train", ["../train/images", "train/images"])
    def test_pose_labels_declared_by_roboflows_data_yaml_in_the_parent_are_refused(
        self, tmp_path: Path, train: str
    ) -> None:
        # Roboflow's export: ds/data.yaml beside ds/train/images, ds/train/labels
        root = self.make(tmp_path / "ds" / "train", {"a.txt": self.POSE_FEW})
        yaml = tmp_path / "ds" / "data.yaml"
        yaml.write_text(f"train: {train}\nval: ../valid/images\n\nkpt_shape: [2, 2]\nnc: 1\n")
        expected = (
            f"segments=True: {yaml} declares kpt_shape: [2, 2], so {root.resolve()} holds YOLO "
            "pose labels"
        )
        with pytest.raises(ValueError, match=re.escape(expected)):
            YoloFolder(root, segments=True)
        with pytest.raises(ValueError, match=re.escape(f"{yaml} declares kpt_shape: [2, 2]")):
            YoloFolder(tmp_path / "ds", image_dir="train/images", label_dir="train/labels",
                       segments=True)  # fmt: skip
        yaml.write_text("train: ../other/images\nkpt_shape: [2, 2]\n")  # another dataset's
        ds = YoloFolder(root, segments=True)  # filterwarnings=error: no warning
        assert ds[0]["segments"][0].shape == (4, 2)

    def test_pose_labels_declared_beside_a_linked_split_folder_are_refused(
        self, tmp_path: Path
    ) -> None:
        stored = self.make(tmp_path / "store" / "train", {"a.txt": self.POSE_FEW})
        (tmp_path / "ds").mkdir()
        root = tmp_path / "ds" / "train"
        root.symlink_to(stored, target_is_directory=True)  # ds/train a link to the stored one
        yaml = tmp_path / "ds" / "data.yaml"
        yaml.write_text("train: ../train/images\nkpt_shape: [2, 2]\n")
        expected = f"segments=True: {yaml} declares kpt_shape: [2, 2], so {stored.resolve()} "
        with pytest.raises(ValueError, match=re.escape(expected)):
            YoloFolder(root, segments=True)

    @pytest.mark.parametrize("text", [POSE_V, POSE_XY])
    def test_a_dataset_of_pose_lines_only_is_warned_about(self, tmp_path: Path, text: str) -> None:
        root = self.make(tmp_path, {"a.txt": text, "b.txt": text}, images=("a.png", "b.png"))
        fields = len(text.split("\n")[0].split())
        with pytest.warns(RankaugWarning, match=rf"every label line has {fields} fields and reads "
                          r"as a YOLO pose line") as caught:  # fmt: skip
            ds = YoloFolder(root, segments=True)
        assert len(ds) == 2
        assert caught[0].filename == __file__  # the caller's line

    def test_a_pose_line_with_a_visibility_of_2_is_refused_as_one(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"a.txt": "0 0.5 0.5 0.4 0.4 0.45 0.5 2 0.6 0.6 1\n"})
        with pytest.raises(
            ValueError,
            match=rf"^{re.escape(str(root / 'labels' / 'a.txt'))}:1: a YOLO pose line 'class "
            r"cx cy w h' and keypoints 'x y v' in a segments=True dataset",
        ):
            YoloFolder(root, segments=True)

    def test_polygons_of_other_lengths_or_forms_are_not_warned_about(self, tmp_path: Path) -> None:
        # one file of pose-like lines beside a triangle: not every line reads as pose
        pose_like = "0 0.5 0.5 0.4 0.4 0.45 0.5 0.6 0.6\n"
        root = self.make(tmp_path, {"a.txt": pose_like, "b.txt": "0 0.1 0.1 0.9 0.1 0.5 0.9\n"},
                         images=("a.png", "b.png"))  # fmt: skip
        (root / "notes.yaml").write_text("names: [person]\n")
        ds = YoloFolder(root, segments=True)  # filterwarnings=error: no warning
        assert [ds[k]["segments"][0].shape for k in (0, 1)] == [(4, 2), (3, 2)]

    @pytest.mark.parametrize(
        "text",
        [
            "0 0.4 0.4 0.6 0.4 0.6 0.6 0.4 0.6\n",  # a centred square
            "0 0.5 0.4 0.6 0.6 0.4 0.6\n",  # a centred triangle
            "".join(f"0 0.4 0.4 0.6 0.4 0.6 0.6 0.4{i} 0.6\n" for i in range(7)),  # seven such
        ],
    )
    def test_a_few_small_polygons_that_read_as_x_y_pose_lines_are_not_warned_about(
        self, tmp_path: Path, text: str
    ) -> None:
        # read as a pose line, the first point is a box's centre and the second its size,
        # which holds the others for about 4 in 10 small polygons: a few prove nothing
        root = self.make(tmp_path, {"a.txt": text})
        ds = YoloFolder(root, segments=True)  # filterwarnings=error: no warning
        assert len(ds[0]["segments"]) == text.count("\n")

    def test_many_x_y_pose_lines_are_warned_about(self, tmp_path: Path) -> None:
        # no sure sign (a visibility, an unlabelled 0 0), but eight lines of one length
        text = "".join(f"0 0.4 0.4 0.6 0.4 0.6 0.6 0.4{i} 0.6\n" for i in range(8))  # 8 distinct
        root = self.make(tmp_path, {"a.txt": text})
        with pytest.warns(RankaugWarning, match="every label line has 9 fields and reads as"):
            YoloFolder(root, segments=True)

    def test_segments_within_tolerance_are_clipped_to_the_image(self, tmp_path: Path) -> None:
        root = self.make(tmp_path, {"a.txt": "0 -0.0005 0 1.0005 0 0.5 1.0009\n"})
        sample = YoloFolder(root, segments=True)[0]
        np.testing.assert_array_equal(sample["segments"][0], [[0, 0], [20, 0], [10, 16]])
        np.testing.assert_array_equal(sample["bboxes"], [[0, 0, 20, 16]])

    def test_stored_segments_are_not_shared_with_samples(self, seg_root: Path) -> None:
        ds = YoloFolder(seg_root, segments=True)
        ds[0]["segments"][0][:] = -1.0
        assert np.all(ds[0]["segments"][0] >= 0.0)

    def test_bad_segments_argument(self, seg_root: Path) -> None:
        with pytest.raises(TypeError, match=r"segments must be True or False, got 1"):
            YoloFolder(seg_root, segments=1)  # type: ignore[arg-type]

    def test_repr_names_segments(self, seg_root: Path) -> None:
        text = repr(YoloFolder(seg_root, segments=True))
        assert "tolerance=0.001, segments=True, as_tuple=False" in text

    def test_cached_segments_round_trip(self, seg_root: Path, tmp_path: Path) -> None:
        source = YoloFolder(seg_root, segments=True)
        cached = CachedDataset(source, tmp_path / "cache")
        assert "segments=True" in cached.fingerprint.text  # keyed apart from box reads
        for index in (0, 1):
            first = cached[index]
            assert cached.is_cached(index)
            again = cached[index]  # read back from the file
            assert list(again) == list(first)
            assert isinstance(again["segments"], list)
            for points, expected in zip(again["segments"], source[index]["segments"], strict=True):
                assert type(points) is np.ndarray
                assert points.dtype == np.float32
                np.testing.assert_array_equal(points, expected)
            np.testing.assert_array_equal(again["bboxes"], first["bboxes"])
