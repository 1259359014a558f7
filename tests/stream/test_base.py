from __future__ import annotations

import re
import subprocess
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from rankaug import MosaicDataset, RandomAugmentWrapper, RankaugWarning
from rankaug.datasets import SyntheticDetection
from rankaug.stream import StreamingAugment, StreamingMosaic
from rankaug.stream.base import StreamDataset, default_stream
from tests import ahead
from tests.stream.helpers import EpochShards, Shards, noise


def _keep(sample: Any, rng: np.random.Generator) -> Any:
    return sample


def _draw(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {**sample, "draws": (*sample.get("draws", ()), int(rng.integers(2**31)))}


class _Ordered(IterableDataset[Any]):
    """A map-style dataset read in order, held as ``.dataset`` (so rankaug sees it)."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __iter__(self) -> Any:
        for index in range(len(self.dataset)):
            yield self.dataset[index]


class _Split(IterableDataset[Any]):
    """A map-style dataset held as ``.dataset``, every other index to each worker."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __iter__(self) -> Any:
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        for index in range(worker, len(self.dataset), workers):
            yield self.dataset[index]


class _ReadAhead(_Split):
    """:class:`_Split` that reads two samples ahead of the one it yields."""

    def __iter__(self) -> Any:
        ahead: deque[Any] = deque()
        for sample in super().__iter__():
            ahead.append(sample)
            if len(ahead) > 2:
                yield ahead.popleft()
        yield from ahead


class _Pooled(_Split):
    """:class:`_Split` that loads its samples in a thread of its own."""

    def __iter__(self) -> Any:
        with ThreadPoolExecutor(1) as pool:
            yield from pool.map(self.dataset.__getitem__, range(len(self.dataset)))


class _Through(IterableDataset[Any]):
    """A stream of the user's over another, held as ``.dataset``, without ``set_epoch``."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __iter__(self) -> Any:
        yield from self.dataset


def _passes(loader: DataLoader[Any], train: Any) -> list[list[Any]]:
    """The samples of four passes over ``loader``, ``set_epoch(5)`` before the third."""
    epochs = []
    for number in range(4):
        if number == 2:
            train.set_epoch(5)
        epochs.append(list(loader))
    return epochs


class _NoShards(IterableDataset[Any]):
    """A stream whose ``iter()`` fails at once (not a generator: its shards are listed)."""

    def __iter__(self) -> Any:
        raise OSError("no shards at s3://bucket/train")


class TestStreamDataset:
    @pytest.mark.parametrize(
        "make",
        [lambda: RandomAugmentWrapper(Shards(4), noise, seed=0, keying="sample", sample_id="id"),
         lambda: MosaicDataset(Shards(4), seed=0, output_size=32, buffer_size=2)],
    )  # fmt: skip
    def test_sample_id_cannot_be_assigned(self, make: Any) -> None:
        # before: stream.sample_id = "id" hid the method that reads each sample's id: the
        # next pass failed with "TypeError: 'str' object is not callable"
        stream = make()
        kind = type(stream).__name__
        with pytest.raises(
            AttributeError,
            match=rf"^{kind}\.sample_id cannot be assigned: sample_id is an argument of {kind}",
        ):
            stream.sample_id = "id"
        assert len(list(stream)) == 4

    @pytest.mark.parametrize("kind", [StreamingAugment, StreamingMosaic])
    def test_a_subclass_may_set_the_stream_name_it_gives_before_the_constructor(
        self, kind: Any
    ) -> None:
        # before: refused ("stream cannot be assigned: it was set before the constructor"):
        # the base sets the stream word from its map-style wrapper's, and has no stream=
        options = {"transform": noise} if kind is StreamingAugment else {"output_size": 32}

        class Named(kind):  # type: ignore[misc, valid-type]
            def __init__(self, dataset: Any, stream: str, given: str) -> None:
                self.stream = stream
                super().__init__(dataset, seed=0, stream=given, **options)

        named = Named(Shards(4), "train", "train")
        assert named.stream == kind(Shards(4), seed=0, stream="train", **options).stream
        assert len(list(named)) == 4
        with pytest.raises(AttributeError, match=(
            r"^Named\.stream cannot be assigned: it was set before the constructor, which "
            r"sets stream itself, to another value \(set: 'train'; the constructor's: \d+\)"
        )):  # fmt: skip
            Named(Shards(4), "train", "val")

    @pytest.mark.parametrize("kind", [StreamingAugment, StreamingMosaic])
    def test_a_rank_assigned_before_the_constructor_says_what_to_do(self, kind: Any) -> None:
        # before: AttributeError: 'Ranked' object has no attribute '_keyed'
        options = {"transform": noise} if kind is StreamingAugment else {"output_size": 32}

        class Ranked(kind):  # type: ignore[misc, valid-type]
            def __init__(self, dataset: Any) -> None:
                self.rank = 1
                super().__init__(dataset, seed=0, **options)

        with pytest.raises(AttributeError, match=(
            r"^Ranked\.rank cannot be assigned before the constructor: .* give it rank=1, or "
            r"assign it after the constructor"
        )):  # fmt: skip
            Ranked(Shards(4))

    def test_a_stream_whose_iter_fails_names_rank_worker_and_epoch(self) -> None:
        from rankaug import SampleError

        train: Any = RandomAugmentWrapper(_NoShards(), _keep, seed=0, rank=1)
        train.set_epoch(3)
        with pytest.raises(SampleError, match=re.escape(
            "starting the stream failed at index 0 (rank 1, worker 0, epoch 3): OSError: no "
            "shards at s3://bucket/train"
        )) as caught:  # fmt: skip
            next(iter(train))
        assert (caught.value.rank, caught.value.worker_id, caught.value.epoch) == (1, 0, 3)
        assert isinstance(caught.value.__cause__, OSError)

    def test_a_pass_left_open_at_exit_ends_quietly(self, tmp_path: Path) -> None:
        done = ahead.result("stream-left-open", lambda: tmp_path)
        assert (done.stdout, done.stderr) == ("s0000\n", "")

    @pytest.mark.parametrize(
        ("stream", "keying", "workers", "persistent"),
        [  # every stream and keying without workers, and each pair of them with workers
            *((stream, keying, 0, False) for stream in (_Split, _ReadAhead)
              for keying in ("stream", "sample")),
            (_Split, "stream", 2, False), (_ReadAhead, "sample", 2, False),
            (_Split, "sample", 2, True), (_ReadAhead, "stream", 2, True),
        ],
    )  # fmt: skip
    def test_a_map_style_wrapper_read_through_the_stream_is_keyed_with_the_pass_epoch(
        self, stream: Any, keying: Any, workers: int, persistent: bool
    ) -> None:
        def run() -> tuple[list[list[int]], list[list[Any]]]:
            mosaic = MosaicDataset(SyntheticDetection(8, image_size=16), seed=0,
                                   output_size=16, keying=keying)  # fmt: skip
            train: Any = RandomAugmentWrapper(stream(mosaic), _keep, seed=0)
            loader = DataLoader(train, batch_size=None, num_workers=workers,
                                persistent_workers=persistent)  # fmt: skip
            records = [[s["mosaic"] for s in p] for p in _passes(loader, train)]
            return [[r["epoch"] for r in p] for p in records], [
                [r["indices"] for r in p] for p in records
            ]

        epochs, tiles = run()
        # before, every pass was keyed epoch 0: the same mosaics every epoch
        assert epochs == [[epoch] * 8 for epoch in (0, 1, 5, 6)]
        assert all(tiles[a] != tiles[b] for a in range(4) for b in range(a))
        assert run() == (epochs, tiles)  # a rerun repeats

    @pytest.mark.parametrize(("workers", "persistent"), [(0, False), (2, False), (2, True)])
    def test_a_streaming_wrapper_read_through_the_stream_runs_the_pass_epoch(
        self, workers: int, persistent: bool
    ) -> None:
        def run() -> tuple[list[list[int]], list[list[Any]]]:
            inner: Any = RandomAugmentWrapper(EpochShards(8), _draw, seed=0)
            outer: Any = RandomAugmentWrapper(_Through(inner), _draw, seed=0)
            loader = DataLoader(outer, batch_size=None, num_workers=workers,
                                persistent_workers=persistent)  # fmt: skip
            passes = _passes(loader, outer)
            # the epoch the inner pass told its stream, and the inner wrapper's draws
            return [[s["epoch"] for s in p] for p in passes], [
                [s["draws"][0] for s in p] for p in passes
            ]

        epochs, draws = run()
        assert epochs == [[epoch] * 8 for epoch in (0, 1, 5, 6)]  # before, 0, 1, 2, 3
        assert all(draws[a] != draws[b] for a in range(4) for b in range(a))
        assert run() == (epochs, draws)

    def test_a_wrapper_called_in_a_thread_the_stream_started_is_warned_of(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16)
        train: Any = RandomAugmentWrapper(_Pooled(mosaic), _keep, seed=0)
        first = [s["mosaic"]["epoch"] for s in train]  # epoch 0: set_epoch's value, right
        with pytest.warns(RankaugWarning, match=re.escape(
            "MosaicDataset[0] runs in a thread beside a streaming pass of epoch 1 that reads "
            "its stream in this process, and gets no epoch there"
        )):  # fmt: skip
            second = [s["mosaic"]["epoch"] for s in train]  # before, silently epoch 0
        assert (first, second) == ([0] * 4, [0] * 4)  # the thread falls back to set_epoch's
        mosaic.set_epoch(2)  # the pass's epoch: right, and not warned
        assert [s["mosaic"]["epoch"] for s in train] == [2] * 4

    def test_a_wrapper_called_by_hand_in_the_thread_of_the_pass_is_not_warned(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16)
        train: Any = RandomAugmentWrapper(_Split(mosaic), _keep, seed=0)
        train.set_epoch(3)
        passing = iter(train)
        assert next(passing)["mosaic"]["epoch"] == 3
        assert mosaic[0]["mosaic"]["epoch"] == 0  # between samples: its own epoch, quietly
        assert [s["mosaic"]["epoch"] for s in passing] == [3] * 3

    @pytest.mark.parametrize("keying", ["stream", "sample"])
    def test_stacked_wrappers_draw_independent_streams(self, keying: str) -> None:
        options: dict[str, Any] = {"keying": keying, "sample_id": "id"}
        inner: Any = RandomAugmentWrapper(Shards(6), _draw, seed=0, **options)
        outer: Any = RandomAugmentWrapper(inner, _draw, seed=0, **options)
        assert isinstance(outer, StreamDataset)
        assert (inner.depth, outer.depth) == (1, 2)
        assert inner.stream != outer.stream
        assert all(first != second for first, second in (s["draws"] for s in outer))

    @pytest.mark.parametrize("keying", ["stream", "sample"])
    def test_refuses_a_wrapper_inside_with_its_seed_stream_and_keying(self, keying: str) -> None:
        options: dict[str, Any] = {"keying": keying, "sample_id": "id", "stream": "aug"}
        inner = RandomAugmentWrapper(Shards(4), _draw, seed=0, **options)
        with pytest.raises(ValueError, match=f"runs inside StreamingAugment\\(keying='{keying}'"):
            RandomAugmentWrapper(inner, _draw, seed=0, **options)  # before, the same draws
        RandomAugmentWrapper(inner, _draw, seed=1, **options)  # another seed: other draws

    @pytest.mark.parametrize("make", [RandomAugmentWrapper, StreamingAugment])
    def test_warns_over_a_stream_keyed_wrapper_at_the_callers_line(self, make: Any) -> None:
        inner = RandomAugmentWrapper(Shards(6), _draw, seed=0)
        with pytest.warns(
            RankaugWarning, match="StreamingAugment\\(keying='sample'\\) holds"
        ) as caught:
            make(inner, _draw, seed=0, keying="sample", sample_id="id")
        assert [w.filename for w in caught] == [__file__]  # the line that made it, however


def left_open(_: Path) -> subprocess.CompletedProcess[str]:
    """A pass kept at module level (a look at one sample): it is dropped while the
    interpreter exits, after the modules' globals are gone (a job of tests.ahead)."""
    code = (
        "from rankaug import RandomAugmentWrapper\n"
        "from tests.stream.helpers import Shards, keep\n"
        "samples = iter(RandomAugmentWrapper(Shards(4), keep, seed=0))\n"
        "print(next(samples)['id'])\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


class TestDefaultStream:
    def test_one_alone_keeps_the_stream_of_its_map_style_class(self) -> None:
        alone = StreamingAugment(Shards(4), _keep, seed=0)
        assert alone.stream == RandomAugmentWrapper([{"image": 0}], _keep, seed=0).stream
        assert default_stream(RandomAugmentWrapper, Shards(4)).endswith("RandomAugmentWrapper/1")
        assert default_stream(RandomAugmentWrapper, alone).endswith("RandomAugmentWrapper/2")

    def test_counts_a_map_style_wrapper_read_through_a_stream(self) -> None:
        inner = RandomAugmentWrapper([{"image": k} for k in range(4)], _draw, seed=0)
        outer: Any = RandomAugmentWrapper(_Ordered(inner), _draw, seed=0)
        assert isinstance(outer, StreamDataset)
        assert default_stream(RandomAugmentWrapper, _Ordered(inner)).endswith("Wrapper/2")
        assert (inner.depth, outer.depth) == (1, 2)
        assert outer.stream != inner.stream  # before, both RandomAugmentWrapper/1
        assert all(first != second for first, second in (s["draws"] for s in outer))
