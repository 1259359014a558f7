from __future__ import annotations

from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch

from rankaug import RandomAugmentWrapper
from rankaug.adapters import KeyMap
from rankaug.collate import collate_detection
from rankaug.errors import SampleError
from rankaug.samples.whole import whole_value
from rankaug.stream import StreamingAugment
from tests.albu import bbox_params, keypoint_params

IMAGE = {"image": np.zeros((20, 30))}  # 20 high, 30 wide
INT16 = np.zeros((1, 4), np.int16)


def _nearest_pixels(xyxy: np.ndarray) -> np.ndarray:
    """The rule, written out: each edge to the nearest pixel edge, halves down."""
    near = np.ceil(xyxy[:, :2] - 0.5)
    far = np.maximum(np.ceil(xyxy[:, 2:] - 0.5 - 1e-3), near + 1)
    return np.concatenate([near, far], axis=1)


def _scaled(box_format: str = "pascal_voc") -> A.Compose:
    """A random scale: boxes and keypoints move by fractions of a pixel, or not at all."""
    return A.Compose(
        [A.Affine(scale=(0.5, 1.5), p=0.7), A.HorizontalFlip(p=0.5)],
        bbox_params=bbox_params(box_format),
        keypoint_params=keypoint_params("xy"),
    )


def _samples(dtype: Any, count: int = 24, box_format: str = "pascal_voc") -> list[dict[str, Any]]:
    boxes = [[8, 5, 31, 35], [40, 2, 49, 13]]
    if box_format == "coco":
        boxes = [[8, 5, 23, 30], [40, 2, 9, 11]]
    return [
        {
            "image": np.full((40, 50, 3), 50, np.uint8),
            "bboxes": np.array(boxes, dtype),
            "labels": np.array([1, 2]),
            "keypoints": np.array([[10, 10], [21, 23], [45, 7]], dtype),
        }
        for _ in range(count)
    ]


class TestWholeValue:
    def test_integer_boxes_are_the_pixels_whose_centres_they_hold(self) -> None:
        boxes = np.array([[2.5, 2.5, 12.5, 15.0], [0.4, 1.6, 7.6, 9.4]])
        out = whole_value("bboxes", boxes, INT16, IMAGE, "pascal_voc")
        assert out.tolist() == [[2, 2, 12, 15], [0, 2, 8, 9]]

    def test_coco_boxes_go_through_their_corners(self) -> None:
        boxes = np.array([[2.5, 2.5, 10.0, 12.6]])  # corners 2.5, 2.5, 12.5, 15.1
        assert whole_value("bboxes", boxes, INT16, IMAGE, "coco").tolist() == [[2, 2, 10, 13]]

    def test_columns_after_the_box_are_kept(self) -> None:
        boxes = np.array([[2.5, 2.5, 12.5, 15.0, 7.0]])
        out = whole_value("bboxes", boxes, np.zeros((1, 5), np.int64), IMAGE, "pascal_voc")
        assert out.tolist() == [[2, 2, 12, 15, 7]]

    def test_keypoints_are_rounded_to_the_nearest_halves_down(self) -> None:
        points = np.array([[2.5, 7.6, 2.0], [3.49, 0.5, 1.0]], np.float32)
        out = whole_value("keypoints", points, np.zeros((1, 3), np.int32), IMAGE, None)
        assert out.tolist() == [[2, 8, 2], [3, 0, 1]]

    def test_floats_other_keys_and_unknown_formats_are_left_as_they_are(self) -> None:
        boxes = np.array([[2.5, 2.5, 12.5, 15.0]])
        assert whole_value("bboxes", boxes, np.zeros((1, 4)), IMAGE, "pascal_voc") is boxes
        assert whole_value("labels", boxes, INT16, IMAGE, "pascal_voc") is boxes
        assert whole_value("bboxes", boxes, INT16, IMAGE, None) is boxes

    def test_a_dtype_short_of_the_output_is_refused_also_without_boxes(self) -> None:
        wide = {"image": np.zeros((20, 300))}
        with pytest.raises(ValueError, match=r"^the sample's bboxes are int8, which holds up "):
            whole_value("bboxes", np.zeros((0, 4)), np.zeros((0, 4), np.int8), wide, "coco")
        with pytest.raises(ValueError, match=r"^the sample's keypoints are int8, which holds "):
            whole_value("keypoints", np.zeros((0, 2)), np.zeros((0, 2), np.int8), wide, None)

    def test_normalised_integer_boxes_are_refused(self) -> None:
        with pytest.raises(ValueError, match=r"bboxes are int16, integers, but box_format='yolo'"):
            whole_value("bboxes", np.zeros((0, 4)), INT16, IMAGE, "yolo")


