"""An adapter's integer boxes and keypoints: whole, in their dtype, on every draw.

A transform with a random scale (``A.Affine(scale=...)``, ``A.RandomScale``,
``A.RandomResizedCrop``) moves integer boxes and keypoints by fractions of a pixel on
some draws and not on others; :func:`~rankaug.samples.restore.restore_like` alone would
give them back in their integer dtype on the ones and ``float64`` on the others, and a
batch mixing the two would not collate. So the adapters give them back by the rule of
the multi-sample wrappers (:mod:`rankaug.boxes.whole`, its one home), on the transformed
image's size: integer boxes are the output pixels whose centres each holds (their box
format known: a pixel one, their dtype holding the output's width and height, else
refused), integer keypoints are rounded to whole numbers, halves down (their dtype
holding the output's width and height). Boxes of a format the adapter was not told (no
``A.BboxParams``) keep :func:`~rankaug.samples.restore.restore_like`'s rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

import numpy as np

from rankaug.boxes.formats import BoxFormat, from_xyxy, to_xyxy
from rankaug.boxes.whole import check_whole, int_box_dtype, whole_boxes, whole_points
from rankaug.samples.images import image_hw
from rankaug.samples.restore import restore_like

__all__ = ["WHOLE_KEYS", "restore_whole", "whole_value"]

#: The targets made whole: boxes and keypoints, by rankaug's names.
WHOLE_KEYS: Final = frozenset({"bboxes", "keypoints"})


def restore_whole(
    key: str, value: Any, old: Any, data: Mapping[str, Any], box_format: str | None, name: str
) -> Any:
    """The transform's output for ``key`` back in ``old``'s type and dtype, whole.

    :func:`whole_value`, then :func:`~rankaug.samples.restore.restore_like` (``name`` in
    its errors).

    >>> restore_whole("bboxes", np.array([[2.5, 2.5, 12.5, 15.0]]), np.zeros((1, 4), np.int16),
    ...               {"image": np.zeros((20, 20))}, "pascal_voc", "boxes")
    array([[ 2,  2, 12, 15]], dtype=int16)
    """
    return restore_like(whole_value(key, value, old, data, box_format), old, name)


def whole_value(
    key: str, value: Any, old: Any, data: Mapping[str, Any], box_format: str | None
) -> Any:
    """The transform's ``key`` output ``value``, whole when ``old`` (its input) is integer.

    Args:
        key: rankaug's name of the target (only ``bboxes`` and ``keypoints`` change).
        value: The transform's output for it.
        old: The value the sample gave.
        data: The transform's output, with its ``image``.
        box_format: The boxes' format, or ``None`` (not known: boxes as they are).

    Returns:
        ``value``, or its rows made whole (floats still: ``restore_like`` casts them).

    Raises:
        ValueError: If integer boxes or keypoints cannot be whole (see
            :mod:`rankaug.boxes.whole`).

    >>> image = np.zeros((20, 20))
    >>> whole_value("bboxes", np.array([[2.5, 2.5, 12.5, 15.0]]), [[0, 0, 1, 1]],
    ...             {"image": image}, "pascal_voc").tolist()
    [[2.0, 2.0, 12.0, 15.0]]
    >>> whole_value("keypoints", np.array([[2.5, 7.6]]), np.zeros((1, 2), np.int16),
    ...             {"image": image}, None).tolist()
    [[2.0, 8.0]]
    """
    if key not in WHOLE_KEYS or (key == "bboxes" and box_format is None):
        return value
    dtype = int_box_dtype(old)
    if dtype is None:
        return value
    hw = image_hw(data["image"])
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):  # ragged rows: restore_like's rule
        array = None
    if key == "keypoints":
        if array is None or array.ndim != 2:
            check_whole(dtype, hw, "pascal_voc", None, "keypoints")
            return value
        return whole_points(array, dtype, hw, None)
    fmt = cast("BoxFormat", box_format)  # the wrapper's, checked
    check_whole(dtype, hw, fmt, None)  # on every draw, boxes or none
    if array is None or array.ndim != 2 or array.shape[1] < 4 or not len(array):
        return value
    xyxy = whole_boxes(to_xyxy(array[:, :4], fmt, hw), dtype, hw, fmt, None)
    out = array.copy()  # the columns after the four (labels in the rows) as they are
    out[:, :4] = xyxy if fmt == "pascal_voc" else from_xyxy(xyxy, fmt, hw)
    return out
