"""Rows of coordinates: boxes and keypoints, refused row by row in one wording.

A bad row is named with its index and values, what is wrong with it, and how the rows
are laid out::

    <name>[<row>] = [<values>] <problem>; <layout> (<n> more such rows)

>>> import numpy as np
>>> finite_points(np.array([[1.0, 2.0], [np.nan, 5.0]]), "keypoints")
Traceback (most recent call last):
...
ValueError: keypoints[1] = [nan, 5.0] contains NaN or infinity; keypoints are (x, y, ...) in pixels
"""

from __future__ import annotations

from typing import Final

import numpy as np

__all__ = [
    "ALBUMENTATIONS_FIELDS",
    "BOXES",
    "KEYPOINTS",
    "RANKAUG_FIELDS",
    "finite_points",
    "finite_rows",
    "point_rows",
    "row_error",
]

BOXES: Final = "boxes are (x_min, y_min, x_max, y_max) in pixels"
"""How pixel xyxy boxes are laid out, for messages."""
KEYPOINTS: Final = "keypoints are (x, y, ...) in pixels"
"""How keypoints are laid out, for messages."""
_NOT_FINITE: Final = "contains NaN or infinity"
ALBUMENTATIONS_FIELDS: Final = (
    "a per-keypoint label field of A.KeypointParams(label_fields=[...]); "
    "remove_invisible=False keeps every instance's K rows to reshape back"
)
"""Where a transform of albumentations keeps each keypoint's instance, for messages."""
RANKAUG_FIELDS: Final = (
    "a per-keypoint field of rankaug.Targets(keypoint_fields=[...]), which stays with "
    "its row (a row that leaves the output goes with its fields)"
)
"""Where a rankaug wrapper (a mosaic, a mix) keeps each keypoint's instance, for messages."""


def row_error(
    array: np.ndarray, name: str, bad: np.ndarray, problem: str, layout: str
) -> ValueError:
    """The error naming the first row flagged in ``bad`` (and how many more there are).

    >>> import numpy as np
    >>> row_error(np.zeros((2, 2)), "pts", np.array([True, True]), "is odd", "pts are x, y")
    ValueError('pts[0] = [0.0, 0.0] is odd; pts are x, y (1 more such rows)')
    """
    index = int(np.flatnonzero(bad)[0])
    count = int(np.count_nonzero(bad))
    others = f" ({count - 1} more such rows)" if count > 1 else ""
    return ValueError(f"{name}[{index}] = {array[index].tolist()} {problem}; {layout}{others}")


def finite_rows(array: np.ndarray, name: str, layout: str = BOXES) -> None:
    """Refuse a row of ``array`` that holds NaN or infinity.

    Raises:
        ValueError: If one does; the message names ``name``, the row and ``layout``.
    """
    finite = np.isfinite(array)
    if not finite.all():
        raise row_error(array, name, ~finite.all(axis=1), _NOT_FINITE, layout)


def finite_points(points: np.ndarray, name: str) -> None:
    """Refuse ``(K, 2+)`` keypoints whose ``x`` or ``y`` is NaN or infinite.

    One vectorised test over the coordinates; the other columns (angle, scale,
    visibility...) are the data's own and are not looked at.

    Raises:
        ValueError: If a keypoint's ``x`` or ``y`` is NaN or infinite; the message names
            ``name``, the row and its values, as for boxes.

    >>> import numpy as np
    >>> finite_points(np.array([[1.0, 2.0, np.nan]]), "keypoints")  # a third column: not read
    """
    finite = np.isfinite(points[:, :2])
    if not finite.all():
        raise row_error(points, name, ~finite.all(axis=1), _NOT_FINITE, KEYPOINTS)


def point_rows(points: np.ndarray, name: str, fields: str = ALBUMENTATIONS_FIELDS) -> None:
    """Refuse keypoints that are not ``(K, 2+)`` rows, one ``(x, y, ...)`` per keypoint.

    The one wording for every wrapper. albumentations takes no other shape and fails deep
    inside ("too many indices", "could not broadcast"), and neither do a mosaic and the
    mixes: a COCO-style flat list ``[x1, y1, v1, x2, ...]`` or per-instance
    ``(N, K, 2|3)`` pose arrays are refused here, with how to give them as rows and,
    for pose arrays, where each keypoint's instance goes (``fields``:
    :data:`ALBUMENTATIONS_FIELDS` or :data:`RANKAUG_FIELDS`). Empty keypoints (``[]``,
    ``(0, 2)``) pass; rows without ``x`` and ``y`` (``(K, 1)``, ``(K, 0)``) do not.

    Raises:
        ValueError: If ``points`` has another shape; the message names ``name``, the
            shape, what is expected and how to get it.

    >>> import numpy as np
    >>> point_rows(np.zeros((2, 17, 3)), "the sample's 'keypoints'")
    Traceback (most recent call last):
    ...
    ValueError: the sample's 'keypoints' must be keypoints of shape (K, 2+), one row (x, y, \
...) per keypoint, got shape (2, 17, 3): per-instance pose arrays ...
    """
    shape = points.shape
    if (len(shape) == 2 and shape[1] >= 2) or (len(shape) in (1, 2) and not shape[0]):
        return
    if len(shape) >= 3:
        fix = (
            "per-instance pose arrays (N, K, 2|3) go as N*K rows, "
            "points.reshape(-1, points.shape[-1]), with each keypoint's instance (and "
            f"joint) in {fields}"
        )
    elif len(shape) == 2:
        fix = "each row needs at least x and y"
    else:
        fix = (
            "a flat list such as COCO's [x1, y1, v1, x2, y2, v2, ...] is one row per "
            "keypoint once reshaped: np.reshape(points, (-1, 3)) ((-1, 2) for x, y alone)"
        )
    raise ValueError(
        f"{name} must be keypoints of shape (K, 2+), one row (x, y, ...) per keypoint, got "
        f"shape {shape}: {fix}"
    )
