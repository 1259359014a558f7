"""``rankaug audit`` of a batch-level transform: the same synthetic batch on every rank.

A TARGET whose factory returns a kornia augmentation (or ``AugmentationSequential``), a
torchvision v2 transform or a :class:`rankaug.BatchAugment` (or, with ``--batch``, any
callable on a ``(B, C, H, W)`` batch) is audited the way a training loop calls it on the
GPU side: every rank, seeded alike (``torch.manual_seed(seed)``, see
:mod:`rankaug.cli.launch`), builds it and calls it ``repeats`` times per epoch on the same
batch of ``probe`` synthetic images (image ``i``: uniform noise from a private generator
seeded with ``i``, the same on every rank). A ``BatchAugment`` is called with
``index=`` the batch's indices and ``epoch=``, as a training loop passes them; anything
else is called plainly, as ``transform(images)``. Each output row is fingerprinted at
position ``step * probe + slot``, so the verdicts read the records as a dataset's with
one stream per rank (no workers): plain kornia repeats its draws on every rank at the
same position, and FAILs; ``BatchAugment`` keys each row by its index and epoch, and
passes.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from rankaug.cli.fingerprint import fingerprint

__all__ = ["batch_kind", "keying_refusal", "probe_batch", "synthetic_batch"]

# (epoch, worker, position, index, digest), as rankaug.cli.probe.RankRecords
Records = list[tuple[int, int, int, int, str]]


def batch_kind(found: object) -> str:
    """``"BatchAugment"``, ``"kornia"``, ``"torchvision"`` or ``""`` (not a batch transform).

    Nothing is imported: a kornia or torchvision transform exists only once its library is.

    >>> from rankaug import BatchAugment
    >>> batch_kind([1, 2]), batch_kind(BatchAugment.__new__(BatchAugment))
    ('', 'BatchAugment')
    """
    from rankaug.batch import BatchAugment

    if isinstance(found, BatchAugment):
        return "BatchAugment"
    kornia = sys.modules.get("kornia.augmentation")
    if kornia is not None and isinstance(
        found, kornia.base._BasicAugmentationBase | kornia.container.ImageSequential
    ):
        return "kornia"
    v2 = sys.modules.get("torchvision.transforms.v2")
    if v2 is not None and isinstance(found, v2.Transform):
        return "torchvision"
    return ""


def keying_refusal(transform: object, size: int) -> str:
    """Why :class:`rankaug.BatchAugment` refuses the kornia ``transform``, or ``""``.

    It is wrapped and called once, as the audit's fix would have it, on a synthetic batch
    of two ``size`` images (some refusals come only from a draw); a refused draw puts
    torch's generator back, and the transform is plain kornia again afterwards. Anything
    but a kornia transform gives ``""``.

    >>> keying_refusal(lambda images: images, 8)
    ''
    """
    if batch_kind(transform) != "kornia":
        return ""
    from rankaug.batch import BatchAugment

    try:
        BatchAugment(transform, seed=0)(synthetic_batch([0, 1], size), index=[0, 1], epoch=0)
    except (ValueError, RuntimeError) as error:  # what BatchAugment raises when it refuses
        return str(error)
    return ""


def synthetic_batch(indices: list[int], size: int) -> torch.Tensor:
    """A ``(B, 3, size, size)`` batch: image ``i`` is noise from a generator seeded with ``i``.

    >>> batch = synthetic_batch([4, 7], 8)
    >>> batch.shape, bool(torch.equal(batch[1], synthetic_batch([7], 8)[0]))
    (torch.Size([2, 3, 8, 8]), True)
    """
    return torch.stack(
        [
            torch.rand(3, size, size, generator=torch.Generator().manual_seed(index))
            for index in indices
        ]
    )


def probe_batch(transform: Any, indices: list[int], repeats: int, epoch: int, size: int) -> Records:
    """One epoch of the batch audit on this rank: ``repeats`` calls on the same batch.

    Returns:
        ``(epoch, 0, position, index, digest)`` for every output row.

    Raises:
        TypeError: If ``transform`` is not callable or does not return a tensor (or a
            tuple starting with one) with a row per image.
    """
    if not callable(transform):
        raise TypeError(
            f"a batch TARGET must give a callable transform, got {type(transform).__name__}"
        )
    images = synthetic_batch(indices, size)
    keyed = batch_kind(transform) == "BatchAugment"
    records: Records = []
    for step in range(repeats):
        out = transform(images, index=indices, epoch=epoch) if keyed else transform(images)
        if isinstance(out, tuple | list) and out:
            out = out[0]
        if not isinstance(out, torch.Tensor) or out.dim() == 0 or len(out) != len(indices):
            raise TypeError(
                f"{type(transform).__name__} returned {type(out).__name__} for a batch of "
                f"{len(indices)} images: a batch TARGET must return a tensor with a row per "
                "image (or a tuple starting with one)"
            )
        for slot, index in enumerate(indices):
            digest = fingerprint(out[slot].detach().cpu()).digest
            records.append((epoch, 0, step * len(indices) + slot, index, digest))
    return records
