"""Box formats and the conversions between them, vectorised.

Every function works on float64 ``(N, 4)`` arrays without per-box Python loops (see
:mod:`rankaug.boxes` for the formats).

>>> import numpy as np
>>> to_xyxy(np.array([[0.5, 0.5, 0.5, 0.25]]), "yolo", (100, 200))
array([[ 50.  , 37.5, 150.  , 62.5]])
"""

from __future__ import annotations

import functools
from typing import Literal, cast

import numpy as np

from rankaug import checks

__all__ = [
    "BOX_FORMATS",
    "BoxFormat",
    "as_box_array",
    "check_box_format",
    "from_xyxy",
    "to_pixel_xyxy",
    "to_xyxy",
]

BoxFormat = Literal["pascal_voc", "coco", "yolo", "albumentations"]
"""The name of a box format; see the module docstring."""

BOX_FORMATS: tuple[BoxFormat, ...] = ("pascal_voc", "coco", "yolo", "albumentations")
"""All supported box formats, in a fixed order."""

# For membership tests that mypy does not narrow (fmt arguments are checked at run time).
_FORMAT_NAMES: frozenset[str] = frozenset(BOX_FORMATS)


def check_box_format(value: object, *, name: str = "box_format") -> BoxFormat:
    """Return ``value`` as a :data:`BoxFormat`, or raise a clear error.

    Args:
        value: The candidate format name.
        name: The argument name used in error messages.

    Returns:
        ``value`` itself, typed as a :data:`BoxFormat`.

    Raises:
        TypeError: If ``value`` is not a string.
        ValueError: If ``value`` is not one of :data:`BOX_FORMATS`.

    >>> check_box_format("coco")
    'coco'
    >>> check_box_format("xyxy", name="fmt")
    Traceback (most recent call last):
    ...
    ValueError: fmt must be one of 'pascal_voc', 'coco', 'yolo', 'albumentations', got 'xyxy'
    """
    return checks.choice(value, name, BOX_FORMATS)


def as_box_array(boxes: object, *, name: str = "bboxes") -> np.ndarray:
    """Convert boxes to a float64 array of shape ``(N, 4)``.

    Accepts a list or tuple of 4-number sequences, a numpy array, a torch tensor
    (moved to the CPU and detached; torch itself is never imported here) or any
    other object that implements ``__array__``. Empty input gives shape ``(0, 4)``.
    A float64 ``(N, 4)`` numpy array is returned as is, without a copy.

    Args:
        boxes: The boxes, one row of 4 numbers per box, in any box format.
        name: The argument name used in error messages.

    Returns:
        A float64 array of shape ``(N, 4)``.

    Raises:
        TypeError: If ``boxes`` is not array-like, is a masked array, or holds
            non-numbers (booleans, complex numbers, strings, objects).
        ValueError: If the array does not have shape ``(N, 4)``, for example
            albumentations-style boxes with a label as a fifth column.

    >>> as_box_array([(1, 2, 3, 4)])
    array([[1., 2., 3., 4.]])
    >>> as_box_array([]).shape
    (0, 4)
    >>> as_box_array([[1, 2, 3, 4, 0]])
    Traceback (most recent call last):
    ...
    ValueError: bboxes must have shape (N, 4), got shape (1, 5): ...
    """
    if type(boxes) is np.ndarray:
        array = boxes
    elif isinstance(boxes, (list, tuple)):
        if len(boxes) == 0:
            return np.zeros((0, 4), dtype=np.float64)
        try:
            array = np.asarray(boxes)
        except (ValueError, TypeError) as error:
            raise ValueError(
                f"{name} must be a sequence of boxes of 4 numbers each; numpy could not "
                f"make an array of it ({error})"
            ) from None
    elif type(boxes).__module__.startswith("torch") and hasattr(boxes, "numpy"):
        array = _tensor_to_numpy(boxes, name)
    elif isinstance(boxes, np.ma.MaskedArray):
        raise TypeError(f"{name} must not be a masked array (its mask would be dropped)")
    elif isinstance(boxes, np.ndarray) or hasattr(boxes, "__array__"):
        array = np.asarray(boxes)
    else:
        raise TypeError(
            f"{name} must be a list or tuple of 4-number boxes, a numpy array or a torch "
            f"tensor; got {type(boxes).__name__}"
        )
    if array.size == 0 and (array.ndim == 1 or array.shape[1:] == (4,)):
        return np.zeros((0, 4), dtype=np.float64)  # no boxes, whatever the dtype
    if array.dtype.kind not in "fiu":
        raise TypeError(
            f"{name} must hold real numbers, got an array of dtype {array.dtype} "
            f"(kind {array.dtype.kind!r})"
        )
    if array.ndim != 2 or array.shape[1] != 4:
        raise ValueError(
            f"{name} must have shape (N, 4), got shape {tuple(array.shape)}: one row of 4 "
            "coordinates per box. Labels and other per-box values belong in a separate "
            "per-box field (for example 'labels'), not in extra columns"
        )
    if array.dtype != np.float64:
        array = array.astype(np.float64)
    return array


