from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug import MosaicGrid, Targets
from rankaug.mosaic import MosaicAffine, MosaicDataset
from rankaug.mosaic.affine import AffineDraw
from rankaug.mosaic.fused import Warp, compose, fuse, invert
from rankaug.mosaic.layout import Layout, grid_layout
from rankaug.mosaic.plan import Plan
from tests.mosaic.painted import colour_of, grouped, painted_datasets
from tests.mosaic.test_config import build
from tests.mosaic.warped import (
    AFFINES,
    EDGE,
    TIE,
    apply,
    box_shows,
    is_aligned,
    is_flipped,
    landing,
    ownership,
    realised,
    source_points,
    warped_shows,
    with_hw,
)

GEOMETRY = st.fixed_dictionaries(
    {
        "output_size": st.tuples(st.integers(16, 72), st.integers(16, 72)),
        "grid": st.sampled_from([(1, 1), (2, 2), (2, 3), (3, 3)]),
        "scale_mode": st.sampled_from(["keep", "fit", "fill"]),
        "scale_range": st.sampled_from([(1.0, 1.0), (0.5, 1.5)]),
        "center_range": st.sampled_from([(0.25, 0.75), (0.0, 1.0)]),
        "p": st.sampled_from([1.0, 0.5]),
    }
)
COLOURS = [
    (200, 30, 30),
    (30, 200, 30),
    (30, 30, 200),
    (200, 200, 30),
    (30, 200, 200),
    (90, 9, 250),
]


@st.composite
def constant_tiles(draw: st.DrawFn) -> list[dict[str, Any]]:
    """1-6 images of one colour each, of random sizes."""
    sizes = st.tuples(st.integers(3, 90), st.integers(3, 90))
    return [
        {"image": np.full((*draw(sizes), 3), COLOURS[k], np.uint8)}
        for k in range(draw(st.integers(1, 6)))
    ]


def colour_table(record: dict[str, Any], owner: np.ndarray, fill: int = 114) -> np.ndarray:
    """What each output pixel must show: its owner's colour, or the fill."""
    colours = np.array([COLOURS[i] for i in record["indices"]] + [(fill,) * 3], np.uint8)
    return colours[owner]  # owner -1 takes the last row


class TestFusedPixels:
    @given(data=constant_tiles(), geometry=GEOMETRY, affine=AFFINES,
           interpolation=st.sampled_from([cv2.INTER_NEAREST_EXACT, cv2.INTER_LINEAR,
                                          cv2.INTER_CUBIC, cv2.INTER_LANCZOS4]),
           seed=st.integers(0, 2**32 - 1))  # fmt: skip
    def test_every_pixel_shows_its_tile_with_no_seam_and_no_bleeding(
        self, data: list[dict[str, Any]], geometry: dict[str, Any], affine: MosaicAffine,
        interpolation: int, seed: int,
    ) -> None:  # fmt: skip
        """A pixel shows the tile whose visible canvas window holds its centre's preimage
        (the fill where none does): no seam between tiles, no tile (nor the fill) blended
        into another's cell, whatever the interpolation."""
        mosaic = MosaicDataset(
            data,
            seed=seed,
            affine=affine,
            keying="sample",
            **grouped(geometry, interpolation=interpolation),
        )
        for index in range(len(data)):
            out = mosaic[index]
            record = out["mosaic"]
            assert out["image"].shape == (*geometry["output_size"], 3)
            owner, unsure = ownership(record, geometry["output_size"])
            expected = colour_table(record, owner)
            assert (out["image"][~unsure] == expected[~unsure]).all()

    @pytest.mark.parametrize(
        "affine",
        [MosaicAffine(scale=0.5, translate=0.3),
         MosaicAffine(degrees=30, shear=10, scale=0.5, translate=0.3),
         MosaicAffine(scale=0.5, translate=0.3, flip=1.0),
         MosaicAffine(degrees=30, shear=10, scale=0.5, translate=0.3, flip=0.5)],
    )  # fmt: skip
    def test_equals_yolo_canvas_then_warp_affine(self, affine: MosaicAffine) -> None:
        """With nearest neighbour and one colour per tile, the fused mosaic is YOLO's
        canvas (``canvas="yolo"``, the same draws) warped by the recorded matrix, exactly;
        and a letterboxed sample is the plain letterbox warped."""
        rng = np.random.default_rng(0)
        data = [{"image": np.full((int(rng.integers(20, 90)), int(rng.integers(20, 90)), 3),
                                  COLOURS[i], np.uint8)} for i in range(6)]  # fmt: skip
        kwargs: dict[str, Any] = {"output_size": 64, "keying": "sample", "p": 0.8}
        nearest = MosaicGrid(interpolation=cv2.INTER_NEAREST_EXACT)
        letterboxed = 0
        for seed in range(12):
            fused = MosaicDataset(data, seed=seed, affine=affine, layout=nearest, **kwargs)
            yolo = replace(nearest, canvas="yolo")
            canvas = MosaicDataset(data, seed=seed, layout=yolo, **kwargs)
            plain = MosaicDataset(data, seed=seed, layout=nearest, **kwargs)
            for i in range(len(data)):
                out = fused[i]
                applied = out["mosaic"]["applied"]
                letterboxed += not applied
                source = (canvas if applied else plain)[i]["image"]
                # output pixel index -> its centre -> the canvas -> canvas pixel index
                inverse = invert(out["mosaic"]["affine"]["matrix"])
                to_source = compose(
                    ((1, 0, -0.5), (0, 1, -0.5)), compose(inverse, ((1, 0, 0.5), (0, 1, 0.5)))
                )
                reference = cv2.warpAffine(
                    source, np.array(to_source), (64, 64), borderValue=(114, 114, 114),
                    flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
                )  # fmt: skip
                assert np.array_equal(out["image"], reference)
        assert letterboxed > 0

    def test_the_default_affine_is_a_resize_on_whole_pixels(self) -> None:
        data = [{"image": np.full((30, 40, 3), COLOURS[i], np.uint8)} for i in range(4)]
        mosaic = MosaicDataset(data, seed=0, output_size=32, affine=MosaicAffine())
        record = mosaic[1]["mosaic"]
        assert is_aligned(record)
        assert record["affine"]["shear"] == (0.0, 0.0)
        assert record["affine"]["angle"] == 0.0


