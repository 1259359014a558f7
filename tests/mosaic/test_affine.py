from __future__ import annotations

import dataclasses
import math
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug.mosaic import MosaicAffine
from rankaug.mosaic.affine import AffineDraw, affine_matrix, draw_affine, is_axis_aligned

AFFINE = st.builds(
    MosaicAffine,
    degrees=st.floats(0.0, 180.0),
    translate=st.floats(0.0, 0.5),
    scale=st.floats(0.0, 0.99),
    shear=st.floats(0.0, 44.0),
)


class TestMosaicAffine:
    def test_defaults_are_ultralytics_hyperparameters(self) -> None:
        # ultralytics 8.x default.yaml: degrees 0.0, translate 0.1, scale 0.5, shear 0.0
        assert dataclasses.astuple(MosaicAffine()) == (0.0, 0.1, 0.5, 0.0)

    def test_numbers_are_kept_as_floats_and_frozen(self) -> None:
        affine = MosaicAffine(degrees=10, translate=np.float32(0.25), scale=0, shear=2)
        assert dataclasses.astuple(affine) == (10.0, 0.25, 0.0, 2.0)
        assert all(type(v) is float for v in dataclasses.astuple(affine))
        with pytest.raises(dataclasses.FrozenInstanceError):
            affine.degrees = 5.0  # type: ignore[misc]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"degrees": -1}, ValueError, r"degrees must be a finite number >= 0.0 and <= 180.0"),
            ({"degrees": 181}, ValueError, r"degrees must be .* <= 180.0, got 181"),
            ({"degrees": True}, TypeError, "degrees must be a finite number .* of type bool"),
            ({"degrees": "10"}, TypeError, "degrees must be a finite number .* of type str"),
            ({"translate": 0.6}, ValueError, r"translate must be .* <= 0.5, got 0.6"),
            ({"translate": float("nan")}, ValueError, "translate must be a finite number"),
            ({"scale": 1.0}, ValueError, r"scale must be a finite number >= 0.0 and < 1.0"),
            ({"scale": -0.1}, ValueError, "scale must be a finite number >= 0.0"),
            ({"shear": 45.0}, ValueError, r"shear must be a finite number >= 0.0 and < 45.0"),
            ({"shear": None}, TypeError, "shear must be a finite number"),
        ],
    )
    def test_bad_values_are_named(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            MosaicAffine(**kwargs)


class TestDrawAffine:
    @given(affine=AFFINE, seed=st.integers(0, 2**32 - 1))
    def test_one_block_of_six_uniforms_in_ultralytics_order(
        self, affine: MosaicAffine, seed: int
    ) -> None:
        rng = np.random.default_rng(seed)
        draw = draw_affine(affine, rng)
        reference = np.random.default_rng(seed)
        v = reference.random(6).tolist()
        d, t, s, h = affine.degrees, affine.translate, affine.scale, affine.shear
        assert draw == AffineDraw(
            -d + 2 * d * v[0], 1 - s + 2 * s * v[1], -h + 2 * h * v[2], -h + 2 * h * v[3],
            0.5 - t + 2 * t * v[4], 0.5 - t + 2 * t * v[5],
        )  # fmt: skip
        assert rng.random() == reference.random()  # nothing more was drawn
        assert -d <= draw.angle <= d
        assert 1 - s <= draw.scale <= 1 + s
        assert 0.5 - t <= draw.translate_x <= 0.5 + t

    def test_no_rotation_and_no_shear_are_exact_zeros(self) -> None:
        draw = draw_affine(MosaicAffine(), np.random.default_rng(3))
        assert (draw.angle, draw.shear_x, draw.shear_y) == (0.0, 0.0, 0.0)
        assert math.copysign(1.0, draw.angle) == 1.0  # not -0.0


class TestAffineMatrix:
    @given(draw=st.builds(AffineDraw, st.floats(-180, 180), st.floats(0.01, 2.0),
                          st.floats(-44, 44), st.floats(-44, 44), st.floats(0, 1),
                          st.floats(0, 1)),
           canvas=st.tuples(st.integers(1, 2000), st.integers(1, 2000)),
           output=st.tuples(st.integers(1, 1000), st.integers(1, 1000)))  # fmt: skip
    def test_is_ultralytics_t_s_r_c(
        self, draw: AffineDraw, canvas: tuple[int, int], output: tuple[int, int]
    ) -> None:
        """ultralytics' RandomPerspective._compute_affine_matrix (perspective 0), in float64."""
        c = np.eye(3)
        c[0, 2], c[1, 2] = -canvas[1] / 2, -canvas[0] / 2
        r = np.eye(3)
        r[:2] = cv2.getRotationMatrix2D(angle=draw.angle, center=(0, 0), scale=draw.scale)
        s = np.eye(3)
        s[0, 1] = math.tan(draw.shear_x * math.pi / 180)
        s[1, 0] = math.tan(draw.shear_y * math.pi / 180)
        t = np.eye(3)
        t[0, 2], t[1, 2] = draw.translate_x * output[1], draw.translate_y * output[0]
        expected = (t @ s @ r @ c)[:2]
        got = np.array(affine_matrix(draw, canvas, output))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)

    def test_axis_aligned_maps_the_canvas_centre_to_the_drawn_point(self) -> None:
        draw = AffineDraw(0.0, 0.75, 0.0, 0.0, 0.4, 0.55)
        matrix = affine_matrix(draw, (200, 160), (100, 80))
        assert is_axis_aligned(matrix)
        (a, b, c), (d, e, f) = matrix
        assert (a, b, d, e) == (0.75, 0.0, 0.0, 0.75)
        assert (a * 80 + c, e * 100 + f) == pytest.approx((0.4 * 80, 0.55 * 100))
        assert not is_axis_aligned(affine_matrix(draw._replace(angle=5.0), (200, 160), (100, 80)))
        assert not is_axis_aligned(affine_matrix(draw._replace(shear_y=1.0), (200, 160), (100, 80)))
        # half a turn has exact zeros nowhere off the diagonal, and flips: a warp
        assert not is_axis_aligned(affine_matrix(draw._replace(angle=180.0), (20, 16), (10, 8)))
