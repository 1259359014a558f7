from __future__ import annotations

from typing import Any
from unittest import mock

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug.mosaic import paint
from rankaug.mosaic.colour import painted_rows
from rankaug.mosaic.fused import TileWarp
from rankaug.mosaic.layout import Window, grid_layout, new_layout
from rankaug.mosaic.paint import (
    canvas,
    fill,
    paint_image,
    paint_window,
    resize_into,
    warp_tile,
)
from rankaug.mosaic.plan import Plan
from tests.mosaic.test_config import build


class TestCanvas:
    def test_channels_and_dtype(self) -> None:
        assert canvas(np.zeros((3, 3), np.uint16), (5, 6)).shape == (5, 6)
        out = canvas(np.zeros((3, 3, 4), np.float32), (5, 6))
        assert out.shape == (5, 6, 4)
        assert out.dtype == np.float32


class TestFill:
    def test_one_value_or_one_per_channel(self) -> None:
        out = np.zeros((4, 4, 3), np.uint8)
        fill(out, [(0, 2, 0, 4)], (9.0,))
        fill(out, [(2, 4, 1, 3)], (1.0, 2.0, 3.0))
        assert (out[:2] == 9).all()
        assert out[3, 1].tolist() == [1, 2, 3]
        assert (out[2:, 0] == 0).all()


class TestPaintWindow:
    @pytest.mark.parametrize("shape", [(6, 8), (6, 8, 1), (6, 8, 3), (6, 8, 7)])
    def test_resizes_into_the_window_only(self, shape: tuple[int, ...]) -> None:
        source = np.full(shape, 5, np.uint8)
        out = np.zeros((20, 20, *shape[2:]), np.uint8)
        paint_window(out, source, Window(shape[:2], 2, 1, 6, 5, 3, 4, 15, 10),
                     cv2.INTER_LINEAR)  # fmt: skip
        assert (out[4:10, 3:15] == 5).all()
        out[4:10, 3:15] = 0
        assert (out == 0).all()

    def test_same_size_is_a_copy(self) -> None:
        source = np.arange(24, dtype=np.uint8).reshape(4, 6)
        out = np.zeros((4, 6), np.uint8)
        paint_window(out, source, Window((4, 6), 1, 1, 5, 3, 1, 1, 5, 3), cv2.INTER_LINEAR)
        assert np.array_equal(out[1:3, 1:5], source[1:3, 1:5])


