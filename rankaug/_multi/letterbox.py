"""Fitting a partner of another size into the main image: letterboxing.

With ``partner_fit="letterbox"`` a partner whose image has another size than the main
sample's is scaled to fit it, aspect kept, and centred; what it does not cover is
``fill`` (``fill_mask`` in the semantic mask, 0 in instance masks).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

from rankaug._multi.on_image import only_on_image

if TYPE_CHECKING:
    from rankaug._multi.parts import Part
    from rankaug.mix.config import PairConfig

__all__ = ["letterbox"]


def letterbox(part: Part, hw: tuple[int, int], config: PairConfig) -> Part:
    """``part`` scaled to fit ``hw`` (aspect kept) and centred, the rest filled.

    The image is resized with ``cv2.INTER_LINEAR``, masks with
    ``cv2.INTER_NEAREST_EXACT``; boxes, polygons and keypoints follow the same map
    (keypoints off the partner's image are dropped with their fields first, as the
    mosaic drops those off a tile's window: :mod:`rankaug._multi.on_image`).

    >>> from rankaug.mix.config import PairConfig
    >>> from rankaug._multi.parts import Part
    >>> config = PairConfig.build(partner_fit="letterbox", fill=0, record=None)
    >>> part = Part(0, np.full((2, 4), 9, np.uint8), np.array([[0.0, 0.0, 4.0, 2.0]]), {},
    ...             None, None, None, {}, None)
    >>> out = letterbox(part, (4, 4), config)
    >>> out.image.tolist(), out.boxes.tolist()
    ([[0, 0, 0, 0], [9, 9, 9, 9], [9, 9, 9, 9], [0, 0, 0, 0]], [[0.0, 1.0, 4.0, 3.0]])
    """
    height, width = hw
    th, tw = part.hw
    scale = min(height / th, width / tw)
    sw, sh = max(1, min(width, round(tw * scale))), max(1, min(height, round(th * scale)))
    x0, y0 = (width - sw) // 2, (height - sh) // 2
    kx, ky = sw / tw, sh / th

    def place(source: np.ndarray, value: float | tuple[float, ...], flag: int) -> np.ndarray:
        out = np.empty((height, width, *source.shape[2:]), dtype=source.dtype)
        out[...] = value
        resized = cv2.resize(source, (sw, sh), interpolation=flag)
        out[y0 : y0 + sh, x0 : x0 + sw] = resized.reshape(out[y0 : y0 + sh, x0 : x0 + sw].shape)
        return out

    fill = config.fill if len(config.fill) > 1 else config.fill[0]
    masks = part.masks
    if masks is not None:
        masks = (
            np.stack([place(m, 0, cv2.INTER_NEAREST_EXACT) for m in masks])
            if len(masks)
            else np.zeros((0, height, width), masks.dtype)
        )
    part = only_on_image(part)  # those off the partner's image would land in the fill
    points = part.keypoints
    if points is not None:
        points = points.copy()
        points[:, :2] = points[:, :2] * [kx, ky] + [x0, y0]
    return replace(
        part,
        image=place(part.image, fill, cv2.INTER_LINEAR),
        boxes=part.boxes * [kx, ky, kx, ky] + [x0, y0, x0, y0],
        mask=None
        if part.mask is None
        else place(part.mask, config.fill_mask, cv2.INTER_NEAREST_EXACT),
        masks=masks,
        keypoints=points,
        segments=None if part.segments is None else part.segments.mapped((kx, ky), (x0, y0)),
    )
