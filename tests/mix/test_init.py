"""The family end to end: YOLOX-style mosaic, then mixup, then albumentations."""

from __future__ import annotations

from typing import Any

import albumentations as A
import numpy as np
import torch
from torch.utils.data import DataLoader

from rankaug import EpochSampler, MosaicDataset, RandomAugmentWrapper, Targets, collate_detection
from rankaug.datasets import SyntheticDetection
from rankaug.mix import CopyPasteDataset, CutMixDataset, MixUpDataset
from tests.albu import bbox_params


def yolox(seed: int = 0, keying: Any = "stream") -> RandomAugmentWrapper[Any]:
    source = SyntheticDetection(12, image_size=(28, 36), max_objects=3, masks=False)
    mosaic = MosaicDataset(source, seed=seed, output_size=40, keying=keying)
    mixup = MixUpDataset(mosaic, seed=seed, p=0.8, keying=keying)
    pipeline = A.Compose(
        [A.Affine(rotate=(-10, 10), p=0.5), A.HorizontalFlip(), A.RandomBrightnessContrast()],
        bbox_params=bbox_params("pascal_voc"),
    )
    return RandomAugmentWrapper(mixup, pipeline, seed=seed, keying=keying)


def run(seed: int = 0) -> list[dict[str, Any]]:
    train = yolox(seed)
    loader = DataLoader(
        train, sampler=EpochSampler(range(12)), batch_size=4, num_workers=2,
        persistent_workers=True, collate_fn=collate_detection, multiprocessing_context="fork",
    )  # fmt: skip
    return [batch for _ in range(2) for batch in loader]


class TestYoloxRecipe:
    def test_mosaic_then_mixup_then_albumentations(self) -> None:
        batches = run()
        assert len(batches) == 6
        mixed = 0
        for step, batch in enumerate(batches):
            epoch = step // 3
            assert batch["image"].shape == (4, 40, 40, 3)
            assert batch["image"].dtype == torch.uint8
            targets = batch["targets"]
            assert targets.shape[1] == 6
            assert (targets[:, 2:4] >= 0).all()
            assert (targets[:, 4:] <= 40).all()
            assert (targets[:, 4:] > targets[:, 2:4]).all()
            for mosaic, mixup in zip(batch["mosaic"], batch["mixup"], strict=True):
                assert mosaic["epoch"] == mixup["epoch"] == epoch  # the index's epoch
                assert len(mosaic["indices"]) == 4
                assert mixup["indices"][0] == mosaic["indices"][0]
                mixed += mixup["applied"]
        assert 0 < mixed < 24  # p=0.8

    def test_reruns_are_bit_identical_and_epochs_differ(self) -> None:
        first, second = run(), run()
        for a, b in zip(first, second, strict=True):
            assert torch.equal(a["image"], b["image"])
            assert torch.equal(a["targets"], b["targets"])
            assert a["mixup"] == b["mixup"]
        partners = [[m["indices"][1:] for m in batch["mixup"]] for batch in first]
        assert partners[:3] != partners[3:]

    def test_replay_of_a_mixup_of_sample_keyed_mosaics(self) -> None:
        source = SyntheticDetection(6, image_size=32, max_objects=2)
        mixup = MixUpDataset(MosaicDataset(source, seed=1, output_size=40, keying="sample"),
                             seed=1)  # fmt: skip
        mixup[2]
        second = mixup[2]
        again = mixup.replay(second["mixup"])
        np.testing.assert_array_equal(again["image"], second["image"])
        np.testing.assert_array_equal(again["bboxes"], second["bboxes"])


class TestFamily:
    def test_cutmix_and_copypaste_over_mosaics_with_instance_masks(self) -> None:
        source = SyntheticDetection(6, image_size=32, max_objects=2)
        samples = []
        for i in range(6):
            sample = source[i]
            boxes = sample["bboxes"].astype(int)
            masks = np.zeros((len(boxes), 32, 32), np.uint8)
            for k, (x0, y0, x1, y1) in enumerate(boxes):
                masks[k, y0:y1, x0:x1] = 1
            samples.append({**sample, "masks": masks})
        mosaic = MosaicDataset(samples, seed=0, output_size=48)
        for wrapper in (
            CutMixDataset(mosaic, seed=0, targets=Targets(min_visibility=0.2)),
            CopyPasteDataset(mosaic, seed=0, p=1.0),
            CopyPasteDataset(CutMixDataset(mosaic, seed=0), seed=0, p=1.0, source="flip"),
        ):
            for index in range(6):
                out = wrapper[index]
                assert out["image"].shape == (48, 48, 3)
                count = len(out["bboxes"])
                assert out["labels"].shape == (count,)
                assert out["masks"].shape == (count, 48, 48)
                assert out["labels"].dtype == np.int64
