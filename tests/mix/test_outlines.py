from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rankaug.mix import CopyPasteDataset
from rankaug.mix._masks import within
from rankaug.mix._outlines import PolygonInstances
from rankaug.mix.copypaste import _alone
from rankaug.polygons import read_polygons


def instances(*polygons: list[tuple[float, float]]) -> PolygonInstances:
    points = [np.array(p, np.float64) for p in polygons]
    read = read_polygons(points, len(points), "dataset[0]")
    return PolygonInstances(read, np.zeros((len(points), 4)), (40, 40), mirror=False)


SQUARE = [(4.0, 4.0), (30.0, 4.0), (30.0, 30.0), (4.0, 30.0)]
TRIANGLE = [(10.0, 2.0), (36.0, 20.0), (6.0, 34.0)]


class TestCovered:
    @pytest.mark.parametrize("polygon", [SQUARE, TRIANGLE])
    @pytest.mark.parametrize("rows", [(0, 40), (10, 20), (28, 40)])
    def test_counts_the_pixels_under_it_and_cuts_them(
        self, polygon: list[tuple[float, float]], rows: tuple[int, int]
    ) -> None:
        """What a bitwise_and would count, and the drawing left as raster & ~over."""
        ours = instances(polygon)
        region = ours.region(0)
        drawn = ours.raster(0).copy()
        meet = (max(region[0], rows[0]), min(region[1], rows[1]), region[2] + 3, region[3])
        over = np.zeros((meet[1] - meet[0], meet[3] - meet[2]), np.uint8)
        over[::2, 1::3] = 1  # a pattern that meets some of its pixels and misses others
        expected = cv2.countNonZero(cv2.bitwise_and(drawn[within(region, meet)], over))
        assert ours.covered(0, meet, over) == expected
        left = drawn.copy()
        left[within(region, meet)] &= 1 - over
        np.testing.assert_array_equal(ours.raster(0), left)
        assert ours.count(0) == cv2.countNonZero(drawn)  # the count before the cut

    def test_nothing_under_it_leaves_it_as_drawn(self) -> None:
        ours = instances(SQUARE)
        region = ours.region(0)
        drawn = ours.raster(0).copy()
        over = np.zeros((region[1] - region[0], region[3] - region[2]), np.uint8)
        assert ours.covered(0, region, over) == 0
        np.testing.assert_array_equal(ours.raster(0), drawn)


class TestHasPixels:
    def test_a_polygon_in_the_image_has_pixels(self) -> None:
        ours = instances(SQUARE, TRIANGLE)
        assert ours.has_pixels(0)
        assert ours.has_pixels(1)

    def test_a_polygon_just_outside_the_image_has_none(self) -> None:
        """Its region is not empty (the fill's margin), its drawing is."""
        ours = instances([(-0.9, 5.0), (-0.6, 5.0), (-0.6, 9.0)])
        y0, y1, x0, x1 = ours.region(0)
        assert y1 > y0
        assert x1 > x0
        assert not ours.has_pixels(0)
        assert ours.count(0) == 0
        assert not ours.has_pixels(0)  # from the count, once made


class TestAlone:
    @given(
        polygons=st.lists(
            st.lists(st.tuples(st.floats(-6, 46), st.floats(-6, 46)), min_size=3, max_size=9),
            min_size=1,
            max_size=4,
        ),
        pick=st.integers(0, 3),
        mirror=st.booleans(),
    )
    def test_one_pasted_polygon_gives_what_the_layers_stacked_one_at_a_time_give(
        self, polygons: list[list[tuple[float, float]]], pick: int, mirror: bool
    ) -> None:
        """The fast path of a lone pasted polygon, against the general one, bit for bit."""
        points = [np.array(p, np.float32) for p in polygons]
        read = read_polygons(points, len(points), "dataset[0]")
        boxes = np.array([[1.0, 2.0, 30.0, 20.0]] * len(points))
        theirs = PolygonInstances(read, boxes, (40, 40), mirror)
        k = pick % len(points)
        assume(theirs.has_pixels(k))
        region = theirs.region(k)
        masks = np.ones((1, 40, 40), np.uint8)
        data = 2 * [{"image": np.zeros((40, 40), np.uint8), "masks": masks, "bboxes": boxes[:1],
                 "labels": np.array([1])}]  # fmt: skip
        paste = CopyPasteDataset(data, seed=0, min_visibility=0.3)
        fast = _alone(theirs, k, region)
        general = paste._stacked(theirs, [k], [region], region)
        assert fast[:3] == general[:3]  # the layers (their raster None), hidden, region
        assert fast[3].dtype == general[3].dtype
        np.testing.assert_array_equal(fast[3], general[3])
