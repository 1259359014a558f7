"""Issue 19 item 1: the epoch of the pass behind plain wrappers (ConcatDataset, Subset, maps)."""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import albumentations as A
import numpy as np
import pytest
from torch.utils.data import ConcatDataset, DataLoader, Dataset, SequentialSampler, Subset

from rankaug import EpochIndex, EpochSampler, RandomAugmentWrapper, RankaugWarning, passes
from rankaug._process import current_pid
from rankaug.sample_epoch import EpochFallback, sample_epoch
from tests import ahead


def augmented(seed: int, count: int = 3) -> RandomAugmentWrapper[Any]:
    """A real albumentations pipeline over small constant images, keyed per sample."""
    data = [{"image": np.full((8, 8, 3), 30 * i + 20, np.uint8)} for i in range(count)]
    pipeline = A.Compose([A.RandomBrightnessContrast(p=1.0), A.GaussNoise(p=1.0)])
    return RandomAugmentWrapper(data, pipeline, seed=seed, keying="sample")


def _noise(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    image = sample["image"]
    return {"image": image + rng.integers(0, 50, image.shape, dtype=np.uint8)}


def drawn(seed: int, count: int) -> RandomAugmentWrapper[Any]:
    """As :func:`augmented`, with a transform that threads may share (an rng callable)."""
    data = [{"image": np.full((8, 8, 3), 30 * i + 20, np.uint8)} for i in range(count)]
    return RandomAugmentWrapper(data, _noise, seed=seed, keying="sample")


class Doubled(Dataset[Any]):
    """An index map rankaug cannot see through: ``dataset[2 * i]``."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset) // 2

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index * 2]


class Shifted(Doubled):
    """``dataset[i + 1]``: arithmetic that keeps the epoch."""

    def __len__(self) -> int:
        return len(self.dataset) - 1

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index + 1]


class Threaded(Dataset[Any]):
    """Loads a batch with a thread pool (remote storage, say), off the fetch's stack."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(self.dataset.__getitem__, indices))


def nested(dataset: Any, depth: int) -> Any:
    """``depth`` Subsets, one in another: the fetch lies deep above the wrapper."""
    for _ in range(depth):
        dataset = Subset(dataset, list(range(len(dataset))))
    return dataset


def _collate(batch: list[Any]) -> list[Any]:
    return batch


Expected = Callable[[int, int], bytes]


def cases() -> dict[str, tuple[Any, Expected]]:
    """name -> (dataset, expected(position, epoch): the bytes of the image it must give)."""
    first, second = augmented(1), augmented(2)
    concat = ConcatDataset([first, second])
    inner = augmented(3, count=6)
    shared = drawn(3, count=6)  # the thread pool calls it from two threads at once
    order = [4, 0, 5, 2]
    return {
        "concat": (
            concat,
            lambda i, e: (first if i < 3 else second)[EpochIndex(i % 3, e)]["image"].tobytes(),
        ),
        "subset": (
            Subset(inner, order),
            lambda i, e: inner[EpochIndex(order[i], e)]["image"].tobytes(),
        ),
        "doubled": (
            Doubled(inner),
            lambda i, e: inner[EpochIndex(2 * i, e)]["image"].tobytes(),
        ),
        "shifted": (
            Shifted(inner),
            lambda i, e: inner[EpochIndex(i + 1, e)]["image"].tobytes(),
        ),
        "threaded": (
            Threaded(Subset(shared, order)),
            lambda i, e: shared[EpochIndex(order[i], e)]["image"].tobytes(),
        ),
        "deep": (
            nested(inner, 40),
            lambda i, e: inner[EpochIndex(i, e)]["image"].tobytes(),
        ),
    }


def two_passes(
    dataset: Any, workers: int, persistent: bool, context: str = "fork"
) -> list[list[bytes]]:
    loader = DataLoader(
        dataset,
        sampler=EpochSampler(SequentialSampler(range(len(dataset)))),
        batch_size=2,
        num_workers=workers,
        persistent_workers=persistent,
        multiprocessing_context=context if workers else None,
        collate_fn=_collate,
    )
    return [[s["image"].tobytes() for batch in loader for s in batch] for _ in range(2)]


def spawned_subset_passes(_: Path) -> list[list[bytes]]:
    """Two passes of the ``subset`` case, one spawned persistent worker (a job of
    tests.ahead: each imports torch; the fork cases have two)."""
    dataset = cases()["subset"][0]
    return two_passes(dataset, 1, True, context="spawn")


class TestPlainWrappersInALoader:
    @pytest.mark.parametrize(
        ("workers", "persistent"), [(0, False), (2, False), (2, True)], ids=["main", "2w", "2wp"]
    )
    @pytest.mark.parametrize("name", ["concat", "subset", "doubled", "shifted", "threaded", "deep"])
    def test_every_part_is_keyed_with_the_pass_epoch(
        self, name: str, workers: int, persistent: bool
    ) -> None:
        # Before: ConcatDataset's second part, Subset and maps replayed epoch 0 forever;
        # then a Subset loaded by a thread pool, or 25 frames or more below the fetch,
        # replayed it in workers without a warning (and warned in the main process).
        dataset, expected = cases()[name]
        passes = two_passes(dataset, workers, persistent)
        for epoch, images in enumerate(passes):
            assert images == [expected(i, epoch) for i in range(len(dataset))]
        assert all(a != b for a, b in zip(*passes, strict=True))

    @pytest.mark.slow  # each spawned worker imports torch: run ahead (tests/ahead.py)
    def test_spawned_persistent_workers_find_it_too(self, tmp_path: Path) -> None:
        dataset, expected = cases()["subset"]
        passes = ahead.result("passes-spawn", lambda: tmp_path)
        assert passes == [[expected(i, e) for i in range(len(dataset))] for e in (0, 1)]

    def test_a_loader_iterated_in_a_thread_lends_its_batch_to_its_pool(self) -> None:
        # a background thread iterates (a prefetcher): the pool borrows that thread's batch
        dataset, expected = cases()["threaded"]
        got: list[list[list[bytes]]] = []
        thread = threading.Thread(target=lambda: got.append(two_passes(dataset, 0, False)))
        thread.start()
        thread.join()
        assert got == [[[expected(i, e) for i in range(len(dataset))] for e in (0, 1)]]

    def test_an_epoch_batch_reaches_a_subset_too(self) -> None:
        inner = augmented(4, count=4)
        loader = DataLoader(
            Subset(inner, [3, 1]),
            batch_sampler=EpochSampler([[0, 1]], epoch=6),  # type: ignore[list-item]
            collate_fn=_collate,
        )
        images = [s["image"].tobytes() for batch in loader for s in batch]
        assert images == [inner[EpochIndex(j, 6)]["image"].tobytes() for j in (3, 1)]

    def test_a_loader_without_epoch_sampler_keeps_set_epoch(self) -> None:
        # In a process that has EpochIndex values, plain batches still mean set_epoch.
        EpochIndex(0, epoch=9)
        inner = augmented(5)
        loader = DataLoader(Subset(inner, [2, 0]), batch_size=2, collate_fn=_collate)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            for epoch in (3, 4):
                inner.set_epoch(epoch)
                images = [s["image"].tobytes() for batch in loader for s in batch]
                assert images == [inner[EpochIndex(j, epoch)]["image"].tobytes() for j in (2, 0)]


class TestLostEpochOutsideALoader:
    def test_concat_by_hand_keeps_the_epoch(self) -> None:
        first, second = augmented(1), augmented(2)
        concat = ConcatDataset([first, second])
        sampler = EpochSampler(range(6), epoch=4)
        got = [concat[i]["image"].tobytes() for i in sampler]
        assert got == [
            part[EpochIndex(j, 4)]["image"].tobytes() for part in (first, second) for j in range(3)
        ]
        last = concat[EpochIndex(-1, 4)]["image"].tobytes()  # len + idx keeps it too
        assert last == second[EpochIndex(2, 4)]["image"].tobytes()

    def test_a_subset_by_hand_during_a_pass_warns_once(self) -> None:
        inner = augmented(6)
        subset = Subset(inner, [2, 1, 0])
        running = iter(EpochSampler(range(3), epoch=5))
        index = next(running)
        with pytest.warns(RankaugWarning, match=r"RandomAugmentWrapper\[2\].*epoch 5.*Subset"):
            subset[index]
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            subset[next(running)]  # once per wrapper
        running.close()  # type: ignore[attr-defined]

    def test_no_warning_when_set_epoch_is_the_running_epoch_or_no_pass_runs(self) -> None:
        inner = augmented(8)
        subset = Subset(inner, [2, 1, 0])
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            running = iter(EpochSampler(range(3), epoch=5))
            next(running)
            inner.set_epoch(5)
            subset[0]  # the fallback is the pass's epoch: nothing is lost
            inner.set_epoch(0)
            running.close()  # type: ignore[attr-defined]  # no pass runs any more
            subset[1]

    def test_a_worker_outside_a_fetch_after_a_batch_of_an_epoch_warns(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Before: in a worker no pass runs, so a plain index outside any fetch (a thread
        # that outlives the fetch) took set_epoch's epoch silently.
        EpochIndex(0, epoch=7)  # the worker has received the pass's indices
        monkeypatch.setattr(passes, "_fetched", (current_pid(), 7))  # and fetched a batch
        fallback = EpochFallback()
        with pytest.warns(RankaugWarning, match=r"X\[3\].*worker fetched a batch of epoch 7"):
            assert sample_epoch(3, fallback, True, "X") == 0
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            fallback = EpochFallback()
            fallback.set(7)  # the fallback is that batch's epoch: nothing is lost
            assert sample_epoch(3, fallback, True, "X") == 7
            monkeypatch.setattr(passes, "_fetched", (current_pid() + 1, 7))  # the parent's
            assert sample_epoch(3, EpochFallback(), True, "X") == 0

    def test_a_batch_of_mixed_epochs_warns(self) -> None:
        inner = augmented(9)
        loader = DataLoader(
            Subset(inner, [2, 1]),
            batch_sampler=[[EpochIndex(0, 1), EpochIndex(1, 2)]],
            collate_fn=_collate,
        )
        with pytest.warns(RankaugWarning, match="several epochs"):
            list(loader)


class TestWarnThreaded:
    def test_warns_beside_a_streaming_pass_of_another_epoch_read_in_another_thread(
        self,
    ) -> None:
        reader = threading.Thread(target=passes.begin_stream, args=(-1, 2))
        reader.start()
        reader.join()
        try:
            assert not passes.warn_threaded("W", 3, shared=2)  # the pass's epoch
            with pytest.warns(RankaugWarning, match=re.escape(
                "W[3] runs in a thread beside a streaming pass of epoch 2 that reads its "
                "stream in this process"
            )):  # fmt: skip
                assert passes.warn_threaded("W", 3, shared=0)
            passes.begin_stream(-2, 5)  # this thread reads a stream itself: not warned
            assert not passes.warn_threaded("W", 3, shared=0)
        finally:
            passes.end_stream(-1)
            passes.end_stream(-2)
        assert not passes.warn_threaded("W", 3, shared=0)  # none running

    def test_a_pass_of_another_process_is_not_this_ones(self) -> None:
        passes.STREAMING[-1] = (-5, -5, 2)  # as inherited by a forked worker
        try:
            assert not passes.warn_threaded("W", 3, shared=0)
        finally:
            passes.end_stream(-1)
