from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug import CutMixDataset, MixUpDataset, MosaicDataset, RankaugWarning
from rankaug._multi.replay import (
    check_replayed,
    generator_at,
    generator_text,
    ranked,
    read_replay,
    replay_rank,
    state_text,
)
from rankaug.datasets import SyntheticDetection


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

    def test_the_text_is_the_records_format(self) -> None:
        # lowercase hexadecimal words, no prefix or padding: records made before still read
        rng = np.random.Generator(np.random.PCG64(5))
        assert generator_text(rng) == (
            "e500c1d129ce9183d973b921e554efee:af6f7b8c936ab4a44f020b7b2d10234d"
        )
        rng.integers(0, 10, dtype=np.uint32)
        assert generator_text(rng) == (
            "22cbe10227ce2abd36600fa99f2b8273:af6f7b8c936ab4a44f020b7b2d10234d:ce14abee"
        )
        assert state_text({"state": 2**128 - 1, "inc": 10}, 11) == "f" * 32 + ":a:b"

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
        assert read_replay({"indices": [2], "epoch": 5, "state": state}, 2, 3, kind="k").main == 2

    def test_an_index_other_than_the_records_main_index_is_refused(self) -> None:
        # index=5 replayed the record's draws around another sample, unchecked
        record = {"indices": [2, 0], "epoch": 5, "state": "ff:1"}
        with pytest.raises(ValueError, match=r"^index must be the record's main index "
                           r"record\['indices'\]\[0\], 2, got 0 "):  # fmt: skip
            read_replay(record, 0, 3, kind="k")
        with pytest.raises(ValueError, match=r"^index must be an integer in \[0, 2\], got 7"):
            read_replay(record, 7, 3, kind="k")

    def test_the_rank_is_read_and_checked(self) -> None:
        record: dict[str, Any] = {"indices": [2, 0], "epoch": 5, "state": "ff:1"}
        assert read_replay(record, None, 3, kind="k").rank is None
        assert read_replay({**record, "rank": np.int64(3)}, None, 3, kind="k").rank == 3
        with pytest.raises(ValueError, match=r"^record\['rank'\] must be an integer in \[0, 2"):
            read_replay({**record, "rank": -1}, None, 3, kind="k")
        with pytest.raises(TypeError, match=r"^record\['rank'\] must be an integer"):
            read_replay({**record, "rank": 1.0}, None, 3, kind="k")

    def test_the_kind_names_what_was_expected(self) -> None:
        with pytest.raises(TypeError, match=r"^record must be a MixUp record, got None"):
            read_replay(None, None, 3, kind="a MixUp record")
        with pytest.raises(ValueError, match="without 'state'"):
            read_replay({"indices": [0], "epoch": 0}, None, 3, kind="a MixUp record")


def _data() -> SyntheticDetection:
    return SyntheticDetection(8, image_size=32)


class TestCheckReplayed:
    def test_tuples_lists_and_numpy_scalars_read_alike(self) -> None:
        made = {"indices": [3, 1], "rect": (2, 2, 9, 9), "ratio": 0.25, "state": "ff:1"}
        given = {"indices": (3, np.int64(1)), "rect": [2, 2, 9, 9], "ratio": np.float64(0.25)}
        check_replayed(given, made, "CutMixDataset")
        # the state and settings are what the replay starts from, not what it draws
        check_replayed({**given, "state": "0ff:1", "settings": "x"}, made, "CutMixDataset")

    @pytest.mark.parametrize(
        ("changed", "shown"),
        [
            ({"rect": [0, 0, 1, 1]}, r"record\['rect'\] is \[0, 0, 1, 1\], but the replay draws "
             r"\(2, 2, 9, 9\)"),
            ({"indices": [3, 2]}, r"record\['indices'\] is \[3, 2\], but the replay draws "
             r"\[3, 1\]"),
            ({"applied": False}, r"record\['applied'\] is False, but the replay draws True"),
        ],
    )  # fmt: skip
    def test_a_field_that_differs_is_named(self, changed: dict[str, Any], shown: str) -> None:
        made = {"applied": True, "indices": [3, 1], "rect": (2, 2, 9, 9)}
        with pytest.raises(ValueError, match=rf"^{shown}: the record was changed, or this "
                           r"CutMixDataset reads other samples"):  # fmt: skip
            check_replayed({**made, **changed}, made, "CutMixDataset")

    @pytest.mark.parametrize("wrapper", [MixUpDataset, CutMixDataset, MosaicDataset])
    def test_every_wrapper_refuses_a_changed_record(self, wrapper: Any) -> None:
        # a changed partner, rectangle or applied was replayed as if it were the record's
        made = wrapper(_data(), seed=0, p=1.0, **({"output_size": 48} if wrapper is
                       MosaicDataset else {}))  # fmt: skip
        record = made[2][made.config.record]
        partner = (record["indices"][1] + 1) % 8 or 1
        changed = {"indices": [2, partner, *record["indices"][2:]], "applied": False}
        for key, value in changed.items():
            with pytest.raises(ValueError, match=rf"^record\['{key}'\] is "):
                made.replay({**record, key: value})
        made.replay(record)  # the record itself replays
        if wrapper is CutMixDataset:
            with pytest.raises(ValueError, match=r"^record\['rect'\] is \(0, 0, 1, 1\)"):
                made.replay({**record, "rect": (0, 0, 1, 1)})