class TestIntegerTargetsThroughTheWrapper:
    @pytest.mark.parametrize("box_format", ["pascal_voc", "coco"])
    @pytest.mark.parametrize("dtype", [np.int16, np.int64])
    def test_every_draw_gives_the_dtype_and_the_float_draw_made_whole(
        self, dtype: Any, box_format: str
    ) -> None:
        ints = RandomAugmentWrapper(_samples(dtype, 24, box_format), _scaled(box_format), seed=3)
        given = _samples(np.float64, 24, box_format)
        floats = RandomAugmentWrapper(given, _scaled(box_format), seed=3)  # the same draws
        moved = 0
        for i in range(len(ints)):
            out, ref = ints[i], floats[i]
            assert (out["bboxes"].dtype, out["keypoints"].dtype) == (dtype, dtype)
            xyxy = ref["bboxes"].copy()
            if box_format == "coco":
                xyxy[:, 2:] += xyxy[:, :2]
            want = _nearest_pixels(xyxy)
            if box_format == "coco":
                want[:, 2:] -= want[:, :2]
            assert out["bboxes"].tolist() == want.tolist()
            assert out["keypoints"].tolist() == np.ceil(ref["keypoints"] - 0.5).tolist()
            moved += bool((abs(ref["bboxes"] - np.round(ref["bboxes"])) > 1e-3).any())
        assert 0 < moved < len(ints)  # some draws moved boxes by fractions, some did not
        batch = collate_detection([ints[i] for i in range(4)])  # one dtype: they collate
        assert batch["bboxes"][0].dtype == torch.from_numpy(np.zeros(0, dtype)).dtype

    def test_the_streaming_form_keeps_the_dtype(self) -> None:
        class Stream(torch.utils.data.IterableDataset[dict[str, Any]]):
            def __iter__(self) -> Any:
                yield from _samples(np.int32, 12)

        train = StreamingAugment(Stream(), _scaled(), seed=0)
        dtypes = {(s["bboxes"].dtype, s["keypoints"].dtype) for s in train}
        assert dtypes == {(np.dtype(np.int32), np.dtype(np.int32))}

    def test_keymap_lists_come_back_integers(self) -> None:
        samples = [
            {"img": np.full((40, 50, 3), 50, np.uint8),
             "objects": {"bbox": [[8, 5, 23, 30]], "category": [1]}}
            for _ in range(12)
        ]  # fmt: skip
        adapter = KeyMap("img", bboxes="objects.bbox", labels="objects.category")
        train = RandomAugmentWrapper(samples, _scaled("coco"), seed=0, adapter=adapter)
        boxes = [train[i]["objects"]["bbox"] for i in range(len(train))]
        assert all(type(v) is int for box in boxes for row in box for v in row)

    def test_a_dtype_short_of_the_output_is_refused_on_every_draw(self) -> None:
        samples = [{**s, "image": np.zeros((40, 300, 3), np.uint8)} for s in _samples(np.int8, 1)]
        never = A.Compose([A.HorizontalFlip(p=0.0)], bbox_params=bbox_params("pascal_voc"),
                          keypoint_params=keypoint_params("xy"))  # fmt: skip
        with pytest.raises(SampleError, match=r"bboxes are int8, which holds up to 127"):
            RandomAugmentWrapper(samples, never, seed=0)[0]
