from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug._multi.partners import PartnerSampler
from rankaug.mosaic import MosaicAffine
from rankaug.mosaic.affine import draw_affine
from rankaug.mosaic.plan import draw_plan, probability
from tests.mosaic.test_config import build


def _late(epoch: int) -> float:
    return 0.25 if epoch >= 2 else 1.0


def _bad(epoch: int) -> Any:
    return "often" if epoch else 2.0


class TestDrawPlan:
    @given(seed=st.integers(0, 2**32 - 1), grid=st.sampled_from([(1, 1), (2, 2), (2, 3), (3, 3)]),
           p=st.sampled_from([0.0, 0.5, 1.0]))  # fmt: skip
    def test_one_block_of_uniforms_in_the_specified_order(
        self, seed: int, grid: tuple[int, int], p: float
    ) -> None:
        rows, cols = grid
        cells = rows * cols
        config = build(grid=grid, p=p, scale_range=(0.5, 2.0))
        partners = PartnerSampler(20, cells - 1)
        plan = draw_plan(config, partners, 7, np.random.default_rng(seed), 0)
        u = np.random.default_rng(seed).random(2 * cells + rows + cols - 1).tolist()
        assert plan.applied == (u[0] < p)
        assert plan.main_cell == int(u[1] * cells)
        assert plan.indices == [7, *partners.draw(7, u[2 : cells + 1], np.random.default_rng(0))]
        assert plan.fx == u[cells + 1 : cells + cols]
        assert plan.fy == u[cells + cols : cells + rows + cols - 1]
        assert plan.scales == [0.5 + 1.5 * x for x in u[cells + rows + cols - 1 :]]
        assert len(plan.scales) == cells

    @given(seed=st.integers(0, 2**32 - 1), weighted=st.booleans(), replace=st.booleans())
    def test_the_affine_draws_after_everything_else(
        self, seed: int, weighted: bool, replace: bool
    ) -> None:
        """The plan is the same with and without an affine, whose six uniforms come after
        all the others (a weighted draw's redraws and a draw without replacement too)."""
        weights = [1.0, 0.0, 3.0, 1.0, 0.5, 2.0] if weighted else None
        partners = PartnerSampler(6, 3, weights=weights, replace=replace)
        affine = MosaicAffine(degrees=10.0, shear=2.0)
        rng = np.random.default_rng(seed)
        fused = draw_plan(build(scale_range=(0.5, 1.5), affine=affine), partners, 2, rng, 0)
        reference = np.random.default_rng(seed)
        plain = draw_plan(build(scale_range=(0.5, 1.5)), partners, 2, reference, 0)
        assert plain.affine is None
        assert fused._replace(affine=None) == plain
        assert fused.affine == draw_affine(affine, reference)
        assert rng.random() == reference.random()

    def test_the_draws_do_not_depend_on_the_probability(self) -> None:
        partners = PartnerSampler(20, 3)
        never = draw_plan(build(p=0.0), partners, 2, np.random.default_rng(1), 0)
        always = draw_plan(build(p=1.0), partners, 2, np.random.default_rng(1), 0)
        assert never._replace(applied=True) == always


class TestProbability:
    def test_constant_schedule_and_close_mosaic(self) -> None:
        assert probability(build(p=0.3), 100) == 0.3
        closing = build(epochs=10, close_mosaic=3)
        assert [probability(closing, e) for e in (0, 6, 7, 9, 12)] == [1.0, 1.0, 0.0, 0.0, 0.0]
        scheduled = build(p=_late)
        assert [probability(scheduled, e) for e in (0, 1, 2, 5)] == [1.0, 1.0, 0.25, 0.25]

    @pytest.mark.parametrize(
        ("epoch", "error", "message"),
        [(0, ValueError, r"p\(0\) must be a finite number >= 0.0 and <= 1.0, got 2.0"),
         (1, TypeError, r"p\(1\) must be a finite number .* got 'often' of type str")],
    )  # fmt: skip
    def test_a_schedule_returning_nonsense_is_named(
        self, epoch: int, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            probability(build(p=_bad), epoch)
