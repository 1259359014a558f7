"""``rankaug audit`` of a batch-level transform: the same synthetic batch on every rank.

A TARGET whose factory returns a kornia augmentation (or ``AugmentationSequential``), a
torchvision v2 transform or a :class:`rankaug.BatchAugment` (or, with ``--batch``, any
callable on a ``(B, C, H, W)`` batch) is audited the way a training loop calls it on the
GPU side: every rank, seeded alike (``torch.manual_seed(seed)``, see
:mod:`rankaug.cli.launch`), builds it and calls it ``repeats`` times per epoch on the same
batch of ``probe`` synthetic images (image ``i``: uniform noise from a private generator
seeded with ``i``, the same on every rank). A ``BatchAugment`` is called with
``index=`` the batch's indices and ``epoch=``, as a training loop passes them; anything
else is called plainly, as ``transform(images)``. The images go alone: a kornia
``AugmentationSequential`` (in a ``BatchAugment`` or not) is called with
``data_keys=["input"]``, whatever its own ``data_keys`` hold, and a torchvision
transform that fails on images alone (``v2.SanitizeBoundingBoxes`` wants boxes) is
tried again, from the same generator state, with a target of one box per image
(:func:`box_target`). Each output row is fingerprinted at
position ``step * probe + slot``, so the verdicts read the records as a dataset's with
one stream per rank (no workers): plain kornia repeats its draws on every rank at the
same position, and FAILs; ``BatchAugment`` keys each row by its index and epoch, and
passes.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from rankaug.cli.failure import one_line
from rankaug.cli.fingerprint import fingerprint

__all__ = [
    "batch_kind",
    "box_target",
    "images_only_hint",
    "keying_refusal",
    "probe_batch",
    "synthetic_batch",
]

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

    images = synthetic_batch([0, 1], size)
    try:
        BatchAugment(transform, seed=0)(images, index=[0, 1], epoch=0, **_images_only(transform))
    except (ValueError, RuntimeError) as error:  # what BatchAugment raises when it refuses
        return one_line(str(error))
    except Exception as error:  # anything else it or the transform raised on images alone
        return one_line(f"{type(error).__name__}: {error}")
    return ""


def images_only_hint(transform: object) -> str:
    """What the audit feeds a batch transform, and what to do when that fails it.

    >>> images_only_hint(lambda images: images)[:48]
    'the batch audit feeds the transform images alone'
    """
    fed = "the batch audit feeds the transform images alone"
    if _images_only(transform):
        fed += " (data_keys=['input'])"
    if _torchvision_inside(transform):
        fed += (
            ", and a torchvision transform that fails so is tried once more with a target of one "
            "box per image ({'boxes': BoundingBoxes, 'labels': ...})"
        )
    return (
        f"{fed}: if it needs boxes, masks or labels, make the TARGET's factory return it "
        "without the steps that need them"
    )


def box_target(transform: object, size: int, count: int) -> Any:
    """A target of one box per image for a torchvision ``transform``, or ``None``.

    One ``{"boxes": BoundingBoxes, "labels": tensor([1])}`` for the whole batch for a
    plain v2 transform, a list of ``count`` of them for a ``BatchAugment`` around one.
    """
    if not _torchvision_inside(transform):
        return None
    from torchvision import tv_tensors

    def one() -> dict[str, Any]:
        quarter = size // 4
        box = [quarter, quarter, size - quarter, size - quarter]
        boxes = tv_tensors.BoundingBoxes([box], format="XYXY", canvas_size=(size, size))
        return {"boxes": boxes, "labels": torch.ones(1, dtype=torch.int64)}

    return [one() for _ in range(count)] if batch_kind(transform) == "BatchAugment" else one()


def _inner(transform: object) -> object:
    """The transform a ``BatchAugment`` wraps, or ``transform`` itself."""
    wrapped = batch_kind(transform) == "BatchAugment"
    return getattr(transform, "transform", None) if wrapped else transform


def _torchvision_inside(transform: object) -> bool:
    """Whether ``transform`` is a torchvision v2 transform, or a ``BatchAugment`` of one."""
    return batch_kind(_inner(transform)) == "torchvision"


def _images_only(transform: object) -> dict[str, Any]:
    """The keyword arguments that make a kornia ``AugmentationSequential`` take images alone."""
    kornia = sys.modules.get("kornia.augmentation")
    if kornia is not None and isinstance(_inner(transform), kornia.AugmentationSequential):
        return {"data_keys": ["input"]}
    return {}


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
    records: Records = []
    extra: tuple[Any, ...] = ()
    for step in range(repeats):
        if step == 0:
            out, extra = _first_call(transform, images, indices, epoch)
        else:
            out = _call(transform, images, extra, indices, epoch)
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


def _call(
    transform: Any, images: torch.Tensor, extra: tuple[Any, ...], indices: list[int], epoch: int
) -> Any:
    """One call as the audit makes it (see the module docstring)."""
    if batch_kind(transform) == "BatchAugment":
        return transform(images, *extra, index=indices, epoch=epoch, **_images_only(transform))
    return transform(images, *extra, **_images_only(transform))


def _first_call(
    transform: Any, images: torch.Tensor, indices: list[int], epoch: int
) -> tuple[Any, tuple[Any, ...]]:
    """The first call's output, and the inputs after the images every call then takes.

    A torchvision transform that fails on the images alone is tried again with a
    :func:`box_target`, from the CPU generator state the first try started from; if
    that fails too, the first failure is raised.
    """
    state = torch.random.get_rng_state()
    try:
        return _call(transform, images, (), indices, epoch), ()
    except Exception as error:
        target = box_target(transform, images.shape[-1], len(indices))
        if target is None:
            raise
        torch.random.set_rng_state(state)
        try:
            return _call(transform, images, (target,), indices, epoch), (target,)
        except Exception:
            raise error from None
