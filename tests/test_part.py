from __future__ import annotations

import numpy as np

from rankaug._multi.part import NO_BOXES, Part
from tests.test_parts import read, reader, sample


class TestPart:
    def test_hw_and_signature(self) -> None:
        (part,) = read(reader(), sample())
        assert part.hw == (6, 8)
        assert part.signature() == ((3,), np.dtype(np.uint8), None, None, None, True, False)
        (pointed,) = read(reader(), sample(keypoints=np.zeros((2, 3))))
        assert pointed.signature()[4] == 3  # the keypoints' columns: x, y and one more
        assert part.label is None
        assert part.boxed
        (bare,) = read(reader(), {"image": np.zeros((6, 8, 3), np.uint8)})
        assert not bare.boxed
        assert bare.signature()[-1] is True

    def test_no_boxes_is_told_by_identity_not_by_shape(self) -> None:
        # a background image's empty boxes are boxes; only NO_BOXES itself is none
        image = np.zeros((4, 4), np.uint8)
        empty = Part(0, image, np.zeros((0, 4)), {}, None, None, None, {})
        none = Part(0, image, NO_BOXES, {}, None, None, None, {})
        assert empty.boxed
        assert not none.boxed
        assert empty.signature()[:-1] == none.signature()[:-1] != empty.signature()
