"""Collating detection samples so that batches leave DataLoader workers cheaply.

A worker sends its batch to the main process by pickling it through a pipe, unless the
batch is made of tensors, which travel through shared memory (``default_collate``
allocates the stacked tensor there when it runs in a worker). A batch of 16 numpy
640x640 mosaics is about 20 MB: pickling and unpickling it costs about as much as making
it, and the main process does the unpickling, so a second worker hardly helps on two
cores. Return tensors: :func:`collate_detection` stacks the images into one tensor and
gathers all boxes YOLO-style into one ``(M, 6)`` tensor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import default_collate

__all__ = ["collate_detection"]


def collate_detection(
    batch: Sequence[Mapping[str, Any]],
    *,
    box_field: str = "bboxes",
    label_field: str = "labels",
    channels_first: bool = False,
) -> dict[str, Any]:
    """Collate dict detection samples into tensors (use it as ``collate_fn``).

    Args:
        batch: Dict samples with an ``image`` (``HxWxC`` or ``HxW``, numpy or tensor, the
            same shape in every sample), boxes and labels.
        box_field: The key of the ``(N, 4)`` boxes. Defaults to ``"bboxes"``.
        label_field: The key of the ``(N,)`` labels. Defaults to ``"labels"``.
        channels_first: Give ``image`` as ``(B, C, H, W)`` instead of ``(B, H, W, C)``.
            Defaults to ``False``.

    Returns:
        ``"image"``: the stacked images; ``"targets"``: a float32 ``(M, 6)`` tensor of
        rows ``(sample index in the batch, label, box...)`` with the boxes in the samples'
        own format; ``"mask"``: the stacked semantic masks, when the samples have them;
        every other key: the list of its values, in batch order.

    Raises:
        ValueError: If the batch is empty, or a sample lacks ``image``, boxes or
            labels, or images differ in shape, or boxes and labels differ in length.
        TypeError: If a sample is not a dict.

    >>> samples = [{"image": np.zeros((4, 6, 3), np.uint8), "bboxes": np.array([[0, 0, 2, 2]]),
    ...             "labels": np.array([5]), "path": "a.png"}] * 2
    >>> out = collate_detection(samples)
    >>> out["image"].shape, out["targets"].tolist()[1], out["path"]
    (torch.Size([2, 4, 6, 3]), [1.0, 5.0, 0.0, 0.0, 2.0, 2.0], ['a.png', 'a.png'])
    """
    if not batch:
        raise ValueError("collate_detection needs a non-empty batch")
    for position, sample in enumerate(batch):
        if not isinstance(sample, Mapping):
            raise TypeError(
                f"collate_detection takes dict samples; batch[{position}] is a "
                f"{type(sample).__name__}"
            )
        for key in ("image", box_field, label_field):
            if key not in sample:
                raise ValueError(
                    f"batch[{position}] has no {key!r} (keys: {sorted(sample)}); "
                    "collate_detection needs an image, boxes and labels"
                )
    shape = tuple(np.shape(batch[0]["image"]))
    for position, sample in enumerate(batch):
        if tuple(np.shape(sample["image"])) != shape:
            raise ValueError(
                f"batch[{position}]['image'] has shape {tuple(np.shape(sample['image']))}, "
                f"batch[0]['image'] has {shape}: images of a batch must have one shape "
                "(a MosaicDataset's output_size gives them one)"
            )
    images = [_channels_first(sample["image"]) if channels_first else sample["image"]
              for sample in batch]  # fmt: skip
    out: dict[str, Any] = {"image": default_collate(images), "targets": _targets(
        batch, box_field, label_field)}  # fmt: skip
    if all("mask" in sample for sample in batch):
        out["mask"] = default_collate([sample["mask"] for sample in batch])
    for key in batch[0]:
        if key not in out and key not in (box_field, label_field):
            out[key] = [sample.get(key) for sample in batch]
    return out


def _channels_first(image: Any) -> Any:
    if isinstance(image, torch.Tensor):
        return image.permute(2, 0, 1) if image.ndim == 3 else image[None]
    array = np.asarray(image)
    return array.transpose(2, 0, 1) if array.ndim == 3 else array[None]


def _targets(batch: Sequence[Mapping[str, Any]], box_field: str, label_field: str) -> torch.Tensor:
    rows = []
    for position, sample in enumerate(batch):
        boxes = np.asarray(sample[box_field], dtype=np.float32).reshape(-1, 4)
        labels = np.asarray(sample[label_field], dtype=np.float32).reshape(-1)
        if len(boxes) != len(labels):
            raise ValueError(
                f"batch[{position}] has {len(boxes)} boxes ({box_field!r}) but {len(labels)} "
                f"labels ({label_field!r})"
            )
        block = np.empty((len(boxes), 6), dtype=np.float32)
        block[:, 0] = position
        block[:, 1] = labels
        block[:, 2:] = boxes
        rows.append(block)
    return torch.from_numpy(np.concatenate(rows))
