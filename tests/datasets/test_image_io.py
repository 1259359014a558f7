"""Tests for rankaug.datasets._image_io: decoding, resize on load, the JPEG header."""

from __future__ import annotations

import io
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from rankaug.datasets._image_io import (
    fit_size,
    jpeg_size,
    read_rgb,
    read_rgb_resized,
    write_png,
)


def textured(height: int, width: int, seed: int = 0) -> np.ndarray:
    """A smooth, photograph-like RGB image (JPEG keeps it close)."""
    noise = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    blurred: np.ndarray = cv2.GaussianBlur(noise, (0, 0), 3)
    return blurred


def write_jpeg(path: Path, rgb: np.ndarray, *, progressive: bool = False) -> Path:
    params = [cv2.IMWRITE_JPEG_QUALITY, 95, cv2.IMWRITE_JPEG_PROGRESSIVE, int(progressive)]
    assert cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), params)
    return path


def write_rotated_jpeg(path: Path, rgb: np.ndarray, orientation: int) -> Path:
    """A JPEG whose EXIF orientation tag asks viewers to rotate it."""
    image = Image.fromarray(rgb)
    exif = image.getexif()
    exif[0x0112] = orientation
    image.save(path, "JPEG", exif=exif.tobytes(), quality=95)
    return path


class TestFitSize:
    @given(height=st.integers(1, 5000), width=st.integers(1, 5000), size=st.integers(1, 2000))
    def test_long_side_is_the_size_and_aspect_is_kept(
        self, height: int, width: int, size: int
    ) -> None:
        new_h, new_w = fit_size(height, width, size)
        assert max(new_h, new_w) == size
        assert 1 <= new_h <= size
        assert 1 <= new_w <= size
        ratio = size / max(height, width)
        # each side is the scaled side rounded up (never more than a pixel off)
        assert height * ratio - 1e-9 <= new_h < height * ratio + 1
        assert width * ratio - 1e-9 <= new_w < width * ratio + 1

    def test_ultralytics_formula(self) -> None:
        # min(ceil(side * r), size), r = size / max(h, w): ceil, not round
        assert fit_size(480, 640, 320) == (240, 320)
        assert fit_size(1080, 1920, 640) == (360, 640)
        assert fit_size(1000, 3, 640) == (640, math.ceil(3 * 0.64))
        assert fit_size(701, 1000, 640) == (449, 640)  # 448.64 rounds up
        assert fit_size(20, 30, 90) == (60, 90)  # grows too
        assert fit_size(37, 640, 640) == (37, 640)  # already there: unchanged


class TestJpegSize:
    @given(height=st.integers(1, 300), width=st.integers(1, 300), progressive=st.booleans())
    def test_reads_the_frame_header(self, height: int, width: int, progressive: bool) -> None:
        params = [cv2.IMWRITE_JPEG_PROGRESSIVE, int(progressive)]
        ok, encoded = cv2.imencode(".jpg", np.zeros((height, width, 3), np.uint8), params)
        assert ok
        assert jpeg_size(encoded) == (height, width)

    def test_skips_exif_and_gives_the_stored_size(self, tmp_path: Path) -> None:
        path = write_rotated_jpeg(tmp_path / "r.jpg", textured(40, 100), orientation=6)
        assert jpeg_size(np.fromfile(path, np.uint8)) == (40, 100)
        assert read_rgb(path).shape == (100, 40, 3)  # OpenCV applies the orientation

    @pytest.mark.parametrize(
        "data",
        [
            b"",
            b"\xff\xd8",
            b"\x89PNG\r\n\x1a\n" + bytes(40),
            b"\xff\xd8\xff\xe0\x00\x10JFIF",  # cut off before any frame
            b"\xff\xd8\xff\xda\x00\x02",  # scan data before any frame
            b"\xff\xd8\xff\xc0\x00\x11\x08\x00\x00\x00\x10\x03",  # height 0 (DNL)
            b"\xff\xd8\x00\x00\x00\x00",  # not a marker
        ],
    )
    def test_none_for_anything_else(self, data: bytes) -> None:
        assert jpeg_size(np.frombuffer(data, np.uint8)) is None

    def test_png_is_not_a_jpeg(self) -> None:
        ok, encoded = cv2.imencode(".png", np.zeros((5, 7, 3), np.uint8))
        assert ok
        assert jpeg_size(encoded) is None


