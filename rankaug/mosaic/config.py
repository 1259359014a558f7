"""A mosaic's configuration, checked once into a frozen object.

:meth:`MosaicConfig.build` checks every argument of :class:`~rankaug.MosaicDataset`
but the sampling ones (those go to :class:`~rankaug.partners.PartnerSampler`) through
:mod:`rankaug.checks`, and precomputes what every sample would otherwise recompute:
the canvas size, the cells, the anchors, the target keys. What can only be checked
against data (a fill value against the image's dtype) is checked by
:meth:`MosaicConfig.check_fill` on the first sample of each dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

import cv2
import numpy as np

from rankaug import checks
from rankaug.boxes import BoxFormat, check_box_format, check_filter_args
from rankaug.mosaic.affine import MosaicAffine, check_flip_index
from rankaug.polygons import POLYGONS
from rankaug.samples import DEFAULT_TARGETS

__all__ = ["CanvasMode", "MosaicConfig", "ScaleMode"]

CanvasMode = Literal["output", "yolo"]
ScaleMode = Literal["keep", "fit", "fill"]
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


@dataclass(frozen=True, slots=True)
class MosaicConfig:
    """Everything a mosaic needs besides its data, checked (see :meth:`build`).

    Attributes:
        output_size: ``(height, width)`` of the output.
        grid: ``(rows, cols)``.
        box_format: The samples' box format.
        label_fields: Per-box fields kept aligned with the boxes.
        keypoint_fields: Per-keypoint fields kept aligned with the keypoints.
        canvas: ``"output"`` or ``"yolo"``.
        center_range: Where the grid lines fall, as fractions.
        scale_mode: ``"keep"``, ``"fit"`` or ``"fill"``.
        scale_range: The range of each tile's random scale factor.
        interpolation: The OpenCV interpolation flag for images.
        fill: The fill value, one number or one per channel.
        fill_mask: The semantic mask's fill value.
        p: The probability of a mosaic, or a function of the epoch.
        epochs: The total number of epochs, or ``None``.
        close_mosaic: How many last epochs have no mosaic.
        min_area: The box filter's smallest area (output pixels).
        min_visibility: The box filter's smallest visible fraction.
        min_width: The box filter's smallest width.
        min_height: The box filter's smallest height.
        clip: Whether boxes reaching outside their image are clipped (else refused).
        record: The record's key, or ``None``.
        affine: YOLO's random affine fused into the mosaic, or ``None``.
        flip: The plain mosaic's flip probability (0 with an affine: its own flip).
        flip_index: The plain mosaic's ``flip_index`` for keypoints, or ``None``.
        canvas_hw: ``(height, width)`` of the canvas the tiles are laid out on (twice
            ``output_size`` for YOLO's, also with an affine).
        image_hw: ``(height, width)`` of the image made: the canvas, or ``output_size``
            with an affine (which maps the canvas onto it).
        cells: ``(row, col)`` of each cell, row-major.
        anchors: Per column, then per row: -1 anchors a tile at its cell's far edge,
            1 at its near edge, 0 centres it.
        targets: The keys a sample's adapter hands out.
        filters: Whether any box filter is set.
        constant_p: Whether the probability is the same in every epoch.
    """

    output_size: tuple[int, int]
    grid: tuple[int, int]
    box_format: BoxFormat
    label_fields: tuple[str, ...]
    keypoint_fields: tuple[str, ...]
    canvas: CanvasMode
    center_range: tuple[float, float]
    scale_mode: ScaleMode
    scale_range: tuple[float, float]
    interpolation: int
    fill: tuple[float, ...]
    fill_mask: int
    p: float | Callable[[int], float]
    epochs: int | None
    close_mosaic: int
    min_area: float
    min_visibility: float
    min_width: float
    min_height: float
    clip: bool
    record: str | None
    affine: MosaicAffine | None
    flip: float
    flip_index: tuple[int, ...] | None
    canvas_hw: tuple[int, int]
    image_hw: tuple[int, int]
    cells: tuple[tuple[int, int], ...]
    anchors: tuple[int, ...]
    targets: frozenset[str]
    filters: bool
    constant_p: bool

    @classmethod
    def build(
        cls,
        *,
        output_size: object,
        grid: object,
        box_format: object,
        label_fields: object,
        keypoint_fields: object,
        canvas: object,
        center_range: object,
        scale_mode: object,
        scale_range: object,
        interpolation: object,
        fill: object,
        fill_mask: object,
        p: object,
        epochs: object,
        close_mosaic: object,
        min_area: object,
        min_visibility: object,
        min_width: object,
        min_height: object,
        clip: object,
        record: object,
        affine: object = None,
        flip: object = 0.0,
        flip_index: object = None,
    ) -> MosaicConfig:
        """Check the arguments of :class:`~rankaug.MosaicDataset` (they mean the same here).

        ``affine``, ``flip`` and ``flip_index`` may be left out (none).

        Raises:
            TypeError: If an argument has the wrong type.
            ValueError: If an argument has a wrong value.

        >>> config = MosaicConfig.build(
        ...     output_size=64, grid=(2, 2), box_format="pascal_voc", label_fields=("labels",),
        ...     keypoint_fields=(), canvas="yolo", center_range=(0.25, 0.75), scale_mode="keep",
        ...     scale_range=(1.0, 1.0), interpolation=cv2.INTER_LINEAR, fill=114, fill_mask=0,
        ...     p=1.0, epochs=None, close_mosaic=0, min_area=0.0, min_visibility=0.0,
        ...     min_width=0.0, min_height=0.0, clip=True, record="mosaic")
        >>> config.canvas_hw, config.cells
        ((128, 128), ((0, 0), (0, 1), (1, 0), (1, 1)))
        """
        size = checks.int_pair(output_size, "output_size")
        rows, cols = checks.int_pair(grid, "grid")
        boxes = ("boxes",)
        known = DEFAULT_TARGETS | {POLYGONS}
        labels = checks.names(label_fields, "label_fields", forbidden=known | {*boxes})
        points = checks.names(
            keypoint_fields, "keypoint_fields", forbidden=known | {*boxes, *labels}
        )
        targets = known | {*labels, *points}
        mode = checks.choice(canvas, "canvas", _CANVASES)
        filters = check_filter_args(
            min_area=min_area, min_visibility=min_visibility, min_width=min_width,
            min_height=min_height,
        )  # fmt: skip
        probability = checks.schedule(p, "p")
        total = None if epochs is None else checks.integer(epochs, "epochs", low=1)
        closing = checks.integer(close_mosaic, "close_mosaic", low=0)
        if closing and total is None:
            raise ValueError(f"close_mosaic={closing} needs epochs= (the total number of epochs)")
        fused = checks.instance(affine, "affine", MosaicAffine, what="a rankaug.MosaicAffine")
        if fused is not None and mode == "yolo":
            raise ValueError(
                "canvas='yolo' builds YOLO's canvas for an affine applied afterwards, but "
                "affine= applies it in the mosaic: pass canvas='output' (the default) with "
                "affine=, or no affine with canvas='yolo'"
            )
        flipping = checks.probability(flip, "flip")
        order = None if flip_index is None else check_flip_index(flip_index, "flip_index")
        if fused is not None and (flipping or order is not None):
            raise ValueError(
                f"flip={flipping} and flip_index= are the plain mosaic's flip; with affine= "
                "the flip is the affine's: rankaug.MosaicAffine(..., flip=, flip_index=)"
            )
        height, width = size
        canvas_hw = (
            (2 * height, 2 * width) if mode == "yolo" or fused is not None else (height, width)
        )
        return cls(
            output_size=size,
            grid=(rows, cols),
            box_format=check_box_format(box_format),
            label_fields=labels,
            keypoint_fields=points,
            canvas=mode,
            center_range=checks.real_range(center_range, "center_range", low=0.0, high=1.0),
            scale_mode=checks.choice(scale_mode, "scale_mode", _SCALE_MODES),
            scale_range=checks.real_range(scale_range, "scale_range", low=1e-3, high=1e3),
            interpolation=checks.int_choice(interpolation, "interpolation", INTERPOLATIONS),
            fill=checks.fill_values(fill, "fill"),
            fill_mask=checks.integer(fill_mask, "fill_mask"),
            p=probability,
            epochs=total,
            close_mosaic=closing,
            min_area=filters[0],
            min_visibility=filters[1],
            min_width=filters[2],
            min_height=filters[3],
            clip=checks.boolean(clip, "clip"),
            record=checks.key_name(record, "record", forbidden=targets | {*boxes}),
            affine=fused,
            flip=flipping,
            flip_index=order,
            canvas_hw=canvas_hw,
            image_hw=size if fused is not None else canvas_hw,
            cells=tuple(divmod(cell, cols) for cell in range(rows * cols)),
            anchors=(
                *(_side(k, cols) for k in range(cols)),
                *(_side(k, rows) for k in range(rows)),
            ),
            targets=targets,
            filters=any(filters),
            constant_p=not callable(probability) and not closing,
        )

    def check_fill(self, image: np.ndarray, mask: np.ndarray | None, where: str) -> None:
        """Check ``fill`` against the main image, ``fill_mask`` against its mask's dtype.

        Args:
            image: The main tile's image.
            mask: Its semantic mask, or ``None``.
            where: The tile's name, e.g. ``"dataset[3]"``.

        Raises:
            ValueError: If ``fill`` has neither one value nor one per channel, or a value
                does not fit the dtype.
        """
        checks.fills_fit(self.fill, self.fill_mask, image, mask, where)


def _side(position: int, count: int) -> int:
    """-1 before the middle of ``count`` cells, 1 after it, 0 on it."""
    middle = (count - 1) / 2
    return -1 if position < middle else 1 if position > middle else 0
