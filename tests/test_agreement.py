"""``refuse_disagreement``: what differs between a part and the main one, named."""

from __future__ import annotations

import numpy as np
import pytest

from rankaug._multi.agreement import refuse_disagreement
from rankaug._multi.part import NO_BOXES, Part


def part(index: int, *, channels: int = 3, boxes: np.ndarray | None = None) -> Part:
    image = np.zeros((4, 4, channels), np.uint8)
    boxes = NO_BOXES if boxes is None else boxes
    return Part(index, image, boxes, {}, None, None, None, {})


class TestRefuseDisagreement:
    def test_names_the_part_the_main_one_and_what_differs(self) -> None:
        channels = r"dataset\[3\] image has shape \(4, 4, 1\) and dtype uint8, but the main "
        with pytest.raises(ValueError, match=channels + r"image dataset\[0\] has \(4, 4, 3\)"):
            refuse_disagreement(part(3, channels=1), part(0), "mosaic tiles")
        boxed = r"dataset\[2\] has 1 boxes, but the main image dataset\[0\] has no boxes: "
        with pytest.raises(ValueError, match=boxed + "mosaic tiles need the same targets"):
            refuse_disagreement(part(2, boxes=np.zeros((1, 4))), part(0), "mosaic tiles")
        with pytest.raises(ValueError, match=r"dataset\[1\] has no boxes, but the main image"):
            refuse_disagreement(part(1), part(0, boxes=np.zeros((0, 4))), "mosaic tiles")

    def test_a_part_without_boxes_names_torchvisions_coco_targets(self) -> None:
        # wrap_dataset_for_transforms_v2(CocoDetection) gives an image without
        # annotations {"image_id": ...}: nothing the message said named that
        torchvision = (
            r"wrap_dataset_for_transforms_v2\(CocoDetection\(\.\.\.\)\) gives .*'image_id'"
        )
        with pytest.raises(ValueError, match=torchvision):
            refuse_disagreement(part(1), part(0, boxes=np.zeros((1, 4))), "mosaic tiles")

    def test_empty_boxes_beside_a_main_part_without_boxes_lose_nothing(self) -> None:
        refuse_disagreement(part(1, boxes=np.zeros((0, 4))), part(0), "tiles")  # no error
        with pytest.raises(ValueError, match="has 2 boxes"):  # but boxes that would be lost
            refuse_disagreement(part(1, boxes=np.zeros((2, 4))), part(0), "tiles")
