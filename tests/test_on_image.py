from __future__ import annotations

import numpy as np
import pytest

from rankaug._multi.on_image import on_image, only_on_image
from rankaug._multi.parts import Part


def part(points: np.ndarray | None, hw: tuple[int, int] = (4, 6)) -> Part:
    fields = {} if points is None else {"joint": np.arange(len(points))}
    return Part(0, np.zeros(hw, np.uint8), np.zeros((0, 4)), {}, None, None, points, fields,
                None)  # fmt: skip


class TestOnImage:
    @pytest.mark.parametrize("columns", [2, 3, 4])
    def test_half_open_on_x_and_y_whatever_follows(self, columns: int) -> None:
        xy: list[list[float]] = [
            [0, 0],
            [5.99, 3.99],
            [6, 0],
            [0, 4],
            [-0.01, 1],
            [1, -0.01],
            [3, 2],
        ]
        points = np.array([[*p] + [9.0] * (columns - 2) for p in xy], np.float64)
        assert on_image(points, (4, 6)).tolist() == [True, True, False, False, False, False, True]


class TestOnlyOnImage:
    def test_drops_those_off_the_image_with_their_fields(self) -> None:
        out = only_on_image(part(np.array([[1.0, 1.0, 2.0], [6.0, 1.0, 2.0], [2.0, 3.0, 0.0]])))
        assert out.keypoints is not None
        assert out.keypoints.tolist() == [[1.0, 1.0, 2.0], [2.0, 3.0, 0.0]]
        assert out.keypoint_fields["joint"].tolist() == [0, 2]

    def test_the_part_itself_when_all_are_on_it_or_it_has_none(self) -> None:
        every = part(np.array([[0.0, 0.0], [5.5, 3.5]]))
        empty = part(np.zeros((0, 2)))
        none = part(None)
        assert only_on_image(every) is every
        assert only_on_image(empty) is empty
        assert only_on_image(none) is none
