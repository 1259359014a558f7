"""What a contact sheet shows of a sample: its image, pixel boxes and labels.

:func:`sample_view` reads them from a dict or ``(image, target)`` sample, or through
an adapter for other layouts (see :mod:`rankaug.cli.adapter`); :class:`SheetViews`
does it inside DataLoader workers, and hands back a
:class:`~rankaug.cli.failure.Failure` for a sample that fails to load or to be read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from torch.utils.data import Dataset

from rankaug.boxes import as_box_array, check_box_format, to_xyxy
from rankaug.cli.adapter import SHEET_TARGETS
from rankaug.cli.failure import Failure, load
from rankaug.samples import DefaultAdapter, SampleAdapter

__all__ = [
    "SampleView",
    "SheetViews",
    "ViewItem",
    "mosaic_epoch",
    "mosaic_partners",
    "sample_view",
    "to_display",
]


def to_display(image: np.ndarray) -> np.ndarray:
    """Turn an ``HxW`` or ``HxWxC`` array of any numeric dtype into uint8 RGB ``HxWx3``.

    Floats with a maximum of at most 1 are taken as ``[0, 1]`` and scaled by 255;
    other values are clipped to ``[0, 255]``; uint16 is shifted down 8 bits. One
    channel is repeated three times; a fourth (alpha) and further channels are
    dropped; two channels get a zero third channel.

    Args:
        image: The image.

    Returns:
        A new or the same uint8 array.

    Raises:
        ValueError: If the array is not ``HxW`` or ``HxWxC`` with ``C >= 1``.

    >>> to_display(np.ones((2, 3), np.float32)).shape, int(to_display(np.ones((2, 3)))[0, 0, 0])
    ((2, 3, 3), 255)
    """
    array = np.asarray(image)
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] < 1 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"image must be HxW or HxWxC, got shape {np.shape(image)}")
    if array.dtype == np.uint16:
        array = (array >> 8).astype(np.uint8)
    elif array.dtype == np.bool_:
        array = array.astype(np.uint8) * 255
    elif array.dtype != np.uint8:
        values = np.nan_to_num(array.astype(np.float64))
        if array.dtype.kind == "f" and values.size and values.max() <= 1.0:
            values = values * 255.0
        array = np.clip(np.rint(values), 0, 255).astype(np.uint8)
    channels = array.shape[2]
    if channels == 1:
        array = np.repeat(array, 3, axis=2)
    elif channels == 2:
        array = np.concatenate([array, np.zeros_like(array[:, :, :1])], axis=2)
    elif channels > 3:
        array = array[:, :, :3]
    return np.ascontiguousarray(array)


class SampleView:
    """What a sheet shows of one sample: the image, pixel xyxy boxes and labels.

    Attributes:
        image: ``HxWx3`` uint8 RGB.
        boxes: ``(N, 4)`` float64 pixel ``(x_min, y_min, x_max, y_max)``.
        labels: ``N`` labels (ints or names), or ``None`` when the sample has none.
    """

    __slots__ = ("boxes", "image", "labels")

    def __init__(self, image: np.ndarray, boxes: np.ndarray, labels: list[Any] | None) -> None:
        self.image = image
        self.boxes = boxes
        self.labels = labels


def sample_view(
    sample: Any, box_format: str = "pascal_voc", adapter: SampleAdapter | None = None
) -> SampleView:
    """Read the image, boxes and labels of a sample.

    Without an adapter, dict samples use albumentations' keys (``image``, ``bboxes``,
    ``labels``) and ``(image, target)`` pairs ``target["boxes"]`` (or ``"bboxes"``), both
    in ``box_format``, as rankaug's wrappers read them (its default, ``"pascal_voc"``,
    is torchvision's pixel xyxy). Images may be numpy arrays, PIL
    images or ``CHW`` tensors; a box array with extra columns (a label appended) keeps
    its first four. An adapter is asked for ``image``, ``bboxes`` (in ``box_format``)
    and ``labels``.

    Args:
        sample: The sample.
        box_format: The format of the boxes.
        adapter: Reads samples of another layout (see :mod:`rankaug.cli.adapter`);
            ``None`` reads them as :class:`rankaug.DefaultAdapter` does.

    Returns:
        The view.

    Raises:
        TypeError: If the sample has no image rankaug can read.
        ValueError: If ``box_format`` is unknown or the boxes are not ``(N, >=4)``.

    >>> view = sample_view({"image": np.zeros((10, 20, 3), np.uint8),
    ...                     "bboxes": [[0.5, 0.5, 0.5, 0.2]], "labels": [3]}, "yolo")
    >>> view.boxes.tolist(), view.labels
    ([[5.0, 4.0, 15.0, 6.0]], [3])
    >>> sample_view({"image": np.zeros((4, 4), np.uint8), "labels": np.array([[2.0]])}).labels
    [2]
    >>> pair = (np.zeros((10, 20, 3), np.uint8), {"boxes": [[0.5, 0.5, 0.5, 0.2]]})
    >>> sample_view(pair, "yolo").boxes.tolist()
    [[5.0, 4.0, 15.0, 6.0]]
    """
    fmt = check_box_format(box_format)
    data, _ = (adapter or DefaultAdapter()).unpack(sample, SHEET_TARGETS)
    if "image" not in data:
        raise ValueError(f"the adapter gave no 'image', only {sorted(data)}")
    image = to_display(data["image"])
    raw = data.get("bboxes")
    if raw is None:
        boxes = np.zeros((0, 4))
    else:
        array = np.asarray(raw, dtype=np.float64)
        if array.ndim == 2 and array.shape[1] > 4:
            array = array[:, :4]
        boxes = to_xyxy(as_box_array(array), fmt, (image.shape[0], image.shape[1]))
    raw_labels = data.get("labels")
    if raw_labels is None:
        return SampleView(image, boxes, None)
    values = np.asarray(raw_labels).reshape(-1)
    if (
        values.dtype.kind == "f"
        and np.isfinite(values).all()
        and (values == np.round(values)).all()
    ):
        values = values.astype(np.int64)  # ultralytics' float class ids: colours as for ints
    return SampleView(image, boxes, list(values.tolist()))


def mosaic_partners(sample: Any) -> list[int] | None:
    """The partner indices in a dict sample's ``"mosaic"`` record, if it has one.

    >>> mosaic_partners({"mosaic": {"applied": True, "indices": [4, 1, 9, 2]}})
    [1, 9, 2]
    >>> mosaic_partners({"image": None}) is None
    True
    """
    if not isinstance(sample, Mapping):
        return None
    record = sample.get("mosaic")
    if not isinstance(record, Mapping) or "indices" not in record:
        return None
    return [int(i) for i in list(record["indices"])[1:]]


def mosaic_epoch(sample: Any) -> int | None:
    """The epoch in a dict sample's ``"mosaic"`` record (the epoch its key used), if any.

    >>> mosaic_epoch({"mosaic": {"indices": [4, 1, 9, 2], "epoch": 3}})
    3
    >>> mosaic_epoch({"mosaic": {"indices": [4, 1, 9, 2]}}) is None
    True
    """
    if not isinstance(sample, Mapping):
        return None
    record = sample.get("mosaic")
    if not isinstance(record, Mapping) or "epoch" not in record:
        return None
    return int(record["epoch"])


# (index, worker id, view, mosaic partners or None, mosaic record's epoch or None)
ViewItem = tuple[int, int, SampleView, list[int] | None, int | None]
_LAYOUT_HINT = (
    "for samples of another layout pass --keys NAME=KEY,... (ultralytics': "
    "--keys image=img,bboxes=bboxes,labels=cls --box-format yolo) or --adapter module:factory"
)


class SheetViews(Dataset[ViewItem | Failure]):
    """What a sheet shows of another dataset's samples, loaded in DataLoader workers.

    Items are ``(index, worker id, view, mosaic partners, mosaic epoch)`` (the last two
    ``None`` for samples without a mosaic record); the worker id is 0
    in the main process. A sample that fails to load or read gives a
    :class:`~rankaug.cli.failure.Failure` instead.

    Args:
        dataset: The map-style dataset.
        box_format: The format of its samples' boxes.
        adapter: Reads samples of another layout; ``None``: the default layouts.
        reader: How ``adapter`` was given (``"--keys ..."``), for messages. Defaults
            to ``""``.

    >>> from rankaug.datasets import SyntheticDetection
    >>> index, worker, view, partners, _ = SheetViews(SyntheticDetection(2, 16), "pascal_voc")[1]
    >>> index, worker, view.image.shape, partners
    (1, 0, (16, 16, 3), None)
    """

    def __init__(
        self,
        dataset: Any,
        box_format: str,
        adapter: SampleAdapter | None = None,
        reader: str = "",
    ) -> None:
        self.dataset = dataset
        self.box_format = check_box_format(box_format)
        self.adapter = adapter
        self.reader = reader

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> ViewItem | Failure:
        loaded = load(self.dataset, index)
        if isinstance(loaded, Failure):
            return loaded
        worker, sample = loaded
        try:
            view = sample_view(sample, self.box_format, self.adapter)
        except Exception as error:
            if self.adapter is None:
                return Failure.of(f"reading dataset[{index}]", index, worker, error, _LAYOUT_HINT)
            stage = f"reading dataset[{index}] with {self.reader or 'the adapter'}"
            return Failure.of(stage, index, worker, error)
        return index, worker, view, mosaic_partners(sample), mosaic_epoch(sample)