def _smooth(seed: int, h: int, w: int) -> np.ndarray:
    """A smooth random picture with noise (edges and gradients), ``h x w x 3`` uint8."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    smooth = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC).astype(np.int64)
    return np.clip(smooth + rng.integers(-30, 31, smooth.shape), 0, 255).astype(np.uint8)


def _warp_sources(monkeypatch: pytest.MonkeyPatch) -> list[tuple[np.ndarray, np.ndarray]]:
    """Record what cv2.warpAffine reads, and what it would have made from a view of the tile."""
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    real = cv2.warpAffine

    def spy(src: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        seen.append((src, src.copy()))
        return real(src, *args, **kwargs)

    monkeypatch.setattr(cv2, "warpAffine", spy)
    return seen


def _recording(calls: list[np.ndarray]) -> Any:
    """A stand-in for ``prefetched`` that records each crop and hands it back."""

    def record(crop: np.ndarray) -> np.ndarray:
        calls.append(crop)
        return crop

    return record


class TestResizeInto:
    @pytest.mark.parametrize(
        ("version", "warps"),
        [("5.1.0", True), ("5.0.0", False), ("4.14.0", False), ("4.13.0-dev", False),
         ("5.2.1", True), ("10.0", True), ("unknown", False)],
    )  # fmt: skip
    def test_warps_from_opencv_5_1(self, version: str, warps: bool) -> None:
        assert paint._resizes_by_warp(version) is warps

    def test_the_gate_is_this_opencv_s(self) -> None:
        assert paint._RESIZE_BY_WARP is paint._resizes_by_warp(cv2.__version__)

    @pytest.mark.parametrize("by_warp", [False, True])
    @given(seed=st.integers(0, 2**16), src=st.tuples(st.integers(1, 40), st.integers(1, 40)),
           dst=st.tuples(st.integers(1, 40), st.integers(1, 40)))  # fmt: skip
    def test_resizes_pixels_into_the_target_only(
        self, by_warp: bool, seed: int, src: tuple[int, int], dst: tuple[int, int]
    ) -> None:
        crop = _smooth(seed, *src)
        expected = cv2.resize(crop, dst[::-1], interpolation=cv2.INTER_LINEAR)
        out = np.full((dst[0] + 3, dst[1] + 5, 3), 7, np.uint8)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(paint, "_RESIZE_BY_WARP", by_warp)
            resize_into(crop, out[1 : 1 + dst[0], 2 : 2 + dst[1]], cv2.INTER_LINEAR)
        inside = out[1 : 1 + dst[0], 2 : 2 + dst[1]].astype(np.int64)
        difference = np.abs(inside - expected).max()
        assert difference <= (1 if by_warp else 0)
        out[1 : 1 + dst[0], 2 : 2 + dst[1]] = 7
        assert (out == 7).all()

    @pytest.mark.parametrize(
        ("by_warp", "channels", "interpolation"),
        [(True, 3, cv2.INTER_LINEAR), (False, 3, cv2.INTER_LINEAR), (True, 1, cv2.INTER_LINEAR),
         (True, 3, cv2.INTER_NEAREST_EXACT)],
    )  # fmt: skip
    @given(seed=st.integers(0, 2**16), src=st.tuples(st.integers(1, 40), st.integers(1, 40)),
           dst=st.tuples(st.integers(1, 40), st.integers(1, 40)))  # fmt: skip
    def test_mirrored_is_the_resized_crop_mirrored_into_the_target_only(
        self, by_warp: bool, channels: int, interpolation: int, seed: int,
        src: tuple[int, int], dst: tuple[int, int],
    ) -> None:  # fmt: skip
        crop = np.ascontiguousarray(_smooth(seed, *src)[..., :channels])
        plain = np.zeros((*dst, channels), np.uint8)
        out = np.full((dst[0] + 3, dst[1] + 5, channels), 7, np.uint8)
        target = out[1 : 1 + dst[0], 2 : 2 + dst[1]]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(paint, "_RESIZE_BY_WARP", by_warp)
            resize_into(crop, plain, interpolation)
            resize_into(crop, target, interpolation, mirrored=True)
        # one resampling whose map is the mirror image of the plain one: the same pixels
        # wherever measured (OpenCV 5.1); a level apart is what the warp's fixed point allows
        difference = np.abs(target.astype(np.int64) - plain[:, ::-1]).max()
        assert difference <= (1 if by_warp and channels == 3 else 0)
        target[...] = 7
        assert (out == 7).all()

    def test_mirrored_through_the_warp_is_one_warp_with_the_mirrored_map(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        calls: list[np.ndarray] = []
        warp = cv2.warpAffine

        def spy(source: np.ndarray, inverse: np.ndarray, *args: Any) -> Any:
            calls.append(inverse)
            return warp(source, inverse, *args)

        monkeypatch.setattr(paint, "_RESIZE_BY_WARP", True)
        monkeypatch.setattr(cv2, "warpAffine", spy)
        out = np.zeros((10, 20, 3), np.uint8)
        resize_into(_smooth(0, 30, 40), out, cv2.INTER_LINEAR, mirrored=True)
        (inverse,) = calls
        np.testing.assert_allclose(inverse, [[-2.0, 0.0, 39.0 - 0.5 * 2.0 + 0.5], [0.0, 3.0, 1.0]])

    @pytest.mark.parametrize("by_warp", [False, True])
    def test_a_constant_colour_stays_exact(self, by_warp: bool) -> None:
        out = np.zeros((50, 60, 3), np.uint8)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(paint, "_RESIZE_BY_WARP", by_warp)
            resize_into(np.full((13, 29, 3), (3, 140, 251), np.uint8), out[4:41, 9:60],
                        cv2.INTER_LINEAR)  # fmt: skip
        assert (out[4:41, 9:60] == (3, 140, 251)).all()
        out[4:41, 9:60] = 0
        assert (out == 0).all()

    @pytest.mark.parametrize(
        ("shape", "dtype", "interpolation", "warped"),
        [((9, 7, 3), np.uint8, cv2.INTER_LINEAR, True), ((9, 7), np.uint8, cv2.INTER_LINEAR, False),
         ((9, 7, 3), np.float32, cv2.INTER_LINEAR, False),
         ((9, 7, 3), np.uint8, cv2.INTER_NEAREST_EXACT, False)],
    )  # fmt: skip
    def test_only_linear_uint8_colour_images_are_warped(
        self, shape: tuple[int, ...], dtype: Any, interpolation: int, warped: bool,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:  # fmt: skip
        calls: list[str] = []

        def counted(name: str, real: Any) -> Any:
            def call(*args: Any) -> Any:
                calls.append(name)
                return real(*args)

            return call

        monkeypatch.setattr(paint, "_RESIZE_BY_WARP", True)
        monkeypatch.setattr(cv2, "warpAffine", counted("warp", cv2.warpAffine))
        monkeypatch.setattr(cv2, "resize", counted("resize", cv2.resize))
        out = np.zeros((20, 20, *shape[2:]), dtype)
        resize_into(np.ones(shape, dtype), out[2:17, 1:12], interpolation)
        assert calls == ["warp" if warped else "resize"]
        assert (out[2:17, 1:12] == 1).all()

    @pytest.mark.parametrize("channels", [5, 7, 16])
    @pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32, np.float64])
    @pytest.mark.parametrize("mirrored", [False, True])
    def test_area_resizes_more_than_4_channels_4_at_a_time(
        self, channels: int, dtype: Any, mirrored: bool
    ) -> None:
        # cv2.resize asserts cn <= 4 for INTER_AREA: MosaicGrid(interpolation=INTER_AREA)
        # crashed on 5-channel images
        rng = np.random.default_rng(channels)
        crop = rng.integers(0, 200, (23, 31, channels)).astype(dtype)
        groups = [
            cv2.resize(np.ascontiguousarray(crop[:, :, k : k + 4]), (13, 9),
                       interpolation=cv2.INTER_AREA).reshape(9, 13, -1)
            for k in range(0, channels, 4)
        ]  # fmt: skip
        expected = np.concatenate(groups, axis=2)
        out = np.full((12, 20, channels), 7, dtype)
        resize_into(crop, out[1:10, 2:15], cv2.INTER_AREA, mirrored=mirrored)
        assert out[1:10, 2:15].tobytes() == (expected[:, ::-1] if mirrored else expected).tobytes()
        out[1:10, 2:15] = 7
        assert (out == 7).all()

    def test_the_warp_reads_the_crop_prefetched_and_paints_the_same_pixels(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        tile = _smooth(3, 40, 50)
        monkeypatch.setattr(paint, "_RESIZE_BY_WARP", True)
        direct = np.zeros((30, 30, 3), np.uint8)
        sx, sy = 35 / 23, 28 / 19
        inverse = np.array([[sx, 0.0, 0.5 * sx - 0.5], [0.0, sy, 0.5 * sy - 0.5]])
        cv2.warpAffine(tile[5:33, 10:45], inverse, (23, 19), direct[4:23, 3:26],
                       cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, cv2.BORDER_REPLICATE)  # fmt: skip
        seen = _warp_sources(monkeypatch)
        out = np.zeros((30, 30, 3), np.uint8)
        calls: list[np.ndarray] = []
        monkeypatch.setattr(paint, "prefetched", _recording(calls))
        resize_into(tile[5:33, 10:45], out[4:23, 3:26], cv2.INTER_LINEAR)
        ((source, read),) = seen
        (crop,) = calls
        assert source is crop
        assert np.shares_memory(source, tile)  # the tile itself, no copy
        assert np.array_equal(read, tile[5:33, 10:45])
        assert np.array_equal(out, direct)


class TestPaintImage:
    @given(main_cell=st.integers(0, 3), fx=st.floats(0.0, 0.99), fy=st.floats(0.0, 0.99),
           scales=st.lists(st.floats(0.3, 1.8), min_size=4, max_size=4),
           sizes=st.lists(st.tuples(st.integers(3, 60), st.integers(3, 60)), min_size=4,
                          max_size=4))  # fmt: skip
    def test_each_window_shows_its_tile_and_the_rest_is_fill(
        self, main_cell: int, fx: float, fy: float, scales: list[float],
        sizes: list[tuple[int, int]],
    ) -> None:  # fmt: skip
        config = build(output_size=(48, 64), center_range=(0.0, 1.0))
        layout = grid_layout(config, Plan(True, main_cell, [0, 1, 2, 3], [fx], [fy], scales),
                             sizes)  # fmt: skip
        images = [np.full((*size, 3), 10 * (k + 1), np.uint8) for k, size in enumerate(sizes)]
        out = paint_image(layout, images, config.canvas_hw, (114.0,), cv2.INTER_LINEAR)
        expected = np.full((48, 64, 3), 114, np.uint8)
        for k, window in enumerate(layout.windows):
            expected[window.dy0 : window.dy1, window.dx0 : window.dx1] = 10 * (k + 1)
        assert np.array_equal(out, expected)

    @given(main_cell=st.integers(0, 3), fx=st.floats(0.0, 0.99), fy=st.floats(0.0, 0.99),
           scales=st.lists(st.floats(0.3, 1.8), min_size=4, max_size=4),
           sizes=st.lists(st.tuples(st.integers(3, 60), st.integers(3, 60)), min_size=4,
                          max_size=4), channels=st.sampled_from([1, 3]))  # fmt: skip
    def test_a_flipped_layout_is_painted_mirrored(
        self, main_cell: int, fx: float, fy: float, scales: list[float],
        sizes: list[tuple[int, int]], channels: int,
    ) -> None:  # fmt: skip
        # pixel-exact on constant colours: each window and fill at its mirrored place
        config = build(output_size=(48, 64), center_range=(0.0, 1.0))
        layout = grid_layout(config, Plan(True, main_cell, [0, 1, 2, 3], [fx], [fy], scales),
                             sizes)  # fmt: skip
        images = [
            np.full((*size, channels), 10 * (k + 1), np.uint8) for k, size in enumerate(sizes)
        ]
        plain = paint_image(layout, images, config.canvas_hw, (114.0,), cv2.INTER_LINEAR)
        flipped = layout._replace(flipped=True)
        out = paint_image(flipped, images, config.canvas_hw, (114.0,), cv2.INTER_LINEAR)
        np.testing.assert_array_equal(out, plain[:, ::-1])

    @given(main_cell=st.integers(0, 3), fx=st.floats(0.0, 0.99), fy=st.floats(0.0, 0.99),
           scales=st.lists(st.floats(0.3, 1.8), min_size=4, max_size=4),
           sizes=st.lists(st.tuples(st.integers(3, 60), st.integers(3, 60)), min_size=4,
                          max_size=4), flipped=st.booleans())  # fmt: skip
    def test_rows_given_are_painted_as_ever_and_no_other_row_is_written(
        self, main_cell: int, fx: float, fy: float, scales: list[float],
        sizes: list[tuple[int, int]], flipped: bool,
    ) -> None:  # fmt: skip
        # the colour pass's rows (painted_rows): the others are its to set
        config = build(output_size=(48, 64), center_range=(0.0, 1.0))
        layout = grid_layout(config, Plan(True, main_cell, [0, 1, 2, 3], [fx], [fy], scales),
                             sizes)._replace(flipped=flipped)  # fmt: skip
        images = [np.full((*size, 3), 10 * (k + 1), np.uint8) for k, size in enumerate(sizes)]
        plain = paint_image(layout, images, config.canvas_hw, (114.0,), cv2.INTER_LINEAR)
        y0, y1 = painted_rows(layout)
        made = np.full((48, 64, 3), 7, np.uint8)  # the image to paint: 7 where not written
        with mock.patch.object(paint, "canvas", return_value=made):
            out = paint_image(
                layout, images, config.canvas_hw, (114.0,), cv2.INTER_LINEAR, (y0, y1)
            )
        np.testing.assert_array_equal(out[y0:y1], plain[y0:y1])
        assert (out[:y0] == 7).all()
        assert (out[y1:] == 7).all()

    @given(data=st.data(), dtype=st.sampled_from([np.uint8, np.uint16, np.float32, np.int64]))
    def test_each_window_is_painted_as_paint_window_paints_it(
        self, data: st.DataObject, dtype: Any
    ) -> None:
        # the loop resizes a window itself, or hands it to paint_window (the same size
        # across and down, by its scale: a copy; 8-byte pixels): the same pixels either
        # way, also for a window as wide as its crop but not as high, or the other way
        windows, images = [], []
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        for k in range(3):
            h, w = data.draw(st.integers(2, 20)), data.draw(st.integers(2, 20))
            sx0, sy0 = data.draw(st.integers(0, w - 1)), data.draw(st.integers(0, h - 1))
            sx1, sy1 = data.draw(st.integers(sx0 + 1, w)), data.draw(st.integers(sy0 + 1, h))
            across = data.draw(st.sampled_from([sx1 - sx0, data.draw(st.integers(1, 20))]))
            down = data.draw(st.sampled_from([sy1 - sy0, data.draw(st.integers(1, 20))]))
            windows.append(Window((h, w), sx0, sy0, sx1, sy1, 21 * k, 1, 21 * k + across,
                                  1 + down))  # fmt: skip
            images.append((rng.random((h, w, 3)) * 200).astype(dtype))
        layout = new_layout((windows, [], {}, [], False))
        made = np.zeros((22, 63, 3), dtype)
        with mock.patch.object(paint, "canvas", return_value=made):
            out = paint_image(layout, images, (22, 63), (0.0,), cv2.INTER_LINEAR)
        expected = np.zeros((22, 63, 3), dtype)
        for window, image in zip(windows, images, strict=True):
            paint_window(expected, image, window, cv2.INTER_LINEAR)
        np.testing.assert_array_equal(out, expected)


class TestWarpTile:
    @pytest.mark.parametrize("shape", [(12, 16), (12, 16, 1), (12, 16, 3), (12, 16, 6)])
    def test_writes_only_the_pixels_the_tile_owns(self, shape: tuple[int, ...]) -> None:
        turn = ((0.9, 0.3, 4.0), (-0.3, 0.9, 9.0))  # the canvas onto a 30 x 30 output
        tile = TileWarp(2, shape[:2], (0, 0, 16, 12), (16, 12, 0, 0), turn, (30, 30))
        owners = np.full((30, 30), 9, np.uint8)
        owners[5:20, 6:25] = 2
        out = np.zeros((30, 30, *shape[2:]), np.uint8)
        warp_tile(out, np.full(shape, 5, np.uint8), tile, owners, cv2.INTER_CUBIC)
        y0, y1, x0, x1 = tile.roi
        written = out.reshape(30, 30, -1)[..., 0] == 5
        inside = np.zeros((30, 30), dtype=bool)
        inside[y0:y1, x0:x1] = True
        assert (written == ((owners == 2) & inside)).all()
        assert set(np.unique(out).tolist()) == {0, 5}

    @pytest.mark.parametrize(
        "dtype", ["uint8", "int8", "uint16", "int16", "int32", "uint32", "int64", "float16",
                  "float32", "float64"],
    )  # fmt: skip
    @pytest.mark.parametrize("channels", [None, 1, 2, 3, 5])
    def test_nearest_picks_the_pixels_an_8_bit_images_does(
        self, dtype: str, channels: int | None
    ) -> None:
        # OpenCV's nearest warp of int8, int32, float64 (and of 2 or more than 4 channels)
        # rounded some ties the other way: a mask disagreed with its image
        index = np.arange(256).reshape(16, 16)  # each source pixel's own value
        values = (index - 128 if dtype == "int8" else index).astype(dtype)
        source = values if channels is None else np.repeat(values[:, :, None], channels, 2)
        rng = np.random.default_rng(0)
        wrong = 0
        for _ in range(150):
            angle, scale = rng.uniform(-np.pi, np.pi), rng.uniform(0.5, 2.5)
            a, b = scale * np.cos(angle), scale * np.sin(angle)
            turn = ((a, -b, rng.uniform(10, 30)), (b, a, rng.uniform(10, 30)))
            tile = TileWarp(0, (16, 16), (0, 0, 16, 16), (16, 16, 0, 0), turn, (40, 40))
            if not tile.visible:
                continue
            owners = np.zeros((40, 40), np.uint8)  # all the tile's
            expected = np.zeros((40, 40), np.uint8)
            warp_tile(expected, index.astype(np.uint8), tile, owners, cv2.INTER_NEAREST_EXACT)
            out = np.zeros((40, 40, *source.shape[2:]), source.dtype)
            warp_tile(out, source, tile, owners, cv2.INTER_NEAREST_EXACT)
            y0, y1, x0, x1 = tile.roi  # what it wrote
            picked = out[y0:y1, x0:x1].reshape(y1 - y0, x1 - x0, -1).astype(np.int64)
            picked += 128 if dtype == "int8" else 0
            for k in range(picked.shape[2]):
                wrong += int((picked[:, :, k] != expected[y0:y1, x0:x1]).sum())
        assert wrong == 0

    def test_the_warp_reads_the_crop_prefetched(self, monkeypatch: pytest.MonkeyPatch) -> None:
        turn = ((0.9, 0.3, 4.0), (-0.3, 0.9, 9.0))
        tile = TileWarp(2, (12, 16), (0, 0, 16, 12), (16, 12, 0, 0), turn, (30, 30))
        owners = np.full((30, 30), 2, np.uint8)
        image = _smooth(5, 12, 16)
        expected = np.zeros((30, 30, 3), np.uint8)
        warp_tile(expected, image.copy(), tile, owners, cv2.INTER_LINEAR)
        seen = _warp_sources(monkeypatch)
        out = np.zeros((30, 30, 3), np.uint8)
        calls: list[np.ndarray] = []
        monkeypatch.setattr(paint, "prefetched", _recording(calls))
        warp_tile(out, image, tile, owners, cv2.INTER_LINEAR)
        ((source, read),) = seen
        (crop,) = calls
        assert source is crop
        assert np.shares_memory(source, image)  # the tile itself, no copy
        cy0, cy1, cx0, cx1 = tile.crop
        assert np.array_equal(read, image[cy0:cy1, cx0:cx1])
        assert np.array_equal(out, expected)
