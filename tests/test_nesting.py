from __future__ import annotations

from typing import Any

import numpy as np
from torch.utils.data import ConcatDataset, StackDataset, Subset

from rankaug import KeyedDataset, MosaicDataset, RandomAugmentWrapper
from rankaug.nesting import children, default_stream, depth, walk
from tests.stacked import Unstack


def identity(sample: Any, rng: np.random.Generator) -> Any:
    return sample


DATA = [{"image": np.zeros((4, 4, 3), np.uint8)}] * 4


class TestChildren:
    def test_reads_dataset_then_datasets(self) -> None:
        subset = Subset(DATA, [0])
        assert children(subset) == [DATA]
        assert children(ConcatDataset([DATA, subset])) == [DATA, subset]  # type: ignore[list-item]
        assert children(object()) == []

    def test_reads_the_parts_of_a_stack_given_by_keyword(self) -> None:
        other = [1, 2, 3, 4]
        assert children(StackDataset(a=DATA, b=other)) == [DATA, other]
        assert children(StackDataset(DATA, other)) == [DATA, other]


class TestWalk:
    def test_stops_below_the_types_given(self) -> None:
        inner = RandomAugmentWrapper(DATA, identity, seed=0)
        top = ConcatDataset([Subset(inner, [0]), DATA])  # type: ignore[list-item]
        assert inner in list(walk(top, KeyedDataset))
        assert DATA in list(walk(top, KeyedDataset))
        assert len([d for d in walk(top, KeyedDataset) if d is DATA]) == 1  # each once


class TestDepth:
    def test_counts_wrappers_inside_a_stack_given_by_keyword(self) -> None:
        inner = RandomAugmentWrapper(DATA, identity, seed=0)
        outer = RandomAugmentWrapper(Unstack(StackDataset(a=inner)), identity, seed=0)
        assert (depth(inner, KeyedDataset), outer.depth) == (1, 2)
        assert outer.stream != inner.stream
        assert depth(DATA, KeyedDataset) == 0

    def test_takes_the_deepest_branch(self) -> None:
        deep = RandomAugmentWrapper(MosaicDataset(DATA, seed=0, output_size=8), identity, seed=0)
        top = ConcatDataset([deep, RandomAugmentWrapper(DATA, identity, seed=1)])
        assert depth(top, KeyedDataset) == 2


class TestDefaultStream:
    def test_names_module_class_and_depth(self) -> None:
        assert default_stream(RandomAugmentWrapper, 3) == "rankaug.wrapper.RandomAugmentWrapper/3"