class TestReadRgbResized:
    @pytest.mark.parametrize("suffix", [".jpg", ".png"])
    @pytest.mark.parametrize("size", [1, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129, 300])
    def test_sizes(self, tmp_path: Path, suffix: str, size: int) -> None:
        path = tmp_path / f"a{suffix}"
        image = textured(72, 128)
        if suffix == ".png":
            write_png(path, image)
        else:
            write_jpeg(path, image)
        for reduced in (True, False):
            out, original = read_rgb_resized(path, size, reduced_decode=reduced)
            assert original == (72, 128)
            assert out.shape == (*fit_size(72, 128, size), 3)
            assert out.dtype == np.uint8

    def test_linear_interpolation_is_ultralytics_load_image(self, tmp_path: Path) -> None:
        path = write_jpeg(tmp_path / "a.jpg", textured(720, 1280))
        out, original = read_rgb_resized(path, 320, reduced_decode=False, interpolation="linear")
        assert original == (720, 1280)
        # ultralytics' BaseDataset.load_image: imread, INTER_LINEAR to the long side
        bgr = cv2.resize(cv2.imread(str(path)), (320, 180), interpolation=cv2.INTER_LINEAR)
        np.testing.assert_array_equal(out, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        auto, _ = read_rgb_resized(path, 320, reduced_decode=False)  # a 4x shrink: by area
        assert np.abs(auto.astype(np.int64) - out).any()

    def test_reduced_decode_is_the_decoders_own_half_size(self, tmp_path: Path) -> None:
        path = write_jpeg(tmp_path / "a.jpg", textured(720, 1280))
        out, original = read_rgb_resized(path, 640, reduced_decode=True)
        assert original == (720, 1280)
        half = cv2.cvtColor(cv2.imread(str(path), cv2.IMREAD_REDUCED_COLOR_2), cv2.COLOR_BGR2RGB)
        np.testing.assert_array_equal(out, half)  # no resize after it: 640x360 already

    def test_full_decode_then_resize(self, tmp_path: Path) -> None:
        path = write_jpeg(tmp_path / "a.jpg", textured(720, 1280))
        exact, _ = read_rgb_resized(path, 640, reduced_decode=False)
        expected = cv2.resize(read_rgb(path), (640, 360), interpolation=cv2.INTER_AREA)
        np.testing.assert_array_equal(exact, expected)
        reduced, _ = read_rgb_resized(path, 640, reduced_decode=True)
        difference = np.abs(reduced.astype(np.int64) - exact)
        assert difference.any()  # the reduced decode changes pixels ...
        assert difference.mean() < 2.0  # ... slightly
        assert difference.max() <= 24

    def test_picks_the_largest_reduction_that_stays_large_enough(self, tmp_path: Path) -> None:
        path = write_jpeg(tmp_path / "a.jpg", textured(600, 1000))
        decoded = read_rgb(path)
        for size, scale in [(130, 4), (125, 8), (124, 8), (126, 4), (251, 2), (500, 2), (501, 1)]:
            out, _ = read_rgb_resized(path, size, reduced_decode=True)
            target = fit_size(600, 1000, size)
            if scale == 1:
                source = decoded
            else:
                flag = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
                        8: cv2.IMREAD_REDUCED_COLOR_8}[scale]  # fmt: skip
                source = cv2.cvtColor(cv2.imread(str(path), flag), cv2.COLOR_BGR2RGB)
            assert source.shape[0] >= target[0]
            assert source.shape[1] >= target[1]
            shrink = source.shape[0] >= 2 * target[0] or source.shape[1] >= 2 * target[1]
            interpolation = cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
            expected = cv2.resize(source, target[::-1], interpolation=interpolation)
            np.testing.assert_array_equal(out, expected, err_msg=f"size {size}")

    def test_growing_uses_linear_interpolation(self, tmp_path: Path) -> None:
        image = textured(20, 30)
        write_png(tmp_path / "a.png", image)
        out, original = read_rgb_resized(tmp_path / "a.png", 90, reduced_decode=True)
        assert original == (20, 30)
        expected = cv2.resize(image, (90, 60), interpolation=cv2.INTER_LINEAR)
        np.testing.assert_array_equal(out, expected)

    def test_png_shrinks_by_area(self, tmp_path: Path) -> None:
        image = textured(90, 120)
        write_png(tmp_path / "a.png", image)
        out, _ = read_rgb_resized(tmp_path / "a.png", 40, reduced_decode=True)
        expected = cv2.resize(image, (40, 30), interpolation=cv2.INTER_AREA)
        np.testing.assert_array_equal(out, expected)

    @pytest.mark.parametrize("orientation", [1, 3, 6, 8])
    @pytest.mark.parametrize("reduced", [True, False])
    def test_exif_orientation_as_read_rgb(
        self, tmp_path: Path, orientation: int, reduced: bool
    ) -> None:
        path = write_rotated_jpeg(tmp_path / "r.jpg", textured(120, 320), orientation)
        full = read_rgb(path)
        out, original = read_rgb_resized(path, 80, reduced_decode=reduced)
        assert original == full.shape[:2]
        assert out.shape == (*fit_size(*full.shape[:2], 80), 3)  # type: ignore[call-arg]
        expected = cv2.resize(full, out.shape[1::-1], interpolation=cv2.INTER_AREA)
        assert np.abs(out.astype(np.int64) - expected).mean() < 3.0  # same picture, same way up

    def test_nearly_square_rotated_jpeg(self, tmp_path: Path) -> None:
        # 201x203 stored, shown 203x201: at 1/8 both sides would be 26, so the shape of
        # a reduced decode cannot say which way up it is; the size must still be right
        path = write_rotated_jpeg(tmp_path / "r.jpg", textured(201, 203), orientation=6)
        out, original = read_rgb_resized(path, 25, reduced_decode=True)
        assert original == (203, 201)
        assert out.shape == (*fit_size(203, 201, 25), 3)

    def test_constant_colour_stays_constant(self, tmp_path: Path) -> None:
        image = np.full((300, 500, 3), (200, 40, 90), np.uint8)
        path = write_jpeg(tmp_path / "a.jpg", image)
        out, _ = read_rgb_resized(path, 100, reduced_decode=True)
        assert out.shape == (60, 100, 3)
        assert np.abs(out.astype(np.int64) - (200, 40, 90)).max() <= 3

    def test_errors(self, tmp_path: Path) -> None:
        (tmp_path / "empty.jpg").write_bytes(b"")
        with pytest.raises(ValueError, match=r"empty\.jpg: the file is empty"):
            read_rgb_resized(tmp_path / "empty.jpg", 10, reduced_decode=True)
        (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8\xff\xc0\x00\x11\x08\x00\x40\x00\x40\x03")
        with pytest.raises(ValueError, match=r"cannot decode image .*bad\.jpg"):
            read_rgb_resized(tmp_path / "bad.jpg", 10, reduced_decode=True)
        with pytest.raises(FileNotFoundError):
            read_rgb_resized(tmp_path / "missing.jpg", 10, reduced_decode=True)


class TestReadRgb:
    def test_png_round_trip(self, tmp_path: Path) -> None:
        image = textured(9, 13)
        write_png(tmp_path / "a.png", image)
        np.testing.assert_array_equal(read_rgb(tmp_path / "a.png"), image)

    def test_png_bytes_from_pillow(self, tmp_path: Path) -> None:
        buffer = io.BytesIO()
        Image.fromarray(textured(6, 4)).save(buffer, "PNG")
        (tmp_path / "p.png").write_bytes(buffer.getvalue())
        np.testing.assert_array_equal(read_rgb(tmp_path / "p.png"), textured(6, 4))
