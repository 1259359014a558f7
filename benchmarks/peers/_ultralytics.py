"""ultralytics' own ``Mosaic`` (and its ``RandomPerspective`` crop)."""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Callable, Iterator, Sequence
from copy import deepcopy
from typing import Any

import cv2
import numpy as np

from benchmarks._same_work import tagged
from benchmarks.peers._common import PeerUnavailable, Sample, Step, check_samples

__all__ = [
    "import_ultralytics",
    "ultralytics_mosaic",
    "ultralytics_output",
    "ultralytics_settings_kept",
]


@contextlib.contextmanager
def ultralytics_settings_kept() -> Iterator[None]:
    """Import ultralytics modules inside this block: the global settings it changes are put back.

    ``import ultralytics`` calls ``cv2.setNumThreads(0)``, sets numpy's and torch's print
    options and replaces ``torch.save``; the first and second would skew a benchmark of the
    other peers (and numpy's print options would break doctests), so they are put back.

    Raises:
        PeerUnavailable: An import inside failed: ultralytics (or torchvision's metadata,
            whose absence shows as a ``PackageNotFoundError``) is missing.
    """
    import torch

    threads = cv2.getNumThreads()
    np_print = np.get_printoptions()
    torch_save = torch.save
    try:
        yield
    except (ImportError, RuntimeError) as exc:
        raise PeerUnavailable(
            "ultralytics",
            f"{type(exc).__name__}: {exc} (see benchmarks/README_peers.md: .venv-bench; "
            "ultralytics and torchvision are installed with --no-deps)",
        ) from exc
    finally:
        cv2.setNumThreads(threads)
        np.set_printoptions(**np_print)
        torch.save = torch_save


def import_ultralytics() -> dict[str, Any]:
    """Import ultralytics' augmentations (:func:`ultralytics_settings_kept`).

    Raises:
        PeerUnavailable: ultralytics (or torchvision's metadata) is missing.
    """
    with ultralytics_settings_kept():
        from ultralytics.data.augment import Compose, Mosaic, RandomPerspective
        from ultralytics.utils.instance import Instances
    return {
        "Compose": Compose,
        "Mosaic": Mosaic,
        "RandomPerspective": RandomPerspective,
        "Instances": Instances,
    }


_Loaded = tuple[np.ndarray, tuple[int, int], tuple[int, int]]
"""``load_image``'s answer: (image, original (h, w), resized (h, w))."""


class _UltralyticsSource:
    """Just enough of ultralytics' ``BaseDataset``/``YOLODataset`` for its ``Mosaic``.

    ``Mosaic`` asks its dataset for ``cache``, ``buffer``, ``len()`` and
    ``get_image_and_label(i)``. Labels are kept as ``YOLODataset`` keeps them (normalised
    xywh boxes, ``cls`` float32 (N, 1), no segments) and deep-copied per call as its
    ``get_image_and_label`` does; images are resized long side to ``imgsz`` with
    INTER_LINEAR as its ``load_image`` does.

    With ``buffer=False`` (``cache="ram"`` to ``Mosaic``) partners are drawn uniformly from
    all samples and every tile is resized from the source on every call, as the other peers
    do. With ``buffer=True`` ultralytics' own scheme is emulated: loaded images stay resized
    in a buffer of ``min(n, 128, 1000)`` (batch 16) and partners come from it, so a small
    source list ends up with no resizes at all.
    """

    def __init__(
        self,
        samples: Sequence[Sample],
        imgsz: int,
        buffer: bool,
        instances_cls: Any,
    ) -> None:
        self.samples = samples
        self.imgsz = imgsz
        self.cache: str | None = None if buffer else "ram"
        self.use_obb = False
        self.buffer: list[int] = []
        self.max_buffer_length = min(len(samples), 16 * 8, 1000)
        self._buffered = buffer
        self._ims: list[_Loaded | None] = [None] * len(samples)
        self._instances_cls = instances_cls
        self.labels: list[dict[str, Any]] = []
        for k, s in enumerate(samples):
            h, w = s["image"].shape[:2]
            b = np.asarray(s["bboxes"], dtype=np.float32).reshape(-1, 4)
            xywh = np.stack(
                [
                    (b[:, 0] + b[:, 2]) / (2 * w),
                    (b[:, 1] + b[:, 3]) / (2 * h),
                    (b[:, 2] - b[:, 0]) / w,
                    (b[:, 3] - b[:, 1]) / h,
                ],
                axis=1,
            ).astype(np.float32)
            self.labels.append(
                {
                    "im_file": f"sample_{k}",
                    "shape": (h, w),
                    "cls": np.asarray(s["labels"], dtype=np.float32).reshape(-1, 1),
                    "bboxes": xywh,
                    "segments": [],
                    "keypoints": None,
                    "normalized": True,
                    "bbox_format": "xywh",
                }
            )

    def __len__(self) -> int:
        return len(self.samples)

    def load_image(self, i: int) -> _Loaded:
        cached = self._ims[i]
        if cached is not None:
            return cached
        im = self.samples[i]["image"]
        h0, w0 = im.shape[:2]
        r = self.imgsz / max(h0, w0)
        if r != 1:
            w, h = min(math.ceil(w0 * r), self.imgsz), min(math.ceil(h0 * r), self.imgsz)
            im = cv2.resize(im, (w, h), interpolation=cv2.INTER_LINEAR)
        out = (im, (h0, w0), im.shape[:2])
        if self._buffered:
            self._ims[i] = out
            self.buffer.append(i)
            if 1 < len(self.buffer) >= self.max_buffer_length:
                self._ims[self.buffer.pop(0)] = None
        return out

    def get_image_and_label(self, index: int) -> dict[str, Any]:
        label = deepcopy(self.labels[index])
        label.pop("shape", None)
        label["img"], label["ori_shape"], label["resized_shape"] = self.load_image(index)
        label["ratio_pad"] = (
            label["resized_shape"][0] / label["ori_shape"][0],
            label["resized_shape"][1] / label["ori_shape"][1],
        )
        bboxes = label.pop("bboxes")
        label.pop("segments")
        keypoints = label.pop("keypoints")
        label["instances"] = self._instances_cls(
            bboxes,
            np.zeros((0, 1000, 2), dtype=np.float32),  # YOLODataset's "no segments"
            keypoints,
            bbox_format=label.pop("bbox_format"),
            normalized=label.pop("normalized"),
        )
        return label


