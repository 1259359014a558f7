"""CachedDataset under real concurrency: processes racing on the same indices, a reader
watching for torn files while they write, DataLoader workers of two gloo ranks."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from torch.utils.data import DataLoader, Dataset

import rankaug.cache._format
from rankaug.cache import CachedDataset
from rankaug.cache._store import sample_path
from rankaug.datasets import SyntheticDetection
from tests.cache.helpers import assert_identical
from tests.ddp.harness import digest, launch

pytestmark = pytest.mark.timeout(600)

PROCESSES = 4
LENGTH = 12
FORK = multiprocessing.get_context("fork")


class Lockstep(Dataset[Any]):
    """SyntheticDetection whose loads meet at a barrier, so that every process has the
    same sample in hand, none of them stored yet, when they all start writing it."""

    def __init__(self, barrier: Any) -> None:
        self.source = SyntheticDetection(LENGTH, image_size=(240, 320), seed=11)
        self.barrier = barrier

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> Any:
        sample = self.source[index]
        self.barrier.wait(timeout=60)
        return sample

    def __repr__(self) -> str:
        return "Lockstep(seed=11)"


def _race(cached: CachedDataset[Any], order: list[int], results: Any) -> None:
    source = SyntheticDetection(LENGTH, image_size=(240, 320), seed=11)
    wrong = []
    for index in order:
        sample, expected = cached[index], source[index]
        for key in expected:
            if sample[key].tobytes() != expected[key].tobytes():
                wrong.append((index, key))
    results.put((os.getpid(), wrong))


def _watch(directory: str, stop: Any, results: Any) -> None:
    """Read every final file over and over while others write: count torn reads."""
    seen, torn, last = 0, 0, False
    while not last:
        last = stop.is_set()  # one more pass once the writers are done
        for index in range(LENGTH):
            try:
                rankaug.cache._format.read(sample_path(directory, index), index=index)
                seen += 1
            except FileNotFoundError:
                pass
            except rankaug.cache._format.Corrupt:
                torn += 1
    results.put((seen, torn))


def _digests(sample: Any) -> dict[str, str]:
    return {key: digest(value) for key, value in sample.items()}


def rank_job(rank: int, world_size: int, directory: str) -> list[dict[str, str]]:
    """One gloo rank: 2 DataLoader workers over every index (the other rank's too)."""
    cached = CachedDataset(SyntheticDetection(LENGTH, image_size=(120, 160), seed=12), directory)
    loader = DataLoader(cached, batch_size=None, num_workers=2, multiprocessing_context="fork")
    return [_digests(sample) for sample in loader]


class TestCachedDatasetConcurrency:
    def test_processes_storing_the_same_samples_at_once(self, tmp_path: Path) -> None:
        barrier = FORK.Barrier(PROCESSES)
        cached = CachedDataset(Lockstep(barrier), tmp_path)
        results, stop = FORK.Queue(), FORK.Event()
        watcher = FORK.Process(target=_watch, args=(str(cached.path), stop, results))
        watcher.start()
        racers = [
            FORK.Process(target=_race, args=(cached, list(range(LENGTH)), results))
            for _ in range(PROCESSES)
        ]
        for process in racers:
            process.start()
        reports = [results.get(timeout=300) for _ in racers]
        for process in racers:
            process.join(timeout=60)
            assert process.exitcode == 0
        stop.set()
        seen, torn = results.get(timeout=60)
        watcher.join(timeout=60)
        assert [wrong for _, wrong in reports] == [[]] * PROCESSES  # every process, every sample
        assert torn == 0
        assert seen >= LENGTH  # it read every published file (at least on its last pass)
        files = sorted(path for path in cached.path.rglob("*") if path.is_file())
        names = [path.name for path in files if path.suffix == ".sample"]
        assert sorted(names) == sorted(f"{index}.sample" for index in range(LENGTH))
        assert not [path for path in files if path.name.startswith(".tmp-")]
        stored = sum(path.stat().st_size for path in files if path.suffix == ".sample")
        assert cached.stored_bytes() == stored  # each sample counted once, not once per racer
        source = SyntheticDetection(LENGTH, image_size=(240, 320), seed=11)
        reader = CachedDataset(Lockstep(FORK.Barrier(1)), tmp_path)
        for index in range(LENGTH):
            assert_identical(reader[index], source[index])

    def test_processes_in_different_orders(self, tmp_path: Path) -> None:
        cached = CachedDataset(SyntheticDetection(LENGTH, image_size=(240, 320), seed=11), tmp_path)
        orders = [list(range(LENGTH)), list(reversed(range(LENGTH)))]
        orders += [list(np.random.default_rng(seed).permutation(LENGTH)) for seed in (1, 2)]
        results = FORK.Queue()
        racers = [FORK.Process(target=_race, args=(cached, order, results)) for order in orders]
        for process in racers:
            process.start()
        reports = [results.get(timeout=300) for _ in racers]
        for process in racers:
            process.join(timeout=60)
            assert process.exitcode == 0
        assert [wrong for _, wrong in reports] == [[]] * len(orders)
        assert all(cached.is_cached(index) for index in range(LENGTH))

    @pytest.mark.ddp
    def test_two_ranks_with_two_workers_each(self, tmp_path: Path) -> None:
        directory = tmp_path / "cache"
        results = launch(rank_job, 2, tmp_path, directory=str(directory))
        source = SyntheticDetection(LENGTH, image_size=(120, 160), seed=12)
        expected = [_digests(source[index]) for index in range(LENGTH)]
        assert results[0] == expected  # DataLoader tensors hash like the source arrays
        assert results[1] == expected
        cached = CachedDataset(source, directory)
        for index in range(LENGTH):
            assert cached.is_cached(index)
            assert_identical(cached[index], source[index])
        names = sorted(path.name for path in cached.path.rglob("*.sample"))
        assert names == sorted(f"{index}.sample" for index in range(LENGTH))
