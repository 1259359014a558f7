"""Tests for rankaug.cli.views: what a contact sheet reads of a sample."""

from __future__ import annotations

import numpy as np
import pytest

from rankaug.cli.views import SheetViews, sample_view


class PairsInYolo:
    """``(image, target)`` pairs whose boxes are in the ``box_format`` it declares."""

    box_format = "yolo"

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        image = np.zeros((40, 80, 3), np.uint8)
        return image, {"boxes": np.array([[0.5, 0.5, 0.25, 0.5]]), "labels": np.array([index])}


class TestSampleView:
    @pytest.mark.parametrize("key", ["boxes", "bboxes"])
    def test_a_pair_reads_its_boxes_in_the_box_format_given(self, key: str) -> None:
        image = np.zeros((40, 80, 3), np.uint8)
        pair = (image, {key: np.array([[0.5, 0.5, 0.25, 0.5]]), "labels": np.array([3])})
        view = sample_view(pair, "yolo")
        assert view.boxes.tolist() == [[30.0, 10.0, 50.0, 30.0]]  # not left as pixels
        assert view.labels == [3]

    def test_a_pair_defaults_to_pixel_xyxy(self) -> None:
        pair = (np.zeros((40, 80, 3), np.uint8), {"boxes": np.array([[4, 6, 10, 20]])})
        assert sample_view(pair).boxes.tolist() == [[4.0, 6.0, 10.0, 20.0]]


class TestSheetViews:
    def test_pairs_are_drawn_in_the_datasets_box_format(self) -> None:
        item = SheetViews(PairsInYolo(), PairsInYolo.box_format)[1]
        assert not isinstance(item, Exception)
        index, _, view, _, _ = item  # type: ignore[misc]
        assert index == 1
        assert view.boxes.tolist() == [[30.0, 10.0, 50.0, 30.0]]
