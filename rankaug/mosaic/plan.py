"""A mosaic's draws: every random choice of one sample, from its key, in a fixed order.

:func:`draw_plan` draws all of a sample's parameters from the key's Generator as one
block ``u = rng.random(2 * cells + rows + cols - 1)``, ``cells = rows * cols``, used in
this order (part of the specification: a change reorders everyone's mosaics):

1. ``u[0]``: the sample is a mosaic when ``u[0] < p`` (``p`` of the epoch);
2. ``u[1]``: the main image's cell, ``floor(u[1] * cells)``;
3. ``cells - 1`` uniforms for the partners (see :mod:`rankaug._multi.partners`: a weighted
   draw may draw again, and a uniform draw without replacement draws after the block);
4. the interior grid lines: ``cols - 1`` then ``rows - 1`` uniforms;
5. one scale factor per cell, ``lo + (hi - lo) * u`` for ``scale_range = (lo, hi)``;
6. with ``affine=``, after everything above (the partners' extra draws included): the
   affine's block of 6 uniforms, 7 with a flip (:func:`rankaug.mosaic.affine.draw_affine`),
   for every sample, mosaic or not. Without it nothing more is drawn, so adding an affine changes
   no earlier draw;
7. without an affine, with ``layout.flip > 0`` (the plain mosaic's flip), one uniform:
   the output is mirrored when it is below ``layout.flip``;
8. with ``color=``, last, for every sample: the colour jitter's block of 3 uniforms
   (:meth:`rankaug.HSVJitter.draw`). Without it nothing more is drawn.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, NamedTuple

import numpy as np

from rankaug import checks
from rankaug._multi.partners import PartnerSampler
from rankaug.hsv import HSVDraw
from rankaug.mosaic.affine import AffineDraw, affine_from
from rankaug.mosaic.config import MosaicConfig

__all__ = ["Plan", "draw_plan", "probability"]


class Plan(NamedTuple):
    """One sample's draws.

    Attributes:
        applied: Whether the sample is a mosaic.
        main_cell: The main image's cell (row-major).
        indices: The source indices, main first (all of them, also when not applied).
        fx: The ``cols - 1`` uniforms of the vertical grid lines.
        fy: The ``rows - 1`` uniforms of the horizontal grid lines.
        scales: One scale factor per cell.
        affine: The affine's draws, or ``None`` without an affine.
        flip: Whether the plain mosaic's output is mirrored (with an affine: ``False``,
            the affine draws its own).
        color: The colour jitter's gains, or ``None`` without ``color=``.
    """

    applied: bool
    main_cell: int
    indices: list[int]
    fx: list[float]
    fy: list[float]
    scales: list[float]
    affine: AffineDraw | None = None
    flip: bool = False
    color: HSVDraw | None = None


# Plan(...) without the Python-level __new__ NamedTuple generates: made per sample
_new_plan: Final[Callable[[tuple[Any, ...]], Plan]] = functools.partial(tuple.__new__, Plan)


def probability(config: MosaicConfig, epoch: int) -> float:
    """The probability that a sample of ``epoch`` is a mosaic.

    ``p`` (or ``p(epoch)``), and 0 in the last ``close_mosaic`` of ``epochs``.

    Raises:
        TypeError: If a callable ``p`` returns something other than a number.
        ValueError: If it returns a number outside ``[0, 1]``.
    """
    closing = config.close_mosaic
    if closing and config.epochs is not None and epoch >= config.epochs - closing:
        return 0.0
    return checks.scheduled(config.p, "p", epoch)


def draw_plan(
    config: MosaicConfig,
    partners: PartnerSampler,
    index: int,
    rng: np.random.Generator,
    epoch: int,
) -> Plan:
    """Draw one sample's plan (see the module docstring).

    Args:
        config: The mosaic's configuration.
        partners: The partner sampler (``rows * cols - 1`` partners).
        index: The main image's index.
        rng: The sample's keyed Generator.
        epoch: The epoch (for ``p``).

    Returns:
        The plan.
    """
    layout = config.layout
    rows, cols = layout.grid
    cells = rows * cols
    block, affine_n, flip_n, after = config.draws  # (the configuration's counts, made once)
    u = rng.random(block).tolist()
    p = config.p if config.constant_p else probability(config, epoch)
    main_cell = int(u[1] * cells)  # at most the last: min() by a comparison (rankaug._scalars)
    others = partners.draw(index, u[2 : cells + 1], rng)
    lines = cells + cols  # where the rows' grid lines start in the block
    lo, hi = layout.scale_range
    # the blocks after the partners' draws (6-8 above) in one call, split in their order:
    # n uniforms drawn at once are the n drawn one block after another (a call cost more)
    if after:
        v = rng.random(after).tolist()
        affine = None if config.affine is None else affine_from(config.affine, v[:affine_n])
        flip = bool(flip_n) and v[affine_n] < layout.flip
        color = None if config.color is None else config.color.from_uniforms(v[affine_n + flip_n :])
    else:
        affine, flip, color = None, False, None
    return _new_plan(
        (
            u[0] < p,
            main_cell if main_cell < cells - 1 else cells - 1,
            [index, *others],
            u[cells + 1 : lines],
            u[lines : lines + rows - 1],
            # a point range: lo + 0.0 * x is lo, no arithmetic per cell
            [lo] * cells if lo == hi else [lo + (hi - lo) * x for x in u[lines + rows - 1 :]],
            affine,
            flip,
            color,
        )
    )
