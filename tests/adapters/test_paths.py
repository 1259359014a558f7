"""Dotted key paths: what ``KeyMap`` finds and writes with."""

from __future__ import annotations

from typing import Any

from rankaug.adapters.paths import beside, describe_keys, is_object_list, put


class TestIsObjectList:
    def test_a_list_of_dicts_with_the_key_or_an_empty_list(self) -> None:
        assert is_object_list([{"bbox": [0, 0, 1, 1]}], "bbox")
        assert is_object_list([], "bbox")
        assert not is_object_list([{"id": 1}], "bbox")
        assert not is_object_list({"bbox": []}, "bbox")


class TestBeside:
    def test_the_values_in_the_dict_of_a_nested_path_but_those_skipped(self) -> None:
        sample = {"pose": {"pts": [[1, 2]], "vis": [2], "img": 0}, "other": [1]}
        assert beside(sample, ("pose", "pts"), frozenset({"pose.pts", "pose.img"})) == {
            "pose.vis": [2]
        }

    def test_a_top_level_path_or_one_through_no_dict_has_none(self) -> None:
        assert beside({"pts": [[1, 2]], "vis": [2]}, ("pts",), frozenset()) == {}
        assert beside({"pose": [[1, 2]]}, ("pose", "pts"), frozenset()) == {}


class TestDescribeKeys:
    def test_nested_dicts_list_their_keys(self) -> None:
        sample = {"pixels": None, "ann": {"boxes": [], "cls": []}}
        assert describe_keys(sample) == "[ann (boxes, cls), pixels]"


class TestPut:
    def test_each_dict_on_the_way_is_copied_once_and_the_sample_left_as_it_was(self) -> None:
        inner = {"bbox": [[0, 0, 1, 1]], "id": [7]}
        outer = {"objects": inner}
        out = {"meta": outer}
        copied: dict[tuple[str, ...], dict[str, Any]] = {(): out}
        put(copied, ("meta", "objects", "bbox"), [])
        put(copied, ("meta", "objects", "id"), [])
        assert out == {"meta": {"objects": {"bbox": [], "id": []}}}
        assert out["meta"] is not outer
        assert inner == {"bbox": [[0, 0, 1, 1]], "id": [7]}
