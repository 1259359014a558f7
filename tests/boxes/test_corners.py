from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rankaug.boxes import affine_xyxy
from rankaug.boxes.corners import _MARGIN
from tests.boxes.helpers import loose_boxes
from tests.boxes.polygons import clip_polygon, enclosing, mapped_corners

ANGLE = st.floats(-180.0, 180.0, allow_nan=False)
SHEAR = st.floats(-40.0, 40.0, allow_nan=False)
SCALE = st.floats(0.1, 4.0, allow_nan=False)
SHIFT = st.floats(-100.0, 100.0, allow_nan=False)


@st.composite
def affines(draw: st.DrawFn) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Invertible 2x3 affines: a shear after a rotation and scale, then a shift."""
    angle, scale = math.radians(draw(ANGLE)), draw(SCALE)
    hx, hy = math.tan(math.radians(draw(SHEAR))), math.tan(math.radians(draw(SHEAR)))
    cos, sin = scale * math.cos(angle), scale * math.sin(angle)
    return (
        (cos - hx * sin, sin + hx * cos, draw(SHIFT)),
        (hy * cos - sin, hy * sin + cos, draw(SHIFT)),
    )


class TestAffineXyxy:
    @given(boxes=loose_boxes(), matrix=affines())
    def test_the_enclosing_box_of_the_mapped_corners(
        self, boxes: np.ndarray, matrix: tuple[tuple[float, ...], ...]
    ) -> None:
        out = affine_xyxy(boxes, matrix)
        assert out.shape == boxes.shape
        for box, got in zip(boxes.tolist(), out.tolist(), strict=True):
            np.testing.assert_allclose(got, enclosing(mapped_corners(box, matrix)), atol=1e-9)

    def test_a_crossing_a_rounding_error_outside_the_window_still_counts(self) -> None:
        # Found by hypothesis: the left edge meets the window's bottom at x = 5.8e-84, but
        # the crossing computed a rounding error below 0 was dropped, and with it the
        # extreme: x0 came out 0.0166 (the next candidate) instead of 0.
        boxes = np.array([[5.8e-84, -1.0, 1.0, 0.95]])
        out = affine_xyxy(boxes, ((1.0, 0.017455, 0.0), (0.0, 1.0, 0.0)), window=(0, 0, 1, 1))
        np.testing.assert_allclose(out, [[0.0, 0.0, 1.0, 0.95]], atol=1e-9)

    @given(boxes=loose_boxes(), matrix=affines(),
           window=st.tuples(st.floats(-50, 50), st.floats(-50, 50), st.floats(1, 150),
                            st.floats(1, 150)))  # fmt: skip
    def test_with_a_window_the_enclosing_box_of_the_part_inside_it(
        self,
        boxes: np.ndarray,
        matrix: tuple[tuple[float, ...], ...],
        window: tuple[float, float, float, float],
    ) -> None:
        x0, y0, w, h = window
        frame = (x0, y0, x0 + w, y0 + h)
        out = affine_xyxy(boxes, matrix, frame)
        for box, got in zip(boxes.tolist(), out.tolist(), strict=True):
            # exact: the part inside; the bound: the same of the box grown by the margin
            # the library allows a window corner's preimage (a shallow edge magnifies it)
            inner = enclosing(clip_polygon(mapped_corners(box, matrix), frame))
            m = _MARGIN * (1.0 + max(abs(v) for v in box))
            grown = [box[0] - m, box[1] - m, box[2] + m, box[3] + m]
            outer = enclosing(clip_polygon(mapped_corners(grown, matrix), frame))
            tight = outer is None or _flat(outer)  # missed, or touched: no area either way
            assert not tight or _flat(got)
            assert _flat(got) or _within(got, outer)  # never beyond the grown part ...
            assert inner is None or _flat(inner) or _within(inner, got)  # ... nor short
            assert frame[0] <= got[0] <= got[2] <= frame[2]
            assert frame[1] <= got[1] <= got[3] <= frame[3]

    def test_a_rotated_box_cut_by_the_window_is_smaller_than_the_clipped_enclosing_box(
        self,
    ) -> None:
        # a 45-degree diamond with corners (5, 0), (7, 2), (5, 4), (3, 2): of the window
        # x <= 4.5, y <= 1 it holds only the sliver x in [4, 4.5], y in [0.5, 1]
        diamond = ((0.5, -0.5, 5.0), (0.5, 0.5, 0.0))
        box = np.array([[0.0, 0.0, 4.0, 4.0]])
        clipped = np.clip(affine_xyxy(box, diamond), 0.0, [4.5, 1.0, 4.5, 1.0])
        np.testing.assert_allclose(clipped, [[3.0, 0.0, 4.5, 1.0]])  # YOLO's
        np.testing.assert_allclose(affine_xyxy(box, diamond, (0.0, 0.0, 4.5, 1.0)),
                                   [[4.0, 0.5, 4.5, 1.0]])  # fmt: skip
        # a window the diamond misses though its enclosing box reaches into it
        assert affine_xyxy(box, diamond, (0.0, 0.0, 3.5, 0.4)).tolist() == [[0, 0, 0, 0]]
        assert (np.clip(affine_xyxy(box, diamond), 0, [3.5, 0.4, 3.5, 0.4]) > 0).any()

    def test_a_missed_window_gives_an_empty_box_on_its_corner(self) -> None:
        turn = ((0.0, -1.0, 10.0), (1.0, 0.0, 0.0))
        out = affine_xyxy(np.array([[1.0, 2.0, 4.0, 3.0]]), turn, (20.0, 30.0, 40.0, 50.0))
        assert out.tolist() == [[20.0, 30.0, 20.0, 30.0]]

    def test_empty(self) -> None:
        out = affine_xyxy(np.zeros((0, 4)), ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), (0, 0, 5, 5))
        assert out.shape == (0, 4)


def _within(box: Sequence[float], bound: Sequence[float] | None, atol: float = 1e-6) -> bool:
    """Whether ``box`` lies inside ``bound`` (to ``atol``)."""
    assert bound is not None
    return bool(
        box[0] >= bound[0] - atol and box[1] >= bound[1] - atol
        and box[2] <= bound[2] + atol and box[3] <= bound[3] + atol
    )  # fmt: skip


def _flat(box: Sequence[float]) -> bool:
    return box[2] - box[0] <= 1e-9 or box[3] - box[1] <= 1e-9
