"""``collate_ultralytics``: ultralytics' own batch layout, so its trainer reads rankaug's.

ultralytics' ``YOLODataset.collate_fn`` stacks ``img`` into ``(B, 3, H, W)`` uint8,
concatenates the per-box tensors (``cls``, ``bboxes``; ``masks``, ``keypoints``,
``segments``, ``obb`` where present), numbers each box's sample in ``batch_idx`` and
keeps every other key as a tuple, keys in sorted order. :func:`collate_ultralytics` gives
the same batch, checked: samples from :class:`rankaug.adapters.Ultralytics` (through
rankaug's mosaic, mixes and augmentation wrappers) go into ultralytics' trainer as its
own would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import torch

from rankaug import checks
from rankaug.collate._write import by_value

__all__ = ["collate_ultralytics"]

_STACKED: Final = frozenset({"img", "text_feats", "semantic_mask", "sem_masks", "depth"})
_PER_BOX: Final = frozenset({"masks", "keypoints", "bboxes", "cls", "segments", "obb"})
_ONE_PER_BOX: Final = ("cls", "keypoints")  # (masks may be one overlap mask per image)


def _tensor(value: Any, where: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    raise TypeError(f"{where} must be a tensor or a numpy array, got {type(value).__name__}")


def _image(value: Any, where: str) -> torch.Tensor:
    if isinstance(value, np.ndarray) and value.ndim == 3:
        value = np.ascontiguousarray(value.transpose(2, 0, 1))  # HWC -> CHW, as Format
    image = _tensor(value, where)
    if image.ndim != 3:
        raise ValueError(f"{where} must be a CxHxW tensor, got shape {tuple(image.shape)}")
    return image


def collate_ultralytics(batch: Sequence[Any]) -> dict[str, Any]:
    """Collate ultralytics-layout samples as ``YOLODataset.collate_fn`` does.

    Args:
        batch: Dict samples with the same keys: ``img`` a ``CHW`` tensor (or an ``HWC``
            numpy array, made ``CHW`` with its channels in their order), ``cls``
            ``(N, 1)``, ``bboxes`` ``(N, 4)`` and ``batch_idx`` ``(N,)`` tensors or arrays.

    Returns:
        ``img`` ``(B, C, H, W)``; ``cls``, ``bboxes`` (and the other per-box keys)
        concatenated; ``batch_idx`` each box's sample position; every other key a tuple of
        the samples' values. Keys in sorted order, as ultralytics makes them.

    Raises:
        TypeError: If ``batch`` is not a sequence (a lone sample, say), a sample is not a
            dict, or a tensor key holds something else.
        ValueError: If the batch is empty, samples have no ``img`` (rankaug's own
            ``image`` layout, which :func:`rankaug.collate_detection` collates) or differ
            in keys, images in shape or dtype, or a sample's ``cls``, ``keypoints`` or
            ``batch_idx`` does not have one entry per box (concatenated, every later box
            would get another's).

    >>> sample = {"img": torch.zeros(3, 4, 6, dtype=torch.uint8), "cls": torch.ones(2, 1),
    ...           "bboxes": torch.rand(2, 4), "batch_idx": torch.zeros(2), "im_file": "a.jpg"}
    >>> out = collate_ultralytics([sample, sample])
    >>> tuple(out["img"].shape), out["batch_idx"].tolist(), out["im_file"]
    ((2, 3, 4, 6), [0.0, 0.0, 1.0, 1.0], ('a.jpg', 'a.jpg'))
    """
    # a lone sample (a dict) or a string would be read key by key, character by character
    checks.sequence(batch, "batch", what="a non-empty sequence of dict samples")
    for position, sample in enumerate(batch):
        if not isinstance(sample, dict):
            raise TypeError(
                f"batch[{position}] must be a dict sample (ultralytics' layout), got "
                f"{type(sample).__name__}"
            )
    keys = sorted(batch[0])
    for position, sample in enumerate(batch[1:], 1):
        if sorted(sample) != keys:
            raise ValueError(
                f"batch[{position}] has keys {sorted(sample)}, but batch[0] has {keys}"
            )
    if "img" not in keys:
        raise ValueError(
            f"batch[0] has no 'img' (keys {keys}): collate_ultralytics takes ultralytics' "
            "layout ('img', 'cls', 'bboxes', 'batch_idx'), not rankaug's dict samples "
            "('image', 'labels', 'bboxes': YoloFolder, SyntheticDetection), which "
            "collate_detection collates; read ultralytics' YOLODataset through "
            "rankaug.adapters.Ultralytics() for its layout"
        )
    if "bboxes" in keys:
        _check_per_box(batch, [key for key in _ONE_PER_BOX if key in keys])
    out: dict[str, Any] = {}
    for key in keys:
        values = [sample[key] for sample in batch]
        if key == "img":
            images = [_image(v, f"batch[{i}] img") for i, v in enumerate(values)]
            first = images[0]
            for i, image in enumerate(images):
                if image.shape != first.shape or image.dtype != first.dtype:
                    raise ValueError(
                        f"batch[{i}] img has shape {tuple(image.shape)} and dtype "
                        f"{image.dtype}, batch[0] {tuple(first.shape)} and {first.dtype}: a "
                        "batch needs images of one shape and dtype"
                    )
            out[key] = torch.stack(images, 0)
        elif key in _STACKED:
            out[key] = torch.stack([_tensor(v, f"batch[{i}] {key}") for i, v in enumerate(values)])
        elif key == "visuals":
            tensors = [_tensor(v, f"batch[{i}] {key}") for i, v in enumerate(values)]
            out[key] = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True)
        elif key in _PER_BOX:
            out[key] = torch.cat([_tensor(v, f"batch[{i}] {key}") for i, v in enumerate(values)])
        elif key != "batch_idx":
            out[key] = tuple(values)
    if "batch_idx" in keys:
        numbered = []
        for i, sample in enumerate(batch):
            index = _tensor(sample["batch_idx"], f"batch[{i}] batch_idx")
            boxes = sample.get("bboxes")
            if boxes is not None and len(index) != len(boxes):
                raise ValueError(
                    f"batch[{i}] batch_idx has {len(index)} entries for {len(boxes)} boxes: "
                    "it must have one per box (stale after an augmentation that dropped or "
                    "added boxes? rankaug.adapters.Ultralytics() rebuilds it)"
                )
            numbered.append(index + i)
        out["batch_idx"] = torch.cat(numbered, 0)
    # from a worker the small per-box tensors go by value: no handle each to fetch
    out.update(by_value({k: v for k, v in out.items() if k in _PER_BOX or k == "batch_idx"}))
    return dict(sorted(out.items()))


def _check_per_box(batch: Sequence[dict[str, Any]], keys: Sequence[str]) -> None:
    """Refuse a sample whose ``keys`` do not hold one entry per box of its ``bboxes``."""
    for i, sample in enumerate(batch):
        count = len(sample["bboxes"])
        for key in keys:
            if len(sample[key]) != count:
                raise ValueError(
                    f"batch[{i}] {key} has {len(sample[key])} entries for {count} boxes: it "
                    "must have one per box, or every later box of the batch gets another "
                    f"box's {key} (an augmentation that dropped or added boxes without it? "
                    "rankaug.adapters.Ultralytics() keeps them together)"
                )
