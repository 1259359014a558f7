from __future__ import annotations

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from rankaug.mix._around import outline_around, padded
from rankaug.polygons import fill, outline


@st.composite
def cut_masks(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A mask of random pixels in a random image, none inside a random rectangle."""
    height, width = draw(st.integers(1, 12)), draw(st.integers(1, 40))
    x0 = draw(st.integers(0, width - 1))
    y0 = draw(st.integers(0, height - 1))
    x1 = draw(st.integers(x0 + 1, width))
    y1 = draw(st.integers(y0 + 1, height))
    seed = draw(st.integers(0, 2**32 - 1))
    density = draw(st.floats(0.05, 0.9))
    mask = (np.random.default_rng(seed).random((height, width)) < density).astype(np.uint8)
    mask[y0:y1, x0:x1] = 0
    return mask, (x0, y0, x1, y1)


class TestOutlineAround:
    @given(case=cut_masks())
    def test_draws_its_pixels_and_none_inside_the_rectangle(
        self, case: tuple[np.ndarray, tuple[int, int, int, int]]
    ) -> None:
        mask, rect = case
        assume(mask.any())
        height, width = mask.shape
        x0, y0, x1, y1 = rect
        polygon = outline_around(mask, (0, 0), rect, mask.shape)
        drawn = fill(polygon, (0, height, 0, width))
        assert not drawn[y0:y1, x0:x1].any()
        across = (y0 == 0 and y1 == height) or (x0 == 0 and x1 == width)
        if not across:  # every pixel is kept
            assert not (mask & ~drawn).any()
        else:  # one side of the rectangle, all of it
            kept = mask & drawn
            assert kept.any()
            left = (mask[:, :x0] if y1 - y0 == height else mask[:y0]).sum()
            right = (mask[:, x1:] if y1 - y0 == height else mask[y1:]).sum()
            assert kept.sum() == max(left, right)

    def test_a_straight_bridge_through_the_rectangle_goes_around_it(self) -> None:
        # issue 19: outline() bridged the two parts straight through the rectangle
        mask = np.zeros((5, 9), np.uint8)
        mask[2, [0, 1, 7, 8]] = 1
        rect = (2, 1, 7, 4)
        assert fill(outline(mask), (0, 5, 0, 9))[2, 2:7].all()  # the straight bridge
        drawn = fill(outline_around(mask, (0, 0), rect, (5, 9)), (0, 5, 0, 9))
        assert not drawn[1:4, 2:7].any()
        assert drawn[2].tolist() == [1, 1, 0, 0, 0, 0, 0, 1, 1]

    def test_in_a_region_of_the_image(self) -> None:
        mask = np.ones((2, 2), np.uint8)
        polygon = outline_around(mask, (3, 5), (0, 0, 1, 1), (8, 8))
        assert polygon.min(axis=0).tolist() == [5.5, 3.5]
        assert polygon.max(axis=0).tolist() == [6.5, 4.5]


class TestPadded:
    @given(seed=st.integers(0, 2**32 - 1), count=st.integers(3, 300))
    def test_draws_what_the_outline_draws(self, seed: int, count: int) -> None:
        mask = (np.random.default_rng(seed).random((6, 7)) < 0.5).astype(np.uint8)
        assume(mask.any())
        shape = outline(mask)
        out = padded(shape, count)
        assert len(out) == max(count, len(shape))
        np.testing.assert_array_equal(fill(out, (0, 6, 0, 7)), fill(shape, (0, 6, 0, 7)))
        np.testing.assert_array_equal(np.unique(out, axis=0), np.unique(shape, axis=0))
        assert padded(shape, None) is shape

    @given(have=st.integers(3, 400), count=st.integers(3, 1200))
    def test_repeats_each_point_in_order_evenly(self, have: int, count: int) -> None:
        shape = np.arange(2 * have, dtype=np.float64).reshape(have, 2)
        source = (padded(shape, count)[:, 0] // 2).astype(np.int64)  # each row's point
        repeats = np.bincount(source, minlength=have)
        assert len(source) == max(count, have)
        assert (np.diff(source) >= 0).all()  # in order
        assert repeats.min() >= 1
        assert repeats.max() - repeats.min() <= 1  # evenly