class TestFusedTargets:
    @given(data=painted_datasets(), geometry=GEOMETRY, affine=AFFINES,
           seed=st.integers(0, 2**32 - 1))  # fmt: skip
    def test_boxes_have_pixels_show_them_and_none_is_missing(
        self, data: list[dict[str, Any]], geometry: dict[str, Any], affine: MosaicAffine,
        seed: int,
    ) -> None:  # fmt: skip
        mosaic = MosaicDataset(
            data,
            seed=seed,
            affine=affine,
            keying="sample",
            **grouped(geometry, interpolation=cv2.INTER_NEAREST_EXACT),
        )
        hw = geometry["output_size"]
        for index in range(len(data)):
            out = mosaic[index]
            image, boxes, labels = out["image"], out["bboxes"], out["labels"]
            record = with_hw(out["mosaic"], hw)
            assert boxes.shape == (len(labels), 4)
            assert (boxes[:, :2] >= 0).all()
            assert (boxes[:, 2] <= hw[1]).all()
            assert (boxes[:, 3] <= hw[0]).all()
            assert (boxes[:, 2:] - boxes[:, :2] > 5e-4).all()
            # where every source box must land, from the record alone, and whether it
            # shows a pixel (surely, possibly: kept if it does)
            expected, surely = [], Counter[int]()
            for k, source in enumerate(record["indices"]):
                size = data[source]["image"].shape[:2]
                for box, label in zip(data[source]["bboxes"].tolist(),
                                      data[source]["labels"].tolist(), strict=True):  # fmt: skip
                    landed = landing(record, k, box, size)
                    sure, maybe = _shows(record, k, box, landed, hw)
                    surely[label] += sure
                    expected += [(label, landed)] if maybe else []
                    _colour_check(out, record, k, box, label)
            found = Counter(labels.tolist())
            assert +surely <= found <= Counter(label for label, _ in expected)
            for box, label in zip(boxes.tolist(), labels.tolist(), strict=True):
                assert any(want == label and np.allclose(box, landed, atol=1e-4)
                           for want, landed in expected), (box, label)  # fmt: skip
            # instance masks: only pixels whose centres lie in their box
            assert out["masks"].shape == (len(labels), *hw)
            for box, instance in zip(boxes, out["masks"], strict=True):
                ys, xs = np.nonzero(instance)
                assert (xs + 0.5 >= box[0] - EDGE).all()
                assert (xs + 0.5 <= box[2] + EDGE).all()
                assert (ys + 0.5 >= box[1] - EDGE).all()
                assert (ys + 0.5 <= box[3] + EDGE).all()
            if is_aligned(record):  # the plain mosaic's rule: whole pixels inside show it
                for (x0, y0, x1, y1), label in zip(boxes, labels, strict=True):
                    inner = image[int(np.ceil(y0)) : int(y1), int(np.ceil(x0)) : int(x1)]
                    assert (inner == colour_of(int(label))).all()

    @given(data=painted_datasets(), geometry=GEOMETRY, affine=AFFINES,
           seed=st.integers(0, 2**32 - 1))  # fmt: skip
    def test_keypoints_land_with_their_tile_on_its_pixels(
        self, data: list[dict[str, Any]], geometry: dict[str, Any], affine: MosaicAffine,
        seed: int,
    ) -> None:  # fmt: skip
        affine = replace(affine, flip_index=(0,))  # one point per instance: none swaps
        with_points = []
        for sample in data:
            boxes = sample["bboxes"].astype(np.float64)
            centres = (boxes[:, :2] + boxes[:, 2:]) / 2
            with_points.append({**sample, "keypoints": centres, "kp_labels": sample["labels"]})
        mosaic = MosaicDataset(
            with_points,
            seed=seed,
            affine=affine,
            keying="sample",
            targets=Targets(keypoint_fields=("kp_labels",)),
            **grouped(geometry, interpolation=cv2.INTER_NEAREST_EXACT),
        )
        hw = geometry["output_size"]
        for index in range(len(data)):
            out = mosaic[index]
            record = out["mosaic"]
            points, labels = out["keypoints"], out["kp_labels"]
            assert points.shape == (len(labels), 2)
            rounded = [tuple(point) for point in np.round(points, 5).tolist()]
            found = Counter(zip(rounded, labels.tolist(), strict=True))
            must, may = _expected_keypoints(record, with_points, hw)
            assert found <= may
            assert must <= found
            for (x, y), label in zip(points.tolist(), labels.tolist(), strict=True):
                assert 0 <= (hw[1] - x if is_flipped(record) else x) < hw[1]  # as unflipped
                assert 0 <= y < hw[0]
                # on its colour where the pixel under it lies deep inside a kept box
                for x0, y0, x1, y1 in out["bboxes"][out["labels"] == label].tolist():
                    if x0 + 1 < x < x1 - 1 and y0 + 1 < y < y1 - 1 and is_aligned(record):
                        assert tuple(out["image"][int(y), int(x)]) == colour_of(label)


