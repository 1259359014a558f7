from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from rankaug.samples import (
    DEFAULT_TARGETS,
    DefaultAdapter,
    attach,
    check_adapter,
    class_target,
    passthrough,
    view,
    with_class_target,
)

TARGETS = DEFAULT_TARGETS | {"labels"}


class TestView:
    def test_plain_dicts_are_their_own_view(self) -> None:
        sample = {"image": np.zeros((2, 2), np.uint8), "bboxes": [[0, 0, 1, 1]]}
        assert view(DefaultAdapter(), sample, TARGETS) is sample

    def test_other_samples_are_unpacked(self) -> None:
        pair = (torch.zeros(3, 2, 2), {"boxes": torch.ones(1, 4), "labels": [1]})
        data = view(DefaultAdapter(), pair, TARGETS)
        assert data["image"].shape == (2, 2, 3)
        assert isinstance(data["bboxes"], np.ndarray)

    def test_adapters_without_the_hook(self) -> None:
        class Only:
            def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], Any]:
                return {"image": sample}, None

            def repack(self, data: Any, state: Any) -> Any:
                return data["image"]

        assert view(Only(), 5, TARGETS) == {"image": 5}
        assert passthrough(Only(), {"iscrowd": [1]}, TARGETS) == {}
        assert attach(Only(), {"a": 1}, "mosaic", 2) == {"a": 1, "mosaic": 2}


class TestPassthrough:
    def test_dicts_and_pair_targets(self) -> None:
        sample = {"image": 0, "bboxes": 1, "labels": 2, "iscrowd": 3, "boxes": 4}
        assert passthrough(DefaultAdapter(), sample, TARGETS) == {"iscrowd": 3, "boxes": 4}
        target = {"boxes": 1, "labels": 2, "area": 3}
        assert passthrough(DefaultAdapter(), (0, target), TARGETS) == {"area": 3}
        assert passthrough(DefaultAdapter(), (0, 7), TARGETS) == {}
        assert passthrough(DefaultAdapter(), {"image": 0, "labels": 1}, TARGETS) == {}
        assert passthrough(DefaultAdapter(), {"image": 0, "x": 1}, ["image"]) == {"x": 1}


class TestAttach:
    def test_dicts_pairs_and_other_shapes(self) -> None:
        assert attach(DefaultAdapter(), {"image": 0}, "k", 1) == {"image": 0, "k": 1}
        assert attach(DefaultAdapter(), [0, {"labels": 2}], "k", 1) == [0, {"labels": 2, "k": 1}]
        assert attach(DefaultAdapter(), (0, 5), "k", 1) == (0, 5)

    def test_never_over_a_key_the_sample_has(self) -> None:
        # a record once silently replaced the dataset's own value (or an inner record)
        with pytest.raises(ValueError, match=r"record='k' names a key .* such as record='k_2'"):
            attach(DefaultAdapter(), {"image": 0, "k": 5}, "k", 1)
        with pytest.raises(ValueError, match="record='k' names a key the sample already has"):
            attach(DefaultAdapter(), (0, {"labels": 2, "k": 5}), "k", 1)

    def test_the_advice_names_the_argument_that_gave_the_key(self) -> None:
        with pytest.raises(ValueError, match=r"^T\(key='k'\) names .* such as T\(key='k_2'\)$"):
            attach(DefaultAdapter(), {"image": 0, "k": 5}, "k", 1, spelled="T(key={})")
        with pytest.raises(ValueError, match=r"^T\(key='k'\) names"):
            attach(object(), {"image": 0, "k": 5}, "k", 1, spelled="T(key={})")  # type: ignore[arg-type]


class TestClassTarget:
    def test_dicts_dict_targets_and_plain_targets(self) -> None:
        adapter = DefaultAdapter()
        assert class_target(adapter, {"image": 0, "label": 4}, "label") == 4
        assert class_target(adapter, {"image": 0}, "label") is None
        assert class_target(adapter, (0, {"label": 2, "boxes": []}), "label") == 2
        assert class_target(adapter, [0, 7], "label") == 7
        assert class_target(adapter, 5, "label") is None

    def test_adapters_with_the_hook(self) -> None:
        class Own(DefaultAdapter):
            def class_target(self, sample: Any, key: str) -> Any:  # type: ignore[override]
                return sample["cls"]

            def with_class_target(self, sample: Any, key: str, value: Any) -> Any:  # type: ignore[override]
                return {**sample, "cls": value}

        assert class_target(Own(), {"cls": 3}, "label") == 3
        assert with_class_target(Own(), {"cls": 3}, "label", 9) == {"cls": 9}


class TestWithClassTarget:
    def test_replaces_what_class_target_reads(self) -> None:
        adapter = DefaultAdapter()
        vector = np.array([0.5, 0.5])
        assert with_class_target(adapter, {"image": 0, "label": 1}, "label", vector)["label"] is (
            vector
        )
        pair = with_class_target(adapter, (0, {"label": 1}), "label", vector)
        assert pair[1]["label"] is vector
        assert with_class_target(adapter, [0, 1], "label", vector) == [0, vector]
        assert with_class_target(adapter, (0, torch.tensor(1)), "label", vector)[1] is vector
        assert with_class_target(adapter, "other", "label", vector) == "other"


class TestCheckAdapter:
    def test_default_and_custom_adapters(self) -> None:
        assert isinstance(check_adapter(None), DefaultAdapter)
        adapter = DefaultAdapter()
        assert check_adapter(adapter) is adapter
        with pytest.raises(TypeError, match="adapter must have unpack"):
            check_adapter(object())

    def test_a_class_is_refused_with_the_call_it_needs(self) -> None:
        with pytest.raises(TypeError, match=r"got the class DefaultAdapter: pass DefaultAdapter\("):
            check_adapter(DefaultAdapter)

    def test_a_dataset_goes_to_the_adapters_for_dataset_hook(self) -> None:
        class Bound(DefaultAdapter):
            def for_dataset(self, dataset: object) -> DefaultAdapter:
                return dataset if isinstance(dataset, DefaultAdapter) else self

        other = DefaultAdapter()
        adapter = Bound()
        assert check_adapter(adapter, dataset=other) is other
        assert check_adapter(adapter) is adapter  # no dataset: not called

    def test_an_adapter_forwarding_the_hook_is_not_bound(self) -> None:
        class Forwarding:  # like a stream's naming adapter, bound by the stream itself
            def __init__(self) -> None:
                self.inner = DefaultAdapter()
                self.unpack, self.repack = self.inner.unpack, self.inner.repack

            def __getattr__(self, name: str) -> Any:
                return getattr(self.__dict__["inner"], name)

        forwarding = Forwarding()
        assert check_adapter(forwarding, dataset=[1]) is forwarding

    def test_a_box_format_gives_a_copy_that_names_where_it_was_given(self) -> None:
        adapter = DefaultAdapter()
        told = check_adapter(adapter, box_format="coco", name="A.BboxParams format")
        assert isinstance(told, DefaultAdapter)
        assert told is not adapter
        assert (told.reads_box_format, told.box_format_given_as) == ("coco", "A.BboxParams format")
        assert adapter.reads_box_format is None
