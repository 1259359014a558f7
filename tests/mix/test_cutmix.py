from __future__ import annotations

from typing import Any
from unittest import mock

import cv2
import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from PIL import Image

from rankaug import SampleError, Targets
from rankaug.mix import CutMixDataset, MixUpDataset
from rankaug.mix.base import PairPlan
from rankaug.mix.cutmix import rectangle, uncovered
from rankaug.polygons import fill, resample
from tests.mix.painted import KINDS, flat_sample


class TestRectangle:
    @given(
        h=st.integers(1, 64), w=st.integers(1, 64), lam=st.floats(0, 1),
        ux=st.floats(0, 1, exclude_max=True), uy=st.floats(0, 1, exclude_max=True),
    )  # fmt: skip
    def test_inside_the_image_with_the_drawn_area(
        self, h: int, w: int, lam: float, ux: float, uy: float
    ) -> None:
        x0, y0, x1, y1 = rectangle((h, w), lam, ux, uy)
        assert 0 <= x0 <= x1 <= w
        assert 0 <= y0 <= y1 <= h
        side = np.sqrt(1 - lam)
        assert abs((x1 - x0) - w * side) <= 0.5
        assert abs((y1 - y0) - h * side) <= 0.5

    def test_the_uniforms_place_it_from_edge_to_edge(self) -> None:
        assert rectangle((10, 10), 0.75, 0.0, 0.0) == (0, 0, 5, 5)
        assert rectangle((10, 10), 0.75, 0.9999, 0.9999) == (5, 5, 10, 10)


class TestUncovered:
    def test_visible_area_and_tight_box(self) -> None:
        boxes = np.array(
            [
                [0.0, 0.0, 10.0, 10.0],  # right half covered across its height
                [0.0, 0.0, 10.0, 10.0],  # a corner covered: L-shaped remainder
                [6.0, 6.0, 8.0, 8.0],  # inside: nothing visible
                [20.0, 20.0, 30.0, 30.0],  # untouched
            ]
        )
        for rect, area0, tight0 in (
            ((5, 0, 10, 10), 50.0, [0.0, 0.0, 5.0, 10.0]),
            ((5, 5, 10, 10), 75.0, [0.0, 0.0, 10.0, 10.0]),
            ((0, 5, 10, 12), 50.0, [0.0, 0.0, 10.0, 5.0]),
        ):
            area, tight = uncovered(boxes[:1], rect)
            assert area.tolist() == [area0]
            assert tight.tolist() == [tight0]
        area, tight = uncovered(boxes, (5, 5, 10, 10))
        assert area.tolist() == [75.0, 75.0, 0.0, 100.0]
        assert tight[3].tolist() == [20.0, 20.0, 30.0, 30.0]


def flat_dataset(count: int, dtype: Any = np.uint8, channels: int | None = 3) -> list[Any]:
    return [
        flat_sample(i, (12, 16), 10 * (i + 1), dtype=dtype, channels=channels) for i in range(count)
    ]


class TestCutMixPixels:
    @given(kind=KINDS, seed=st.integers(0, 2**64 - 1))
    def test_inside_the_rectangle_the_partner_outside_the_main(
        self, kind: tuple[Any, int | None, float], seed: int
    ) -> None:
        dtype, channels, _ = kind
        data = flat_dataset(4, dtype, channels)
        cutmix = CutMixDataset(data, seed=seed, keying="sample")
        for index in range(len(data)):
            out = cutmix[index]
            main, partner = out["cutmix"]["indices"]
            x0, y0, x1, y1 = out["cutmix"]["rect"]
            inside = np.zeros((12, 16), bool)
            inside[y0:y1, x0:x1] = True
            image = out["image"]
            assert image.dtype == np.dtype(dtype)
            assert (image[inside] == data[partner]["image"].flat[0]).all()
            assert (image[~inside] == data[main]["image"].flat[0]).all()
            assert (out["mask"][inside] == partner + 1).all()
            assert (out["mask"][~inside] == main + 1).all()
            assert out["cutmix"]["ratio"] == 1 - inside.mean()


class FixedCut(CutMixDataset[Any]):
    """CutMix with the draws fixed: the partner is the other of two samples, and the
    rectangle of a 20x20 image is its top-right quarter, (10, 0, 20, 10)."""

    def plan(self, index: int, rng: np.random.Generator, epoch: int) -> PairPlan:
        return PairPlan(True, (index, 1 - index), (0.95, 0.0), (0.75,))


