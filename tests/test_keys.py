from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug.keys import (
    MAGIC,
    Domain,
    KeyedRandom,
    check_keying,
    key_words,
    make_rng,
    make_seed_sequence,
    stream_id,
)

U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)


def first_draws(rng: np.random.Generator, n: int = 3) -> list[int]:
    return rng.integers(0, 2**63, size=n).tolist()


class TestCheckKeying:
    @pytest.mark.parametrize("keying", ["stream", "sample", "sample_rank"])
    def test_accepts_the_three_keyings(self, keying: str) -> None:
        assert check_keying(keying) == keying

    def test_refuses_other_values(self) -> None:
        with pytest.raises(ValueError, match=r"keying must be one of .* got 'per_sample'"):
            check_keying("per_sample")
        with pytest.raises(TypeError, match=r"keying must be one of .* got 1 of type int"):
            check_keying(1)


class TestStreamId:
    def test_integers_pass_through_and_strings_hash_stably(self) -> None:
        assert stream_id(9) == 9
        # Pinned: stream names are part of the key specification.
        assert stream_id("rankaug.wrapper.RandomAugmentWrapper/1") == 341939524
        assert stream_id("") == 634351890

    def test_refuses_bad_streams(self) -> None:
        with pytest.raises(ValueError, match="stream must be"):
            stream_id(2**32)
        with pytest.raises(TypeError, match="stream must be"):
            stream_id(1.5)  # type: ignore[arg-type]


class TestKeyWords:
    def test_stream_layout(self) -> None:
        words = key_words(2**40 + 5, rank=3, worker_id=2, epoch=7, stream=11)
        assert words.dtype == np.uint32
        assert words.tolist() == [MAGIC, Domain.STREAM, 5, 2**8, 11, 3, 2, 7]

    def test_sample_layouts(self) -> None:
        assert key_words(1, epoch=2, index=2**33 + 4).tolist() == [
            MAGIC, Domain.SAMPLE, 1, 0, 0, 2, 4, 2,
        ]  # fmt: skip
        assert key_words(1, epoch=2, index=4, rank=6).tolist() == [
            MAGIC, Domain.SAMPLE_RANK, 1, 0, 0, 2, 4, 0, 6,
        ]  # fmt: skip

    def test_numpy_word_splitting_trap_is_avoided(self) -> None:
        # numpy alone: [7, 2**32] is the same entropy as [7, 0, 1] ...
        naive_a = np.random.SeedSequence([7, 2**32]).generate_state(4)
        naive_b = np.random.SeedSequence([7, 0, 1]).generate_state(4)
        assert (naive_a == naive_b).all()
        # ... while rankaug's fixed-width words keep (seed=7, index=2**32) apart from
        # (seed=7 + 2**32, index=0) and from (seed=7, index=0).
        a = key_words(7, epoch=0, index=2**32)
        b = key_words(7 + 2**32, epoch=0, index=0)
        c = key_words(7, epoch=0, index=0)
        assert len({a.tobytes(), b.tobytes(), c.tobytes()}) == 3

    def test_zero_padding_trap_is_avoided(self) -> None:
        # numpy pads entropy to 4 words: default_rng([s, 0, 0, 0]) is default_rng(s), the
        # stream of albumentations' Compose(seed=s). No rankaug key gives that stream.
        assert first_draws(np.random.default_rng([5, 0, 0, 0])) == first_draws(
            np.random.default_rng(5)
        )
        assert first_draws(make_rng(5, rank=0, worker_id=0, epoch=0)) != first_draws(
            np.random.default_rng(5)
        )

    def test_additive_aliasing_is_avoided(self) -> None:
        # seed + rank: run s rank 1 == run s+1 rank 0. Not with rankaug keys.
        for s in (0, 1, 1000):
            run_s_rank_1 = first_draws(make_rng(s, rank=1, worker_id=0, epoch=0))
            run_s1_rank_0 = first_draws(make_rng(s + 1, rank=0, worker_id=0, epoch=0))
            assert run_s_rank_1 != run_s1_rank_0

    def test_stream_key_needs_rank_and_worker(self) -> None:
        with pytest.raises(TypeError, match="needs both rank= and worker_id="):
            key_words(0, rank=0)

    def test_sample_key_refuses_worker_id(self) -> None:
        with pytest.raises(ValueError, match="worker_id=1 cannot enter a per-sample key"):
            key_words(0, index=3, worker_id=1)

    @pytest.mark.parametrize(
        ("kwargs", "error", "name"),
        [
            ({"base_seed": -1}, ValueError, "base_seed"),
            ({"base_seed": 2**64}, ValueError, "base_seed"),
            ({"base_seed": 1.0}, TypeError, "base_seed"),
            ({"base_seed": True}, TypeError, "base_seed"),
            ({"rank": 2**32}, ValueError, "rank"),
            ({"worker_id": -1}, ValueError, "worker_id"),
            ({"epoch": -1}, ValueError, "epoch"),
            ({"epoch": 2**32}, ValueError, "epoch"),
            ({"epoch": 1.5}, TypeError, "epoch"),
        ],
    )
    def test_range_and_type_errors_name_the_argument(
        self, kwargs: dict[str, object], error: type[Exception], name: str
    ) -> None:
        args: dict[str, object] = {"base_seed": 0, "rank": 0, "worker_id": 0, "epoch": 0}
        args.update(kwargs)
        with pytest.raises(error, match=rf"^{name} must be an integer"):
            key_words(**args)  # type: ignore[arg-type]

    def test_index_range(self) -> None:
        assert key_words(0, index=2**64 - 1).tolist()[6:8] == [2**32 - 1, 2**32 - 1]
        with pytest.raises(ValueError, match=r"^index must be an integer in \[0, 2\*\*64\)"):
            key_words(0, index=2**64)

    @given(
        a=st.tuples(U64, U32, U32, U32, U32),
        b=st.tuples(U64, U32, U32, U32, U32),
    )
    def test_distinct_stream_keys_give_distinct_words(
        self, a: tuple[int, ...], b: tuple[int, ...]
    ) -> None:
        def words(k: tuple[int, ...]) -> bytes:
            return key_words(k[0], stream=k[1], rank=k[2], worker_id=k[3], epoch=k[4]).tobytes()

        assert (words(a) == words(b)) == (a == b)

    @given(seed=U64, epoch=U32, index=U64, rank=st.none() | U32, stream=U32)
    def test_sample_keys_never_equal_stream_keys(
        self, seed: int, epoch: int, index: int, rank: int | None, stream: int
    ) -> None:
        sample = key_words(seed, epoch=epoch, index=index, rank=rank, stream=stream)
        streamed = key_words(seed, rank=rank or 0, worker_id=0, epoch=epoch, stream=stream)
        assert sample.tobytes() != streamed.tobytes()


