"""Iterable TARGETs for ``rankaug audit`` (tests/test_cli_stream.py): real webdataset shards.

The shards are written by the test into the folder named by ``RANKAUG_AUDIT_SHARDS``
(the rank processes inherit it). Every stream is built without a node split, so every
rank reads the same samples, as the audit needs to compare the ranks' draws; the
workers split the shards.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import albumentations as A
import numpy as np
import webdataset as wds

from rankaug import RandomAugmentWrapper

SHARDS, PER_SHARD = 4, 8
ENVIRONMENT = "RANKAUG_AUDIT_SHARDS"


def write_shards(directory: Path) -> None:
    """``SHARDS`` tar files of ``PER_SHARD`` ramps each, keys ``s0000``..."""
    ramp = np.add.outer(np.arange(24), 2 * np.arange(32)).astype(np.uint8)
    for shard in range(SHARDS):
        with wds.TarWriter(str(directory / f"train-{shard:04d}.tar")) as sink:
            for k in range(shard * PER_SHARD, (shard + 1) * PER_SHARD):
                image = np.stack([ramp + k, ramp, 255 - ramp], axis=-1)
                sink.write({"__key__": f"s{k:04d}", "npy": image})


def _unpack(sample: dict[str, Any]) -> dict[str, Any]:
    return {"image": sample["npy"], "__key__": sample["__key__"]}


def _shards() -> Any:
    folder = os.environ[ENVIRONMENT]
    urls = f"{folder}/train-{{0000..{SHARDS - 1:04d}}}.tar"
    stream = wds.WebDataset(urls, nodesplitter=None, shardshuffle=False, empty_check=False)
    return stream.decode().map(_unpack)


def _compose(seed: int | None) -> A.Compose:
    return A.Compose(
        [A.HorizontalFlip(p=0.5), A.RandomBrightnessContrast(p=1.0), A.GaussNoise(p=1.0)],
        seed=seed,
    )


class _Albumentations:
    """``sample -> sample`` with its image through an albumentations ``Compose``."""

    def __init__(self, compose: A.Compose) -> None:
        self.compose = compose

    def __call__(self, sample: dict[str, Any]) -> dict[str, Any]:
        return {**sample, "image": self.compose(image=sample["image"])["image"]}


def webdataset_albumentations() -> Any:
    """The usual pipeline: a seeded ``Compose`` in a plain ``.map()``."""
    return _shards().map(_Albumentations(_compose(137)))


def webdataset_unseeded() -> Any:
    """``Compose()`` without a seed: its Generator comes from OS entropy."""
    return _shards().map(_Albumentations(_compose(None)))


def webdataset_plain() -> Any:
    """No augmentation at all."""
    return _shards()


def rankaug_stream() -> Any:
    """rankaug's wrapper over the un-augmented stream (keying="stream")."""
    return RandomAugmentWrapper(_shards(), _compose(None), seed=0)


def rankaug_sample() -> Any:
    """rankaug's wrapper keyed by each sample's ``__key__``."""
    return RandomAugmentWrapper(_shards(), _compose(None), seed=0, keying="sample",
                                sample_id="__key__")  # fmt: skip


def _as_uint8(sample: dict[str, Any]) -> dict[str, Any]:
    return {**sample, "image": np.asarray(sample["image"], np.uint8)}


def _huggingface() -> Any:
    """A Hugging Face ``IterableDataset`` of the same ramps, 4 shards (split by worker)."""
    import datasets

    ramp = np.add.outer(np.arange(24), 2 * np.arange(32)).astype(np.uint8)
    count = SHARDS * PER_SHARD
    table = {
        "image": [np.stack([ramp + k, ramp, 255 - ramp], axis=-1) for k in range(count)],
        "__key__": [f"s{k:04d}" for k in range(count)],
    }
    features = datasets.Features(
        {"image": datasets.Array3D((24, 32, 3), "uint8"), "__key__": datasets.Value("string")}
    )
    table_dataset = datasets.Dataset.from_dict(table, features=features)
    return table_dataset.to_iterable_dataset(num_shards=SHARDS).map(_as_uint8)


def huggingface_albumentations() -> Any:
    """Hugging Face's ``.map()`` of a seeded ``Compose``."""
    return _huggingface().map(_Albumentations(_compose(137)))


def huggingface_rankaug() -> Any:
    """rankaug's wrapper over the un-augmented Hugging Face stream."""
    return RandomAugmentWrapper(_huggingface(), _compose(None), seed=0)
