"""Collating detection samples so that batches leave DataLoader workers cheaply.

A worker sends its batch to the main process by pickling it through a pipe, unless the
batch is made of tensors, which travel through shared memory. A batch of 16 numpy
640x640 mosaics is about 20 MB: pickling and unpickling it costs about as much as making
it, and the main process does the unpickling, so a second worker hardly helps on two
cores. Return tensors: :func:`collate_detection` stacks the images into one tensor and
gathers all boxes into tensors, YOLOv5-style (one ``(M, 6)`` tensor) and per box
(``batch_idx``, boxes and labels, each in its own dtype: ``batch_idx`` is int64 where
ultralytics' is float32; :func:`collate_ultralytics` gives ultralytics' layout).
:class:`BatchCollator` does the same and recycles the stacked buffers in each worker
(:mod:`rankaug.collate.recycle`).

Collating reads the batch (every check, nothing converted), then writes each stacked key
once into its destination, then gathers the per-box tensors and the other keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rankaug.collate._read import Fields, read_batch
from rankaug.collate._write import allocate, assemble, fill
from rankaug.collate.recycle import BatchCollator, RecycleStats
from rankaug.collate.ultralytics import collate_ultralytics as collate_ultralytics

__all__ = ["BatchCollator", "RecycleStats", "collate_detection"]


def collate_detection(
    batch: Sequence[Any],
    *,
    box_field: str = "bboxes",
    label_field: str = "labels",
    channels_first: bool = False,
    targets: bool = True,
) -> dict[str, Any]:
    """Collate dict detection samples into tensors (use it as ``collate_fn``).

    Nothing is converted silently: the images (and masks) of a batch must share one shape
    and one dtype, boxes and labels keep their dtype (one per batch), and a shape other
    than the documented one is refused, not reshaped. Only the byte order may differ:
    big-endian arrays (``>u2``, as PIL gives for 16-bit PNGs) are gathered in the native
    order, every value unchanged.

    Args:
        batch: Dict samples, all with the same keys: an ``image`` (``HxWxC`` or ``HxW``,
            numpy or CPU tensor; a ``CxHxW`` tensor, as ``ToTensorV2`` and torchvision
            give, is stacked as it is, into ``(B, C, H, W)``), ``(N, 4)`` boxes (an empty
            list or array for none) and ``(N,)`` labels (integers or floats). A ``mask``
            key is stacked as it is, ``(B, H, W)`` or ``(B, H, W, K)``, also under
            ``channels_first=True``, which moves the images' channels alone.
        box_field: The key of the boxes. Defaults to ``"bboxes"``.
        label_field: The key of the labels. Defaults to ``"labels"``.
        channels_first: Give ``HxWxC`` images as ``(B, C, H, W)`` instead of
            ``(B, H, W, C)``; ``HxW`` images become ``(B, 1, H, W)``. An image that is
            ``CxHxW`` already (at most 4 in its first dimension, more in its last) is
            refused, not scrambled: it needs ``False``. Defaults to ``False``.
        targets: Also return ``targets``, the YOLOv5-style float32 tensor; its labels must
            then be exact in float32 (integers within ±2**24). Defaults to ``True``.

    Returns:
        ``"image"``: the stacked images (in shared memory inside a DataLoader worker);
        ``"mask"``: the stacked masks, when the samples have them; ``"targets"``: a
        float32 ``(M, 6)`` tensor of rows ``(sample position, label, box...)``;
        ``"batch_idx"``: the int64 ``(M,)`` sample position of each box; under
        ``box_field`` and ``label_field``: the ``(M, 4)`` boxes and ``(M,)`` labels of
        the whole batch in the samples' own dtypes (int64 labels stay int64), where a
        dtype is taken from the samples that have boxes (or, in a batch without any
        box, from the first sample whose value is an array or tensor; else float32 boxes
        and int64 labels); boxes given as lists or tuples, which carry no dtype, take the
        dtype of those given as arrays or tensors, else float64 for Python numbers; every
        other key: the list of its values, in batch order.
        Boxes keep the samples' own format. ``"epoch"``: when the samples carry their
        ``index`` as :class:`~rankaug.EpochIndex` values (and have no ``epoch`` key),
        the int64 ``(B,)`` epochs of those indices, for :class:`~rankaug.BatchAugment`.

    Raises:
        TypeError: If a sample is not a dict, an image or mask is not an array or
            tensor of real numbers, boxes or labels are not numbers, a dtype has no
            counterpart in both numpy and torch (``float128``, ``bfloat16`` boxes), or an
            option has the wrong type.
        ValueError: If the batch is empty, samples differ in keys, images or masks
            differ in shape or dtype, non-empty boxes or labels differ in dtype, boxes
            are not ``(N, 4)`` or labels not ``(N,)``, their counts differ, a label does
            not fit ``targets``, a sample has a key the output uses (``targets``,
            ``batch_idx``), an image is ``CxHxW`` already under ``channels_first=True``,
            or an option's value is refused.

    >>> import numpy as np
    >>> samples = [{"image": np.zeros((4, 6, 3), np.uint8), "bboxes": np.array([[0, 0, 2, 2]]),
    ...             "labels": np.array([5]), "path": "a.png"}] * 2
    >>> out = collate_detection(samples)
    >>> out["image"].shape, out["targets"].tolist()[1], out["path"]
    (torch.Size([2, 4, 6, 3]), [1.0, 5.0, 0.0, 0.0, 2.0, 2.0], ['a.png', 'a.png'])
    >>> out["batch_idx"].tolist(), out["labels"].dtype, out["bboxes"].dtype
    ([0, 1], torch.int64, torch.int64)
    """
    fields = Fields.check(box_field, label_field, channels_first, targets)
    columns = read_batch(batch, fields)
    stacked = {
        key: fill(allocate(stack.shape, stack.dtype), stack)
        for key, stack in columns.stacks.items()
    }
    return assemble(columns, fields, stacked)
