"""The YOLOv5-style mosaic the demo sets against rankaug: partners from global ``random``.

YOLOv5's ``load_mosaic`` draws the three partner images and the mosaic centre from
Python's global ``random``. DataLoader workers seed that generator with
``base_seed + worker_id``, and every rank draws ``base_seed`` from torch's global
generator, which every rank seeded with the same ``torch.manual_seed``: worker ``w``
of every rank draws the same partners in the same order. This module reproduces
that on purpose — it is the bug the demo shows — and is the only place in rankaug
that draws from global random state to augment.

The composition is a plain version of the same idea, written for the demo: each of
the four images is scaled so its longer side is ``output_size``, placed with one
corner at a random centre (top-left image's bottom-right corner, and so on), and the
``output_size`` square around the middle of the ``2 * output_size`` canvas is kept,
boxes shifted, clipped and dropped when less than 2 pixels wide or high or less than
10% visible.
"""

from __future__ import annotations

import random
from typing import Any

import cv2
import numpy as np
from torch.utils.data import Dataset

from rankaug.boxes import box_area, check_box_format, clip_xyxy, keep_mask
from rankaug.cli.views import sample_view
from rankaug.polygon_geometry import clip

__all__ = ["GlobalRandomMosaic"]

_FILL = 114


class GlobalRandomMosaic(Dataset[dict[str, Any]]):
    """A 2x2 mosaic whose partners and centre come from the global ``random`` module.

    Samples are dicts ``{"image": SxSx3 uint8, "bboxes": float32 (N, 4) pixel xyxy,
    "labels": int64 (N,), "mosaic": {"applied": True, "indices": [index, p1, p2, p3],
    "center": (x, y), "dst": [(x0, y0, x1, y1), ...]}}``, the shape of
    :class:`rankaug.MosaicDataset`'s output (``dst``: where each image landed). Dict
    samples with instance polygons (``"segments"``) give ``"outlines"`` too: the kept
    objects' polygons cut to their tile, for the demo's sheet (not aligned with the boxes).

    Args:
        dataset: A map-style dataset of dict or ``(image, target)`` samples.
        output_size: Side ``S`` of the square output, at least 8.
        source_format: The box format of ``dataset``'s dict samples (the output's
            boxes are always pixel xyxy, ``box_format = "pascal_voc"``).

    Raises:
        ValueError: If ``output_size`` is below 8, ``source_format`` unknown or
            ``dataset`` empty.

    >>> from rankaug.datasets import SyntheticDetection
    >>> mosaic = GlobalRandomMosaic(SyntheticDetection(8, image_size=32), output_size=48)
    >>> sample = mosaic[0]
    >>> sample["image"].shape, len(sample["mosaic"]["indices"])
    ((48, 48, 3), 4)
    """

    box_format = "pascal_voc"

    def __init__(
        self, dataset: Any, *, output_size: int = 256, source_format: str = "pascal_voc"
    ) -> None:
        if isinstance(output_size, bool) or not isinstance(output_size, int) or output_size < 8:
            raise ValueError(f"output_size must be an integer >= 8, got {output_size!r}")
        if len(dataset) == 0:
            raise ValueError("dataset must not be empty")
        self.dataset = dataset
        self.output_size = output_size
        self.source_format = check_box_format(source_format, name="source_format")

    def __len__(self) -> int:
        return len(self.dataset)

    def _tile(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
        sample = self.dataset[index]
        view = sample_view(sample, self.source_format)
        polygons = sample.get("segments") if isinstance(sample, dict) else None
        height, width = view.image.shape[:2]
        scale = self.output_size / max(height, width)
        image = view.image
        if scale != 1.0:
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            image = cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)
        labels = np.asarray(view.labels if view.labels is not None else [], dtype=np.int64)
        outlines = [np.asarray(p, np.float64) * scale for p in polygons or ()]
        return image, view.boxes * scale, labels, outlines

    def __getitem__(self, index: int) -> dict[str, Any]:
        size = self.output_size
        count = len(self.dataset)
        index = range(count)[index]
        # GLOBAL RANDOM ON PURPOSE: YOLOv5's draws, seeded alike in worker w of every
        # rank; the bug the demo shows (allowed in tests/test_quality.py for this file).
        partners = random.choices(range(count), k=3)
        centre_x = int(random.uniform(size * 0.5, size * 1.5))
        centre_y = int(random.uniform(size * 0.5, size * 1.5))
        # Work in output coordinates: the kept square starts at size / 2 on the canvas.
        return self._compose([index, *partners], (centre_x - size // 2, centre_y - size // 2))

    def replay(self, record: dict[str, Any]) -> dict[str, Any]:
        """Rebuild an output from its ``"mosaic"`` record (no random draw).

        >>> from rankaug.datasets import SyntheticDetection
        >>> mosaic = GlobalRandomMosaic(SyntheticDetection(8, image_size=32), output_size=48)
        >>> sample = mosaic[2]
        >>> bool((mosaic.replay(sample["mosaic"])["image"] == sample["image"]).all())
        True
        """
        return self._compose(list(record["indices"]), tuple(record["center"]))

    def _compose(self, indices: list[int], centre: tuple[int, int]) -> dict[str, Any]:
        size = self.output_size
        cx, cy = centre
        out = np.full((size, size, 3), _FILL, np.uint8)
        all_boxes = [np.zeros((0, 4))]
        all_labels = [np.zeros(0, np.int64)]
        windows: list[tuple[int, int, int, int]] = []
        outlines: list[np.ndarray] = []
        for corner, source in enumerate(indices):
            image, boxes, labels, polygons = self._tile(source)
            height, width = image.shape[:2]
            left = cx - width if corner in (0, 2) else cx
            top = cy - height if corner in (0, 1) else cy
            x0, y0 = max(left, 0), max(top, 0)
            x1, y1 = min(left + width, size), min(top + height, size)
            if x1 <= x0 or y1 <= y0:
                windows.append((0, 0, 0, 0))
                continue  # the centre pushed this tile out of the kept square
            windows.append((x0, y0, x1, y1))
            out[y0:y1, x0:x1] = image[y0 - top : y1 - top, x0 - left : x1 - left]
            shifted = boxes + np.array([left, top, left, top], dtype=np.float64)
            clipped = clip_xyxy(shifted, float(x0), float(y0), float(x1), float(y1))
            keep = keep_mask(
                clipped, box_area(shifted), min_visibility=0.1, min_width=2.0, min_height=2.0
            )
            all_boxes.append(clipped[keep])
            all_labels.append(labels[keep])
            for kept, points in zip(keep.tolist(), polygons, strict=False):
                cut = (
                    clip(points + np.array([left, top], np.float64), (x0, y0, x1, y1))
                    if kept
                    else None
                )
                if cut is not None:
                    outlines.append(cut)
        sample = {
            "image": out,
            "bboxes": np.concatenate(all_boxes).astype(np.float32).reshape(-1, 4),
            "labels": np.concatenate(all_labels).astype(np.int64),
            "mosaic": {"applied": True, "indices": indices, "center": (cx, cy), "dst": windows},
        }
        if outlines:  # for the demo's sheet only: not aligned with the boxes
            sample["outlines"] = outlines
        return sample
