from __future__ import annotations

import numpy as np

from rankaug._multi.letterbox import letterbox
from tests.mix.painted import flat_sample
from tests.mix.test_parts import config, parts


class TestLetterbox:
    def test_fits_and_centres_with_the_targets(self) -> None:
        sample = {**flat_sample(0, (4, 8), 9, boxes=[(0, 0, 8, 4)]),
                  "keypoints": np.array([[4.0, 2.0]]), "kp": [1]}  # fmt: skip
        out = letterbox(parts([sample])[0], (8, 8), config(fill=(1, 2, 3)))
        assert out.hw == (8, 8)
        assert out.image[2:6].tolist() == [[[9, 9, 9]] * 8] * 4
        assert out.image[0, 0].tolist() == [1, 2, 3]
        assert out.boxes.tolist() == [[0.0, 2.0, 8.0, 6.0]]
        assert out.keypoints is not None
        assert out.keypoints.tolist() == [[4.0, 4.0]]
        assert out.masks is not None
        assert out.masks[0].sum() == 32  # 8 x 4 px: all of the box
        assert out.mask is not None
        assert (out.mask[:2] == 0).all()