class PlacedCut(CutMixDataset[Any]):
    """CutMix of two samples with the uniforms and ``lam`` given (``draws``)."""

    def __init__(self, data: Any, *, draws: Any, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.draws = draws

    def plan(self, index: int, rng: np.random.Generator, epoch: int) -> PairPlan:
        return PairPlan(True, (index, 1 - index), *self.draws)


class TestCutMixTargets:
    def cut(self, main_boxes: list[Any], partner_boxes: list[Any], **kwargs: float) -> Any:
        data = [
            flat_sample(0, (20, 20), 10, boxes=main_boxes),
            flat_sample(1, (20, 20), 200, boxes=partner_boxes),
        ]
        for sample in data:
            sample["keypoints"] = np.array([[2.0, 2.0], [15.0, 5.0], [12.0, 15.0]])
            sample["kp_owner"] = np.full(3, sample["labels"][0])
        targets = Targets(keypoint_fields=("kp_owner",), **kwargs)
        out = FixedCut(data, seed=0, targets=targets)[0]
        assert out["cutmix"]["rect"] == (10, 0, 20, 10)
        return out, data

    def test_main_boxes_by_visibility_partner_boxes_clipped(self) -> None:
        out, data = self.cut(
            [(0, 0, 8, 8), (6, 2, 16, 8), (12, 2, 18, 6)],
            [(2, 2, 6, 6), (8, 4, 14, 8), (15, 1, 19, 9)],
            min_visibility=0.3,
        )
        # main: untouched; 40% visible, shrunk to its visible part; hidden
        # partner: outside the rectangle; clipped to it (2/3 visible); inside
        assert out["bboxes"].tolist() == [
            [0.0, 0.0, 8.0, 8.0], [6.0, 2.0, 10.0, 8.0],
            [10.0, 4.0, 14.0, 8.0], [15.0, 1.0, 19.0, 9.0],
        ]  # fmt: skip
        assert out["labels"].tolist() == [0, 0, 1, 1]
        masks = out["masks"]
        assert masks.shape == (4, 20, 20)
        assert not masks[:2, :10, 10:].any()  # the main's masks lose the rectangle
        outside = np.ones((20, 20), bool)
        outside[:10, 10:] = False
        assert not masks[2:, outside].any()  # the partner's keep only the rectangle
        np.testing.assert_array_equal(masks[0], data[0]["masks"][0])
        np.testing.assert_array_equal(masks[3], data[1]["masks"][2])

    def test_masks_left_empty_drop_their_instance_and_changed_ones_get_their_pixels_box(
        self,
    ) -> None:
        main = flat_sample(0, (20, 20), 10, boxes=[(1, 1, 19, 8), (4, 12, 8, 16), (2, 2, 16, 8)])
        partner = flat_sample(
            1, (20, 20), 200, boxes=[(5, 3, 15, 9), (12, 2, 18, 8), (6, 4, 14, 8)]
        )
        main["masks"][0] = 0
        main["masks"][0, 3:6, 12:16] = 1  # all in the rectangle: nothing left
        main["masks"][2] = 0
        main["masks"][2, 2:4, 2:16] = 1  # an L: rows 2 and 3, then columns 12 to 15
        main["masks"][2, 2:8, 12:16] = 1
        partner["masks"][0] = 0
        partner["masks"][0, 3:9, 5:9] = 1  # all left of the rectangle: nothing shows
        partner["masks"][2] = 0
        partner["masks"][2, 4, 6:14] = 1  # row 4, and columns 6 and 7 below it
        partner["masks"][2, 4:8, 6:8] = 1
        out = FixedCut([main, partner], seed=0)[0]
        # the box rule alone keeps all six (the first two shrunk to (1, 1, 10, 8) and
        # (2, 2, 10, 8), the partner's clipped); the masks drop the two with no pixel
        assert out["labels"].tolist() == [0, 0, 1, 1]
        assert out["bboxes"].tolist() == [
            [4.0, 12.0, 8.0, 16.0], [2.0, 2.0, 10.0, 4.0],
            [12.0, 2.0, 18.0, 8.0], [10.0, 4.0, 14.0, 5.0],
        ]  # fmt: skip
        for mask, box in zip(out["masks"], out["bboxes"], strict=True):
            ys, xs = np.nonzero(mask)
            assert [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1] == box.tolist()

    def test_an_untouched_mask_keeps_its_box(self) -> None:
        # the rectangle covers the box across its height, but none of its mask's pixels
        main = flat_sample(0, (20, 20), 10, boxes=[(5, 2, 18, 6)])
        main["masks"][0, :, 9:] = 0
        out = FixedCut([main, flat_sample(1, (20, 20), 200, boxes=[(1, 12, 4, 16)])], seed=0)[0]
        assert out["labels"].tolist() == [0]
        assert out["bboxes"].tolist() == [[5.0, 2.0, 18.0, 6.0]]
        np.testing.assert_array_equal(out["masks"][0], main["masks"][0])

    def test_min_visibility_is_measured_against_the_full_box(self) -> None:
        out, _ = self.cut([(6, 2, 16, 8)], [(8, 4, 14, 8)], min_visibility=0.5)
        # 40% of the main box and 2/3 of the partner's stay visible
        assert out["bboxes"].tolist() == [[10.0, 4.0, 14.0, 8.0]]
        assert out["labels"].tolist() == [1]

    def test_the_filters_apply_to_every_output_mixed_or_not(self) -> None:
        # the 2x2 box (area 4) lies left of the rectangle: min_area=5 drops it either way
        data = [
            flat_sample(0, (20, 20), 10, boxes=[(1, 12, 3, 14), (2, 2, 8, 8)]),
            flat_sample(1, (20, 20), 200, boxes=[(12, 2, 18, 8)]),
        ]
        for sample in data:
            sample["keypoints"] = np.array([[2.0, 13.0]])
        targets = Targets(min_area=5.0)
        mixed = FixedCut(data, seed=0, targets=targets)[0]
        alone = CutMixDataset(data, seed=0, p=0.0, targets=targets)[0]
        assert mixed["cutmix"]["applied"] is True
        assert alone["cutmix"]["applied"] is False
        assert mixed["bboxes"].tolist() == [[2.0, 2.0, 8.0, 8.0], [12.0, 2.0, 18.0, 8.0]]
        assert alone["bboxes"].tolist() == [[2.0, 2.0, 8.0, 8.0]]
        assert alone["labels"].tolist() == [0]
        np.testing.assert_array_equal(alone["masks"], data[0]["masks"][1:])
        np.testing.assert_array_equal(alone["image"], data[0]["image"])
        np.testing.assert_array_equal(alone["mask"], data[0]["mask"])
        assert alone["keypoints"].tolist() == [[2.0, 13.0]]  # keypoints are not boxes

    def test_an_unmixed_output_that_passes_the_filters_is_as_it_was(self) -> None:
        # every box of an unmixed sample shows whole: min_visibility keeps them all, and
        # without filters even a box of no width is given back
        for targets, boxes in (
            (Targets(min_visibility=0.9), [(1, 12, 3, 14), (2, 2, 8, 8)]),
            (Targets(), [(4, 4, 4, 9), (2, 2, 8, 8)]),
        ):
            data = [flat_sample(i, (20, 20), 10 + i, boxes=boxes) for i in range(2)]
            out = CutMixDataset(data, seed=0, p=0.0, targets=targets)[0]
            np.testing.assert_array_equal(out["bboxes"], data[0]["bboxes"])
            np.testing.assert_array_equal(out["masks"], data[0]["masks"])
            assert out["labels"].tolist() == [0, 0]

    def test_a_box_of_no_area_the_rectangle_leaves_alone_is_kept_as_unmixed(self) -> None:
        # the line box at x=2 lies left of the rectangle (6, 6, 28, 28): the mix keeps it
        # as the unmixed output does; one the rectangle runs through is dropped, as are
        # the partner's (clipped, as boxes of no area); one on its edge is left alone
        def sample(index: int, boxes: list[Any]) -> dict[str, Any]:
            image = np.arange(32 * 32 * 3, dtype=np.uint8).reshape(32, 32, 3) + 100 * index
            bboxes = np.array(boxes, np.float32)
            return {"image": image, "bboxes": bboxes, "labels": 7 + np.arange(len(boxes))}

        data = [sample(0, [[2, 2, 2, 10], [3, 3, 8, 8]]), sample(1, [[2, 2, 2, 10], [3, 3, 8, 8]])]
        alone = CutMixDataset(data, seed=0, p=0)[0]
        mixed = CutMixDataset(data, seed=0, p=1)[0]
        assert mixed["cutmix"]["rect"] == (6, 6, 28, 28)
        assert alone["bboxes"].tolist() == [[2.0, 2.0, 2.0, 10.0], [3.0, 3.0, 8.0, 8.0]]
        assert alone["labels"].tolist() == [7, 8]
        np.testing.assert_array_equal(alone["image"], data[0]["image"])
        assert mixed["bboxes"].tolist() == [
            [2.0, 2.0, 2.0, 10.0], [3.0, 3.0, 8.0, 8.0], [6.0, 6.0, 8.0, 8.0],
        ]  # fmt: skip
        assert mixed["labels"].tolist() == [7, 8, 8]
        expected = data[0]["image"].copy()
        expected[6:28, 6:28] = data[1]["image"][6:28, 6:28]
        np.testing.assert_array_equal(mixed["image"], expected)
        # left of it, through it, on its left edge, below it
        lines = [[2, 2, 2, 10], [10, 2, 10, 12], [6, 8, 6, 12], [3, 30, 20, 30]]
        data = [sample(0, lines), sample(1, [[10, 10, 10, 20], [3, 3, 8, 8]])]
        for targets, pasted in (
            (Targets(), [[6.0, 6.0, 8.0, 8.0]]),
            (Targets(min_visibility=0.5), []),
        ):
            mixed = CutMixDataset(data, seed=0, p=1, targets=targets)[0]
            alone = CutMixDataset(data, seed=0, p=0, targets=targets)[0]
            assert mixed["bboxes"].tolist() == [lines[0], lines[2], lines[3], *pasted]
            assert mixed["labels"].tolist() == [7, 9, 10, 8][: 3 + len(pasted)]
            assert alone["bboxes"].tolist() == lines  # every box shows whole
        for p in (0, 1):  # min_area measures each box as it shows: no area, no box
            out = CutMixDataset(data, seed=0, p=p, targets=Targets(min_area=1.0))[0]
            assert out["labels"].tolist() == [8] * p

    def test_keypoints_where_their_image_shows(self) -> None:
        out, _ = self.cut([(0, 0, 8, 8)], [(15, 1, 19, 9)])
        # (15, 5) lies in the rectangle: the partner's; the others are the main's
        assert out["keypoints"].tolist() == [[2.0, 2.0], [12.0, 15.0], [15.0, 5.0]]
        assert out["kp_owner"].tolist() == [0, 0, 1]

    @pytest.mark.parametrize("columns", [2, 3])
    def test_keypoints_off_the_image_are_dropped_mixed_or_not(self, columns: int) -> None:
        # as the mosaic drops those off its output: x in [0, 20), y in [0, 20), half-open
        points = [[-1.0, 2.0], [2.0, 20.0], [20.0, 2.0], [3.0, 4.0], [19.5, 19.5], [2.0, -0.5]]
        data = [flat_sample(k, (20, 20), 10 + 190 * k, boxes=[(0, 0, 8, 8)]) for k in (0, 1)]
        for k, sample in enumerate(data):
            visibility = [[2.0]] * len(points) if columns == 3 else [[]] * len(points)
            sample["keypoints"] = np.array([p + v for p, v in zip(points, visibility, strict=True)])
            sample["kp_owner"] = np.arange(len(points)) + 10 * k
        targets = Targets(keypoint_fields=("kp_owner",))
        mixed = FixedCut(data, seed=0, targets=targets)[0]
        alone = CutMixDataset(data, seed=0, p=0.0, targets=targets)[0]
        filtered = CutMixDataset(data, seed=0, p=0.0, targets=Targets(
            keypoint_fields=("kp_owner",), min_area=1.0))[0]  # fmt: skip
        assert mixed["cutmix"]["rect"] == (10, 0, 20, 10)
        assert alone["cutmix"]["applied"] is False
        kept = [[3.0, 4.0], [19.5, 19.5]]
        assert mixed["keypoints"][:, :2].tolist() == kept  # none of the partner's in the rect
        assert mixed["kp_owner"].tolist() == [3, 4]
        for out in (alone, filtered):
            assert out["keypoints"][:, :2].tolist() == kept
            assert out["kp_owner"].tolist() == [3, 4]
        for out in (mixed, alone, filtered):
            assert out["keypoints"].shape == (2, columns)
            np.testing.assert_array_equal(out["image"][10:, :10], 10)  # the main's pixels

    def test_a_letterboxed_partners_keypoints_off_its_image_are_dropped(self) -> None:
        # a 10x20 partner fits the 20x20 image at rows 5 to 15: its keypoint at y = -2
        # would land on row 4, in the fill inside the rectangle, where it never showed
        main = flat_sample(0, (20, 20), 10, boxes=[(0, 0, 8, 8)])
        partner = flat_sample(1, (10, 20), 200, boxes=[(12, 2, 18, 8)])
        main["keypoints"] = np.array([[2.0, 2.0, 2.0]])
        partner["keypoints"] = np.array([[15.0, -2.0, 2.0], [15.0, 2.0, 1.0]])
        out = PlacedCut(
            [main, partner], seed=0, partner_fit="letterbox", fill=0,
            draws=((0.0, 0.0), (0.0,)),
        )[0]  # fmt: skip
        assert out["cutmix"]["rect"] == (0, 0, 20, 20)  # lam = 0: all of the partner
        np.testing.assert_array_equal(out["image"][:5], 0)  # the fill
        np.testing.assert_array_equal(out["image"][5:15], 200)
        assert out["keypoints"].tolist() == [[15.0, 7.0, 1.0]]

    @settings(max_examples=80)
    @given(data=st.data(), many=st.booleans())
    def test_a_few_boxes_go_row_by_row_bit_for_bit(self, data: st.DataObject, many: bool) -> None:
        # up to 32 boxes in all are tightened, clipped and kept in Python
        # (CutMixDataset._row_by_row), more with numpy: the same floats, the same boxes kept
        h, w = data.draw(st.integers(2, 40)), data.draw(st.integers(2, 40))
        x0, x1 = sorted(data.draw(st.integers(0, w)) for _ in range(2))
        y0, y1 = sorted(data.draw(st.integers(0, h)) for _ in range(2))
        # edges on the rectangle's and the image's, and anywhere between
        xs = st.sampled_from([0.0, x0, x1, w]) | st.floats(0.0, w)
        ys = st.sampled_from([0.0, y0, y1, h]) | st.floats(0.0, h)

        def boxes() -> np.ndarray:
            corners = data.draw(st.lists(st.tuples(xs, ys, xs, ys), max_size=8))
            found = np.array(corners, np.float64).reshape(-1, 4)
            found[:, [0, 2]] = np.sort(found[:, [0, 2]], axis=1)
            found[:, [1, 3]] = np.sort(found[:, [1, 3]], axis=1)
            return np.tile(found, (40, 1)) if many else found

        main, partner = boxes(), boxes()
        thresholds = st.sampled_from([0.0, 0.0, 0.5, 2.0]) | st.floats(0.0, 4.0)
        targets = Targets(**{name: data.draw(thresholds) for name in
                             ("min_area", "min_width", "min_height")},
                          min_visibility=data.draw(st.sampled_from([0.0, 0.3, 1.0])))  # fmt: skip
        cutmix = CutMixDataset(flat_dataset(2), seed=0, targets=targets)
        rect = (x0, y0, x1, y1)
        rows = cutmix._row_by_row(main, partner, rect)
        vectorised = cutmix._vectorised(main, partner, rect)
        for found, expected in zip(rows, vectorised, strict=True):
            assert (found.dtype, found.shape) == (expected.dtype, expected.shape)
            np.testing.assert_array_equal(found, expected)
        taken: list[object] = []

        def spy(*args: Any) -> Any:
            taken.append(args)
            return rows

        with mock.patch.object(CutMixDataset, "_row_by_row", side_effect=spy, autospec=True):
            cutmix._boxes(main, partner, rect)
        assert len(taken) == (len(main) + len(partner) <= 32)
        assert len(taken) == (not many or len(main) + len(partner) == 0)


Polygon = list[tuple[float, float]]
IMAGE: tuple[int, int, int, int] = (0, 20, 0, 20)  # fill() over the whole 20x20 image
RECT: tuple[int, int, int, int] = (10, 0, 20, 10)  # FixedCut's rectangle (x0, y0, x1, y1)


def polygon_sample(
    index: int, polygons: list[Polygon], form: str, dtype: Any, boxes: list[Any] | None = None
) -> Any:
    """A flat 20x20 sample whose instances are the polygons, each boxed by its points'
    bounds (or ``boxes``) and labelled ``10 * index + k``; ``form`` is "list" or "array"
    (N, K, 2)."""
    arrays = [np.array(p, dtype) for p in polygons]
    if boxes is None:
        boxes = [(*a.min(axis=0).tolist(), *a.max(axis=0).tolist()) for a in arrays]
    sample = flat_sample(index, (20, 20), 10 + 60 * index, boxes=boxes)
    sample["labels"] = 10 * index + np.arange(len(arrays), dtype=np.int64)
    sample["segments"] = np.stack(arrays) if form == "array" else arrays
    return sample


def cyclic(points: np.ndarray) -> list[list[float]]:
    """The polygon's points from its lexicographically smallest one (a rotation)."""
    start = min(range(len(points)), key=lambda i: tuple(points[i]))
    return np.roll(points, -start, axis=0).tolist()


class TestCutMixPolygons:
    def cut(
        self, main: list[Polygon], partner: list[Polygon], form: str = "list",
        dtype: Any = np.float64, **kwargs: Any,
    ) -> tuple[Any, list[Any]]:  # fmt: skip
        data = [polygon_sample(0, main, form, dtype), polygon_sample(1, partner, form, dtype)]
        out = FixedCut(data, seed=0, **kwargs)[0]
        assert out["cutmix"]["rect"] == RECT
        return out, data

    def test_a_polygon_of_no_area_is_kept_as_its_pixels(self) -> None:
        # the rule the mosaic shares: a line or a point draws pixels, kept where they show
        main = [[(2.0, 5.0), (18.0, 5.0), (10.0, 5.0)], [(4.0, 14.0)] * 3]  # cut; whole
        partner = [[(4.0, 3.0), (16.0, 3.0), (10.0, 3.0)]]  # reaches into the rectangle
        data = [polygon_sample(0, main, "list", np.float64, [(2, 5, 19, 6), (4, 14, 5, 15)]),
                polygon_sample(1, partner, "list", np.float64, [(4, 3, 17, 4)])]  # fmt: skip
        out = FixedCut(data, seed=0)[0]
        assert out["labels"].tolist() == [0, 1, 10]
        assert out["bboxes"].tolist() == [[2, 5, 10, 6], [4, 14, 5, 15], [10, 3, 17, 4]]
        for polygon, box in zip(out["segments"], out["bboxes"].astype(int), strict=True):
            drawn = fill(polygon, (0, 20, 0, 20))
            ys, xs = np.nonzero(drawn)
            assert [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1] == box.tolist()

    def test_an_unmixed_output_drops_the_polygons_the_filters_drop(self) -> None:
        main = [[(2.0, 12.0), (4.0, 12.0), (3.0, 14.0)], [(2.0, 2.0), (8.0, 2.0), (5.0, 8.0)]]
        data = [polygon_sample(i, main, "array", np.float32) for i in range(2)]
        out = CutMixDataset(data, seed=0, p=0.0, targets=Targets(min_width=3.0))[0]
        assert out["cutmix"]["applied"] is False
        assert out["labels"].tolist() == [1]
        assert out["bboxes"].tolist() == [[2.0, 2.0, 8.0, 8.0]]
        np.testing.assert_array_equal(out["segments"], data[0]["segments"][1:])
        assert out["segments"].dtype == np.float32

    @pytest.mark.parametrize(
        "shape",
        [
            [(4.0, 2.0), (14.0, 2.0), (14.0, 8.0), (4.0, 8.0)],  # a rectangle cut at its right
            [(2.0, 5.0), (8.0, 1.0), (14.0, 5.0), (8.0, 9.0)],  # a diamond cut at its corner
            [(3.5, 3.25), (17.0, 6.5), (4.0, 14.75)],  # a triangle, fractional points
        ],
    )
    def test_a_main_polygon_loses_exactly_the_rectangles_pixels(self, shape: Polygon) -> None:
        out, data = self.cut([shape], [[(1.0, 12.0), (3.0, 12.0), (3.0, 14.0)]])
        expected = fill(data[0]["segments"][0], IMAGE)
        x0, y0, x1, y1 = RECT
        assert expected[y0:y1, x0:x1].any()  # the rectangle does take pixels
        expected[y0:y1, x0:x1] = 0
        assert out["labels"].tolist() == [0]
        (polygon,) = out["segments"]
        np.testing.assert_array_equal(fill(polygon, IMAGE), expected)

    def test_a_partner_polygon_keeps_exactly_its_pixels_in_the_rectangle(self) -> None:
        # issue 19: clipped to the continuous rectangle, its edges drew 64 pixels outside it
        triangle = [(6.0, 2.0), (16.0, 2.0), (16.0, 12.0)]
        out, data = self.cut([[(1.0, 12.0), (3.0, 12.0), (3.0, 14.0)]], [triangle])
        assert out["labels"].tolist() == [0, 10]
        expected = fill(data[1]["segments"][0], IMAGE)
        x0, y0, x1, y1 = RECT
        outside = np.ones(expected.shape, bool)
        outside[y0:y1, x0:x1] = False
        assert expected[outside].any()  # the triangle does draw pixels outside it
        expected[outside] = 0
        np.testing.assert_array_equal(fill(out["segments"][1], IMAGE), expected)
        # the box is the polygon's (its pixels' box): columns 10 to 16, rows 2 to 9
        assert out["bboxes"][1].tolist() == [10.0, 2.0, 17.0, 10.0]

    @given(
        polygons=st.lists(
            st.lists(st.tuples(st.floats(0, 20), st.floats(0, 20)), min_size=3, max_size=7),
            min_size=2, max_size=6,
        ),
        lam=st.floats(0, 1), ux=st.floats(0, 1, exclude_max=True),
        uy=st.floats(0, 1, exclude_max=True), form=st.sampled_from(["list", "array"]),
    )  # fmt: skip
    def test_every_polygon_draws_only_the_pixels_its_image_owns(
        self, polygons: list[Polygon], lam: float, ux: float, uy: float, form: str
    ) -> None:
        # issue 19: a partner's polygon drew pixels outside the rectangle and a main one's
        # bridges and spurs pixels inside it
        for polygon in polygons:
            spread = np.ptp(np.array(polygon), axis=0)
            assume(spread.min() >= 0.5)
        if form == "array":  # ultralytics' 1000 points per polygon
            polygons = [resample(np.array(p), 1000).tolist() for p in polygons]
        half = len(polygons) // 2
        data = [
            polygon_sample(0, polygons[:half], form, np.float64),
            polygon_sample(1, polygons[half:], form, np.float64),
        ]
        out = PlacedCut(data, seed=0, draws=((ux, uy), (lam,)))[0]
        x0, y0, x1, y1 = out["cutmix"]["rect"]
        inside = np.zeros((20, 20), bool)
        inside[y0:y1, x0:x1] = True
        assert len(out["segments"]) == len(out["labels"]) == len(out["bboxes"])
        for polygon, label, box in zip(out["segments"], out["labels"], out["bboxes"], strict=True):
            source, k = divmod(int(label), 10)
            owned = inside if source else ~inside
            drawn = fill(polygon, IMAGE).astype(bool)
            assert drawn.any()
            assert not (drawn & ~owned).any()  # nothing on the other image
            assert (out["image"][drawn] == data[source]["image"][0, 0]).all()
            mask = fill(data[source]["segments"][k], IMAGE).astype(bool) & owned
            assert not (mask & ~drawn).any()  # every pixel of its own it keeps
            contours, _ = cv2.findContours(
                mask.astype(np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE
            )
            if len(contours) == 1:  # one part, no hole: no bridge, exactly its pixels
                np.testing.assert_array_equal(drawn, mask)
            # a polygon made anew: the box of its object's pixels (bridges are not);
            # one as it was: its box (a partner's clipped to the rectangle)
            ys, xs = np.nonzero(mask & drawn)
            made = [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
            given = data[source]["bboxes"][k].astype(np.float64)
            given = np.clip(given, (x0, y0, x0, y0), (x1, y1, x1, y1)) if source else given
            same = np.array_equal(polygon, data[source]["segments"][k])
            np.testing.assert_array_equal(box, given if same else made)

    def test_a_polygon_cut_in_two_gets_the_box_of_its_pixels_not_of_its_bridges(self) -> None:
        bar = [(0.5, 9.5), (18.5, 9.5), (18.5, 10.5), (0.5, 10.5)]  # rows 9-10, columns 0-18
        speck = [(1.0, 1.0), (2.0, 1.0), (2.0, 2.0)]  # outside the rectangle: dropped
        data = [
            polygon_sample(i, [shape], "list", np.float64) for i, shape in enumerate([bar, speck])
        ]
        out = PlacedCut(data, seed=0, draws=((0.5, 0.5), (0.75,)))[0]
        assert out["cutmix"]["rect"] == (5, 5, 15, 15)  # it cuts the bar in two
        assert out["labels"].tolist() == [0]
        drawn = fill(out["segments"][0], IMAGE)
        expected = fill(np.array(bar), IMAGE)
        expected[5:15, 5:15] = 0
        assert (drawn & ~expected).any()  # the bridge, around the rectangle
        assert not drawn[5:15, 5:15].any()
        assert out["bboxes"].tolist() == [[0.0, 9.0, 19.0, 11.0]]  # the bar's pixels left

    def test_an_untouched_polygon_keeps_its_box(self) -> None:
        # its box (5, 2, 18, 6) alone would shrink to (5, 2, 10, 6): the rectangle
        # covers it across its height, but none of the polygon's pixels
        near = [(5.0, 2.0), (8.0, 2.0), (8.0, 5.0)]
        data = [polygon_sample(0, [near], "list", np.float64, boxes=[(5, 2, 18, 6)]),
                polygon_sample(1, [[(1.0, 12.0), (3.0, 12.0), (3.0, 14.0)]], "list",
                               np.float64)]  # fmt: skip
        out = FixedCut(data, seed=0)[0]
        assert out["labels"].tolist() == [0]
        np.testing.assert_array_equal(out["segments"][0], data[0]["segments"][0])
        assert out["bboxes"].tolist() == [[5.0, 2.0, 18.0, 6.0]]

    def test_untouched_polygons_keep_their_points(self) -> None:
        far = [(1.0, 12.0), (6.0, 12.5), (6.0, 18.0), (1.5, 18.0)]  # below the rectangle
        near = [(2.0, 2.0), (9.0, 2.0), (9.0, 6.0)]  # its pixels end at column 9
        inside = [(11.0, 1.0), (18.5, 2.0), (17.0, 9.0), (12.0, 8.0)]  # in the rectangle
        outside = [(12.0, 12.0), (16.0, 12.0), (16.0, 16.0), (12.0, 16.0)]
        out, data = self.cut([far, near], [inside, outside])
        assert out["labels"].tolist() == [0, 1, 10]  # the partner's outside one is gone
        for polygon, source in zip(
            out["segments"], [*data[0]["segments"], data[1]["segments"][0]], strict=True
        ):
            np.testing.assert_array_equal(polygon, source)

    def test_an_array_gives_an_array_a_list_a_list(self) -> None:
        main = [[(4.0, 2.0), (14.0, 2.0), (14.0, 8.0), (4.0, 8.0)],
                [(1.0, 12.0), (6.0, 12.0), (6.0, 18.0), (1.0, 18.0)]]  # fmt: skip
        partner = [[(6.0, 2.0), (16.0, 2.0), (16.0, 12.0), (6.0, 12.0)]]
        out, data = self.cut(main, partner, form="array", dtype=np.float32)
        segments = out["segments"]
        assert isinstance(segments, np.ndarray)
        assert segments.shape == (3, 4, 2)
        assert segments.dtype == np.float32
        np.testing.assert_array_equal(segments[1], data[0]["segments"][1])
        # the outline of its pixels in the rectangle: columns 10 to 16, rows 2 to 9
        assert cyclic(segments[2]) == [[10.5, 2.5], [10.5, 9.5], [16.5, 9.5], [16.5, 2.5]]
        out, _ = self.cut(main, partner, form="list", dtype=np.float32)
        assert isinstance(out["segments"], list)
        assert len(out["segments"]) == 3
        assert all(p.dtype == np.float32 for p in out["segments"])
        # the outline of what is left (the pixels' centres), as it is, not resampled
        assert cyclic(out["segments"][0]) == [[4.5, 2.5], [4.5, 8.5], [9.5, 8.5], [9.5, 2.5]]

    def test_an_array_outline_resampled_to_fewer_points_keeps_its_box(self) -> None:
        # what the rectangle leaves of a square is an L of 6 corners: back to the array's
        # 4 points its extremes stay, so that the polygon still draws the box it is given
        # (taken evenly by index, corners went and the bounds shrank)
        square = [(4.0, 2.0), (14.0, 2.0), (14.0, 14.0), (4.0, 14.0)]
        out, _ = self.cut([square], [[(1.0, 12.0), (3.0, 12.0), (3.0, 14.0)]], form="array")
        polygon = out["segments"][0]
        assert polygon.shape == (4, 2)
        assert out["bboxes"][0].tolist() == [4.0, 2.0, 15.0, 15.0]
        ys, xs = np.nonzero(fill(polygon, IMAGE))
        assert [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1] == [4, 2, 15, 15]

    def test_an_instance_with_nothing_left_is_dropped_with_its_box_and_label(self) -> None:
        far = [(1.0, 12.0), (6.0, 12.0), (6.0, 18.0)]
        hidden = [(11.0, 3.0), (15.0, 3.0), (15.0, 7.0)]  # its pixels all in the rectangle
        missed = [(8.0, 4.0), (9.5, 4.0), (8.0, 8.0)]  # left of the rectangle
        inside = [(11.0, 1.0), (18.0, 2.0), (17.0, 9.0)]
        data = [
            polygon_sample(0, [far, hidden], "list", np.float64,
                           boxes=[(1, 12, 6, 18), (6, 2, 16, 8)]),
            polygon_sample(1, [missed, inside], "list", np.float64,
                           boxes=[(8, 4, 14, 8), (11, 1, 18, 9)]),
        ]  # fmt: skip
        # without polygons the box rule keeps all four: (6, 2, 16, 8) shows 40% of itself
        # (shrunk to (6, 2, 10, 8)), (8, 4, 14, 8) is clipped to (10, 4, 14, 8)
        boxes_only = [{k: v for k, v in d.items() if k != "segments"} for d in data]
        assert FixedCut(boxes_only, seed=0)[0]["labels"].tolist() == [0, 1, 10, 11]
        out = FixedCut(data, seed=0)[0]
        assert out["labels"].tolist() == [0, 11]
        assert out["bboxes"].tolist() == [[1.0, 12.0, 6.0, 18.0], [11.0, 1.0, 18.0, 9.0]]
        assert out["masks"].shape == (2, 20, 20)
        np.testing.assert_array_equal(out["masks"][0], data[0]["masks"][0])
        assert [p.tolist() for p in out["segments"]] == [
            np.array(far).tolist(), np.array(inside).tolist(),
        ]  # fmt: skip

    def test_replay_gives_the_same_segments(self) -> None:
        data = [
            polygon_sample(i, [[(2.0 + i, 1.0), (15.0, 3.0 + i), (8.0, 17.0)]], "list", np.float64)
            for i in range(4)
        ]
        cutmix = CutMixDataset(data, seed=5)
        cutmix[2]
        second = cutmix[2]
        again = cutmix.replay(second["cutmix"])
        assert len(again["segments"]) == len(second["segments"])
        for polygon, replayed in zip(second["segments"], again["segments"], strict=True):
            np.testing.assert_array_equal(replayed, polygon)

    def test_the_keyings_work_with_polygons(self) -> None:
        def dataset(segments: bool) -> list[Any]:
            data = [flat_sample(i, (12, 16), 10 * (i + 1)) for i in range(4)]
            for sample in data:  # the box (1, 1, 8, 6) as a polygon
                if segments:
                    sample["segments"] = [np.array([[1.0, 1.0], [8.0, 1.0], [8.0, 6.0]])]
            return data

        def outputs(keying: str, rank: int, order: list[int], segments: bool = True) -> Any:
            cutmix = CutMixDataset(dataset(segments), seed=3, keying=keying, rank=rank)
            return {i: cutmix[i] for i in order}

        order, backward = [0, 1, 2, 3], [3, 2, 1, 0]
        for keying in ("stream", "sample", "sample_rank"):
            out = outputs(keying, 1, order)
            plain = outputs(keying, 1, order, segments=False)
            for i in order:  # polygons change no draw
                assert out[i]["cutmix"] == plain[i]["cutmix"]
                assert len(out[i]["segments"]) == len(out[i]["labels"])
        first = outputs("sample", 0, order)
        other = outputs("sample", 1, backward)  # another rank, another order
        for i in order:
            assert first[i]["cutmix"]["rect"] != (0, 0, 0, 0)
            assert len(first[i]["segments"]) == len(other[i]["segments"])
            for mine, theirs in zip(first[i]["segments"], other[i]["segments"], strict=True):
                np.testing.assert_array_equal(mine, theirs)


class TestCutMixDataset:
    def test_classes_mix_by_the_exact_pasted_area(self) -> None:
        data = [(torch.full((3, 10, 10), i, dtype=torch.uint8), torch.tensor(i)) for i in range(3)]
        cutmix = CutMixDataset(data, seed=4, num_classes=3, keying="sample")
        for index in range(3):
            image, soft = cutmix[index]
            assert isinstance(soft, torch.Tensor)
            pasted = (image[0] != index).float().mean().item()
            assert abs(soft[index].item() - (1 - pasted)) < 1e-6
            assert abs(soft.sum().item() - 1) < 1e-6

    def test_a_soft_class_from_an_inner_mix_needs_num_classes(self) -> None:
        data = [(np.full((8, 8), 50 * i, np.uint8), i) for i in range(3)]
        inner = MixUpDataset(data, seed=0, num_classes=3)
        with pytest.raises(SampleError, match=r"dataset\[0\] has the class vector .* num_classes="):
            CutMixDataset(inner, seed=1)[0]
        _, soft = CutMixDataset(inner, seed=1, num_classes=3)[0]
        assert soft.shape == (3,)

    def test_pil_pairs_keep_their_shape(self) -> None:
        data = [
            (Image.fromarray(np.full((6, 8), 40 * i, np.uint8)),
             {"boxes": [[0.0, 0.0, 8.0, 6.0]], "labels": [i]})
            for i in range(3)
        ]  # fmt: skip
        image, target = CutMixDataset(data, seed=0)[1]
        assert isinstance(image, Image.Image)
        assert image.mode == "L"
        x0, y0, x1, y1 = target["cutmix"]["rect"]
        partner = target["cutmix"]["indices"][1]
        pixels = np.array(image)
        assert (pixels[y0:y1, x0:x1] == 40 * partner).all()
        assert isinstance(target["labels"], list)
        assert target["labels"][0] == 1

    def test_replay_is_bit_for_bit(self) -> None:
        cutmix = CutMixDataset(flat_dataset(5), seed=9)
        cutmix[1]
        second = cutmix[1]
        again = cutmix.replay(second["cutmix"])
        for key in ("image", "bboxes", "labels", "mask", "masks"):
            np.testing.assert_array_equal(again[key], second[key])
        assert again["cutmix"] == second["cutmix"]

    def test_unmixed_record(self) -> None:
        out = CutMixDataset(flat_dataset(2), seed=0, p=0.0)[1]
        assert out["cutmix"]["rect"] == (0, 0, 0, 0)
        assert out["cutmix"]["indices"] == [1]

    def test_a_partner_of_another_size_names_both(self) -> None:
        data = [flat_sample(0, (8, 8), 1), flat_sample(1, (8, 9), 2)]
        with pytest.raises(SampleError, match=r"dataset\[1\] image is 8x9 .*CutMix needs"):
            CutMixDataset(data, seed=0)[0]

    def test_arguments_are_checked(self) -> None:
        with pytest.raises(ValueError, match=r"min_visibility must be a finite number >= 0\.0"):
            CutMixDataset(flat_dataset(2), seed=0, targets=Targets(min_visibility=2.0))
        with pytest.raises(ValueError, match=r"alpha must be a finite number > 0\.0"):
            CutMixDataset(flat_dataset(2), seed=0, alpha=-1.0)
