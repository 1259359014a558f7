from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from rankaug import MosaicDataset, collate_detection
from rankaug.datasets import SyntheticDetection


def sample(boxes: int, value: int = 0) -> dict[str, Any]:
    return {
        "image": np.full((4, 6, 3), value, np.uint8),
        "bboxes": np.arange(boxes * 4, dtype=np.float32).reshape(boxes, 4),
        "labels": np.arange(boxes, dtype=np.int64) + 10,
        "mask": np.full((4, 6), value, np.uint8),
        "path": f"{value}.png",
    }


class TestCollateDetection:
    def test_stacks_images_and_gathers_targets_yolo_style(self) -> None:
        out = collate_detection([sample(2, 1), sample(0, 2), sample(1, 3)])
        assert out["image"].shape == (3, 4, 6, 3)
        assert out["image"][:, 0, 0, 0].tolist() == [1, 2, 3]
        assert out["targets"].dtype == torch.float32
        assert out["targets"].tolist() == [
            [0, 10, 0, 1, 2, 3], [0, 11, 4, 5, 6, 7], [2, 10, 0, 1, 2, 3],
        ]  # fmt: skip
        assert out["mask"].shape == (3, 4, 6)
        assert out["path"] == ["1.png", "2.png", "3.png"]

    def test_channels_first(self) -> None:
        out = collate_detection([sample(1, 7)] * 2, channels_first=True)
        assert out["image"].shape == (2, 3, 4, 6)
        assert out["image"].is_contiguous()
        assert (out["image"] == 7).all()

    def test_batches_from_workers_arrive_in_shared_memory(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=32), seed=0, output_size=32)
        loader = DataLoader(mosaic, batch_size=4, num_workers=2, collate_fn=collate_detection)
        batches = list(loader)
        assert len(batches) == 2
        for batch in batches:
            assert batch["image"].shape == (4, 32, 32, 3)
            assert batch["image"].is_shared()
            assert batch["targets"].shape[1] == 6
            assert len(batch["mosaic"]) == 4

    @pytest.mark.parametrize(
        ("batch", "error", "message"),
        [
            ([], ValueError, "non-empty batch"),
            ([(np.zeros((2, 2)), 0)], TypeError, r"batch\[0\] is a tuple"),
            ([{"image": np.zeros((2, 2))}], ValueError, r"batch\[0\] has no 'bboxes'"),
            ([sample(1), {**sample(1), "image": np.zeros((5, 6, 3), np.uint8)}], ValueError,
             r"batch\[1\]\['image'\] has shape \(5, 6, 3\)"),
            ([{**sample(2), "labels": np.array([1])}], ValueError, "2 boxes .* but 1 labels"),
        ],
    )  # fmt: skip
    def test_bad_batches(self, batch: Any, error: type[Exception], message: str) -> None:
        with pytest.raises(error, match=message):
            collate_detection(batch)
