"""Dataset factories for the CLI tests: ``python -m rankaug audit tests.cli_targets:NAME``.

Each factory is called in every rank process, and its dataset is pickled into spawned
workers, so everything here is module-level and importable from the repository root.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch.distributed as dist
from torch.utils.data import Dataset, IterableDataset, get_worker_info

from rankaug import MosaicDataset, RandomAugmentWrapper
from rankaug.cli.legacy import GlobalRandomMosaic
from rankaug.datasets import SyntheticDetection

LENGTH = 16


class Ramps(Dataset[dict[str, Any]]):
    """A distinct fixed 8x8 image per index; no randomness at all."""

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> dict[str, Any]:
        ramp = np.arange(8 * 8 * 3, dtype=np.int64).reshape(8, 8, 3)
        return {"image": ((ramp + 17 * index) % 251).astype(np.uint8), "index": index}


def jitter(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    shift = rng.integers(0, 1000, size=3).astype(np.uint8)
    return {**sample, "image": sample["image"] + shift}


class GlobalRandomJitter(Ramps):
    """The seeds' bug: augmentation drawn from the global ``random`` module."""

    def __getitem__(self, index: int) -> dict[str, Any]:
        sample = super().__getitem__(index)
        sample["shift"] = random.randint(0, 10**9)
        return sample


class CopiedGenerator(Ramps):
    """A Generator made in the parent and copied into every worker unchanged."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def __getitem__(self, index: int) -> dict[str, Any]:
        sample = super().__getitem__(index)
        sample["shift"] = int(self.rng.integers(10**9))
        return sample


class RankWorkerSeeded(Ramps):
    """Seeded per rank and worker in each fresh worker, but not per epoch."""

    def __init__(self) -> None:
        self.rng: np.random.Generator | None = None

    def __getitem__(self, index: int) -> dict[str, Any]:
        if self.rng is None:
            info = get_worker_info()
            worker = 0 if info is None else info.id
            self.rng = np.random.default_rng([dist.get_rank(), worker, 12345])
        sample = super().__getitem__(index)
        sample["shift"] = int(self.rng.integers(10**9))
        return sample


class Unseeded(Ramps):
    """Fresh OS entropy in every process: never reproducible."""

    def __init__(self) -> None:
        self.rng: np.random.Generator | None = None

    def __getitem__(self, index: int) -> dict[str, Any]:
        if self.rng is None:
            self.rng = np.random.default_rng()
        sample = super().__getitem__(index)
        sample["shift"] = int(self.rng.integers(10**9))
        return sample


class Broken(Ramps):
    """Fails on one index, inside a DataLoader worker."""

    def __getitem__(self, index: int) -> dict[str, Any]:
        if index == 4:
            raise OSError(f"cannot read image {index}")
        return super().__getitem__(index)


class Stream(IterableDataset[int]):
    def __iter__(self) -> Any:
        return iter(range(3))


def plain() -> Ramps:
    return Ramps()


def synthetic() -> SyntheticDetection:
    return SyntheticDetection(LENGTH, image_size=(24, 32), masks=False, seed=3)


def global_random() -> GlobalRandomJitter:
    return GlobalRandomJitter()


def copied_generator() -> CopiedGenerator:
    return CopiedGenerator()


def rank_worker_seeded() -> RankWorkerSeeded:
    return RankWorkerSeeded()


def unseeded() -> Unseeded:
    return Unseeded()


def rankaug_stream() -> RandomAugmentWrapper[Any]:
    return RandomAugmentWrapper(Ramps(), jitter, seed=0)


def rankaug_sample() -> RandomAugmentWrapper[Any]:
    return RandomAugmentWrapper(Ramps(), jitter, seed=0, keying="sample")


def rankaug_sample_rank() -> RandomAugmentWrapper[Any]:
    return RandomAugmentWrapper(Ramps(), jitter, seed=0, keying="sample_rank")


def rankaug_mosaic() -> MosaicDataset[Any]:
    return MosaicDataset(synthetic(), seed=0, output_size=48)


def yolov5_mosaic() -> GlobalRandomMosaic:
    return GlobalRandomMosaic(synthetic(), output_size=48)


def broken() -> Broken:
    return Broken()


def raising() -> Ramps:
    raise RuntimeError("the data folder is not mounted")


def not_a_dataset() -> int:
    return 42


def iterable() -> Stream:
    return Stream()


def empty() -> list[int]:
    return []


NOT_CALLABLE = "just a string"
