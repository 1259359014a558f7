from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug.mosaic.fused import TileWarp
from rankaug.mosaic.layout import Window, grid_layout
from rankaug.mosaic.paint import canvas, fill, paint_image, paint_window, warp_tile
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
