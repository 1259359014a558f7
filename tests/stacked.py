"""A dataset over a ``StackDataset``'s part ``"a"``: how users unstack one."""

from __future__ import annotations

from typing import Any

from torch.utils.data import Dataset, StackDataset


class Unstack(Dataset[Any]):
    """The part ``"a"`` of a ``StackDataset`` given by keyword, as a dataset of its own."""

    def __init__(self, dataset: StackDataset[Any]) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index]["a"]
