"""Vectorised bounding-box conversion, validation, clipping and filtering.

Everything here works on float64 numpy arrays of shape ``(N, 4)`` and is built for
a hot path (a mosaic calls it once per tile): no per-box Python loops, and empty
arrays go through cheaply. Labels and other per-box fields never live in the box
array; they travel in separate arrays of length ``N``.

Box formats (the names albumentations uses):

* ``"pascal_voc"``: ``(x_min, y_min, x_max, y_max)`` in pixels.
* ``"coco"``: ``(x_min, y_min, width, height)`` in pixels.
* ``"yolo"``: ``(x_center, y_center, width, height)`` divided by the image size.
* ``"albumentations"``: ``(x_min, y_min, x_max, y_max)`` divided by the image size.

Pixel coordinates are continuous: pixel column ``c`` covers ``[c, c + 1)``, so a
box around the whole ``h x w`` image is ``(0, 0, w, h)``.

>>> import numpy as np
>>> yolo = np.array([[0.5, 0.5, 0.5, 0.25]])
>>> to_xyxy(yolo, "yolo", (100, 200))
array([[ 50.  , 37.5, 150.  , 62.5]])
>>> from_xyxy(np.array([[50.0, 37.5, 150.0, 62.5]]), "coco", (100, 200))
array([[ 50. ,  37.5, 100. ,  25. ]])
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
    "box_area",
    "check_box_format",
    "check_filter_args",
    "clip_xyxy",
    "from_xyxy",
    "keep_mask",
    "to_pixel_xyxy",
    "to_xyxy",
    "validate_xyxy",
]

BoxFormat = Literal["pascal_voc", "coco", "yolo", "albumentations"]
"""The name of a box format; see the module docstring."""

BOX_FORMATS: tuple[BoxFormat, ...] = ("pascal_voc", "coco", "yolo", "albumentations")
"""All supported box formats, in a fixed order."""

# Boxes that overshoot the image by at most this many pixels are float rounding
# (for example from a normalised format): validate_xyxy clips them even when
# clip=False instead of refusing them.
_EDGE_TOLERANCE_PX = 1e-6

# For membership tests that mypy does not narrow (fmt arguments are checked at run time).
_FORMAT_NAMES: frozenset[str] = frozenset(BOX_FORMATS)


def check_box_format(value: object, *, name: str = "box_format") -> BoxFormat:
    """Return ``value`` as a :data:`BoxFormat`, or raise a clear error.

    Args:
        value: The candidate format name.
        name: The argument name used in error messages. Defaults to ``"box_format"``.

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
        name: The argument name used in error messages. Defaults to ``"bboxes"``.

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
    if array.dtype.kind not in "fiu":
        raise TypeError(
            f"{name} must hold real numbers, got an array of dtype {array.dtype} "
            f"(kind {array.dtype.kind!r})"
        )
    if array.ndim != 2 or array.shape[1] != 4:
        if array.size == 0 and array.ndim == 1:
            return np.zeros((0, 4), dtype=np.float64)
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
        out = np.empty_like(array)
        halves = array[:, 2:] * 0.5
        np.subtract(array[:, :2], halves, out=out[:, :2])
        np.add(array[:, :2], halves, out=out[:, 2:])
        out *= _scale(height, width)
        return out
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


