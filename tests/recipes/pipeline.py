"""The training pipeline every recipe runs, and what each batch tells about its keys.

A real rankaug pipeline on tiny data: ``SyntheticDetection`` → ``MosaicDataset`` →
``RandomAugmentWrapper`` (albumentations), batched by ``collate_detection``. Each batch
is summarised as one JSON-able row per sample: the epoch its mosaic was keyed with,
its partner indices and a digest of its pixels. Those rows are what the recipe tests
compare across ranks, epochs, reruns and resumes.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

import albumentations as A
import numpy as np
import torch
from torch.utils.data import Dataset

from rankaug import Keying, MosaicDataset, RandomAugmentWrapper, collate_detection
from rankaug.datasets import SyntheticDetection
from tests.albu import bbox_params

SAMPLES = 24
BATCH = 3


def build_train(keying: Keying = "stream", seed: int = 0) -> RandomAugmentWrapper[Any]:
    """The dataset of every recipe (24 samples of 32x32 mosaics)."""
    source = SyntheticDetection(SAMPLES, image_size=(28, 36), seed=seed, masks=False)
    mosaic = MosaicDataset(source, seed=seed, output_size=32, keying=keying)
    pipeline = A.Compose(
        [A.HorizontalFlip(p=0.5), A.RandomBrightnessContrast(p=0.8)],
        bbox_params=bbox_params("pascal_voc"),
    )
    return RandomAugmentWrapper(mosaic, pipeline, seed=seed, keying=keying)


def collate(batch: list[dict[str, Any]]) -> dict[str, Any]:
    """``collate_detection``: what the README recommends."""
    return collate_detection(batch)


KEYINGS: tuple[Keying, ...] = ("stream", "sample", "sample_rank")


class AllKeyings(Dataset[dict[str, Any]]):
    """The pipeline once per keying, all in one run.

    It passes the index it is given (an ``EpochIndex``) on to each, as any plain
    dataset would.
    """

    def __init__(self, seed: int = 0) -> None:
        self.pipelines = {keying: build_train(keying, seed) for keying in KEYINGS}

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {keying: pipeline[index] for keying, pipeline in self.pipelines.items()}

    def state_dict(self) -> dict[str, Any]:
        """Each pipeline's state (torchdata's StatefulDataLoader saves it per worker)."""
        return {keying: pipeline.state_dict() for keying, pipeline in self.pipelines.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` saved."""
        for keying, pipeline in self.pipelines.items():
            pipeline.load_state_dict(state[keying])


def collate_all(batch: list[dict[str, Any]]) -> dict[str, Any]:
    """Collate each keying's samples separately."""
    return {keying: collate_detection([item[keying] for item in batch]) for keying in KEYINGS}


def rows_all(batch: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``rows`` of each keying's part of a ``collate_all`` batch."""
    return {key: rows(half) for key, half in batch.items()}


def digest(array: Any) -> str:
    """A short fingerprint of an image."""
    if isinstance(array, torch.Tensor):
        array = array.numpy()
    return hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()[:12]


def rows(batch: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per sample of a collated batch: key epoch, partners, pixels."""
    return [
        {
            "epoch": int(record["epoch"]),
            "indices": [int(i) for i in record["indices"]],
            "digest": digest(image),
        }
        for record, image in zip(batch["mosaic"], batch["image"], strict=True)
    ]
