"""Presets: the layouts of Hugging Face detection datasets and of ultralytics' samples."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

import numpy as np
import torch

from rankaug import checks
from rankaug.adapters.keymap import KeyMap
from rankaug.boxes import BoxFormat
from rankaug.samples.images import image_hw

__all__ = ["HuggingFace", "Ultralytics"]


class HuggingFace(KeyMap):
    """The Hugging Face Hub's detection layout: ``image`` and ``objects`` of COCO boxes.

    ``{"image": PIL, "objects": {"bbox": [[x, y, w, h], ...], "category": [...], ...}}``,
    as a ``datasets.Dataset`` with an ``Image()`` feature gives it (or an
    ``IterableDataset``'s rows). ``box_format`` is ``"coco"``: the multi-sample wrappers take it
    from the adapter (give ``A.BboxParams`` the same). Every other list in ``objects`` (``id``,
    ``area``...) is a per-box field named by its path (``"objects.id"``): carry it with
    ``Targets(label_fields=("labels", "objects.id", ...))``, or the wrappers refuse to drop or add
    boxes beside it. ``area`` is carried as it was, not recomputed. A second ``Image()`` column
    under an albumentations additional image target (``{"image2": "image"}``) moves with the
    image and comes back a PIL image (see :class:`KeyMap`).

    Args:
        image: The image's key.
        objects: The key of the dict of per-object lists.
        bbox: The boxes' key in it.
        category: The labels' key in it.
        box_format: The boxes' format.
        **other: More targets or label fields, as for :class:`KeyMap`.

    Raises:
        TypeError: If ``objects``, ``bbox`` or ``category`` is not a string.
        ValueError: If one is empty (or has an empty part of a dotted path).

    >>> HuggingFace()
    HuggingFace(image='image', bboxes='objects.bbox', labels='objects.category', box_format='coco')
    """

    arguments_only = KeyMap.arguments_only | {"objects", "bbox", "category"}

    def __init__(
        self,
        image: str = "image",
        *,
        objects: str = "objects",
        bbox: str = "bbox",
        category: str = "category",
        box_format: BoxFormat = "coco",
        **other: Any,
    ) -> None:
        objects = checks.key_path(objects, "objects")
        bbox = checks.key_path(bbox, "bbox")
        category = checks.key_path(category, "category")
        super().__init__(image, bboxes=f"{objects}.{bbox}", labels=f"{objects}.{category}",
                         box_format=box_format, **other)  # fmt: skip


#: Keys of ultralytics' samples that hold no per-box value (or that the adapter rebuilds).
_ULTRALYTICS_KEYS: Final = frozenset(
    {"im_file", "ori_shape", "resized_shape", "ratio_pad", "batch_idx", "shape",
     "normalized", "bbox_format", "rect_shape"}
)  # fmt: skip
_UNSUPPORTED: Final = ("masks", "sem_masks", "keypoints", "instances", "segments")


class Ultralytics(KeyMap):
    """ultralytics' ``YOLODataset`` detection samples, as its ``Format`` gives them.

    ``img`` (a ``CHW`` uint8 tensor after ``Format``, or an ``HWC`` numpy array before
    it), ``cls`` ``(N, 1)`` as ``labels`` ``(N,)``, ``bboxes`` normalised ``xywh``
    (``box_format="yolo"``, which the multi-sample wrappers take from it). The output has
    the same layout: ``batch_idx`` is rebuilt with one zero per kept box (as ``Format``
    makes it) and ``resized_shape`` becomes the output image's ``(h, w)``; other keys (``im_file``,
    ``ori_shape``, ``ratio_pad``) are kept. Collate with
    :func:`rankaug.collate_ultralytics`. Samples with ``masks``, ``keypoints`` or
    ``segments`` (segment and pose tasks) are refused: their layouts are not read.

    >>> sample = {"img": torch.zeros(3, 4, 6, dtype=torch.uint8), "cls": torch.ones(1, 1),
    ...           "bboxes": torch.tensor([[0.5, 0.5, 0.5, 0.5]]), "batch_idx": torch.zeros(1),
    ...           "im_file": "a.jpg", "ori_shape": (4, 6), "resized_shape": (4, 6)}
    >>> adapter = Ultralytics()
    >>> data, state = adapter.unpack(sample, {"image", "bboxes", "labels"})
    >>> data["image"].shape, data["labels"].shape
    ((4, 6, 3), (1,))
    >>> data.update(image=np.zeros((8, 8, 3), np.uint8), bboxes=np.zeros((0, 4)),
    ...             labels=np.zeros(0))
    >>> out = adapter.repack(data, state)
    >>> tuple(out["img"].shape), tuple(out["cls"].shape), out["batch_idx"], out["resized_shape"]
    ((3, 8, 8), (0, 1), tensor([]), (8, 8))
    """

    arguments_only = frozenset()  # it takes none (its keys are ultralytics')
    _not_per_box = _ULTRALYTICS_KEYS

    def __init__(self) -> None:
        super().__init__("img", bboxes="bboxes", labels="cls", box_format="yolo")

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        """Read the sample as :class:`KeyMap` does (see the class docstring).

        Raises:
            ValueError: If it has masks, keypoints or polygons (segment and pose tasks).
        """
        if isinstance(sample, Mapping):
            for key in _UNSUPPORTED:
                if sample.get(key) is not None:
                    raise ValueError(
                        f"Ultralytics() reads detection samples (img, cls, bboxes), but this "
                        f"one has {key!r} (a segment or pose task), which it cannot move; "
                        f"the sample has keys {sorted(map(str, sample))}"
                    )
        data, state = super().unpack(sample, targets)
        if "labels" in data:  # (N, 1) -> (N,), as label fields are
            data["labels"] = np.asarray(data["labels"]).reshape(-1)
        return data, state

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        """As :meth:`KeyMap.repack`, with ``batch_idx`` and ``resized_shape`` rebuilt."""
        if "labels" in data:
            data = {**data, "labels": np.asarray(data["labels"]).reshape(-1, 1)}
        out = super().repack(data, state)
        sample = state.sample
        if "batch_idx" in sample and "bboxes" in data:
            count = len(data["bboxes"])
            old = sample["batch_idx"]
            if isinstance(old, torch.Tensor):
                out["batch_idx"] = torch.zeros(count, dtype=old.dtype)
            else:
                out["batch_idx"] = np.zeros(count, dtype=np.asarray(old).dtype)
        if "resized_shape" in sample and "image" in data:
            height, width = image_hw(data["image"])  # a ToTensorV2 output is CxHxW
            out["resized_shape"] = type(sample["resized_shape"])((height, width))
        return out

    def __repr__(self) -> str:
        return "Ultralytics()"
