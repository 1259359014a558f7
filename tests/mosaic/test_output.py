from __future__ import annotations

from typing import Any
from unittest import mock

import numpy as np
import pytest

import rankaug.mosaic as mosaic_module
from rankaug import HSVJitter, MosaicDataset, MosaicGrid
from rankaug.datasets import SyntheticDetection
from rankaug.mosaic import MosaicAffine
from rankaug.mosaic.output import make_output
from rankaug.mosaic.plan import Plan


class TestMakeOutput:
    @pytest.mark.parametrize(
        "options",
        [
            {},
            {"p": 0.0},  # no mosaic: the main image letterboxed
            {"layout": MosaicGrid(flip=1.0)},
            {"affine": MosaicAffine(degrees=10.0, flip=0.5)},
            {"color": HSVJitter()},
        ],
    )
    def test_the_output_is_its_arrays_and_record_repacked(self, options: dict[str, Any]) -> None:
        # MosaicDataset repacks what make_output returns: the image as it is, the targets
        # in the sample's dtypes, the record with the sample's epoch, state and settings
        data = SyntheticDetection(6, image_size=(40, 56), varied_sizes=True)
        mosaic = MosaicDataset(data, seed=3, output_size=48, keying="sample", **options)
        made: list[tuple[dict[str, Any], dict[str, Any]]] = []

        def spy(*args: Any) -> Any:
            made.append(result := make_output(*args))
            return result

        with mock.patch.object(mosaic_module, "make_output", spy):
            out = mosaic[2]
        ((arrays, record),) = made
        assert out["image"] is arrays["image"]
        for key in ("bboxes", "labels"):  # in the sample's dtypes (float32 boxes here)
            np.testing.assert_array_equal(out[key], arrays[key].astype(out[key].dtype))
        assert out["mosaic"] is record
        assert record["applied"] == (options.get("p", 1.0) == 1.0)
        assert ("flip" in record) == ("layout" in options)
        assert ("affine" in record) == ("affine" in options)
        assert ("color" in record) == ("color" in options)

    def test_no_mosaic_letterboxes_the_main_tile(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(2, image_size=(20, 40)), seed=0, output_size=40)
        samples = [mosaic.dataset[1]]
        reader = mosaic._reader
        tiles = reader.tiles([1], samples, samples)
        plan = Plan(False, 0, [1], [0.5], [0.5], [1.0] * 4)
        arrays, record = make_output(mosaic.config, plan, tiles, samples[0])
        assert arrays["image"].shape == (40, 40, 3)
        assert record["applied"] is False
        assert record["indices"] == [1]
        assert record["dst"] == [(0, 10, 40, 30)]  # 40 wide, 20 high, centred
