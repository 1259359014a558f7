"""Keypoints on their image: the rule the mosaic, MixUp and CutMix share.

A keypoint is on an ``h x w`` image where ``0 <= x < w`` and ``0 <= y < h`` (half-open,
the pixel ``(floor(y), floor(x))`` exists), whatever columns follow ``x, y`` (a
visibility moves with it). One that is not is dropped with its keypoint fields, as the
mosaic drops those that land on no tile's visible window (a flat list, as
albumentations' keypoints with ``remove_invisible=True``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    from rankaug._multi.parts import Part

__all__ = ["on_image", "only_on_image"]


def on_image(points: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """Which of ``points`` (``(K, 2+)``, pixel ``x, y`` first) lie on an ``hw`` image.

    >>> on_image(np.array([[0.0, 0.0, 2.0], [3.9, 1.0, 2.0], [4.0, 1.0, 2.0], [-0.1, 0.0, 0.0]]),
    ...          (2, 4)).tolist()
    [True, True, False, False]
    """
    x, y = points[:, 0], points[:, 1]
    return cast(np.ndarray, (x >= 0) & (x < hw[1]) & (y >= 0) & (y < hw[0]))


def only_on_image(part: Part) -> Part:
    """``part`` with only the keypoints on its image (and their fields); itself if all are."""
    points = part.keypoints
    if points is None:
        return part
    keep = on_image(points, part.hw)
    if keep.all():
        return part
    fields = {k: v[keep] for k, v in part.keypoint_fields.items()}
    return replace(part, keypoints=points[keep], keypoint_fields=fields)
