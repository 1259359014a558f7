from __future__ import annotations

import cv2
import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from rankaug.mix._detour import outline_clear
from rankaug.polygons import fill, outline


@st.composite
def trimmed(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """An instance's random pixels left in a random image, and random pasted pixels."""
    height, width = draw(st.integers(1, 16)), draw(st.integers(1, 32))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pasted = (rng.random((height, width)) < draw(st.floats(0.05, 0.6))).astype(np.uint8)
    mask = (rng.random((height, width)) < draw(st.floats(0.05, 0.6))).astype(np.uint8)
    mask[pasted != 0] = 0
    return mask, pasted


def whole(mask: np.ndarray) -> tuple[int, int, int, int]:
    return (0, mask.shape[0], 0, mask.shape[1])


class TestOutlineClear:
    @given(case=trimmed())
    def test_draws_its_pixels_and_no_pasted_one(self, case: tuple[np.ndarray, np.ndarray]) -> None:
        mask, pasted = case
        assume(mask.any())
        # every part reachable from the others through pixels nothing is pasted on
        _, parts = cv2.connectedComponents(1 - pasted, connectivity=8)
        assume(len(np.unique(parts[mask != 0])) == 1)
        region = whole(mask)
        drawn = fill(outline_clear(mask, region, pasted, region, mask.shape), region)
        assert not (mask & (1 - drawn)).any()  # every pixel left
        assert not (drawn & pasted).any()  # and its bridges cross nothing pasted

    def test_a_bar_cut_in_two_is_joined_around_the_pasted_one(self) -> None:
        # rows 5 and 6 of a bar, cut by a pasted upright bar (columns 7 and 8, rows 2 to 9)
        mask = np.zeros((12, 16), np.uint8)
        mask[5:7, 1:15] = 1
        pasted = np.zeros((12, 16), np.uint8)
        pasted[2:10, 7:9] = 1
        mask[pasted != 0] = 0
        region = whole(mask)
        drawn = fill(outline_clear(mask, region, pasted, region, (12, 16)), region)
        straight = fill(outline(mask), region)
        assert int((straight & pasted).sum()) == 2  # outline's bridge: along row 5
        assert not (mask & (1 - drawn)).any()
        assert not (drawn & pasted).any()
        assert drawn[:2].any()  # round the top of the pasted bar, in row 1

    def test_only_the_pasted_region_and_a_pixel_around_are_searched(self) -> None:
        # the pasted pixels over their own region (union), the mask over the instance's
        mask = np.zeros((2, 14), np.uint8)
        mask[:, :6] = mask[:, 8:] = 1  # rows 5 and 6 of the image, columns 1 to 14
        pasted = np.ones((8, 2), np.uint8)  # rows 2 to 9, columns 7 and 8
        polygon = outline_clear(mask, (5, 7, 1, 15), pasted, (2, 10, 7, 9), (12, 16))
        drawn = fill(polygon, (0, 12, 0, 16))
        assert not drawn[2:10, 7:9].any()
        assert drawn[5:7, 1:7].all()
        assert drawn[5:7, 9:15].all()

    def test_a_part_cut_off_is_joined_across_the_fewest_pasted_pixels(self) -> None:
        # a pasted wall across the image, six pixels thick but one in the last row: the
        # straight bridge along row 0 draws six of its pixels, the detour one
        mask = np.zeros((12, 12), np.uint8)
        mask[0, 0] = mask[0, 11] = 1
        pasted = np.zeros((12, 12), np.uint8)
        pasted[:11, 3:9] = 1
        pasted[11, 5] = 1
        region = whole(mask)
        drawn = fill(outline_clear(mask, region, pasted, region, (12, 12)), region)
        assert int((fill(outline(mask), region) & pasted).sum()) == 6
        assert int((drawn & pasted).sum()) == 1
        assert drawn[11, 5] == 1
        assert not (mask & (1 - drawn)).any()

    @given(case=trimmed())
    def test_never_draws_more_pasted_pixels_than_straight_bridges(
        self, case: tuple[np.ndarray, np.ndarray]
    ) -> None:
        mask, pasted = case
        assume(mask.any())
        region = whole(mask)
        drawn = fill(outline_clear(mask, region, pasted, region, mask.shape), region)
        straight = fill(outline(mask), region)
        assert not (mask & (1 - drawn)).any()
        assert int((drawn & pasted).sum()) <= int((straight & pasted).sum())
