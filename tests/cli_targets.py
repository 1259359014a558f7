"""Dataset factories for the CLI tests: ``python -m rankaug audit tests.cli_targets:NAME``.

Each factory is called in every rank process, and its dataset is pickled into spawned
workers, so everything here is module-level and importable from the repository root.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import torch
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


class OwnSetEpoch(Ramps):
    """Keyed by rank, worker and the epoch of its own ``set_epoch``, not the index's.

    Right when the training loop calls ``set_epoch`` before every epoch (fresh workers
    copy the new epoch); under ``EpochSampler``, which nobody has to call it for, it
    replays epoch 0 forever.
    """

    def __init__(self) -> None:
        self.epoch = 0
        self.key: tuple[int, int, int] | None = None
        self.rng: np.random.Generator | None = None

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __getitem__(self, index: int) -> dict[str, Any]:
        info = get_worker_info()
        key = (int(os.environ.get("RANK", "0")), 0 if info is None else info.id, self.epoch)
        if self.rng is None or key != self.key:
            self.key, self.rng = key, np.random.default_rng([*key, 777])
        sample = super().__getitem__(index)
        sample["shift"] = int(self.rng.integers(10**9))
        return sample


class NoSetEpoch(RandomAugmentWrapper[Any]):
    """A rankaug wrapper whose ``set_epoch`` must not be called (EpochSampler needs none)."""

    def set_epoch(self, epoch: int) -> None:
        raise AssertionError(f"set_epoch({epoch}) was called")


class Stream(IterableDataset[int]):
    def __iter__(self) -> Any:
        return iter(range(3))


# ------------------------------------------------ ultralytics' layout (issue 9, item 13)
ULTRA_SIZE = (48, 64)  # height, width
_COLOURS = np.array([[200, 30, 30], [30, 200, 30], [30, 30, 200]], np.uint8)


def _scene(index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A constant-colour image with filled boxes at whole pixels: (HxWx3, xyxy, labels)."""
    height, width = ULTRA_SIZE
    image = np.full((height, width, 3), 40 + 10 * index, np.uint8)
    boxes = np.array([[4 + index, 8, 20 + index, 24], [32, 4 + index, 60, 40]], np.float32)
    labels = np.array([index % 3, (index + 1) % 3], np.int64)
    for (x0, y0, x1, y1), label in zip(boxes.astype(int), labels, strict=True):
        image[y0:y1, x0:x1] = _COLOURS[label]
    return image, boxes, labels


class AlbumentationsStyle(Dataset[dict[str, Any]]):
    """The scenes in rankaug's own layout: HxWx3 numpy, pixel xyxy boxes, int labels."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> dict[str, Any]:
        image, boxes, labels = _scene(index)
        return {"image": image, "bboxes": boxes, "labels": labels}


class UltralyticsStyle(Dataset[dict[str, Any]]):
    """The same scenes as ultralytics' ``YOLODataset`` gives them after its ``Format``.

    ``img``: CHW uint8 RGB tensor; ``cls``: (N, 1) float32; ``bboxes``: (N, 4) float32
    normalised ``(x_centre, y_centre, width, height)``; plus ``batch_idx``, ``im_file``,
    ``ori_shape``, ``resized_shape`` and ``ratio_pad``.
    """

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> dict[str, Any]:
        image, boxes, labels = _scene(index)
        height, width = ULTRA_SIZE
        xywh = np.stack(
            [
                (boxes[:, 0] + boxes[:, 2]) / 2 / width,
                (boxes[:, 1] + boxes[:, 3]) / 2 / height,
                (boxes[:, 2] - boxes[:, 0]) / width,
                (boxes[:, 3] - boxes[:, 1]) / height,
            ],
            axis=1,
        ).astype(np.float32)
        return {
            "img": torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1))),
            "cls": torch.from_numpy(labels.astype(np.float32)[:, None]),
            "bboxes": torch.from_numpy(xywh),
            "batch_idx": torch.zeros(len(labels)),
            "im_file": f"images/{index:06d}.jpg",
            "ori_shape": ULTRA_SIZE,
            "resized_shape": ULTRA_SIZE,
            "ratio_pad": ((1.0, 1.0), (0.0, 0.0)),
        }


class StampedUltralytics(UltralyticsStyle):
    """ultralytics' layout plus a load time: the whole sample never repeats."""

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {**super().__getitem__(index), "loaded_at_ns": time.time_ns()}


class JitteredUltralytics(UltralyticsStyle):
    """ultralytics' layout, brightness from the global ``random`` (the seeds' bug)."""

    def __getitem__(self, index: int) -> dict[str, Any]:
        sample = super().__getitem__(index)
        sample["img"] = sample["img"] + random.randint(0, 9)
        return sample


class UltralyticsAdapter:
    """A hand-written rankaug.types.SampleAdapter for ultralytics' samples (for --adapter)."""

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        data = {
            "image": sample["img"].permute(1, 2, 0).numpy(),
            "bboxes": sample["bboxes"].numpy(),
            "labels": sample["cls"].numpy().reshape(-1),
        }
        return {key: value for key, value in data.items() if key in targets}, sample

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        out = dict(state)
        out["img"] = torch.from_numpy(np.ascontiguousarray(data["image"].transpose(2, 0, 1)))
        return out


def albumentations_style() -> AlbumentationsStyle:
    return AlbumentationsStyle()


def ultralytics_style() -> UltralyticsStyle:
    return UltralyticsStyle()


def ultralytics_stamped() -> StampedUltralytics:
    return StampedUltralytics()


def ultralytics_jittered() -> JitteredUltralytics:
    return JitteredUltralytics()


def ultralytics_adapter() -> UltralyticsAdapter:
    return UltralyticsAdapter()


def not_an_adapter() -> int:
    return 3


# ---------------------------------------------------------------------- the others


def plain() -> Ramps:
    return Ramps()


def two() -> list[dict[str, Any]]:
    """Two samples: one per rank under a DistributedSampler of 2 ranks."""
    return [Ramps()[i] for i in range(2)]


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


def rankaug_stream_no_set_epoch() -> NoSetEpoch:
    return NoSetEpoch(Ramps(), jitter, seed=0)


def rankaug_sample_no_set_epoch() -> NoSetEpoch:
    return NoSetEpoch(Ramps(), jitter, seed=0, keying="sample")


def own_set_epoch() -> OwnSetEpoch:
    return OwnSetEpoch()


def rankaug_mosaic() -> MosaicDataset[Any]:
    return MosaicDataset(synthetic(), seed=0, output_size=48)


def yolov5_mosaic() -> GlobalRandomMosaic:
    return GlobalRandomMosaic(synthetic(), output_size=48)


def broken() -> Broken:
    return Broken()


def broken_wrapped() -> RandomAugmentWrapper[Any]:
    """A rankaug wrapper over a dataset that fails on index 4: a rankaug.SampleError."""
    return RandomAugmentWrapper(Broken(), jitter, seed=0)


def raising() -> Ramps:
    raise RuntimeError("the data folder is not mounted")


def not_a_dataset() -> int:
    return 42


def iterable() -> Stream:
    return Stream()


def empty() -> list[int]:
    return []


NOT_CALLABLE = "just a string"


def transform() -> Any:
    import albumentations as A

    return A.Compose([A.HorizontalFlip()])  # the transform, not the dataset it is for


class NothingMatches:
    """An adapter that refuses every sample, as ``--keys`` does for a key matching nothing."""

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        raise ValueError(f"bboxes=nope matches nothing; the sample has keys {sorted(sample)}")

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        return state


def nothing_matches() -> NothingMatches:
    return NothingMatches()
