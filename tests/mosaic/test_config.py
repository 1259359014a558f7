from __future__ import annotations

import dataclasses
import pickle
import re
import tracemalloc
from typing import Any

import numpy as np
import pytest

from rankaug import HSVJitter, MosaicDataset
from rankaug.datasets import SyntheticDetection
from rankaug.mosaic import MosaicAffine
from rankaug.mosaic.config import CellOrders, MosaicConfig, MosaicGrid
from tests.mosaic.painted import grouped


def build(**changes: Any) -> MosaicConfig:
    """The config of ``MosaicDataset(..., output_size=64, **grouped(changes))``."""
    return MosaicConfig.build(**grouped({"output_size": 64, **changes}))


def row(cells: int, main: int) -> tuple[int, ...]:
    """Row ``main`` of :func:`table` ``(cells)``, without the rest of the table."""
    return (main, *range(main), *range(main + 1, cells))


def table(cells: int) -> tuple[tuple[int, ...], ...]:
    """The orders as ``MosaicConfig.build`` made them before they were computed on demand:
    a table of ``cells`` squared cells (the reference of the tests below)."""
    return tuple(row(cells, main) for main in range(cells))


def same(first: Any, second: Any) -> bool:
    """Whether two mosaic samples hold the same values (arrays compared exactly)."""
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(same(first[k], second[k]) for k in first)
    if isinstance(first, np.ndarray):
        return first.dtype == second.dtype and np.array_equal(first, second)
    return bool(first == second)


