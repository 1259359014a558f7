"""Batch-transform factories for the CLI tests: ``rankaug audit tests.cli_batch_targets:NAME``.

Each factory is called in every rank process (after ``torch.manual_seed(seed)``, as a
DDP script does), so everything here is module-level and importable from the
repository root. The torchvision ones need torchvision (``.venv-tv``).
"""

from __future__ import annotations

from typing import Any

import torch

from rankaug import BatchAugment


def kornia_plain() -> Any:
    """Kornia called plainly: its draws come from torch's global generator."""
    import kornia.augmentation as K

    return K.AugmentationSequential(
        K.RandomAffine(degrees=20.0, translate=(0.1, 0.1), p=1.0),
        K.ColorJitter(0.2, 0.2, 0.2, 0.05, p=1.0),
    )


def kornia_keyed() -> BatchAugment:
    """The same kornia pipeline in ``BatchAugment``: keyed by (seed, epoch, index)."""
    return BatchAugment(kornia_plain(), seed=0)


def kornia_alone() -> Any:
    """One kornia augmentation (not a container), plainly."""
    import kornia.augmentation as K

    return K.RandomRotation(30.0, p=1.0)


def kornia_flip() -> Any:
    """A flip alone, plainly: two outcomes, so a repeat across ranks is hard to tell."""
    import kornia.augmentation as K

    return K.RandomHorizontalFlip(p=0.5)


def kornia_unkeyable() -> Any:
    """A kornia augmentation BatchAugment refuses: its noise comes from ``torch.randn``."""
    import kornia.augmentation as K

    return K.RandomGaussianNoise(std=0.1, p=1.0)


def kornia_detection() -> Any:
    """A detection pipeline, boxes through ``data_keys`` (the audit feeds images alone)."""
    import kornia.augmentation as K

    return K.AugmentationSequential(
        K.RandomHorizontalFlip(), K.RandomAffine(20.0, p=1.0), data_keys=["input", "bbox_xyxy"]
    )


def kornia_detection_keyed() -> BatchAugment:
    """The detection pipeline in ``BatchAugment``, as the guide sets it up."""
    return BatchAugment(kornia_detection(), seed=0)


def keyed_unkeyable() -> BatchAugment:
    """A ``BatchAugment`` that refuses its transform at its first call (a RuntimeError)."""
    return BatchAugment(kornia_unkeyable(), seed=0)


def torchvision_plain() -> Any:
    """A torchvision v2 transform called plainly on the batch: one draw for all of it."""
    from torchvision.transforms import v2

    return v2.Compose([v2.RandomRotation(20.0), v2.ColorJitter(0.3, 0.3)])


def torchvision_keyed() -> BatchAugment:
    """The same torchvision v2 transform in ``BatchAugment``: per sample, keyed."""
    return BatchAugment(torchvision_plain(), seed=0)


def noise() -> Any:
    """A hand-written batch callable drawing from the global generator (``--batch``)."""

    def add_noise(images: torch.Tensor) -> torch.Tensor:
        return images + torch.rand(images.shape)

    return add_noise


def identity() -> Any:
    """A batch callable with no randomness (``--batch``)."""
    return torch.nn.Identity()


def torchvision_detection() -> Any:
    """A torchvision detection pipeline: ``SanitizeBoundingBoxes`` wants boxes."""
    from torchvision.transforms import v2

    return v2.Compose([v2.RandomRotation(20.0), v2.SanitizeBoundingBoxes()])


def torchvision_detection_keyed() -> BatchAugment:
    """The same in ``BatchAugment``."""
    return BatchAugment(torchvision_detection(), seed=0)


def torchvision_iou_crop() -> BatchAugment:
    """``RandomIoUCrop`` needs boxes, and its crops differ in size (it cannot be stacked)."""
    from torchvision.transforms import v2

    return BatchAugment(v2.RandomIoUCrop(), seed=0)
