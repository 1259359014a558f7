from __future__ import annotations

import cv2
import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from rankaug.mix._detour import Allowed, outline_within
from rankaug.polygons import fill, outline


@st.composite
def blocked_masks(
    draw: st.DrawFn,
) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
    """A mask of random pixels in a random image, none on a random blocked rectangle."""
    height, width = draw(st.integers(3, 16)), draw(st.integers(3, 40))
    y0, x0 = draw(st.integers(0, height - 1)), draw(st.integers(0, width - 1))
    y1, x1 = draw(st.integers(y0 + 1, height)), draw(st.integers(x0 + 1, width))
    seed = draw(st.integers(0, 2**32 - 1))
    density = draw(st.floats(0.05, 0.6))
    mask = (np.random.default_rng(seed).random((height, width)) < density).astype(np.uint8)
    mask[y0:y1, x0:x1] = 0
    allowed = np.ones((height, width), np.uint8)
    allowed[y0:y1, x0:x1] = 0
    return mask, allowed, (x0, y0, x1, y1)


def pixels(image: np.ndarray) -> Allowed:
    """The image's pixels over a region (an :data:`Allowed`)."""
    return lambda region: image[region[0] : region[1], region[2] : region[3]]


class TestOutlineWithin:
    @given(case=blocked_masks())
    def test_bridges_go_around_what_they_may_not_draw(
        self, case: tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]
    ) -> None:
        mask, allowed, (x0, y0, x1, y1) = case
        height, width = mask.shape
        assume(mask.any())
        assume((x0, x1) != (0, width) and (y0, y1) != (0, height))  # around it: a way
        polygon = outline_within(mask, (0, 0), pixels(allowed), (height, width))
        drawn = fill(polygon, (0, height, 0, width))
        assert not (mask & ~drawn).any()  # every pixel
        assert not (drawn & ~allowed).any()  # and no blocked one

    @given(case=blocked_masks())
    def test_in_a_region_of_a_larger_image(
        self, case: tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]
    ) -> None:
        mask, allowed, _ = case
        assume(mask.any())
        height, width = mask.shape
        image = np.ones((height + 5, width + 7), np.uint8)  # room around it
        image[2 : 2 + height, 3 : 3 + width] = allowed
        polygon = outline_within(mask, (2, 3), pixels(image), image.shape)
        drawn = fill(polygon, (0, height + 5, 0, width + 7))
        assert not (mask & ~drawn[2 : 2 + height, 3 : 3 + width]).any()
        assert not (drawn & ~image).any()

    def test_straight_bridges_that_draw_only_allowed_pixels_stay(self) -> None:
        mask = np.zeros((5, 9), np.uint8)
        mask[2, [0, 1, 7, 8]] = 1
        allowed = np.ones((5, 9), np.uint8)
        allowed[0, 4] = 0  # off the straight bridge
        image = np.ones((8, 13), np.uint8)
        image[3:, 4:] = allowed
        polygon = outline_within(mask, (3, 4), pixels(image), image.shape)
        np.testing.assert_array_equal(polygon, outline(mask, (3, 4)))

    def test_parts_no_path_joins_are_joined_straight(self) -> None:
        mask = np.zeros((5, 9), np.uint8)
        mask[2, [0, 1, 7, 8]] = 1
        allowed = np.ones((5, 9), np.uint8)
        allowed[:, 3:6] = 0  # across the image between the parts
        polygon = outline_within(mask, (0, 0), pixels(allowed), (5, 9))
        drawn = fill(polygon, (0, 5, 0, 9))
        assert drawn[2].tolist() == [1] * 9  # every pixel, and the straight bridge
        found, _ = cv2.findContours(drawn, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
        assert len(found) == 1
