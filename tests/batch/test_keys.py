"""The keys of BatchAugment: MurmurHash3 in torch ops, over rankaug.keys' word layout."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug.batch import _hash
from rankaug.batch._keys import DrawKeys, draw_word
from rankaug.keys import Domain, KeyTemplate

CPU = torch.device("cpu")
PINNED = [0.44018059968948364, 0.7005702257156372]
PINNED_STREAM_7 = [0.6263106465339661, 0.7069334387779236]


class TestHash:
    def test_murmur3_matches_its_reference_vector(self) -> None:
        # MurmurHash3_x86_32(b"abcd", seed=0) == 0x43ED676A: one block, then length 4.
        assert _hash.finish_int(_hash.absorb_words([0x64636261]) ^ 4) == 0x43ED676A

    @settings(max_examples=50, deadline=None)
    @given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=8))
    def test_tensor_ops_equal_python_ints(self, state: int, words: list[int]) -> None:
        tensor = _hash.absorb(torch.tensor([state] * len(words)), torch.tensor(words))
        expected = [_hash.finish_int(_hash.absorb_int(state, word)) for word in words]
        assert _hash.finish(tensor).tolist() == expected

    def test_uniforms_lie_in_the_unit_interval(self) -> None:
        words = torch.tensor([0, 2**32 - 1, 12345])
        for dtype in (torch.float32, torch.float64, torch.float16):
            u = _hash.uniform(words, dtype)
            assert u.dtype == dtype
            assert bool(((u >= 0) & (u < 1)).all())


class TestDrawKeys:
    @pytest.mark.parametrize("index", [0, 7, 2**32 + 3, 2**63 + 5, 2**64 - 1])
    def test_sample_states_hash_the_template_words(self, index: int) -> None:
        signed = index - 2**64 if index >> 63 else index
        keys = DrawKeys.of_samples(2**40 + 9, 11, torch.tensor([signed]), torch.tensor([3]), CPU)
        template = KeyTemplate(Domain.BATCH_SAMPLE, seed=2**40 + 9, stream=11)
        words = template.words(epoch=3, index=index)
        assert keys.states.tolist() == [_hash.absorb_words(words.tolist())]

    def test_step_states_hash_the_template_words(self) -> None:
        keys = DrawKeys.of_step(5, 11, 1, 2, 2**33, 3, CPU)
        template = KeyTemplate(Domain.BATCH_STEP, seed=5, stream=11, rank=1, epoch=2, step=2**33)
        expected = [_hash.absorb_words(template.words(position=p).tolist()) for p in range(3)]
        assert keys.states.tolist() == expected

    @pytest.mark.parametrize(("stream", "pinned"), [(0, PINNED), (7, PINNED_STREAM_7)])
    def test_values_are_pinned(self, stream: int, pinned: list[float]) -> None:
        # changing the scheme changes users' batches (adding the stream word to the
        # BATCH_ keys changed these)
        keys = DrawKeys.of_samples(0, stream, torch.tensor([0, 1]), torch.tensor([0, 0]), CPU)
        u = keys.uniform(torch.Size((2,)), (0, 0, 0), CPU, torch.float32)
        assert u.tolist() == pinned

    def test_draw_words_are_fixed_width_fields(self) -> None:
        words = {
            draw_word(a, s, c) for a in (0, 1, 1023) for s in (0, 1, 255) for c in (0, 1, 16383)
        }
        assert len(words) == 27
        assert max(words) < 2**32
        with pytest.raises(ValueError, match="up to 1024 augmentations"):
            draw_word(1024, 0, 0)

    def test_a_batch_level_shape_is_refused(self) -> None:
        keys = DrawKeys.of_samples(0, 0, torch.tensor([0, 1]), torch.tensor([0, 0]), CPU)
        with pytest.raises(ValueError, match=r"batch-level value of shape \(1,\) for a batch of 2"):
            keys.uniform(torch.Size((1,)), (4, 0, 0), CPU, torch.float32)
