"""The end-to-end contenders: JPEG files in, batches of 640x640 tensors out.

Every pipeline does mosaic -> random affine (scale 0.5-1.5, translate 0.1) -> HSV ->
horizontal flip -> a batch of ``(B, 3, H, W)`` uint8 tensors, from the same YOLO folder:

* ultralytics' own ``YOLODataset(augment=True)`` with its default hyperparameters and
  transforms (``v8_transforms``: ``Mosaic``, ``RandomPerspective``, its 1 % albumentations
  blurs, ``RandomHSV``, ``RandomFlip``, ``Format``), ``cache=False`` or ``cache="ram"``,
  batched by ``YOLODataset.collate_fn``;
* rankaug: ``YoloFolder(root, image_size=side)``, optionally ``CachedDataset`` over it,
  ``MosaicDataset``, then ``RandomAugmentWrapper(A.Compose([A.Affine, A.HueSaturationValue,
  A.HorizontalFlip]))``, batched by ``collate_detection(channels_first=True)``;
* rankaug fused: ``MosaicDataset(..., affine=rankaug.MosaicAffine(...))`` (the mosaic and
  YOLO's affine in one resampling), then HSV and flip through albumentations.

:func:`build` makes one by name (:data:`PIPELINES`). Used by the end-to-end section and by
the memory section's rank processes (``benchmarks/_rank_job.py``). This is benchmark
code, never imported by rankaug.
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

import rankaug
from benchmarks import peers
from benchmarks.peers import PeerUnavailable
from rankaug.collate import collate_detection
from rankaug.datasets import YoloFolder

__all__ = [
    "PIPELINES",
    "Pipeline",
    "build",
    "fused_missing",
    "ultralytics_classes",
]

PIPELINES: dict[str, str] = {
    "ultralytics": "ultralytics YOLODataset(augment=True), cache=False",
    "ultralytics_ram": 'ultralytics YOLODataset(augment=True), cache="ram"',
    "rankaug": "rankaug YoloFolder -> Mosaic -> A.Affine, HSV, flip",
    "rankaug_cached": "rankaug + CachedDataset",
    "fused": "rankaug Mosaic + fused MosaicAffine -> HSV, flip",
    "fused_cached": "rankaug fused + CachedDataset",
}
"""Pipeline name -> what it is."""
CACHED = ("rankaug_cached", "fused_cached")
"""The rankaug pipelines that read through ``CachedDataset`` (a cache directory)."""
FUSED = ("fused", "fused_cached")
"""The pipelines that need ``rankaug.MosaicAffine``."""
FILL = 114
"""YOLO's grey, for the affine's border too."""


@dataclass
class Pipeline:
    """One contender: its dataset (samples augmented) and the collate of its batches."""

    name: str
    dataset: Any
    collate: Callable[[list[Any]], Any]


def fused_missing() -> str:
    """Why the fused contenders cannot run, or ``""`` when ``rankaug.MosaicAffine`` exists."""
    if hasattr(rankaug, "MosaicAffine"):
        return ""
    return "rankaug.MosaicAffine not built yet"


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
    name = "ultralytics_ram" if cache == "ram" else "ultralytics"
    return Pipeline(name, dataset, dataset_cls.collate_fn)


def _albumentations(affine: bool) -> Any:
    steps: list[Any] = []
    if affine:
        steps.append(A.Affine(scale=(0.5, 1.5), translate_percent=(-0.1, 0.1), fill=FILL))
    steps += [A.HueSaturationValue(), A.HorizontalFlip()]
    return A.Compose(steps, bbox_params=A.BboxParams("pascal_voc", label_fields=["labels"]))


def _rankaug(
    name: str, root: Path, side: int, cache_dir: Path | None, seed: int, rank: int | None
) -> Pipeline:
    source: Any = YoloFolder(root, image_size=side)
    if name in CACHED:
        if cache_dir is None:
            raise ValueError(f"pipeline {name!r} needs a cache directory")
        source = rankaug.CachedDataset(source, cache_dir)
    options: dict[str, Any] = {}
    fused = name in FUSED
    if fused:
        missing = fused_missing()
        if missing:
            raise PeerUnavailable("rankaug", missing)
        options["affine"] = rankaug.MosaicAffine(degrees=0.0, translate=0.1, scale=0.5, shear=0.0)
    mosaic: rankaug.MosaicDataset[Any] = rankaug.MosaicDataset(
        source, seed=seed, output_size=side, rank=rank, **options
    )
    wrapper: rankaug.RandomAugmentWrapper[Any] = rankaug.RandomAugmentWrapper(
        mosaic, _albumentations(affine=not fused), seed=seed, rank=rank
    )
    return Pipeline(name, wrapper, functools.partial(collate_detection, channels_first=True))


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
    """Build one pipeline of :data:`PIPELINES` over the YOLO folder ``root``.

    Args:
        name: A key of :data:`PIPELINES`.
        root: The YOLO folder (``root/images``, ``root/labels``).
        side: The output side (and ultralytics' ``imgsz``, rankaug's ``image_size``).
        cache_dir: The ``CachedDataset`` directory of the cached rankaug pipelines.
        batch_size: ultralytics' ``batch_size`` (the size of its mosaic buffer).
        seed: rankaug's seed.
        rank: rankaug's rank (``None``: resolved from the process).

    Returns:
        The pipeline. ``cache="ram"`` decodes every image while it is built.

    Raises:
        PeerUnavailable: ultralytics is not installed, or ``rankaug.MosaicAffine`` is
            missing for a fused pipeline.
    """
    if name == "ultralytics":
        return _ultralytics(root, side, False, batch_size)
    if name == "ultralytics_ram":
        return _ultralytics(root, side, "ram", batch_size)
    if name not in PIPELINES:
        raise KeyError(f"unknown pipeline {name!r}; known: {', '.join(PIPELINES)}")
    return _rankaug(name, root, side, cache_dir, seed, rank)
