"""A mosaic's configuration, checked once into a frozen object.

:meth:`MosaicConfig.build` checks every argument of :class:`~rankaug.MosaicDataset`
but the sampling ones (those go to :class:`~rankaug._multi.partners.PartnerSampler`) through
:mod:`rankaug.checks`, and precomputes what every sample would otherwise recompute:
the canvas size, the cells, the anchors, the target keys. What can only be checked
against data (a fill value against the image's dtype, the default fill refused for float
images) is checked by :meth:`MosaicConfig.check_fill` on the first sample of each dtype.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, cast, overload

import cv2
import numpy as np

from rankaug import checks
from rankaug.boxes import BoxFormat
from rankaug.hsv import RECORD_KEY, HSVJitter
from rankaug.mosaic.affine import MosaicAffine, check_flip_index, draw_count
from rankaug.params import Targets

__all__ = ["CanvasMode", "CellOrders", "MosaicConfig", "MosaicGrid", "ScaleMode"]

CanvasMode = Literal["output", "yolo"]
"""The mosaic's canvas: ``"output"`` is the ``output_size`` image; ``"yolo"`` is YOLO's
canvas of twice ``output_size``, for an affine applied afterwards."""
ScaleMode = Literal["keep", "fit", "fill"]
"""How a tile is scaled: ``"keep"`` fits it whole in ``output_size`` keeping its aspect
ratio (YOLO's); ``"fit"`` fits it in its cell; ``"fill"`` covers its cell."""

INTERPOLATIONS: Final = {
    cv2.INTER_NEAREST: "cv2.INTER_NEAREST",
    cv2.INTER_NEAREST_EXACT: "cv2.INTER_NEAREST_EXACT",
    cv2.INTER_LINEAR: "cv2.INTER_LINEAR",
    cv2.INTER_CUBIC: "cv2.INTER_CUBIC",
    cv2.INTER_AREA: "cv2.INTER_AREA",
    cv2.INTER_LANCZOS4: "cv2.INTER_LANCZOS4",
}
"""The OpenCV interpolation flags a mosaic accepts for images."""
_CANVASES: Final[tuple[CanvasMode, ...]] = ("output", "yolo")
_SCALE_MODES: Final[tuple[ScaleMode, ...]] = ("keep", "fit", "fill")
_TABLED: Final = 64
"""Up to this many cells :class:`CellOrders` keeps its orders (a lookup per sample)."""


@dataclass(frozen=True, slots=True)
class MosaicGrid:
    """How :class:`~rankaug.MosaicDataset` lays its tiles out and paints them.

    Args:
        grid: ``(rows, cols)``, each at most the output's size in pixels (checked by the
            wrapper: every cell at least one pixel).
        canvas: ``"output"`` builds the ``output_size`` image; ``"yolo"`` builds YOLO's
            canvas of twice ``output_size`` (for an affine applied afterwards).
        center_range: Where the grid lines fall, as fractions of the output (for a 2x2
            grid, YOLO's mosaic centre; see :mod:`rankaug.mosaic`).
        scale_mode: ``"keep"`` fits the whole tile in ``output_size`` keeping its aspect
            ratio, as YOLO; ``"fit"`` fits it in its cell; ``"fill"`` covers its cell.
        scale_range: Each tile's random scale factor range.
        fill: The value of pixels no tile covers, a number or one per channel, in the
            images' range; it must fit their dtype (checked at the first sample).
            ``None`` (the default, kept as ``None``): 114, YOLO's grey, for integer
            images, while float images (whose range rankaug does not assume) need one
            given.
        fill_mask: The semantic mask's value there (it must fit the masks' dtype).
        interpolation: An OpenCV interpolation flag for images. Masks always use
            ``cv2.INTER_NEAREST_EXACT``, the nearest neighbour aligned on pixel centres
            like the boxes (OpenCV's ``INTER_NEAREST`` is shifted by half a pixel).
            Under an affine that rotates or shears, ``cv2.warpAffine`` resamples:
            ``INTER_AREA`` is taken as ``INTER_LINEAR`` there, and both nearest
            neighbours are aligned on pixel centres.
        flip: Without an affine, the probability that the output is mirrored left to
            right (drawn from the key, recorded under ``"flip"``): each tile resampled
            mirrored into its mirrored window (no pass of its own), its boxes, masks,
            polygons and keypoints mirrored. With
            ``affine=`` the flip is the affine's (``MosaicAffine(flip=...)``).
        flip_index: For keypoints, which of them swap left and right when mirrored
            (ultralytics' ``flip_idx``, see :class:`~rankaug.MosaicAffine`; without it a
            flip of keypoints warns once).

    Raises:
        TypeError: If a field has the wrong type.
        ValueError: If a field has a wrong value.

    >>> MosaicGrid(grid=(3, 3), fill=0).fill, MosaicGrid().fill
    ((0.0,), None)
    """

    grid: tuple[int, int] = (2, 2)
    canvas: CanvasMode = "output"
    center_range: tuple[float, float] = (0.25, 0.75)
    scale_mode: ScaleMode = "keep"
    scale_range: tuple[float, float] = (1.0, 1.0)
    fill: float | Sequence[float] | None = None
    fill_mask: int = 0
    interpolation: int = cv2.INTER_LINEAR
    flip: float = 0.0
    flip_index: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        values = {
            "grid": checks.int_pair(self.grid, "grid"),
            "canvas": checks.choice(self.canvas, "canvas", _CANVASES),
            "center_range": checks.real_range(self.center_range, "center_range", low=0.0, high=1.0),
            "scale_mode": checks.choice(self.scale_mode, "scale_mode", _SCALE_MODES),
            "scale_range": checks.real_range(self.scale_range, "scale_range", low=1e-3, high=1e3),
            "fill": None if self.fill is None else checks.fill_values(self.fill, "fill"),
            "fill_mask": checks.integer(self.fill_mask, "fill_mask"),
            "interpolation": checks.int_choice(self.interpolation, "interpolation", INTERPOLATIONS),
            "flip": checks.probability(self.flip, "flip"),
        }
        if self.flip_index is not None:
            values["flip_index"] = check_flip_index(self.flip_index, "flip_index")
        for name, value in values.items():
            object.__setattr__(self, name, value)


class CellOrders(Sequence[tuple[int, ...]]):
    """Per main cell, the cells in the plan's order: the main cell, then the others in order.

    A table of them holds the square of the cells (16.8 million for a 64x64 grid: 638 MB
    and a second to build), so beyond 64 cells each order is made when asked, the same
    tuple; up to 64 they are kept. Equal by the number of cells; pickled as it.

    Args:
        cells: The number of cells.

    Raises:
        TypeError: If ``cells`` is not an integer.
        ValueError: If it is negative.

    >>> CellOrders(4)[2], len(CellOrders(4))
    ((2, 0, 1, 3), 4)
    """

    __slots__ = ("_cells", "_table")

    def __init__(self, cells: int) -> None:
        self._cells = cells = checks.integer(cells, "cells", low=0)
        self._table = (
            tuple(_order(main, cells) for main in range(cells)) if cells <= _TABLED else None
        )

    def __len__(self) -> int:
        return self._cells

    @overload
    def __getitem__(self, main: int) -> tuple[int, ...]: ...

    @overload
    def __getitem__(self, main: slice) -> tuple[tuple[int, ...], ...]: ...

    def __getitem__(self, main: int | slice) -> tuple[int, ...] | tuple[tuple[int, ...], ...]:
        cells = self._cells
        if isinstance(main, slice):
            return tuple(self[cell] for cell in range(cells)[main])
        cell = operator.index(main)
        cell = cell + cells if cell < 0 else cell
        if not 0 <= cell < cells:
            raise IndexError(f"cell {main} out of range for {cells} cells")
        table = self._table
        return _order(cell, cells) if table is None else table[cell]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CellOrders) and other._cells == self._cells

    def __hash__(self) -> int:
        return hash((CellOrders, self._cells))

    def __repr__(self) -> str:
        return f"CellOrders({self._cells})"

    def __reduce__(self) -> tuple[type[CellOrders], tuple[int]]:
        return CellOrders, (self._cells,)


