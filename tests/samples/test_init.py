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
    passthrough,
    view,
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


class TestCheckAdapter:
    def test_default_and_custom_adapters(self) -> None:
        assert isinstance(check_adapter(None), DefaultAdapter)
        adapter = DefaultAdapter()
        assert check_adapter(adapter) is adapter
        with pytest.raises(TypeError, match="adapter must have unpack"):
            check_adapter(object())
