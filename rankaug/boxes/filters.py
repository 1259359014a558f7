"""Checking boxes against their image, clipping them to a window and filtering them.

Pixel xyxy float64 ``(N, 4)`` arrays, vectorised (see :mod:`rankaug.boxes`).

>>> import numpy as np
>>> validate_xyxy(np.array([[-5.0, 10.0, 50.0, 120.0]]), (100, 100))
array([[  0.,  10.,  50., 100.]])
"""

from __future__ import annotations

from typing import Final, cast

import numpy as np

from rankaug import checks
from rankaug.boxes.formats import _as_n4, _check_hw
from rankaug.checks.rows import BOXES

__all__ = [
    "box_area",
    "check_filter_args",
    "clip_xyxy",
    "edge_tolerance",
    "keep_mask",
    "validate_xyxy",
]

_EDGE_TOLERANCE_PX: Final = 1e-6
_ROUNDING_RTOL: Final = 2.0**-20


def edge_tolerance(width: int, height: int) -> float:
    """How far past a ``width`` x ``height`` image a box's edge may lie, as float rounding.

    1e-6 pixel plus ``2**-20`` of the long side. A float32 coordinate on the image's edge
    that went through a scale (a normalised format's, a resize's) lands a few of its
    float32 steps (``2**-23`` of its size each) past it: 640 comes back as 640.00006.
    Such an edge is the image's: :func:`all_inside` counts the box inside, and
    :func:`validate_xyxy` neither refuses nor clips it (what reads the boxes clips them
    to its own window, as a mosaic does); an edge further out is refused or clipped.

    >>> edge_tolerance(640, 480) > float(np.nextafter(np.float32(640), np.float32(641))) - 640
    True
    """
    return _EDGE_TOLERANCE_PX + _ROUNDING_RTOL * max(width, height)


def validate_xyxy(
    xyxy: np.ndarray,
    image_hw: tuple[int, int],
    *,
    name: str = "bboxes",
    clip: bool = True,
) -> np.ndarray:
    """Check pixel xyxy boxes against an image and clip the ones that stick out.

    Zero-width and zero-height boxes are allowed here; filter them later with
    :func:`keep_mask`. An edge past the image by at most :func:`edge_tolerance` (float
    rounding, for example after converting from a normalised format) is the image's:
    neither refused nor clipped (unless another box is clipped: then all are).

    Args:
        xyxy: Array of shape ``(N, 4)`` in absolute pixel xyxy.
        image_hw: ``(height, width)`` of the image.
        name: The name of the boxes, used in error messages.
        clip: If True, clip boxes that are partly outside the image; if False,
            refuse them.

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
    if all_inside(array, width, height):
        return array
    checks.finite_rows(array, name, BOXES)
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
    tol = edge_tolerance(width, height)
    beyond = (x0 < -tol) | (y0 < -tol) | (x1 > width + tol) | (y1 > height + tol)
    if not beyond.any():  # inside, or past it by float rounding: all_inside's rule
        return array
    if not clip:
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
        min_area: Smallest kept clipped area.
        min_visibility: Smallest kept fraction of the full area, in ``[0, 1]``.
        min_width: Smallest kept clipped width.
        min_height: Smallest kept clipped height.
        tolerance: A box must be wider and higher than this to be kept at all: a
            little above 0 drops the slivers that float error leaves where a box
            meets a clipping edge.

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


FEW_BOXES: Final = 32
"""The most boxes checked row by row in Python (:func:`all_inside`): faster than numpy."""


def all_inside(array: np.ndarray, width: int, height: int) -> bool:
    """Tell cheaply whether every pixel xyxy box is finite, upright and inside the image.

    True means that :func:`validate_xyxy` has nothing to report or clip. False
    sends the caller to the detailed per-condition checks. NaN makes every
    comparison False and infinities fail the bounds, so both take the slow path.
    An edge past the image by float rounding (:func:`edge_tolerance`) is inside.

    >>> import numpy as np
    >>> all_inside(np.array([[0.0, 0.0, 100.0, 50.0]]), 100, 50)
    True
    >>> all_inside(np.array([[0.0, 0.0, 100.5, 50.0]]), 100, 50)
    False
    >>> all_inside(np.array([[0.0, 0.0, 100.00001, 50.0]]), 100, 50)  # float32 rounding
    True
    """
    tol = edge_tolerance(width, height)
    low, right, bottom = -tol, width + tol, height + tol
    if len(array) <= FEW_BOXES:  # row by row
        for x0, y0, x1, y1 in array.tolist():
            if not (
                low <= x0 < width and low <= y0 < height and x0 <= x1 and y0 <= y1
                and 0.0 < x1 <= right and 0.0 < y1 <= bottom
            ):  # fmt: skip
                return False
        return True
    least = array.min(axis=0).tolist()
    most = array.max(axis=0).tolist()
    return bool(
        least[0] >= low
        and least[1] >= low
        and least[2] > 0.0
        and least[3] > 0.0
        and most[0] < width
        and most[1] < height
        and most[2] <= right
        and most[3] <= bottom
        and (array[:, 2:] >= array[:, :2]).all()
    )


def _raise_row(array: np.ndarray, name: str, bad: np.ndarray, problem: str) -> None:
    """Raise a ValueError naming the first row flagged in ``bad``."""
    raise checks.row_error(array, name, bad, problem, BOXES)
