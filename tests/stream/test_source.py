from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from rankaug import RandomAugmentWrapper
from rankaug.epoch import carried_epoch, carrying
from rankaug.stream.source import Reading, forward_epoch, resumable


def _keep(sample: Any, rng: np.random.Generator) -> Any:
    return sample


def _drawn(sample: Any, rng: np.random.Generator) -> Any:
    return {**sample, "drawn": int(rng.integers(1 << 30))}


class detshuffle:
    def __init__(self) -> None:
        self.epoch = -1


class ResampledShards(detshuffle):
    """By its name, as webdataset's: an ``epoch`` it adds one to before each pass."""


class _Pipeline:
    def __init__(self) -> None:
        self.pipeline: list[Any] = [object(), detshuffle()]


class TestForwardEpoch:
    def test_set_epoch_or_webdataset_detshuffle(self) -> None:
        calls: list[int] = []

        class WithSetEpoch:
            def set_epoch(self, epoch: int) -> None:
                calls.append(epoch)

        forward_epoch(WithSetEpoch(), 4)
        assert calls == [4]
        pipeline = _Pipeline()
        forward_epoch(pipeline, 4)  # detshuffle adds one before shuffling: epoch 4
        assert pipeline.pipeline[1].epoch == 3
        resampled = _Pipeline()
        resampled.pipeline[1] = ResampledShards()
        forward_epoch(resampled, 4)  # ResampledShards too: it draws by epoch 4
        assert resampled.pipeline[1].epoch == 3
        forward_epoch(object(), 4)  # nothing to tell: nothing happens

    @pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
    def test_webdataset_resampled_shards_draw_by_the_pass_epoch(self, tmp_path: Path) -> None:
        # ResampledShards counts its own epochs from -1: fresh (non-persistent) workers
        # would draw epoch 0's shards every epoch, persistent ones 0, 1, 2
        wds = pytest.importorskip("webdataset")
        for shard in range(4):
            with wds.TarWriter(str(tmp_path / f"train-{shard}.tar")) as sink:
                for k in range(shard * 2, shard * 2 + 2):
                    sink.write({"__key__": f"s{k}", "npy": np.full((2, 2, 3), k, np.uint8)})

        def make() -> RandomAugmentWrapper[Any]:
            shards = wds.ResampledShards(str(tmp_path / "train-{0..3}.tar"), deterministic=True)
            stream = wds.DataPipeline(shards, wds.tarfile_to_samples()).with_epoch(6)
            return RandomAugmentWrapper(stream, _keep, seed=0)

        def keys(samples: Any) -> list[str]:
            return [sample["__key__"] for sample in samples]

        kept = make()  # a persistent worker: one stream for every pass
        persistent = [keys(kept) for _ in range(3)]
        fresh = []  # a fresh worker per pass: a new stream told the epoch
        for epoch in range(3):
            train = make()
            train.set_epoch(epoch)
            fresh.append(keys(train))
        assert fresh == persistent
        assert len({tuple(k) for k in fresh}) == 3  # each epoch its own draw
        for persistent_workers in (False, True):  # a DataLoader's workers, as well
            loader = DataLoader(make(), batch_size=None, num_workers=1,
                                persistent_workers=persistent_workers)  # fmt: skip
            assert [keys(loader) for _ in range(3)] == persistent

    def test_hugging_faces_shared_epoch_is_written_whole(self) -> None:
        class HuggingFaceLike:
            """``set_epoch`` as datasets 5.2's: a read-modify-write of a shared tensor."""

            def __init__(self) -> None:
                self._epoch = torch.tensor(0).share_memory_()
                self.calls = 0

            def set_epoch(self, epoch: int) -> None:
                self.calls += 1
                self._epoch += epoch - self._epoch  # two workers at once: epoch 2, not 1

        dataset = HuggingFaceLike()
        forward_epoch(dataset, 1)
        forward_epoch(dataset, 1)  # a second worker: still 1
        assert int(dataset._epoch) == 1
        assert dataset.calls == 0

    def test_mosaicml_streamings_next_epoch_is_set(self) -> None:
        class MosaicMLLike:
            """``next_epoch`` as mosaicml-streaming 0.13's: it shuffles by it, no set_epoch."""

            def __init__(self) -> None:
                self._next = 0

            @property
            def next_epoch(self) -> int:
                return self._next

            @next_epoch.setter
            def next_epoch(self, next_epoch: int) -> None:
                self._next = next_epoch

        dataset = MosaicMLLike()  # a fresh process resumed on epoch 3 counts from 0 itself
        forward_epoch(dataset, 3)
        assert dataset.next_epoch == 3