class TestFuse:
    def _layout(self, config: Any) -> Layout:
        plan = Plan(True, 1, [0, 1, 2, 3], [0.3], [0.6], [0.9, 1.2, 0.7, 1.0])
        return grid_layout(config, plan, [(30, 44), (50, 20), (17, 33), (40, 40)])

    @given(draw=st.builds(AffineDraw, st.just(0.0), st.floats(0.05, 2.0), st.just(0.0),
                          st.just(0.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0),
                          flip=st.just(False)))  # fmt: skip
    def test_axis_aligned_windows_and_fills_cover_the_output_exactly_once(
        self, draw: AffineDraw
    ) -> None:
        config = build(output_size=(40, 56), affine=MosaicAffine())
        layout = fuse(self._layout(config), draw, config.canvas_hw, config.image_hw)
        assert isinstance(layout, Layout)
        cover = np.zeros(config.image_hw, np.int64)
        for y0, y1, x0, x1 in layout.fills:
            cover[y0:y1, x0:x1] += 1
        for window in layout.windows:
            cover[window.dy0 : window.dy1, window.dx0 : window.dx1] += 1
        assert (cover == 1).all()

    @given(angle=st.floats(0.01, 180) | st.floats(-180, -0.01), scale=st.floats(0.1, 2.0),
           shear=st.tuples(st.floats(-40, 40), st.floats(-40, 40)),
           shift=st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)))  # fmt: skip
    def test_owners_are_the_windows_and_lie_in_their_tiles_regions(
        self, angle: float, scale: float, shear: tuple[float, float],
        shift: tuple[float, float],
    ) -> None:  # fmt: skip
        config = build(output_size=(40, 56), affine=MosaicAffine())
        draw = AffineDraw(angle, scale, *shear, *shift)
        layout = self._layout(config)
        warp = fuse(layout, draw, config.canvas_hw, config.image_hw)
        assert isinstance(warp, Warp)
        owner, unsure = ownership(layout.record, config.image_hw)
        owners = np.where(warp.owners == warp.nobody, -1, warp.owners.astype(np.int64))
        assert (owners[~unsure] == owner[~unsure]).all()
        for tile in warp.tiles:  # a tile's owned pixels are all in the region it paints
            y0, y1, x0, x1 = tile.roi
            inside = np.zeros(config.image_hw, dtype=bool)
            if tile.visible:
                inside[y0:y1, x0:x1] = True
            assert not ((warp.owners == tile.label) & ~inside).any()


TINY = 1e-9
"""Float error of the composed maps, in canvas pixels."""


