from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import IterableDataset

from rankaug.errors import RankaugWarning
from rankaug.stream.detect import batch_size, check_stream, fixed_shuffles, is_stream


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

    @pytest.mark.parametrize(
        "name", ["RandomAugmentWrapper", "MosaicDataset", "StreamingAugment", "StreamingMosaic"]
    )
    def test_a_webdataset_of_batches_warns_at_the_callers_line(self, name: str) -> None:
        import rankaug

        wds = pytest.importorskip("webdataset")
        batches = wds.DataPipeline(lambda: iter([{"image": 0}] * 4), wds.batched(2))
        augments = name in ("RandomAugmentWrapper", "StreamingAugment")
        options = {"transform": _keep} if augments else {}
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

    @pytest.mark.filterwarnings("ignore:WebDataset.shardshuffle=.... is ignored:UserWarning")
    def test_a_webdataset_shuffled_by_a_fixed_seed_warns(self, tmp_path: Path) -> None:
        import rankaug

        wds = pytest.importorskip("webdataset")
        urls = str(tmp_path / "t-{0..3}.tar")
        expected = (
            "dataset shuffles by a fixed seed (webdataset's shuffle stage, seed=7: "
            "WebDataset(urls, shardshuffle=n) without detshuffle=True, or .shuffle(n, "
            "seed=...)), so it reads the same order every epoch"
        )
        with pytest.warns(RankaugWarning, match=re.escape(expected)) as caught:
            rankaug.RandomAugmentWrapper(wds.WebDataset(urls, shardshuffle=4, seed=7), _keep,
                                         seed=0)  # fmt: skip
        assert caught[0].filename == __file__
        quiet = [
            wds.WebDataset(urls, shardshuffle=4, detshuffle=True, seed=7),  # by the epoch
            wds.WebDataset(urls, shardshuffle=False, seed=7),  # shuffles nothing
            wds.WebDataset(urls, resampled=True, shardshuffle=4, seed=7),  # drawn anew
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            for stream in quiet:
                rankaug.RandomAugmentWrapper(stream, _keep, seed=0)
        assert [fixed_shuffles(stream) for stream in quiet] == [[], [], []]

    @pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
    def test_the_order_a_fixed_seed_repeats(self, tmp_path: Path) -> None:
        wds = pytest.importorskip("webdataset")
        for shard in range(4):
            with wds.TarWriter(str(tmp_path / f"t-{shard}.tar")) as sink:
                sink.write({"__key__": f"s{shard}", "txt": "x"})
        stream = wds.WebDataset(str(tmp_path / "t-{0..3}.tar"), shardshuffle=4, seed=7)
        with pytest.warns(RankaugWarning, match="fixed seed"):
            train: Any = rankaug_wrapper(stream)
        orders = {tuple(sample["__key__"] for sample in train) for _ in range(4)}
        assert len(orders) == 1  # webdataset's own: what the warning is about


def rankaug_wrapper(stream: Any) -> Any:
    from rankaug import RandomAugmentWrapper

    return RandomAugmentWrapper(stream, _keep, seed=0, adapter=_Whole())


class _Whole:
    """An adapter that hands the transform the sample as it is (no image needed)."""

    def unpack(self, sample: Any) -> Any:
        return sample

    def repack(self, sample: Any, data: Any) -> Any:
        return data


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
