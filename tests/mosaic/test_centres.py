from __future__ import annotations

import numpy as np
from hypothesis import assume, example, given
from hypothesis import strategies as st

from rankaug.mosaic.affine import AffineDraw, affine_matrix
from rankaug.mosaic.centres import TOLERANCE, aligned, warped
from rankaug.mosaic.fused import invert

COORDINATE = st.floats(-3.0, 40.0, allow_nan=False)


def brute_aligned(box: list[float]) -> bool:
    """Some centre j + 0.5 with x0 <= j + 0.5 < x1 - TOLERANCE, and likewise in y."""
    x0, y0, x1, y1 = box
    xs = [j + 0.5 for j in range(-5, 50) if x0 <= j + 0.5 < x1 - TOLERANCE]
    ys = [j + 0.5 for j in range(-5, 50) if y0 <= j + 0.5 < y1 - TOLERANCE]
    return bool(xs) and bool(ys)


class TestAligned:
    def test_a_centre_on_the_near_edge_counts_one_on_the_far_edge_does_not(self) -> None:
        boxes = np.array([[3.5, 1.0, 3.6, 2.0], [3.4, 1.0, 3.5, 2.0], [3.4, 1.0, 3.5011, 2.0],
                          [3.6, 1.0, 4.4, 2.0], [0.0, 0.0, 40.0, 0.4]])  # fmt: skip
        assert aligned(boxes).tolist() == [True, False, True, False, False]

    @given(st.lists(st.tuples(COORDINATE, COORDINATE, COORDINATE, COORDINATE), max_size=8))
    def test_as_counted_centre_by_centre(
        self, boxes: list[tuple[float, float, float, float]]
    ) -> None:
        array = np.array(boxes, np.float64).reshape(-1, 4)
        array[:, 2:] = np.maximum(array[:, 2:], array[:, :2])  # upright
        assert aligned(array).tolist() == [brute_aligned(b) for b in array.tolist()]


class TestWarped:
    @given(
        angle=st.floats(-180.0, 180.0), scale=st.floats(0.3, 2.0), shear=st.floats(-20.0, 20.0),
        box=st.tuples(st.floats(0.0, 60.0), st.floats(0.0, 60.0), st.floats(0.0, 30.0),
                      st.floats(0.0, 30.0)),
    )  # fmt: skip
    # a subnormal shear: the rows' bounds overflow to infinity (a RuntimeWarning before)
    @example(angle=0.0, scale=1.0, shear=2.225073858507203e-309, box=(0.0, 0.0, 0.0, 0.0))
    def test_some_pixel_centres_preimage_is_in_the_box(
        self, angle: float, scale: float, shear: float, box: tuple[float, float, float, float]
    ) -> None:
        hw = (24, 32)
        matrix = affine_matrix(AffineDraw(angle, scale, shear, 0.0, 0.5, 0.5), (64, 64), hw)
        x0, y0, w, h = box
        canvas = np.array([[x0, y0, x0 + w, y0 + h]])
        # every output pixel's centre, back on the canvas
        (a, b, c), (d, e, f) = invert(matrix)
        xs, ys = np.meshgrid(np.arange(hw[1]) + 0.5, np.arange(hw[0]) + 0.5)
        px, py = a * xs + b * ys + c, d * xs + e * ys + f
        near = [np.abs(px - x0), np.abs(px - x0 - w), np.abs(py - y0), np.abs(py - y0 - h)]
        assume(min(float(n.min()) for n in near) > 1e-9)  # no centre on an edge
        inside = (px >= x0) & (px < x0 + w) & (py >= y0) & (py < y0 + h)
        # the box's image: its corners through M, their enclosing box within the output
        (ma, mb, mc), (md, me, mf) = matrix
        ends = ((x0, y0), (x0 + w, y0), (x0, y0 + h), (x0 + w, y0 + h))
        corners = [(ma * x + mb * y + mc, md * x + me * y + mf) for x, y in ends]
        shown = np.array([[
            min(max(min(p[0] for p in corners), 0.0), hw[1]),
            min(max(min(p[1] for p in corners), 0.0), hw[0]),
            min(max(max(p[0] for p in corners), 0.0), hw[1]),
            min(max(max(p[1] for p in corners), 0.0), hw[0]),
        ]])  # fmt: skip
        assert warped(canvas, shown, matrix, hw).tolist() == [bool(inside.any())]
