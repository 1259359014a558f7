"""Putting transformed values back into the type and dtype they came in."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import torch

from rankaug.samples.images import _is_pil, image_hw
from rankaug.samples.integral import check_holds, integral

__all__ = [
    "holds_wrapped",
    "is_wrapped",
    "made_tensor",
    "pil_like",
    "restore_like",
    "rewrap",
    "rewrap_values",
]


def restore_like(new: Any, old: Any, name: str | None = None) -> Any:
    """Give ``new`` the container type and dtype of ``old``.

    Tensors give tensors, arrays give arrays (a flat result gets the trailing shape
    back when its size allows: ``(N, 1)`` labels, which albumentations flattens to
    ``(N,)``, stay ``(N, 1)``, and empty ``(0, 4)`` boxes stay ``(0, 4)``), lists give
    lists, tuples give tuples (rows too: a tuple of tuples stays one; numpy scalars stay
    numpy scalars),
    each with the dtype of ``old`` (for lists and tuples, of the numbers in them): an
    int64 label stays int64, also when a transform dropped every box and returned an
    empty float array. Only an integer ``old`` with fractional ``new`` values stays
    floating point (``float64``), rather than being truncated, and strings longer than
    ``old``'s keep their wider dtype (of ``old``'s kind), rather than being cut. An empty
    ``old`` of dtype ``object`` has no dtype to give: values come back in their own
    (an empty result stays ``object``). Integer values that ``old``'s integer dtype
    cannot hold (``int8`` coordinates a transform moved to 200) are refused, never
    wrapped around (to -56).

    A list (or tuple) of arrays or tensors, such as instance masks given one array per
    instance, gives a list of the same: each item restored like ``old``'s first (its
    type and dtype). An empty list given instances of 3 or more dimensions (``(N, H,
    W)`` masks) gives a list of ``N`` arrays.

    Args:
        new: The transformed value.
        old: The original value.
        name: Its key, for the error (``None``: "a value").

    Returns:
        ``new`` in the type of ``old``.

    Raises:
        ValueError: If ``old``'s integer dtype cannot hold ``new``'s values.

    >>> restore_like(np.zeros((0,)), np.zeros((3, 4), np.float32)).shape
    (0, 4)
    >>> restore_like(np.array([1.0, 2.0, 3.0]), torch.zeros(2, 1)).shape
    torch.Size([3, 1])
    >>> restore_like(np.array([[1.0, 2.0, 3.0, 4.0]]), [[0, 0, 1, 1]])
    [[1, 2, 3, 4]]
    >>> restore_like(np.array([[1.5, 2.0, 3.0, 4.0]]), [[0, 0, 1, 1]])
    [[1.5, 2.0, 3.0, 4.0]]
    >>> restore_like([1.0, 2.0], [3, 4])
    [1, 2]
    >>> restore_like(np.array([[1.0, 2.0, 3.0, 4.0]]), ((0, 0, 1, 1),))
    ((1, 2, 3, 4),)
    >>> type(restore_like(np.array([2.0]), [np.int32(7)])[0]).__name__
    'int32'
    >>> restore_like([np.ones((3, 2)), np.zeros((1, 2))], [[[0, 0], [1, 1]]])
    [[[1, 1], [1, 1], [1, 1]], [[0, 0]]]
    >>> restore_like(np.zeros((0,)), torch.tensor([3, 4])).dtype
    torch.int64
    >>> restore_like(np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([], dtype=object)).dtype
    dtype('float64')
    >>> restore_like(np.array(["cat", "elephant"]), np.array(["dog"])).tolist()
    ['cat', 'elephant']
    >>> masks = restore_like(np.ones((2, 3, 4)), [torch.zeros(3, 4, dtype=torch.uint8)])
    >>> type(masks).__name__, len(masks), masks[0].dtype
    ('list', 2, torch.uint8)
    >>> restore_like(np.array([[200.0, 10.0]]), np.zeros((1, 2), np.int8), "keypoints")
    Traceback (most recent call last):
    ...
    ValueError: 'keypoints' came in as int8, which holds -128 to 127, but the transform ...
    """
    if type(new) is np.ndarray and type(old) is np.ndarray and (new.ndim != 1 or old.ndim <= 1):
        if new.dtype == old.dtype:
            return new  # already right: the common case, kept cheap
        if old.dtype.kind == "f":  # into floats (float64 boxes back to float32): a cast
            return new.astype(old.dtype)  # (a new array: the dtypes differ)
    if made_tensor(new, old):
        return new
    if _is_pil(old):
        return pil_like(new, old)
    if isinstance(old, torch.Tensor):
        array = _restore_array(np.asarray(new), old.shape, None)
        if old.dtype.is_floating_point or old.dtype.is_complex:
            return torch.as_tensor(array, dtype=old.dtype)
        if integral(array, old):  # rounded: float32 round-off is no fraction
            array = np.round(array) if array.dtype.kind == "f" else array
            if old.dtype != torch.bool:
                check_holds(array, np.dtype(str(old.dtype).removeprefix("torch.")), name)
            return torch.as_tensor(array, dtype=old.dtype)
        return torch.as_tensor(array)  # fractional values for an integer tensor
    if isinstance(old, np.ndarray):
        array = np.asarray(new)
        if old.dtype.kind == "O" and not old.size and array.size:  # no dtype to give
            return array  # (Hugging Face's numpy format gives a box-less row's bbox so)
        return _restore_array(array, old.shape, old.dtype, old, name)
    if isinstance(old, list | tuple):
        if old and (isinstance(old[0], np.ndarray | torch.Tensor) or _is_pil(old[0])):
            return _restore_items(new, old, name)  # instance masks as a list of arrays, say
        if (  # rows of rows (polygons as lists of points) back as arrays of other lengths
            old
            and type(old[0]) in (list, tuple)
            and isinstance(new, list | tuple)
            and new
            and isinstance(new[0], np.ndarray | torch.Tensor)
        ):
            return _restore_items(new, old, name)
        if not old and isinstance(new, np.ndarray | torch.Tensor) and new.ndim >= 3:
            items = list(new)  # instances, (N, H, W) masks, into []: a list of N arrays
            return items if isinstance(old, list) else tuple(items)
        dtype = _list_dtype(old) if old else None
        scalars = bool(old) and isinstance(old[0], np.generic)  # [np.int64(3), ...]
        if (
            not isinstance(new, np.ndarray)
            and dtype is not None
            and dtype.kind in "biu" + ("f" if scalars else "")
        ):  # a list back from a transform (albumentations gives label lists as floats)
            new = _as_array(new)
        if isinstance(new, np.ndarray):
            array = _restore_array(new, (), dtype, old, name)
            if scalars and array.ndim == 1 and array.dtype == old[0].dtype:
                items = list(array)  # numpy scalars of their dtype, as they came
            else:
                items = array.tolist()
        else:
            items = list(new)
        row = type(old[0]) if old and type(old[0]) in (list, tuple) else None
        if row is not None:  # rows of boxes or points in their container: tuples stay
            items = [
                row(i) if type(i) in (list, tuple) and type(i) is not row else i for i in items
            ]
        return items if isinstance(old, list) else tuple(items)
    return new


def pil_like(new: Any, old: Any) -> Any:
    """``new`` (an ``HxW[xC]`` array) as a PIL image of ``old``'s mode and palette.

    A mask given as a PIL image (a palette ``P`` one, as segmentation datasets store
    them) comes back one, its values in its dtype (a palette image's indices): a ``P``
    image of ``(4, 3)`` with ``old``'s palette for ``np.ones((3, 4))``, say (pillow is
    no dependency: tests/samples/test_restore.py shows it).
    """
    from PIL import Image

    array = np.asarray(new)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    dtype = np.asarray(old.crop((0, 0, 1, 1))).dtype  # its mode's (not the image read whole)
    made = Image.fromarray(array.astype(dtype, copy=False))
    if old.mode == "P":
        made = made.convert("L") if made.mode != "L" else made
        made.putpalette(old.getpalette() or [])  # L + palette -> P, its colours
    elif made.mode != old.mode:
        made = made.convert(old.mode)
    return made


def made_tensor(new: Any, old: Any) -> bool:
    """Whether the transform made ``new`` a tensor of a value that held none.

    albumentations' ``ToTensorV2`` turns the numpy image, ``mask`` and ``masks`` it gets
    into tensors: the pipeline chose tensors, so the adapters give them back as they are,
    rather than undo that choice (a PIL mask back from it would not even collate). A
    value that held tensors (a tensor, or a list of them) is restored as before.

    >>> made_tensor(torch.zeros(2, 2), np.zeros((2, 2))), made_tensor(torch.zeros(2), [1, 2])
    (True, True)
    >>> made_tensor(torch.zeros(2, 2), [torch.zeros(2)]), made_tensor(np.zeros(2), [1, 2])
    (False, False)
    """
    if not isinstance(new, torch.Tensor) or isinstance(old, torch.Tensor):
        return False
    return not (isinstance(old, list | tuple) and old and isinstance(old[0], torch.Tensor))


def _restore_items(new: Any, old: list[Any] | tuple[Any, ...], name: str | None) -> Any:
    """``new``'s items, each restored like ``old``'s first, in ``old``'s container."""
    arrays = isinstance(new, np.ndarray | torch.Tensor)
    if not (isinstance(new, list | tuple) or (arrays and new.ndim)):
        return new  # nothing to go through item by item
    model = old[0]
    items = [restore_like(item, model, name) for item in new]
    return items if isinstance(old, list) else tuple(items)


