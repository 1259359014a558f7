"""A :class:`~rankaug.BatchAugment` call's keys: its images checked, its samples' columns.

:func:`resolve` checks the batch, then makes each sample's key: from its index and epoch
(``(seed, stream, epoch, index)``: the ``index=`` and ``epoch=`` given as one int64 column
each, the epoch otherwise carried by ``EpochIndex`` values or found for plain indices by
:mod:`rankaug.batch._epoch`), or, without ``index=``, from the call's step
(``(seed, stream, rank, epoch, step, position)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from rankaug import checks
from rankaug._threads import steps
from rankaug.batch._keys import DrawKeys

if TYPE_CHECKING:
    from rankaug.batch import BatchAugment

__all__ = ["resolve"]


def resolve(aug: BatchAugment, images: Any, index: Any, epoch: Any) -> DrawKeys:
    """The keys of ``aug``'s call on ``images`` (checked), one per sample.

    Raises:
        TypeError: If ``images`` is not a tensor, or ``index``/``epoch`` are not integers.
        ValueError: If ``images`` is not ``(B, C, H, W)``, or ``index``/``epoch`` do not
            have one value per sample or are out of range.
    """
    checks.instance(images, "images", torch.Tensor, what="a tensor", optional=False)
    if images.dim() != 4:
        raise ValueError(f"images must be a (B, C, H, W) tensor, got shape {tuple(images.shape)}")
    if images.shape[3] in (1, 3, 4) and images.shape[1] > 4:  # kornia would read H as C
        raise ValueError(
            f"images must be a (B, C, H, W) tensor, got shape {tuple(images.shape)}, "
            "which looks like (B, H, W, C): collate with channels_first=True "
            "(rankaug.BatchCollator, collate_detection) or pass images.permute(0, 3, 1, 2)"
        )
    size = int(images.shape[0])
    if index is None:
        aug._plain.steps_in_worker()
        with steps():  # read and counted at once: threads calling at once, two steps
            step = aug.step
            aug.step = step + 1
        rank = _rank()
        plain = aug._plain.step_epoch() if epoch is None else _batch_epoch(epoch, size)
        return DrawKeys.of_step(aug.seed, aug.stream, rank, plain, step, size, images.device)
    indices = _column(index, "index", size, 64, shared=False)
    if epoch is None:
        carried = [getattr(value, "epoch", None) for value in _values(index)]
        if None in carried and any(value is not None for value in carried):
            raise ValueError(
                "index mixes indices that carry their epoch (EpochIndex) with plain ones: "
                "give epoch= (or every index from the same EpochSampler)"
            )
        epoch = carried if carried and None not in carried else aug._plain.of(indices)
    epochs = _column(epoch, "epoch", size, 32)
    return DrawKeys.of_samples(aug.seed, aug.stream, indices, epochs, images.device)


def _batch_epoch(epoch: Any, size: int) -> int:
    """The epoch of a batch given without ``index=``: one integer (0-D array or tensor too).

    Raises:
        ValueError: If ``epoch`` gives one value per sample (it keys samples by index).
    """
    if isinstance(epoch, torch.Tensor | np.ndarray | np.generic):
        checks.per_sample(epoch, "epoch", size)  # an integer dtype, at most one dimension
        if epoch.ndim == 0:
            return checks.uint(epoch.item(), "epoch", 32)
    if isinstance(epoch, torch.Tensor | np.ndarray | Sequence) and not isinstance(epoch, str):
        raise ValueError(
            f"epoch has one value per sample ({len(epoch)} given), which needs index=: "
            "without index= the batch's keys are (seed, stream, rank, epoch, step, position), one "
            "epoch for the batch; pass index= the samples' dataset indices, or one epoch"
        )
    return checks.uint(epoch, "epoch", 32)


def _values(index: Any) -> list[Any]:
    """The index's items, to read the epochs they carry (none from a tensor or an array)."""
    if isinstance(index, torch.Tensor | np.ndarray | np.generic):
        return []
    return list(index) if isinstance(index, Sequence) else [index]


def _column(value: Any, name: str, size: int, bits: int, *, shared: bool = True) -> torch.Tensor:
    """``value`` as an int64 ``(size,)`` tensor (one int repeated where ``shared``), range-checked.

    Indices of ``2**63`` or more are stored as their two's complement (the same 64 bits).
    """
    checks.per_sample(value, name, size, shared=shared)
    if isinstance(value, np.ndarray | np.generic):
        value = value.tolist()  # Python ints: one per sample, or one for all
    if isinstance(value, torch.Tensor) and value.dtype == torch.uint64:
        value = value.tolist()  # Python ints: 2**63 and more stay positive, as for lists
    if isinstance(value, torch.Tensor):
        column = value.reshape(-1).to(torch.int64)
        if column.numel() == 1 and value.dim() == 0:
            column = column.expand(size)
        if column.device.type == "cpu" and (  # a device tensor is not read back (no sync)
            bool((column < 0).any()) or (bits < 64 and bool((column >= 1 << bits).any()))
        ):
            raise ValueError(f"{name} must be in [0, 2**{bits}), got {column.tolist()}")
    else:
        many = isinstance(value, Sequence) and not isinstance(value, str)
        numbers = [checks.uint(v, name, bits) for v in (value if many else [value])]
        signed = [n - (1 << 64) if n >> 63 else n for n in numbers]
        column = torch.tensor(signed, dtype=torch.int64)
        if not many:
            column = column.expand(size)
    if column.numel() != size:
        raise ValueError(f"{name} must have one value per sample ({size}), got {column.numel()}")
    return column


def _rank() -> int:
    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized():
        return int(distributed.get_rank())
    return 0
