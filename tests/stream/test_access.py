"""``rankaug.stream.access``: ``wrapper[i]`` and ``replay(record)`` of the streaming wrappers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from rankaug import (
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    RandomAugmentWrapper,
)
from tests.stream.helpers import Shards

MULTI = [
    (MosaicDataset, "StreamingMosaic", "mosaic", {"output_size": 48}),
    (MixUpDataset, "StreamingMixUp", "mixup", {}),
    (CutMixDataset, "StreamingCutMix", "cutmix", {}),
]


def _keep(sample: Any, rng: Any) -> Any:
    return sample


class TestNoRandomAccess:
    @pytest.mark.parametrize(("kind", "streaming", "key", "options"), MULTI)
    def test_indexing_a_streamed_multi_sample_wrapper_says_to_iterate(
        self, kind: Any, streaming: str, key: str, options: dict[str, Any]
    ) -> None:
        wrapper = kind(Shards(6), seed=0, buffer_size=2, **options)
        assert type(wrapper).__name__ == streaming
        expected = (
            f"{kind.__name__} over a stream (Shards) is a {streaming}, which has no random "
            "access: [0] cannot be read; iterate over it (for sample in wrapper, or a "
            "DataLoader), or build it over a map-style dataset (a Dataset with __getitem__ "
            "and __len__, not an IterableDataset) to index it"
        )
        with pytest.raises(TypeError, match=re.escape(expected)):
            wrapper[0]
        assert len(list(wrapper)) == 6  # iterating works

    def test_indexing_a_streamed_augment_says_to_iterate(self) -> None:
        wrapper: Any = RandomAugmentWrapper(Shards(3), _keep, seed=0)
        assert type(wrapper).__name__ == "StreamingAugment"
        with pytest.raises(TypeError, match=re.escape(
            "RandomAugmentWrapper over a stream (Shards) is a StreamingAugment, which has no "
            "random access: [slice(0, 2, None)] cannot be read; iterate over it"
        )):  # fmt: skip
            wrapper[0:2]


class TestNoReplay:
    @pytest.mark.parametrize(("kind", "streaming", "key", "options"), MULTI)
    def test_replaying_a_streamed_record_says_what_to_do_instead(
        self, kind: Any, streaming: str, key: str, options: dict[str, Any]
    ) -> None:
        wrapper = kind(Shards(6), seed=0, buffer_size=2, **options)
        record = next(iter(wrapper))[key]
        expected = (
            f"{kind.__name__} over a stream (Shards) is a {streaming}, which cannot replay a "
            "record: its record names the samples by their position in a worker's pass (and "
            "their ids), and a stream has no random access to read them again; to replay, "
            f"build {kind.__name__} with the same arguments over a map-style dataset of the "
            "samples, and replay records made by that one"
        )
        with pytest.raises(TypeError, match=re.escape(expected)):
            wrapper.replay(record)
        with pytest.raises(TypeError, match=re.escape(expected)):
            wrapper.replay(record, 3)