def _shows(
    record: dict[str, Any],
    k: int,
    box: list[float],
    landed: tuple[float, ...] | None,
    hw: tuple[int, int],
) -> tuple[bool, bool]:
    """Whether tile ``k``'s source box is kept, surely and possibly: where it lands
    (``landed``, see :func:`landing`) it holds a pixel centre (rankaug.mosaic.centres),
    tested unmirrored; under a warp, a centre whose preimage is in the box, and the box
    wider and higher than the tolerance."""
    if landed is None:
        return False, False
    x0, y0, x1, y1 = landed
    if is_aligned(record):
        if is_flipped(record):  # the library tests the box before mirroring it
            x0, x1 = hw[1] - x1, hw[1] - x0
        return box_shows((x0, y0, x1, y1))
    sure, maybe = warped_shows(record, k, box, hw)
    wide = min(x1 - x0, y1 - y0)
    return sure and wide > 1e-3 + TIE, maybe and wide > 1e-3 - TIE


def _expected_keypoints(
    record: dict[str, Any], data: list[dict[str, Any]], hw: tuple[int, int]
) -> tuple[Counter[Any], Counter[Any]]:
    """The keypoints that must be kept and those that may be (the same, but for those
    within EDGE of a window's or the output's edge), from the record alone."""
    must: Counter[Any] = Counter()
    may: Counter[Any] = Counter()
    for k, source in enumerate(record["indices"]):
        size = data[source]["image"].shape[:2]
        points = data[source]["keypoints"]
        if is_aligned(record):  # the realised whole-pixel map, kept in its output window
            windows = realised(record, k, size, hw)
            if windows is None:
                continue
            sx0, sy0, sx1, sy1, ex0, ey0, ex1, ey1 = windows
            ox = (points[:, 0] - sx0) * ((ex1 - ex0) / (sx1 - sx0)) + ex0
            oy = (points[:, 1] - sy0) * ((ey1 - ey0) / (sy1 - sy0)) + ey0
            # kept in the unmirrored output window; a flip mirrors those kept
            keep = (ox >= ex0) & (ox < ex1) & (oy >= ey0) & (oy < ey1)
            if is_flipped(record):  # the resized output, mirrored
                ox = hw[1] - ox
            sure = keep
        else:  # the tile's map, kept in its visible canvas window and the output
            x0, y0, x1, y1 = record["dst"][k]
            ox, oy = apply(record["affine"]["maps"][k], points[:, 0], points[:, 1])
            cx, cy = apply(invert(record["affine"]["matrix"]), ox, oy)
            # kept: in the window, half open; may be kept: within float error of it (the
            # library composes the maps in another order: a point on the window's edge,
            # cx = 9 there, comes out here as 8.999999999999996)
            keep = (cx >= x0 - TINY) & (cx < x1 + TINY) & (cy >= y0 - TINY) & (cy < y1 + TINY)
            keep &= (ox >= -TINY) & (ox < hw[1] + TINY) & (oy >= -TINY) & (oy < hw[0] + TINY)
            sure = keep & (cx > x0 + EDGE) & (cx < x1 - EDGE) & (cy > y0 + EDGE)
            sure &= (cy < y1 - EDGE) & (ox > EDGE) & (ox < hw[1] - EDGE) & (oy > EDGE)
            sure &= oy < hw[0] - EDGE
            # and the pixel under it must be the tile's: certain away from every edge
            owner, unsure = ownership(record, hw)
            rows = np.clip(oy.astype(int), 0, hw[0] - 1)
            cols = np.clip(ox.astype(int), 0, hw[1] - 1)
            sure &= (owner[rows, cols] == k) & ~unsure[rows, cols]
        rows = zip(ox.tolist(), oy.tolist(), data[source]["kp_labels"].tolist(), keep.tolist(),
                   sure.tolist(), strict=True)  # fmt: skip
        for x, y, label, kept, certain in rows:
            key = ((round(x, 5), round(y, 5)), label)
            may[key] += kept
            must[key] += certain
    return +must, +may


def _colour_check(
    out: dict[str, Any], record: dict[str, Any], k: int, box: list[float], label: int
) -> None:
    """Pixels whose centres come from inside the box (nearest neighbour) show its colour,
    where tile ``k`` certainly owns them; the semantic mask holds its label there."""
    if is_aligned(record):
        return  # realised on whole pixels: checked against the kept boxes instead
    hw = out["image"].shape[:2]
    sx, sy = source_points(record, k, hw)
    owner, unsure = ownership(record, hw)
    x0, y0, x1, y1 = box
    inside = (sx > x0 + EDGE) & (sx < x1 - EDGE) & (sy > y0 + EDGE) & (sy < y1 - EDGE)
    mine = inside & (owner == k) & ~unsure
    assert (out["image"][mine] == colour_of(label)).all()
    assert (out["mask"][mine] == label).all()
