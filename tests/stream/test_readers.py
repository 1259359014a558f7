"""``rankaug.stream.readers``: accelerate dealing again a stream that splits by rank."""

from __future__ import annotations

import pickle
import re
import warnings
from typing import Any

import numpy as np
import pytest

from rankaug import RandomAugmentWrapper
from rankaug.errors import RankaugWarning
from rankaug.stream.readers import rank_split
from tests.stream.helpers import Shards

accelerate_data = pytest.importorskip("accelerate.data_loader")
datasets = pytest.importorskip("datasets")
split_dataset_by_node = pytest.importorskip("datasets.distributed").split_dataset_by_node


def _keep(sample: Any, rng: Any) -> Any:
    return sample


def _stream(world_size: int | None) -> Any:
    table = {"image": [np.full((4, 4), k, np.uint8) for k in range(8)], "id": list(range(8))}
    stream = datasets.Dataset.from_dict(table).to_iterable_dataset(num_shards=4)
    if world_size is not None:
        stream = split_dataset_by_node(stream, rank=0, world_size=world_size)
    return stream.with_format("numpy")


def _shard(wrapper: Any, processes: int) -> list[int]:
    shard = accelerate_data.IterableDatasetShard(
        wrapper, batch_size=2, num_processes=processes, process_index=0
    )
    return [int(sample["id"]) for sample in shard]


class TestCheckReader:
    def test_accelerate_sharding_a_stream_split_by_rank_warns(self) -> None:
        wrapper = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        expected = (
            "StreamingAugment reads IterableDataset, which splits by rank itself (Hugging "
            "Face's split_dataset_by_node), and accelerate's IterableDatasetShard deals its "
            "samples among the 2 processes again: each rank keeps 1/2 of its own share, and "
            "the rest is never trained on. Either give accelerator.prepare a stream that"
        )
        with pytest.warns(RankaugWarning, match=re.escape(expected)):
            kept = _shard(wrapper, 2)
        assert kept == [0, 1]  # of this rank's 0, 1, 4, 5: half never kept

    @pytest.mark.parametrize(("world_size", "processes"), [(None, 2), (2, 1), (1, 2)])
    def test_a_whole_stream_or_one_process_is_not_warned(
        self, world_size: int | None, processes: int
    ) -> None:
        wrapper = RandomAugmentWrapper(_stream(world_size), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            kept = _shard(wrapper, processes)
        read = {None: 8, 1: 8, 2: 4}[world_size]  # the stream's 8 samples, or rank 0's half
        assert len(kept) == read // processes

    def test_a_stream_read_directly_is_not_warned(self) -> None:
        wrapper: Any = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(list(wrapper)) == 4

    @pytest.mark.parametrize("module", ["accelerated", "my_accelerate.data"])
    def test_a_reader_of_another_library_named_alike_is_not_warned(self, module: str) -> None:
        class IterableDatasetShard:  # accelerate's name, another library's class
            num_processes = 2

            def __init__(self, dataset: Any) -> None:
                self.dataset = dataset

            def __iter__(self) -> Any:
                yield from self.dataset

        IterableDatasetShard.__module__ = module
        wrapper = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(list(IterableDatasetShard(wrapper))) == 4


class TestRankSplit:
    def test_what_it_tells(self) -> None:
        assert rank_split(_stream(2)) == "Hugging Face's split_dataset_by_node"
        assert rank_split(_stream(None)) is None
        assert rank_split(_stream(1)) is None
        assert rank_split(Shards(4)) is None


class TestCheckPickled:
    # read over accelerate's dispatcher with a spawned worker: tests/recipes/
    # test_accelerate_stream.py ("dispatched-spawn"), in 2 real processes
    def test_a_wrapper_pickled_without_a_dispatcher_is_not_warned(self) -> None:
        wrapper: Any = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            copy = pickle.loads(pickle.dumps(wrapper))
        assert [int(s["id"]) for s in copy] == [int(s["id"]) for s in wrapper]