class TestMosaicConfig:
    def test_derived_values(self) -> None:
        config = build(output_size=(30, 40), grid=(2, 3), canvas="yolo", min_area=2)
        assert config.canvas_hw == (60, 80)
        assert config.cells == ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2))
        assert config.anchors == (-1, 0, 1, -1, 1)
        assert config.filters
        assert config.targets.min_area == 2.0
        assert config.constant_p
        assert not build(p=abs).constant_p
        assert not build(epochs=5, close_mosaic=1).constant_p
        assert {"image", "bboxes", "labels"} <= config.target_keys

    def test_an_affine_lays_out_on_yolo_canvas_and_outputs_output_size(self) -> None:
        config = build(output_size=(30, 40), affine=MosaicAffine(degrees=3))
        assert config.affine == MosaicAffine(degrees=3)
        assert config.canvas_hw == (60, 80)
        assert config.image_hw == (30, 40)
        plain = build(output_size=(30, 40))
        assert (plain.affine, plain.canvas_hw, plain.image_hw) == (None, (30, 40), (30, 40))
        assert build(output_size=(30, 40), canvas="yolo").image_hw == (60, 80)

    def test_a_grid_of_one_pixel_cells_is_the_largest(self) -> None:
        assert build(grid=(64, 64)).cells[-1] == (63, 63)

    def test_a_large_grid_builds_in_memory_linear_in_its_cells(self) -> None:
        # the orders were a table of cells squared: 64x64 kept 638 MB and took 1.1 s
        tracemalloc.start()
        try:
            config = build(grid=(64, 64))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 2_000_000
        assert len(pickle.dumps(config)) < 200_000  # what a spawned worker receives
        assert config.orders[4095] == (4095, *range(4095))
        assert config.orders[1] == (1, 0, *range(2, 4096))

    # kept up to 64 cells (1x1 to 8x8: the table itself), made when asked beyond
    @pytest.mark.parametrize("grid", [(1, 1), (3, 2), (8, 8), (9, 9), (5, 13)])
    def test_mosaics_are_those_of_the_orders_table(
        self, grid: tuple[int, int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # drawn once: the mosaics below read each source hundreds of times (81 cells)
        synthetic = SyntheticDetection(12, image_size=40)
        data = [synthetic[index] for index in range(len(synthetic))]
        options: dict[str, Any] = {
            "seed": 3,
            "output_size": 48,
            "keying": "sample",
            "layout": MosaicGrid(grid=grid, scale_range=(0.5, 1.5), scale_mode="fill"),
        }
        made = MosaicDataset(data, **options)
        build_config = MosaicConfig.build

        def tabled(**arguments: Any) -> MosaicConfig:
            config = build_config(**arguments)
            return dataclasses.replace(config, orders=table(len(config.cells)))  # type: ignore[arg-type]

        monkeypatch.setattr(MosaicConfig, "build", tabled)
        reference = MosaicDataset(data, **options)
        assert isinstance(reference.config.orders, tuple)
        assert isinstance(made.config.orders, CellOrders)
        for epoch in range(2):
            made.set_epoch(epoch)
            reference.set_epoch(epoch)
            for index in range(len(data)):
                assert same(made[index], reference[index]), (grid, epoch, index)

    def test_frozen(self) -> None:
        with pytest.raises(dataclasses.FrozenInstanceError):
            build().layout = MosaicGrid(grid=(3, 3))  # type: ignore[misc]

    # The messages are rankaug.checks' (issue 9 made them uniform, so the expected texts
    # of the former tests/test_mosaic.py table changed with them).
    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            (
                {"output_size": 0},
                ValueError,
                "output_size must be an integer or a pair of integers >= 1, got 0",
            ),
            ({"output_size": (32, -1)}, ValueError, r"output_size must be .* >= 1, got \(32, -1\)"),
            ({"output_size": 3.5}, TypeError, "output_size must be an integer or a pair"),
            ({"grid": (0, 2)}, ValueError, r"grid must be .* >= 1, got \(0, 2\)"),
            # cells of no pixel: (200, 200) took 20 s a sample, 2**64 hung
            (
                {"grid": (200, 200), "output_size": 64},
                ValueError,
                r"layout.grid must be \(rows, cols\) with rows <= 64 and cols <= 64 \(each "
                r"cell at least one pixel of output_size=\(64, 64\)\), got \(200, 200\)",
            ),
            ({"grid": (2**64, 2**64)}, ValueError, "layout.grid must be"),
            ({"grid": (2, 65), "output_size": 64}, ValueError, r"cols <= 64 .*, got \(2, 65\)"),
            ({"grid": (33, 2), "output_size": (32, 96)}, ValueError, "rows <= 32 and cols <= 96"),
            ({"p": 1.5}, ValueError, r"p must be a finite number >= 0.0 and <= 1.0, got 1.5"),
            ({"p": "always"}, TypeError, "p must be a finite number"),
            ({"box_format": "xyxy"}, ValueError, "box_format must be one of"),
            ({"canvas": "big"}, ValueError, "canvas must be one of 'output', 'yolo', got 'big'"),
            ({"canvas": None}, TypeError, "canvas must be one of 'output', 'yolo', got None"),
            ({"scale_mode": "stretch"}, ValueError, "scale_mode must be one of"),
            ({"scale_mode": 3}, TypeError, "scale_mode must be one of .* got 3 of type int"),
            (
                {"center_range": (0.8, 0.2)},
                ValueError,
                r"center_range must be a \(low, high\) pair",
            ),
            ({"scale_range": (0, 1)}, ValueError, r"scale_range must be .* 0.001 <= low"),
            ({"interpolation": 99}, ValueError, "interpolation must be one of cv2.INTER_NEAREST"),
            ({"interpolation": True}, TypeError, "interpolation must be one of .* of type bool"),
            ({"interpolation": "linear"}, TypeError, "interpolation must be .* of type str"),
            ({"fill": "grey"}, TypeError, "fill must be a number or a sequence"),
            ({"fill": float("nan")}, ValueError, "fill must be finite"),
            ({"fill_mask": 0.5}, TypeError, "fill_mask must be an integer"),
            ({"label_fields": "labels"}, TypeError, "label_fields must be a sequence"),
            (
                {"label_fields": ("bboxes",)},
                ValueError,
                "every entry of label_fields must be a key that is not",
            ),
            ({"label_fields": ("labels", "labels")}, ValueError, "distinct key names"),
            ({"keypoint_fields": ("labels",)}, ValueError, "every entry of keypoint_fields"),
            ({"epochs": (3, 4)}, TypeError, r"epochs must be an integer >= 1, got \(3, 4\)"),
            ({"epochs": 0}, ValueError, "epochs must be an integer >= 1, got 0"),
            ({"close_mosaic": 2}, ValueError, "close_mosaic=2 needs epochs="),
            ({"close_mosaic": -1}, ValueError, "close_mosaic must be an integer >= 0"),
            (
                {"min_visibility": 2.0},
                ValueError,
                "min_visibility must be a finite number >= 0.0 and <= 1.0",
            ),
            ({"min_area": True}, TypeError, "min_area must be a finite number"),
            ({"record": 3}, TypeError, "record must be None or a key name other than"),
            (
                {"record": "image"},
                ValueError,
                "record must be None or a key name other than .*got 'image'",
            ),
            ({"record": "labels"}, ValueError, "record must be None or a key name .*got 'labels'"),
            ({"record": "boxes"}, ValueError, "record must be None or a key name .*got 'boxes'"),
            ({"clip": "yes"}, TypeError, "clip must be True or False"),
            (
                {"affine": {"degrees": 10}},
                TypeError,
                "affine must be None or a rankaug.MosaicAffine, got .* of type dict",
            ),
            ({"affine": True}, TypeError, "affine must be None or a rankaug.MosaicAffine"),
            (
                {"color": HSVJitter(record_key="jitter")},
                ValueError,
                r"does not use color.record_key, got 'jitter' \(leave it at 'hsv'\)",
            ),
            (
                {"affine": MosaicAffine(), "canvas": "yolo"},
                ValueError,
                "canvas='yolo' builds YOLO's canvas for an affine applied afterwards",
            ),
        ],
    )
    def test_bad_arguments_are_named(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            build(**kwargs)
        with pytest.raises(error, match=message):  # and MosaicDataset checks through it
            MosaicDataset(SyntheticDetection(8, image_size=16), seed=0, **grouped(kwargs))

    @pytest.mark.parametrize(
        ("kwargs", "image", "mask", "message"),
        [
            ({"fill": 300}, np.uint8, None, r"fill must be whole numbers in \[0, 255\]"),
            ({"fill": -1}, np.uint16, None, r"fill must be whole numbers in \[0, 65535\]"),
            ({"fill": 0.5}, np.uint8, None, "fill must be whole numbers"),
            ({"fill": 1e39}, np.float32, None, "fill must be within"),
            (
                {"fill": (1, 2)},
                np.uint8,
                None,
                "fill has 2 values, dataset.0. image has 3 channels",
            ),
            (
                {"fill_mask": 300},
                np.uint8,
                np.uint8,
                r"fill_mask must be whole numbers in \[0, 255\]",
            ),
        ],
    )
    def test_fill_must_fit_the_data(
        self, kwargs: dict[str, Any], image: Any, mask: Any, message: str
    ) -> None:
        config = build(**kwargs)
        masks = None if mask is None else np.zeros((4, 4), mask)
        with pytest.raises(ValueError, match=message):
            config.check_fill(np.zeros((4, 4, 3), image), masks, "dataset[0]")

    def test_the_default_fill_is_refused_for_float_images(self) -> None:
        # it painted 114 into float images in [0, 1]
        default = build()
        assert (default.fill, default.fill_default, default.layout.fill) == ((114.0,), True, None)
        default.check_fill(np.zeros((4, 4, 3), np.uint8), None, "dataset[0]")
        with pytest.raises(ValueError, match=r"^fill must be given for float images"):
            default.check_fill(np.zeros((4, 4, 3), np.float32), None, "dataset[0]")
        given = build(fill=114 / 255)
        assert not given.fill_default
        given.check_fill(np.zeros((4, 4, 3), np.float32), None, "dataset[0]")
        kept = build(layout=dataclasses.replace(MosaicGrid(), grid=(3, 3)))
        assert kept.fill_default  # a replaced grid keeps its fill unset

    @pytest.mark.parametrize(
        ("image", "error", "message"),
        [
            (np.zeros((24, 32), np.uint8), ValueError, "an HxWx3 RGB image, got shape (24, 32)"),
            (np.zeros((24, 32, 4), np.uint8), ValueError, "got shape (24, 32, 4)"),
            (np.zeros((24, 32, 3), np.uint16), TypeError, "must have dtype uint8"),
        ],
    )
    def test_a_colour_jitter_refuses_the_main_image_before_the_mosaic(
        self, image: np.ndarray, error: type[Exception], message: str
    ) -> None:
        # it was refused after painting, as "image must be ... got shape (64, 64)"
        expected = "dataset[1] image, which color= jitters, "
        with pytest.raises(error, match=re.escape(expected) + ".*" + re.escape(message)):
            build(color=HSVJitter()).check_fill(image, None, "dataset[1]")
        samples = [{"image": image, "bboxes": np.zeros((0, 4)), "labels": []}] * 4
        mosaic = MosaicDataset(samples, seed=0, output_size=64, color=HSVJitter())
        with pytest.raises(error, match=re.escape("dataset[0] image, which color= jitters")):
            mosaic[0]

    def test_fills_that_fit(self) -> None:
        build(fill=(0, 255, 7)).check_fill(np.zeros((4, 4, 3), np.uint8), None, "dataset[0]")
        build(fill=-5, fill_mask=-1).check_fill(
            np.zeros((4, 4), np.float32), np.zeros((4, 4), np.int32), "dataset[0]"
        )


class TestCellOrders:
    @pytest.mark.parametrize("cells", [1, 2, 4, 63, 64, 65, 100])
    def test_the_table_s_orders(self, cells: int) -> None:
        orders = CellOrders(cells)
        expected = table(cells)
        assert len(orders) == cells
        assert tuple(orders) == expected
        assert [orders[main - cells] for main in range(cells)] == list(expected)
        assert orders[1:3] == expected[1:3]

    @pytest.mark.parametrize("cells", [4, 100])
    def test_out_of_range(self, cells: int) -> None:
        with pytest.raises(IndexError, match=f"cell {cells} out of range for {cells} cells"):
            CellOrders(cells)[cells]
        with pytest.raises(IndexError, match=f"cell {-cells - 1} out of range"):
            CellOrders(cells)[-cells - 1]

    def test_refuses_a_count_that_is_no_count(self) -> None:
        # CellOrders(-1) was made, its len() failing later; CellOrders(2.0) failed in range()
        with pytest.raises(ValueError, match=r"cells must be an integer >= 0, got -1$"):
            CellOrders(-1)
        with pytest.raises(TypeError, match=r"cells must be an integer >= 0, got 2\.0 of type"):
            CellOrders(2.0)  # type: ignore[arg-type]
        assert len(CellOrders(np.int64(3))) == 3  # type: ignore[arg-type]

    def test_equal_by_count_and_pickled_small(self) -> None:
        assert CellOrders(4096) == CellOrders(4096) != CellOrders(4)
        assert hash(CellOrders(9)) == hash(CellOrders(9))
        again = pickle.loads(pickle.dumps(CellOrders(4096)))
        assert again == CellOrders(4096)
        assert again[7] == row(4096, 7)  # the table's row (not its 4096 rows)
        assert repr(again) == "CellOrders(4096)"
