from __future__ import annotations

import re

import numpy as np
import pytest

from rankaug.samples.stale import refuse_changed, refuse_stale, refuse_stale_points

_WAY = "a value of the image that has as many entries by chance (a 3-value mean) is not"


class TestRefuseStale:
    def test_the_message_tells_how_to_keep_a_value_of_the_image(self) -> None:
        # a 3-value mean beside 3 boxes: no way to keep it was told
        with pytest.raises(ValueError, match=re.escape(f"or drop them; {_WAY}")):
            refuse_stale({"bboxes": np.zeros((1, 4))}, {"mean": [0.5, 0.4, 0.3]}, {}, 3)
        norm = {"norm": {"mean": [0.5, 0.4, 0.3]}}  # inside a dict: never taken for one
        refuse_stale({"bboxes": np.zeros((1, 4))}, norm, {}, 3)  # raises if refused

    def test_per_box_values_left_behind_are_named(self) -> None:
        data = {"bboxes": np.zeros((1, 4)), "masks": np.zeros((2, 4, 4))}
        source = {"iscrowd": [0, 1], "image_id": 7}
        with pytest.raises(ValueError, match=r"kept 1 of 2 boxes, but 'masks', 'iscrowd' \(one"):
            refuse_stale(data, source, {}, 2)

    def test_values_handed_out_or_of_the_image_pass(self) -> None:
        data = {"bboxes": np.zeros((1, 4))}
        source = {"labels": [0, 1], "image_id": 7, "orig_size": [4, 4]}
        refuse_stale(data, source, {"labels": source["labels"]}, 2)  # raises if refused
        refuse_stale(data, (3, 4), {}, 2)  # a pair's class: nothing to check


class TestRefuseStalePoints:
    def test_the_message_tells_how_to_keep_a_value_of_the_image(self) -> None:
        # a 3-value mean beside 3 keypoints: no way to keep it was told
        with pytest.raises(ValueError, match=re.escape(f"or drop them; {_WAY}")):
            refuse_stale_points({"keypoints": np.zeros((1, 2))}, {"mean": [1, 2, 3]}, {}, 3)
        norm = {"norm": {"mean": [0.5, 0.4, 0.3]}}  # inside a dict: never taken for one
        refuse_stale_points({"keypoints": np.zeros((1, 2))}, norm, {}, 3)  # raises if refused

    def test_per_keypoint_values_left_behind_are_named(self) -> None:
        data = {"keypoints": np.zeros((1, 2))}
        source = {"visible": np.array([2, 1]), "image_id": 7}
        with pytest.raises(ValueError, match=r"kept 1 of 2 keypoints, but 'visible' \(one"):
            refuse_stale_points(data, source, {}, 2)

    def test_values_handed_out_or_of_the_image_pass(self) -> None:
        data = {"keypoints": np.zeros((1, 2))}
        source = {"joint": [0, 1], "image_id": 7, "orig_size": [4, 4]}
        refuse_stale_points(data, source, {"joint": source["joint"]}, 2)  # raises if refused
        refuse_stale_points(data, (3, 4), {}, 2)  # a pair's class: nothing to check


class TestRefuseChanged:
    def test_boxes_and_keypoints_are_each_checked_when_their_number_changed(self) -> None:
        source = {"iscrowd": [0, 1], "visible": [2, 1, 2]}
        boxes, points = np.zeros((2, 4)), np.zeros((3, 2))
        originals = {"bboxes": boxes, "keypoints": points}
        with pytest.raises(ValueError, match=r"kept 1 of 2 boxes, but 'iscrowd'"):
            refuse_changed({"bboxes": boxes[:1], "keypoints": points}, source, originals)
        with pytest.raises(ValueError, match=r"kept 2 of 3 keypoints, but 'visible'"):
            refuse_changed({"bboxes": boxes, "keypoints": points[:2]}, source, originals)
        refuse_changed({"bboxes": boxes, "keypoints": points}, source, originals)  # unchanged
