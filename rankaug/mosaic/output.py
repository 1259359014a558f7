"""One mosaic's output arrays from its plan and its tiles: layout, targets, then pixels.

Steps 3 to 5 of :mod:`rankaug.mosaic`, after the tiles are read and before the output
is repacked: the layout (:mod:`~rankaug.mosaic.layout`; the plain mosaic's flip, and
with ``affine=`` the fused placements, :mod:`~rankaug.mosaic.fused`), the targets
(:mod:`~rankaug.mosaic.targets`, before the pixels, whose work takes the processor's
caches), the pixels (:mod:`~rankaug.mosaic.paint`) and the colour jitter
(:mod:`~rankaug.mosaic.colour`), in place, last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankaug import checks
from rankaug._multi.tiles import Tile
from rankaug.mosaic.colour import colour_rows, grey_rows
from rankaug.mosaic.config import MosaicConfig
from rankaug.mosaic.fused import Warp, fuse
from rankaug.mosaic.layout import Layout, grid_layout, letterbox_layout
from rankaug.mosaic.paint import paint_image, paint_warp
from rankaug.mosaic.plan import Plan
from rankaug.mosaic.record import MosaicRecord
from rankaug.mosaic.targets import map_targets

__all__ = ["make_output"]


def make_output(
    config: MosaicConfig, plan: Plan, tiles: Sequence[Tile], data: Mapping[str, Any]
) -> tuple[dict[str, Any], MosaicRecord]:
    """The output's image and targets, and the record of its geometry.

    Args:
        config: The mosaic's configuration.
        plan: The sample's draws.
        tiles: The tiles read, main first (only the main one when the plan is no mosaic).
        data: The main sample's data from the adapter (the targets it has).

    Returns:
        The output's arrays by key, and the record (``epoch``, ``state`` and the rest
        still to be set).
    """
    images, sizes = [], []  # (a loop, not comprehensions: each is a function)
    for tile in tiles:
        images.append(image := tile.image)
        sizes.append(image.shape[:2])
    if plan.applied:
        placed = grid_layout(config, plan, sizes)
    else:
        placed = letterbox_layout(config, tiles[0].index, sizes[0])
    if config.layout.flip:  # the plain mosaic's flip: painted mirrored
        placed = placed._replace(flipped=plan.flip)
        placed.record["flip"] = plan.flip
    layout: Layout | Warp = placed
    if plan.affine is not None:  # the affine fused: composed with each placement
        canvas_hw = config.canvas_hw if plan.applied else config.image_hw
        layout = fuse(placed, plan.affine, canvas_hw, config.image_hw)
    # targets before pixels: the painting takes the processor's caches
    mapped = map_targets(config, layout, tiles, data)
    hw, fill = config.image_hw, config.fill
    interpolation = config.layout.interpolation
    jitter, gains = config.color, plan.color
    # with the colour: the rows of fill alone are set to its grey, never filled
    rows = None
    if jitter is not None and gains is not None:
        rows = grey_rows(layout, jitter, gains, fill)
    if isinstance(layout, Warp):
        image = paint_warp(layout, images, hw, fill, interpolation)
    else:  # flipped too
        image = paint_image(layout, images, hw, fill, interpolation, rows and rows[1:])
    if jitter is not None and gains is not None:  # in place, last
        checks.colour_image(image, "image", jitter.channel_order.upper())
        colour_rows(image, jitter, gains, rows)
        layout.record["color"] = jitter.record(gains)
    out: dict[str, Any] = {"image": image}
    out.update(mapped)
    return out, layout.record
