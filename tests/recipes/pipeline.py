"""The training pipeline every recipe runs, and what each batch tells about its keys.

A real rankaug pipeline on tiny data: ``SyntheticDetection`` → ``MosaicDataset`` →
``RandomAugmentWrapper`` (albumentations), once per keying, batched by the recipes' own
``BatchCollator()`` (``collate_detection``'s batch). Each sample is summarised as one
JSON-able row per keying: the epoch its mosaic was keyed with, its partner indices and a
digest of its pixels. Those rows are what the recipe tests compare across ranks,
epochs, reruns and resumes.
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

from rankaug import MosaicDataset, RandomAugmentWrapper
from rankaug.datasets import SyntheticDetection
from rankaug.types import Keying
from tests.albu import bbox_params

SAMPLES = 24
BATCH = 3


def build_train(keying: Keying = "stream", seed: int = 0) -> RandomAugmentWrapper[Any]:
    """The dataset of every recipe (24 samples of 32x32 mosaics)."""
    source = SyntheticDetection(SAMPLES, image_size=(28, 36), seed=seed, masks=False)
    mosaic: MosaicDataset[Any] = MosaicDataset(source, seed=seed, output_size=32, keying=keying)
    pipeline = A.Compose(
        [A.HorizontalFlip(p=0.5), A.RandomBrightnessContrast(p=0.8)],
        bbox_params=bbox_params("pascal_voc"),
    )
    return RandomAugmentWrapper(mosaic, pipeline, seed=seed, keying=keying)


KEYINGS: tuple[Keying, ...] = ("stream", "sample", "sample_rank")


class AllKeyings(Dataset[dict[str, Any]]):
    """The pipeline once per keying, all in one run.

    It passes the index it is given (an ``EpochIndex``) on to each, as any plain
    dataset would, and returns the ``"stream"`` pipeline's sample with one more key,
    ``"rows"``: every keying's :func:`row` of this index. The recipes' collate then
    batches it as any detection sample (the rows as a list).
    """

    def __init__(self, seed: int = 0) -> None:
        self.pipelines = {keying: build_train(keying, seed) for keying in KEYINGS}

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, index: int) -> dict[str, Any]:
        samples = {keying: pipeline[index] for keying, pipeline in self.pipelines.items()}
        return {**samples["stream"], "rows": {k: row(s) for k, s in samples.items()}}

    def state_dict(self) -> dict[str, Any]:
        """Each pipeline's state (torchdata's StatefulDataLoader saves it per worker)."""
        return {keying: pipeline.state_dict() for keying, pipeline in self.pipelines.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` saved."""
        for keying, pipeline in self.pipelines.items():
            pipeline.load_state_dict(state[keying])


def rows_all(batch: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each keying's rows of a collated batch of :class:`AllKeyings` samples."""
    return {keying: [rows[keying] for rows in batch["rows"]] for keying in KEYINGS}


def digest(array: Any) -> str:
    """A short fingerprint of an image."""
    if isinstance(array, torch.Tensor):
        array = array.numpy()
    return hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()[:12]


def row(sample: dict[str, Any]) -> dict[str, Any]:
    """One sample's key epoch, partners and pixels."""
    record = sample["mosaic"]
    return {
        "epoch": int(record["epoch"]),
        "indices": [int(i) for i in record["indices"]],
        "digest": digest(sample["image"]),
    }