def _tensor_to_numpy(tensor: object, name: str) -> np.ndarray:
    """Convert a torch tensor to a float64 numpy array without importing torch."""
    dtype = getattr(tensor, "dtype", None)
    if str(dtype) == "torch.bool" or getattr(dtype, "is_complex", False):
        raise TypeError(f"{name} must hold real numbers, got a tensor of dtype {dtype}")
    detached = tensor.detach().cpu()  # type: ignore[attr-defined]
    return cast(np.ndarray, detached.double().numpy())


def to_xyxy(boxes: np.ndarray, fmt: BoxFormat, image_hw: tuple[int, int]) -> np.ndarray:
    """Convert boxes from ``fmt`` to absolute pixel ``(x_min, y_min, x_max, y_max)``.

    Args:
        boxes: Array of shape ``(N, 4)`` in format ``fmt``.
        fmt: The format of ``boxes``; one of :data:`BOX_FORMATS`.
        image_hw: ``(height, width)`` of the image, used by normalised formats.

    Returns:
        A new float64 array of shape ``(N, 4)``.

    Raises:
        TypeError: If ``image_hw`` is not a pair of integers.
        ValueError: If ``fmt`` is unknown, ``boxes`` is not ``(N, 4)`` or
            ``image_hw`` holds a value below 1.

    >>> import numpy as np
    >>> to_xyxy(np.array([[10.0, 20.0, 30.0, 40.0]]), "coco", (100, 100))
    array([[10., 20., 40., 60.]])
    """
    array = _as_n4(boxes, "boxes")
    height, width = _check_hw(image_hw)
    if fmt not in _FORMAT_NAMES:
        check_box_format(fmt, name="fmt")
    if fmt == "pascal_voc":
        return array.copy()
    if fmt == "coco":
        out = array.copy()
        out[:, 2:] += array[:, :2]
        return out
    if fmt == "yolo":
        return _centres_to_corners(array, _scale(height, width))
    # fmt == "albumentations"
    scaled: np.ndarray = array * _scale(height, width)
    return scaled


def to_pixel_xyxy(boxes: np.ndarray, fmt: BoxFormat, sizes: np.ndarray) -> np.ndarray:
    """Convert the boxes of several images to pixel xyxy at once.

    The same conversion as :func:`to_xyxy`, with each box's own image size: what a
    mosaic needs to convert all its tiles' boxes in one pass.

    Args:
        boxes: Float64 array of shape ``(N, 4)`` in format ``fmt``; for ``"pascal_voc"``
            it is returned as it is, for ``"coco"`` it is converted in place.
        fmt: The format of ``boxes``; one of :data:`BOX_FORMATS`.
        sizes: Array of shape ``(N, 2)``: the ``(width, height)`` of each box's image.

    Returns:
        Float64 pixel xyxy boxes of shape ``(N, 4)``.

    >>> import numpy as np
    >>> to_pixel_xyxy(np.array([[0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 1.0, 1.0]]), "yolo",
    ...               np.array([[10, 10], [20, 40]]))
    array([[ 2.5,  2.5,  7.5,  7.5],
           [ 0. ,  0. , 20. , 40. ]])
    """
    if fmt == "pascal_voc":
        return boxes
    if fmt == "coco":
        boxes[:, 2:] += boxes[:, :2]
        return boxes
    scale = np.tile(sizes, 2)
    if fmt == "albumentations":
        scaled: np.ndarray = boxes * scale
        return scaled
    check_box_format(fmt, name="fmt")
    return _centres_to_corners(boxes, scale)


