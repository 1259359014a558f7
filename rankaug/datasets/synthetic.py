"""A procedural detection dataset: coloured shapes on textured backgrounds.

Each sample is drawn from a generator keyed by ``(seed, index)`` alone, so a sample
is the same in every process, worker and run, whatever was drawn before.
"""

from __future__ import annotations

import colorsys
import sys
from collections.abc import Sequence
from typing import Any, Literal

import cv2
import numpy as np
from torch.utils.data import Dataset

from rankaug import checks
from rankaug._fixed import FixedSettings
from rankaug.boxes import BoxFormat
from rankaug.datasets._sample import build_sample, check_output_options

__all__ = ["SyntheticDetection"]

_DOMAIN_TAG = 0x53594E54  # "SYNT": keeps these streams apart from other keyed streams
_MIN_SIDE = 8
_SHAPES = ("rectangle", "ellipse", "triangle")
_DTYPES = ("uint8", "float32")


class SyntheticDetection(FixedSettings, Dataset[Any]):
    """Deterministic synthetic detection data, generated on the fly (no files).

    Every image has a smooth textured background (a coarse grid of colours from a
    per-image palette, upsampled, with low-amplitude noise) and 1 to ``max_objects``
    shapes. Class ``c`` is always the same shape (``c % 3``: rectangle, ellipse,
    triangle) in the same hue (brightness varies a little per object). Shapes may
    stick out of the image by up to a quarter of their size.

    Occlusion: shapes are drawn one after another, later ones on top. Each object's
    box is the tight box around the pixels it still shows after all drawing, in
    continuous pixel coordinates (pixel column ``c`` covers ``[c, c + 1)``), so boxes
    are exact for occluded and truncated objects. An object hidden completely is not
    emitted; the others are emitted in drawing order, bottom first.

    A sample is a dict ``{"image", "bboxes", "labels"[, "mask"]}``:

    * ``image``: ``HxWx3`` RGB (``channels=3``) or ``HxW`` grayscale (``channels=1``),
      uint8, or float32 in ``[0, 1]`` with ``dtype="float32"``.
    * ``bboxes``: float32 ``(N, 4)`` in ``box_format``.
    * ``labels``: int64 ``(N,)`` class ids in ``[0, num_classes)``.
    * ``mask`` (with ``masks=True``): uint8 ``HxW``, 0 for background and
      ``class_id + 1`` where an object is on top.

    ``as_tuple=True`` gives ``(image, {"boxes", "labels"[, "mask"]})`` with pixel
    xyxy boxes; ``tensors=True`` makes those torch tensors, the image ``CHW``.

    Args:
        length: Number of samples, at most ``sys.maxsize`` (what ``len()`` can give).
        image_size: ``(height, width)`` or one int for a square; each side >= 8.
        num_classes: Number of classes, in ``[1, 255]``.
        max_objects: Most objects drawn per image, in ``[1, 255]``.
        seed: Dataset seed, in ``[0, 2**64)``.
        box_format: Format of the dict sample's ``"bboxes"``.
        masks: Add the semantic ``"mask"``.
        channels: 3 for RGB ``HxWx3``, 1 for grayscale ``HxW``.
        dtype: ``"uint8"`` or ``"float32"`` (scaled to ``[0, 1]``).
        as_tuple: Give torchvision-style ``(image, target)`` pairs.
        tensors: With ``as_tuple``, give torch tensors.
        varied_sizes: Give each index its own size, each side independently between
            0.5x and 1.5x ``image_size`` (so aspect ratios vary too), at least 8.

    Every argument is kept as the attribute of its name, fixed when the dataset is made
    (the class colours follow ``num_classes``, the wrappers read ``box_format`` once):
    assigning one raises an ``AttributeError``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range or the options contradict.

    >>> ds = SyntheticDetection(4, image_size=64, seed=1)
    >>> sample = ds[0]
    >>> sample["image"].shape, sample["image"].dtype, sample["mask"].shape
    ((64, 64, 3), dtype('uint8'), (64, 64))
    >>> sample["bboxes"].dtype, sample["labels"].dtype, len(sample["bboxes"]) >= 1
    (dtype('float32'), dtype('int64'), True)
    >>> bool((ds[-4]["image"] == sample["image"]).all())
    True
    """

    fixed_settings = frozenset({"length", "image_size", "num_classes", "max_objects", "seed",
                                "box_format", "as_tuple", "tensors", "masks", "channels",
                                "dtype", "varied_sizes"})  # fmt: skip
    made_with = "_colours"  # set last: a subclass may have set its arguments before

    def __init__(
        self,
        length: int = 64,
        image_size: int | tuple[int, int] = (480, 640),
        *,
        num_classes: int = 5,
        max_objects: int = 6,
        seed: int = 0,
        box_format: BoxFormat = "pascal_voc",
        masks: bool = True,
        channels: int = 3,
        dtype: Literal["uint8", "float32"] = "uint8",
        as_tuple: bool = False,
        tensors: bool = False,
        varied_sizes: bool = False,
    ) -> None:
        self.length = checks.integer(length, "length", low=0, high=sys.maxsize)  # len()'s limit
        self.image_size = _check_image_size(image_size)
        self.num_classes = checks.integer(num_classes, "num_classes", low=1, high=255)
        self.max_objects = checks.integer(max_objects, "max_objects", low=1, high=255)
        self.seed = checks.integer(seed, "seed", low=0, high=2**64 - 1)
        self.box_format, self.as_tuple, self.tensors = check_output_options(
            box_format, as_tuple, tensors
        )
        self.masks = checks.boolean(masks, "masks")
        self.channels = checks.integer(channels, "channels", low=1, high=3)
        if self.channels == 2:
            raise ValueError("channels must be 1 (grayscale HxW) or 3 (RGB HxWx3), got 2")
        if not isinstance(dtype, str):
            raise TypeError(f"dtype must be the str 'uint8' or 'float32', got {dtype!r}")
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be 'uint8' or 'float32', got {dtype!r}")
        self.dtype = dtype
        self.varied_sizes = checks.boolean(varied_sizes, "varied_sizes")
        self._colours = _class_colours(self.num_classes)

    def __len__(self) -> int:
        """Return the number of samples."""
        return self.length

    def __getitem__(self, index: int) -> Any:
        """Return sample ``index`` (negative indices count from the end).

        Raises:
            TypeError: If ``index`` is not an integer.
            IndexError: If ``index`` is out of range.
        """
        position = checks.index(index, self.length)
        image, xyxy, labels, mask = self._render(position)
        if self.channels == 1:
            image = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        if self.dtype == "float32":
            image = image.astype(np.float32) / np.float32(255.0)
        return build_sample(
            image,
            xyxy,
            labels,
            box_format=self.box_format,
            as_tuple=self.as_tuple,
            tensors=self.tensors,
            mask=mask if self.masks else None,
        )

    def image_hw(self, index: int) -> tuple[int, int]:
        """Return the ``(height, width)`` of sample ``index`` without drawing it.

        >>> SyntheticDetection(2, image_size=(30, 40)).image_hw(1)
        (30, 40)
        """
        return self._size(self._rng(checks.index(index, self.length)))

    def __repr__(self) -> str:
        return (
            f"SyntheticDetection({self.length!r}, image_size={self.image_size!r}, "
            f"num_classes={self.num_classes!r}, max_objects={self.max_objects!r}, "
            f"seed={self.seed!r}, box_format={self.box_format!r}, masks={self.masks!r}, "
            f"channels={self.channels!r}, dtype={self.dtype!r}, as_tuple={self.as_tuple!r}, "
            f"tensors={self.tensors!r}, varied_sizes={self.varied_sizes!r})"
        )

    def _rng(self, position: int) -> np.random.Generator:
        """Return the generator of one sample, keyed by fixed-width words."""
        words = [_DOMAIN_TAG, self.seed & 0xFFFFFFFF, self.seed >> 32]
        words += [position & 0xFFFFFFFF, position >> 32]
        return np.random.default_rng(np.array(words, dtype=np.uint32))

    def _size(self, rng: np.random.Generator) -> tuple[int, int]:
        """Draw the image size (the first draws of a sample's generator)."""
        height, width = self.image_size
        if not self.varied_sizes:
            return height, width
        scale_h, scale_w = rng.uniform(0.5, 1.5, size=2)
        return max(_MIN_SIDE, round(height * scale_h)), max(_MIN_SIDE, round(width * scale_w))

    def _render(self, position: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Draw sample ``position``: RGB image, xyxy boxes, labels, semantic mask."""
        rng = self._rng(position)
        height, width = self._size(rng)
        image = _background(rng, height, width)
        owner = np.zeros((height, width), dtype=np.uint8)  # 0 background, k + 1 object k
        count = int(rng.integers(1, self.max_objects + 1))
        classes = rng.integers(0, self.num_classes, size=count)
        windows: list[tuple[int, int, int, int]] = []
        for k in range(count):
            box_h = int(rng.integers(max(2, height // 10), max(3, height // 2) + 1))
            box_w = int(rng.integers(max(2, width // 10), max(3, width // 2) + 1))
            top = int(rng.integers(-(box_h // 4), height - box_h + box_h // 4 + 1))
            left = int(rng.integers(-(box_w // 4), width - box_w + box_w // 4 + 1))
            colour = self._colours[classes[k]] * rng.uniform(0.75, 1.0)
            kind = int(classes[k]) % len(_SHAPES)
            _draw_shape(rng, kind, (image, owner), (colour, k + 1), (top, left, box_h, box_w))
            # The window to search for the object's pixels, with a margin for rasterising.
            windows.append(
                (
                    max(top - 2, 0),
                    min(top + box_h + 2, height),
                    max(left - 2, 0),
                    min(left + box_w + 2, width),
                )
            )
        boxes: list[tuple[int, int, int, int]] = []
        kept: list[int] = []
        for k, (y0, y1, x0, x1) in enumerate(windows):
            mine = owner[y0:y1, x0:x1] == k + 1
            cols = np.flatnonzero(mine.any(axis=0))
            if cols.size == 0:
                continue  # completely hidden by later objects
            rows = np.flatnonzero(mine.any(axis=1))
            boxes.append((x0 + cols[0], y0 + rows[0], x0 + cols[-1] + 1, y0 + rows[-1] + 1))
            kept.append(k)
        xyxy = np.array(boxes, dtype=np.float64).reshape(-1, 4)
        labels = classes[kept].astype(np.int64)
        lookup = np.zeros(256, dtype=np.uint8)
        lookup[1 : count + 1] = classes + 1
        mask: np.ndarray = cv2.LUT(owner, lookup)
        return image, xyxy, labels, mask


def _check_image_size(image_size: object) -> tuple[int, int]:
    """Return ``image_size`` as ``(height, width)``, each side at least 8."""
    if isinstance(image_size, (int, np.integer)) and not isinstance(image_size, bool):
        sides: object = (image_size, image_size)
    else:
        sides = image_size
    if not isinstance(sides, (tuple, list)) or len(sides) != 2:
        raise TypeError(
            f"image_size must be an int or a (height, width) pair of ints, got {image_size!r}"
        )
    height = checks.integer(sides[0], "image_size height", low=_MIN_SIDE)
    width = checks.integer(sides[1], "image_size width", low=_MIN_SIDE)
    return height, width


def _class_colours(num_classes: int) -> np.ndarray:
    """Return one saturated RGB colour per class, hues spread by the golden ratio."""
    rows = [
        colorsys.hsv_to_rgb((c * 0.618033988749895) % 1.0, 0.85, 1.0) for c in range(num_classes)
    ]
    return np.array(rows, dtype=np.float64) * 255.0


def _background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Draw a smooth, lightly noisy background from a per-image palette of 3 colours."""
    palette = rng.integers(30, 226, size=(3, 3), dtype=np.uint8)
    grid_h, grid_w = (int(n) for n in rng.integers(2, 6, size=2))
    grid = palette[rng.integers(0, 3, size=(grid_h, grid_w))]
    mid_h, mid_w = max(2, height // 4), max(2, width // 4)
    mid = cv2.resize(grid, (mid_w, mid_h), interpolation=cv2.INTER_CUBIC).astype(np.int16)
    mid += rng.integers(-12, 13, size=(mid_h, mid_w, 1), dtype=np.int16)
    smooth = np.clip(mid, 0, 255).astype(np.uint8)
    image: np.ndarray = cv2.resize(smooth, (width, height), interpolation=cv2.INTER_LINEAR)
    return image


def _draw_shape(
    rng: np.random.Generator,
    kind: int,
    targets: tuple[np.ndarray, np.ndarray],
    values: tuple[np.ndarray, int],
    rect: tuple[int, int, int, int],
) -> None:
    """Draw one filled shape into the image and, identically, into the owner map.

    Both arrays get the very same OpenCV call (same geometry, same image size, no
    anti-aliasing), so the owner map marks exactly the pixels the shape coloured.

    Args:
        rng: The sample's generator (triangles draw their apex and orientation).
        kind: 0 rectangle, 1 ellipse, 2 triangle.
        targets: ``(image, owner)``, drawn into in place.
        values: ``(RGB colour, owner value)``.
        rect: ``(top, left, height, width)`` of the shape's bounding rectangle; it may
            stick out of the image (drawing is clipped).
    """
    top, left, height, width = rect
    colour: Sequence[float] | float = tuple(int(v) for v in values[0])
    paints: tuple[tuple[np.ndarray, Sequence[float] | float], ...] = (
        (targets[0], colour),
        (targets[1], values[1]),
    )
    for target, value in paints:
        if kind == 0:
            target[max(top, 0) : top + height, max(left, 0) : left + width] = value
        elif kind == 1:
            centre = (left + (width - 1) / 2.0, top + (height - 1) / 2.0)
            cv2.ellipse(target, (centre, (float(width), float(height)), 0.0), value, thickness=-1)
    if kind != 2:
        return
    apex = left + int(rng.integers(0, width))
    if rng.integers(0, 2):  # apex at the top, base at the bottom
        points = [[apex, top], [left, top + height - 1], [left + width - 1, top + height - 1]]
    else:
        points = [[apex, top + height - 1], [left, top], [left + width - 1, top]]
    corners = np.array(points, dtype=np.int32)
    for target, value in paints:
        cv2.fillPoly(target, [corners], value)
