from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from torch.utils.data import DataLoader, IterableDataset

from rankaug import CopyPasteDataset, CutMixDataset, MixUpDataset, SampleError
from rankaug.stream import StreamingCopyPaste, StreamingCutMix, StreamingMixUp
from tests.stream.helpers import Shards
from tests.threads import Meeting, ThreadStreams, passes_named


class WithMasks(IterableDataset[dict[str, Any]]):
    """The detection stream with one instance mask per box, for CopyPaste."""

    def __init__(self, n: int) -> None:
        self.shards = Shards(n)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for sample in self.shards:
            masks = np.zeros((1, 32, 32), np.uint8)
            masks[0, 2:20, 2:20] = 1
            yield {**sample, "masks": masks}


def records(wrapper: Any, key: str, **loader: Any) -> list[dict[str, Any]]:
    return [s[key] for s in DataLoader(wrapper, batch_size=None, **loader)]


def check_window(wrapper: Any, key: str, n: int) -> None:
    """Each sample main once, in order, partnered within its window, never with itself."""
    found = records(wrapper, key)
    assert [r["ids"][0] for r in found] == [f"s{k:04d}" for k in range(n)]
    for k, record in enumerate(found):
        assert record["applied"]
        assert record["indices"][1] != k
        assert abs(record["indices"][1] - k) <= 3  # buffer_size=2: within the window of 3


def check_sample_keying(make: Any, key: str) -> None:
    alone = {r["ids"][0]: r["state"] for r in records(make(), key)}
    workers = {r["ids"][0]: r["state"] for r in records(make(), key, num_workers=2)}
    assert alone == workers
    assert len(alone) == 8


def check_threads(make: Any, key: str) -> None:
    """Threads iterating one wrapper at once each read (and name) their own samples."""
    streams = ThreadStreams(8, Meeting(2))  # each thread sets its window, then all load
    outputs = streams.run(make(streams, **options()))
    assert passes_named(outputs, lambda output: output[key]["ids"]) == [{"0"}, {"1"}]


def options(**more: Any) -> dict[str, Any]:
    return {"seed": 0, "buffer_size": 2, "sample_id": "id", "keying": "sample", **more}


class TestStreamingMixUp:
    def test_threads_iterating_at_once_each_read_their_own_samples(self) -> None:
        check_threads(MixUpDataset, "mixup")

    def test_window_and_keys(self) -> None:
        assert isinstance(MixUpDataset(Shards(8), **options()), StreamingMixUp)
        check_window(MixUpDataset(Shards(8), **options()), "mixup", 8)
        check_sample_keying(lambda: MixUpDataset(Shards(8), **options()), "mixup")

    def test_a_pass_of_one_sample_is_refused(self) -> None:
        with pytest.raises(ValueError, match="pass holds a single sample, and MixUpDataset needs"):
            records(MixUpDataset(Shards(1), **options()), "mixup")

    @pytest.mark.parametrize("make", [MixUpDataset, CutMixDataset, CopyPasteDataset])
    def test_buffer_size_is_bounded(self, make: Any) -> None:
        # 2**64 gave an OverflowError from len() of the window
        with pytest.raises(ValueError, match=r"buffer_size must be an integer in \[1, \d+\]"):
            make(Shards(4), **options(buffer_size=2**64))

    def test_the_record_never_replaces_a_key_of_the_sample(self) -> None:
        with pytest.raises(SampleError, match="record='id' names a key the sample already has"):
            records(MixUpDataset(Shards(4), **options(record="id")), "id")


class TestStreamingCutMix:
    def test_threads_iterating_at_once_each_read_their_own_samples(self) -> None:
        check_threads(CutMixDataset, "cutmix")

    def test_window_and_keys(self) -> None:
        assert isinstance(CutMixDataset(Shards(8), **options()), StreamingCutMix)
        check_window(CutMixDataset(Shards(8), **options()), "cutmix", 8)
        check_sample_keying(lambda: CutMixDataset(Shards(8), **options()), "cutmix")

    def test_refuses_indices(self) -> None:
        with pytest.raises(ValueError, match=r"weights=\[1\] has no meaning over a stream"):
            CutMixDataset(Shards(8), **options(weights=[1]))

    def test_a_pass_of_one_sample_is_refused(self) -> None:
        with pytest.raises(ValueError, match="pass holds a single sample, and CutMixDataset needs"):
            records(CutMixDataset(Shards(2), **options()), "cutmix", num_workers=2)


class TestStreamingCopyPaste:
    def test_window_and_keys(self) -> None:
        assert isinstance(CopyPasteDataset(WithMasks(8), **options(p=1.0)), StreamingCopyPaste)
        check_window(CopyPasteDataset(WithMasks(8), **options(p=1.0)), "copypaste", 8)
        check_sample_keying(lambda: CopyPasteDataset(WithMasks(8), **options(p=1.0)), "copypaste")

    def test_a_pass_of_one_sample_is_refused_with_a_partner(self) -> None:
        wrapper = CopyPasteDataset(WithMasks(2), **options(p=1.0))
        with pytest.raises(ValueError, match="pass holds a single sample, and CopyPasteDataset"):
            records(wrapper, "copypaste", num_workers=2)

    def test_flip_takes_a_pass_of_one_sample_as_the_map_style_class(self) -> None:
        wrapper = CopyPasteDataset(WithMasks(2), **options(p=1.0, source="flip"))
        outputs = list(DataLoader(wrapper, batch_size=None, num_workers=2))  # one sample each
        assert [s["id"] for s in outputs] == ["s0000", "s0001"]
        for k, out in enumerate(outputs):
            mapped = CopyPasteDataset(list(WithMasks(2))[k : k + 1], seed=0, p=1.0, source="flip")
            expected = mapped[0]
            assert out["copypaste"]["applied"]
            assert out["copypaste"]["indices"] == [0, 0]
            assert out["copypaste"]["ids"] == [f"s{k:04d}"] * 2
            assert out["copypaste"]["pasted"] == expected["copypaste"]["pasted"] == [0]
            assert np.array_equal(out["image"], expected["image"])
            assert np.array_equal(out["bboxes"], expected["bboxes"])
            assert np.array_equal(out["masks"], expected["masks"])

    def test_a_sample_that_pastes_nothing_is_recorded_not_pasted(self) -> None:
        wrapper = CopyPasteDataset(WithMasks(8), **options(p=1.0, fraction=0.0))
        found = records(wrapper, "copypaste", num_workers=2)
        assert sorted(r["ids"][0] for r in found) == [f"s{k:04d}" for k in range(8)]
        for record in found:
            assert record["applied"] is False
            assert len(record["indices"]) == len(record["ids"]) == 1
            assert record["pasted"] == []
