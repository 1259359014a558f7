"""Vectorised bounding-box conversion, validation, clipping and filtering.

Everything here works on float64 numpy arrays of shape ``(N, 4)`` and is built for
a hot path (a mosaic calls it once per tile): no per-box Python loops beyond
:data:`FEW_BOXES` boxes (fewer are checked row by row, faster than numpy), and empty
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

from rankaug.boxes.corners import affine_xyxy, mirror_xyxy
from rankaug.boxes.filters import (
    FEW_BOXES,
    all_inside,
    box_area,
    check_filter_args,
    clip_xyxy,
    edge_tolerance,
    keep_mask,
    validate_xyxy,
)
from rankaug.boxes.formats import (
    BOX_FORMATS,
    BoxFormat,
    as_box_array,
    check_box_format,
    from_xyxy,
    to_pixel_xyxy,
    to_xyxy,
)

__all__ = [
    "BOX_FORMATS",
    "FEW_BOXES",
    "BoxFormat",
    "affine_xyxy",
    "all_inside",
    "as_box_array",
    "box_area",
    "check_box_format",
    "check_filter_args",
    "clip_xyxy",
    "edge_tolerance",
    "from_xyxy",
    "keep_mask",
    "mirror_xyxy",
    "to_pixel_xyxy",
    "to_xyxy",
    "validate_xyxy",
]
