"""The demo's one picture: YOLOv5-style and rankaug side by side, rows = ranks.

Each approach is a block of columns (the first steps of epoch 0): a band of mosaics,
one row per rank, then a band of the mixups made from them. In a mosaic every source
image is outlined in the colour of its index (:func:`source_colour`) and labelled
``#index`` (where the tag fits); the sample's own (main) image has a thicker outline
and, always, the tag ``main #index``. A mixup is framed top and left in its main
index's colour, bottom and right in its partner's. Under each cell a red bar says when
another rank drew the same partners at the same step: in YOLOv5's block the same colours
repeat down every column.
With ``demo --segments`` the instance polygons are drawn in :data:`OUTLINE`.
Each block's header gives the count over the run's epochs (``64 of 64 partner draws
repeated on every rank``; shorter where the sheet is narrow). The title and the legend
above the blocks are wrapped to the sheet's width (:func:`heading_lines`): a narrow
sheet is taller by the lines they take.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from rankaug.cli.sheet import CAPTION_HEIGHT, LINE_HEIGHT, PAD, fit_image, fit_text, wrap_text

__all__ = [
    "OUTLINE",
    "REPEATED",
    "Block",
    "DemoCell",
    "block_title",
    "demo_heading",
    "demo_sheet",
    "demo_sheet_size",
    "header_text",
    "heading_lines",
    "render_mixup",
    "render_mosaic",
    "source_colour",
]

Window = tuple[int, int, int, int]
_FONT = cv2.FONT_HERSHEY_SIMPLEX
_BACKGROUND = (250, 250, 250)
_INK = (20, 20, 20)
#: The colour of instance polygons (``demo --segments``).
OUTLINE = (255, 230, 0)
#: The bar under a cell whose partners another rank drew at the same step.
REPEATED = (210, 30, 30)
_OWN = (20, 130, 50)
_HEADING_LINE = 20  # the pitch of the title's and the legend's lines
_TITLE_SCALE, _LEGEND_SCALE = 0.55, 0.38
_HEADER_HEIGHT = 24
_HEADER_SCALE = 0.5  # the blocks' headers' font scale
_LABEL_WIDTH = 76
_BLOCK_GAP = 18
_BAND_GAP = 10
_LINE, _MAIN_LINE = 2, 4


def source_colour(index: int) -> tuple[int, int, int]:
    """The RGB colour that names source index ``index`` on the demo's sheet.

    Hues step by the golden ratio, so nearby indices get far-apart colours; odd
    indices are a little darker.

    >>> source_colour(0), source_colour(1) != source_colour(0)
    ((242, 24, 24), True)
    """
    hue = (index * 0.61803398875) % 1.0
    value = 0.95 if index % 2 == 0 else 0.7
    red, green, blue = colorsys.hsv_to_rgb(hue, 0.9, value)
    return round(red * 255), round(green * 255), round(blue * 255)


@dataclass(frozen=True)
class DemoCell:
    """One step of one rank, as the sheet shows it.

    Attributes:
        rank: The rank.
        worker: The DataLoader worker that loaded it.
        index: The main index.
        mosaic: The mosaic before the mixup, ``HxWx3`` uint8.
        regions: ``(source index, (x0, y0, x1, y1))`` of every image in the mosaic,
            main first (empty windows for images pushed out of view).
        mixed: The mixup of that mosaic with another, ``HxWx3`` uint8.
        mix_partner: The mixup's partner index.
        ratio: The mixup's ratio.
        outlines: The mosaic's instance polygons (``demo --segments``), pixel ``(K, 2)``.
        mixed_outlines: The mixup's instance polygons.
    """

    rank: int
    worker: int
    index: int
    mosaic: np.ndarray
    regions: list[tuple[int, Window]]
    mixed: np.ndarray
    mix_partner: int
    ratio: float
    outlines: tuple[np.ndarray, ...] = ()
    mixed_outlines: tuple[np.ndarray, ...] = ()


@dataclass(frozen=True)
class Block:
    """One approach on the sheet: its header and ``cells[rank][column]``.

    Attributes:
        title: The header (see :func:`block_title`).
        colour: The header's colour.
        cells: The cells, one row per rank.
        repeated: ``repeated[rank][column]``: the rank another rank matched there, or
            ``None``.
        mix_repeated: The same for the mixups (partner and ratio).
        short: The header where ``title`` does not fit (a narrow sheet); ``""``: none.
    """

    title: str
    colour: tuple[int, int, int]
    cells: list[list[DemoCell]]
    repeated: list[list[int | None]]
    mix_repeated: list[list[int | None]]
    short: str = ""


def block_title(name: str, repeated: int, total: int, epochs: int = 1) -> tuple[str, str]:
    """A block's header and its short form: how many partner draws every rank repeats.

    The count covers every epoch of the run (the sheet shows the first).

    >>> block_title("YOLOv5-style", 64, 64)
    ('YOLOv5-style: 64 of 64 partner draws repeated on every rank', 'YOLOv5-style: 64/64 repeated')
    >>> block_title("rankaug", 0, 8, epochs=2)[1]
    'rankaug: 0/8 repeated in 2 epochs'
    """
    over = f" in {epochs} epochs" if epochs > 1 else ""
    return (
        f"{name}: {repeated} of {total} partner draws repeated on every rank{over}",
        f"{name}: {repeated}/{total} repeated{over}",
    )


def header_text(block: Block, width: int) -> str:
    """``block``'s header as drawn ``width`` pixels wide: its title, else its short form.

    Either is cut (ending in ``~``) only where even the short form does not fit.
    """
    title = fit_text(block.title, width, _HEADER_SCALE)
    if block.short and title != block.title:
        return fit_text(block.short, width, _HEADER_SCALE)
    return title


def _text_colour(background: tuple[int, int, int]) -> tuple[int, int, int]:
    red, green, blue = background
    return (0, 0, 0) if 0.299 * red + 0.587 * green + 0.114 * blue > 140 else (255, 255, 255)


def _label(image: np.ndarray, text: str, corner: tuple[int, int], colour: tuple[int, int, int],
           bottom_right: bool = False) -> None:  # fmt: skip
    """A filled tag with ``text`` at ``corner`` (its top-left, or bottom-right)."""
    (width, height), _ = cv2.getTextSize(text, _FONT, 0.38, 1)
    x, y = corner
    if bottom_right:
        x, y = x - width - 4, y - height - 6
    cv2.rectangle(image, (x, y), (x + width + 3, y + height + 5), colour, -1)
    cv2.putText(image, text, (x + 2, y + height + 2), _FONT, 0.38, _text_colour(colour), 1)


def _frame(image: np.ndarray, window: Window, colour: tuple[int, int, int], line: int,
           sides: str = "tlbr") -> None:  # fmt: skip
    """Paint ``line`` pixels inside ``window``'s edges (``sides`` of t, l, b, r)."""
    x0, y0, x1, y1 = window
    line = max(1, min(line, (x1 - x0) // 2, (y1 - y0) // 2))
    if "t" in sides:
        image[y0 : y0 + line, x0:x1] = colour
    if "b" in sides:
        image[y1 - line : y1, x0:x1] = colour
    if "l" in sides:
        image[y0:y1, x0 : x0 + line] = colour
    if "r" in sides:
        image[y0:y1, x1 - line : x1] = colour


def _outline(square: np.ndarray, polygons: Sequence[np.ndarray], scale: float,
             corner: tuple[int, int]) -> None:  # fmt: skip
    """Draw each polygon, scaled onto the thumbnail ``square`` placed at ``corner``."""
    points = [np.round(np.asarray(p, np.float64) * scale + corner).astype(np.int32)
              for p in polygons]  # fmt: skip
    cv2.polylines(square, points, True, OUTLINE, 1)


def _caption(tile: np.ndarray, first: str, matched: int | None, thumb: int) -> None:
    cv2.putText(tile, fit_text(first, thumb - 2), (1, thumb + LINE_HEIGHT), _FONT, 0.38, _INK, 1)
    top = thumb + LINE_HEIGHT + 3
    if matched is None:
        cv2.putText(tile, "own draws", (1, top + LINE_HEIGHT - 3), _FONT, 0.38, _OWN, 1)
        return
    tile[top : top + LINE_HEIGHT, :] = REPEATED
    text = fit_text(f"SAME as rank {matched}", thumb - 4)
    cv2.putText(tile, text, (2, top + LINE_HEIGHT - 3), _FONT, 0.38, (255, 255, 255), 1)


def render_mosaic(cell: DemoCell, matched: int | None, thumb: int) -> np.ndarray:
    """A mosaic cell: every source outlined in :func:`source_colour`, the main one thicker.

    Args:
        cell: The cell.
        matched: The rank that drew the same partners at this step, or ``None``.
        thumb: The thumbnail side.

    Returns:
        ``(thumb + CAPTION_HEIGHT) x thumb x 3`` uint8 RGB.
    """
    tile = np.full((thumb + CAPTION_HEIGHT, thumb, 3), _BACKGROUND, np.uint8)
    square, scale, (left, top) = fit_image(cell.mosaic, thumb)
    _outline(square, cell.outlines, scale, (left, top))
    placed: list[tuple[int, Window, bool]] = []
    for k, (source, (x0, y0, x1, y1)) in enumerate(cell.regions):
        window = (left + round(x0 * scale), top + round(y0 * scale),
                  left + round(x1 * scale), top + round(y1 * scale))  # fmt: skip
        if window[2] - window[0] >= 2 and window[3] - window[1] >= 2:
            placed.append((source, window, k == 0))
    for source, window, main in placed:
        _frame(square, window, source_colour(source), _MAIN_LINE if main else _LINE)
    for source, window, main in sorted(placed, key=lambda item: item[2]):  # main last
        text = f"main #{source}" if main else f"#{source}"
        (width, height), _ = cv2.getTextSize(text, _FONT, 0.38, 1)
        fits = window[2] - window[0] >= width + 8 and window[3] - window[1] >= height + 10
        if fits or main:  # the main tag always, over its neighbours if it must
            x = min(window[0] + 2, thumb - width - 5)
            y = min(window[1] + 2, thumb - height - 7)
            _label(square, text, (x, y), source_colour(source))
    tile[:thumb] = square
    partners = " ".join(str(source) for source, _ in cell.regions[1:])
    _caption(tile, f"r{cell.rank} w{cell.worker} #{cell.index}: {partners}", matched, thumb)
    return tile


def render_mixup(cell: DemoCell, matched: int | None, thumb: int) -> np.ndarray:
    """A mixup cell: framed top-left in the main index's colour, bottom-right in the partner's.

    Args:
        cell: The cell.
        matched: The rank that mixed the same partner with the same ratio, or ``None``.
        thumb: The thumbnail side.

    Returns:
        ``(thumb + CAPTION_HEIGHT) x thumb x 3`` uint8 RGB.
    """
    tile = np.full((thumb + CAPTION_HEIGHT, thumb, 3), _BACKGROUND, np.uint8)
    square, scale, corner = fit_image(cell.mixed, thumb)
    _outline(square, cell.mixed_outlines, scale, corner)
    whole = (0, 0, thumb, thumb)
    main, partner = source_colour(cell.index), source_colour(cell.mix_partner)
    _frame(square, whole, main, _MAIN_LINE, "tl")
    _frame(square, whole, partner, _MAIN_LINE, "br")
    _label(square, f"main #{cell.index}", (_MAIN_LINE + 1, _MAIN_LINE + 1), main)
    corner = (thumb - _MAIN_LINE - 1, thumb - _MAIN_LINE - 1)
    _label(square, f"+ #{cell.mix_partner}", corner, partner, bottom_right=True)
    tile[:thumb] = square
    _caption(tile, f"r{cell.rank} #{cell.index} + #{cell.mix_partner} r={cell.ratio:.2f}",
             matched, thumb)  # fmt: skip
    return tile


def demo_heading(ranks: int, seed: int, source: str) -> tuple[str, str]:
    """The demo sheet's title and legend, for ``ranks`` ranks seeded ``seed`` over ``source``.

    >>> demo_heading(2, 0, "8 images")[0]
    'rankaug demo: the same 2-rank DDP job, torch.manual_seed(0) on every rank, ...: 8 images'
    """
    return (
        f"rankaug demo: the same {ranks}-rank DDP job, torch.manual_seed({seed}) on every "
        f"rank, epoch 0 (rows = ranks, columns = steps), source: {source}",
        "outline colour and #label = source image index (the same colours down a column: "
        "the same partners on every rank); thick outline, 'main' = the sample's own image; "
        "red bar = another rank drew the same at that step",
    )


def heading_lines(title: str, legend: str, width: int) -> list[tuple[str, float]]:
    """The title's and the legend's lines on a sheet ``width`` wide, with their font scales.

    Each is wrapped (:func:`~rankaug.cli.sheet.wrap_text`) to the sheet's width inside
    its margins, never cut.

    >>> heading_lines("rankaug demo", "red bar = repeated", 1428)
    [('rankaug demo', 0.55), ('red bar = repeated', 0.38)]
    >>> len(heading_lines("rankaug demo: " + "the same job " * 8, "red bar = repeated", 432))
    4
    """
    inside = width - 2 * PAD
    return [(line, _TITLE_SCALE) for line in wrap_text(title, inside, _TITLE_SCALE)] + [
        (line, _LEGEND_SCALE) for line in wrap_text(legend, inside, _LEGEND_SCALE)
    ]


def demo_sheet_size(ranks: int, columns: int, thumb: int = 160, lines: int = 2) -> tuple[int, int]:
    """The ``(height, width)`` of the demo's sheet: two blocks, two bands of ``ranks`` rows.

    ``lines`` is how many lines the title and the legend take (:func:`heading_lines`).

    >>> demo_sheet_size(2, 4)
    (880, 1428)
    >>> demo_sheet_size(2, 1, lines=5)
    (940, 432)
    """
    cell = thumb + CAPTION_HEIGHT + PAD
    title_height = 8 + lines * _HEADING_LINE
    height = title_height + _HEADER_HEIGHT + 2 * ranks * cell + _BAND_GAP + PAD
    width = _LABEL_WIDTH + 2 * columns * (thumb + PAD) + _BLOCK_GAP + PAD
    return height, width


def demo_sheet(blocks: Sequence[Block], title: str, legend: str, thumb: int) -> np.ndarray:
    """Lay out two blocks side by side (see the module docstring).

    Args:
        blocks: The two approaches, left then right, with the same ranks and columns.
        title: The first line along the top.
        legend: The second line (what the outlines mean).
        thumb: The thumbnail side.

    Returns:
        The sheet, uint8 RGB, of :func:`demo_sheet_size` (with the lines of
        :func:`heading_lines`).

    Raises:
        ValueError: If there are not two blocks of the same shape.
    """
    shapes = {(len(b.cells), max(len(row) for row in b.cells)) for b in blocks}
    if len(blocks) != 2 or len(shapes) != 1:
        raise ValueError(f"the demo sheet needs two blocks of one shape, got {sorted(shapes)}")
    ((ranks, columns),) = shapes
    width = demo_sheet_size(ranks, columns, thumb)[1]
    heading = heading_lines(title, legend, width)
    height = demo_sheet_size(ranks, columns, thumb, len(heading))[0]
    sheet = np.full((height, width, 3), _BACKGROUND, np.uint8)
    for line, (text, scale) in enumerate(heading):
        where = (PAD, 19 + line * _HEADING_LINE)
        cv2.putText(sheet, text, where, _FONT, scale, _INK, 1)
    title_height = 8 + len(heading) * _HEADING_LINE
    cell_height = thumb + CAPTION_HEIGHT + PAD
    block_width = columns * (thumb + PAD)
    bands = (("mosaic", render_mosaic, "repeated"), ("mixup", render_mixup, "mix_repeated"))
    for band, (name, render, flags) in enumerate(bands):
        for rank in range(ranks):
            top = title_height + _HEADER_HEIGHT + (band * ranks + rank) * cell_height
            top += band * _BAND_GAP
            for line, text in enumerate((f"rank {rank}", name)):
                where = (PAD, top + thumb // 2 + line * LINE_HEIGHT)
                cv2.putText(sheet, text, where, _FONT, 0.45, _INK, 1)
            for b, block in enumerate(blocks):
                x = _LABEL_WIDTH + b * (block_width + _BLOCK_GAP)
                for column, cell in enumerate(block.cells[rank]):
                    matched = getattr(block, flags)[rank][column]
                    tile = render(cell, matched, thumb)
                    left = x + column * (thumb + PAD)
                    sheet[top : top + tile.shape[0], left : left + thumb] = tile
    for b, block in enumerate(blocks):
        x = _LABEL_WIDTH + b * (block_width + _BLOCK_GAP)
        where = (x, title_height + _HEADER_HEIGHT - 8)
        cv2.putText(sheet, header_text(block, block_width), where, _FONT, 0.5,
                    block.colour, 1)  # fmt: skip
    return sheet
