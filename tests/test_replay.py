from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug._multi.replay import generator_at, read_replay, state_text


class TestStateText:
    @given(st.integers(0, 2**64 - 1))
    def test_a_generator_comes_back_in_its_state(self, seed: int) -> None:
        rng = np.random.Generator(np.random.PCG64(seed))
        rng.random(3)
        again = generator_at(state_text(rng.bit_generator.state["state"]))
        assert rng.random(4).tolist() == again.random(4).tolist()

    @pytest.mark.parametrize("text", ["ff", "ff:1:2", "xy:1", ""])
    def test_malformed_states_are_named(self, text: str) -> None:
        with pytest.raises(ValueError, match=r"^record\['state'\] must be a 'state:inc' pair"):
            generator_at(text)
        with pytest.raises(TypeError, match=r"^mine must be a 'state:inc' pair .* of type int"):
            generator_at(5, "mine")


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
