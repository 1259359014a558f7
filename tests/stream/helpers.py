"""Small streams for the streaming tests: samples split by worker, as the libraries do."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from torch.utils.data import IterableDataset, get_worker_info


def detection(k: int, size: int = 32) -> dict[str, Any]:
    """Sample ``k``: a constant image of value ``k``, one box, its id ``"s{k:04d}"``."""
    image = np.full((size, size, 3), k % 250, np.uint8)
    return {
        "image": image,
        "bboxes": np.array([[2.0, 2.0, 20.0, 20.0]], np.float32),
        "labels": np.array([k % 5], np.int64),
        "id": f"s{k:04d}",
    }


class Shards(IterableDataset[dict[str, Any]]):
    """``n`` samples, every ``num_workers``-th to each worker; ``set_epoch`` recorded.

    With ``resumable=True`` it has ``state_dict``/``load_state_dict`` (its position).
    """

    def __init__(self, n: int, *, resumable: bool = False) -> None:
        self.n = n
        self.epochs: list[int] = []
        self.resumable = resumable
        self._start = 0
        self._read = 0

    def set_epoch(self, epoch: int) -> None:
        self.epochs.append(epoch)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        mine = list(range(worker, self.n, workers))
        start, self._start = self._start, 0
        for self._read, k in enumerate(mine[start:], start + 1):
            yield detection(k)

    def __getattr__(self, name: str) -> Any:
        if name in ("state_dict", "load_state_dict") and self.__dict__.get("resumable"):
            return getattr(self, f"_{name}")
        raise AttributeError(name)

    def _state_dict(self) -> dict[str, int]:
        return {"read": self._read}

    def _load_state_dict(self, state: dict[str, int]) -> None:
        self._start = state["read"]


class Named(IterableDataset[dict[str, Any]]):
    """Sample ``k`` of :func:`detection` with the id ``ids[k]`` (one worker: ids may repeat)."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for k, name in enumerate(self.ids):
            yield {**detection(k), "id": name}


class EpochShards(Shards):
    """:class:`Shards` whose samples also carry the worker and the epoch it was told."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = get_worker_info()
        worker = 0 if info is None else info.id
        epoch = self.epochs[-1] if self.epochs else -1
        for sample in super().__iter__():
            yield {**sample, "worker": worker, "epoch": epoch}


def keep(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A transform that changes nothing (here, not in a test module: a spawned worker
    that unpickles it imports this module alone, not pytest and a test module)."""
    return sample


def noise(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A keyed transform: uniform noise added to the image, its digest under ``"noise"``."""
    drawn = rng.integers(0, 50, np.shape(sample["image"]), dtype=np.uint8)
    return {**sample, "image": np.asarray(sample["image"]) + drawn, "noise": digest(drawn)}


def digest(image: Any) -> str:
    """A short fingerprint of an image."""
    array = np.ascontiguousarray(np.asarray(image))
    return hashlib.sha1(array.tobytes()).hexdigest()[:12]


def by_id(samples: Any) -> dict[str, str]:
    """``id -> image digest`` of the samples (dicts, or batches of dicts collated as lists)."""
    out: dict[str, str] = {}
    for sample in samples:
        out[str(sample["id"])] = digest(sample["image"])
    return out
