"""Tests for rankaug.cache._hf: a Hugging Face transform, and a random fingerprint."""

from __future__ import annotations

from typing import Any

import pytest

from rankaug.cache._hf import custom_transform, is_hf_dataset, random_fingerprint
from tests.cache.helpers import ListDataset, Unhashable

datasets = pytest.importorskip("datasets")


def rows() -> Any:
    return datasets.Dataset.from_dict({"label": [0, 1]})


def same(batch: dict[str, Any]) -> dict[str, Any]:
    return batch


@pytest.fixture
def fresh_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """datasets' once-per-process hashing flags, this test's own."""
    monkeypatch.setattr(datasets.fingerprint, "fingerprint_warnings", {})


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


class TestRandomFingerprint:
    @pytest.mark.usefixtures("fresh_flags")
    def test_a_hashable_dataset_is_not(self) -> None:
        assert random_fingerprint(rows()) is None
        assert random_fingerprint(rows().with_transform(same)) is None
        assert random_fingerprint(rows().map(same, batched=True)) is None
        assert random_fingerprint(ListDataset([1])) is None

    @pytest.mark.usefixtures("fresh_flags")
    def test_an_unhashable_transform(self) -> None:
        why = random_fingerprint(rows().with_transform(Unhashable()))
        assert why is not None
        assert why.startswith("its with_transform/set_transform transform <")
        assert why.endswith("cannot be hashed, so datasets gave it a random fingerprint")

    @pytest.mark.usefixtures("fresh_flags")
    def test_a_failed_hash_in_this_process(self) -> None:
        mapped = rows().map(Unhashable(), batched=True)
        why = random_fingerprint(mapped)
        assert why is not None
        assert why.startswith("datasets could not hash a transform or its arguments in this")
