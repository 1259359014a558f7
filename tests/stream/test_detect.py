from __future__ import annotations

import re
from typing import Any

import pytest
from torch.utils.data import IterableDataset

from rankaug.errors import RankaugWarning
from rankaug.stream.detect import batch_size, check_stream, is_stream


class _IndexedStream(IterableDataset[int]):
    """An IterableDataset with __getitem__ and __len__ (litdata's, mosaicml's)."""

    def __iter__(self) -> Any:
        return iter(range(3))

    def __getitem__(self, index: int) -> int:
        return index

    def __len__(self) -> int:
        return 3


def _keep(sample: Any, rng: Any) -> Any:
    return sample


class TestIsStream:
    def test_the_rule(self) -> None:
        assert is_stream(_IndexedStream())  # an IterableDataset always streams
        assert is_stream({"a": 1}.keys())  # iterable, no __getitem__
        assert not is_stream([1, 2])  # map-style keeps the map-style wrappers
        assert not is_stream("abc")
        assert not is_stream(3)


class TestCheckStream:
    def test_refuses_map_style_and_one_shot_iterators(self) -> None:
        with pytest.raises(TypeError, match="dataset must be an IterableDataset"):
            check_stream([1, 2])
        with pytest.raises(TypeError, match="one-shot iterator generator"):
            check_stream(x for x in range(3))
        assert check_stream(_IndexedStream()) is not None

    @pytest.mark.parametrize("name", ["RandomAugmentWrapper", "MosaicDataset"])
    def test_a_webdataset_of_batches_warns_at_the_callers_line(self, name: str) -> None:
        import rankaug

        wds = pytest.importorskip("webdataset")
        batches = wds.DataPipeline(lambda: iter([{"image": 0}] * 4), wds.batched(2))
        options = {"transform": _keep} if name == "RandomAugmentWrapper" else {}
        expected = (
            "dataset yields batches (webdataset's .batched(2) is its last batching stage), "
            "and a rankaug wrapper augments each item it reads as one sample: the samples of "
            "a batch would share one draw"
        )
        with pytest.warns(RankaugWarning, match=re.escape(expected)) as caught:
            getattr(rankaug, name)(batches, seed=0, **options)
        assert caught[0].filename == __file__

    def test_batch_size_reads_the_last_batching_stage(self) -> None:
        wds = pytest.importorskip("webdataset")

        def pipeline(*stages: Any) -> Any:
            return wds.DataPipeline(lambda: iter(range(4)), *stages)

        assert batch_size(pipeline(wds.batched(3))) == 3
        assert batch_size(pipeline(wds.batched(3), wds.unbatched())) is None
        assert batch_size(pipeline(wds.batched(3), wds.unbatched(), wds.batched(5))) == 5
        assert batch_size(pipeline()) is None
        assert batch_size(_IndexedStream()) is None


class TestStreamable:
    @pytest.mark.parametrize("name", ["MosaicDataset", "MixUpDataset", "CutMixDataset",
                                      "CopyPasteDataset"])  # fmt: skip
    @pytest.mark.parametrize("argument", [{"buffer_size": 3}, {"sample_id": "id"}])
    def test_stream_only_argument_over_a_map_style_dataset_is_named(
        self, name: str, argument: dict[str, Any]
    ) -> None:
        import rankaug
        from rankaug.datasets import SyntheticDetection

        wrapper = getattr(rankaug, name)
        ((keyword, value),) = argument.items()
        expected = rf"^{keyword}={value!r} is for streams .*{name} over a map-style dataset"
        with pytest.raises(ValueError, match=expected):
            wrapper(SyntheticDetection(4, image_size=16), seed=0, **argument)