def _as_array(values: Any) -> Any:
    """``values`` as a numeric array, or as they are when they are not numbers."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):  # ragged
        return values
    return array if array.dtype.kind in "biuf" else values


def _list_dtype(values: list[Any] | tuple[Any, ...]) -> np.dtype[Any] | None:
    """The numpy dtype of a list's numbers, or ``None`` when it holds something else."""
    try:
        dtype = np.asarray(values).dtype
    except (TypeError, ValueError):  # ragged lists
        return None
    return dtype if dtype.kind in "biuf" else None


def _restore_array(
    array: np.ndarray,
    old_shape: Any,
    old_dtype: np.dtype[Any] | None,
    old: Any = None,
    name: str | None = None,
) -> np.ndarray:
    if array.ndim == 1 and len(old_shape) > 1:  # flattened: (N, 1) labels as (N,), [] boxes
        trailing = tuple(old_shape)[1:]
        size = math.prod(trailing)
        if not array.size or (size and array.size % size == 0):
            array = array.reshape((array.size // size if size else 0, *trailing))
    if old_dtype is None or array.dtype == old_dtype:
        return array
    if old_dtype.kind in "biu" and array.dtype.kind == "f":
        if not integral(array, old):
            return array  # do not truncate fractional values into an integer dtype
        array = np.round(array)  # 44.9999988 (round-off) is 45
    if old_dtype.kind == "b" and array.size and not np.isin(array, (0, 1)).all():
        return array  # nor turn other numbers into True
    kind = old_dtype.kind
    if kind in "US" and array.dtype.kind == kind and array.itemsize > old_dtype.itemsize:
        return array  # nor cut longer strings to the old width
    if kind in "iu" and array.dtype.kind in "iuf":
        check_holds(array, old_dtype, name)  # nor wrap 200 around to -56 in int8
    return array.astype(old_dtype, copy=False)


def _tv_tensors() -> Any:
    """The ``torchvision.tv_tensors`` module when the user imported it, else ``None``.

    Never imported here: a sample can only hold tv_tensors once torchvision is loaded.
    """
    return sys.modules.get("torchvision.tv_tensors")


_TV_FORMATS: Final = {"pascal_voc": "XYXY", "coco": "XYWH"}  # pixel formats torchvision has


def check_tv_boxes(
    value: object,
    box_format: str | None,
    name: str,
    given_as: str = "box_format",
    hw: tuple[int, ...] | None = None,
) -> None:
    """Refuse a torchvision ``BoundingBoxes`` whose ``format`` is not ``box_format``'s.

    And a ``BoundingBoxes`` or ``KeyPoints`` whose ``canvas_size`` is not the image's
    ``hw``: its coordinates are of another image (one resized without its boxes), and
    would be moved as this one's pixels.

    Args:
        value: A target value (only a ``BoundingBoxes``, with a ``format``, is checked).
        box_format: The box format the wrapper reads, or ``None`` (not known: not checked).
        name: The value's key, for the message.
        given_as: Where ``box_format`` was given, for the message: ``"box_format"`` (a
            wrapper's ``Targets``), or ``"A.BboxParams format"`` (a transform's).
        hw: The image's height and width, or ``None`` (``canvas_size`` not checked).

    Raises:
        ValueError: If the formats differ (the boxes would be read in the wrong format),
            or the canvas is not the image.
    """
    canvas = getattr(value, "canvas_size", None)
    if hw is not None and canvas is not None and tuple(canvas) != tuple(hw):
        raise ValueError(
            f"{name} is a torchvision {type(value).__name__} with canvas_size="
            f"{tuple(canvas)}, but the image is {tuple(hw)} (height, width): its coordinates "
            "are of another image, and would be moved as this one's pixels; resize them with "
            "the image (a torchvision v2 transform given both does), or give the canvas_size "
            "of the image they are on"
        )
    tv_format = getattr(getattr(value, "format", None), "name", None)
    if box_format is None or tv_format is None or not is_wrapped(value):
        return
    expected = _TV_FORMATS.get(box_format)
    if tv_format == expected:
        return
    where = " (Targets(box_format=...))" if given_as == "box_format" else ""
    fixes = [
        f"pass {given_as}={own!r}{where}" for own, tv in _TV_FORMATS.items() if tv == tv_format
    ]
    if expected is not None:
        fixes.append(
            "convert them first with torchvision.transforms.v2."
            f"ConvertBoundingBoxFormat({expected!r})"
        )
    reads = expected or "normalised, which torchvision has no format for"
    raise ValueError(
        f"{name} is a torchvision BoundingBoxes in format {tv_format}, but the wrapper reads "
        f"{given_as}={box_format!r} boxes ({reads}): " + ", or ".join(fixes)
    )


def is_wrapped(value: object) -> bool:
    """Whether ``value`` is one of torchvision's tv_tensors, to be wrapped again.

    That is a ``torchvision.tv_tensors.TVTensor`` (torchvision 0.16 and later, when
    torchvision is imported), or a tensor subclass with a ``wrap_like`` classmethod
    (torchvision 0.15's datapoints, and look-alikes).
    """
    if not isinstance(value, torch.Tensor) or type(value) is torch.Tensor:
        return False
    tv_tensors = _tv_tensors()
    if tv_tensors is not None and isinstance(value, tv_tensors.TVTensor):
        return True
    return callable(getattr(type(value), "wrap_like", None))


def holds_wrapped(value: object) -> bool:
    """Whether ``value`` is a tv_tensor, or a list or tuple of them (instance masks).

    A list is judged by its first item, the model :func:`rewrap_values` wraps its items
    like.
    """
    if isinstance(value, list | tuple):
        return bool(value) and is_wrapped(value[0])
    return is_wrapped(value)


def rewrap(value: Any, like: Any, canvas_size: tuple[int, ...] | None) -> Any:
    """``value`` in the tv_tensor class of ``like`` (``BoundingBoxes``, ``Mask``, ``Image``).

    ``like``'s metadata (a box format, a clamping mode) is kept, by
    ``tv_tensors.wrap(value, like=like)`` (or ``wrap_like``); a class with a
    ``canvas_size`` (``BoundingBoxes``, ``KeyPoints``) gets ``canvas_size``, the output's
    ``(height, width)``, when it is given.
    """
    tensor = torch.as_tensor(value)
    metadata: dict[str, Any] = {}
    if canvas_size is not None and hasattr(like, "canvas_size"):
        metadata["canvas_size"] = canvas_size
    tv_tensors = _tv_tensors()
    if tv_tensors is not None and isinstance(like, tv_tensors.TVTensor):
        return tv_tensors.wrap(tensor, like=like, **metadata)
    return type(like).wrap_like(like, tensor, **metadata)


def rewrap_values(
    values: dict[str, Any], originals: Mapping[str, Any], data: Mapping[str, Any]
) -> None:
    """Give each value whose original is a tv_tensor its class back, in place.

    The one rule of the adapters: ``values[name]`` (restored like ``originals[name]``)
    is wrapped again like it when :func:`is_wrapped` says so, and boxes and keypoints get
    the canvas of ``data``'s output image (its ``(H, W)``, :func:`image_hw`). A list
    (or tuple) of tv_tensors, such as instance masks (``Mask``, one per object), gives its
    items back each wrapped like the original's first item (its class and metadata), in
    their container (:func:`restore_like` restores each item like it too).

    Args:
        values: The restored outputs by name, changed in place.
        originals: The values they came from, by the same names.
        data: The transform's output, with its ``image``.
    """
    image = data.get("image")
    hw = None if image is None else image_hw(image)
    for key, value in values.items():
        old = originals.get(key)
        if is_wrapped(old):
            values[key] = rewrap(value, old, hw)
        elif (
            isinstance(old, list | tuple) and isinstance(value, list | tuple) and holds_wrapped(old)
        ):
            values[key] = type(value)(rewrap(item, old[0], hw) for item in value)  # masks, say
