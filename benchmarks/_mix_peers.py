"""ultralytics' MixUp, CutMix and CopyPaste behind ``step(i)``, on the sources rankaug gets.

Each factory takes the same ``side x side`` source samples (``{"image", "bboxes" float32
pixel xyxy, "labels" int64}``, and for copy-paste ``"segments"``, see
:func:`with_instances`) and returns ``step(i) -> dict``: one mixed sample whose main
sample is ``samples[i % n]`` and whose partner the peer draws itself, with ``image``,
``bboxes`` (float32 xyxy pixels) and ``labels`` (int64).

The samples reach ultralytics as they reach its mix transforms in training (after
``Mosaic`` and ``RandomPerspective``): ``Instances`` in pixel ``xyxy``, ``cls`` float32
``(N, 1)``, and ``segments`` of 1000 points each (``YOLODataset`` resamples every
polygon to 1000 points). The partner comes from the dataset's ``get_image_and_label``,
which deep-copies its labels as ``YOLODataset``'s does, the image from memory as with
``cache="ram"``. ultralytics' ``CutMix`` and ``CopyPaste`` write into the main image,
which in training is a fresh mosaic: their steps hand them a copy (rankaug's
``CutMixDataset`` and ``CopyPasteDataset`` make that copy themselves), so the shared
sources stay as they are for every contender.

ultralytics draws from the global ``random`` and ``np.random``: each step swaps in
private states (seeded from ``seed``) around the call and puts the caller's back.

This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import cv2
import numpy as np

from benchmarks import peers
from benchmarks._same_work import tagged

__all__ = ["SEGMENT_POINTS", "ultralytics_mix", "with_instances"]

SEGMENT_POINTS = 1000
"""Points per polygon, as ``YOLODataset`` resamples them."""

Sample = dict[str, np.ndarray]
Step = Callable[[int], dict[str, np.ndarray]]


def with_instances(samples: Sequence[Sample]) -> list[Sample]:
    """Each sample with one instance per box: the ellipse inscribed in it.

    Adds ``segments`` (``(N, 1000, 2)`` float32 pixel polygons, for ultralytics) and
    ``masks`` (``(N, H, W)`` uint8, the same polygons filled, for rankaug).
    """
    out = []
    angles = np.linspace(0, 2 * np.pi, SEGMENT_POINTS, endpoint=False)
    for sample in samples:
        h, w = sample["image"].shape[:2]
        boxes = np.asarray(sample["bboxes"], np.float64).reshape(-1, 4)
        centre = (boxes[:, :2] + boxes[:, 2:]) / 2
        radius = (boxes[:, 2:] - boxes[:, :2]) / 2
        segments = (
            centre[:, None, :] + radius[:, None, :] * np.stack((np.cos(angles), np.sin(angles)), 1)
        ).astype(np.float32)
        masks = np.zeros((len(boxes), h, w), np.uint8)
        for mask, polygon in zip(masks, segments, strict=True):
            cv2.fillPoly(mask, [np.round(polygon).astype(np.int32)], 1)
        out.append({**sample, "segments": segments, "masks": masks})
    return out


class _Source:
    """Just enough of ``YOLODataset`` for ultralytics' mix transforms.

    ``len()`` and ``get_image_and_label(i)``: labels deep-copied per call, the image
    from memory.
    """

    def __init__(self, samples: Sequence[Sample], instances_cls: Any, segments: bool) -> None:
        self.samples = samples
        self.use_obb = False
        self._instances_cls = instances_cls
        self.labels = []
        for sample in samples:
            boxes = np.asarray(sample["bboxes"], np.float32).reshape(-1, 4)
            self.labels.append(
                {
                    "cls": np.asarray(sample["labels"], np.float32).reshape(-1, 1),
                    "bboxes": boxes,
                    "segments": sample["segments"]
                    if segments
                    else np.zeros((0, SEGMENT_POINTS, 2), np.float32),
                    "ori_shape": sample["image"].shape[:2],
                    "resized_shape": sample["image"].shape[:2],
                }
            )

    def __len__(self) -> int:
        return len(self.samples)

    def get_image_and_label(self, index: int) -> dict[str, Any]:
        label = deepcopy(self.labels[index])
        label["img"] = self.samples[index]["image"]
        label["instances"] = self._instances_cls(
            label.pop("bboxes"), label.pop("segments"), None, bbox_format="xyxy", normalized=False
        )
        return label


def ultralytics_mix(
    kind: str,
    samples: Sequence[Sample],
    *,
    seed: int = 0,
    mode: str = "mixup",
    masks: bool = False,
    partners: Sequence[int] | None = None,
) -> Step:
    """Run ultralytics' ``MixUp``, ``CutMix`` or ``CopyPaste`` (``kind``) on every call.

    Args:
        kind: ``"mixup"``, ``"cutmix"`` or ``"copypaste"``.
        samples: Sources of one size (with ``segments`` for copy-paste).
        seed: Seed of the private ``random`` and ``np.random`` states.
        mode: Copy-paste's mode, ``"mixup"`` (a partner) or ``"flip"``.
        masks: Also make the output's dense instance masks, ``(N, H, W)`` at full size,
            with ultralytics' own ``polygons2masks`` (what rankaug's copy-paste gives).
        partners: The partner of each main index (``i % len(samples)``), taken in place of
            ultralytics' own draw (its ``get_indexes``): the same pairs as another
            contender's, so that both paste from the same partners. ``None``: ultralytics
            draws them.

    Returns:
        ``step(i)``.

    Raises:
        PeerUnavailable: ultralytics (or torchvision's metadata) is missing.
    """
    peers.import_ultralytics()  # the import, with the global settings it changes put back
    from ultralytics.data import augment
    from ultralytics.data.utils import polygons2masks
    from ultralytics.utils.instance import Instances

    source = _Source(samples, Instances, segments=kind == "copypaste")
    transform: Any
    if kind == "mixup":
        transform = augment.MixUp(source, p=1.0)
    elif kind == "cutmix":
        transform = augment.CutMix(source, p=1.0)
    elif kind == "copypaste":
        transform = augment.CopyPaste(source, p=1.0, mode=mode)
    else:
        raise ValueError(f"kind must be 'mixup', 'cutmix' or 'copypaste', got {kind!r}")
    n = len(samples)
    partner = [0]
    if partners is not None:
        if len(partners) != n:
            raise ValueError(f"partners must hold one index per sample ({n}), got {len(partners)}")
        transform.get_indexes = lambda: partner[0]  # the pairs given, not its own draw
    state = random.Random(seed).getstate()
    np_state = np.random.RandomState(seed).get_state()

    def step(i: int) -> dict[str, np.ndarray]:
        nonlocal state, np_state
        labels = source.get_image_and_label(i % n)
        if partners is not None:
            partner[0] = partners[i % n]
        if kind in ("cutmix", "copypaste"):
            labels["img"] = labels["img"].copy()
        # the peer's global draws, from private states: the caller's are put back
        outer, np_outer = random.getstate(), np.random.get_state()  # noqa: NPY002
        random.setstate(state)
        np.random.set_state(np_state)  # noqa: NPY002
        try:
            labels = transform(labels)
        finally:
            state, np_state = random.getstate(), np.random.get_state()  # noqa: NPY002
            random.setstate(outer)
            np.random.set_state(np_outer)  # noqa: NPY002
        segments = labels["instances"].segments
        out = peers.ultralytics_output(labels)
        if kind == "copypaste":
            out["segments"] = segments
        if masks:
            out["masks"] = polygons2masks(out["image"].shape[:2], list(segments), 1, 1)
        return out

    return tagged(step, transform)