class TestMakeRng:
    def test_golden_values(self) -> None:
        # Pinned first draws: a change here changes every user's augmentations.
        assert first_draws(make_rng(0, rank=0, worker_id=0, epoch=0)) == [
            4654719637084749042, 4629730867085255389, 7798353878966129475,
        ]  # fmt: skip
        assert first_draws(
            make_rng(2**64 - 1, rank=3, worker_id=7, epoch=11,
                     stream="rankaug.wrapper.RandomAugmentWrapper/1")
        ) == [3358087299676995669, 4564357698897248330, 7717308745889909291]  # fmt: skip
        assert first_draws(make_rng(42, epoch=5, index=2**40 + 3)) == [
            8120820535032624781, 8573339744225086148, 3203771624294628206,
        ]  # fmt: skip
        assert first_draws(make_rng(42, epoch=5, index=2**40 + 3, rank=2)) == [
            4438080211948033844, 3060909443491907623, 3533183682364071998,
        ]  # fmt: skip

    def test_same_key_same_stream(self) -> None:
        a = make_rng(3, rank=1, worker_id=2, epoch=4, stream="x")
        b = make_rng(np.uint64(3), rank=np.int32(1), worker_id=2, epoch=np.uint8(4), stream="x")
        assert (a.random(16) == b.random(16)).all()

    def test_no_collision_over_rank_worker_epoch_grid(self) -> None:
        draws = {
            int(make_rng(0, rank=r, worker_id=w, epoch=e).integers(0, 2**63))
            for r, w, e in itertools.product(range(64), range(16), range(8))
        }
        assert len(draws) == 64 * 16 * 8

    def test_no_collision_over_epoch_index_grid(self) -> None:
        draws = {
            int(make_rng(0, epoch=e, index=i).integers(0, 2**63))
            for e, i in itertools.product(range(8), range(1024))
        }
        assert len(draws) == 8 * 1024

    def test_seed_sequence_matches_generator(self) -> None:
        ss = make_seed_sequence(1, rank=0, worker_id=0, epoch=0)
        direct = np.random.Generator(np.random.PCG64(ss))
        assert first_draws(direct) == first_draws(make_rng(1, rank=0, worker_id=0, epoch=0))


class TestKeyedRandom:
    def test_py_random_is_keyed_and_made_once(self) -> None:
        keyed = KeyedRandom(make_seed_sequence(42, epoch=5, index=7))
        assert keyed.py_random is keyed.py_random
        # Pinned: the random.Random given to albumentations is part of the spec.
        assert keyed.py_random.getrandbits(64) == 3511598838107888349
        other = KeyedRandom(make_seed_sequence(42, epoch=5, index=8))
        assert other.py_random.getrandbits(64) != 3511598838107888349

    def test_py_random_does_not_consume_the_generator(self) -> None:
        a = KeyedRandom(make_seed_sequence(1, epoch=0, index=0))
        b = KeyedRandom(make_seed_sequence(1, epoch=0, index=0))
        a.py_random.random()
        assert first_draws(a.generator) == first_draws(b.generator)

    @pytest.mark.parametrize("given", [0, None, np.random.default_rng(0)])
    def test_a_seed_sequence_of_another_type_is_refused(self, given: object) -> None:
        # KeyedRandom(0) made a generator off the key specification, then failed in
        # py_random with "'int' object has no attribute 'generate_state'"
        with pytest.raises(TypeError, match=r"^seed_sequence must be a numpy SeedSequence"):
            KeyedRandom(given)  # type: ignore[arg-type]

    def test_torch_seed_draws_from_the_generator(self) -> None:
        a = KeyedRandom(make_seed_sequence(1, epoch=0, index=0))
        b = KeyedRandom(make_seed_sequence(1, epoch=0, index=0))
        seeds = [a.torch_seed(), a.torch_seed()]
        assert seeds == first_draws(b.generator, 2)
        assert seeds[0] != seeds[1]