def validate_xyxy(
    xyxy: np.ndarray,
    image_hw: tuple[int, int],
    *,
    name: str = "bboxes",
    clip: bool = True,
) -> np.ndarray:
    """Check pixel xyxy boxes against an image and clip the ones that stick out.

    Zero-width and zero-height boxes are allowed here; filter them later with
    :func:`keep_mask`. Boxes that overshoot the image by at most 1e-6 pixel (float
    rounding, for example after converting from a normalised format) are clipped
    even when ``clip`` is False.

    Args:
        xyxy: Array of shape ``(N, 4)`` in absolute pixel xyxy.
        image_hw: ``(height, width)`` of the image.
        name: The name of the boxes, used in error messages. Defaults to ``"bboxes"``.
        clip: If True, clip boxes that are partly outside the image; if False,
            refuse them. Defaults to ``True``.

    Returns:
        Float64 boxes of shape ``(N, 4)``: ``xyxy`` itself when nothing needed
        clipping (converted to float64 if necessary), else a clipped copy.

    Raises:
        TypeError: If ``image_hw`` is not a pair of integers.
        ValueError: If a box holds NaN or infinity, has ``x_max < x_min`` or
            ``y_max < y_min``, lies entirely outside the image (touching the border
            from outside counts as outside), or, with ``clip=False``, lies partly
            outside the image. The message names ``name``, the row index and the row.

    >>> import numpy as np
    >>> validate_xyxy(np.array([[-5.0, 10.0, 50.0, 120.0]]), (100, 100))
    array([[  0.,  10.,  50., 100.]])
    >>> validate_xyxy(np.array([[0.0, 0.0, 5.0, 5.0], [30.0, 0.0, 20.0, 5.0]]), (100, 100))
    Traceback (most recent call last):
    ...
    ValueError: bboxes[1] = [30.0, 0.0, 20.0, 5.0] has x_max < x_min or y_max < y_min; ...
    """
    array = _as_n4(xyxy, name)
    height, width = _check_hw(image_hw)
    if array.shape[0] == 0:
        return array
    if _all_inside(array, width, height):
        return array
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        _raise_row(array, name, ~finite, "contains NaN or infinity")
    x0, y0, x1, y1 = array[:, 0], array[:, 1], array[:, 2], array[:, 3]
    inverted = (x1 < x0) | (y1 < y0)
    if inverted.any():
        _raise_row(array, name, inverted, "has x_max < x_min or y_max < y_min")
    outside = (x1 <= 0.0) | (y1 <= 0.0) | (x0 >= width) | (y0 >= height)
    if outside.any():
        _raise_row(
            array,
            name,
            outside,
            f"lies entirely outside the {height}x{width} (height x width) image",
        )
    partial = (x0 < 0.0) | (y0 < 0.0) | (x1 > width) | (y1 > height)
    if not partial.any():
        return array
    if not clip:
        tol = _EDGE_TOLERANCE_PX
        beyond = (x0 < -tol) | (y0 < -tol) | (x1 > width + tol) | (y1 > height + tol)
        if beyond.any():
            _raise_row(
                array,
                name,
                beyond,
                f"lies partly outside the {height}x{width} (height x width) image and clip=False",
            )
    return clip_xyxy(array, 0.0, 0.0, float(width), float(height))


def box_area(xyxy: np.ndarray) -> np.ndarray:
    """Return the area of each xyxy box; negative extents count as 0.

    Args:
        xyxy: Array of shape ``(N, 4)`` in xyxy (pixel or normalised).

    Returns:
        A float64 array of shape ``(N,)``.

    >>> import numpy as np
    >>> box_area(np.array([[0.0, 0.0, 2.0, 3.0], [5.0, 5.0, 4.0, 9.0]]))
    array([6., 0.])
    """
    array = _as_n4(xyxy, "xyxy")
    widths = np.maximum(array[:, 2] - array[:, 0], 0.0)
    heights = np.maximum(array[:, 3] - array[:, 1], 0.0)
    return cast(np.ndarray, widths * heights)


