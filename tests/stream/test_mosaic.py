from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from torch.utils.data import DataLoader, IterableDataset

from rankaug import MosaicDataset, MosaicGrid, Partners, RankaugWarning, SampleError
from rankaug.stream import StreamingMosaic
from tests.stream.helpers import Named, Shards, detection
from tests.stream.test_augment import run
from tests.threads import Meeting, ThreadStreams, passes_named

pytestmark = pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")


def mosaic(n: int = 10, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"output_size": 48, "buffer_size": 3, "sample_id": "id"}
    options["keying"] = "sample"
    return MosaicDataset(Shards(n), seed=0, **{**options, **kwargs})


def records(wrapper: Any, **loader: Any) -> list[dict[str, Any]]:
    return [s["mosaic"] for s in DataLoader(wrapper, batch_size=None, **loader)]


class TestStreamingMosaic:
    def test_threads_iterating_at_once_each_read_their_own_samples(self) -> None:
        streams = ThreadStreams(8, Meeting(2))  # each thread sets its window, then all load
        wrapper = MosaicDataset(streams, seed=0, output_size=48, buffer_size=3, sample_id="id",
                                keying="sample")  # fmt: skip
        outputs = streams.run(wrapper)
        assert passes_named(outputs, lambda output: output["mosaic"]["ids"]) == [{"0"}, {"1"}]

    def test_a_repeated_sample_id_warns_once_per_pass(self) -> None:
        wrapper: Any = MosaicDataset(Named(["a", "b", "c", "a", "b"]), seed=0, output_size=48,
                                     buffer_size=3, sample_id="id", keying="sample")  # fmt: skip
        with pytest.warns(RankaugWarning, match=r"^StreamingMosaic: sample id 'a' came twice") as w:
            out = list(wrapper)
        assert len(w) == 1
        assert [o["mosaic"]["ids"][0] for o in out] == ["a", "b", "c", "a", "b"]

    def test_stacked_mosaics_draw_independent_streams(self) -> None:
        inner = MosaicDataset(Shards(8), seed=0, output_size=48, buffer_size=3)
        outer = MosaicDataset(inner, seed=0, output_size=48, buffer_size=3)
        assert (inner.depth, outer.depth) == (1, 2)
        assert inner.stream != outer.stream

    def test_dispatch_and_refusals(self) -> None:
        assert isinstance(mosaic(), StreamingMosaic)
        with pytest.raises(ValueError, match=r"pool=.*has no meaning over a stream"):
            mosaic(pool=[0, 1])
        with pytest.raises(ValueError, match=r"partners.pool=.*has no meaning over a stream"):
            mosaic(partners=Partners(pool=[0, 1]))
        with pytest.raises(ValueError, match="buffer_size must be"):
            mosaic(buffer_size=0)
        # the window of buffer_size + 1 samples is a Python length: OverflowError once
        for size in (sys.maxsize, 2**64):
            with pytest.raises(
                ValueError, match=rf"buffer_size must be an integer in \[1, {sys.maxsize - 1}\]"
            ):
                mosaic(buffer_size=size)

    def test_a_flat_keyword_warns_once_at_the_callers_line(self) -> None:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            stream = mosaic(3, fill=0)  # 3 samples, buffer_size=3: a second, smaller window
            samples = list(stream)
        assert [(w.category, w.filename) for w in seen] == [(DeprecationWarning, __file__)]
        assert "use layout=rankaug.MosaicGrid(fill=...)" in str(seen[0].message)
        assert stream.config.layout.fill == (0.0,)
        assert len(samples) == 3

    def test_every_sample_is_main_once_and_never_its_own_partner(self) -> None:
        found = records(mosaic(11))
        assert [r["ids"][0] for r in found] == [f"s{k:04d}" for k in range(11)]
        assert [r["indices"][0] for r in found] == list(range(11))
        for k, record in enumerate(found):
            assert record["applied"]
            assert record["ids"][0] not in record["ids"][1:]
            # partners from the window: the next 3 samples, or the last 4 at the end
            low, high = (k + 1, k + 3) if k <= 7 else (7, 10)
            assert all(low <= i <= high for i in record["indices"][1:]), (k, record["indices"])

    def test_pixels_come_from_the_partners_named(self) -> None:
        sample = next(iter(mosaic(6, layout=MosaicGrid(scale_mode="fill", fill=255))))
        record = sample["mosaic"]
        image = sample["image"]
        shown = [
            (index, window)
            for index, window in zip(record["indices"], record["dst"], strict=True)
            if window[2] > window[0] and window[3] > window[1]
        ]
        assert len(shown) >= 2  # the main tile and at least one partner show
        for index, (x0, y0, x1, y1) in shown:  # constant tiles: the value is the sample's number
            assert (image[y0:y1, x0:x1] == index).all()

    def test_short_passes_draw_from_what_there_is(self) -> None:
        found = records(mosaic(3, buffer_size=8))
        assert [r["indices"][0] for r in found] == [0, 1, 2]
        for k, record in enumerate(found):  # partners: the 2 others, never itself
            assert set(record["indices"][1:]) <= {0, 1, 2} - {k}
        (alone,) = records(mosaic(1))
        assert not alone["applied"]
        assert alone["ids"] == ["s0000"]

    def test_sample_keying_draws_by_id_in_any_topology(self) -> None:
        alone = {r["ids"][0]: r["state"] for r in records(mosaic())}
        workers = {r["ids"][0]: r["state"] for r in records(mosaic(), num_workers=2)}
        assert alone == workers
        assert len(alone) == 10

    def test_epochs_differ_and_reruns_repeat(self) -> None:
        wrapper = mosaic(keying="stream")
        first, second = records(wrapper, num_workers=2), records(wrapper, num_workers=2)
        assert first == records(mosaic(keying="stream"), num_workers=2)
        assert all(a["state"] != b["state"] for a, b in zip(first, second, strict=True))
        assert [r["epoch"] for r in second] == [1] * 10

    def test_resumes_mid_pass_bit_for_bit(self) -> None:
        def build() -> Any:
            return MosaicDataset(Shards(16), seed=2, output_size=40, buffer_size=2)

        whole, _ = run(build())
        head, state = run(build(), batches=3)
        rest, _ = run(build(), state=state)
        assert len(whole) == 16
        assert head + rest == whole

    def test_keeps_the_sample_shape(self) -> None:
        sample = next(iter(mosaic(5)))
        assert set(sample) == {"image", "bboxes", "labels", "id", "mosaic"}
        assert sample["labels"].dtype == np.int64
        assert sample["id"] == "s0000"
        assert detection(0)["image"].dtype == sample["image"].dtype

    def test_failures_name_the_main_samples_id(self) -> None:
        class Broken(IterableDataset[dict[str, Any]]):
            def __iter__(self) -> Iterator[dict[str, Any]]:
                for k in range(6):
                    sample = detection(k)
                    if k == 0:
                        sample["bboxes"] = np.array([[1.0, 2.0, 3.0]])  # not (N, 4)
                    yield sample

        wrapper: Any = MosaicDataset(Broken(), seed=0, output_size=64, buffer_size=3,
                                     sample_id="id")  # fmt: skip
        with pytest.raises(SampleError, match=r"mosaic failed at index 0 \(id 's0000', rank 0"):
            list(wrapper)
