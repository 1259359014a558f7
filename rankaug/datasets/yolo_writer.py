"""Write dict samples in the YOLO folder layout, which :class:`~rankaug.datasets.YoloFolder` reads.

The layout::

    root/images/000000.png
    root/labels/000000.txt     one line per object: class cx cy w h

with ``cx cy w h`` the box centre and size divided by the image width and height, or,
for samples with instance polygons (``"segments"``), YOLO-seg lines
``class x1 y1 ... xk yk``: the polygon's points divided by the image width and height.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

import numpy as np

from rankaug import checks
from rankaug.boxes import (
    BoxFormat,
    as_box_array,
    check_box_format,
    edge_tolerance,
    from_xyxy,
    to_xyxy,
    validate_xyxy,
)
from rankaug.datasets._image_io import write_png

__all__ = ["write_yolo_folder"]

# A box must be its polygon's bounds to within this many pixels, plus float32 rounding
# (a yolo or albumentations box in float32 converts back to pixels with an error of
# about 1e-7 of the image size).
_BOUNDS_ATOL_PX: Final = 1e-3
_BOUNDS_RTOL: Final = 2.0**-20
# Points that overshoot the image by at most this many pixels are float rounding.
_EDGE_TOLERANCE_PX: Final = 1e-6


def write_yolo_folder(
    dataset: Any,
    root: str | os.PathLike[str],
    *,
    box_format: BoxFormat = "pascal_voc",
) -> Path:
    """Write a dataset of dict samples to the YOLO layout under ``root``.

    Images become lossless PNGs ``root/images/000000.png`` (numbered by index, at
    least six digits) so they read back exactly; labels go to
    ``root/labels/000000.txt`` (an empty file for an image without objects) with
    coordinates written at full float precision. Only ``image``, ``bboxes``,
    ``labels`` and ``segments`` are written (YOLO labels have no masks). Boxes must lie
    in the image; an edge past it by float rounding (up to 1e-6 pixel plus 2**-20 of
    the long side: a float32 ``yolo`` or ``coco`` box that touches the edge, as
    :class:`YoloFolder` and :class:`SyntheticDetection` give) is clipped to it.

    Polygons: if the samples have ``"segments"`` (a list of ``N`` pixel ``(x, y)``
    arrays of shape ``(K_i, 2)``, ``K_i >= 3``, one per box, as
    ``YoloFolder(..., segments=True)`` gives and reads), YOLO-seg polygon lines
    ``class x1 y1 ... xk yk`` are written instead of box lines: the key decides. Either
    every sample has ``"segments"`` or none does (a YOLO-seg folder needs a polygon for
    every object). The box is not written: it is read back as the polygon's bounds, so
    each box must be its polygon's bounds already (to within 1e-3 pixel plus float32
    rounding), and the points must lie in the image (up to 1e-6 pixel, clipped).

    Args:
        dataset: Map-style dataset (``len`` and integer indexing) whose samples are
            dicts with ``"image"`` (uint8 ``HxW``, ``HxWx1`` or ``HxWx3`` RGB),
            ``"bboxes"`` (``(N, 4)`` in ``box_format``), ``"labels"`` (``N``
            non-negative integers) and optionally ``"segments"`` (above).
        root: Target folder; its ``images`` and ``labels`` subfolders must not exist
            or be empty.
        box_format: Format of the samples' ``"bboxes"``. If ``dataset`` has a
            ``box_format`` attribute, the two must agree.

    Returns:
        ``root`` as a :class:`~pathlib.Path`.

    Raises:
        TypeError: If ``dataset``, ``root`` or a sample has the wrong type.
        ValueError: If a sample's values are invalid (the message names its index),
            only some samples have ``"segments"``, or ``box_format`` disagrees with
            ``dataset.box_format``.
        FileExistsError: If ``root/images`` or ``root/labels`` is not empty.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> sample = {"image": np.zeros((10, 20, 3), np.uint8),
    ...           "bboxes": np.array([[0.0, 0.0, 10.0, 5.0]]), "labels": np.array([4])}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = write_yolo_folder([sample], tmp)
    ...     print((root / "labels" / "000000.txt").read_text().strip())
    4 0.25 0.25 0.5 0.5
    """
    fmt = check_box_format(box_format)
    if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
        raise TypeError(
            f"dataset must be a map-style dataset (len and indexing), got {type(dataset).__name__}"
        )
    own_format = getattr(dataset, "box_format", None)
    if own_format is not None and own_format != fmt:
        raise ValueError(
            f"box_format={fmt!r} but the dataset's box_format is {own_format!r}; pass "
            f"box_format={own_format!r}"
        )
    root_path = Path(checks.path(root, "root"))
    images, labels = root_path / "images", root_path / "labels"
    for folder in (images, labels):
        if folder.exists() and any(folder.iterdir()):
            raise FileExistsError(f"{folder} is not empty; write_yolo_folder never overwrites")
        folder.mkdir(parents=True, exist_ok=True)
    count = len(dataset)
    digits = max(6, len(str(count - 1)))
    with_segments: bool | None = None  # what the first sample has, all must have
    for index in range(count):
        sample = dataset[index]
        image, rows, classes = _yolo_rows(sample, index, fmt)
        has_segments = "segments" in sample
        if with_segments is None:
            with_segments = has_segments
        elif has_segments != with_segments:
            raise ValueError(
                f"dataset[{index}] {'has' if has_segments else 'lacks'} 'segments' but "
                f"dataset[0] {'has' if with_segments else 'lacks'} them: a YOLO-seg folder "
                "needs a polygon for every object of every image, a detection folder none"
            )
        stem = f"{index:0{digits}d}"
        write_png(images / f"{stem}.png", image)
        lines = [
            " ".join([str(label), *(repr(value) for value in row)])
            for label, row in zip(classes.tolist(), rows, strict=True)
        ]
        text = "".join(line + "\n" for line in lines)
        (labels / f"{stem}.txt").write_text(text, encoding="utf-8")
    return root_path


def _yolo_rows(
    sample: object, index: int, fmt: BoxFormat
) -> tuple[np.ndarray, list[list[float]], np.ndarray]:
    """Check one dict sample; return its image, label rows (after the class) and labels.

    A row is the yolo box ``cx cy w h``, or the normalised polygon ``x1 y1 ... xk yk``
    when the sample has ``"segments"``.
    """
    where = f"dataset[{index}]"
    if not isinstance(sample, dict):
        raise TypeError(
            f"{where} must be a dict sample with 'image', 'bboxes' and 'labels', got "
            f"{type(sample).__name__} (build the dataset with as_tuple=False)"
        )
    missing = [key for key in ("image", "bboxes", "labels") if key not in sample]
    if missing:
        raise ValueError(f"{where} lacks the key(s) {missing}")
    image = sample["image"]
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        raise TypeError(
            f"{where}['image'] must be a uint8 numpy array (PNG keeps it exact), got "
            f"{type(image).__name__} of dtype {getattr(image, 'dtype', None)}"
        )
    if image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3)) or 0 in image.shape:
        raise ValueError(
            f"{where}['image'] must be a non-empty HxW, HxWx1 or HxWx3 array, got shape "
            f"{image.shape}"
        )
    boxes = as_box_array(sample["bboxes"], name=f"{where}['bboxes']")
    classes = np.asarray(sample["labels"])
    if classes.shape == (0,):
        classes = classes.astype(np.int64)  # an empty list is float64 to numpy
    if classes.dtype.kind not in "iu" or classes.shape != (boxes.shape[0],):
        raise ValueError(
            f"{where}['labels'] must be {boxes.shape[0]} integers (one per box), got "
            f"dtype {classes.dtype} and shape {classes.shape}"
        )
    if (classes < 0).any():
        raise ValueError(f"{where}['labels'] must be >= 0, got {classes.tolist()}")
    if classes.dtype == np.uint64 and (classes >= 2**63).any():
        raise ValueError(
            f"{where}['labels'] must be below 2**63 (YoloFolder reads int64 labels), got "
            f"{classes.tolist()}"
        )
    image_hw = (image.shape[0], image.shape[1])
    xyxy = validate_xyxy(
        _rounding_clipped(to_xyxy(boxes, fmt, image_hw), image_hw),
        image_hw,
        name=f"{where}['bboxes']",
        clip=False,
    )
    if "segments" not in sample:
        return image, from_xyxy(xyxy, "yolo", image_hw).tolist(), classes
    polygons = _check_polygons(sample["segments"], xyxy, image_hw, f"{where}['segments']")
    scale = np.array([image_hw[1], image_hw[0]], dtype=np.float64)
    return image, [(points / scale).ravel().tolist() for points in polygons], classes


def _rounding_clipped(xyxy: np.ndarray, image_hw: tuple[int, int]) -> np.ndarray:
    """Pixel boxes with the edges that overshoot the image by float rounding clipped.

    A float32 box in a normalised format (``yolo``, as :class:`YoloFolder` and
    :class:`SyntheticDetection` give it) or in ``coco`` that touches the image's edge
    converts back to pixels up to about 1e-7 of the image size past it. Edges within
    :func:`~rankaug.boxes.edge_tolerance` are clipped (the labels written stay in the
    image); the rest are left for ``validate_xyxy`` to refuse.
    """
    height, width = image_hw
    tolerance = edge_tolerance(width, height)
    clipped = np.clip(xyxy, 0.0, np.array([width, height, width, height], dtype=np.float64))
    rounding = np.abs(xyxy - clipped) <= tolerance  # NaN: False, for validate_xyxy
    return np.where(rounding, clipped, xyxy)


def _check_polygons(
    value: object, xyxy: np.ndarray, image_hw: tuple[int, int], where: str
) -> list[np.ndarray]:
    """Check a sample's pixel polygons against its boxes and image; return them clipped."""
    count = xyxy.shape[0]
    if not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{where} must be a list of {count} (K, 2) pixel polygons (one per box), got "
            f"{type(value).__name__}"
        )
    if len(value) != count:
        raise ValueError(
            f"{where} must hold one polygon per box ({count}), got {len(value)} polygons"
        )
    height, width = image_hw
    size = np.array([width, height], dtype=np.float64)
    polygons = []
    for number, (item, box) in enumerate(zip(value, xyxy, strict=True)):
        points = np.asarray(item)
        if points.dtype.kind not in "iuf" or points.ndim != 2 or points.shape[1] != 2:
            raise ValueError(
                f"{where}[{number}] must be a (K, 2) array of pixel x, y numbers, got dtype "
                f"{points.dtype} and shape {points.shape}"
            )
        if points.shape[0] < 3:
            raise ValueError(
                f"{where}[{number}] must have at least 3 points, got {points.shape[0]}"
            )
        points = points.astype(np.float64)
        if not np.isfinite(points).all():
            raise ValueError(f"{where}[{number}] contains NaN or infinity")
        if (points < -_EDGE_TOLERANCE_PX).any() or (points > size + _EDGE_TOLERANCE_PX).any():
            (x_min, y_min), (x_max, y_max) = (
                points.min(axis=0).tolist(),
                points.max(axis=0).tolist(),
            )
            raise ValueError(
                f"{where}[{number}] has points outside the {height}x{width} (height x width) "
                f"image: x in [{x_min!r}, {x_max!r}], y in [{y_min!r}, {y_max!r}]"
            )
        points = np.clip(points, 0.0, size)
        bounds = np.concatenate([points.min(axis=0), points.max(axis=0)])
        atol = _BOUNDS_ATOL_PX + _BOUNDS_RTOL * max(height, width)
        if not np.allclose(box, bounds, rtol=0.0, atol=atol):
            raise ValueError(
                f"{where}[{number}] has bounds {bounds.tolist()} but its box is "
                f"{box.tolist()} (pixel xyxy): YOLO-seg labels hold only the polygon, whose "
                "bounds are read back as the box, so the two must agree"
            )
        polygons.append(points)
    return polygons