def clip_xyxy(xyxy: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """Clip xyxy boxes to the window ``[x0, x1] x [y0, y1]``, returning a new array.

    Boxes outside the window collapse to zero width or height on its border.

    Args:
        xyxy: Array of shape ``(N, 4)`` in xyxy.
        x0: Left edge of the window.
        y0: Top edge of the window.
        x1: Right edge of the window.
        y1: Bottom edge of the window.

    Returns:
        A new float64 array of shape ``(N, 4)``.

    Raises:
        ValueError: If the window is inverted (``x1 < x0`` or ``y1 < y0``) or NaN.

    >>> import numpy as np
    >>> clip_xyxy(np.array([[-5.0, 2.0, 15.0, 8.0]]), 0.0, 0.0, 10.0, 10.0)
    array([[ 0.,  2., 10.,  8.]])
    """
    if not (x0 <= x1 and y0 <= y1):
        raise ValueError(
            f"clip window must have x0 <= x1 and y0 <= y1; got x0={x0!r}, y0={y0!r}, "
            f"x1={x1!r}, y1={y1!r}"
        )
    array = _as_n4(xyxy, "xyxy")
    low = np.array([x0, y0, x0, y0], dtype=np.float64)
    high = np.array([x1, y1, x1, y1], dtype=np.float64)
    clipped: np.ndarray = np.minimum(np.maximum(array, low), high)
    return clipped


def keep_mask(
    clipped: np.ndarray,
    full_area: np.ndarray,
    *,
    min_area: float = 0.0,
    min_visibility: float = 0.0,
    min_width: float = 0.0,
    min_height: float = 0.0,
    tolerance: float = 0.0,
) -> np.ndarray:
    """Decide which clipped boxes to keep.

    A box is kept where its clipped width and height exceed ``tolerance`` and its
    clipped area is positive, its
    clipped area is at least ``min_area``, the fraction ``area / full_area`` is at
    least ``min_visibility``, its width is at least ``min_width`` and its height at
    least ``min_height``. A box whose ``full_area`` is 0 is dropped. The arguments
    are not checked here (this runs per tile); check them once with
    :func:`check_filter_args`.

    Args:
        clipped: Array of shape ``(N, 4)``, xyxy boxes after clipping.
        full_area: Array of shape ``(N,)``, each box's area before any cropping,
            in the same units as ``clipped``.
        min_area: Smallest kept clipped area. Defaults to ``0.0``.
        min_visibility: Smallest kept fraction of the full area, in ``[0, 1]``.
            Defaults to ``0.0``.
        min_width: Smallest kept clipped width. Defaults to ``0.0``.
        min_height: Smallest kept clipped height. Defaults to ``0.0``.
        tolerance: A box must be wider and higher than this to be kept at all: a
            little above 0 drops the slivers that float error leaves where a box
            meets a clipping edge. Defaults to ``0.0``.

    Returns:
        A boolean array of shape ``(N,)``.

    Raises:
        ValueError: If ``full_area`` does not have shape ``(N,)``.

    >>> import numpy as np
    >>> full = np.array([[0.0, 0.0, 10.0, 10.0], [8.0, 0.0, 18.0, 10.0]])
    >>> clipped = clip_xyxy(full, 0.0, 0.0, 10.0, 10.0)
    >>> keep_mask(clipped, box_area(full), min_visibility=0.5)
    array([ True, False])
    """
    array = _as_n4(clipped, "clipped")
    full = np.asarray(full_area, dtype=np.float64)
    if full.shape != (array.shape[0],):
        raise ValueError(
            f"full_area must have shape ({array.shape[0]},) to match clipped, "
            f"got shape {full.shape}"
        )
    widths = array[:, 2] - array[:, 0]
    heights = array[:, 3] - array[:, 1]
    areas = widths * heights
    keep = (widths > tolerance) & (areas > 0.0) & (full > 0.0)
    if tolerance > 0.0:
        keep &= heights > tolerance
    if min_area > 0.0:
        keep &= areas >= min_area
    if min_visibility > 0.0:
        keep &= areas >= min_visibility * full
    if min_width > 0.0:
        keep &= widths >= min_width
    if min_height > 0.0:
        keep &= heights >= min_height
    return cast(np.ndarray, keep)


def check_filter_args(
    *,
    min_area: object,
    min_visibility: object,
    min_width: object,
    min_height: object,
) -> tuple[float, float, float, float]:
    """Check the box-filter thresholds of :func:`keep_mask`.

    Args:
        min_area: Must be a finite real number >= 0.
        min_visibility: Must be a real number in ``[0, 1]``.
        min_width: Must be a finite real number >= 0.
        min_height: Must be a finite real number >= 0.

    Returns:
        The four thresholds as floats, in the order above.

    Raises:
        TypeError: If a value is not a real number (``bool`` is refused).
        ValueError: If a value is NaN, infinite, negative, or ``min_visibility``
            is above 1.

    >>> check_filter_args(min_area=0, min_visibility=0.25, min_width=2.0, min_height=2)
    (0.0, 0.25, 2.0, 2.0)
    >>> check_filter_args(min_area=0, min_visibility=1.5, min_width=0, min_height=0)
    Traceback (most recent call last):
    ...
    ValueError: min_visibility must be a finite number >= 0.0 and <= 1.0, got 1.5
    """
    return (
        checks.real(min_area, "min_area", low=0.0),
        checks.probability(min_visibility, "min_visibility"),
        checks.real(min_width, "min_width", low=0.0),
        checks.real(min_height, "min_height", low=0.0),
    )


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


def _all_inside(array: np.ndarray, width: int, height: int) -> bool:
    """Tell cheaply whether every box is finite, upright and overlaps the image.

    True means that :func:`validate_xyxy` has nothing to report or clip. False
    sends the caller to the detailed per-condition checks. NaN makes every
    comparison False and infinities fail the bounds, so both take the slow path.
    """
    low = array.min(axis=0).tolist()
    high = array.max(axis=0).tolist()
    return bool(
        low[0] >= 0.0
        and low[1] >= 0.0
        and low[2] > 0.0
        and low[3] > 0.0
        and high[0] < width
        and high[1] < height
        and high[2] <= width
        and high[3] <= height
        and (array[:, 2:] >= array[:, :2]).all()
    )


def _raise_row(array: np.ndarray, name: str, bad: np.ndarray, problem: str) -> None:
    """Raise a ValueError naming the first row flagged in ``bad``."""
    index = int(np.flatnonzero(bad)[0])
    count = int(np.count_nonzero(bad))
    others = f" ({count - 1} more such rows)" if count > 1 else ""
    raise ValueError(
        f"{name}[{index}] = {array[index].tolist()} {problem}; boxes are "
        f"(x_min, y_min, x_max, y_max) in pixels{others}"
    )