def ultralytics_mosaic(
    samples: Sequence[Sample],
    imgsz: int = 640,
    affine: bool = True,
    *,
    buffer: bool = False,
    seed: int = 0,
    n_tiles: int = 4,
) -> Step:
    """Run ultralytics' own ``Mosaic`` and, with ``affine``, its ``RandomPerspective`` crop.

    This is the detection training pre-transform of ``v8_transforms`` with the default
    hyperparameters (mosaic=1.0, degrees=0, translate=0.1, scale=0.5, shear=0,
    perspective=0, copy_paste=0): a 4-tile mosaic on a ``2*imgsz`` canvas filled with 114,
    then an affine warp (``cv2.warpAffine``) back to ``imgsz`` that also drops boxes
    ``box_candidates`` rejects. ``affine=False`` returns the mosaic alone, on its
    ``2*imgsz`` canvas.

    ultralytics draws from the global ``random`` module. ``step`` swaps in a private state
    seeded from ``seed`` around each call and puts the caller's state back afterwards, so the
    draws are reproducible and the global stream is left as it was.

    Args:
        samples: Source samples.
        imgsz: Output side with ``affine``; the canvas is ``2*imgsz``.
        affine: Whether to apply ``RandomPerspective`` as training does.
        buffer: Emulate ultralytics' buffer of resized images (see ``_UltralyticsSource``);
            the default resizes every tile from the source on every call, like the other
            peers.
        seed: Seed of the private ``random`` state.
        n_tiles: ``Mosaic``'s ``n``: 4 (2x2) or 9 (3x3, cropped to the same ``2*imgsz``
            canvas).

    Returns:
        ``step(i)``: ``{"image", "bboxes", "labels"}``; the image is ``imgsz`` square with
        ``affine``, ``2*imgsz`` square without.

    Raises:
        PeerUnavailable: ultralytics (or torchvision's metadata) is missing.
    """
    n = check_samples(samples)
    ul = import_ultralytics()
    source = _UltralyticsSource(samples, imgsz, buffer, ul["Instances"])
    mosaic = ul["Mosaic"](source, imgsz=imgsz, p=1.0, n=n_tiles)
    pipeline: Callable[[dict[str, Any]], dict[str, Any]]
    if affine:
        perspective = ul["RandomPerspective"](
            degrees=0.0,
            translate=0.1,
            scale=0.5,
            shear=0.0,
            perspective=0.0,
            size=(imgsz, imgsz),
        )
        pipeline = ul["Compose"]([mosaic, perspective])
    else:
        pipeline = mosaic
    state = random.Random(seed).getstate()

    def step(i: int) -> dict[str, np.ndarray]:
        nonlocal state
        outer = random.getstate()
        random.setstate(state)
        try:
            labels = pipeline(source.get_image_and_label(i % n))
        finally:
            state = random.getstate()
            random.setstate(outer)
        return ultralytics_output(labels)

    return tagged(step, pipeline)


def ultralytics_output(labels: dict[str, Any]) -> dict[str, np.ndarray]:
    """One ultralytics labels dict as a peer's output: ``image``, xyxy ``bboxes``, ``labels``."""
    instances = labels["instances"]
    instances.convert_bbox(format="xyxy")
    return {
        "image": labels["img"],
        "bboxes": np.asarray(instances.bboxes, dtype=np.float32).reshape(-1, 4),
        "labels": np.asarray(labels["cls"]).reshape(-1).astype(np.int64),
    }
