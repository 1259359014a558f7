"""The end-to-end contenders: JPEG files in, batches of 640x640 tensors out.

Every pipeline does the same work (``benchmarks._same_work`` checks it): each JPEG
decoded in full and resized to the output side by ``INTER_LINEAR`` (ultralytics'
``load_image``) -> a 2x2 mosaic -> random affine (scale 0.5-1.5, one draw for both axes,
translate 0.1) -> HSV on every sample -> horizontal flip with p=0.5 -> a batch of
``(B, 3, H, W)`` uint8 RGB tensors, from the same YOLO folder:

* ultralytics' own ``YOLODataset(augment=True)`` with its default hyperparameters and
  transforms (``v8_transforms``: ``Mosaic``, ``RandomPerspective``, ``RandomHSV``,
  ``RandomFlip``, ``Format``), ``cache=False`` or ``cache="ram"``, batched by
  ``YOLODataset.collate_fn``; its ``Albumentations`` step (1 % blurs) is set to ``p=0``,
  as rankaug's contenders have none;
* rankaug: ``YoloFolder(root, image_size=side, reduced_decode=False,
  interpolation="linear")`` (:func:`source`: ultralytics' decode), optionally
  ``CachedDataset(..., read_only_arrays=True)`` over it (the mosaic only reads its tiles),
  ``MosaicDataset(..., color=rankaug.HSVJitter(0.015, 0.7, 0.4))`` (ultralytics'
  ``RandomHSV`` with its default gains, in the mosaic's output pass: before the affine
  here, so the affine's grey border is not jittered; the same pixel work), then
  ``RandomAugmentWrapper(A.Compose([A.Affine(keep_ratio=True), A.HorizontalFlip(p=0.5)]))``
  (one scale for both axes, as ultralytics draws it), batched by
  ``BatchCollator(channels_first=True)`` (``collate_detection``'s batch; in a DataLoader
  worker, written into a shared-memory buffer the worker recycles, as the batches guide
  recommends with workers);
* rankaug fused: ``MosaicDataset(..., affine=rankaug.MosaicAffine(..., flip=0.5),
  color=rankaug.HSVJitter(0.015, 0.7, 0.4))``: the mosaic, YOLO's affine and the flip in
  one resampling, the HSV jitter in place on the output, no albumentations step;
* the floor (``benchmarks._e2e_floor``): the pixel work alone, its images in memory or
  (``floor_cached``) read from a ``CachedDataset`` as rankaug cached reads them;
* outside the goals, ``fused_reduced``: rankaug fused over ``YoloFolder``'s default
  decode, the JPEG decoder shrinking by 2, 4 or 8 first (not like for like: its
  ``decode`` differs, and its ratios say so), what that default saves.

:func:`build` makes one by name (``benchmarks._catalogue.E2E_PIPELINES``). Used by the
end-to-end section and by the memory section's rank processes
(``benchmarks/_rank_job.py``). This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import albumentations as A
import torch

import rankaug
from benchmarks import peers
from benchmarks._catalogue import E2E_PIPELINES
from benchmarks._e2e_floor import FloorDataset, collate_floor
from benchmarks._same_work import Work, describe, with_output
from rankaug.collate import BatchCollator
from rankaug.datasets import YoloFolder

__all__ = [
    "REDUCED",
    "Pipeline",
    "build",
    "pipeline_work",
    "source",
    "ultralytics_classes",
]

CACHED = ("rankaug_cached", "fused_cached", "floor_cached")
"""The pipelines that read through ``CachedDataset`` (a cache directory)."""
READ_ONLY = True
"""Their ``read_only_arrays``: each file kept mapped between reads (they only read tiles)."""
FILL = 114
"""YOLO's grey, for the affine's border too."""
REDUCED = ("fused_reduced",)
"""The pipelines over ``YoloFolder``'s reduced JPEG decode (not ultralytics' decode)."""


@dataclass
class Pipeline:
    """One contender: its dataset (samples augmented) and the collate of its batches."""

    name: str
    dataset: Any
    collate: Callable[[list[Any]], Any]


@functools.lru_cache(maxsize=1)
def ultralytics_classes() -> tuple[Any, Any]:
    """``(YOLODataset, DEFAULT_CFG)``, the global settings its import changes put back.

    Raises:
        PeerUnavailable: ultralytics (or torchvision's metadata) is missing.
    """
    with peers.ultralytics_settings_kept():
        from ultralytics.cfg import DEFAULT_CFG
        from ultralytics.data.dataset import YOLODataset
    return YOLODataset, DEFAULT_CFG


def _ultralytics(root: Path, side: int, cache: str | bool, batch_size: int) -> Pipeline:
    dataset_cls, default_cfg = ultralytics_classes()
    # its progress bars go to stdout (and are not silenced by YOLO_VERBOSE)
    with contextlib.redirect_stdout(io.StringIO()):
        dataset = dataset_cls(
            img_path=str(root / "images"),
            imgsz=side,
            augment=True,
            hyp=default_cfg,
            cache=cache,
            batch_size=batch_size,
            data={"names": {k: str(k) for k in range(64)}, "channels": 3},
        )
    for step in dataset.transforms.transforms:
        if type(step).__name__ == "Albumentations":
            step.p = 0.0  # its 1 % blurs: rankaug's contenders have none
    name = "ultralytics_ram" if cache == "ram" else "ultralytics"
    return Pipeline(name, dataset, dataset_cls.collate_fn)


HSV_GAINS = (0.015, 0.7, 0.4)
"""ultralytics' default ``hsv_h``, ``hsv_s``, ``hsv_v``: its ``RandomHSV`` gains."""


def _albumentations() -> Any:
    """The non-fused contenders' affine and flip, after the mosaic."""
    steps = [
        A.Affine(
            scale=(0.5, 1.5), keep_ratio=True, translate_percent=(-0.1, 0.1), fill=FILL, p=1.0
        ),
        A.HorizontalFlip(p=0.5),
    ]
    return A.Compose(steps, bbox_params=A.BboxParams("pascal_voc", label_fields=["labels"]))


def source(root: Path, side: int, *, reduced: bool = False) -> YoloFolder:
    """The rankaug pipelines' folder: ultralytics' decode, or (``reduced``) its default."""
    if reduced:
        return YoloFolder(root, image_size=side)  # the defaults: reduced decode, "auto"
    return YoloFolder(root, image_size=side, reduced_decode=False, interpolation="linear")


def _rankaug(
    name: str, root: Path, side: int, cache_dir: Path | None, seed: int, rank: int | None
) -> Pipeline:
    folder: Any = source(root, side, reduced=name in REDUCED)
    if name in CACHED:
        if cache_dir is None:
            raise ValueError(f"pipeline {name!r} needs a cache directory")
        folder = rankaug.CachedDataset(folder, cache_dir, read_only_arrays=READ_ONLY)
    options: dict[str, Any] = {"color": rankaug.HSVJitter(*HSV_GAINS)}  # every sample
    fused = name.startswith("fused")
    if fused:
        options["affine"] = rankaug.MosaicAffine(
            degrees=0.0, translate=0.1, scale=0.5, shear=0.0, flip=0.5
        )
    dataset: Any = rankaug.MosaicDataset(folder, seed=seed, output_size=side, rank=rank, **options)
    if not fused:
        dataset = rankaug.RandomAugmentWrapper(dataset, _albumentations(), seed=seed, rank=rank)
    # collate_detection in-process; in a worker, the batch into a recycled shared buffer
    return Pipeline(name, dataset, BatchCollator(channels_first=True))


def build(
    name: str,
    root: Path,
    side: int,
    *,
    cache_dir: Path | None = None,
    batch_size: int = 16,
    seed: int = 0,
    rank: int | None = None,
) -> Pipeline:
    """Build one end-to-end pipeline over the YOLO folder ``root``.

    Args:
        name: A key of ``benchmarks._catalogue.E2E_PIPELINES``.
        root: The YOLO folder (``root/images``, ``root/labels``).
        side: The output side (and ultralytics' ``imgsz``, rankaug's ``image_size``).
        cache_dir: The ``CachedDataset`` directory of the cached pipelines (``CACHED``).
        batch_size: ultralytics' ``batch_size`` (the size of its mosaic buffer).
        seed: rankaug's seed.
        rank: rankaug's rank (``None``: resolved from the process).

    Returns:
        The pipeline. ``cache="ram"`` decodes every image while it is built.

    Raises:
        PeerUnavailable: ultralytics is not installed.
    """
    if name == "ultralytics":
        return _ultralytics(root, side, False, batch_size)
    if name == "ultralytics_ram":
        return _ultralytics(root, side, "ram", batch_size)
    if name == "floor":
        return Pipeline(name, FloorDataset(root, side, seed), collate_floor)
    if name == "floor_cached":
        if cache_dir is None:
            raise ValueError(f"pipeline {name!r} needs a cache directory")
        return Pipeline(name, FloorDataset(root, side, seed, cache_dir), collate_floor)
    if name not in E2E_PIPELINES:
        raise KeyError(f"unknown pipeline {name!r}; known: {', '.join(E2E_PIPELINES)}")
    return _rankaug(name, root, side, cache_dir, seed, rank)


def pipeline_work(pipeline: Pipeline, batch: Any = None) -> Work:
    """What a pipeline does per sample, from its objects, with a real batch's layout.

    Without ``batch``, two samples are made and collated (call it after the timing:
    rankaug's cache and stream move on).
    """
    dataset = pipeline.dataset
    work = describe(dataset.work if isinstance(dataset, FloorDataset) else dataset)
    if batch is None:
        batch = pipeline.collate([dataset[i] for i in range(2)])
    image = batch if isinstance(batch, torch.Tensor) else batch.get("img", batch.get("image"))
    layout = ", ".join(str(d) for d in image.shape[1:])
    return with_output(work, f"(B, {layout}) {image.dtype}")
