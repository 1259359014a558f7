"""Tests for rankaug.cache._hf: a Hugging Face transform."""

from __future__ import annotations

from typing import Any

import pytest

from rankaug.cache._hf import custom_transform, is_hf_dataset
from tests.cache.helpers import ListDataset

datasets = pytest.importorskip("datasets")


def rows() -> Any:
    return datasets.Dataset.from_dict({"label": [0, 1]})


def same(batch: dict[str, Any]) -> dict[str, Any]:
    return batch


class TestIsHfDataset:
    def test_by_its_class(self) -> None:
        assert is_hf_dataset(rows())
        assert not is_hf_dataset(ListDataset([1]))
        assert not is_hf_dataset({"_fingerprint": "abc"})


class TestCustomTransform:
    def test_with_transform_and_set_transform(self) -> None:
        assert custom_transform(rows().with_transform(same)) is same
        table = rows()
        table.set_transform(same)
        assert custom_transform(table) is same

    def test_other_formats_have_none(self) -> None:
        assert custom_transform(rows()) is None
        assert custom_transform(rows().with_format("numpy")) is None
        assert custom_transform(rows().with_transform(same).with_format(None)) is None
        assert custom_transform(ListDataset([1])) is None
