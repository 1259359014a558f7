"""``MosaicDataset``: YOLO-style mosaics whose every random choice comes from the key.

For each sample the mosaic first draws all its parameters from the key's Generator
as one block ``u = rng.random(2 * cells + rows + cols - 1)``, ``cells = rows * cols``,
used in this order (part of the specification: a change reorders everyone's mosaics):

1. ``u[0]``: the sample is a mosaic when ``u[0] < p`` (``p`` of the epoch);
2. ``u[1]``: the main image's cell, ``floor(u[1] * cells)``;
3. ``cells - 1`` uniforms for the partners, drawn from the pool (the whole dataset by
   default) and never the main index unless nothing else exists: uniformly with
   replacement, position ``floor(u * m)`` among the ``m`` candidates other than the
   main image; weighted, the inverse of the weights' CDF, a draw that hits the main
   image (or, without replacement, an earlier partner) drawn again with
   ``rng.random()``; uniformly without replacement, ``rng.choice`` after the block;
4. the interior grid lines: ``cols - 1`` then ``rows - 1`` uniforms;
5. one scale factor per cell, ``lo + (hi - lo) * u`` for ``scale_range = (lo, hi)``;

and then builds only what the output shows: each tile is resized (visible part only)
straight into its place in the output array, with its boxes, masks and keypoints.

**Geometry.** The output is split into ``rows x cols`` cells by interior lines; line
``k`` (1-based) of ``cols - 1`` lies uniformly in ``[(k - 1 + 2 lo) / cols,
(k - 1 + 2 hi) / cols]`` of the width, ``(lo, hi) = center_range``, and likewise for
rows: for a 2x2 grid that is a centre point in ``[lo, hi]`` of the output, YOLO's
mosaic centre. Each tile is scaled (``scale_mode``: ``"keep"`` fits the whole tile in
``output_size`` keeping its aspect ratio, as YOLO loads its images; ``"fit"`` fits it
in its cell; ``"fill"`` covers its cell), times its drawn scale factor, then anchored
towards the middle of the mosaic: tiles left of the middle column touch their cell's
right edge, tiles right of it touch the left edge, the middle column is centred (and
likewise vertically), so a 2x2 mosaic puts every tile's inner corner on the centre
point, exactly as YOLOv5. What of the tile falls outside its cell is not drawn; what
of the cell the tile does not cover is ``fill``. ``canvas="yolo"`` produces YOLO's
``2h x 2w`` canvas (tiles still scaled for ``output_size``) for pipelines that crop it
with an affine afterwards.

**Pixels and boxes agree exactly.** The visible part of a tile is an integer window
of the output; the source window is rounded to whole source pixels, and boxes,
keypoints and masks are mapped with the affine map that takes that source window
onto that output window, which is the map ``cv2.resize`` applies.

**Targets.** Boxes (in ``box_format``) are clipped to their tile image first (boxes
that reach a little outside their image, as real annotations do; ``clip=False``
makes that an error), mapped, clipped to their visible window and filtered:
positive area always, then ``min_area``, ``min_width``, ``min_height`` (output
pixels) and ``min_visibility``, measured against the box's full mapped size before
any cropping. Every per-box field in ``label_fields`` (and instance ``masks``) stays
aligned with its box. A semantic ``mask`` moves with its pixels (nearest neighbour),
``fill_mask`` elsewhere; ``keypoints`` (x, y first) and ``keypoint_fields`` are kept
where they land on the visible part.

A sample that is not a mosaic (``u >= p``) is the main image alone, scaled to fit
``output_size`` and centred on the output (letterbox), with its targets.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypedDict, TypeVar, cast

import cv2
import numpy as np

from rankaug.boxes import (
    BoxFormat,
    as_box_array,
    check_box_format,
    check_filter_args,
    from_xyxy,
    keep_mask,
    to_xyxy,
    validate_xyxy,
)
from rankaug.context import SampleContext
from rankaug.keyed import KeyedDataset
from rankaug.keys import KeyedRandom, Keying
from rankaug.samples import DEFAULT_TARGETS, DefaultAdapter, SampleAdapter, check_adapter

__all__ = ["CanvasMode", "MosaicDataset", "MosaicRecord", "ScaleMode"]

T_co = TypeVar("T_co", covariant=True)
CanvasMode = Literal["output", "yolo"]
ScaleMode = Literal["keep", "fit", "fill"]
_INTERPOLATIONS = {
    cv2.INTER_NEAREST: "INTER_NEAREST",
    cv2.INTER_NEAREST_EXACT: "INTER_NEAREST_EXACT",
    cv2.INTER_LINEAR: "INTER_LINEAR",
    cv2.INTER_CUBIC: "INTER_CUBIC",
    cv2.INTER_AREA: "INTER_AREA",
    cv2.INTER_LANCZOS4: "INTER_LANCZOS4",
}
_MAX_REJECTIONS = 1000
_NO_BOXES = np.zeros((0, 4))
# Columns: x0, y0, w - x1, h - y1, x1 - x0, y1 - y0, w - x0, h - y0, x1, y1 from rows
# x0, y0, x1, y1, w, h (see MosaicDataset._pixel_boxes).
_MARGINS = np.array(
    [
        [1, 0, 0, 0, -1, 0, -1, 0, 0, 0],
        [0, 1, 0, 0, 0, -1, 0, -1, 0, 0],
        [0, 0, -1, 0, 1, 0, 0, 0, 1, 0],
        [0, 0, 0, -1, 0, 1, 0, 0, 0, 1],
        [0, 0, 1, 0, 0, 0, 1, 0, 0, 0],
        [0, 0, 0, 1, 0, 0, 0, 1, 0, 0],
    ],
    dtype=np.float64,
)


class MosaicRecord(TypedDict):
    """What a mosaic applied, stored under ``record`` in each output sample.

    ``indices`` holds the source indices, main first; ``cells``, ``scales``, ``src``
    and ``dst`` are aligned with it: the ``(row, col)`` cell, the scale applied, the
    source window ``(x0, y0, x1, y1)`` in the tile's pixels and the output window it
    was drawn into (empty windows for tiles that ended up invisible). ``splits_x`` and
    ``splits_y`` are the interior grid lines; ``center`` is the top-left corner of the
    middle cell, which for a 2x2 mosaic is YOLO's mosaic centre. ``state`` is the
    Generator state before the draws (PCG64 state and increment, hexadecimal), for
    :meth:`MosaicDataset.replay`.
    """

    applied: bool
    indices: list[int]
    cells: list[tuple[int, int]]
    center: tuple[int, int]
    splits_x: list[int]
    splits_y: list[int]
    scales: list[float]
    src: list[tuple[int, int, int, int]]
    dst: list[tuple[int, int, int, int]]
    epoch: int
    state: str


class _Plan(NamedTuple):
    applied: bool
    main_cell: int
    indices: list[int]  # main first
    fx: list[float]  # cols - 1 uniforms
    fy: list[float]  # rows - 1 uniforms
    scales: list[float]  # one per cell


@dataclass(slots=True)
class _Tile:
    index: int
    image: np.ndarray
    boxes: np.ndarray  # (N, 4) float64, pixels; still coco (x, y, w, h) for box_format="coco"
    fields: dict[str, np.ndarray]
    mask: np.ndarray | None
    masks: np.ndarray | None
    keypoints: np.ndarray | None
    keypoint_fields: dict[str, np.ndarray]


def _check_pair(value: object, name: str, *, positive: bool = True) -> tuple[int, int]:
    if isinstance(value, bool) or not isinstance(value, int | np.integer | tuple | list):
        raise TypeError(f"{name} must be an int or a (height, width) pair, got {value!r}")
    pair = (value, value) if isinstance(value, int | np.integer) else tuple(value)
    if len(pair) != 2 or any(
        isinstance(v, bool) or not isinstance(v, int | np.integer) for v in pair
    ):
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")
    if positive and (pair[0] <= 0 or pair[1] <= 0):
        raise ValueError(f"{name} must be positive, got {value!r}")
    return int(pair[0]), int(pair[1])


def _check_range(value: object, name: str, *, low: float, high: float) -> tuple[float, float]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair of numbers, got {value!r}")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must be a (low, high) pair of numbers, got {value!r}")
    lo, hi = float(value[0]), float(value[1])
    if not (low <= lo <= hi <= high) or math.isnan(lo) or math.isnan(hi):
        raise ValueError(f"{name} must satisfy {low} <= low <= high <= {high}, got {value!r}")
    return lo, hi


def _check_probability(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _check_fields(value: object, name: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence of key names, got {value!r}")
    fields = tuple(value)
    for field in fields:
        if not isinstance(field, str):
            raise TypeError(f"{name} must hold strings, got {field!r}")
        if field in DEFAULT_TARGETS:
            raise ValueError(f"{name} must not name the built-in target {field!r}")
    return fields


def _lines(fractions: list[float], count: int, extent: int, lo: float, hi: float) -> list[int]:
    """Interior grid lines ``1..count-1`` (ints, sorted) plus the two borders."""
    lines = [0]
    for k in range(1, count):
        a = (k - 1 + 2 * lo) / count
        b = (k - 1 + 2 * hi) / count
        lines.append(round((a + fractions[k - 1] * (b - a)) * extent))
    lines.append(extent)
    return sorted(lines)


def _side(position: int, count: int) -> int:
    """-1 before the middle of ``count`` cells, 1 after it, 0 on it."""
    middle = (count - 1) / 2
    return -1 if position < middle else 1 if position > middle else 0


class MosaicDataset(KeyedDataset[T_co]):
    """Rank-aware YOLO-style mosaics over any map-style detection dataset.

    The partners, the main image's cell, the grid lines and the scales come from the
    rankaug key (see :mod:`rankaug.keyed`), never from global state: on four GPUs that
    all called ``torch.manual_seed(0)`` every rank gets different partner tiles, and a
    rerun repeats them bit for bit. See the module docstring for the geometry and the
    target handling, and :class:`MosaicRecord` for what each output records.

    Samples are dicts with albumentations' keys (``image``, ``bboxes``, the
    ``label_fields``, ``mask``, ``masks``, ``keypoints``) or ``(image, target)`` pairs
    with a torchvision-style dict target (``boxes``, ``labels``, ...); the output has
    the main sample's shape and image type, other keys of the main sample passed
    through.

    Args:
        dataset: A map-style dataset of detection or segmentation samples.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        output_size: The output image's size, an int or ``(height, width)``.
            Defaults to ``640``.
        grid: ``(rows, cols)``. Defaults to ``(2, 2)``.
        box_format: The format of the samples' boxes (also of the output's):
            ``"pascal_voc"``, ``"coco"``, ``"yolo"`` or ``"albumentations"``. Defaults to
            ``"pascal_voc"``.
        label_fields: Per-box fields kept aligned with the boxes. Defaults to
            ``("labels",)``.
        keypoint_fields: Per-keypoint fields kept aligned with the keypoints.
            Defaults to ``()``.
        canvas: ``"output"`` builds the ``output_size`` image; ``"yolo"`` builds
            YOLO's canvas of twice ``output_size``. Defaults to ``"output"``.
        center_range: Where the grid lines fall, as fractions (see the module
            docstring). Defaults to ``(0.25, 0.75)``.
        scale_mode: ``"keep"``, ``"fit"`` or ``"fill"``. Defaults to ``"keep"``.
        scale_range: Each tile's random scale factor range. Defaults to ``(1.0, 1.0)``.
        interpolation: An OpenCV interpolation flag for images. Defaults to
            ``cv2.INTER_LINEAR``. Masks always use ``cv2.INTER_NEAREST_EXACT``, the
            nearest neighbour aligned on pixel centres like the boxes (OpenCV's
            ``INTER_NEAREST`` is shifted by half a pixel).
        fill: The value of pixels no tile covers, a number or one per channel.
            Defaults to ``114``, as YOLO.
        fill_mask: The semantic mask's value there. Defaults to ``0``.
        replace: Draw partners with replacement. Defaults to ``True``.
        pool: The indices partners are drawn from (for example this rank's shard);
            ``None`` means the whole dataset. Defaults to ``None``.
        weights: Sampling weights for partners, one per pool entry (or per dataset
            item without a pool); ``None`` draws uniformly. Defaults to ``None``.
        p: The probability that a sample is a mosaic, or a function of the epoch
            returning it (picklable, for spawned workers). Defaults to ``1.0``.
        epochs: The total number of epochs, needed by ``close_mosaic``. Defaults to
            ``None``.
        close_mosaic: Switch mosaics off for the last ``close_mosaic`` epochs.
            Defaults to ``0``.
        min_area: Drop boxes smaller than this (output pixels). Defaults to ``0.0``.
        min_visibility: Drop boxes showing less than this fraction of their full
            size. Defaults to ``0.0``.
        min_width: Drop boxes narrower than this. Defaults to ``0.0``.
        min_height: Drop boxes lower than this. Defaults to ``0.0``.
        clip: Clip boxes that reach outside their image, or raise an error.
            Defaults to ``True``.
        record: The key the :class:`MosaicRecord` goes under in dict samples (and
            dict targets); ``None`` records nothing. Defaults to ``"mosaic"``.
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"``. Defaults to ``"stream"``.
        rank: The rank; ``None`` resolves it. Defaults to ``None``.
        stream: The key's stream word or name; ``None`` derives one. Defaults to ``None``.
        adapter: Converts samples; ``None`` uses :class:`~rankaug.samples.DefaultAdapter`.
            Defaults to ``None``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value, or the dataset is empty.

    Example:
        >>> from rankaug.datasets import SyntheticDetection
        >>> mosaic = MosaicDataset(SyntheticDetection(16, image_size=64), seed=0, output_size=96)
        >>> sample = mosaic[7]
        >>> sample["image"].shape, sample["mosaic"]["indices"][0]
        ((96, 96, 3), 7)
        >>> len(sample["bboxes"]) == len(sample["labels"])
        True
    """

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        output_size: int | tuple[int, int] = 640,
        grid: tuple[int, int] = (2, 2),
        box_format: BoxFormat = "pascal_voc",
        label_fields: Sequence[str] = ("labels",),
        keypoint_fields: Sequence[str] = (),
        canvas: CanvasMode = "output",
        center_range: tuple[float, float] = (0.25, 0.75),
        scale_mode: ScaleMode = "keep",
        scale_range: tuple[float, float] = (1.0, 1.0),
        interpolation: int = cv2.INTER_LINEAR,
        fill: float | Sequence[float] = 114,
        fill_mask: int = 0,
        replace: bool = True,
        pool: Sequence[int] | None = None,
        weights: Sequence[float] | None = None,
        p: float | Callable[[int], float] = 1.0,
        epochs: int | None = None,
        close_mosaic: int = 0,
        min_area: float = 0.0,
        min_visibility: float = 0.0,
        min_width: float = 0.0,
        min_height: float = 0.0,
        clip: bool = True,
        record: str | None = "mosaic",
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
    ) -> None:
        super().__init__(dataset, seed=seed, keying=keying, rank=rank, stream=stream)
        length = len(dataset)
        if length == 0:
            raise ValueError("dataset is empty: a mosaic needs at least one sample")
        self.output_size = _check_pair(output_size, "output_size")
        self.grid = _check_pair(grid, "grid")
        self.box_format: BoxFormat = check_box_format(box_format)
        self.label_fields = _check_fields(label_fields, "label_fields")
        self.keypoint_fields = _check_fields(keypoint_fields, "keypoint_fields")
        self.canvas = _check_choice(canvas, "canvas", ("output", "yolo"))
        self.center_range = _check_range(center_range, "center_range", low=0.0, high=1.0)
        self.scale_mode = _check_choice(scale_mode, "scale_mode", ("keep", "fit", "fill"))
        self.scale_range = _check_range(scale_range, "scale_range", low=1e-3, high=1e3)
        if interpolation not in _INTERPOLATIONS or isinstance(interpolation, bool):
            raise ValueError(
                f"interpolation must be one of cv2's {sorted(_INTERPOLATIONS.values())}, "
                f"got {interpolation!r}"
            )
        self.interpolation = int(interpolation)
        self.fill = self._check_fill(fill)
        if isinstance(fill_mask, bool) or not isinstance(fill_mask, int | np.integer):
            raise TypeError(f"fill_mask must be an int, got {fill_mask!r}")
        self.fill_mask = int(fill_mask)
        if not isinstance(replace, bool):
            raise TypeError(f"replace must be a bool, got {replace!r}")
        self.replace = replace
        self.pool = self._check_pool(pool, length)
        self._pool_position: dict[int, int] = {}
        if self.pool is not None:
            for position, value in enumerate(self.pool.tolist()):
                self._pool_position.setdefault(value, position)
        self.weights = self._check_weights(
            weights, length if self.pool is None else len(self.pool), self.pool is not None
        )
        partners = self.grid[0] * self.grid[1] - 1
        candidates = length if self.pool is None else len(self.pool)
        if not replace and 1 < candidates < partners:
            raise ValueError(
                f"replace=False needs {partners} distinct partners for a "
                f"{self.grid[0]}x{self.grid[1]} grid, the pool has {candidates} candidates"
            )
        if not callable(p):
            p = _check_probability(p, "p")
        self.p = p
        if epochs is not None:
            epochs = int(_check_pair(epochs, "epochs")[0])
        if isinstance(close_mosaic, bool) or not isinstance(close_mosaic, int | np.integer):
            raise TypeError(f"close_mosaic must be an int, got {close_mosaic!r}")
        if close_mosaic < 0:
            raise ValueError(f"close_mosaic must be >= 0, got {close_mosaic}")
        if close_mosaic and epochs is None:
            raise ValueError(
                f"close_mosaic={close_mosaic} needs epochs= (the total number of epochs)"
            )
        self.epochs = epochs
        self.close_mosaic = int(close_mosaic)
        self._constant_p = not callable(p) and not self.close_mosaic
        check_filter_args(
            min_area=min_area, min_visibility=min_visibility, min_width=min_width,
            min_height=min_height,
        )  # fmt: skip
        self.min_area = float(min_area)
        self.min_visibility = float(min_visibility)
        self.min_width = float(min_width)
        self.min_height = float(min_height)
        self._filters = any((self.min_area, self.min_visibility, self.min_width, self.min_height))
        if not isinstance(clip, bool):
            raise TypeError(f"clip must be a bool, got {clip!r}")
        self.clip = clip
        if record is not None and not isinstance(record, str):
            raise TypeError(f"record must be a key name or None, got {record!r}")
        self.record = record
        self.adapter = adapter = check_adapter(adapter)
        self._plain_dicts = type(adapter) is DefaultAdapter
        self._targets = DEFAULT_TARGETS | set(self.label_fields) | set(self.keypoint_fields)
        self._known_keys = self._targets | {"boxes"} | ({record} if record else set())
        height, width = self.output_size
        self._canvas_hw = (2 * height, 2 * width) if self.canvas == "yolo" else (height, width)
        rows, cols = self.grid
        self._cells = [divmod(cell, cols) for cell in range(rows * cols)]
        # per column, then per row: -1 anchors at the cell's far edge (left of the
        # middle), 1 at its near edge (right of it), 0 centres (the middle itself)
        self._anchors = [_side(k, cols) for k in range(cols)] + [
            _side(k, rows) for k in range(rows)
        ]

    # ------------------------------------------------------------- checks
    @staticmethod
    def _check_fill(fill: object) -> tuple[float, ...]:
        values = (fill,) if isinstance(fill, numbers.Real) else fill
        if isinstance(values, str) or not isinstance(values, Sequence) or not values:
            raise TypeError(f"fill must be a number or a sequence of numbers, got {fill!r}")
        out = []
        for value in values:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"fill must be a number or a sequence of numbers, got {fill!r}")
            if not math.isfinite(float(value)):
                raise ValueError(f"fill must be finite, got {fill!r}")
            out.append(float(value))
        return tuple(out)

    @staticmethod
    def _check_pool(pool: Sequence[int] | None, length: int) -> np.ndarray | None:
        if pool is None:
            return None
        array = np.asarray(pool)
        if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
            raise ValueError(f"pool must be a non-empty sequence of indices, got {pool!r}")
        if array.min() < 0 or array.max() >= length:
            raise ValueError(
                f"pool must hold indices in [0, {length}), got values from {array.min()} "
                f"to {array.max()}"
            )
        return array.astype(np.int64)

    @staticmethod
    def _check_weights(
        weights: Sequence[float] | None, count: int, pooled: bool
    ) -> np.ndarray | None:
        if weights is None:
            return None
        array = np.asarray(weights, dtype=np.float64)
        if array.shape != (count,):
            raise ValueError(
                f"weights must hold one weight per {'pool entry' if pooled else 'item'} "
                f"({count}), got shape {array.shape}"
            )
        if not np.isfinite(array).all() or (array < 0).any() or array.sum() <= 0:
            raise ValueError("weights must be finite, >= 0 and not all 0")
        cumulative: np.ndarray = np.cumsum(array)
        normalised: np.ndarray = cumulative / cumulative[-1]
        return normalised

    # -------------------------------------------------------------- draws
    def probability(self, epoch: int) -> float:
        """The probability that a sample of ``epoch`` is a mosaic.

        ``p`` (or ``p(epoch)``), and 0 in the last ``close_mosaic`` of ``epochs``.

        Args:
            epoch: The epoch.

        Returns:
            The probability.

        Raises:
            ValueError: If a callable ``p`` returns a value outside ``[0, 1]``.
        """
        if (
            self.close_mosaic
            and self.epochs is not None
            and epoch >= self.epochs - self.close_mosaic
        ):
            return 0.0
        if callable(self.p):
            return _check_probability(self.p(epoch), f"p({epoch})")
        return self.p

    def _draw(self, index: int, rng: np.random.Generator, epoch: int) -> _Plan:
        rows, cols = self.grid
        cells = rows * cols
        u = rng.random(2 * cells + rows + cols - 1).tolist()
        p = self.p if self._constant_p else self.probability(epoch)
        applied = u[0] < p
        main_cell = min(int(u[1] * cells), cells - 1)
        partners = self._partners(index, rng, u[2 : cells + 1])
        lines = u[cells + 1 : cells + rows + cols - 1]
        lo, hi = self.scale_range
        scales = [lo + (hi - lo) * x for x in u[cells + rows + cols - 1 :]]
        return _Plan(
            applied, main_cell, [index, *partners], lines[: cols - 1], lines[cols - 1 :], scales
        )

    def _partners(self, index: int, rng: np.random.Generator, uniforms: list[float]) -> list[int]:
        pool = self.pool
        count = len(uniforms)
        if pool is None:
            size, own = len(self.dataset), index
        else:
            size, own = len(pool), self._pool_position.get(index, -1)
        if size == 1:
            positions = [0] * count
        elif not self.replace:
            if own >= 0 and size - 1 < count:
                raise ValueError(
                    f"replace=False needs {count} partners besides index {index}, the pool "
                    f"has {size - 1}"
                )
            if self.weights is None:
                picks = rng.choice(size - (own >= 0), count, replace=False).tolist()
                positions = [p + (0 <= own <= p) for p in picks]
            else:
                positions = self._weighted(rng, uniforms, own)
        elif self.weights is None:
            others = size - (own >= 0)
            positions = [min(int(x * others), others - 1) for x in uniforms]
            if own >= 0:
                positions = [p + (p >= own) for p in positions]
        else:
            positions = self._weighted(rng, uniforms, own)
        if pool is None:
            return positions
        return [int(pool[p]) for p in positions]

    def _weighted(self, rng: np.random.Generator, uniforms: list[float], own: int) -> list[int]:
        """Inverse-CDF draws from ``uniforms``.

        A draw on the main image (or, without replacement, on a partner already drawn) is
        drawn again with ``rng.random()``.
        """
        cdf = self.weights
        assert cdf is not None
        last = len(cdf) - 1
        picks = np.searchsorted(cdf, uniforms, side="right").tolist()
        for slot, position in enumerate(picks):
            rejected = 0
            while (
                position > last
                or position == own
                or (not self.replace and position in picks[:slot])
            ):
                if position > last:
                    position = last
                    continue
                rejected += 1
                if rejected > _MAX_REJECTIONS:
                    raise ValueError(
                        "weights put (almost) all their mass on the main image or on too "
                        "few items to draw distinct partners; spread the weights or allow "
                        "replace=True"
                    )
                position = int(np.searchsorted(cdf, rng.random(), side="right"))
            picks[slot] = position
        return [int(p) for p in picks]

    # ------------------------------------------------------------- tiles
    def _tile(self, index: int, sample: Any, main: bool) -> tuple[_Tile, Any]:
        """Read one tile's image and targets, checking them.

        Only the main sample's shape is rebuilt, so a partner that is a plain dict with a
        numpy image is read as it is, without the adapter.
        """
        if main or not self._plain_dicts or type(sample) is not dict:
            data, state = self.adapter.unpack(sample, self._targets)
        elif type(sample.get("image")) is np.ndarray:
            data, state = sample, None
        else:
            data, state = self.adapter.unpack(sample, self._targets)
        where = f"dataset[{index}]"
        image = data["image"]
        height, width = image.shape[:2]
        if height == 0 or width == 0:
            raise ValueError(f"{where} image is empty, shape {image.shape}")
        raw = data.get("bboxes")
        if raw is None:
            boxes = _NO_BOXES
        else:
            if type(raw) is np.ndarray and raw.dtype == np.float64 and raw.shape[1:] == (4,):
                boxes = raw  # already (N, 4) float64: read, never written
            else:
                boxes = as_box_array(raw, name=f"{where} bboxes")
            if self.box_format in ("yolo", "albumentations"):  # normalised: per image size
                boxes = to_xyxy(boxes, self.box_format, (height, width))
        count = len(boxes)
        fields = {}
        for field in self.label_fields:
            value = data.get(field)
            if value is None:
                if count:
                    raise ValueError(
                        f"{where} has {count} boxes but no {field!r} field (label_fields="
                        f"{self.label_fields}); pass label_fields=() for boxes without labels"
                    )
                value = np.zeros((0,), dtype=np.int64)
            array = np.asarray(value)
            if array.ndim == 0 or len(array) != count:
                raise ValueError(
                    f"{where} {field!r} has {array.size if array.ndim else 'a scalar'} "
                    f"entries for {count} boxes"
                )
            fields[field] = array
        if count and (type(sample) is not dict or not sample.keys() <= self._known_keys):
            self._check_unaligned(where, sample, data, count)
        mask = data.get("mask")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape[:2] != (height, width):
                raise ValueError(
                    f"{where} mask has shape {mask.shape}, its image {(height, width)}"
                )
        masks = data.get("masks")
        if masks is not None:
            masks = np.asarray(masks)
            if masks.ndim != 3 or masks.shape[0] != count or masks.shape[1:] != (height, width):
                raise ValueError(
                    f"{where} masks must have shape ({count}, {height}, {width}) (one per "
                    f"box), got {masks.shape}"
                )
        keypoints = data.get("keypoints")
        kp_fields = {}
        if keypoints is not None:
            keypoints = np.asarray(keypoints, dtype=np.float64)
            if keypoints.ndim != 2 or keypoints.shape[1] < 2:
                raise ValueError(
                    f"{where} keypoints must have shape (K, 2+), got {keypoints.shape}"
                )
            for field in self.keypoint_fields:
                array = np.asarray(data.get(field, np.zeros((0,))))
                if array.ndim == 0 or len(array) != len(keypoints):
                    raise ValueError(
                        f"{where} {field!r} must have one entry per keypoint ({len(keypoints)})"
                    )
                kp_fields[field] = array
        tile = _Tile(index, image, boxes, fields, mask, masks, keypoints, kp_fields)
        return tile, state

    def _check_unaligned(
        self, where: str, sample: Any, data: Mapping[str, Any], count: int
    ) -> None:
        """Refuse per-box values that are not in label_fields: they would go stale."""
        if not count:
            return
        extra = sample[1] if isinstance(sample, tuple | list) else sample
        if type(extra) is not dict and not isinstance(extra, Mapping):
            return
        if extra.keys() <= self._known_keys:
            return
        for key, value in extra.items():
            name = "bboxes" if key == "boxes" else key
            if name in self._targets or key == self.record:
                continue
            shape = getattr(value, "shape", None)
            if shape is not None and len(shape) >= 1 and shape[0] == count:
                raise ValueError(
                    f"{where} {key!r} looks like a per-box field ({shape[0]} entries for "
                    f"{count} boxes) that is not in label_fields={self.label_fields}: the "
                    "mosaic would leave it misaligned; add it to label_fields or drop it"
                )

    # -------------------------------------------------------------- build
    def augment(self, context: SampleContext, keyed: KeyedRandom) -> T_co:
        """Draw the mosaic's parameters from the key, then build it."""
        rng = keyed.generator
        state = rng.bit_generator.state["state"]
        with context.guard("mosaic"):
            plan = self._draw(context.index, rng, context.epoch)
        return self._build(context, plan, state)

    def _build(self, context: SampleContext, plan: _Plan, state: Mapping[str, int]) -> T_co:
        used = plan.indices if plan.applied else plan.indices[:1]
        samples = [self.load(i, context) for i in used]
        with context.guard("mosaic"):
            main_tile, main_state = self._tile(used[0], samples[0], True)
            tiles = [main_tile]
            for i, sample in zip(used[1:], samples[1:], strict=True):
                tiles.append(self._tile(i, sample, False)[0])
            self._check_tiles(tiles)
            if plan.applied:
                data, record = self._compose(tiles, plan)
            else:
                data, record = self._letterbox(tiles[0], plan)
            record["epoch"] = context.epoch
            record["state"] = f"{state['state']:x}:{state['inc']:x}"
            out: T_co = self._repack(data, main_state, samples[0], record)
        return out

    def _check_tiles(self, tiles: list[_Tile]) -> None:
        main = tiles[0]
        channels = 1 if main.image.ndim == 2 else main.image.shape[2]
        if len(self.fill) not in (1, channels):
            raise ValueError(
                f"fill has {len(self.fill)} values, dataset[{main.index}] image has "
                f"{channels} channels"
            )
        expected = _signature(main)
        for tile in tiles[1:]:
            if _signature(tile) == expected:
                continue
            if tile.image.shape[2:] != main.image.shape[2:] or tile.image.dtype != main.image.dtype:
                raise ValueError(
                    f"dataset[{tile.index}] image has shape {tile.image.shape} and dtype "
                    f"{tile.image.dtype}, but the main image dataset[{main.index}] has "
                    f"{main.image.shape} and {main.image.dtype}: tiles of a mosaic need the "
                    "same channels and dtype"
                )
            raise ValueError(
                f"dataset[{tile.index}] and dataset[{main.index}] disagree on having a mask, "
                "instance masks or keypoints: all tiles of a mosaic need the same targets"
            )

    def _new_image(self, like: np.ndarray) -> np.ndarray:
        height, width = self._canvas_hw
        shape = (height, width) if like.ndim == 2 else (height, width, like.shape[2])
        return np.empty(shape, dtype=like.dtype)

    def _fill(self, out: np.ndarray, y0: int, y1: int, x0: int, x1: int) -> None:
        if y1 > y0 and x1 > x0:
            out[y0:y1, x0:x1] = self.fill if len(self.fill) > 1 else self.fill[0]

    def _compose(self, tiles: list[_Tile], plan: _Plan) -> tuple[dict[str, Any], MosaicRecord]:
        rows, cols = self.grid
        height, width = self._canvas_hw
        ref_h, ref_w = self.output_size
        lo, hi = self.center_range
        xs = _lines(plan.fx, cols, width, lo, hi)
        ys = _lines(plan.fy, rows, height, lo, hi)
        main_cell = plan.main_cell
        order = [main_cell, *range(main_cell), *range(main_cell + 1, rows * cols)]
        main = tiles[0]
        image = self._new_image(main.image)
        mask = None
        if main.mask is not None:
            mask = np.full((height, width, *main.mask.shape[2:]), self.fill_mask, main.mask.dtype)
        mode, interpolation, anchors = self.scale_mode, self.interpolation, self._anchors
        parts: list[_Placed] = []
        cells, scales, src, dst = [], [], [], []
        for tile, cell, factor in zip(tiles, order, plan.scales, strict=True):
            row, col = self._cells[cell]
            cx0, cx1, cy0, cy1 = xs[col], xs[col + 1], ys[row], ys[row + 1]
            th, tw = tile.image.shape[:2]
            if mode == "keep":
                scale = min(ref_h / th, ref_w / tw) * factor
            elif mode == "fit":
                scale = min((cy1 - cy0) / th, (cx1 - cx0) / tw) * factor
            else:
                scale = max((cy1 - cy0) / th, (cx1 - cx0) / tw) * factor
            sw, sh = max(1, round(tw * scale)), max(1, round(th * scale))
            # anchored towards the middle of the mosaic (see the module docstring)
            ax, ay = anchors[col], anchors[cols + row]
            ox = cx1 - sw if ax < 0 else cx0 if ax > 0 else cx0 + (cx1 - cx0 - sw) // 2
            oy = cy1 - sh if ay < 0 else cy0 if ay > 0 else cy0 + (cy1 - cy0 - sh) // 2
            dx0, dx1 = max(ox, cx0), min(ox + sw, cx1)
            dy0, dy1 = max(oy, cy0), min(oy + sh, cy1)
            cells.append((row, col))
            scales.append(scale)
            if dx1 <= dx0 or dy1 <= dy0:
                self._fill(image, cy0, cy1, cx0, cx1)
                src.append((0, 0, 0, 0))
                dst.append((cx0, cy0, cx0, cy0))
                parts.append(_Placed.empty(tile))
                continue
            # whole source pixels for the visible window (rounded to the nearest)
            step_x, step_y = tw / sw, th / sh
            sx0 = min(max(round((dx0 - ox) * step_x), 0), tw - 1)
            sx1 = min(max(round((dx1 - ox) * step_x), sx0 + 1), tw)
            sy0 = min(max(round((dy0 - oy) * step_y), 0), th - 1)
            sy1 = min(max(round((dy1 - oy) * step_y), sy0 + 1), th)
            if dx0 != cx0 or dy0 != cy0 or dx1 != cx1 or dy1 != cy1:  # fill what stays uncovered
                self._fill(image, cy0, dy0, cx0, cx1)
                self._fill(image, dy1, cy1, cx0, cx1)
                self._fill(image, dy0, dy1, cx0, dx0)
                self._fill(image, dy0, dy1, dx1, cx1)
            src.append((sx0, sy0, sx1, sy1))
            dst.append((dx0, dy0, dx1, dy1))
            placed = _Placed(tile, sx0, sy0, sx1, sy1, dx0, dy0, dx1, dy1)
            placed.paint(image, tile.image, interpolation)
            if mask is not None and tile.mask is not None:
                placed.paint(mask, tile.mask, cv2.INTER_NEAREST_EXACT)
            parts.append(placed)
        record: MosaicRecord = {
            "applied": True,
            "indices": [t.index for t in tiles],
            "cells": cells,
            "center": (xs[cols // 2], ys[rows // 2]),
            "splits_x": xs[1:-1],
            "splits_y": ys[1:-1],
            "scales": scales,
            "src": src,
            "dst": dst,
            "epoch": 0,
            "state": "",
        }
        return self._targets_out(parts, image, mask), record

    def _letterbox(self, tile: _Tile, plan: _Plan) -> tuple[dict[str, Any], MosaicRecord]:
        height, width = self._canvas_hw
        ref_h, ref_w = self.output_size
        th, tw = tile.image.shape[:2]
        scale = min(ref_h / th, ref_w / tw)
        sw, sh = max(1, round(tw * scale)), max(1, round(th * scale))
        dx0, dy0 = (width - sw) // 2, (height - sh) // 2
        image = self._new_image(tile.image)
        self._fill(image, 0, height, 0, width)
        mask = None
        if tile.mask is not None:
            mask = np.full((height, width, *tile.mask.shape[2:]), self.fill_mask, tile.mask.dtype)
        placed = _Placed(tile, 0, 0, tw, th, dx0, dy0, dx0 + sw, dy0 + sh)
        placed.paint(image, tile.image, self.interpolation)
        if mask is not None and tile.mask is not None:
            placed.paint(mask, tile.mask, cv2.INTER_NEAREST_EXACT)
        record: MosaicRecord = {
            "applied": False,
            "indices": [tile.index],
            "cells": [(0, 0)],
            "center": (width // 2, height // 2),
            "splits_x": [],
            "splits_y": [],
            "scales": [sw / tw],
            "src": [(0, 0, tw, th)],
            "dst": [(dx0, dy0, dx0 + sw, dy0 + sh)],
            "epoch": 0,
            "state": "",
        }
        return self._targets_out([placed], image, mask), record

    def _checked_boxes(
        self, tiles: list[_Tile], counts: list[int], boxes: np.ndarray
    ) -> np.ndarray:
        """Validate (clip or refuse) each tile's pixel boxes against its image."""
        checked, start = [], 0
        for tile, count in zip(tiles, counts, strict=True):
            checked.append(
                validate_xyxy(
                    boxes[start : start + count],
                    tile.image.shape[:2],
                    name=f"dataset[{tile.index}] bboxes (as pixel x_min, y_min, x_max, y_max)",
                    clip=self.clip,
                )
            )
            start += count
        return np.concatenate(checked)

    def _targets_out(
        self, parts: list[_Placed], image: np.ndarray, mask: np.ndarray | None
    ) -> dict[str, Any]:
        """Map every tile's targets onto the output, filter them, and gather the data.

        All tiles' boxes go through one vectorised pass. One check covers the usual case
        of boxes inside their images; only when it fails does each tile go through
        :func:`~rankaug.boxes.validate_xyxy`, which clips what reaches a little outside
        its image or raises an error naming the index, field and row.
        """
        height, width = self._canvas_hw
        tiles = [part.tile for part in parts]
        main = tiles[0]
        counts = [len(t.boxes) for t in tiles]
        data: dict[str, Any] = {"image": image}
        if any(counts):
            boxes = np.concatenate([t.boxes for t in tiles])
            if self.box_format == "coco":
                boxes[:, 2:] += boxes[:, :2]
            # per box: image width, height, then the tile's window (see _Placed.window)
            table = np.array([part.window for part in parts], np.float64).repeat(counts, axis=0)
            # One product gives x0, y0, w - x1, h - y1, x1 - x0, y1 - y0 (all >= 0) and
            # w - x0, h - y0, x1, y1 (all > 0: not entirely outside); NaN fails both.
            ext = np.concatenate((boxes, table[:, :2]), axis=1)
            margins = (ext @ _MARGINS).min(axis=0).tolist()
            if not (min(margins[:6]) >= 0 and min(margins[6:]) > 0):
                boxes = self._checked_boxes(tiles, counts, boxes)
            full = boxes * table[:, 2:6] + table[:, 6:10]  # source pixels -> output pixels
            clipped = np.minimum(np.maximum(full, table[:, 10:14]), table[:, 14:18])
            if self._filters:
                area = (full[:, 2] - full[:, 0]) * (full[:, 3] - full[:, 1])
                keep = keep_mask(
                    clipped,
                    area,
                    min_area=self.min_area,
                    min_visibility=self.min_visibility,
                    min_width=self.min_width,
                    min_height=self.min_height,
                )
            else:  # keep_mask's rule without thresholds: positive width and height
                keep = cast(np.ndarray, (clipped[:, 2:] > clipped[:, :2]).all(axis=1))
            kept = clipped[keep]
        else:
            keep = np.zeros(0, dtype=bool)
            kept = _NO_BOXES
        if self.box_format != "pascal_voc":
            kept = from_xyxy(kept, self.box_format, (height, width))
        data["bboxes"] = kept
        for field in self.label_fields:
            data[field] = np.concatenate([t.fields[field] for t in tiles])[keep]
        if mask is not None:
            data["mask"] = mask
        if main.masks is not None:
            data["masks"] = self._instance_masks(parts, keep, list(itertools.accumulate(counts)))
        if main.keypoints is not None:
            points, fields = zip(*(part.keypoints() for part in parts), strict=True)
            data["keypoints"] = np.concatenate(points)
            for field in self.keypoint_fields:
                data[field] = np.concatenate([f[field] for f in fields])
        return data

    def _instance_masks(
        self, parts: list[_Placed], keep: np.ndarray, ends: list[int]
    ) -> np.ndarray:
        height, width = self._canvas_hw
        dtype = parts[0].tile.masks.dtype  # type: ignore[union-attr]
        kept = []
        for part, start, end in zip(parts, [0, *ends[:-1]], ends, strict=True):
            sources = part.tile.masks
            assert sources is not None
            for source in sources[keep[start:end]]:
                target = np.zeros((height, width), dtype=dtype)
                part.paint(target, source, cv2.INTER_NEAREST_EXACT)
                kept.append(target)
        return np.stack(kept) if kept else np.zeros((0, height, width), dtype=dtype)

    def _repack(self, data: dict[str, Any], state: Any, main: Any, record: MosaicRecord) -> Any:
        if isinstance(main, Mapping) and "bboxes" not in main:
            data.pop("bboxes")
            for field in self.label_fields:
                if field not in main:
                    data.pop(field, None)
        if (
            isinstance(main, tuple | list)
            and isinstance(main[1], Mapping)
            and "boxes" not in main[1]
        ):
            data.pop("bboxes")
        out = self.adapter.repack(data, state)
        if self.record is not None:
            if isinstance(out, dict):
                out[self.record] = record
            elif isinstance(out, tuple | list) and isinstance(out[1], dict):
                out[1][self.record] = record
        return out

    # ------------------------------------------------------------- replay
    def replay(self, record: Mapping[str, Any], index: int | None = None) -> T_co:
        """Rebuild one output from its :class:`MosaicRecord`, bit for bit.

        Args:
            record: The record of an earlier output.
            index: Its index; ``None`` takes the record's main index. Defaults to ``None``.

        Returns:
            The same sample as when the record was made.

        >>> from rankaug.datasets import SyntheticDetection
        >>> mosaic = MosaicDataset(SyntheticDetection(8, image_size=48), seed=0, output_size=64)
        >>> first, second = mosaic[3], mosaic[3]  # stream keying: the stream moves on
        >>> again = mosaic.replay(second["mosaic"])
        >>> bool((again["image"] == second["image"]).all())
        True
        """
        state_text = str(record["state"])
        main = int(record["indices"][0]) if index is None else index
        state_value, inc = (int(part, 16) for part in state_text.split(":"))
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": state_value, "inc": inc},
            "has_uint32": 0,
            "uinteger": 0,
        }
        epoch = int(record["epoch"])
        plan = self._draw(main, np.random.Generator(bit_generator), epoch)
        state = {"state": state_value, "inc": inc}
        context = SampleContext(main, rank=self._rank_now(), worker_id=0, epoch=epoch)
        return self._build(context, plan, state)


def _signature(tile: _Tile) -> tuple[object, ...]:
    """What must match across the tiles of one mosaic."""
    image = tile.image
    return (
        image.shape[2:],  # its length tells HxW from HxWxC
        image.dtype,
        tile.mask is None,
        tile.masks is None,
        tile.keypoints is None,
    )


class _Placed:
    """One tile's source window mapped onto its output window."""

    __slots__ = (
        "dx0", "dx1", "dy0", "dy1", "kx", "ky", "sx0", "sx1", "sy0", "sy1", "tile", "window",
    )  # fmt: skip

    def __init__(
        self, tile: _Tile, sx0: int, sy0: int, sx1: int, sy1: int, dx0: int, dy0: int,
        dx1: int, dy1: int,
    ) -> None:  # fmt: skip
        self.tile = tile
        self.sx0, self.sy0, self.sx1, self.sy1 = sx0, sy0, sx1, sy1
        self.dx0, self.dy0, self.dx1, self.dy1 = dx0, dy0, dx1, dy1
        self.kx = kx = (dx1 - dx0) / (sx1 - sx0) if sx1 > sx0 else 0.0
        self.ky = ky = (dy1 - dy0) / (sy1 - sy0) if sy1 > sy0 else 0.0
        th, tw = tile.image.shape[:2]
        # One row of the per-box table: the tile's width and height, then as (x, y, x, y)
        # the scale k and offset b of the map x -> k * x + b (which takes the source
        # window onto the output window), the output window's start and its end.
        bx, by = dx0 - sx0 * kx, dy0 - sy0 * ky
        self.window = (
            tw, th, kx, ky, kx, ky, bx, by, bx, by, dx0, dy0, dx0, dy0, dx1, dy1, dx1, dy1,
        )  # fmt: skip

    @classmethod
    def empty(cls, tile: _Tile) -> _Placed:
        return cls(tile, 0, 0, 0, 0, 0, 0, 0, 0)

    def paint(self, out: np.ndarray, source: np.ndarray, interpolation: int) -> None:
        """Resize the source window straight into the output window (no full-tile copy)."""
        crop = source[self.sy0 : self.sy1, self.sx0 : self.sx1]
        target = out[self.dy0 : self.dy1, self.dx0 : self.dx1]
        if crop.shape[:2] == target.shape[:2]:
            target[...] = crop.reshape(target.shape)
            return
        size = (self.dx1 - self.dx0, self.dy1 - self.dy0)
        resized = cv2.resize(crop, size, target, 0.0, 0.0, interpolation)
        if resized is not target:  # OpenCV could not write in place (e.g. HxWx1)
            target[...] = resized.reshape(target.shape)

    def _map(self, xy: np.ndarray) -> np.ndarray:
        out = np.empty_like(xy)
        out[:, 0::2] = (xy[:, 0::2] - self.sx0) * self.kx + self.dx0
        out[:, 1::2] = (xy[:, 1::2] - self.sy0) * self.ky + self.dy0
        return out

    def keypoints(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        tile = self.tile
        points = tile.keypoints
        assert points is not None
        if self.kx == 0.0:
            keep = np.zeros(len(points), dtype=bool)
        else:
            moved = points.copy()
            moved[:, :2] = self._map(points[:, :2])
            x, y = moved[:, 0], moved[:, 1]
            keep = (x >= self.dx0) & (x < self.dx1) & (y >= self.dy0) & (y < self.dy1)
            points = moved
        return points[keep], {k: v[keep] for k, v in tile.keypoint_fields.items()}
