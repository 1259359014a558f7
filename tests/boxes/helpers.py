"""Boxes and images shared by the box tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

# One 100 (high) x 200 (wide) image and one box in it, in every format.
HW = (100, 200)
XYXY = np.array([[20.0, 10.0, 120.0, 60.0]])
KNOWN: dict[str, list[float]] = {
    "pascal_voc": [20.0, 10.0, 120.0, 60.0],
    "coco": [20.0, 10.0, 100.0, 50.0],
    "yolo": [0.35, 0.35, 0.5, 0.5],
    "albumentations": [0.1, 0.1, 0.6, 0.6],
}

image_sizes = st.tuples(st.integers(1, 4096), st.integers(1, 4096))
unit = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def boxes_in_image(draw: st.DrawFn, max_boxes: int = 8) -> tuple[np.ndarray, tuple[int, int]]:
    """Upright xyxy boxes inside a random image (zero extents allowed)."""
    height, width = draw(image_sizes)
    rows = draw(st.lists(st.tuples(unit, unit, unit, unit), max_size=max_boxes))
    boxes = np.array(rows, dtype=np.float64).reshape(-1, 4)
    xs = np.sort(boxes[:, [0, 2]], axis=1) * width
    ys = np.sort(boxes[:, [1, 3]], axis=1) * height
    return np.stack([xs[:, 0], ys[:, 0], xs[:, 1], ys[:, 1]], axis=1), (height, width)


@st.composite
def loose_boxes(draw: st.DrawFn) -> np.ndarray:
    """Upright xyxy boxes anywhere in [-50, 150]^2, zero extents included."""
    coords = st.floats(-50.0, 150.0, allow_nan=False)
    rows = draw(st.lists(st.tuples(coords, coords, coords, coords), max_size=8))
    boxes = np.array(rows, dtype=np.float64).reshape(-1, 4)
    xs = np.sort(boxes[:, [0, 2]], axis=1)
    ys = np.sort(boxes[:, [1, 3]], axis=1)
    return np.stack([xs[:, 0], ys[:, 0], xs[:, 1], ys[:, 1]], axis=1)


def overlapping_rows(boxes: np.ndarray) -> np.ndarray:
    """Keep the rows that overlap the 100 x 100 image (boundary contact excluded)."""
    inside = (boxes[:, 2] > 0) & (boxes[:, 3] > 0) & (boxes[:, 0] < 100) & (boxes[:, 1] < 100)
    return boxes[inside]
