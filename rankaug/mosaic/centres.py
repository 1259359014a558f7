"""Which boxes show a pixel: those whose visible part holds the centre of an output pixel.

Masks (and constant-colour objects) are resampled nearest neighbour at pixel centres:
output pixel ``(i, j)`` shows the source pixel under the preimage of its centre ``(i +
0.5, j + 0.5)``. A box whose visible part holds no pixel centre (a sliver narrower than
a pixel, between two centres, where a window or the output cuts it, or an object
shrunk below a pixel) shows no pixel of its object: :func:`~rankaug.mosaic.targets.map_targets`
drops it, as the promise "no box without pixels" says.

* Axis-aligned (:func:`aligned`): the box ``[x0, x1] x [y0, y1]`` on the output holds
  the centre ``j + 0.5`` with ``x0 <= j + 0.5 < x1 - TOLERANCE`` (and likewise in
  ``y``): half open, as the resampling reads a centre on the near edge inside, and a
  thousandth of a pixel short of the far edge, so that what is kept is wider than
  :data:`TOLERANCE` (float error leaves slivers about ``1e-14`` pixels wide where a
  box meets a window's edge).
* Under a warp (:func:`warped`): some output pixel's centre has its preimage in the
  box clipped to its tile's visible canvas window, ``x0 <= x < x1``, ``y0 <= y < y1``
  on the canvas (such a pixel is the tile's, see :mod:`~rankaug.mosaic.fused`). OpenCV
  computes the preimages in fixed point (1/1024 pixel): a centre closer than that to
  the box's edge may go either way.

>>> aligned(np.array([[3.6, 0.0, 4.4, 2.0], [3.5, 0.0, 4.0, 2.0], [10.0, 0.0, 10.5, 2.0]]))
array([False,  True, False])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, cast

import numpy as np

from rankaug.boxes import keep_mask
from rankaug.mosaic.affine import Matrix
from rankaug.mosaic.fused import invert

if TYPE_CHECKING:
    from rankaug.mosaic.config import MosaicConfig

__all__ = ["TOLERANCE", "aligned", "filtered", "warped"]

TOLERANCE: Final = 1e-3
"""How far inside a box's far edges (output pixels) the centre it holds must be.

So that a kept box is wider and higher than this: float error leaves slivers about
``1e-14`` pixels wide where a box meets a window's edge, and what is kept stays wider
than zero when the boxes go back into float32 (the error there is below ``5e-4`` for
coordinates up to 8192).
"""

_OFFSETS: Final = np.array([0.5, 0.5, 0.5 + TOLERANCE, 0.5 + TOLERANCE])


def aligned(xyxy: np.ndarray) -> np.ndarray:
    """Which ``(N, 4)`` output boxes hold a pixel centre (see the module docstring).

    Two numpy calls more than a width test: ``ceil(x1 - 0.5 - TOLERANCE) > ceil(x0 -
    0.5)`` counts the centres ``j + 0.5`` from ``x0`` to ``x1 - TOLERANCE``.
    """
    edges = np.ceil(xyxy - _OFFSETS)
    holds: np.ndarray = (edges[:, 2:] > edges[:, :2]).all(axis=1)
    return holds


def warped(
    canvas: np.ndarray, shown: np.ndarray, matrix: Matrix, hw: tuple[int, int]
) -> np.ndarray:
    """Which canvas boxes hold, through ``matrix``, the preimage of an output pixel's centre.

    First the pixel under the middle of each box's visible part (that of most boxes);
    for the others, every output column their visible part spans: on the centre line
    of each, the rows whose preimages lie in the box, each candidate tested as the
    pixels are (see the module docstring).

    Args:
        canvas: ``(N, 4)`` boxes on the canvas, clipped to their visible windows.
        shown: ``(N, 4)`` the enclosing boxes of their images within the output.
        matrix: The canvas-to-output ``M``.
        hw: The output's ``(height, width)``.

    Returns:
        ``(N,)`` bool.
    """
    (ia, ib, ic), (id_, ie, if_) = invert(matrix)
    height, width = hw

    def holds(columns: np.ndarray, rows: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        x, y = columns + 0.5, rows + 0.5
        px, py = ia * x + ib * y + ic, id_ * x + ie * y + if_
        inside: np.ndarray = (px >= boxes[:, 0]) & (px < boxes[:, 2]) & (py >= boxes[:, 1])
        return inside & (py < boxes[:, 3]) & (rows >= 0) & (rows < height)

    middle = np.floor((shown[:, :2] + shown[:, 2:]) / 2)
    columns = np.clip(middle[:, 0], 0, width - 1)
    found = holds(columns, np.clip(middle[:, 1], 0, height - 1), canvas)
    rest = np.flatnonzero(~found)
    if not len(rest):
        return found
    # every column whose centre the visible part spans, and one more each side
    first = np.clip(np.ceil(shown[rest, 0] - 0.5) - 1, 0, width - 1)
    counts = (np.clip(np.ceil(shown[rest, 2] - 0.5), 0, width - 1) - first + 1).astype(np.int64)
    starts = np.cumsum(counts) - counts
    owner = np.repeat(np.arange(len(rest)), counts)
    columns = np.repeat(first - starts, counts) + np.arange(int(counts.sum()))
    boxes = canvas[rest][owner]
    # on a column's centre line the preimage is u + y * v: from the first row (``low``)
    # whose preimage is inside both pairs of the box's edges (and the output), the first
    # centre is in the box if any is; it and its neighbours (for the rounding) are tested
    x = columns + 0.5
    low = np.zeros(len(x))
    for u, v, near, far in ((ia * x + ic, ib, boxes[:, 0], boxes[:, 2]),
                            (id_ * x + if_, ie, boxes[:, 1], boxes[:, 3])):  # fmt: skip
        if v:  # (else the preimage moves along the other axis only: no bound on y)
            with np.errstate(over="ignore"):  # a tiny v (a shear of 1e-309): +-inf, exact
                low = np.maximum(low, np.minimum((near - u) / v, (far - u) / v))
    # past the last row no centre can be in the box (an infinite low: none at all)
    first_row = np.ceil(np.minimum(low, height + 1) - 0.5)
    hits = holds(columns, first_row, boxes)
    for step in (-1.0, 1.0):
        hits |= holds(columns, first_row + step, boxes)
    found[rest] = np.bincount(owner, weights=hits, minlength=len(rest)) > 0
    return found


def filtered(config: MosaicConfig, clipped: np.ndarray, full: np.ndarray) -> np.ndarray:
    """Which boxes the filters keep (``full``: the references of ``min_visibility``)."""
    if config.filters:
        area = (full[:, 2] - full[:, 0]) * (full[:, 3] - full[:, 1])
        return keep_mask(
            clipped,
            area,
            min_area=config.targets.min_area,
            min_visibility=config.targets.min_visibility,
            min_width=config.targets.min_width,
            min_height=config.targets.min_height,
            tolerance=TOLERANCE,
        )
    # keep_mask's rule without thresholds
    return cast(np.ndarray, (clipped[:, 2:] - clipped[:, :2] > TOLERANCE).all(axis=1))
