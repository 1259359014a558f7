from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rankaug._multi.pairs import PairReader, Part
from rankaug.mix.config import PairConfig
from rankaug.params import Targets, pop_fields
from rankaug.samples import DefaultAdapter
from tests.mix.painted import flat_sample


def config(**change: Any) -> PairConfig:
    kwargs: dict[str, Any] = {"keypoint_fields": ("kp",), "fill": 0, "record": "mixup", **change}
    return PairConfig.build(targets=Targets(**pop_fields(Targets, kwargs)), **kwargs)


def reader(**change: Any) -> PairReader:
    return PairReader(config(**change), DefaultAdapter(), "MixUp")


def parts(samples: list[Any], **change: Any) -> list[Part]:
    read = reader(**change)
    return read.parts(list(range(len(samples))), samples, samples)


class TestPairReader:
    def test_reads_boxes_in_pixels_and_gives_them_back_in_their_format(self) -> None:
        sample = flat_sample(0, (10, 20), 1, boxes=[(0.5, 0.5, 0.5, 0.2)])  # yolo
        read = reader(box_format="yolo")
        part = read.parts([0], [sample], [sample])[0]
        np.testing.assert_allclose(part.boxes, [[5.0, 4.0, 15.0, 6.0]], atol=1e-6)
        out = read.emit(part, {"image", "bboxes"})
        np.testing.assert_allclose(out["bboxes"], [[0.5, 0.5, 0.5, 0.2]])
        assert out["labels"].tolist() == [0]

    def test_boxes_inside_are_kept_and_boxes_reaching_out_clipped(self) -> None:
        inside = flat_sample(0, (10, 20), 1, boxes=[(0.0, 0.0, 20.0, 10.0)])
        out = flat_sample(0, (10, 20), 1, boxes=[(-2.0, 1.0, 6.0, 14.0)])
        kept, clipped = parts([inside]), parts([out])
        np.testing.assert_array_equal(kept[0].boxes, [[0.0, 0.0, 20.0, 10.0]])
        assert kept[0].boxes.dtype == np.float64
        assert not kept[0].clipped
        np.testing.assert_array_equal(clipped[0].boxes, [[0.0, 1.0, 6.0, 10.0]])
        assert clipped[0].clipped

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            ({"image": [[1, 2]]}, r"dataset\[0\] image must be a numpy array"),
            ({"bboxes": [[1, 2, 3]]}, r"dataset\[0\] bboxes must have shape \(N, 4\)"),
            ({"bboxes": [[30, 1, 40, 3]]}, r"dataset\[0\] bboxes .*lies entirely outside"),
            ({"labels": [1, 2]}, r"dataset\[0\] 'labels' has 2 entries for 1 boxes"),
            ({"iscrowd": [0]}, r"dataset\[0\] 'iscrowd' looks like a per-box field"),
            ({"masks": np.zeros((2, 10, 20))}, r"dataset\[0\] masks must have shape \(1, 10, 20\)"),
            (
                {"mask": np.zeros((3, 3))},
                r"dataset\[0\] mask must be .* \(10, 20\) .* got shape \(3, 3\)",
            ),
            (
                {"keypoints": [1.0, 2.0]},
                r"dataset\[0\] 'keypoints' must be keypoints of shape \(K, 2\+\)",
            ),
            ({"keypoints": [[1.0, 2.0]]}, r"dataset\[0\] 'kp' must have one entry per keypoint"),
        ],
    )
    def test_names_the_sample_and_the_field(self, edit: dict[str, Any], message: str) -> None:
        sample = {**flat_sample(0, (10, 20), 1), **edit}
        with pytest.raises((TypeError, ValueError), match=message):
            parts([sample])

    def test_the_partner_must_agree_with_the_main_sample(self) -> None:
        main = flat_sample(0, (8, 8), 1)
        with pytest.raises(ValueError, match=r"dataset\[1\] image has shape \(8, 8\) and dtype"):
            parts([main, {**main, "image": np.zeros((8, 8), np.uint8)}])
        with pytest.raises(ValueError, match=r"dataset\[1\] masks has dtype bool"):
            parts([main, {**main, "masks": main["masks"].astype(bool)}])
        without = {k: v for k, v in main.items() if k != "mask"}
        with pytest.raises(ValueError, match=r"dataset\[1\] and dataset\[0\] disagree on having"):
            parts([main, without])

    def test_a_partner_of_another_size_is_refused_or_letterboxed(self) -> None:
        main, small = flat_sample(0, (8, 8), 1), flat_sample(1, (4, 8), 2)
        with pytest.raises(ValueError, match="MixUp needs both of one size"):
            parts([main, small])
        fitted = parts([main, small], partner_fit="letterbox")[1]
        assert fitted.hw == (8, 8)
        with pytest.raises(ValueError, match="fill must be whole numbers in"):
            parts([main, small], partner_fit="letterbox", fill=0.5)
