from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from torch.utils.data import ConcatDataset, Subset

from rankaug import KeyedDataset, MosaicDataset, RandomAugmentWrapper, SampleContext, make_rng
from rankaug.keyed import inner_datasets


def identity(sample: Any, rng: np.random.Generator) -> Any:
    return sample


DATA = [{"image": np.zeros((4, 4, 3), np.uint8)}] * 6


class TestKeyedDataset:
    @pytest.mark.parametrize("keying", ["stream", "sample", "sample_rank"])
    def test_keys_follow_the_published_specification(self, keying: str) -> None:
        # The wrappers build their words themselves, for speed: they must be make_rng's.
        wrapped = RandomAugmentWrapper(DATA, identity, seed=2**40 + 3, keying=keying)  # type: ignore[arg-type]
        ours = wrapped.key_random(SampleContext(5, rank=2, worker_id=1, epoch=7)).generator
        if keying == "stream":
            spec = make_rng(2**40 + 3, rank=2, worker_id=1, epoch=7, stream=wrapped.stream)
        else:
            rank = 2 if keying == "sample_rank" else None
            spec = make_rng(2**40 + 3, epoch=7, index=5, rank=rank, stream=wrapped.stream)
        assert ours.integers(0, 2**63, size=4).tolist() == spec.integers(0, 2**63, size=4).tolist()

    def test_default_stream_names_the_class_and_depth(self) -> None:
        inner = MosaicDataset(DATA, seed=0, output_size=8)
        outer = RandomAugmentWrapper(inner, identity, seed=0)
        again = RandomAugmentWrapper(outer, identity, seed=0)
        assert (inner.depth, outer.depth, again.depth) == (1, 2, 3)
        assert len({inner.stream, outer.stream, again.stream}) == 3
        assert RandomAugmentWrapper(DATA, identity, seed=0, stream="mine").stream == (
            RandomAugmentWrapper(DATA, identity, seed=1, stream="mine").stream
        )

    def test_is_abstract(self) -> None:
        with pytest.raises(NotImplementedError):
            KeyedDataset(DATA, seed=0)[0]

    def test_repr(self) -> None:
        wrapped = RandomAugmentWrapper(DATA, identity, seed=3, keying="sample")
        wrapped.set_epoch(2)
        assert repr(wrapped) == (
            "RandomAugmentWrapper(list of 6, seed=3, keying='sample', epoch=2)"
        )


class TestInnerDatasets:
    def test_walks_subsets_and_concats_and_stops_at_keyed(self) -> None:
        deepest = RandomAugmentWrapper(DATA, identity, seed=0)
        keyed = RandomAugmentWrapper(Subset(deepest, [0]), identity, seed=0)
        top = ConcatDataset([Subset(keyed, [0]), DATA])
        found = list(inner_datasets(top))
        assert keyed in found
        assert deepest not in found  # keyed's own set_epoch goes on from there
        assert DATA in found