@dataclass(frozen=True, slots=True)
class MosaicConfig:
    """Everything a mosaic needs besides its data, checked (see :meth:`build`).

    Attributes:
        output_size: ``(height, width)`` of the output.
        layout: The tiles' layout and painting (:class:`MosaicGrid`).
        targets: The box handling, its format resolved (:class:`~rankaug.params.Targets`).
        p: The probability of a mosaic, or a function of the epoch.
        epochs: The total number of epochs, or ``None``.
        close_mosaic: How many last epochs have no mosaic.
        record: The record's key, or ``None``.
        affine: YOLO's random affine fused into the mosaic, or ``None``.
        color: The colour jitter applied to each output (:class:`~rankaug.HSVJitter`),
            or ``None``.
        canvas_hw: ``(height, width)`` of the canvas the tiles are laid out on (twice
            ``output_size`` for YOLO's, also with an affine).
        image_hw: ``(height, width)`` of the image made: the canvas, or ``output_size``
            with an affine (which maps the canvas onto it).
        cells: ``(row, col)`` of each cell, row-major.
        anchors: Per column, then per row: -1 anchors a tile at its cell's far edge,
            1 at its near edge, 0 centres it.
        target_keys: The keys a sample's adapter hands out.
        box_format: ``targets.box_format``, resolved.
        fill: ``layout.fill``, one value or one per channel (114 for ``None``).
        fill_default: Whether ``layout.fill`` is ``None``: 114, for integer images only.
        filters: Whether any box filter is set.
        constant_p: Whether the probability is the same in every epoch.
        line_steps: Per axis (columns' lines, then rows'), each interior grid line's
            range as ``(start, length)`` fractions (see :func:`~rankaug.mosaic.layout.lines`).
        orders: Per main cell, the cells in the plan's order (the main image's first;
            :class:`CellOrders`, made when asked for large grids).
        places: Per cell, ``(row, col, column anchor, row anchor)``.
        draws: How many uniforms a sample's plan draws, ``(block, affine, flip,
            after)``: the first block's, the affine's, the plain flip's, and all those
            drawn after the partners (:func:`~rankaug.mosaic.plan.draw_plan`).
    """

    output_size: tuple[int, int]
    layout: MosaicGrid
    targets: Targets
    p: float | Callable[[int], float]
    epochs: int | None
    close_mosaic: int
    record: str | None
    affine: MosaicAffine | None
    color: HSVJitter | None
    canvas_hw: tuple[int, int]
    image_hw: tuple[int, int]
    cells: tuple[tuple[int, int], ...]
    anchors: tuple[int, ...]
    target_keys: frozenset[str]
    box_format: BoxFormat
    fill: tuple[float, ...]
    fill_default: bool
    filters: bool
    constant_p: bool
    line_steps: tuple[tuple[tuple[float, float], ...], tuple[tuple[float, float], ...]]
    orders: CellOrders
    places: tuple[tuple[int, int, int, int], ...]
    draws: tuple[int, int, int, int]

    @classmethod
    def build(
        cls,
        *,
        output_size: object = 640,
        layout: object = None,
        targets: object = None,
        p: object = 1.0,
        epochs: object = None,
        close_mosaic: object = 0,
        record: object = "mosaic",
        affine: object = None,
        color: object = None,
    ) -> MosaicConfig:
        """Check the arguments of :class:`~rankaug.MosaicDataset` (they mean the same here).

        ``targets`` must have its ``box_format`` resolved (``Targets.resolve``).

        Raises:
            TypeError: If an argument has the wrong type.
            ValueError: If an argument has a wrong value.

        >>> config = MosaicConfig.build(output_size=64, layout=MosaicGrid(canvas="yolo"))
        >>> config.canvas_hw, config.cells
        ((128, 128), ((0, 0), (0, 1), (1, 0), (1, 1)))
        """
        size = checks.int_pair(output_size, "output_size")
        grid = checks.instance(layout, "layout", MosaicGrid, what="a rankaug.MosaicGrid")
        grid = MosaicGrid() if grid is None else grid
        given = checks.instance(targets, "targets", Targets, what="a rankaug.Targets")
        boxes = (Targets() if given is None else given).resolve(None)
        rows, cols = grid.grid
        if rows > size[0] or cols > size[1]:  # cells of no pixel: a hang for a huge grid
            raise ValueError(
                f"layout.grid must be (rows, cols) with rows <= {size[0]} and cols <= "
                f"{size[1]} (each cell at least one pixel of output_size={size}), got {grid.grid}"
            )
        probability = checks.schedule(p, "p")
        total = None if epochs is None else checks.integer(epochs, "epochs", low=1)
        closing = checks.integer(close_mosaic, "close_mosaic", low=0)
        if closing and total is None:
            raise ValueError(f"close_mosaic={closing} needs epochs= (the total number of epochs)")
        fused = checks.instance(affine, "affine", MosaicAffine, what="a rankaug.MosaicAffine")
        jitter = checks.instance(color, "color", HSVJitter, what="a rankaug.HSVJitter")
        if jitter is not None and jitter.record_key != RECORD_KEY:
            raise ValueError(
                "MosaicDataset records the color= jitter's gains in its own record (under "
                f"'color') and does not use color.record_key, got {jitter.record_key!r} "
                f"(leave it at {RECORD_KEY!r})"
            )
        mode = grid.canvas
        if fused is not None and mode == "yolo":
            raise ValueError(
                "canvas='yolo' builds YOLO's canvas for an affine applied afterwards, but "
                "affine= applies it in the mosaic: pass canvas='output' (the default) with "
                "affine=, or no affine with canvas='yolo'"
            )
        if fused is not None and (grid.flip or grid.flip_index is not None):
            raise ValueError(
                f"layout.flip={grid.flip} and layout.flip_index= are the plain mosaic's flip; "
                "with affine= the flip is the affine's: rankaug.MosaicAffine(..., flip=, "
                "flip_index=)"
            )
        height, width = size
        canvas_hw = (
            (2 * height, 2 * width) if mode == "yolo" or fused is not None else (height, width)
        )
        keys = boxes.keys
        fill, fill_default = checks.fill_setting(grid.fill, "layout.fill")
        cells = tuple(divmod(cell, cols) for cell in range(rows * cols))
        anchors = (*(_side(k, cols) for k in range(cols)), *(_side(k, rows) for k in range(rows)))
        lo, hi = grid.center_range
        affine_n, flip_n = 0 if fused is None else draw_count(fused), 1 if grid.flip else 0
        return cls(
            output_size=size,
            layout=grid,
            targets=boxes,
            p=probability,
            epochs=total,
            close_mosaic=closing,
            record=checks.key_name(record, "record", forbidden=keys | {"boxes"}),
            affine=fused,
            color=jitter,
            canvas_hw=canvas_hw,
            image_hw=size if fused is not None else canvas_hw,
            cells=cells,
            anchors=anchors,
            target_keys=keys,
            box_format=cast(BoxFormat, boxes.box_format),
            fill=fill,
            fill_default=fill_default,
            filters=boxes.filters,
            constant_p=not callable(probability) and not closing,
            line_steps=(_line_steps(cols, lo, hi), _line_steps(rows, lo, hi)),
            orders=CellOrders(rows * cols),
            places=tuple((r, c, anchors[c], anchors[cols + r]) for r, c in cells),
            draws=(
                2 * rows * cols + rows + cols - 1, affine_n, flip_n,
                affine_n + flip_n + (0 if jitter is None else 3),  # (HSVJitter.draw: 3)
            ),
        )  # fmt: skip

    def check_fill(self, image: np.ndarray, mask: np.ndarray | None, where: str) -> None:
        """Check ``fill`` against the main image, ``fill_mask`` against its mask's dtype.

        And ``color`` against the image, before any tile is read: the jitter takes
        ``HxWx3`` uint8 images only (a grey, RGBA or 16-bit one was refused after the
        mosaic was painted, by the output's shape).

        Args:
            image: The main tile's image.
            mask: Its semantic mask, or ``None``.
            where: The tile's name, e.g. ``"dataset[3]"``.

        Raises:
            TypeError: If ``color`` is given and the image is not uint8.
            ValueError: If ``fill`` has neither one value nor one per channel, a value
                does not fit the dtype, or it is the default and the image is float; or
                ``color`` is given and the image is not ``HxWx3``.
        """
        if self.color is not None:
            order = self.color.channel_order.upper()
            checks.colour_image(image, f"{where} image, which color= jitters,", order)
        checks.fills_fit(
            self.fill, self.layout.fill_mask, image, mask, where, default=self.fill_default
        )


def _line_steps(count: int, lo: float, hi: float) -> tuple[tuple[float, float], ...]:
    """Interior line ``k`` of ``count`` cells lies in ``[a, a + d]`` of its axis: ``(a, d)``.

    The arithmetic of :func:`~rankaug.mosaic.layout.lines`, done once.

    >>> _line_steps(2, 0.25, 0.75)
    ((0.25, 0.5),)
    """
    steps = []
    for k in range(1, count):
        a = (k - 1 + 2 * lo) / count
        b = (k - 1 + 2 * hi) / count
        steps.append((a, b - a))
    return tuple(steps)


def _order(main: int, cells: int) -> tuple[int, ...]:
    """The cells in the plan's order for main cell ``main``: it, then the others."""
    return (main, *range(main), *range(main + 1, cells))


def _side(position: int, count: int) -> int:
    """-1 before the middle of ``count`` cells, 1 after it, 0 on it."""
    middle = (count - 1) / 2
    return -1 if position < middle else 1 if position > middle else 0
