from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug import HSVJitter, MosaicAffine, MosaicDataset, MosaicGrid
from rankaug.datasets import SyntheticDetection
from rankaug.hsv import HSVDraw
from rankaug.mosaic.colour import colour_output, painted_rows
from rankaug.mosaic.fused import TileWarp, Warp
from rankaug.mosaic.layout import Layout, Window

CASES = [  # the plain mosaic, a letterbox, the fused affine: aligned (flipped) or not
    ({"p": 1.0, "output_size": (72, 56)}, False),  # and whether rows of fill alone come
    ({"p": 0.0, "output_size": (90, 40)}, True),
    ({"p": 1.0, "layout": MosaicGrid(canvas="yolo", flip=0.5, fill=(114, 114, 114))}, True),
    ({"p": 1.0, "affine": MosaicAffine(scale=0.6, translate=0.2, flip=0.5)}, True),
    ({"p": 1.0, "affine": MosaicAffine(degrees=20, scale=0.5)}, False),
    ({"p": 0.0, "affine": MosaicAffine(degrees=5, scale=0.9)}, True),
    ({"p": 0.0, "affine": MosaicAffine(scale=0.5)}, True),
]


def _rows_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The shapes ``HSVJitter.apply`` is called on, from now on."""
    seen: list[tuple[int, ...]] = []
    apply = HSVJitter.apply

    def spy(self: HSVJitter, image: np.ndarray, draw: HSVDraw, **kwargs: Any) -> np.ndarray:
        seen.append(image.shape)
        return apply(self, image, draw, **kwargs)

    monkeypatch.setattr(HSVJitter, "apply", spy)
    return seen


class TestPaintedRows:
    def test_the_span_of_the_painted_windows(self) -> None:
        windows = [
            Window((8, 8), 0, 0, 8, 8, 0, 5, 4, 9),
            Window((8, 8), 0, 0, 8, 8, 4, 2, 9, 7),
            Window((8, 8), 0, 0, 8, 8, 3, 12, 3, 14),  # no width: paints nothing
            Window.empty((8, 8)),
        ]
        assert painted_rows(Layout(windows, [], {}, [])) == (2, 9)  # type: ignore[typeddict-item]
        assert painted_rows(Layout(windows[2:], [], {}, [])) == (0, 0)  # type: ignore[typeddict-item]

    @given(st.lists(st.tuples(*[st.integers(0, 30)] * 4), max_size=5))
    def test_the_min_and_max_of_the_painted_rows(self, rects: list[tuple[int, ...]]) -> None:
        # the rule the comparisons are written out for: any windows, empty ones among them
        windows = [Window((40, 40), 0, 0, 40, 40, x0, y0, x1, y1) for x0, y0, x1, y1 in rects]
        spans = [(w.dy0, w.dy1) for w in windows if w.dy1 > w.dy0 and w.dx1 > w.dx0]
        want = (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else (0, 0)
        assert painted_rows(Layout(windows, [], {}, [])) == want  # type: ignore[typeddict-item]

    def test_the_span_of_the_visible_tiles_of_a_warp(self) -> None:
        turn = ((0.8, -0.6, 30.0), (0.6, 0.8, 4.0))
        tiles = [
            TileWarp(0, (10, 10), (0, 0, 10, 10), (10, 10, 0, 0), turn, (64, 64)),
            TileWarp(1, (10, 10), (5, 5, 5, 9), (10, 10, 0, 0), turn, (64, 64)),  # empty
        ]
        assert tiles[0].visible
        assert not tiles[1].visible
        warp = Warp(tiles, np.zeros((64, 64), np.uint8), 255, turn, {})  # type: ignore[typeddict-item]
        assert painted_rows(warp) == tiles[0].roi[:2]


class TestColour:
    @pytest.mark.parametrize(("kwargs", "fill_rows"), CASES)
    def test_the_whole_image_jittered_converting_only_the_painted_rows(
        self, kwargs: dict[str, Any], fill_rows: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data = SyntheticDetection(8, image_size=40)
        jitter = HSVJitter(0.5, 0.7, 0.4)
        options: dict[str, Any] = {"output_size": 64, **kwargs}
        coloured = MosaicDataset(data, seed=1, keying="sample", color=jitter, **options)
        plain = MosaicDataset(data, seed=1, keying="sample", **options)
        seen = _rows_seen(monkeypatch)
        fewer = 0
        for index in range(8):
            out, ref = coloured[index], plain[index]
            np.testing.assert_array_equal(
                out["image"], jitter.replay(ref["image"], out["mosaic"]["color"])
            )
            height, width = ref["image"].shape[:2]
            converted = seen[-2]  # the rows the mosaic converted; then the replay's image
            assert converted[1:] == (width, 3)
            rows = (ref["image"] == 114).all(axis=(1, 2))
            assert converted[0] >= height - int(rows.sum())  # never a painted row left out
            fewer += converted[0] < height
        assert (fewer > 0) == fill_rows  # rows of fill alone are not converted

    @pytest.mark.parametrize("fill", [(1.0, 2.0, 3.0), (114.5,)])
    def test_a_fill_that_is_no_grey_converts_the_whole_image(
        self, fill: tuple[float, ...], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        image = np.zeros((20, 10, 3), np.uint8)
        image[:] = np.array(fill, np.float64).astype(np.uint8)
        image[8:12] = (200, 10, 60)
        layout = Layout([Window((4, 10), 0, 0, 10, 4, 0, 8, 10, 12)], [], {}, [])  # type: ignore[typeddict-item]
        jitter, draw = HSVJitter(0.5, 0.7, 0.4), HSVDraw(0.2, 0.5, 0.3)
        expected = jitter.apply(image, draw)
        seen = _rows_seen(monkeypatch)
        colour_output(image, layout, jitter, draw, fill)
        assert seen == [(20, 10, 3)]
        np.testing.assert_array_equal(image, expected)

    @settings(max_examples=40, deadline=None)
    @given(
        grey=st.integers(0, 255),
        rows=st.tuples(st.integers(0, 12), st.integers(0, 12)).map(sorted),
        gains=st.tuples(*[st.floats(-1.0, 1.0)] * 3),
        order=st.sampled_from(["rgb", "bgr"]),
    )
    def test_rows_of_fill_alone_get_the_jittered_grey(
        self, grey: int, rows: list[int], gains: tuple[float, float, float], order: Any
    ) -> None:
        # pixel-exact on constant colours: a grey image with one painted band
        y0, y1 = rows
        image = np.full((12, 70, 3), grey, np.uint8)
        image[y0:y1] = np.linspace(0, 255, 70 * 3).reshape(1, 70, 3).astype(np.uint8)
        window = Window((max(y1 - y0, 1), 70), 0, 0, 70, max(y1 - y0, 1), 0, y0, 70, y1)
        layout = Layout([window if y1 > y0 else Window.empty((1, 70))], [], {}, [])  # type: ignore[typeddict-item]
        jitter, draw = HSVJitter(1.0, 1.0, 1.0, order), HSVDraw(*gains)
        expected = jitter.apply(image, draw)
        colour_output(image, layout, jitter, draw, (float(grey),))
        np.testing.assert_array_equal(image, expected)

    def test_the_image_is_checked_even_with_nothing_painted(self) -> None:
        layout = Layout([Window.empty((4, 4))], [], {}, [])  # type: ignore[typeddict-item]
        image = np.zeros((4, 4, 3), np.float32)
        with pytest.raises(TypeError, match="image must have dtype uint8"):
            colour_output(image, layout, HSVJitter(), HSVDraw(0, 0, 0), (0.0,))

    def test_where_opencv_keeps_no_grey_the_whole_image_is_converted(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(HSVJitter, "grey", lambda self, value, draw: None)
        mosaic = MosaicDataset(
            SyntheticDetection(4, image_size=32), seed=0, output_size=48,
            affine=MosaicAffine(scale=0.5), color=HSVJitter(),
        )  # fmt: skip
        seen = _rows_seen(monkeypatch)
        for index in range(4):
            mosaic[index]
        assert seen == [(48, 48, 3)] * 4

    def test_the_grid_flip_leaves_the_rows_alone(self) -> None:
        data = SyntheticDetection(4, image_size=32)
        options: dict[str, Any] = {"seed": 0, "output_size": 48, "keying": "sample"}
        jitter = HSVJitter(0.5, 0.5, 0.5)
        flipped = MosaicDataset(data, layout=MosaicGrid(flip=1.0), color=jitter, **options)
        plain = MosaicDataset(data, layout=MosaicGrid(flip=1.0), **options)
        for index in range(4):
            out = flipped[index]
            expected = jitter.replay(plain[index]["image"], out["mosaic"]["color"])
            np.testing.assert_array_equal(out["image"], expected)
