"""The demo's sheet: outlines by source index, the main tile, the repeat bars, the headers.

Pixel checks on constant-grey mosaics, whose only colours are the ones the sheet draws.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rankaug.cli.demo_sheet import (
    OUTLINE,
    REPEATED,
    Block,
    DemoCell,
    block_title,
    demo_heading,
    demo_sheet,
    demo_sheet_size,
    header_text,
    heading_lines,
    render_mixup,
    render_mosaic,
    source_colour,
)
from rankaug.cli.sheet import CAPTION_HEIGHT, LINE_HEIGHT, PAD

GREY = 128
THUMB = 128


def cell(rank: int = 0, index: int = 5, partners: tuple[int, ...] = (1, 2, 3)) -> DemoCell:
    """A 128x128 grey mosaic of four 64x64 quadrants: main top-left, then the partners."""
    windows = [(0, 0, 64, 64), (64, 0, 128, 64), (0, 64, 64, 128), (64, 64, 128, 128)]
    image = np.full((128, 128, 3), GREY, np.uint8)
    regions = list(zip([index, *partners], windows, strict=True))
    return DemoCell(rank, 0, index, image, regions, image.copy(), 7, 0.5)


def colour_at(tile: np.ndarray, y: int, x: int) -> tuple[int, ...]:
    return tuple(int(v) for v in tile[y, x])


class TestSourceColour:
    def test_indices_get_distinct_colours(self) -> None:
        colours = {source_colour(i) for i in range(32)}
        assert len(colours) == 32
        assert all(colour != (GREY,) * 3 for colour in colours)


class TestRenderMosaic:
    def test_every_source_is_outlined_in_its_colour(self) -> None:
        tile = render_mosaic(cell(), None, THUMB)
        assert tile.shape == (THUMB + CAPTION_HEIGHT, THUMB, 3)
        # the middle of each quadrant's bottom edge (clear of the labels at the top-left)
        for (y, x), index in zip([(62, 32), (62, 96), (126, 32), (126, 96)], [5, 1, 2, 3],
                                 strict=True):  # fmt: skip
            assert colour_at(tile, y, x) == source_colour(index)
        assert colour_at(tile, 32, 32) == (GREY,) * 3  # the inside is untouched

    def test_the_main_tile_has_the_thicker_outline(self) -> None:
        tile = render_mosaic(cell(), None, THUMB)
        assert colour_at(tile, 61, 32) == source_colour(5)  # 3 pixels in: main, 4 thick
        assert colour_at(tile, 61, 96) == (GREY,) * 3  # a partner's is 2 thick
        assert colour_at(tile, 62, 96) == source_colour(1)

    def test_the_main_tile_is_tagged_even_when_small(self) -> None:
        small = cell()
        regions = [(5, (0, 0, 4, 4)), *small.regions[1:]]
        tile = render_mosaic(DemoCell(0, 0, 5, small.mosaic, regions, small.mixed, 7, 0.5),
                             None, THUMB)  # fmt: skip
        tag = (tile[2:20, 2:60] == np.array(source_colour(5), np.uint8)).all(axis=2)
        assert tag.sum() > 200  # the filled "main #5" tag, not the 4-pixel region
        no_tag = render_mosaic(small, None, THUMB)[66:84, 66:124]  # partner #3: tagged
        assert (no_tag == np.array(source_colour(3), np.uint8)).all(axis=2).sum() > 200

    def test_a_repeated_partner_keeps_its_colour_on_every_rank(self) -> None:
        first = render_mosaic(cell(rank=0, index=5), 1, THUMB)
        second = render_mosaic(cell(rank=1, index=9), 0, THUMB)
        partners = np.s_[64:THUMB, :]  # the three partner quadrants' bottom half
        np.testing.assert_array_equal(first[partners], second[partners])
        assert colour_at(first, 62, 32) != colour_at(second, 62, 32)  # the mains differ

    def test_the_repeat_bar(self) -> None:
        bar = THUMB + LINE_HEIGHT + 3 + LINE_HEIGHT // 2
        assert colour_at(render_mosaic(cell(), 1, THUMB), bar, THUMB - 2) == REPEATED
        own = render_mosaic(cell(), None, THUMB)
        assert not (own[THUMB:] == np.array(REPEATED, np.uint8)).all(axis=2).any()


class TestOutlines:
    def test_polygons_are_drawn_on_both_cells_only_when_given(self) -> None:
        triangle = np.array([[10.0, 10.0], [50.0, 10.0], [10.0, 50.0]])
        plain = cell()
        drawn = replace(plain, outlines=(triangle,), mixed_outlines=(triangle + 40,))
        for render in (render_mosaic, render_mixup):
            mask = (render(drawn, None, THUMB) == OUTLINE).all(axis=2)
            assert mask[:THUMB].sum() > 40
            assert not (render(plain, None, THUMB) == OUTLINE).all(axis=2).any()


class TestRenderMixup:
    def test_framed_in_the_main_and_the_partner_colours(self) -> None:
        tile = render_mixup(cell(index=5), None, THUMB)
        assert colour_at(tile, 1, THUMB // 2) == source_colour(5)  # top
        assert colour_at(tile, THUMB // 2, 1) == source_colour(5)  # left
        assert colour_at(tile, THUMB - 2, THUMB // 2) == source_colour(7)  # bottom: partner
        assert colour_at(tile, THUMB // 2, THUMB - 2) == source_colour(7)  # right


class TestDemoSheet:
    def blocks(self) -> list[Block]:
        cells = [[cell(0, 5), cell(0, 6)], [cell(1, 9), cell(1, 10)]]
        same: list[list[int | None]] = [[1, 1], [0, 0]]
        none: list[list[int | None]] = [[None, None], [None, None]]
        (yolo, yolo_short), (ours, ours_short) = (
            block_title("YOLOv5-style", 64, 64),
            block_title("rankaug", 0, 64),
        )
        return [
            Block(yolo, (200, 30, 30), cells, same, same, yolo_short),
            Block(ours, (20, 130, 50), cells, none, none, ours_short),
        ]

    def test_size_headers_and_bars(self) -> None:
        sheet = demo_sheet(self.blocks(), "title", "legend", THUMB)
        height, width = demo_sheet_size(2, 2, THUMB)
        assert sheet.shape == (height, width, 3)
        header = sheet[48:72]  # below the title and the legend
        half = (width + 76) // 2  # between the blocks, right of the 76-pixel row labels
        assert (header[:, :half] == (200, 30, 30)).all(axis=2).any()
        assert not (header[:, half:] == (200, 30, 30)).all(axis=2).any()
        assert (header[:, half:] == (20, 130, 50)).all(axis=2).any()
        red = (sheet == np.array(REPEATED, np.uint8)).all(axis=2)
        assert red[:, :half].sum() > 0
        assert red[:, half:].sum() == 0  # rankaug's block: no repeats, no bars

    def test_titles(self) -> None:
        assert block_title("YOLOv5-style", 64, 64) == (
            "YOLOv5-style: 64 of 64 partner draws repeated on every rank",
            "YOLOv5-style: 64/64 repeated",
        )
        assert block_title("rankaug", 0, 8, epochs=2) == (
            "rankaug: 0 of 8 partner draws repeated on every rank in 2 epochs",
            "rankaug: 0/8 repeated in 2 epochs",
        )

    def test_a_header_too_wide_for_its_block_is_drawn_short_not_cut(self) -> None:
        # two columns of 160 pixels cut the header to "YOLOv5-style: 8 of 8 partner draws
        # repeated o~", the count's meaning lost
        block = self.blocks()[0]
        assert header_text(block, 2000) == block.title
        assert header_text(block, 330) == block.short
        assert header_text(block, 40).endswith("~")

    @pytest.mark.parametrize("columns", [1, 2])
    @pytest.mark.parametrize("source", ["8 bundled photographs", "/data/" + "coco-subset/" * 6])
    def test_the_title_and_legend_are_wrapped_to_a_narrow_sheet(
        self, columns: int, source: str
    ) -> None:
        # before: each was cut to one line ending in "~" (the source, the red bar's meaning
        # lost) on a sheet of few columns
        blocks = [replace(b, cells=[row[:columns] for row in b.cells]) for b in self.blocks()]
        title, legend = demo_heading(2, 0, source)
        sheet = demo_sheet(blocks, title, legend, THUMB)
        width = demo_sheet_size(2, columns, THUMB)[1]
        lines = heading_lines(title, legend, width)
        assert len(lines) > 2  # wrapped
        assert sheet.shape == (*demo_sheet_size(2, columns, THUMB, len(lines)), 3)
        words = " ".join(text for text, _ in lines)
        assert "".join(words.split()) == "".join((title + legend).split())  # nothing cut
        band = 8 + 20 * len(lines)  # the title's and the legend's lines
        ink = sheet[:band].max(axis=2) < 160  # dark (OpenCV 5 smooths text)
        assert not ink[:, : PAD - 1].any()
        assert not ink[:, width - PAD + 1 :].any()  # inside the margin: fits the sheet
        for line in range(len(lines)):  # every line drawn, in its own rows
            assert ink[line * 20 + 6 : line * 20 + 22].any()

    def test_refuses_blocks_of_other_shapes(self) -> None:
        first, second = self.blocks()
        short = Block(second.title, second.colour, [row[:1] for row in second.cells],
                      second.repeated, second.mix_repeated)  # fmt: skip
        with pytest.raises(ValueError, match="two blocks of one shape"):
            demo_sheet([first, short], "t", "l", THUMB)