def _centres_to_corners(boxes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Normalised ``(cx, cy, w, h)`` boxes as pixel corners, times ``scale`` (w, h, w, h)."""
    out = np.empty_like(boxes)
    halves = boxes[:, 2:] * 0.5
    np.subtract(boxes[:, :2], halves, out=out[:, :2])
    np.add(boxes[:, :2], halves, out=out[:, 2:])
    out *= scale
    return out


def from_xyxy(xyxy: np.ndarray, fmt: BoxFormat, image_hw: tuple[int, int]) -> np.ndarray:
    """Convert absolute pixel ``(x_min, y_min, x_max, y_max)`` boxes to ``fmt``.

    The inverse of :func:`to_xyxy`.

    Args:
        xyxy: Array of shape ``(N, 4)`` in absolute pixel xyxy.
        fmt: The target format; one of :data:`BOX_FORMATS`.
        image_hw: ``(height, width)`` of the image, used by normalised formats.

    Returns:
        A new float64 array of shape ``(N, 4)``.

    Raises:
        TypeError: If ``image_hw`` is not a pair of integers.
        ValueError: If ``fmt`` is unknown, ``xyxy`` is not ``(N, 4)`` or
            ``image_hw`` holds a value below 1.

    >>> import numpy as np
    >>> from_xyxy(np.array([[0.0, 0.0, 50.0, 100.0]]), "yolo", (100, 100))
    array([[0.25, 0.5 , 0.5 , 1.  ]])
    """
    array = _as_n4(xyxy, "xyxy")
    height, width = _check_hw(image_hw)
    if fmt not in _FORMAT_NAMES:
        check_box_format(fmt, name="fmt")
    if fmt == "pascal_voc":
        return array.copy()
    if fmt == "coco":
        out = array.copy()
        out[:, 2:] -= array[:, :2]
        return out
    if fmt == "yolo":
        out = np.empty_like(array)
        np.add(array[:, :2], array[:, 2:], out=out[:, :2])
        out[:, :2] *= 0.5
        np.subtract(array[:, 2:], array[:, :2], out=out[:, 2:])
        out /= _scale(height, width)
        return out
    # fmt == "albumentations"
    normalised: np.ndarray = array / _scale(height, width)
    return normalised


def _as_n4(boxes: np.ndarray, name: str) -> np.ndarray:
    """Return ``boxes`` as float64 ``(N, 4)`` cheaply, or raise naming ``name``."""
    array = boxes if type(boxes) is np.ndarray else np.asarray(boxes)
    if array.ndim != 2 or array.shape[1] != 4:
        raise ValueError(f"{name} must have shape (N, 4), got shape {tuple(array.shape)}")
    if array.dtype != np.float64:
        array = array.astype(np.float64)
    return array


def _check_hw(image_hw: tuple[int, int]) -> tuple[int, int]:
    """Return ``(height, width)`` after checking both are positive integers."""
    if not isinstance(image_hw, (tuple, list)) or len(image_hw) != 2:
        raise TypeError(f"image_hw must be a (height, width) pair of integers, got {image_hw!r}")
    height, width = image_hw
    if (
        isinstance(height, bool)
        or isinstance(width, bool)
        or not isinstance(height, (int, np.integer))
        or not isinstance(width, (int, np.integer))
    ):
        raise TypeError(f"image_hw must be a (height, width) pair of integers, got {image_hw!r}")
    if height <= 0 or width <= 0:
        raise ValueError(f"image_hw must hold positive integers, got {image_hw!r}")
    return int(height), int(width)


@functools.lru_cache(maxsize=1024)
def _scale(height: int, width: int) -> np.ndarray:
    """Return the read-only row ``(width, height, width, height)``, cached per size."""
    scale = np.array([width, height, width, height], dtype=np.float64)
    scale.flags.writeable = False
    return scale
