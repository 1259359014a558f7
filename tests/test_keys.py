from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug.keyed_random import KeySeedSequence, state_words
from rankaug.keys import (
    MAGIC,
    Domain,
    KeyedRandom,
    KeyTemplate,
    check_keying,
    key_words,
    make_rng,
    make_seed_sequence,
    stream_id,
)

U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)
ENTROPY = st.one_of(
    st.integers(0, 2**200),
    st.lists(st.integers(0, 2**70), max_size=12),
    st.lists(U32, min_size=1, max_size=12).map(lambda words: np.array(words, np.uint32)),
)
SPAWN_KEY = st.lists(st.integers(0, 2**40), max_size=3).map(tuple)
DTYPES = st.sampled_from([np.uint32, np.uint64, "uint32", "uint64", np.dtype(np.uint64)])


def entropy_array(ss: np.random.SeedSequence) -> np.ndarray:
    entropy: object = ss.entropy  # numpy types it as what it was given
    assert isinstance(entropy, np.ndarray)
    return entropy


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

    @given(seed=U64, epoch=U32, index=U64)
    def test_states_are_numpys(self, seed: int, epoch: int, index: int) -> None:
        words = key_words(seed, epoch=epoch, index=index)
        fast = KeyedRandom(make_seed_sequence(seed, epoch=epoch, index=index))
        plain = KeyedRandom(np.random.SeedSequence(words))  # numpy's generate_state
        direct = np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))
        assert fast.generator.bit_generator.state == direct.bit_generator.state
        assert plain.generator.bit_generator.state == direct.bit_generator.state
        assert fast.py_random.getstate() == plain.py_random.getstate()
        assert fast.generator.bit_generator.seed_seq is fast.seed_sequence

    def test_torch_seed_draws_from_the_generator(self) -> None:
        a = KeyedRandom(make_seed_sequence(1, epoch=0, index=0))
        b = KeyedRandom(make_seed_sequence(1, epoch=0, index=0))
        seeds = [a.torch_seed(), a.torch_seed()]
        assert seeds == first_draws(b.generator, 2)
        assert seeds[0] != seeds[1]


class TestStateWords:
    @given(entropy=ENTROPY, spawn_key=SPAWN_KEY, pool_size=st.integers(4, 9),
           start=st.integers(0, 64), length=st.integers(0, 64))  # fmt: skip
    def test_numpy_words(
        self, entropy: object, spawn_key: tuple[int, ...], pool_size: int, start: int,
        length: int,
    ) -> None:  # fmt: skip
        stop = min(start + length, 64)
        ss = np.random.SeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size)
        expected = ss.generate_state(stop)[start:].tolist()
        assert state_words(ss.pool.tolist(), start, stop) == expected


class TestKeySeedSequence:
    @given(entropy=ENTROPY, spawn_key=SPAWN_KEY, pool_size=st.integers(4, 9),
           n_words=st.integers(0, 70), dtype=DTYPES)  # fmt: skip
    def test_generate_state_is_numpys(
        self, entropy: object, spawn_key: tuple[int, ...], pool_size: int, n_words: int,
        dtype: object,
    ) -> None:  # fmt: skip
        # the fast words (uint32 and uint64 up to 64 32-bit words) and numpy's beyond
        fast = KeySeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size)
        plain = np.random.SeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size)
        got, expected = fast.generate_state(n_words, dtype), plain.generate_state(n_words, dtype)
        assert got.dtype == expected.dtype
        assert got.flags.writeable
        assert got.flags.c_contiguous
        assert got.tolist() == expected.tolist()

    def test_requests_it_does_not_cover_go_to_numpy(self) -> None:
        fast, plain = KeySeedSequence(5), np.random.SeedSequence(5)
        assert fast.generate_state(np.int64(3)).tolist() == plain.generate_state(3).tolist()
        with pytest.raises(ValueError, match="only support uint32 or uint64"):
            fast.generate_state(4, np.int64)

    @given(entropy=ENTROPY)
    def test_generators_are_numpys(self, entropy: object) -> None:
        fast = np.random.Generator(np.random.PCG64(KeySeedSequence(entropy)))
        plain = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
        assert fast.bit_generator.state == plain.bit_generator.state

    def test_is_a_numpy_seed_sequence(self) -> None:
        ss = make_seed_sequence(3, epoch=1, index=2)
        plain = np.random.SeedSequence(key_words(3, epoch=1, index=2))
        assert isinstance(ss, np.random.SeedSequence)
        assert entropy_array(ss).tolist() == entropy_array(plain).tolist()
        assert ss.pool.tolist() == plain.pool.tolist()
        children, plain_children = ss.spawn(2), plain.spawn(2)
        assert ss.n_children_spawned == 2
        for child, plain_child in zip(children, plain_children, strict=True):
            assert child.spawn_key == plain_child.spawn_key
            assert child.generate_state(4).tolist() == plain_child.generate_state(4).tolist()

    def test_pickles_as_numpys(self) -> None:
        ss = KeySeedSequence([1, 2, 3], spawn_key=(4,), pool_size=6)
        ss.spawn(3)
        loaded = pickle.loads(pickle.dumps(ss))
        assert type(loaded) is np.random.SeedSequence
        assert loaded.state == ss.state
        assert loaded.pool.tolist() == ss.pool.tolist()
        generator = np.random.Generator(np.random.PCG64(ss))
        copied = pickle.loads(pickle.dumps(generator))
        assert copied.bit_generator.state == generator.bit_generator.state
        assert type(copied.bit_generator.seed_seq) is np.random.SeedSequence
        assert copied.bit_generator.seed_seq.state == ss.state


class TestKeyBuilder:
    @given(seed=U64, stream=U32, epoch=U32, index=U64)
    def test_builds_the_template_words(
        self, seed: int, stream: int, epoch: int, index: int
    ) -> None:
        template = KeyTemplate(Domain.SAMPLE, seed=seed, stream=stream)
        ss = template.builder("epoch", "index")(epoch, index)
        expected = template.words(epoch=epoch, index=index)
        assert type(ss) is KeySeedSequence
        assert entropy_array(ss).dtype == np.uint32
        assert entropy_array(ss).flags.writeable
        assert entropy_array(ss).tolist() == expected.tolist()

    def test_values_out_of_range(self) -> None:
        # as before the builder made its words in Python: a 32-bit field beside a
        # 64-bit one keeps its low word; where all are 32-bit, numpy refuses it
        sample = KeyTemplate(Domain.SAMPLE, seed=1, stream=0).builder("epoch", "index")
        assert (
            entropy_array(sample(2**32 + 5, 7)).tolist() == key_words(1, epoch=5, index=7).tolist()
        )
        stream = KeyTemplate(Domain.STREAM, seed=1, stream=0).builder("rank", "worker_id", "epoch")
        with pytest.raises(OverflowError):
            stream(0, 0, 2**32)
        with pytest.raises(OverflowError):
            sample(0, 2**64)

    def test_pickles(self) -> None:
        build = KeyTemplate(Domain.SAMPLE, seed=9, stream=3).builder("epoch", "index")
        again = pickle.loads(pickle.dumps(build))
        assert entropy_array(again(2, 2**40)).tolist() == entropy_array(build(2, 2**40)).tolist()
