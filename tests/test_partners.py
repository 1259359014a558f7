from __future__ import annotations

import pickle
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug import MixUpDataset, MosaicDataset, MosaicGrid, Partners
from rankaug._multi.partners import PartnerSampler
from rankaug.datasets import SyntheticDetection


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


class TestPartnerSampler:
    def test_uniform_positions_skip_the_main_index(self) -> None:
        # floor(u * m) among the m = 9 candidates other than 4, in order
        sampler = PartnerSampler(10, 4)
        assert sampler.draw(4, [0.0, 0.4, 0.45, 0.999], rng()) == [0, 3, 5, 9]
        assert sampler.draw(0, [0.0, 0.999, 0.5, 0.5], rng()) == [1, 9, 5, 5]

    def test_pool_positions(self) -> None:
        sampler = PartnerSampler(10, 3, pool=[8, 2, 5])
        assert sampler.draw(2, [0.0, 0.6, 0.3], rng()) == [8, 5, 8]  # 2 is excluded
        assert sampler.draw(0, [0.0, 0.5, 0.9], rng()) == [8, 2, 5]  # 0 is not in the pool

    def test_repr_shows_what_the_draws_read(self) -> None:
        # a record's settings hold it: other pools or weights must not read the same
        text = repr(PartnerSampler(10, 3, pool=[8, 2, 5]))
        assert "pool=[8, 2, 5]" in text
        assert text != repr(PartnerSampler(10, 3, pool=[8, 5, 2]))  # pool order is drawn
        long_pool = repr(PartnerSampler(20, 3, pool=range(12)))
        assert "pool=<12 indices, sha256=" in long_pool
        assert long_pool != repr(PartnerSampler(20, 3, pool=range(1, 13)))
        weights = repr(PartnerSampler(4, 1, weights=[1.0, 1.0, 0.0, 0.0]))
        assert "weights=<4 weights, cdf sha256=" in weights
        assert weights != repr(PartnerSampler(4, 1, weights=[0.0, 0.0, 1.0, 1.0]))
        assert weights == repr(PartnerSampler(4, 1, weights=[2.0, 2.0, 0.0, 0.0]))  # same draws

    def test_one_candidate_is_its_own_partner(self) -> None:
        assert PartnerSampler(1, 3).draw(0, [0.1, 0.5, 0.9], rng()) == [0, 0, 0]
        assert PartnerSampler(9, 2, pool=[4]).draw(4, [0.1, 0.5], rng()) == [4, 4]

    @given(seed=st.integers(0, 2**32 - 1), index=st.integers(0, 11), replace=st.booleans(),
           weighted=st.booleans(), pooled=st.booleans())  # fmt: skip
    def test_never_the_main_index_and_distinct_without_replacement(
        self, seed: int, index: int, replace: bool, weighted: bool, pooled: bool
    ) -> None:
        pool = [0, 2, 3, 5, 7, 8, 9, 11] if pooled else None
        candidates = 8 if pooled else 12
        weights = (np.arange(candidates) % 3 + 0.5).tolist() if weighted else None
        sampler = PartnerSampler(12, 5, pool=pool, weights=weights, replace=replace)
        generator = rng(seed)
        partners = sampler.draw(index, generator.random(5).tolist(), generator)
        assert len(partners) == 5
        assert index not in partners
        assert set(partners) <= set(range(12) if pool is None else pool)
        assert replace or len(set(partners)) == 5  # without replacement, all distinct

    @given(seed=st.integers(0, 2**32 - 1), index=st.integers(0, 5),
           pool=st.none() | st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True),
           zeros=st.lists(st.booleans(), min_size=6, max_size=6))  # fmt: skip
    def test_a_mix_never_draws_the_main_index(
        self, seed: int, index: int, pool: list[int] | None, zeros: list[bool]
    ) -> None:
        # issue 19: with a pool of one (or weights that leave only the main index) a mix
        # drew the main index as its own partner
        candidates = 6 if pool is None else len(pool)
        weights = [0.0 if z else 1.0 + k for k, z in enumerate(zeros[:candidates])]
        for weighted in (False, True):
            if weighted and not any(weights):
                continue
            sampler = PartnerSampler(6, 2, pool=pool, weights=weights if weighted else None)
            drawable = [
                c
                for k, c in enumerate(range(6) if pool is None else pool)
                if c != index and (not weighted or weights[k] > 0)
            ]
            generator = rng(seed)
            uniforms = generator.random(2).tolist()
            before = generator.bit_generator.state
            partners = sampler.draw_apart(index, uniforms, generator)
            assert sampler.others(index) == len(drawable)
            if drawable:
                assert partners is not None
                assert set(partners) <= set(drawable)
            else:
                assert partners is None
                assert generator.bit_generator.state == before  # nothing drawn

    def test_a_mix_draws_what_a_mosaic_draws_when_others_are_left(self) -> None:
        sampler = PartnerSampler(10, 3, pool=[8, 2, 5], weights=[1.0, 2.0, 0.0])
        for index in (0, 2, 8):
            a, b = rng(index), rng(index)
            assert sampler.draw_apart(index, [0.1, 0.5, 0.9], a) == sampler.draw(
                index, [0.1, 0.5, 0.9], b
            )
        assert sampler.draw(8, [0.5], rng()) == [2]  # only 2 has weight besides 8
        assert (
            PartnerSampler(10, 1, pool=[8, 5], weights=[1.0, 0.0]).draw_apart(8, [0.5], rng())
            is None
        )

    def test_weights_draw_by_weight_and_redraw_the_main_index(self) -> None:
        weights = [0.0] * 6
        weights[1], weights[4] = 1.0, 3.0
        sampler = PartnerSampler(6, 1, weights=weights)
        generator = rng()
        seen = Counter(sampler.draw(0, [generator.random()], generator)[0] for _ in range(4000))
        assert set(seen) == {1, 4}
        assert 0.7 < seen[4] / 4000 < 0.8
        # the main index is drawn again: index 4 only ever gets 1
        assert {sampler.draw(4, [generator.random()], generator)[0] for _ in range(50)} == {1}

    def test_weights_on_one_item_act_as_a_pool_of_one(self) -> None:
        # the mosaic failed ("allow replace=True", already the default) where the mix and a
        # pool of one left the main index alone
        for replace in (True, False):
            weighted = PartnerSampler(4, 3, weights=[1.0, 0.0, 0.0, 0.0], replace=replace)
            alone = PartnerSampler(4, 3, pool=[0], replace=replace)
            for index in range(4):
                a, b = rng(index), rng(index)
                assert weighted.draw(index, [0.1, 0.5, 0.9], a) == [0, 0, 0]
                assert alone.draw(index, [0.1, 0.5, 0.9], b) == [0, 0, 0]
                assert a.bit_generator.state == b.bit_generator.state  # nothing drawn
            assert weighted.draw_apart(0, [0.5, 0.5, 0.5], rng()) is None
            assert alone.draw_apart(0, [0.5, 0.5, 0.5], rng()) is None

    def test_weights_with_almost_no_mass_elsewhere_draw_from_it(self) -> None:
        # 1000 redraws of the main index were an error, though another item has weight
        sampler = PartnerSampler(3, 1, weights=[1.0, 1e-12, 0.0])
        generator, expected = rng(), rng()
        assert sampler.draw(0, [0.5], generator) == [1]
        expected.random(1001)  # the redraws, then one draw by the weights less index 0's
        assert generator.bit_generator.state == expected.bit_generator.state
        sampler = PartnerSampler(4, 2, weights=[1.0, 1e-12, 1e-12, 0.0], replace=False)
        assert sorted(sampler.draw(0, [0.5, 0.5], rng())) == [1, 2]
        tiny = PartnerSampler(3, 1, weights=[1.0, 1e-12, 3e-12])
        generator = rng(7)
        seen = Counter(tiny.draw(0, [0.5], generator)[0] for _ in range(400))
        assert set(seen) == {1, 2}  # by their weights: 1 in 4, 3 in 4
        assert 0.15 < seen[1] / 400 < 0.35

    def test_a_mix_with_the_main_index_holding_almost_all_mass_finds_the_other(self) -> None:
        data = SyntheticDetection(4, image_size=16)
        mixup = MixUpDataset(data, seed=0, partners=Partners(weights=[0, 0, 1, 1e-9]))
        assert [mixup[i]["mixup"]["indices"] for i in range(4)] == [[0, 2], [1, 2], [2, 3], [3, 2]]

    def test_without_replacement_weights_leave_too_few(self) -> None:
        with pytest.raises(
            ValueError,
            match=r"replace=False needs 3 distinct partners per sample, partners.weights "
            r"leave 2 candidates of weight > 0",
        ):
            PartnerSampler(6, 3, weights=[1.0, 1.0, 0.0, 0.0, 0.0, 0.0], replace=False)
        sampler = PartnerSampler(6, 3, weights=[1.0, 1.0, 1.0, 0.0, 0.0, 0.0], replace=False)
        assert sorted(sampler.draw(5, [0.1, 0.5, 0.9], rng())) == [0, 1, 2]
        with pytest.raises(
            ValueError,
            match=r"needs 3 partners besides index 0, partners.weights leave 2 others of weight",
        ):
            sampler.draw(0, [0.1, 0.5, 0.9], rng())

    def test_without_replacement_draws_after_the_block(self) -> None:
        sampler = PartnerSampler(10, 3, replace=False)
        a, b = rng(5), rng(5)
        picks = b.choice(9, 3, replace=False).tolist()
        assert sampler.draw(4, [0.1, 0.2, 0.3], a) == [p + (p >= 4) for p in picks]

    def test_huge_weights_are_taken(self) -> None:
        # 1e308 passed the old check and ended as NaN (issue 9, item 10)
        sampler = PartnerSampler(3, 2, weights=[1e308, 1e308, 0.0])
        assert sampler.cdf is not None
        assert np.isfinite(sampler.cdf).all()
        assert sampler.draw(2, [0.2, 0.7], rng()) == [0, 1]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            (
                {"pool": [0, 0, 0, 1]},
                ValueError,
                r"pool must be distinct indices, got repeated entries \[0\]",
            ),
            ({"pool": [1.5]}, TypeError, "every entry of pool must be an index"),
            ({"pool": [0, 99]}, ValueError, r"pool must be indices in \[0, 8\)"),
            ({"pool": []}, ValueError, "pool must be a non-empty sequence"),
            ({"pool": "0123"}, TypeError, "pool must be a sequence of indices"),
            ({"weights": "abc"}, TypeError, "weights must be a sequence of 8 numbers"),
            (
                {"weights": [1.0, 2.0]},
                ValueError,
                r"weights must be .* \(one per item\), not all 0, got 2 weights",
            ),
            ({"pool": [1, 2], "weights": [1.0]}, ValueError, r"one per pool entry"),
            ({"weights": [0.0] * 8}, ValueError, "not all 0"),
            ({"weights": [1.0] * 7 + [float("nan")]}, ValueError, "weights must be"),
            ({"weights": [1.0] * 7 + [-1.0]}, ValueError, "weights must be"),
            ({"replace": 0}, TypeError, "replace must be True or False"),
            (
                {"replace": False, "pool": [1, 2]},
                ValueError,
                "replace=False needs 3 distinct partners",
            ),
        ],
    )
    def test_bad_arguments_are_named(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            PartnerSampler(8, 3, **kwargs)

    def test_without_replacement_needs_enough_others_than_the_main_index(self) -> None:
        sampler = PartnerSampler(8, 3, pool=[1, 2, 3], replace=False)
        assert sorted(sampler.draw(0, [0.0] * 3, rng())) == [1, 2, 3]
        with pytest.raises(ValueError, match="needs 3 partners besides index 2, the pool has 2"):
            sampler.draw(2, [0.0] * 3, rng())

    @pytest.mark.parametrize("huge", [2**63, 2**64])
    def test_pool_entries_beyond_int64_are_out_of_range(self, huge: int) -> None:
        # numpy's OverflowError ("Python int too large to convert to C long") once
        with pytest.raises(ValueError, match=rf"pool must be indices in \[0, 8\), .* to {huge}"):
            PartnerSampler(8, 3, pool=[0, huge])
        data = SyntheticDetection(8, image_size=16)
        with pytest.raises(ValueError, match=r"pool must be indices in \[0, 8\)"):
            MixUpDataset(data, seed=0, partners=Partners(pool=[0, huge]))
        with pytest.raises(ValueError, match=r"pool must be indices in \[0, 8\)"):
            MosaicDataset(data, seed=0, partners=Partners(pool=[0, huge]))

    def test_without_replacement_every_sample_needs_enough_others(self) -> None:
        # 8 items and 8 partners: accepted, then every sample failed (each is 1 of the 8)
        for pool in (None, list(range(8))):
            with pytest.raises(ValueError, match=r"besides the sample itself, the .* 7 others"):
                PartnerSampler(8, 8, pool=pool, replace=False)
        assert sorted(PartnerSampler(8, 7, replace=False).draw(0, [0.0] * 7, rng())) == [
            1,
            2,
            3,
            4,
            5,
            6,
            7,
        ]
        data = SyntheticDetection(8, image_size=16)
        with pytest.raises(ValueError, match="replace=False needs 8 distinct partners"):
            MosaicDataset(data, seed=0, layout=MosaicGrid(grid=(3, 3)),
                          partners=Partners(replace=False))  # fmt: skip

    def test_pickles(self) -> None:
        sampler = PartnerSampler(8, 3, pool=[1, 2, 5, 6], weights=[1, 2, 3, 4], replace=False)
        clone = pickle.loads(pickle.dumps(sampler))
        assert clone.draw(2, [0.1, 0.5, 0.9], rng(1)) == sampler.draw(2, [0.1, 0.5, 0.9], rng(1))

    @pytest.mark.parametrize(
        ("name", "value", "spelled"),
        [("pool", [1, 2], "pool"), ("weights", [1.0] * 8, "weights"), ("cdf", None, "weights"),
         ("replace", False, "replace")],
    )  # fmt: skip
    def test_its_settings_cannot_be_assigned(self, name: str, value: Any, spelled: str) -> None:
        # before: mosaic.partners.pool = [1, 2] was taken by draw() but not by what the
        # sampler derived from the pool (others(4) said 3 of 2 candidates, and sample 2,
        # in the new pool but not the old, was drawn as its own partner: [2, 2, 2, 1]),
        # nor by its repr (a list: AttributeError); weights= said "no attribute 'weights'"
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=16), seed=0, output_size=16,
                               keying="sample", partners=Partners(pool=[3, 4, 5, 6]))  # fmt: skip
        before = [mosaic[i]["mosaic"]["indices"] for i in range(4)]
        with pytest.raises(
            AttributeError,
            match=rf"^PartnerSampler\.{name} cannot be assigned: .*make a new wrapper with "
            rf"partners=rankaug\.Partners\({spelled}=\.\.\.\)\)$",
        ):
            setattr(mosaic.partners, name, value)
        assert mosaic.partners.others(4) == 3
        assert [mosaic[i]["mosaic"]["indices"] for i in range(4)] == before

    def test_its_arrays_are_read_only_and_other_names_no_attributes(self) -> None:
        sampler = PartnerSampler(8, 3, pool=[1, 2, 5], weights=[1, 2, 3])
        sent = pickle.loads(pickle.dumps(sampler))  # as to a spawned worker
        for array in (sampler.pool, sampler.cdf, sent.pool, sent.cdf):
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 0  # type: ignore[index]
        with pytest.raises(AttributeError, match=r"^PartnerSampler\.pool cannot be assigned"):
            sent.pool = None
        with pytest.raises(AttributeError, match="no attribute 'wieghts'"):
            sampler.wieghts = [1, 1, 1]  # type: ignore[attr-defined]
        assert sampler.draw(2, [0.0, 0.5, 0.99], rng()) == [1, 5, 5]

    def test_weights_on_the_main_index_only_tile_it_as_a_pool_of_it_does(self) -> None:
        data = SyntheticDetection(4, image_size=16)
        for partners in (Partners(weights=[1.0, 0.0, 0.0, 0.0]), Partners(pool=[0])):
            mosaic = MosaicDataset(data, seed=0, output_size=16, keying="sample", partners=partners)
            mix = MixUpDataset(data, seed=0, keying="sample", p=1.0, partners=partners)
            assert mosaic[0]["mosaic"]["indices"] == [0, 0, 0, 0]
            assert mosaic[2]["mosaic"]["indices"] == [2, 0, 0, 0]
            assert mix[0]["mixup"]["applied"] is False
            assert mix[2]["mixup"]["applied"] is True

    def test_the_mosaic_refuses_duplicate_pools(self) -> None:
        # pool=[0, 0, 0, 1] made index 0 its own partner: indices [0, 0, 0, 0]
        with pytest.raises(ValueError, match="pool must be distinct indices"):
            MosaicDataset(
                SyntheticDetection(4, image_size=16), seed=0, partners=Partners(pool=[0, 0, 0, 1])
            )
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16,
                               partners=Partners(pool=[0, 1, 2, 3], replace=False))  # fmt: skip
        for i in range(12):
            indices = mosaic[i % 4]["mosaic"]["indices"]
            assert sorted(indices) == [0, 1, 2, 3]
