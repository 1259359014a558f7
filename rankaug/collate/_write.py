"""Writing a batch's columns into tensors: every stacked array copied once, into its home.

Inside a DataLoader worker a batch's tensors leave through shared memory: pickling a
tensor moves an ordinary one there (a copy), so the stacks are allocated there directly,
as ``default_collate`` does. Each shared storage costs the main process a connection to
the worker's resource sharer to receive its file descriptor, served by a thread that
needs the worker's GIL (measured here with a worker making mosaics: 1.0-1.2 ms of the
main process's fetch for three storages a batch, 0.5 for one). So the small per-box
tensors share one block of memory, and a block of up to :data:`BY_VALUE` bytes is not
shared at all: it travels by value, pickled with the batch (:class:`ByValue`,
:func:`by_value`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import torch
from torch.utils.data import get_worker_info

from rankaug.collate._read import Columns, Fields, Stack
from rankaug.epoch import EpochIndex

#: Makes the tensor a stack is copied into, given its shape and dtype.
Allocator = Callable[[tuple[int, ...], torch.dtype], torch.Tensor]

_ALIGN = 8  # bytes: every dtype's alignment
#: The largest block of per-box tensors (bytes) a worker sends by value: 4,681 boxes with
#: ``targets``. Pickled, unpickled and piped, 256 KB cost about 0.2 ms here, near what
#: one shared storage costs; a larger block is shared.
BY_VALUE = 1 << 18
# The dtypes every OpenCV's split takes (OpenCV 4's depths), in the native byte order.
_SPLITTABLE = frozenset(
    np.dtype(name) for name in ("uint8", "int8", "uint16", "int16", "int32", "float32", "float64")
)
_CHANNELS = 128  # the most channels every OpenCV takes (CV_CN_MAX: 512 up to 5.0, 128 in 5.1)


def in_worker() -> bool:
    """Whether this process is a DataLoader worker."""
    return get_worker_info() is not None


def allocate(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """A new tensor: in shared memory inside a DataLoader worker, as ``default_collate``."""
    if not in_worker():
        return torch.empty(shape, dtype=dtype)
    storage = torch.UntypedStorage._new_shared(  # type: ignore[no-untyped-call]
        math.prod(shape) * dtype.itemsize
    )
    return torch.empty(0, dtype=dtype).set_(storage).view(shape)


def fill(out: torch.Tensor, stack: Stack) -> torch.Tensor:
    """Copy a stack's items into ``out`` (``stack.shape``, ``stack.dtype``), returned.

    The items share ``out``'s dtype but perhaps not its byte order: ``equiv`` casting
    swaps bytes (values unchanged) and allows nothing else.
    """
    view: np.ndarray | None = None
    for position, item in enumerate(stack.items):
        if isinstance(item, np.ndarray):
            if view is None:
                view = out.numpy()
            if not _split(view[position], item):
                np.copyto(view[position], item, casting="equiv")  # byte order only
        else:
            out[position].copy_(item)
    return out


def _split(planes: np.ndarray, item: np.ndarray) -> bool:
    """Copy a channels-first view of an ``HxWxC`` image into ``planes`` with ``cv2.split``.

    Numpy's strided copy of the transposed view costs about 8 times what OpenCV's split
    into the ``C`` planes does (each written once, contiguously). ``False`` where it does
    not apply, for the caller to copy: not such a view, a dtype or byte order OpenCV may
    not take, or OpenCV did not write into the planes themselves.
    """
    if item.ndim != 3 or not 2 <= item.shape[0] <= _CHANNELS or item.dtype not in _SPLITTABLE:
        return False
    image = item.transpose(1, 2, 0)
    if not (image.flags.c_contiguous and planes.flags.c_contiguous):
        return False  # (OpenCV refuses strided planes)
    targets = list(planes)
    written = cv2.split(image, targets)
    # OpenCV hands back the arrays it was given when it wrote into them
    return len(written) == len(targets) and all(
        a is b for a, b in zip(written, targets, strict=True)
    )


def assemble(columns: Columns, fields: Fields, stacked: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The collated batch: the stacked tensors, the per-box tensors, the other keys."""
    out: dict[str, Any] = dict(stacked)
    count = len(columns.labels)
    parts: list[tuple[str, tuple[int, ...], np.dtype[Any]]] = []
    if fields.targets:
        parts.append(("targets", (count, 6), np.dtype(np.float32)))
    parts += [
        ("batch_idx", (count,), columns.batch_idx.dtype),
        (fields.box_field, (count, 4), columns.boxes.dtype),
        (fields.label_field, (count,), columns.labels.dtype),
    ]
    epochs = _epochs(columns.others)
    if epochs is not None and "epoch" in (fields.box_field, fields.label_field):
        epochs = None  # the samples' own field of that name, never overwritten
    if epochs is not None:
        parts.append(("epoch", (len(epochs),), np.dtype(np.int64)))
    tensors = _block(parts)
    if fields.targets:
        targets = tensors["targets"].numpy()
        targets[:, 0] = columns.batch_idx
        targets[:, 1] = columns.labels  # exact: checked by read_batch
        targets[:, 2:] = columns.boxes
    tensors["batch_idx"].numpy()[:] = columns.batch_idx
    tensors[fields.box_field].numpy()[:] = columns.boxes
    tensors[fields.label_field].numpy()[:] = columns.labels
    epoch = None if epochs is None else tensors.pop("epoch")
    if epoch is not None:
        epoch.numpy()[:] = epochs
    out.update(tensors)
    out.update(columns.others)
    if epoch is not None:  # last, as before the block held it
        out["epoch"] = epoch
    return out


