"""Batches carry index and epoch for BatchAugment: collate_detection and BatchCollator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset, SequentialSampler

from rankaug import BatchAugment, BatchCollator, EpochIndex, EpochSampler, collate_detection

K = pytest.importorskip("kornia.augmentation")


class _WithIndex(Dataset[dict[str, Any]]):
    """The documented pattern: a dataset that returns the index it was given."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> dict[str, Any]:
        image = np.full((8, 8, 3), index, np.uint8)
        boxes = np.zeros((0, 4), np.float32)
        return {"image": image, "bboxes": boxes, "labels": np.zeros(0, np.int64), "index": index}


def _sample(index: Any) -> dict[str, Any]:
    return {"image": np.zeros((4, 4, 3), np.uint8), "bboxes": [], "labels": [], "index": index}


class TestCollateEpoch:
    def test_epoch_index_values_give_an_epoch_tensor(self) -> None:
        batch = collate_detection([_sample(EpochIndex(i, 3)) for i in (5, 9)])
        assert batch["index"] == [5, 9]
        assert batch["epoch"].tolist() == [3, 3]
        assert batch["epoch"].dtype == torch.int64

    @pytest.mark.parametrize(
        ("samples", "expected"),
        [
            ([_sample(5), _sample(EpochIndex(9, 3))], None),  # a plain int carries no epoch
            ([{**_sample(EpochIndex(5, 3)), "epoch": 7}], [7]),  # the sample's own key is kept
            ([{"image": np.zeros((4, 4, 3), np.uint8), "bboxes": [], "labels": []}], None),
        ],
    )
    def test_no_epoch_is_made_up(self, samples: list[dict[str, Any]], expected: Any) -> None:
        assert collate_detection(samples).get("epoch") == expected

    def test_a_label_field_named_epoch_is_never_overwritten(self) -> None:
        item = {**_sample(EpochIndex(5, 3)), "bboxes": [[0, 0, 1, 1]], "epoch": [4]}
        del item["labels"]
        assert collate_detection([item], label_field="epoch")["epoch"].tolist() == [4]

    def test_epochs_arrive_from_workers(self) -> None:
        for collate in (collate_detection, BatchCollator()):
            sampler = EpochSampler(SequentialSampler(range(8)), epoch=5)
            loader = DataLoader(
                _WithIndex(), batch_size=4, sampler=sampler, num_workers=2, collate_fn=collate
            )
            assert [batch["epoch"].tolist() for batch in loader] == [[5] * 4] * 2

    def test_a_loader_batch_feeds_batch_augment(self) -> None:
        sampler = EpochSampler(SequentialSampler(range(8)), epoch=2)
        loader = DataLoader(
            _WithIndex(),
            batch_size=4,
            sampler=sampler,
            collate_fn=BatchCollator(channels_first=True),
        )
        aug = BatchAugment(K.RandomAffine(30.0, p=1.0), seed=0)
        batch = next(iter(loader))
        assert batch["epoch"].tolist() == [2, 2, 2, 2]
        images = batch["image"].float()
        out = aug(images, index=batch["index"], epoch=batch["epoch"])
        expected = aug(images, index=[0, 1, 2, 3], epoch=2)
        assert torch.equal(out, expected)
