"""Constant-colour samples for the mixing wrappers' pixel-exact tests."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st


def colour_of(code: int) -> tuple[int, int, int]:
    """A distinct RGB colour per code (never 0, the masks' background)."""
    return (30 + code % 7 * 30, 30 + code // 7 % 7 * 30, 30 + code // 49 % 4 * 50)


def flat_sample(
    index: int,
    hw: tuple[int, int],
    value: float,
    *,
    dtype: Any = np.uint8,
    channels: int | None = 3,
    boxes: list[tuple[float, float, float, float]] | None = None,
) -> dict[str, Any]:
    """One constant-colour image with boxes (labels = the index), a mask and masks."""
    h, w = hw
    shape = (h, w) if channels is None else (h, w, channels)
    rects = boxes if boxes is not None else [(1.0, 1.0, w / 2, h / 2)]
    masks = np.zeros((len(rects), h, w), np.uint8)
    for k, (x0, y0, x1, y1) in enumerate(rects):
        masks[k, int(y0) : int(np.ceil(y1)), int(x0) : int(np.ceil(x1))] = 1
    return {
        "image": np.full(shape, value, dtype),
        "bboxes": np.array(rects, np.float32).reshape(-1, 4),
        "labels": np.full(len(rects), index, np.int64),
        "mask": np.full((h, w), index + 1, np.uint8),
        "masks": masks,
        "path": f"{index}.png",
    }


def instance_sample(
    index: int, hw: tuple[int, int], rects: list[tuple[int, int, int, int]]
) -> dict[str, Any]:
    """A black image whose instance ``k`` is a rectangle coloured ``colour_of(code)``.

    Later rectangles are drawn on top; each instance's mask and box are what stays
    visible of it (an instance hidden completely is left out), its label is its code
    ``index * 16 + k + 1``, and the semantic mask holds the code."""
    h, w = hw
    image = np.zeros((h, w, 3), np.uint8)
    mask = np.zeros((h, w), np.int32)
    codes = []
    for k, (x0, y0, x1, y1) in enumerate(rects):
        code = index * 16 + k + 1
        image[y0:y1, x0:x1] = colour_of(code)
        mask[y0:y1, x0:x1] = code
        codes.append(code)
    masks, boxes, labels = [], [], []
    for code in codes:
        instance = (mask == code).astype(np.uint8)
        if not instance.any():
            continue
        ys, xs = np.nonzero(instance)
        masks.append(instance)
        boxes.append((xs.min(), ys.min(), xs.max() + 1.0, ys.max() + 1.0))
        labels.append(code)
    return {
        "image": image,
        "bboxes": np.array(boxes, np.float32).reshape(-1, 4),
        "labels": np.array(labels, np.int64),
        "mask": mask,
        "masks": np.array(masks, np.uint8).reshape(-1, h, w),
    }


@st.composite
def instance_datasets(draw: st.DrawFn, hw: tuple[int, int] = (24, 32)) -> list[dict[str, Any]]:
    """2-5 samples of one size, each with 0-4 (possibly overlapping) rectangles."""
    h, w = hw
    samples = []
    for index in range(draw(st.integers(2, 5))):
        rects = []
        for _ in range(draw(st.integers(0, 4))):
            x0, y0 = draw(st.integers(0, w - 2)), draw(st.integers(0, h - 2))
            x1, y1 = draw(st.integers(x0 + 1, w)), draw(st.integers(y0 + 1, h))
            rects.append((x0, y0, x1, y1))
        samples.append(instance_sample(index, hw, rects))
    return samples


#: Image kinds of the pixel tests: (dtype, channels, the largest value).
KINDS = st.sampled_from(
    [
        (np.uint8, 3, 255),
        (np.uint8, None, 255),
        (np.uint8, 1, 255),
        (np.uint16, 4, 65535),
        (np.int16, 3, 32767),
        (np.float32, 3, 1.0),
        (np.float64, None, 1.0),
    ]
)
