from __future__ import annotations

from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug import MosaicDataset
from rankaug._multi.parts import Part
from rankaug.boxes import all_inside
from rankaug.mosaic import few_boxes, targets
from rankaug.mosaic.layout import Window


def _past(side: int) -> float:
    """An edge at ``side`` past it by float rounding: float32's next (a hair below 0)."""
    if side == 0:
        return -1e-7
    return float(np.nextafter(np.float32(side), np.float32(side + 1)))


class TestRowByRow:
    @pytest.mark.parametrize(
        "flaw",
        ["none", "x0<0", "y0<0", "x0=w", "y0=h", "x1=0", "y1=0", "x1>w", "y1>h", "x1<x0",
         "y1<y0", "nan", "inf", "x1~w", "y1~h", "x0~0"],
    )  # fmt: skip
    @settings(max_examples=20)
    @given(data=st.data())
    def test_row_by_row_declines_exactly_where_all_inside_does(
        self, flaw: str, data: st.DataObject
    ) -> None:
        # the row-by-row loop checks each box as it maps it (all_inside's rule): a tile with
        # one box outside its image, inverted, NaN or infinite sends every box to the
        # vectorised path (clipped or refused there); boxes inside do not, nor (before:
        # they did) boxes whose edge lies past the image by float rounding ("~")
        unit = st.floats(0.0, 1.0)
        windows, tiles = [], []
        for index in range(2):
            h, w = data.draw(st.integers(2, 30)), data.draw(st.integers(2, 30))
            rows = []
            for _ in range(data.draw(st.integers(1, 3))):
                x0, x1 = sorted(data.draw(st.tuples(unit, unit)))
                y0, y1 = sorted(data.draw(st.tuples(unit, unit)))
                rows.append([x0 * (w - 1), y0 * (h - 1), 1 + x1 * (w - 1), 1 + y1 * (h - 1)])
            if index == 1 and flaw != "none":  # one box of the second tile goes wrong
                box = dict(zip(("x0", "y0", "x1", "y1"), rows[-1], strict=True))
                if flaw in ("x1<x0", "y1<y0"):  # inverted, inside the image
                    a, b, side = ("x0", "x1", w) if flaw == "x1<x0" else ("y0", "y1", h)
                    box[a] = min(box[b] + 0.5, side - 0.25)
                    box[b] = box[a] - 0.25
                elif flaw in ("nan", "inf"):
                    box[data.draw(st.sampled_from(list(box)))] = float(flaw)
                elif flaw[2] == "~":  # float32's edge after a scale, or a hair below 0
                    side = {"x1": w, "y1": h, "x0": 0}[flaw[:2]]
                    box[flaw[:2]] = _past(side)
                else:
                    bad = {"<0": -0.5, "=w": w, "=h": h, ">w": w + 0.5, ">h": h + 0.5, "=0": 0.0}
                    box[flaw[:2]] = float(bad[flaw[2:]])
                    if flaw[2] == "=":  # an empty box on the edge: only the strict bound fails
                        twin = {"x0": "x1", "y0": "y1", "x1": "x0", "y1": "y0"}[flaw[:2]]
                        box[twin] = box[flaw[:2]]
                rows[-1] = [box["x0"], box["y0"], box["x1"], box["y1"]]
            boxes = np.array(rows, np.float64)
            windows.append(Window((h, w), 0, 0, w, h, 5, 5, 5 + 2 * w, 5 + 2 * h))
            tiles.append(Part(index, np.zeros((h, w), np.uint8), boxes, {}, None, None,
                              None, {}))  # fmt: skip
        flawed = tiles[1]
        inside = flaw == "none" or "~" in flaw
        assert all_inside(flawed.boxes, flawed.image.shape[1], flawed.image.shape[0]) == inside
        found = few_boxes.row_by_row(windows, tiles)  # (the rule itself, on the boxes made)
        assert (found is None) == (not inside)

    @settings(max_examples=150)
    @given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]),
           flip_width=st.sampled_from([None, 97]))  # fmt: skip
    def test_boxes_outside_their_source_window_drop_as_the_vectorised_path_drops_them(
        self, data: st.DataObject, dtype: Any, flip_width: int | None
    ) -> None:
        # the row-by-row loop drops a box outside its tile's source window before it maps
        # it: the boxes kept, and their floats, are the vectorised path's, which maps and
        # tests every box; windows of any scale and empty ones, boxes on their edges and
        # a hair either side, tiles without boxes
        config = MosaicDataset([{"image": np.zeros((4, 4), np.uint8)}], seed=0).config
        windows, tiles = [], []
        for index in range(data.draw(st.integers(1, 4))):
            h, w = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 40))
            if data.draw(st.integers(0, 4)) == 0:
                window = Window.empty((h, w))
            else:
                sx0, sy0 = data.draw(st.integers(0, w - 1)), data.draw(st.integers(0, h - 1))
                sx1, sy1 = data.draw(st.integers(sx0 + 1, w)), data.draw(st.integers(sy0 + 1, h))
                dx0, dy0 = data.draw(st.integers(0, 60)), data.draw(st.integers(0, 60))
                dx1, dy1 = dx0 + data.draw(st.integers(1, 90)), dy0 + data.draw(st.integers(1, 90))
                window = Window((h, w), sx0, sy0, sx1, sy1, dx0, dy0, dx1, dy1)

            def coordinate(edges: tuple[int, int], side: int) -> st.SearchStrategy[float]:
                near = [float(np.nextafter(float(e), t)) for e in edges for t in (-1e9, 1e9)]
                near += [e + d for e in edges for d in (-0.5, -0.1, 0.1, 0.5) if 0 <= e + d <= side]
                return st.sampled_from([*map(float, edges), *near]) | st.floats(0.0, side)

            xs = coordinate((window.sx0, window.sx1), w)
            ys = coordinate((window.sy0, window.sy1), h)
            rows = [[*sorted(data.draw(st.tuples(xs, xs))), *sorted(data.draw(st.tuples(ys, ys)))]
                    for _ in range(data.draw(st.integers(0, 6)))]  # fmt: skip
            boxes = np.array(rows, np.float64).reshape(-1, 4)[:, [0, 2, 1, 3]].astype(dtype)
            # inside their image (the loop declines others: test_row_by_row_declines_...),
            # an edge past it by rounding included (both paths take it as inside)
            boxes = boxes[[all_inside(b[None].astype(np.float64), w, h) for b in boxes]]
            windows.append(window)
            tiles.append(Part(index, np.zeros((h, w), np.uint8), boxes, {}, None, None,
                              None, {}))  # fmt: skip
        counts = [len(t.boxes) for t in tiles]
        found = few_boxes.row_by_row(windows, tiles, flip_width)
        assert found is not None
        row_keep, row_kept = found
        keep, kept = targets._boxes(config, windows, tiles, counts, sum(counts), None,
                                           flip_width)  # fmt: skip
        assert isinstance(keep, np.ndarray)  # (no windows given: the vectorised path)
        assert row_kept.dtype == kept.dtype == np.float64
        assert row_kept.shape == kept.shape
        assert row_kept.tobytes() == kept.tobytes()  # bit for bit
        assert keep.all() if row_keep is None else row_keep == keep.tolist()

    def test_float32_edges_past_the_image_by_rounding_go_row_by_row_as_numpy_maps_them(
        self,
    ) -> None:
        # before: the loop's own strict rule declined a box ending at float32's 32.000004
        # (as 640 comes back as 640.00006 after a scale), though all_inside, the rule,
        # takes it as inside: every such mosaic went through numpy, the same boxes slower
        samples = []
        for index in range(4):
            edge = _past(32)
            boxes = np.array([[0.0, 0.0, edge, edge], [4.0, 3.0, 20.0, edge],
                              [_past(0), 8.0, 12.0, 30.0]], np.float32)  # fmt: skip
            samples.append({"image": np.full((32, 32, 3), 40 * index, np.uint8),
                            "bboxes": boxes, "labels": np.arange(3) + 10 * index})  # fmt: skip
        mosaic = MosaicDataset(samples, seed=3, output_size=64, keying="sample")
        real, calls = targets._pixel_boxes, []

        def vectorised(*args: Any) -> Any:  # only the numpy path reads the boxes this way
            calls.append(1)
            return real(*args)

        kept = 0
        for index in range(8):
            with mock.patch.object(targets, "_pixel_boxes", vectorised):
                fast = mosaic[index % 4]
                assert calls == []  # row by row
                with mock.patch.object(targets, "row_by_row", return_value=None):
                    numpy = mosaic[index % 4]  # the same draws ("sample" keying)
                assert calls == [1]
            calls.clear()
            assert fast["bboxes"].dtype == numpy["bboxes"].dtype == np.float32
            assert fast["bboxes"].tobytes() == numpy["bboxes"].tobytes()
            np.testing.assert_array_equal(fast["labels"], numpy["labels"])
            kept += len(fast["bboxes"])
        assert kept  # (boxes were kept, not only dropped)