def _epochs(others: dict[str, list[Any]]) -> list[int] | None:
    """The int64 epochs of the samples' ``index`` values, when all are ``EpochIndex``.

    ``None`` when the samples have no ``index`` key, have an ``epoch`` key of their own, or
    an index carries no epoch: :class:`~rankaug.BatchAugment` then reads what it is given.
    """
    index = others.get("index")
    if index is None or "epoch" in others:
        return None
    if not all(isinstance(value, EpochIndex) for value in index):
        return None
    return [value.epoch for value in index]


def _block(parts: list[tuple[str, tuple[int, ...], np.dtype[Any]]]) -> dict[str, torch.Tensor]:
    """Tensors of the given shapes and dtypes, carved out of one block of memory.

    In a DataLoader worker the block is shared memory when it is larger than
    :data:`BY_VALUE`, else ordinary memory whose tensors pickle by value
    (:class:`ByValue`).
    """
    offsets = []
    size = 0
    for _, shape, dtype in parts:
        offsets.append(size)
        size += -(-math.prod(shape) * dtype.itemsize // _ALIGN) * _ALIGN
    size = max(size, _ALIGN)
    by_value = _by_value(size)
    storage = (
        torch.UntypedStorage._new_shared(size)  # type: ignore[no-untyped-call]
        if in_worker() and not by_value
        else torch.UntypedStorage(size)  # type: ignore[no-untyped-call]
    )
    out = {}
    for (name, shape, dtype), offset in zip(parts, offsets, strict=True):
        torch_dtype = torch.from_numpy(np.empty(0, dtype)).dtype
        tensor = torch.empty(0, dtype=torch_dtype).set_(
            storage, offset // dtype.itemsize, shape, _strides(shape)
        )
        out[name] = tensor.as_subclass(ByValue) if by_value else tensor
    return out


def _by_value(nbytes: int) -> bool:
    """Whether ``nbytes`` of small tensors leave by value: in a worker, up to :data:`BY_VALUE`."""
    return nbytes <= BY_VALUE and in_worker()


class ByValue(torch.Tensor):
    """A worker's small batch tensor, pickled by value: a plain tensor once unpickled.

    Its bytes go into the pickle (any dtype); torch functions on it return plain tensors
    (which a worker then shares as usual).
    """

    __torch_function__ = torch._C._disabled_torch_function_impl  # type: ignore[assignment]

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        plain = self.as_subclass(torch.Tensor)
        data = plain.contiguous().reshape(-1).view(torch.uint8).numpy()
        return (_from_bytes, (data, plain.dtype, tuple(plain.shape)))

    def __deepcopy__(self, memo: dict[int, Any]) -> ByValue:
        # torch's own needs new_empty() to give the subclass; a copy travels alike
        return self.as_subclass(torch.Tensor).clone().as_subclass(ByValue)


def _from_bytes(data: np.ndarray, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    if data.size == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.from_numpy(data).view(dtype).reshape(shape)


def by_value(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``tensors`` as :class:`ByValue` in a DataLoader worker, up to :data:`BY_VALUE` bytes.

    Unchanged in the main process, or when together they are larger.
    """
    if not _by_value(sum(t.nbytes for t in tensors.values())):
        return tensors
    return {key: tensor.as_subclass(ByValue) for key, tensor in tensors.items()}


def _strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))
