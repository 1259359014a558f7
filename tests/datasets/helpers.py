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


BACKGROUND = (30, 60, 90)
COLOURS = ((250, 10, 10), (10, 250, 10), (10, 10, 250))


def paint(height: int, width: int, rects: list[tuple[int, int, int, int]]) -> np.ndarray:
    """A constant background with constant-colour pixel rectangles ``(x0, y0, x1, y1)``."""
    image = np.empty((height, width, 3), np.uint8)
    image[:] = BACKGROUND
    for (x0, y0, x1, y1), colour in zip(rects, COLOURS, strict=False):
        image[y0:y1, x0:x1] = colour
    return image


def assert_rectangles_land(
    image: np.ndarray,
    boxes: np.ndarray,
    scale: tuple[float, float],
    *,
    tolerance: int = 0,
    slack: float = 0.0,
) -> None:
    """Each painted rectangle lies where its (scaled) box says, to the pixel.

    Pixels whose centre is inside a box by more than the resampling's reach are the
    rectangle's colour, pixels farther than that outside every box the background's
    (within ``tolerance`` levels). The reach is half a pixel (a pixel fully inside), or
    half a source pixel when growing (``INTER_LINEAR`` blends the two nearest source
    pixels), plus ``slack``.

    Args:
        image: The ``HxWx3`` output.
        boxes: ``(N, 4)`` pixel xyxy boxes of the rectangles, colours in ``COLOURS`` order.
        scale: ``(new_height / height, new_width / width)`` of the resize.
        tolerance: Allowed difference in levels (JPEG).
        slack: Extra reach in output pixels (JPEG's blocks).
    """
    height, width = image.shape[:2]
    reach_y = max(0.5, scale[0] / 2) + slack
    reach_x = max(0.5, scale[1] / 2) + slack
    centre_y = (np.arange(height) + 0.5)[:, None]
    centre_x = (np.arange(width) + 0.5)[None, :]
    pixels = image.astype(np.int64)
    near_any = np.zeros((height, width), dtype=bool)
    for (x0, y0, x1, y1), colour in zip(boxes.tolist(), COLOURS, strict=False):
        core = (
            (centre_y >= y0 + reach_y - 1e-6)
            & (centre_y <= y1 - reach_y + 1e-6)
            & (centre_x >= x0 + reach_x - 1e-6)
            & (centre_x <= x1 - reach_x + 1e-6)
        )
        assert core.any(), f"box {(x0, y0, x1, y1)} has no inner pixels at this scale"
        assert np.abs(pixels[core] - colour).max() <= tolerance, (x0, y0, x1, y1)
        near_any |= (
            (centre_y > y0 - reach_y)
            & (centre_y < y1 + reach_y)
            & (centre_x > x0 - reach_x)
            & (centre_x < x1 + reach_x)
        )
    assert (~near_any).any()
    assert np.abs(pixels[~near_any] - BACKGROUND).max() <= tolerance
