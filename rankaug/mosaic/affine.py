"""``MosaicAffine``: YOLO's random affine, drawn from the key, fused into the mosaic.

The meaning is ultralytics' ``RandomPerspective`` (8.x, ``perspective=0``) applied to
YOLO's mosaic canvas: the ``2h x 2w`` canvas (mosaic centre in ``[0.5, 1.5]`` of the
output size, ``center_range=(0.25, 0.75)`` of the canvas) is mapped onto the
``h x w`` output by ``M = T . S . R . C``, right to left:

* ``C`` moves the canvas centre to the origin;
* ``R`` rotates by ``a`` degrees (counter-clockwise on screen, as
  ``cv2.getRotationMatrix2D``) and scales by ``s``;
* ``S`` shears by ``sx`` degrees in x and ``sy`` degrees in y (``x += tan(sx) y``,
  ``y += tan(sy) x``);
* ``T`` moves the origin to ``(fx * w, fy * h)`` of the output;
* with ``flip=``, a drawn horizontal flip ``F`` (``x -> w - x``) last: ``M = F . T . S .
  R . C``, and every target follows ``M``. With rotation or shear the flip costs
  nothing (the one warp resamples through ``M``); without, each tile is resized as
  for the unflipped ``M``, mirrored in the same resampling (nothing more per pixel), see
  :mod:`rankaug.mosaic.fused`.

A sample that is not a mosaic is letterboxed to the output size first and its ``C``
is the output's centre, as ultralytics' ``RandomPerspective`` does with ``border=0``.
``M`` maps continuous coordinates (pixel column ``c`` covers ``[c, c + 1)``); the
pixels follow it with the half-pixel shift OpenCV's pixel-centre convention needs.

**Draws** (part of the specification: a change redraws everyone's affines). After all
of the mosaic's own draws (the plan's block and the partners' extra draws, see
:mod:`rankaug.mosaic.plan`), one block ``v = rng.random(6)``, drawn for every sample
(mosaic or not, whatever the ranges), used in ultralytics' order:

1. ``v[0]``: the angle ``a = -degrees + 2 * degrees * v[0]``;
2. ``v[1]``: the scale ``s = 1 - scale + 2 * scale * v[1]``;
3. ``v[2]``: the x shear ``sx = -shear + 2 * shear * v[2]``;
4. ``v[3]``: the y shear ``sy = -shear + 2 * shear * v[3]``;
5. ``v[4]``: the x translation ``fx = 0.5 - translate + 2 * translate * v[4]``;
6. ``v[5]``: the y translation ``fy = 0.5 - translate + 2 * translate * v[5]``;
7. only with ``flip > 0`` (so ``flip=0`` draws as before): ``v[6]``, the flip where
   ``v[6] < flip``.

Without rotation and shear (``degrees=0`` and ``shear=0``, the defaults) ``M`` is
axis-aligned and the mosaic costs what a plain one costs (see
:mod:`rankaug.mosaic.fused`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypedDict

import numpy as np

from rankaug import checks

__all__ = [
    "AffineDraw",
    "AffineRecord",
    "Matrix",
    "MosaicAffine",
    "affine_from",
    "affine_matrices",
    "affine_matrix",
    "affine_record",
    "check_flip_index",
    "draw_affine",
    "draw_count",
    "is_axis_aligned",
]

Matrix = tuple[tuple[float, float, float], tuple[float, float, float]]


@dataclass(frozen=True, slots=True)
class MosaicAffine:
    """YOLO's random affine, applied by :class:`~rankaug.MosaicDataset` as it paints.

    ``MosaicDataset(..., affine=MosaicAffine())`` is the equivalent of ultralytics'
    ``Mosaic`` + ``RandomPerspective`` with its default hyperparameters, each pixel
    resampled once (see the module docstring for the map and the draws), but for its
    box filter (``box_candidates``): the boxes are filtered by the mosaic's
    :class:`~rankaug.Targets`, nothing but boxes without pixels by default
    (``Targets(min_width=2.0, min_height=2.0, min_visibility=0.1)`` comes closest,
    see the mosaic guide).

    Args:
        degrees: Rotation range: the angle is uniform in ``[-degrees, degrees]``, with
            ``0 <= degrees <= 180``.
        translate: Translation range: the canvas centre lands uniformly within
            ``[0.5 - translate, 0.5 + translate]`` of the output's width and height, with
            ``0 <= translate <= 0.5`` (the centre stays on the output).
        scale: Scale range: the factor is uniform in ``[1 - scale, 1 + scale]``, with
            ``0 <= scale < 1`` (the factor stays positive).
        shear: Shear range in degrees, each axis uniform in ``[-shear, shear]``, with
            ``0 <= shear < 45`` (the map stays invertible and keeps its orientation).
        flip: The probability of a horizontal flip, folded into the matrix (see the
            module docstring), in ``[0, 1]``.
        flip_index: For keypoints, which of them swap left and right when flipped
            (ultralytics' ``flip_idx``): a permutation of ``0 .. J - 1``; each tile's
            keypoints, in groups of ``J`` (one group per instance: whole groups, and one
            per box where the tile has boxes, else the sample is refused, on every
            output while ``flip > 0``), are reordered so that
            point ``j`` of a group is the one that was point ``flip_index[j]`` (its
            columns after ``x, y``, such as a visibility, move with it); the keypoint
            fields stay with the rows, so that a joint id in one names the joint its row
            now holds. ``None`` keeps the order: an instance's left and right joints
            trade places, and :class:`~rankaug.MosaicDataset` warns (a
            :class:`~rankaug.RankaugWarning`, once) at its first sample with keypoints
            while ``flip > 0``; ``(0,)`` keeps the order of keypoints that have no left
            and right (one per instance) without a warning.

    Raises:
        TypeError: If a value is not a real number.
        ValueError: If a value is out of its range.

    >>> from rankaug.datasets import SyntheticDetection
    >>> from rankaug.mosaic import MosaicDataset
    >>> fused = MosaicDataset(SyntheticDetection(16, image_size=64), seed=0, output_size=96,
    ...                       affine=MosaicAffine(degrees=10))
    >>> out = fused[7]
    >>> out["image"].shape, sorted(out["mosaic"]["affine"])
    ((96, 96, 3), ['angle', 'flip', 'maps', 'matrix', 'scale', 'shear', 'translate'])
    >>> bool((fused.replay(out["mosaic"])["image"] == out["image"]).all())
    True
    >>> MosaicAffine(scale=1.0)
    Traceback (most recent call last):
    ...
    ValueError: scale must be a finite number >= 0.0 and < 1.0, got 1.0
    """

    degrees: float = 0.0
    translate: float = 0.1
    scale: float = 0.5
    shear: float = 0.0
    flip: float = 0.0
    flip_index: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        values = (
            checks.real(self.degrees, "degrees", low=0.0, high=180.0),
            checks.real(self.translate, "translate", low=0.0, high=0.5),
            checks.real(self.scale, "scale", low=0.0, high=1.0, high_open=True),
            checks.real(self.shear, "shear", low=0.0, high=45.0, high_open=True),
            checks.probability(self.flip, "flip"),
        )
        names = ("degrees", "translate", "scale", "shear", "flip")
        for name, value in zip(names, values, strict=True):
            object.__setattr__(self, name, value)
        if self.flip_index is not None:
            object.__setattr__(self, "flip_index", check_flip_index(self.flip_index, "flip_index"))


def check_flip_index(value: object, name: str) -> tuple[int, ...]:
    """A ``flip_index``: a permutation of ``0 .. J - 1``, as a tuple of ints."""
    items = checks.sequence(value, name, what="a non-empty sequence of ints")
    order = tuple(checks.integer(item, f"{name}[{k}]") for k, item in enumerate(items))
    if sorted(order) != list(range(len(order))):
        raise ValueError(
            f"{name} must be a permutation of 0 .. {len(order) - 1} (each index once), "
            f"got {list(order)}"
        )
    return order


class AffineDraw(NamedTuple):
    """One sample's affine draws (see the module docstring).

    Attributes:
        angle: The rotation in degrees.
        scale: The scale factor.
        shear_x: The x shear in degrees.
        shear_y: The y shear in degrees.
        translate_x: Where the centre lands, as a fraction of the output's width.
        translate_y: The same, of its height.
        flip: Whether the output is flipped left to right.
    """

    angle: float
    scale: float
    shear_x: float
    shear_y: float
    translate_x: float
    translate_y: float
    flip: bool = False


class AffineRecord(TypedDict):
    """The affine of one output, under ``"affine"`` in its :class:`MosaicRecord`.

    The draws (``angle``, ``scale``, ``shear`` as ``(x, y)`` degrees, ``translate`` as
    ``(x, y)`` fractions of the output, ``flip``: whether it is flipped); ``matrix``:
    the ``2 x 3`` map ``M`` (the flip included) from the canvas the record's ``dst``
    windows are in (YOLO's ``2h x 2w`` canvas for a mosaic, the letterboxed output
    otherwise) onto the output; ``maps``: per tile (aligned with ``indices``), ``M``
    composed with the tile's place on the canvas, from the tile's pixels onto the
    output. All in continuous pixel coordinates. Without rotation, shear and flip the
    pixels realise each map on whole pixels, as a plain mosaic does: the output
    window is the canvas window's edges through ``M``, rounded; the source window is
    rounded to whole source pixels through the map.
    """

    angle: float
    scale: float
    shear: tuple[float, float]
    translate: tuple[float, float]
    flip: bool
    matrix: Matrix
    maps: list[Matrix]


def draw_affine(affine: MosaicAffine, rng: np.random.Generator) -> AffineDraw:
    """Draw one sample's affine: one block of 6 uniforms (see the module docstring).

    >>> draw = draw_affine(MosaicAffine(), np.random.default_rng(0))
    >>> draw.angle, round(draw.scale, 4), round(draw.translate_x, 4)
    (0.0, 0.7698, 0.5627)
    """
    return affine_from(affine, rng.random(draw_count(affine)).tolist())


def draw_count(affine: MosaicAffine) -> int:
    """How many uniforms :func:`draw_affine` draws: 6, 7 with a flip."""
    return 7 if affine.flip else 6


def affine_from(affine: MosaicAffine, v: Sequence[float]) -> AffineDraw:
    """:func:`draw_affine` of its block of uniforms ``v`` (:func:`draw_count` of them)."""
    flip = affine.flip
    degrees, translate, scale, shear = affine.degrees, affine.translate, affine.scale, affine.shear
    low = 0.5 - translate
    return AffineDraw(
        -degrees + 2 * degrees * v[0],
        1.0 - scale + 2 * scale * v[1],
        -shear + 2 * shear * v[2],
        -shear + 2 * shear * v[3],
        low + 2 * translate * v[4],
        low + 2 * translate * v[5],
        bool(flip) and v[6] < flip,
    )


def affine_matrix(draw: AffineDraw, canvas_hw: Sequence[int], output_hw: Sequence[int]) -> Matrix:
    """``M = T . S . R . C`` from ``canvas_hw`` onto ``output_hw`` (continuous pixels).

    Without rotation and shear the off-diagonal entries are exactly 0.

    >>> affine_matrix(AffineDraw(0.0, 0.5, 0.0, 0.0, 0.5, 0.5), (200, 100), (100, 50))
    ((0.5, 0.0, 0.0), (0.0, 0.5, 0.0))
    """
    return affine_matrices(draw, canvas_hw, output_hw)[0]


def affine_matrices(
    draw: AffineDraw, canvas_hw: Sequence[int], output_hw: Sequence[int]
) -> tuple[Matrix, Matrix]:
    """:func:`affine_matrix`, and the same map without the flip (the same with none).

    >>> draw = AffineDraw(0.0, 0.5, 0.0, 0.0, 0.5, 0.5, flip=True)
    >>> affine_matrices(draw, (200, 100), (100, 50))
    (((-0.5, -0.0, 50.0), (0.0, 0.5, 0.0)), ((0.5, 0.0, 0.0), (0.0, 0.5, 0.0)))
    """
    radians = math.radians(draw.angle)
    cos, sin = math.cos(radians) * draw.scale, math.sin(radians) * draw.scale
    hx, hy = math.tan(math.radians(draw.shear_x)), math.tan(math.radians(draw.shear_y))
    # S . R, R as cv2.getRotationMatrix2D(center=(0, 0)): [[cos, sin], [-sin, cos]]
    a, b = cos - hx * sin, sin + hx * cos
    c, d = hy * cos - sin, hy * sin + cos
    cx, cy = canvas_hw[1] / 2, canvas_hw[0] / 2
    tx, ty = draw.translate_x * output_hw[1], draw.translate_y * output_hw[0]
    e = tx - a * cx - b * cy
    second = (c, d, ty - c * cx - d * cy)
    unflipped = ((a, b, e), second)
    if draw.flip:  # F . M, F: x -> w - x
        return ((-a, -b, output_hw[1] - e), second), unflipped
    return unflipped, unflipped


def is_axis_aligned(matrix: Matrix) -> bool:
    """Whether ``matrix`` neither rotates nor shears (positive diagonal, zeros elsewhere)."""
    (a, b, _), (c, d, _) = matrix
    return b == 0.0 and c == 0.0 and a > 0.0 and d > 0.0


def affine_record(draw: AffineDraw, matrix: Matrix, maps: list[Matrix]) -> AffineRecord:
    """The record of one sample's affine (see :class:`AffineRecord`)."""
    return {
        "angle": draw.angle,
        "scale": draw.scale,
        "shear": (draw.shear_x, draw.shear_y),
        "translate": (draw.translate_x, draw.translate_y),
        "flip": draw.flip,
        "matrix": matrix,
        "maps": maps,
    }
