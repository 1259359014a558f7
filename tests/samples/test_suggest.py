"""Tests for rankaug.samples.suggest: every suggested line is a KeyMap that reads the sample."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from rankaug.adapters import KeyMap
from rankaug.samples import DefaultAdapter
from rankaug.samples.suggest import lookup, suggest_adapter

BOXES = frozenset({"image", "bboxes", "labels"})


def refusal(sample: Mapping[str, Any], targets: frozenset[str] = BOXES) -> str:
    """The default adapter's refusal of ``sample``, read for these targets."""
    with pytest.raises(ValueError, match="Read them with") as caught:
        DefaultAdapter().unpack(sample, targets)
    return str(caught.value)


def suggested(message: str) -> KeyMap:
    """The KeyMap the message suggests, built as a user would paste it."""
    found = re.search(r"adapter=rankaug\.adapters\.(KeyMap\([^)]*\))", message)
    assert found is not None, message
    adapter = eval(found.group(1), {"KeyMap": KeyMap})  # the message's own line
    assert isinstance(adapter, KeyMap)
    return adapter


class TestSuggestAdapter:
    def test_a_label_field_read_under_its_name_is_not_given_twice(self) -> None:
        # label_fields=("label",) reads "label"; unread "boxes" beside "bboxes"
        boxes = np.array([[1.0, 1.0, 3.0, 3.0]])
        sample = {"image": np.zeros((8, 8, 3), np.uint8), "bboxes": boxes + 1, "boxes": boxes,
                  "label": np.array([2])}  # fmt: skip
        message = refusal(sample, BOXES | {"label"})
        adapter = suggested(message)  # KeyMap refuses a path given to two names
        assert adapter.keys == {"image": "image", "bboxes": "boxes", "label": "label"}
        data, _ = adapter.unpack(sample, BOXES | {"label"})
        np.testing.assert_array_equal(data["bboxes"], boxes)
        assert data["label"].tolist() == [2]

    def test_voc_corner_dicts_are_to_be_given_as_rows(self) -> None:
        image = np.zeros((8, 8, 3), np.uint8)
        corners = {"xmin": 1, "ymin": 2, "xmax": 5, "ymax": 6}
        message = refusal({"image": image, "object": [{"name": "cat", "bndbox": corners}]})
        assert (
            "giving 'object' as per-object lists (a dict of lists, not a list of dicts) and "
            "'object.bndbox' as [x_min, y_min, x_max, y_max] rows (not dicts of 'xmin', 'ymin', "
            "'xmax', 'ymax'), then adapter=" in message
        )
        # given as the message says, the suggested KeyMap reads the boxes
        converted = {"image": image, "object": {"name": ["cat"], "bndbox": [[1, 2, 5, 6]]}}
        data, _ = suggested(message).unpack(converted, BOXES)
        np.testing.assert_array_equal(data["bboxes"], [[1, 2, 5, 6]])

    def test_a_top_level_corner_dict_is_to_be_given_as_rows(self) -> None:
        image = np.zeros((8, 8, 3), np.uint8)
        message = refusal({"image": image, "bndbox": {"xmin": 1, "ymin": 2, "xmax": 5, "ymax": 6}})
        assert "giving 'bndbox' as [x_min, y_min, x_max, y_max] rows" in message
        data, _ = suggested(message).unpack({"image": image, "bndbox": [[1, 2, 5, 6]]}, BOXES)
        np.testing.assert_array_equal(data["bboxes"], [[1, 2, 5, 6]])

    def test_coco_annotations_read_once_given_as_lists(self) -> None:
        image = np.zeros((8, 8, 3), np.uint8)
        sample = {"image": image, "annotations": [{"bbox": [1, 2, 3, 4], "category_id": 7}]}
        message = refusal(sample)
        converted = {"image": image, "annotations": {"bbox": [[1, 2, 3, 4]], "category_id": [7]}}
        data, _ = suggested(message).unpack(converted, BOXES)
        np.testing.assert_array_equal(data["bboxes"], [[1, 2, 3, 4]])
        assert list(data["labels"]) == [7]

    def test_each_path_is_given_once(self) -> None:
        line = suggest_adapter(
            {"image": 0, "boxes": [[0, 0, 1, 1]], "labels": [2]}, ["boxes"], kept={"cls": "labels"}
        )
        assert (
            line == "adapter=rankaug.adapters.KeyMap(image='image', bboxes='boxes', cls='labels')"
        )


class TestLookup:
    def test_dotted_paths(self) -> None:
        assert lookup({"a": {"b": {"c": 1}}}, "a.b.c") == 1
        assert lookup({"a": [1]}, "a.b") is None
