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

__all__ = ["BOXES", "KEYPOINTS", "finite_points", "finite_rows", "row_error"]

BOXES: Final = "boxes are (x_min, y_min, x_max, y_max) in pixels"
"""How pixel xyxy boxes are laid out, for messages."""
KEYPOINTS: Final = "keypoints are (x, y, ...) in pixels"
"""How keypoints are laid out, for messages."""
_NOT_FINITE: Final = "contains NaN or infinity"


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