class TestRanked:
    def test_a_sample_rank_wrapper_inside_puts_the_rank_in_the_record(self) -> None:
        inner = MosaicDataset(_data(), seed=0, output_size=48, keying="sample_rank", rank=1)
        assert ranked(MixUpDataset(inner, seed=0, rank=1))
        assert "rank" in MixUpDataset(inner, seed=0, rank=1)[2]["mixup"]
        plain = MosaicDataset(_data(), seed=0, output_size=48, keying="sample")
        assert not ranked(MixUpDataset(plain, seed=0))
        assert "rank" not in MixUpDataset(plain, seed=0)[2]["mixup"]
        assert not ranked(inner)  # its own draws: the record's state


class TestReplayRank:
    @pytest.mark.parametrize("outer", [MixUpDataset, CutMixDataset, MosaicDataset])
    def test_a_replay_on_another_rank_pins_the_records(self, outer: Any) -> None:
        # a record made on rank 1, replayed on rank 0: the inner wrapper keyed its
        # samples with rank 0, a different image, silently
        def build(rank: int) -> Any:
            if outer is MosaicDataset:
                mix = MixUpDataset(_data(), seed=0, keying="sample_rank", rank=rank)
                return MosaicDataset(mix, seed=0, output_size=48, rank=rank)
            inner = MosaicDataset(_data(), seed=0, output_size=32, keying="sample_rank", rank=rank)
            return outer(inner, seed=0, rank=rank)

        made = build(1)
        out = made[2]
        record = out[made.config.record]
        assert record["rank"] == 1
        again = build(0).replay(record)
        np.testing.assert_array_equal(again["image"], out["image"])
        assert again[made.config.record] == record
        assert build(0)[2][made.config.record]["rank"] == 0

    def test_a_record_without_its_rank_is_replayed_with_this_processs_and_a_warning(
        self,
    ) -> None:
        inner = MosaicDataset(_data(), seed=0, output_size=32, keying="sample_rank", rank=2)
        mix = MixUpDataset(inner, seed=0, rank=2)
        record = {k: v for k, v in mix[2]["mixup"].items() if k != "rank"}
        with pytest.warns(RankaugWarning, match=r"no 'rank' .*this process's rank, 2, "):
            assert replay_rank(mix, read_replay(record, None, 8, kind="k")) == 2

    @pytest.mark.parametrize("outer", [MixUpDataset, CutMixDataset, MosaicDataset])
    def test_a_stream_keyed_wrapper_inside_is_warned_about(self, outer: Any) -> None:
        # the replay loaded other samples than the record's, silently
        inner = MixUpDataset(_data(), seed=0, keying="stream", record="inner")
        wrapper = outer(inner, seed=0, **({"output_size": 48} if outer is MosaicDataset else {}))
        record = wrapper[1][wrapper.config.record]
        with pytest.warns(RankaugWarning, match=r"replay cannot rebuild the record's sample: "
                          r"MixUpDataset inside is keyed 'stream'"):  # fmt: skip
            wrapper.replay(record)
        keyed = MixUpDataset(_data(), seed=0, keying="sample", record="inner")
        wrapper = outer(keyed, seed=0, **({"output_size": 48} if outer is MosaicDataset else {}))
        out = wrapper[1]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = wrapper.replay(out[wrapper.config.record])
        np.testing.assert_array_equal(again["image"], out["image"])
