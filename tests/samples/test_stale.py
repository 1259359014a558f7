from __future__ import annotations

import numpy as np
import pytest

from rankaug.samples.stale import refuse_stale


class TestRefuseStale:
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
