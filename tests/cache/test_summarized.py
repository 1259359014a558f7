"""Tests for rankaug.cache._summarized: the arrays a dataset's repr may abbreviate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from rankaug.cache._summarized import summarized


class Slotted:
    __slots__ = ("table", "weights")

    def __init__(self, table: dict[str, Any], weights: torch.Tensor) -> None:
        self.table, self.weights = table, weights


class Holder:
    def __init__(self, inner: Any, records: list[tuple[str, int]]) -> None:
        self.inner, self.records, self.path = inner, records, Path("data")
        self.loop = self  # a cycle ends where it began


def _holder(pixel: float = 0.0, weight: float = 0.0) -> Holder:
    masks = np.zeros((2, 40, 40))
    masks[1, 20, 20] = pixel
    weights = torch.zeros(1001)
    weights[500] = weight
    table = {"small": np.zeros(3), "masks": masks}
    return Holder(Slotted(table, weights), [(f"{n}.png", n) for n in range(50_000)])


class TestSummarized:
    def test_finds_large_arrays_and_tensors_in_attributes_slots_and_items(self) -> None:
        found = summarized(_holder(), "dataset")
        assert found.places == ["dataset.inner.table['masks']", "dataset.inner.weights"]
        assert found.unseen == ""

    def test_the_digest_follows_every_element(self) -> None:
        base = summarized(_holder(), "dataset").digest
        assert summarized(_holder(), "dataset").digest == base
        assert summarized(_holder(pixel=1.0), "dataset").digest != base
        assert summarized(_holder(weight=1.0), "dataset").digest != base

    def test_arrays_below_the_print_threshold_are_left_to_the_repr(self) -> None:
        found = summarized({"a": np.zeros(1000), "b": torch.zeros(1000)}, "dataset")
        assert found.places == []
        assert found.unseen == ""

    def test_the_print_threshold_is_numpys_own(self) -> None:
        with np.printoptions(threshold=10):
            assert summarized([np.zeros(11)], "dataset").places == ["dataset[0]"]

    def test_pandas_tables_key_by_their_rows_index_and_columns(self) -> None:
        pandas = pytest.importorskip("pandas")
        table = pandas.DataFrame({"file": [f"{n}.png" for n in range(1000)], "label": 0})
        label, renamed, indexed = table.copy(), table.rename(columns={"label": "y"}), table.copy()
        label.loc[500, "label"] = 7
        indexed.index = indexed.index + 1
        digests = {summarized([t], "d").digest for t in (table, label, renamed, indexed)}
        assert len(digests) == 4
        assert summarized([table.copy()], "d").digest == summarized([table], "d").digest
        assert summarized({"t": table}, "d").places == ["d['t']"]

    def test_pandas_cells_pandas_cannot_hash_key_by_their_values(self) -> None:
        pandas = pytest.importorskip("pandas")
        boxes = pandas.DataFrame({"boxes": [[1, 2]] * 1000})
        moved = boxes.copy()
        moved.at[500, "boxes"] = [3, 4]
        assert summarized([boxes], "d").digest != summarized([moved], "d").digest
        assert summarized([boxes], "d").unseen == ""
        opaque = pandas.DataFrame({"boxes": [[Path("a")]] * 1000})
        assert summarized([opaque], "d").unseen == "d[0] holds values it cannot hash"
