"""Boxes through an affine map: their corners mapped, the enclosing box taken.

Pixel xyxy float64 ``(N, 4)`` arrays, vectorised (see :mod:`rankaug.boxes`). A box's
image under a map that rotates or shears is a parallelogram; YOLO keeps its enclosing
box and clips that to the image. :func:`affine_xyxy` does the same, or with ``window``
takes the enclosing box of the part of the parallelogram inside the window, which is
never larger and is empty when the parallelogram misses the window (where the clipped
enclosing box can still reach into the window, with none of the box's pixels in it).

>>> import numpy as np
>>> turn = ((0.0, -1.0, 10.0), (1.0, 0.0, 0.0))  # a quarter turn, then 10 px right
>>> affine_xyxy(np.array([[1.0, 2.0, 4.0, 3.0]]), turn)
array([[7., 1., 8., 4.]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["affine_xyxy", "mirror_xyxy"]

# corner k of a box is (x[_CX[k]], y[_CY[k]]) of its (x0, y0, x1, y1), going round it
_CX = [0, 2, 2, 0]
_CY = [1, 1, 3, 3]
_MARGIN = 1e-9  # relative: how far outside a boundary a rounding error may put a point


def affine_xyxy(
    xyxy: np.ndarray,
    matrix: Sequence[Sequence[float]],
    window: tuple[float, float, float, float] | None = None,
) -> np.ndarray:
    """The enclosing boxes of ``xyxy`` boxes mapped by a ``2 x 3`` affine ``matrix``.

    Args:
        xyxy: ``(N, 4)`` boxes ``(x0, y0, x1, y1)`` with ``x0 <= x1`` and ``y0 <= y1``.
        matrix: ``((a, b, c), (d, e, f))``: ``(x, y) -> (a x + b y + c, d x + e y + f)``.
        window: ``(x0, y0, x1, y1)``: enclose only the part of each mapped box inside
            it, and give an empty box (``x0 == x1``) where none is; ``None`` encloses the
            whole mapped box.

    Returns:
        A new float64 ``(N, 4)`` array.

    >>> import numpy as np
    >>> diamond = ((0.5, -0.5, 5.0), (0.5, 0.5, 0.0))  # 45 degrees, scaled by 1/sqrt(2)
    >>> affine_xyxy(np.array([[0.0, 0.0, 4.0, 4.0]]), diamond)
    array([[3., 0., 7., 4.]])
    >>> affine_xyxy(np.array([[0.0, 0.0, 4.0, 4.0]]), diamond, window=(0.0, 0.0, 10.0, 1.0))
    array([[4., 0., 6., 1.]])
    >>> affine_xyxy(np.array([[0.0, 0.0, 4.0, 4.0]]), diamond, window=(6.5, 0.0, 9.0, 0.4))
    array([[6.5, 0. , 6.5, 0. ]])
    """
    (a, b, c), (d, e, f) = matrix
    boxes = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    bx, by = boxes[:, _CX], boxes[:, _CY]  # (N, 4) corners, in order round the box
    x = a * bx + b * by + c
    y = d * bx + e * by + f
    if window is None:
        return np.stack((x.min(axis=1), y.min(axis=1), x.max(axis=1), y.max(axis=1)), axis=1)
    wx0, wy0, wx1, wy1 = window
    # Candidates on a boundary are tested with a relative margin: a crossing computed a
    # rounding error outside the window (or a corner's preimage just outside the box)
    # would otherwise drop the extreme it stands for; the result is clipped to the window.
    tol = _MARGIN * (1.0 + max(abs(wx0), abs(wy0), abs(wx1), abs(wy1)))
    lo_x, lo_y, hi_x, hi_y = wx0 - tol, wy0 - tol, wx1 + tol, wy1 + tol
    # the candidates for the extremes of (parallelogram & window), both convex: ...
    xs, ys, valid = [x], [y], [(x >= lo_x) & (x <= hi_x) & (y >= lo_y) & (y <= hi_y)]
    # ... the window's corners inside the parallelogram (their preimages inside the box) ...
    det = a * e - b * d
    margin = _MARGIN * (1.0 + np.abs(boxes).max(axis=1))
    for px, py in ((wx0, wy0), (wx1, wy0), (wx1, wy1), (wx0, wy1)):
        ux = (e * (px - c) - b * (py - f)) / det
        uy = (a * (py - f) - d * (px - c)) / det
        inside = (ux >= boxes[:, 0] - margin) & (ux <= boxes[:, 2] + margin)
        inside &= (uy >= boxes[:, 1] - margin) & (uy <= boxes[:, 3] + margin)
        xs.append(np.full((len(boxes), 1), px))
        ys.append(np.full((len(boxes), 1), py))
        valid.append(inside[:, None])
    # ... and where the parallelogram's edges cross the window's edges
    x2, y2 = np.roll(x, -1, axis=1), np.roll(y, -1, axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for line in (wx0, wx1):
            t = (line - x) / (x2 - x)
            cross = y * (1 - t) + y2 * t  # exact at either end
            xs.append(np.full_like(x, line))
            ys.append(cross)
            valid.append((t >= 0) & (t <= 1) & (cross >= lo_y) & (cross <= hi_y))
        for line in (wy0, wy1):
            t = (line - y) / (y2 - y)
            cross = x * (1 - t) + x2 * t
            xs.append(cross)
            ys.append(np.full_like(y, line))
            valid.append((t >= 0) & (t <= 1) & (cross >= lo_x) & (cross <= hi_x))
    cx, cy, ok = np.concatenate(xs, axis=1), np.concatenate(ys, axis=1), np.concatenate(valid, 1)
    out = np.stack(
        (
            np.where(ok, cx, np.inf).min(axis=1),
            np.where(ok, cy, np.inf).min(axis=1),
            np.where(ok, cx, -np.inf).max(axis=1),
            np.where(ok, cy, -np.inf).max(axis=1),
        ),
        axis=1,
    )
    missed = ~ok.any(axis=1)
    out[missed] = (wx0, wy0, wx0, wy0)
    clipped: np.ndarray = np.clip(out, (wx0, wy0, wx0, wy0), (wx1, wy1, wx1, wy1))
    return clipped


def mirror_xyxy(xyxy: np.ndarray, width: float) -> np.ndarray:
    """Pixel xyxy boxes mirrored left to right in an image ``width`` wide.

    ``x0, x1 = width - x1, width - x0``, into a new array (a copy and one subtraction:
    ``np.stack`` of the four columns cost three times as much).

    >>> import numpy as np
    >>> mirror_xyxy(np.array([[1.0, 2.0, 4.0, 3.0]]), 10)
    array([[6., 2., 9., 3.]])
    """
    out = xyxy.copy()
    out[:, 0::2] = width - xyxy[:, 2::-2]
    return out
