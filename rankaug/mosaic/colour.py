"""The colour jitter on a mosaic's output: converted where tiles are, set where only fill is.

A row of the output that no tile reaches holds the fill alone. When the fill is a grey
(the YOLO recipe's 114), :meth:`~rankaug.HSVJitter.grey` knows the one grey each of its
pixels becomes, so those rows are set to it, and only the rows the tiles reach go
through the colour conversions: the pixels of the whole image jittered, bit for bit, for
the price of a fill on the rest; the painting leaves those rows unfilled
(:func:`grey_rows` says which before it paints), so they are written once. Whole rows
only: OpenCV converts an image row by row, most of a row in a vectorised loop and its
last pixels in a scalar one, and the two can differ by a level; a block of whole rows is
converted exactly as inside the image, a narrower window is not.
"""

from __future__ import annotations

import functools

import numpy as np

from rankaug import checks
from rankaug.hsv import HSVDraw, HSVJitter
from rankaug.mosaic.fused import Warp
from rankaug.mosaic.layout import Layout

__all__ = ["colour_output", "colour_rows", "grey_rows", "painted_rows"]


def painted_rows(layout: Layout | Warp) -> tuple[int, int]:
    """The rows ``[y0, y1)`` of the output any tile is painted on; ``(0, 0)`` for none.

    Beyond them the output holds only the fill (:mod:`~rankaug.mosaic.paint`).

    >>> from rankaug.mosaic.layout import Window
    >>> windows = [Window((8, 8), 0, 0, 8, 8, 2, 3, 10, 9), Window.empty((8, 8))]
    >>> painted_rows(Layout(windows, [], {}, []))  # type: ignore[typeddict-item]
    (3, 9)
    """
    if isinstance(layout, Warp):
        spans = [tile.roi[:2] for tile in layout.tiles if tile.visible]
        if not spans:
            return 0, 0
        return min(y0 for y0, _ in spans), max(y1 for _, y1 in spans)
    # the windows by comparisons: min() and max() of generators cost a mosaic 2-3 µs
    top: int | None = None
    bottom = 0
    for w in layout.windows:
        if w.kx and w.dy1 > w.dy0 and w.dx1 > w.dx0:
            if top is None:
                top, bottom = w.dy0, w.dy1
            else:
                top = w.dy0 if w.dy0 < top else top
                bottom = w.dy1 if w.dy1 > bottom else bottom
    return (0, 0) if top is None else (top, bottom)


def grey_rows(
    layout: Layout | Warp, jitter: HSVJitter, draw: HSVDraw, fill: tuple[float, ...]
) -> tuple[int, int, int] | None:
    """``(grey, y0, y1)``: :func:`painted_rows`, and what every other row becomes under ``draw``.

    The rows beyond ``[y0, y1)`` hold the fill alone, which ``draw`` makes ``grey``:
    :func:`colour_rows` sets them to it, so the painting may leave them unfilled.
    ``None`` when the fill is no grey (or this OpenCV keeps no grey): the whole image
    is converted.
    """
    grey = _grey(fill)
    value = None if grey is None else jitter.grey(grey, draw)
    if value is None:
        return None
    y0, y1 = painted_rows(layout)
    return value, y0, y1


def colour_output(
    image: np.ndarray,
    layout: Layout | Warp,
    jitter: HSVJitter,
    draw: HSVDraw,
    fill: tuple[float, ...],
) -> None:
    """Apply ``jitter``'s ``draw`` in place to ``image``, painted by ``layout`` over ``fill``.

    Exactly ``jitter.apply(image, draw, out=image)``: the rows no tile reaches set to the
    grey fill's jittered grey, the others converted (see the module docstring); the
    whole image converted when the fill is no grey.

    Raises:
        TypeError: If ``image`` is not a uint8 numpy array.
        ValueError: If it is not ``HxWx3``.
    """
    checks.colour_image(image, "image", jitter.channel_order.upper())
    colour_rows(image, jitter, draw, grey_rows(layout, jitter, draw, fill))


def colour_rows(
    image: np.ndarray, jitter: HSVJitter, draw: HSVDraw, rows: tuple[int, int, int] | None
) -> None:
    """:func:`colour_output` of an image checked, given its :func:`grey_rows`.

    The rows beyond ``rows``' ``[y0, y1)`` are set to its grey (whatever they held:
    the painting may have left them unfilled); ``None``: the whole image converted.
    """
    if rows is None:
        jitter.apply(image, draw, out=image)
        return
    value, y0, y1 = rows
    if y1 > y0:
        band = image[y0:y1]
        jitter.apply(band, draw, out=band)
    image[:y0] = value
    image[y1:] = value


@functools.lru_cache(maxsize=16)  # the mosaic's fill: the same for every sample
def _grey(fill: tuple[float, ...]) -> int | None:
    """The fill as one whole 8-bit value (the same in every channel), else ``None``.

    >>> _grey((114.0,)), _grey((114.0, 114.0, 114.0)), _grey((0.0, 0.0, 1.0)), _grey((0.5,))
    (114, 114, None, None)
    """
    first = fill[0]
    if any(v != first for v in fill) or not first.is_integer() or not 0 <= first <= 255:
        return None
    return int(first)
