"""The PNG contact sheet: one row per rank, one column per sample, boxes drawn.

Every cell is a ``thumb x thumb`` thumbnail (the image scaled to fit, letterboxed on
dark grey) with the sample's boxes drawn in a colour per label, above a caption of two
lines (for example the rank, worker and index, then the mosaic's partner indices).
A title runs along the top and every row starts with its label. The size of a sheet
depends only on its rows, columns and ``thumb`` (see :func:`sheet_size`).
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from rankaug.cli.views import SampleView

__all__ = [
    "caption",
    "contact_sheet",
    "fit_image",
    "fit_text",
    "render_tile",
    "sheet_size",
    "wrap_text",
    "write_png",
]

PAD = 6
LINE_HEIGHT = 14
CAPTION_LINES = 2
CAPTION_HEIGHT = CAPTION_LINES * LINE_HEIGHT + 4
LABEL_WIDTH = 64
TITLE_HEIGHT = 26
_FONT = cv2.FONT_HERSHEY_SIMPLEX
_FONT_SCALE = 0.38
_BACKGROUND = (250, 250, 250)
_LETTERBOX = (48, 48, 48)
_INK = (20, 20, 20)


def sheet_size(rows: int, columns: int, thumb: int = 160) -> tuple[int, int]:
    """The ``(height, width)`` in pixels of a sheet of ``rows`` x ``columns`` thumbnails.

    Args:
        rows: Number of rows (ranks).
        columns: Number of columns (samples per rank).
        thumb: Side of a thumbnail in pixels.

    Returns:
        ``(height, width)``.

    >>> sheet_size(2, 8)
    (428, 1398)
    """
    width = LABEL_WIDTH + columns * (thumb + PAD) + PAD
    height = TITLE_HEIGHT + rows * (thumb + CAPTION_HEIGHT + PAD) + PAD
    return height, width


def caption(
    rank: int, worker: int, index: int, view: SampleView, partners: list[int] | None
) -> list[str]:
    """The two caption lines of a cell: where it was loaded, then partners or box count.

    >>> view = SampleView(np.zeros((4, 4, 3), np.uint8), np.zeros((2, 4)), [0, 1])
    >>> caption(1, 0, 17, view, [3, 8, 9])
    ['r1 w0 #17', 'partners 3 8 9']
    >>> caption(0, 1, 2, view, None)
    ['r0 w1 #2', '2 boxes']
    """
    if partners is None:
        second = f"{len(view.boxes)} boxes"
    else:
        second = "partners " + " ".join(str(p) for p in partners)
    return [f"r{rank} w{worker} #{index}", second]


def _colour(label: Any) -> tuple[int, int, int]:
    seed = label if isinstance(label, int) else sum(str(label).encode())
    hue = (seed * 0.61803398875) % 1.0
    red, green, blue = colorsys.hsv_to_rgb(hue, 0.9, 1.0)
    return int(red * 255), int(green * 255), int(blue * 255)


def fit_text(text: str, width: int, scale: float = _FONT_SCALE) -> str:
    """``text`` in ASCII, cut (ending in ``~``) to fit ``width`` pixels at font ``scale``.

    >>> fit_text("partners 3 8 9", 1000)
    'partners 3 8 9'
    >>> cut = fit_text("partners 3 8 9", 40)  # how much fits is OpenCV's font metrics
    >>> cut.endswith("~"), "partners 3 8 9".startswith(cut[:-1])
    (True, True)
    >>> cv2.getTextSize(cut, _FONT, _FONT_SCALE, 1)[0][0] <= 40
    True
    """
    text = text.encode("ascii", "replace").decode()
    while text and cv2.getTextSize(text, _FONT, scale, 1)[0][0] > width:
        text = text[:-2] + "~" if len(text) > 1 else ""
    return text


def wrap_text(text: str, width: int, scale: float = _FONT_SCALE) -> list[str]:
    """``text`` in ASCII, wrapped at spaces into lines that fit ``width`` pixels at ``scale``.

    A word wider than ``width`` alone (a long path) is broken where it must be; nothing
    is cut.

    >>> wrap_text("partners 3 8 9", 1000)
    ['partners 3 8 9']
    >>> lines = wrap_text("partners 3 8 9", 60)
    >>> " ".join(lines), all(cv2.getTextSize(x, _FONT, _FONT_SCALE, 1)[0][0] <= 60 for x in lines)
    ('partners 3 8 9', True)
    """

    def fits(line: str) -> bool:
        return cv2.getTextSize(line, _FONT, scale, 1)[0][0] <= width

    lines: list[str] = []
    line = ""
    for word in text.encode("ascii", "replace").decode().split():
        joined = f"{line} {word}" if line else word
        if fits(joined):
            line = joined
            continue
        if line:
            lines.append(line)
        while len(word) > 1 and not fits(word):  # broken where it must be
            cut = len(word) - 1
            while cut > 1 and not fits(word[:cut]):
                cut -= 1
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    return [*lines, line] if line else lines


def fit_image(image: np.ndarray, thumb: int) -> tuple[np.ndarray, float, tuple[int, int]]:
    """Scale ``image`` to fit a ``thumb`` square, letterboxed on dark grey.

    Returns:
        The ``thumb x thumb x 3`` square, the scale, and the image's ``(left, top)`` in it.

    >>> square, scale, corner = fit_image(np.zeros((30, 60, 3), np.uint8), 64)
    >>> square.shape, round(scale, 3), corner
    ((64, 64, 3), 1.067, (0, 16))
    """
    square = np.full((thumb, thumb, 3), _LETTERBOX, np.uint8)
    height, width = image.shape[:2]
    scale = thumb / max(height, width)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    top, left = (thumb - new_h) // 2, (thumb - new_w) // 2
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    square[top : top + new_h, left : left + new_w] = cv2.resize(
        image, (new_w, new_h), interpolation=interpolation
    )
    return square, scale, (left, top)


def render_tile(view: SampleView, caption: Sequence[str], thumb: int = 160) -> np.ndarray:
    """Draw one cell: the thumbnail with its boxes, and the caption below.

    Args:
        view: The sample's image, boxes and labels.
        caption: Up to two lines of ASCII text (longer lines are cut).
        thumb: Side of the thumbnail in pixels.

    Returns:
        A ``(thumb + CAPTION_HEIGHT) x thumb x 3`` uint8 RGB array.

    >>> view = SampleView(np.zeros((30, 60, 3), np.uint8), np.array([[0, 0, 30, 30.0]]), [1])
    >>> render_tile(view, ["rank 0", "index 3"], thumb=64).shape
    (96, 64, 3)
    """
    tile = np.full((thumb + CAPTION_HEIGHT, thumb, 3), _BACKGROUND, np.uint8)
    tile[:thumb], scale, (left, top) = fit_image(view.image, thumb)
    labels = view.labels if view.labels is not None else [None] * len(view.boxes)
    for box, label in zip(view.boxes, labels, strict=False):
        if not np.isfinite(box).all():
            continue
        x0, y0, x1, y1 = (float(v) * scale for v in box)
        cv2.rectangle(
            tile,
            (left + round(x0), top + round(y0)),
            (left + max(round(x0), round(x1) - 1), top + max(round(y0), round(y1) - 1)),
            _colour(label),
            1,
        )
    for line_no, line in enumerate(list(caption)[:CAPTION_LINES]):
        baseline = thumb + (line_no + 1) * LINE_HEIGHT
        cv2.putText(tile, fit_text(line, thumb - 2), (1, baseline), _FONT, _FONT_SCALE, _INK, 1)
    return tile


def contact_sheet(
    tiles: Sequence[Sequence[np.ndarray | None]],
    row_labels: Sequence[str],
    title: str,
    thumb: int = 160,
) -> np.ndarray:
    """Lay out tiles from :func:`render_tile`, one row per rank.

    Args:
        tiles: ``tiles[row][column]``; a missing or ``None`` cell stays blank.
        row_labels: One label per row (e.g. ``"rank 0"``).
        title: The line along the top.
        thumb: The tiles' thumbnail side.

    Returns:
        The sheet, uint8 RGB, of :func:`sheet_size` ``(rows, max columns, thumb)``.

    Raises:
        ValueError: If there are no rows, or the row labels do not match the rows.

    >>> cell = np.zeros((64 + CAPTION_HEIGHT, 64, 3), np.uint8)
    >>> contact_sheet([[cell, cell], [cell]], ["rank 0", "rank 1"], "t", 64).shape
    (236, 210, 3)
    """
    if not tiles:
        raise ValueError("a contact sheet needs at least one row")
    if len(row_labels) != len(tiles):
        raise ValueError(f"got {len(row_labels)} row labels for {len(tiles)} rows")
    columns = max(1, *(len(row) for row in tiles))
    height, width = sheet_size(len(tiles), columns, thumb)
    sheet = np.full((height, width, 3), _BACKGROUND, np.uint8)
    cv2.putText(sheet, fit_text(title, width - 2 * PAD), (PAD, 18), _FONT, 0.5, _INK, 1)
    cell_height = thumb + CAPTION_HEIGHT
    for row, (cells, label) in enumerate(zip(tiles, row_labels, strict=True)):
        top = TITLE_HEIGHT + row * (cell_height + PAD)
        cv2.putText(
            sheet,
            fit_text(label, LABEL_WIDTH - PAD),
            (PAD, top + thumb // 2),
            _FONT,
            0.45,
            _INK,
            1,
        )
        for column, cell in enumerate(cells):
            if cell is None:
                continue
            if cell.shape != (cell_height, thumb, 3):
                raise ValueError(
                    f"tile [{row}][{column}] has shape {cell.shape}, expected "
                    f"{(cell_height, thumb, 3)} (render it with thumb={thumb})"
                )
            left = LABEL_WIDTH + column * (thumb + PAD)
            sheet[top : top + cell_height, left : left + thumb] = cell
    return sheet


def write_png(path: str | Path, image: np.ndarray) -> Path:
    """Write an RGB uint8 image as PNG, creating the folder; return the path.

    Raises:
        ValueError: If ``path`` does not end in ``.png``.
        OSError: If the file cannot be written.
    """
    target = Path(path)
    if target.suffix.lower() != ".png":
        raise ValueError(f"the output file must end in .png, got {str(target)!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    ok, encoded = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    if not ok:
        raise OSError(f"OpenCV could not encode the sheet for {target}")
    target.write_bytes(encoded.tobytes())
    return target