class TestOwnState:
    def test_only_a_state_dict_without_arguments_is_the_streams_own(self) -> None:
        class HuggingFaceLike:
            def state_dict(self) -> dict[str, int]:
                return {}

            def load_state_dict(self, state: dict[str, int]) -> None:
                pass

        class LitdataLike(HuggingFaceLike):
            def state_dict(self, num_samples_yielded: int) -> dict[str, int]:  # type: ignore[override]
                return {}

        assert resumable(HuggingFaceLike())
        assert not resumable(LitdataLike())
        assert not resumable(object())

    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    def test_a_hugging_face_shuffle_buffer_is_re_read(self) -> None:
        # its state leaves the buffer out: resumed from it, the buffered samples were
        # lost and others came twice, silently
        datasets = pytest.importorskip("datasets")
        stateful = pytest.importorskip("torchdata.stateful_dataloader", reason="a test extra")
        datasets.disable_progress_bars()
        rows = [{"id": f"s{k:02d}"} for k in range(12)]

        def build() -> Any:
            stream = datasets.Dataset.from_list(rows).to_iterable_dataset(num_shards=2)
            return RandomAugmentWrapper(stream.shuffle(seed=3, buffer_size=4), _drawn, seed=0)

        def run(state: Any = None, stop: int | None = None) -> tuple[list[Any], Any]:
            loader = stateful.StatefulDataLoader(build(), batch_size=None)
            if state is not None:
                loader.load_state_dict(state)
            out = []
            for sample in loader:
                out.append((sample["id"], sample["drawn"]))
                if len(out) == stop:
                    return out, loader.state_dict()
            return out, None

        whole, _ = run()
        assert sorted(i for i, _ in whole) == [r["id"] for r in rows]
        for stop in (4, 7):
            head, state = run(stop=stop)
            rest, _ = run(state=state)
            assert head + rest == whole
        assert resumable(build().dataset.shuffle(seed=0, buffer_size=2).take(5)) is False
        assert resumable(build().dataset.take(5)) is False  # the buffer, further in
        assert resumable(datasets.Dataset.from_list(rows).to_iterable_dataset()) is True


class TestReading:
    def test_iter_and_each_next_run_with_the_epoch_carried(self) -> None:
        seen: list[Any] = []

        class Stream:
            def __iter__(self) -> Any:
                seen.append(("iter", carried_epoch()))
                return self._samples()

            def _samples(self) -> Any:
                for k in range(2):
                    seen.append(("next", carried_epoch()))
                    yield k

        with carrying(9):  # an enclosing epoch is back once each call returns
            reading = Reading(Stream(), 3)
            assert carried_epoch() == 9
            assert list(reading) == [0, 1]
            assert carried_epoch() == 9
        assert seen == [("iter", 3), ("next", 3), ("next", 3)]
        assert carried_epoch() is None

    def test_a_failure_drops_the_epoch(self) -> None:
        class Failing:
            def __iter__(self) -> Any:
                return self

            def __next__(self) -> Any:
                raise OSError("shard gone")

        reading = Reading(Failing(), 3)
        with pytest.raises(OSError, match="shard gone"):
            next(reading)
        assert carried_epoch() is None
