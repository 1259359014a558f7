"""``rankaug.stream.access``: ``wrapper[i]``, ``len(wrapper)`` and ``replay(record)`` of the
streaming wrappers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import DataLoader

from rankaug import (
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    RandomAugmentWrapper,
)
from tests.stream.helpers import Shards, detection

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

    @pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
    @pytest.mark.parametrize(("kind", "options"), [
        (RandomAugmentWrapper, {"transform": _keep}),
        (MosaicDataset, {"output_size": 48, "buffer_size": 2}),
    ])  # fmt: skip
    def test_len_is_the_length_of_a_webdataset_with_length(
        self, tmp_path: Path, kind: Any, options: dict[str, Any]
    ) -> None:
        wds = pytest.importorskip("webdataset")
        with wds.TarWriter(str(tmp_path / "a.tar")) as sink:
            for k in range(5):
                sink.write({"__key__": f"s{k}", "npy": detection(k)["image"]})
        stream = wds.WebDataset(str(tmp_path / "a.tar"), shardshuffle=False).decode()
        stream = stream.map(lambda sample: {"image": sample["npy"], "id": sample["__key__"]})
        wrapper = kind(stream.with_length(5, silent=True), seed=0, **options)
        assert len(wrapper) == 5
        assert len(DataLoader(wrapper, batch_size=2)) == 3  # as over the stream
        assert len(list(wrapper)) == 5  # one output per sample read

    def test_len_of_a_sized_stream_is_its_length(self) -> None:
        class Sized(Shards):
            def __len__(self) -> int:
                return 4

        wrapper: Any = RandomAugmentWrapper(Sized(4), _keep, seed=0)
        assert len(wrapper) == len(list(wrapper)) == 4

    def test_len_of_a_stream_without_one_names_the_wrapper_and_the_stream(self) -> None:
        with pytest.raises(TypeError, match=re.escape(
            "MosaicDataset over a stream (Shards) is a StreamingMosaic, which has the length "
            "of its stream, and Shards has no len(): count its samples by iterating, or give "
            "the stream a length (webdataset's .with_length(n), a __len__ of the samples "
            "each rank reads)"
        )):  # fmt: skip
            len(MosaicDataset(Shards(4), seed=0, buffer_size=2))

    def test_len_of_a_hugging_face_iterable_dataset_is_refused(self) -> None:
        datasets = pytest.importorskip("datasets")
        stream = datasets.Dataset.from_dict({"x": [1, 2]}).to_iterable_dataset()
        wrapper: Any = RandomAugmentWrapper(stream, _keep, seed=0)
        with pytest.raises(TypeError, match=re.escape(
            "RandomAugmentWrapper over a stream (IterableDataset) is a StreamingAugment, which "
            "has the length of its stream, and IterableDataset has no len()"
        )):  # fmt: skip
            len(wrapper)
        with pytest.raises(TypeError, match="IterableDataset has no len"):
            len(DataLoader(wrapper))

    @pytest.mark.parametrize(("length", "truth"), [(None, True), (0, False), (4, True)])
    def test_truth_is_never_refused(self, length: int | None, truth: bool) -> None:
        class Sized(Shards):
            def __len__(self) -> int:
                return length  # type: ignore[return-value]

        stream = Shards(4) if length is None else Sized(4)
        wrapper: Any = RandomAugmentWrapper(stream, _keep, seed=0)
        assert bool(wrapper) is truth  # `if dataset:` as over the stream, never len()'s error
        assert bool(MosaicDataset(stream, seed=0, buffer_size=2)) is truth


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
