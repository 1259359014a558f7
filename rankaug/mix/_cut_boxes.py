"""The boxes a CutMix rectangle leaves: where it goes, what it covers, what it spares.

:func:`rectangle` places the pasted rectangle; :func:`uncovered` gives what of each of
the main sample's boxes stays visible (vectorised), :func:`candidate_rows` the same and
the partner's boxes clipped to the rectangle, row by row and bit for bit (a few boxes);
:func:`untouched` marks the boxes the rectangle does not reach (they come out as an
unmixed output gives them). :mod:`rankaug.mix.cutmix` keeps or drops them.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from rankaug._scalars import clamp

__all__ = ["Rect", "candidate_rows", "rectangle", "uncovered", "untouched"]

Rect = tuple[int, int, int, int]
"""``(x0, y0, x1, y1)`` in output pixels."""


def rectangle(hw: tuple[int, int], lam: float, ux: float, uy: float) -> Rect:
    """The rectangle of area fraction ``1 - lam`` placed by ``ux, uy`` (:mod:`rankaug.mix.cutmix`).

    >>> rectangle((100, 200), 0.75, 0.0, 0.999)
    (0, 50, 100, 100)
    """
    height, width = hw
    side = math.sqrt(max(0.0, 1.0 - lam))
    cw, ch = math.floor(width * side + 0.5), math.floor(height * side + 0.5)
    x0 = min(int(ux * (width - cw + 1)), width - cw)
    y0 = min(int(uy * (height - ch + 1)), height - ch)
    return x0, y0, x0 + cw, y0 + ch


def uncovered(boxes: np.ndarray, rect: Rect) -> tuple[np.ndarray, np.ndarray]:
    """What of each pixel ``xyxy`` box the rectangle leaves visible.

    Returns:
        The visible area of each box, and the tight box around its visible part (the
        box itself unless the rectangle cuts it across its full height or width).

    >>> area, tight = uncovered(np.array([[0.0, 0.0, 10.0, 10.0]]), (5, -1, 20, 20))
    >>> area.tolist(), tight.tolist()
    ([50.0], [[0.0, 0.0, 5.0, 10.0]])
    """
    rx0, ry0, rx1, ry1 = rect
    spans = np.minimum(boxes[:, 2:], (rx1, ry1)) - np.maximum(boxes[:, :2], (rx0, ry0))
    np.maximum(spans, 0.0, out=spans)
    inter = spans[:, 0] * spans[:, 1]
    visible = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]) - inter
    hit = np.flatnonzero(inter).tolist()
    if not hit:
        return visible, boxes
    tight = boxes.copy()
    rows = boxes.tolist()
    for row in hit:  # usually few: the boxes the rectangle reaches
        tight[row] = _tightened(rows[row], rect)
    return visible, tight


def _tightened(box: list[float], rect: Rect) -> tuple[float, float, float, float]:
    """The tight box around what a rectangle that reaches ``box`` leaves visible of it."""
    rx0, ry0, rx1, ry1 = rect
    x0, y0, x1, y1 = box
    left, top, right, bottom = box
    if ry0 <= y0 and ry1 >= y1:  # across the box's full height: it may narrow
        if rx0 <= x0 < rx1:
            left = float(min(rx1, x1))
        if rx0 < x1 <= rx1:
            right = float(max(rx0, x0))
    if rx0 <= x0 and rx1 >= x1:  # across its full width: it may shrink in height
        if ry0 <= y0 < ry1:
            top = float(min(ry1, y1))
        if ry0 < y1 <= ry1:
            bottom = float(max(ry0, y0))
    return left, top, right, bottom


def candidate_rows(
    main: np.ndarray, partner: np.ndarray, rect: Rect
) -> tuple[list[tuple[float, ...]], list[float], list[float], list[bool]]:
    """:func:`uncovered` and the partner's clipping, row by row, bit for bit.

    The vectorised path's operations in its order (minimum, maximum, difference,
    product), on Python floats: for a few boxes this costs far less than the dozen numpy
    calls it replaces, each of which costs far more than its arithmetic when it runs
    cold (between the images' copies, in the CutMix race).

    Returns:
        The candidate boxes (the main's tight, then the partner's clipped), the area
        each shows, its full box's area and whether the rectangle leaves it alone
        (:func:`untouched`; a partner's box never).
    """
    rx0, ry0, rx1, ry1 = rect
    boxes: list[tuple[float, ...]] = []
    shown: list[float] = []
    full: list[float] = []
    apart: list[bool] = []
    empty = not (rx0 < rx1 and ry0 < ry1)
    for box in main.tolist():  # min() and max() by comparisons (see rankaug._scalars)
        x0, y0, x1, y1 = box
        apart.append(empty or not (x0 < rx1 and rx0 < x1 and y0 < ry1 and ry0 < y1))
        width = (rx1 if rx1 < x1 else x1) - (rx0 if rx0 > x0 else x0)
        height = (ry1 if ry1 < y1 else y1) - (ry0 if ry0 > y0 else y0)
        inter = (width if width > 0.0 else 0.0) * (height if height > 0.0 else 0.0)
        area = (x1 - x0) * (y1 - y0)
        shown.append(area - inter)
        full.append(area)
        boxes.append(_tightened(box, rect) if inter else (x0, y0, x1, y1))
    for x0, y0, x1, y1 in partner.tolist():
        a, b = float(clamp(x0, rx0, rx1)), float(clamp(y0, ry0, ry1))
        c, d = float(clamp(x1, rx0, rx1)), float(clamp(y1, ry0, ry1))
        boxes.append((a, b, c, d))
        shown.append((c - a) * (d - b))
        full.append((x1 - x0) * (y1 - y0))
        apart.append(False)
    return boxes, shown, full, apart


def untouched(boxes: np.ndarray, rect: Rect) -> np.ndarray:
    """Which boxes share no point, their edges included, with the rectangle's inside."""
    rx0, ry0, rx1, ry1 = rect
    if not (rx0 < rx1 and ry0 < ry1):
        return np.ones(len(boxes), dtype=bool)
    x0, y0, x1, y1 = boxes.T
    return cast(np.ndarray, ~((x0 < rx1) & (rx0 < x1) & (y0 < ry1) & (ry0 < y1)))
