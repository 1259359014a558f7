from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rankaug.mosaic.config import MosaicConfig
from rankaug.mosaic.layout import Window, grid_layout, letterbox_layout, lines
from rankaug.mosaic.plan import Plan
from tests.mosaic.test_config import build

SIZES = st.tuples(st.integers(1, 90), st.integers(1, 90))


@st.composite
def layouts(draw: st.DrawFn) -> tuple[MosaicConfig, Plan, list[tuple[int, int]]]:
    grid = draw(st.sampled_from([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3)]))
    rows, cols = grid
    config = build(
        grid=grid,
        output_size=draw(st.tuples(st.integers(rows, 90), st.integers(cols, 90))),
        canvas=draw(st.sampled_from(["output", "yolo"])),
        scale_mode=draw(st.sampled_from(["keep", "fit", "fill"])),
        center_range=draw(st.sampled_from([(0.25, 0.75), (0.0, 1.0), (0.5, 0.5)])),
    )
    unit = st.floats(0.0, 1.0, exclude_max=True)
    cells = rows * cols
    plan = Plan(
        True,
        draw(st.integers(0, cells - 1)),
        list(range(cells)),
        draw(st.lists(unit, min_size=cols - 1, max_size=cols - 1)),
        draw(st.lists(unit, min_size=rows - 1, max_size=rows - 1)),
        draw(st.lists(st.floats(0.3, 2.0), min_size=cells, max_size=cells)),
    )
    return config, plan, draw(st.lists(SIZES, min_size=cells, max_size=cells))


class TestLines:
    @given(fractions=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
           extent=st.integers(1, 500))  # fmt: skip
    def test_interior_lines_fall_in_their_ranges(self, fractions: list[float], extent: int) -> None:
        found = lines(fractions, 4, extent, 0.25, 0.75)
        assert found[0] == 0
        assert found[-1] == extent
        assert found == sorted(found)
        for k, line in enumerate(found[1:-1], start=1):
            # line k lies in [(k - 1 + 0.5) / 4, (k - 1 + 1.5) / 4] of the extent (rounded)
            assert (k - 0.5) / 4 * extent - 0.5 <= line <= (k + 0.5) / 4 * extent + 0.5


class TestGridLayout:
    @given(layout_input=layouts())
    def test_windows_and_fills_cover_the_canvas_exactly_once(
        self, layout_input: tuple[MosaicConfig, Plan, list[tuple[int, int]]]
    ) -> None:
        config, plan, sizes = layout_input
        layout = grid_layout(config, plan, sizes)
        height, width = config.canvas_hw
        cover = np.zeros((height, width), np.int64)
        for y0, y1, x0, x1 in layout.fills:
            cover[y0:y1, x0:x1] += 1
        for window, (th, tw) in zip(layout.windows, sizes, strict=True):
            cover[window.dy0 : window.dy1, window.dx0 : window.dx1] += 1
            empty = window.dx0 == window.dx1 or window.dy0 == window.dy1
            assert (window.kx == 0) == empty  # 0: an empty window, nothing drawn
            assert empty or 0 <= window.sx0 < window.sx1 <= tw
            assert empty or 0 <= window.sy0 < window.sy1 <= th
        assert (cover == 1).all()

    @given(layout_input=layouts())
    def test_the_record_is_the_geometry(
        self, layout_input: tuple[MosaicConfig, Plan, list[tuple[int, int]]]
    ) -> None:
        config, plan, sizes = layout_input
        layout = grid_layout(config, plan, sizes)
        record = layout.record
        rows, cols = config.layout.grid
        assert record["applied"] is True
        assert record["indices"] == plan.indices
        assert sorted(record["cells"]) == [(r, c) for r in range(rows) for c in range(cols)]
        assert record["cells"][0] == divmod(plan.main_cell, cols)
        assert len(record["splits_x"]) == cols - 1
        assert len(record["splits_y"]) == rows - 1
        for window, src, dst, (sw, sh, ox, oy) in zip(
            layout.windows, record["src"], record["dst"], layout.placements, strict=True
        ):
            if window.kx:  # the window is the part of the placed tile inside its cell
                assert ox <= window.dx0 < window.dx1 <= ox + sw
                assert oy <= window.dy0 < window.dy1 <= oy + sh
                assert src == (window.sx0, window.sy0, window.sx1, window.sy1)
                assert dst == (window.dx0, window.dy0, window.dx1, window.dy1)
            else:
                assert src == (0, 0, 0, 0)
                assert dst[0] == dst[2]

    def test_a_2x2_mosaic_puts_every_inner_corner_on_the_centre(self) -> None:
        config = build(output_size=100, center_range=(0.5, 0.5), scale_mode="fit",
                       scale_range=(0.5, 0.5))  # fmt: skip
        plan = Plan(True, 0, [0, 1, 2, 3], [0.3], [0.9], [0.5] * 4)
        layout = grid_layout(config, plan, [(40, 40)] * 4)
        assert layout.record["center"] == (50, 50)
        assert [(w.dx0, w.dy0, w.dx1, w.dy1) for w in layout.windows] == [
            (25, 25, 50, 50), (50, 25, 75, 50), (25, 50, 50, 75), (50, 50, 75, 75),
        ]  # fmt: skip


class TestLetterboxLayout:
    def test_fit_and_centred(self) -> None:
        layout = letterbox_layout(build(output_size=64), 5, (20, 40))
        (window,) = layout.windows
        assert (window.dx0, window.dy0, window.dx1, window.dy1) == (0, 16, 64, 48)
        assert layout.fills == [(0, 64, 0, 64)]
        assert layout.record["indices"] == [5]
        assert layout.record["applied"] is False
        assert layout.record["scales"] == [1.6]


class TestWindow:
    def test_the_map_takes_the_source_window_onto_the_output_window(self) -> None:
        window = Window((30, 40), 4, 6, 24, 16, 10, 20, 50, 40)
        corners = np.array([[4.0, 6.0, 24.0, 16.0]])
        assert window.map_xy(corners).tolist() == [[10.0, 20.0, 50.0, 40.0]]
        kx, bx = window.row[2], window.row[6]
        assert 4 * kx + bx == 10.0
        assert window.row[:2] == (40, 30)

    def test_empty(self) -> None:
        window = Window.empty((5, 5))
        assert window.kx == window.ky == 0.0
