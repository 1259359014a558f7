"""Tests for rankaug.datasets._yolo_labels."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rankaug import RankaugWarning
from rankaug.datasets._yolo_labels import read_label_file, warn_duplicates


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "a.txt"
    path.write_text(text)
    return path


class TestReadLabelFile:
    def test_polygons_and_their_bounds(self, tmp_path: Path) -> None:
        path = write(tmp_path, "3 0.1 0.2 0.5 0.2 0.3 0.6\n\n1 0 0 1 0 1 1 0 1\n")
        labels = read_label_file(path, 1e-3, segments=True)
        np.testing.assert_array_equal(labels.classes, [3, 1])
        assert labels.classes.dtype == np.int64
        assert labels.polygons is not None
        assert [points.shape for points in labels.polygons] == [(3, 2), (4, 2)]
        np.testing.assert_array_equal(labels.polygons[0], [[0.1, 0.2], [0.5, 0.2], [0.3, 0.6]])
        assert labels.polygons[0].dtype == np.float64
        np.testing.assert_array_equal(labels.boxes, [[0.1, 0.2, 0.5, 0.6], [0, 0, 1, 1]])

    def test_box_lines_have_no_polygons(self, tmp_path: Path) -> None:
        labels = read_label_file(write(tmp_path, "0 0.5 0.5 0.2 0.4\n"), 1e-3, segments=False)
        assert labels.polygons is None
        np.testing.assert_allclose(labels.boxes, [[0.4, 0.3, 0.6, 0.7]])

    def test_duplicate_lines_are_dropped_and_counted(self, tmp_path: Path) -> None:
        path = tmp_path / "a.txt"
        path.write_text(
            "1 0.5 0.5 0.2 0.4\n1 .5 0.5 0.2 0.40\n2 0.5 0.5 0.2 0.4\n1 0.5 0.5 0.2 0.4\n"
        )
        labels = read_label_file(path, 1e-3, segments=False)
        assert labels.classes.tolist() == [1, 2]
        assert labels.duplicates == 2
        path.write_text(
            "0 0.1 0.2 0.5 0.2 0.3 0.6\n0 0.5 0.2 0.3 0.6 0.1 0.2\n0 0.1 0.2 0.5 0.2 0.3 0.6\n"
        )
        labels = read_label_file(path, 1e-3, segments=True)
        assert labels.polygons is not None
        assert [points.tolist()[0] for points in labels.polygons] == [[0.1, 0.2], [0.5, 0.2]]
        assert labels.duplicates == 1

    @pytest.mark.parametrize("segments", [True, False])
    def test_missing_or_empty_file_has_no_objects(self, tmp_path: Path, segments: bool) -> None:
        for path in (tmp_path / "missing.txt", write(tmp_path, "\n  \n")):
            labels = read_label_file(path, 1e-3, segments=segments)
            assert labels.classes.shape == (0,)
            assert labels.classes.dtype == np.int64
            assert labels.boxes.shape == (0, 4)
            assert labels.polygons == (() if segments else None)

    def test_points_within_tolerance_are_clipped(self, tmp_path: Path) -> None:
        path = write(tmp_path, "0 -0.0005 0.5 1.0008 0.5 0.5 1.0004\n")
        labels = read_label_file(path, 1e-3, segments=True)
        assert labels.polygons is not None
        np.testing.assert_array_equal(labels.polygons[0], [[0.0, 0.5], [1.0, 0.5], [0.5, 1.0]])
        np.testing.assert_array_equal(labels.boxes, [[0.0, 0.5, 1.0, 1.0]])

    def test_custom_tolerance_for_points(self, tmp_path: Path) -> None:
        path = write(tmp_path, "0 0.1 0.1 1.05 0.1 0.5 0.5\n")
        labels = read_label_file(path, 0.06, segments=True)
        assert labels.polygons is not None
        np.testing.assert_array_equal(labels.polygons[0][1], [1.0, 0.1])
        with pytest.raises(ValueError, match=r"point 2 \(x2=1.05, y2=0.1\) lies outside"):
            read_label_file(path, 1e-3, segments=True)

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            (
                "0 0.5 0.5 0.2 0.2",
                r"a box line 'class cx cy w h' in a segments=True dataset: '0 0.5 0.5 0.2 0.2'; "
                r"every line must be a polygon .*ultralytics then silently drops every polygon",
            ),
            ("0 0.1 0.1", r"a polygon needs at least 3 points .*got 1 point\(s\)"),
            ("0", r"a polygon needs at least 3 points .*got 0 point\(s\)"),
            ("0 0.1 0.1 0.9 0.1 0.9", r"odd number \(5\) of coordinates"),
            ("0 0.1 0.1 0.9 0.1 0.9 0.9 0.5", r"odd number \(7\) of coordinates"),
            ("0 0.1", r"odd number \(1\) of coordinates"),
            ("x 0.1 0.1 0.9 0.1 0.9 0.9", r"class 'x' is not a number"),
            ("0.5 0.1 0.1 0.9 0.1 0.9 0.9", r"class must be an integer, got '0.5'"),
            ("-2 0.1 0.1 0.9 0.1 0.9 0.9", r"class must be an integer >= 0, got '-2'"),
            ("0 0.1 0.1 0.9 abc 0.9 0.9", r"y2 = 'abc' is not a number"),
            ("0 0.1 0.1 0.9 0.1 nan 0.9", r"x3 = 'nan' is not finite"),
            (
                "0 0.1 0.1 0.9 0.1 0.9 1.2",
                r"polygon point 3 \(x3=0.9, y3=1.2\) lies outside \[0, 1\] by more than "
                r"tolerance=0.001; YOLO coordinates are normalised by the image size",
            ),
            ("0 -0.01 0.1 0.9 0.1 0.9 0.9", r"polygon point 1 \(x1=-0.01, y1=0.1\) lies outside"),
        ],
    )
    def test_bad_polygon_lines_name_file_and_line(
        self, tmp_path: Path, line: str, message: str
    ) -> None:
        path = write(tmp_path, f"0 0.1 0.1 0.9 0.1 0.9 0.9\n\n{line}\n")
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:3: .*{message}"):
            read_label_file(path, 1e-3, segments=True)

    @pytest.mark.parametrize("fields", [7, 9, 13])
    def test_polygon_lines_without_segments_point_to_the_option(
        self, tmp_path: Path, fields: int
    ) -> None:
        path = write(tmp_path, " ".join(["0"] + ["0.5"] * (fields - 1)) + "\n")
        with pytest.raises(
            ValueError,
            match=rf"^{re.escape(str(path))}:1: expected 5 fields 'class cx cy w h', got "
            rf"{fields}: .*segment polygons .*pass segments=True to read polygons",
        ):
            read_label_file(path, 1e-3, segments=False)

    @pytest.mark.parametrize("segments", [True, False])
    def test_a_utf8_byte_order_mark_is_skipped(self, tmp_path: Path, segments: bool) -> None:
        line = "7 0.1 0.2 0.5 0.2 0.3 0.6" if segments else "7 0.5 0.5 0.2 0.4"
        path = tmp_path / "a.txt"
        path.write_bytes(b"\xef\xbb\xbf" + f"{line}\n{line}1\n".encode())
        assert read_label_file(path, 1e-3, segments=segments).classes.tolist() == [7, 7]

    @pytest.mark.parametrize(
        ("data", "where"),
        [
            ("0 0.5 0.5 0.2 0.4\n1 0.5 0.5 0.2 0.4 # café\n".encode("latin-1"), r"2: .*0xe9 "
             "at column 24"),
            (b"0 0.5 0.5 0.2 0.4\r1 0.5 0.5 0.2 0.4\r\n\xff", r"3: .*0xff at column 1"),
            ("0 0.5 0.5 0.2 0.4\n".encode("utf-16"), r"1: .*0xff at column 1"),
            (b"\xef\xbb\xbf0 0.5 0.5 0.2 0.4 \xe9\n", r"1: .*0xe9 at column 19"),
        ],
    )  # fmt: skip
    def test_a_file_that_is_not_utf8_is_named_with_its_line(
        self, tmp_path: Path, data: bytes, where: str
    ) -> None:
        path = tmp_path / "a.txt"
        path.write_bytes(data)
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:{where}.*re-encode"):
            read_label_file(path, 1e-3, segments=False)

    @pytest.mark.parametrize(
        ("token", "label"),
        [("9007199254740993", 2**53 + 1), ("9007199254740993.0", 2**53 + 1),
         (str(2**63 - 1), 2**63 - 1), ("3.0", 3), ("3e0", 3), ("-0", 0)],
    )  # fmt: skip
    def test_classes_are_read_exactly(self, tmp_path: Path, token: str, label: int) -> None:
        path = write(tmp_path, f"{token} 0.5 0.5 0.2 0.4\n")
        classes = read_label_file(path, 1e-3, segments=False).classes
        assert (classes.tolist(), classes.dtype) == ([label], np.int64)  # type: ignore[comparison-overlap]

    @pytest.mark.parametrize(
        ("token", "message"),
        [
            (str(2**63), r"class '9223372036854775808' is too large: labels are int64"),
            ("1e999999999", r"class '1e999999999' is too large"),
            ("3.0000000000000001", r"class must be an integer, got '3.0000000000000001'"),
            ("sNaN", r"class must be an integer, got 'sNaN'"),
            ("-1e30", r"class must be an integer >= 0, got '-1e30'"),
        ],
    )
    def test_classes_float_would_round_are_refused(
        self, tmp_path: Path, token: str, message: str
    ) -> None:
        path = write(tmp_path, f"0 0.5 0.5 0.2 0.4\n{token} 0.5 0.5 0.2 0.4\n")
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:2: {message}"):
            read_label_file(path, 1e-3, segments=False)


class TestWarnDuplicates:
    def test_names_the_first_ten_files_and_counts_the_rest(self, tmp_path: Path) -> None:
        paths = [tmp_path / f"{index:02}.txt" for index in range(12)]
        for path in paths:
            path.write_text("0 0.5 0.5 0.2 0.4\n" * 3)
        parsed = [read_label_file(path, 1e-3, segments=False) for path in paths]
        with pytest.warns(RankaugWarning) as caught:
            warn_duplicates(paths, parsed)
        message = str(caught[0].message)
        assert message.startswith("24 duplicate label line(s) removed")
        assert f"{paths[9]} (2) and 2 more file(s)" in message
        assert str(paths[10]) not in message

    def test_no_duplicates_no_warning(self, tmp_path: Path) -> None:
        path = tmp_path / "a.txt"
        path.write_text("0 0.5 0.5 0.2 0.4\n")
        warn_duplicates([path], [read_label_file(path, 1e-3, segments=False)])  # error if warned
