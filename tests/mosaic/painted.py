"""Constant-colour test images whose boxes, masks and labels encode where they came from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from hypothesis import strategies as st

from rankaug import MosaicGrid, Targets
from rankaug.params import pop_fields


def colour_of(code: int) -> tuple[int, int, int]:
    """A distinct RGB colour per code (never the background 0 or the fill 114 grey)."""
    return (40 + code % 7 * 30, 40 + code // 7 % 7 * 30, 40 + code // 49 % 4 * 50)


def painted_sample(
    index: int, hw: tuple[int, int], boxes: list[tuple[int, int, int, int]]
) -> dict[str, Any]:
    """An image whose boxes are filled with a colour encoding (index, box number).

    The label of box k is its code; the semantic mask holds the code under the box and
    the instance mask is the box's rectangle."""
    h, w = hw
    img = np.zeros((h, w, 3), np.uint8)
    mask = np.zeros((h, w), np.int32)
    masks = np.zeros((len(boxes), h, w), np.uint8)
    labels = []
    for k, (x0, y0, x1, y1) in enumerate(boxes):
        code = index * 8 + k + 1
        img[y0:y1, x0:x1] = colour_of(code)
        mask[y0:y1, x0:x1] = code
        masks[k, y0:y1, x0:x1] = 1
        labels.append(code)
    return {
        "image": img,
        "bboxes": np.array(boxes, np.float32).reshape(-1, 4),
        "labels": np.array(labels, np.int64),
        "mask": mask,
        "masks": masks,
    }


def mapped_boxes(
    record: dict[str, Any],
    data: list[dict[str, Any]],
    pixels: Callable[[dict[str, Any]], np.ndarray] = lambda sample: sample["bboxes"],
) -> Iterator[tuple[Any, tuple[float, float, float, float]]]:
    """Each tile's pixel boxes (``pixels(sample)``) with their labels, from a plain
    mosaic's record: mapped from the tile's source window onto its output window,
    clipped to it, kept or not."""
    for index, (sx0, sy0, sx1, sy1), (dx0, dy0, dx1, dy1) in zip(
        record["indices"], record["src"], record["dst"], strict=True
    ):
        if sx1 <= sx0:
            continue
        kx, ky = (dx1 - dx0) / (sx1 - sx0), (dy1 - dy0) / (sy1 - sy0)
        sample = data[index]
        for (x0, y0, x1, y1), label in zip(pixels(sample).tolist(), sample["labels"].tolist(),
                                           strict=True):  # fmt: skip
            left, right = max((x0 - sx0) * kx + dx0, dx0), min((x1 - sx0) * kx + dx0, dx1)
            top, bottom = max((y0 - sy0) * ky + dy0, dy0), min((y1 - sy0) * ky + dy0, dy1)
            yield label, (left, top, right, bottom)


def landed_boxes(
    record: dict[str, Any], data: list[dict[str, Any]]
) -> dict[int, list[tuple[float, float, float, float]]]:
    """Where each label's pixel boxes land, kept or not (see :func:`mapped_boxes`)."""
    landed: dict[int, list[tuple[float, float, float, float]]] = {}
    for label, box in mapped_boxes(record, data):
        landed.setdefault(label, []).append(box)
    return landed


@st.composite
def painted_datasets(
    draw: st.DrawFn, sides: st.SearchStrategy[int] | None = None
) -> list[dict[str, Any]]:
    """1-6 images of random sizes (``sides``, at least 8), each with 0-4 non-overlapping
    boxes of >= 4 px."""
    side = st.integers(12, 90) if sides is None else sides
    samples = []
    for index in range(draw(st.integers(1, 6))):
        h, w = draw(side), draw(side)
        boxes = []
        # one box per quadrant at most, so boxes never overlap
        for qy, qx in ((0, 0), (0, 1), (1, 0), (1, 1)):
            if not draw(st.booleans()):
                continue
            y_lo, x_lo = qy * (h // 2), qx * (w // 2)
            y0 = draw(st.integers(y_lo, y_lo + h // 2 - 4))
            x0 = draw(st.integers(x_lo, x_lo + w // 2 - 4))
            y1 = draw(st.integers(y0 + 4, y_lo + h // 2))
            x1 = draw(st.integers(x0 + 4, x_lo + w // 2))
            boxes.append((x0, y0, x1, y1))
        samples.append(painted_sample(index, (h, w), boxes))
    return samples


def grouped(options: dict[str, Any], **layout: Any) -> dict[str, Any]:
    """``MosaicDataset``'s keywords for ``options``: their layout fields (and ``layout``)
    go into ``layout=MosaicGrid(...)``, their target fields into ``targets=Targets(...)``."""
    rest = dict(options)
    rest["layout"] = MosaicGrid(**pop_fields(MosaicGrid, rest), **layout)
    targets = pop_fields(Targets, rest)
    return {**rest, "targets": Targets(**targets)} if targets else rest


GEOMETRY = st.fixed_dictionaries(
    {
        "output_size": st.tuples(st.integers(16, 120), st.integers(16, 120)),
        "grid": st.sampled_from([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (3, 2)]),
        "scale_mode": st.sampled_from(["keep", "fit", "fill"]),
        "scale_range": st.sampled_from([(1.0, 1.0), (0.5, 1.5)]),
        "canvas": st.sampled_from(["output", "yolo"]),
        "center_range": st.sampled_from([(0.25, 0.75), (0.0, 1.0), (0.5, 0.5)]),
        "p": st.sampled_from([1.0, 0.5]),
    }
)
