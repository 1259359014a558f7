"""Tests for rankaug.cache._content: in-memory datasets are keyed by what they hold."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
import torch

from rankaug.cache._content import Opaque, content_hash
from tests.cache.helpers import Point


def sample(value: int = 0) -> dict[str, Any]:
    image = np.zeros((200, 200, 3), np.uint8)
    image[100, 100, 1] = value
    return {"image": image, "labels": np.array([1, 2]), "name": "a"}


class TestContentHash:
    def test_a_changed_pixel_changes_it(self) -> None:
        before, after = [sample(0), sample(0)], [sample(0), sample(1)]
        assert repr(before) == repr(after)  # what the repr fingerprint saw
        assert content_hash(before) != content_hash(after)
        assert content_hash(before) == content_hash([sample(0), sample(0)])

    @pytest.mark.parametrize(
        ("one", "other"),
        [
            (np.zeros(4, np.int32), np.zeros(4, np.uint32)),  # dtype
            (np.zeros(4, "<u2"), np.zeros(4, ">u2")),  # byte order
            (np.zeros((2, 2)), np.zeros(4)),  # shape
            (1, 1.0),
            (True, 1),
            (0.0, -0.0),
            ("1", b"1"),
            ([1, 2], (1, 2)),
            ((1, 2), Point(1, 2)),
            ({"a": 1}, OrderedDict(a=1)),
            (torch.zeros(3), np.zeros(3, np.float32)),
            (torch.zeros(3), torch.zeros(3, dtype=torch.float64)),
            (["ab", "c"], ["a", "bc"]),
            (np.array(["a", 1], dtype=object), np.array(["a", 2], dtype=object)),
        ],
    )
    def test_what_tells_samples_apart(self, one: object, other: object) -> None:
        assert content_hash([one]) != content_hash([other])

    def test_dicts_and_tuples(self) -> None:
        assert content_hash({0: sample(0)}) != content_hash({0: sample(1)})
        assert content_hash((sample(2),)) == content_hash((sample(2),))

    def test_other_objects_are_opaque(self) -> None:
        with pytest.raises(Opaque, match="object"):
            content_hash([{"x": object()}])
