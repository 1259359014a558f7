"""Reading a batch of detection samples into columns, refusing anything it would convert.

Every check names the sample's position in the batch and the key. Nothing here changes
a value: images keep their dtype (one per batch), boxes and labels keep theirs, and a
shape that is not the documented one is refused rather than reshaped. Byte order is not a
value: a big-endian array (``>u2``, as PIL gives for ``I;16B`` PNGs) is stacked or
gathered in the native order, every value unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import torch

from rankaug import checks
from rankaug.collate import _dtypes as dtypes
from rankaug.samples.images import CHANNELS_AT_MOST  # channels_first refuses CxHxW

#: Output keys collate_detection fills itself; a sample may not bring its own.
RESERVED: Final[tuple[str, ...]] = ("targets", "batch_idx")
#: The sample keys stacked into one tensor.
STACKED: Final[tuple[str, ...]] = ("image", "mask")
#: Integer labels up to this magnitude are exact in float32 (the ``targets`` tensor).
FLOAT32_EXACT: Final = 2**24

Stackable = np.ndarray | torch.Tensor


@dataclass(frozen=True)
class Fields:
    """The collate's options, checked once.

    Attributes:
        box_field: The sample key of the ``(N, 4)`` boxes.
        label_field: The sample key of the ``(N,)`` labels.
        channels_first: Stack images as ``(B, C, H, W)``.
        targets: Also build the YOLOv5-style float32 ``(M, 6)`` tensor.
    """

    box_field: str
    label_field: str
    channels_first: bool
    targets: bool

    @classmethod
    def check(
        cls, box_field: object, label_field: object, channels_first: object, targets: object
    ) -> Fields:
        """Check the options (the messages name the argument)."""
        taken = (*STACKED, *RESERVED)
        box = _field_name(box_field, "box_field", forbidden=taken)
        label = _field_name(label_field, "label_field", forbidden=(*taken, box))
        first = checks.boolean(channels_first, "channels_first")
        return cls(box, label, first, checks.boolean(targets, "targets"))


@dataclass(frozen=True)
class Stack:
    """One stacked key's items, checked to share a shape and a dtype.

    Attributes:
        items: Per sample, the array or CPU tensor to copy (channels moved first when
            asked: a view, not a copy).
        shape: The stacked shape ``(B, ...)``.
        dtype: Its torch dtype (byte order native, whatever the items' order).
    """

    items: list[Stackable]
    shape: tuple[int, ...]
    dtype: torch.dtype


@dataclass(frozen=True)
class Columns:
    """A batch read into columns.

    Attributes:
        stacks: ``"image"`` and, when the samples have it, ``"mask"``.
        boxes: All boxes, ``(M, 4)``, in the samples' dtype.
        labels: All labels, ``(M,)``, in the samples' dtype.
        batch_idx: Each box's sample position, ``(M,)`` int64.
        others: Every other key: its values in batch order.
    """

    stacks: dict[str, Stack]
    boxes: np.ndarray
    labels: np.ndarray
    batch_idx: np.ndarray
    others: dict[str, list[Any]]


def read_batch(batch: object, fields: Fields) -> Columns:
    """Check a batch of dict samples and read it into :class:`Columns`.

    Raises:
        TypeError: If the batch is not a sequence, a sample is not a dict, or an image,
            mask, boxes or labels are not of a type collate takes.
        ValueError: If the batch is empty, or its samples disagree in keys, shapes or
            dtypes, or boxes or labels have a shape they must not have.
    """
    if isinstance(batch, str | bytes | Mapping) or not isinstance(batch, Sequence):
        raise TypeError(f"collate takes a sequence of samples, got a {type(batch).__name__}")
    if not batch:
        raise ValueError("collate needs a non-empty batch")
    keys = _keys(batch, fields)
    stacks = {
        key: _stack(batch, key, channels_first=fields.channels_first and key == "image")
        for key in STACKED
        if key in keys
    }
    # (each message's place is written only when it is raised: a sample's f-strings cost
    # more than its checks)
    boxes = [_numbers(s[fields.box_field], p, fields.box_field) for p, s in enumerate(batch)]
    labels = [_numbers(s[fields.label_field], p, fields.label_field) for p, s in enumerate(batch)]
    counts = []
    for position, (box, label) in enumerate(zip(boxes, labels, strict=True)):
        count = _box_count(box, position, fields.box_field)
        if label.ndim != 1 and label.size:
            raise ValueError(
                f"{_at(position, fields.label_field)} must be an (N,) array of labels, "
                f"got shape {label.shape}"
            )
        if label.size != count:
            raise ValueError(
                f"batch[{position}] has {count} boxes ({fields.box_field!r}) but {label.size} "
                f"labels ({fields.label_field!r})"
            )
        counts.append(count)
    box_dtype = dtypes.box_dtype(boxes, batch, fields.box_field)
    label_dtype = dtypes.one_dtype(labels, batch, fields.label_field, np.dtype(np.int64))
    columns = Columns(
        stacks=stacks,
        boxes=np.concatenate([b.reshape(-1, 4).astype(box_dtype, copy=False) for b in boxes]),
        labels=np.concatenate([lab.reshape(-1).astype(label_dtype, copy=False) for lab in labels]),
        batch_idx=np.repeat(np.arange(len(batch), dtype=np.int64), counts),
        others={
            key: [sample[key] for sample in batch]
            for key in keys
            if key not in (*STACKED, fields.box_field, fields.label_field)
        },
    )
    if fields.targets:
        _check_float32_labels(columns, fields)
    return columns


def _check_float32_labels(columns: Columns, fields: Fields) -> None:
    """Refuse labels that the float32 ``targets`` tensor would not hold exactly."""
    labels = columns.labels
    if not labels.size:
        return
    if labels.dtype.kind in "iu":
        bad = np.flatnonzero((labels > FLOAT32_EXACT) | (labels < -FLOAT32_EXACT))
        rule = f"integers within ±2**24 ({FLOAT32_EXACT})"
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            back = labels.astype(np.float32).astype(labels.dtype)
        bad = np.flatnonzero((back != labels) & ~(np.isnan(back) & np.isnan(labels)))
        rule = "numbers float32 holds exactly"
    if bad.size:
        first = int(bad[0])
        raise ValueError(
            f"batch[{int(columns.batch_idx[first])}][{fields.label_field!r}] has the label "
            f"{labels[first].item()!r}, which the float32 'targets' tensor cannot hold exactly "
            f"(its labels must be {rule}); pass targets=False and use the "
            f"{fields.label_field!r} tensor of the batch, which keeps the labels' dtype"
        )


def _field_name(value: object, name: str, *, forbidden: Sequence[str]) -> str:
    field = checks.key_name(value, name, forbidden=forbidden, optional=False)
    assert field is not None
    return field


def _keys(batch: Sequence[Any], fields: Fields) -> list[str]:
    """The batch's keys (batch[0]'s order), after checking every sample has them all."""
    first: Mapping[str, Any] | None = None
    for position, sample in enumerate(batch):
        if not isinstance(sample, Mapping):
            raise TypeError(
                f"collate takes dict samples; batch[{position}] is a {type(sample).__name__}"
            )
        for key in ("image", fields.box_field, fields.label_field):
            if key not in sample:
                raise ValueError(
                    f"batch[{position}] has no {key!r} (keys: {sorted(map(str, sample))}); "
                    "collate needs an image, boxes and labels"
                )
        reserved = [key for key in RESERVED if key in sample and (key != "targets" or
                    fields.targets)]  # fmt: skip
        if reserved:
            raise ValueError(
                f"batch[{position}] has the key {reserved[0]!r}, which the collated batch "
                "uses for its own tensor: rename it in the dataset"
            )
        if first is None:
            first = sample
        elif sample.keys() != first.keys():
            lacks = sorted(map(str, first.keys() - sample.keys()))
            extra = sorted(map(str, sample.keys() - first.keys()))
            raise ValueError(
                f"batch[{position}] has other keys than batch[0] (it lacks {lacks}, has "
                f"{extra} besides): every sample of a batch must have the same keys"
            )
    assert first is not None
    return list(first)


def _stack(batch: Sequence[Mapping[str, Any]], key: str, *, channels_first: bool) -> Stack:
    items: list[Stackable] = []
    shape: tuple[int, ...] = ()
    dtype = ""
    names: dict[np.dtype[Any], str] = {}  # a numpy dtype's name is slow to make: once a batch
    for position, sample in enumerate(batch):
        value = sample[key]
        if isinstance(value, torch.Tensor):
            if value.device.type != "cpu":
                raise ValueError(
                    f"{_at(position, key)} must be on the CPU, got a tensor on {value.device}"
                )
            if value.dtype.is_complex:
                raise TypeError(
                    f"{_at(position, key)} must hold real numbers, got dtype {value.dtype}"
                )
            name = str(value.dtype).removeprefix("torch.")
        elif isinstance(value, np.ndarray):
            known = names.get(value.dtype)
            if known is None:
                if value.dtype.kind not in "biuf":
                    raise TypeError(
                        f"{_at(position, key)} must hold numbers, got dtype {value.dtype}"
                    )
                if value.dtype.itemsize > 8:
                    raise TypeError(_no_tensor_dtype(_at(position, key), value.dtype))
                known = names[value.dtype] = value.dtype.name
            name = known
        else:
            raise TypeError(
                f"{_at(position, key)} must be a numpy array or a torch tensor, got "
                f"{type(value).__name__}"
            )
        if value.ndim not in (2, 3) or 0 in value.shape:
            raise ValueError(
                f"{_at(position, key)} must be a non-empty HxW or HxWxC array, got shape "
                f"{tuple(value.shape)}"
            )
        if position == 0:
            shape, dtype = tuple(value.shape), name
            if channels_first and len(shape) == 3 and shape[0] <= CHANNELS_AT_MOST < shape[2]:
                raise ValueError(_already_channels_first(_at(position, key), shape))
        elif tuple(value.shape) != shape:
            raise ValueError(
                f"{_at(position, key)} has shape {tuple(value.shape)}, batch[0][{key!r}] has "
                f"{shape}: the {key}s of a batch must have one shape (a MosaicDataset's "
                "output_size gives them one)"
            )
        elif name != dtype:
            raise ValueError(
                f"{_at(position, key)} has dtype {name}, batch[0][{key!r}] has {dtype}: the "
                f"{key}s of a batch must have one dtype (nothing is converted: make the dataset "
                "return one)"
            )
        items.append(_channels_first(value) if channels_first else value)
    first = items[0]
    torch_dtype = (
        first.dtype
        if isinstance(first, torch.Tensor)
        else torch.from_numpy(np.empty(0, first.dtype.newbyteorder("="))).dtype
    )
    return Stack(items, (len(items), *items[0].shape), torch_dtype)


def _already_channels_first(where: str, shape: tuple[int, ...]) -> str:
    return (
        f"{where} has shape {shape}: a CxHxW image already (as ToTensorV2 and torchvision "
        f"give; at most {CHANNELS_AT_MOST} in the first dimension and more in the last reads "
        "as channels first), which channels_first=True would scramble into (W, C, H); pass "
        "channels_first=False, which stacks CxHxW images as they are into (B, C, H, W)"
    )


def _channels_first(image: Stackable) -> Stackable:
    if image.ndim == 2:
        return image[None]
    return image.permute(2, 0, 1) if isinstance(image, torch.Tensor) else image.transpose(2, 0, 1)


def _at(position: int, key: str) -> str:
    """Where a value is, for messages: ``batch[3]['labels']``."""
    return f"batch[{position}][{key!r}]"


def _numbers(value: object, position: int, key: str) -> np.ndarray:
    """``batch[position][key]``'s boxes or labels as a numpy array (no copy of an array)."""
    if type(value) is np.ndarray:  # as np.asarray gives it, without the call
        array = value
    elif value is None:  # every wrapper gives a None target back as it came: no target
        raise TypeError(
            f"{_at(position, key)} is None: collate needs boxes and labels, so give an image "
            "without objects empty ones (np.zeros((0, 4), np.float32) boxes, "
            "np.zeros((0,), np.int64) labels), in the dataset or a transform"
        )
    elif isinstance(value, torch.Tensor):
        where = _at(position, key)
        if value.device.type != "cpu":
            raise ValueError(f"{where} must be on the CPU, got a tensor on {value.device}")
        try:
            array = value.detach().numpy()
        except TypeError:  # bfloat16, float8...: no numpy dtype
            raise TypeError(
                f"{where} must hold numbers numpy holds, got a tensor of dtype {value.dtype}: "
                "give float32 (or another numpy dtype) from the dataset"
            ) from None
    else:
        try:
            array = np.asarray(value)
        except ValueError as error:  # ragged nested lists
            raise ValueError(
                f"{_at(position, key)} must be a rectangular array of numbers: {error}"
            ) from None
    dtype = array.dtype
    if dtype.kind not in "iuf" and array.size:  # an empty one carries no values
        raise TypeError(
            f"{_at(position, key)} must hold numbers (integers or floats), got {value!r:.60} of "
            f"dtype {dtype}"
        )
    if dtype.itemsize > 8 and dtype.kind == "f":
        raise TypeError(_no_tensor_dtype(_at(position, key), dtype))
    if not dtype.isnative:  # big-endian: the same values in the native order
        array = array.astype(dtype.newbyteorder("="))
    return array


def _no_tensor_dtype(where: str, dtype: np.dtype) -> str:
    return (
        f"{where} has dtype {dtype}, which torch has no tensors of: give float64 or "
        "narrower from the dataset"
    )


def _box_count(boxes: np.ndarray, position: int, key: str) -> int:
    if boxes.ndim == 2 and boxes.shape[1] == 4:
        return int(boxes.shape[0])
    if boxes.shape == (0,):
        return 0
    raise ValueError(
        f"{_at(position, key)} must be an (N, 4) array of boxes (an empty one for no boxes), "
        f"got shape {boxes.shape}"
    )
