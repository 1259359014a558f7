from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from torch.utils.data import Dataset, StackDataset

from rankaug import (
    EpochIndex,
    KeyedDataset,
    MosaicDataset,
    RandomAugmentWrapper,
    RankaugWarning,
    SampleError,
)
from rankaug.stacking import check_built, check_enclosing, enclosing, mixed_keyings
from tests.stacked import Unstack

DATA = [{"image": np.zeros((8, 8, 3), np.uint8), "draws": ()} for _ in range(8)]


def record(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {**sample, "draws": (*sample["draws"], int(rng.integers(2**31)))}


class Holder(Dataset[Any]):
    """A wrapper of the user's own holding its dataset as ``.base``: out of rankaug's sight."""

    def __init__(self, base: Any) -> None:
        self.base = base

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, index: int) -> Any:
        return self.base[index]


class Seen(KeyedDataset[Any]):
    """What ``enclosing`` reports from inside the dataset."""

    def augment(self, context: Any, keyed: Any) -> Any:
        return enclosing(self)


class TestCheckBuilt:
    def test_refuses_a_wrapper_inside_with_the_same_key(self) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0, stream="mine")
        with pytest.raises(ValueError, match="both were given this stream="):
            RandomAugmentWrapper(inner, record, seed=0, stream="mine")
        RandomAugmentWrapper(inner, record, seed=1, stream="mine")  # another seed: other keys
        alike = RandomAugmentWrapper(DATA, record, seed=0, stream="mine", keying="sample")
        RandomAugmentWrapper(alike, record, seed=0, stream="mine")  # another keying: other keys

    @pytest.mark.parametrize("keying", ["sample", "sample_rank"])
    def test_warns_over_a_stream_keyed_wrapper(self, keying: str) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0)
        expected = f"MosaicDataset(keying={keying!r}) holds RandomAugmentWrapper(keying='stream')"
        with pytest.warns(RankaugWarning, match=re.escape(expected)) as caught:
            outer = MosaicDataset(inner, seed=0, output_size=8, keying=keying)  # type: ignore[arg-type]
        outer[0]  # told once: not again when the inner stream starts
        assert [w.filename for w in caught] == [__file__]  # the line that made it

    def test_the_warning_names_the_line_that_made_the_wrapper(self) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0)
        with pytest.warns(RankaugWarning, match="holds RandomAugmentWrapper") as caught:
            RandomAugmentWrapper(inner, record, seed=0, stream="outer", keying="sample")
        assert [w.filename for w in caught] == [__file__]

    def test_keeps_quiet_over_one_keyed_alike(self) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0, keying="sample")
        MosaicDataset(inner, seed=0, output_size=8, keying="sample")[0]
        check_built(RandomAugmentWrapper(inner, record, seed=0))  # stream over sample: fine


class TestCheckEnclosing:
    @pytest.mark.parametrize("keying", ["stream", "sample"])
    def test_refuses_the_same_draws_as_a_wrapper_out_of_sight(self, keying: str) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0, keying=keying)  # type: ignore[arg-type]
        outer = RandomAugmentWrapper(Holder(inner), record, seed=0, keying=keying)  # type: ignore[arg-type]
        assert outer.stream == inner.stream  # both at depth 1: what it guards
        with pytest.raises(SampleError, match="cannot see the RandomAugmentWrapper") as caught:
            outer[0]
        assert isinstance(caught.value.__cause__, ValueError)
        assert "stream=" in str(caught.value)

    def test_warns_of_a_stream_keyed_wrapper_out_of_sight(self) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0, stream="inner")
        outer = RandomAugmentWrapper(Holder(inner), record, seed=0, stream="outer")
        with pytest.warns(RankaugWarning, match=r"cannot see it.*state_dict\(\)"):
            outer[0]
        assert len(outer.state_dict()["wrappers"]) == 1  # what it warns of
        outer[EpochIndex(1, epoch=1)]  # once: not at the next stream's start

    def test_finds_a_wrapper_in_a_stack_given_by_keyword(self) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0)
        outer = RandomAugmentWrapper(Unstack(StackDataset(a=inner)), record, seed=0)
        first, second = outer[0]["draws"]
        assert first != second
        assert len(outer.state_dict()["wrappers"]) == 2

    def test_warns_of_a_stream_keyed_wrapper_inside_a_per_sample_one(self) -> None:
        inner = RandomAugmentWrapper(DATA, record, seed=0, stream="inner")
        outer = RandomAugmentWrapper(Holder(inner), record, seed=0, keying="sample")
        with pytest.warns(RankaugWarning) as caught:
            outer[0]
        messages = [str(w.message) for w in caught]
        assert any("RandomAugmentWrapper(keying='sample') holds" in m for m in messages)

    def test_keeps_quiet_for_a_wrapper_alone(self) -> None:
        check_enclosing(RandomAugmentWrapper(DATA, record, seed=0))
        RandomAugmentWrapper(DATA, record, seed=0, keying="sample")[0]


class TestEnclosing:
    @pytest.mark.filterwarnings("ignore:.*cannot see it:rankaug.RankaugWarning")
    def test_lists_the_wrappers_around_the_call_nearest_first(self) -> None:
        probe = Seen(DATA, seed=0, keying="sample", stream="probe")
        middle = RandomAugmentWrapper(Holder(probe), lambda s, rng: s, seed=0, stream="mid")
        top = RandomAugmentWrapper(Holder(middle), lambda s, rng: s, seed=0, stream="top")
        assert probe[0] == []
        assert middle[1] == [middle]
        assert top[2] == [middle, top]


class TestMixedKeyings:
    def test_names_both_wrappers_and_the_fix(self) -> None:
        message = mixed_keyings("MosaicDataset", "sample", "RandomAugmentWrapper")
        assert message.startswith(
            "MosaicDataset(keying='sample') holds RandomAugmentWrapper(keying='stream')"
        )
        assert message.endswith("Pass keying='sample' to the RandomAugmentWrapper as well")
