"""Helpers shared by the dataset tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from rankaug.boxes import from_xyxy
from rankaug.datasets import SyntheticDetection


def assert_boxes_match_mask(bboxes: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> None:
    """Boxes are tight around visible pixels of their class, and cover all of them."""
    height, width = mask.shape
    boxes = bboxes.astype(np.int64)
    np.testing.assert_array_equal(boxes, bboxes)  # pixel-edge coordinates are integers
    assert np.all(boxes[:, :2] >= 0)
    assert np.all(boxes[:, 2] <= width)
    assert np.all(boxes[:, 3] <= height)
    assert np.all(boxes[:, 2:] > boxes[:, :2])
    for (x0, y0, x1, y1), label in zip(boxes, labels, strict=True):
        region = mask[y0:y1, x0:x1] == label + 1
        # every edge of a tight box touches a pixel of the object
        assert region[0].any()
        assert region[-1].any()
        assert region[:, 0].any()
        assert region[:, -1].any()
    covered = np.zeros(mask.shape, dtype=bool)
    for (x0, y0, x1, y1), label in zip(boxes, labels, strict=True):
        covered[y0:y1, x0:x1] |= mask[y0:y1, x0:x1] == label + 1
    np.testing.assert_array_equal(covered, mask > 0)


def write_coco(
    dataset: SyntheticDetection, root: Path, *, crowd: bool = True
) -> tuple[Path, dict[str, Any]]:
    """Write ``dataset`` as PNGs plus a COCO JSON with shuffled, sparse ids."""
    (root / "images").mkdir(parents=True)
    images, annotations = [], []
    annotation_id = 500
    for index in reversed(range(len(dataset))):
        sample = dataset[index]
        height, width = sample["image"].shape[:2]
        name = f"sub/{index}.png" if index % 2 else f"{index}.png"
        (root / "images" / name).parent.mkdir(exist_ok=True)
        cv2.imwrite(str(root / "images" / name), cv2.cvtColor(sample["image"], cv2.COLOR_RGB2BGR))
        image_id = 1000 + 7 * index
        images.append({"id": image_id, "file_name": name, "height": height, "width": width})
        coco = from_xyxy(sample["bboxes"].astype(np.float64), "coco", (height, width))
        for box, label in zip(coco.tolist(), sample["labels"].tolist(), strict=True):
            annotation_id += 3
            annotations.append(
                {
                    "id": annotation_id,
                    "image_id": image_id,
                    "category_id": 10 * (label + 1),
                    "bbox": box,
                    "area": box[2] * box[3],
                    "iscrowd": 0,
                }
            )
        if crowd:
            annotations.append(
                {
                    "id": 7 + index,
                    "image_id": image_id,
                    "category_id": 10,
                    "bbox": [0, 0, 5, 5],
                    "iscrowd": 1,
                }
            )
    categories = [
        {"id": 10 * (c + 1), "name": f"shape{c}"} for c in reversed(range(dataset.num_classes))
    ]
    data = {"images": images, "annotations": annotations, "categories": categories}
    path = root / "instances.json"
    path.write_text(json.dumps(data))
    return path, data
