from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug._multi.replay import generator_at, generator_text, read_replay, state_text


class TestStateText:
    @given(st.integers(0, 2**64 - 1))
    def test_a_generator_comes_back_in_its_state(self, seed: int) -> None:
        rng = np.random.Generator(np.random.PCG64(seed))
        rng.random(3)
        again = generator_at(state_text(rng.bit_generator.state["state"]))
        assert rng.random(4).tolist() == again.random(4).tolist()

    def test_the_buffered_half_is_a_third_word(self) -> None:
        assert state_text({"state": 255, "inc": 1}) == "ff:1"  # the format of old records
        assert state_text({"state": 255, "inc": 1}, 0) == "ff:1:0"
        rng = generator_at("ff:1:abc")
        assert rng.bit_generator.state["has_uint32"] == 1
        assert rng.bit_generator.state["uinteger"] == 0xABC
        assert generator_at("ff:1").bit_generator.state["has_uint32"] == 0

    @pytest.mark.parametrize(
        "text", ["ff", "ff:1:2:3", "ff:1:100000000", "-ff:1", "ff:1:-1", "xy:1", ""]
    )
    def test_malformed_states_are_named(self, text: str) -> None:
        with pytest.raises(
            ValueError, match=r"^record\['state'\] must be a 'state:inc' pair .*uinteger"
        ):
            generator_at(text)
        with pytest.raises(TypeError, match=r"^mine must be a 'state:inc' pair .* of type int"):
            generator_at(5, "mine")


class TestGeneratorText:
    @given(st.integers(0, 2**64 - 1), st.integers(0, 3))
    def test_a_generator_comes_back_with_its_buffered_half(self, seed: int, draws: int) -> None:
        rng = np.random.Generator(np.random.PCG64(seed))
        rng.choice(10, 3, replace=False)  # 32-bit draws: may leave half a word buffered
        rng.integers(0, 7, draws, dtype=np.uint32)
        again = generator_at(generator_text(rng))
        state, back = rng.bit_generator.state, again.bit_generator.state
        assert (back["state"], back["has_uint32"]) == (state["state"], state["has_uint32"])
        assert back["uinteger"] == (state["uinteger"] if state["has_uint32"] else 0)
        assert (
            again.choice(10, 3, replace=False).tolist() == rng.choice(10, 3, replace=False).tolist()
        )

    def test_a_buffered_half_changes_the_next_32_bit_draw(self) -> None:
        rng = np.random.Generator(np.random.PCG64(3))
        rng.integers(0, 10, dtype=np.uint32)
        assert rng.bit_generator.state["has_uint32"] == 1
        text = generator_text(rng)
        assert text.count(":") == 2
        assert text.rsplit(":", 1)[0] == state_text(rng.bit_generator.state["state"])
        expected = rng.integers(0, 2**32, 5, dtype=np.uint32).tolist()
        assert generator_at(text).integers(0, 2**32, 5, dtype=np.uint32).tolist() == expected
        fresh = np.random.Generator(np.random.PCG64(3))  # nothing buffered: the old text
        assert generator_text(fresh) == state_text(fresh.bit_generator.state["state"])
        dropped = generator_at(text.rsplit(":", 1)[0])  # the old text: the half lost
        assert dropped.integers(0, 2**32, 5, dtype=np.uint32).tolist() != expected


class TestReadReplay:
    def test_main_index_epoch_and_generator(self) -> None:
        rng = np.random.Generator(np.random.PCG64(1))
        state = state_text(rng.bit_generator.state["state"])
        replay = read_replay({"indices": [2, 0], "epoch": 5, "state": state}, None, 3, kind="k")
        assert (replay.main, replay.epoch) == (2, 5)
        assert replay.generator.random() == rng.random()
        assert read_replay({"indices": [2], "epoch": 5, "state": state}, 1, 3, kind="k").main == 1

    def test_the_kind_names_what_was_expected(self) -> None:
        with pytest.raises(TypeError, match=r"^record must be a MixUp record, got None"):
            read_replay(None, None, 3, kind="a MixUp record")
        with pytest.raises(ValueError, match="without 'state'"):
            read_replay({"indices": [0], "epoch": 0}, None, 3, kind="a MixUp record")
