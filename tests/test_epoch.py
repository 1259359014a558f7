from __future__ import annotations

import copy
import pickle

import pytest
from torch.utils.data import DataLoader, Dataset

from rankaug.epoch import SharedEpoch


class _ReadsEpoch(Dataset[int]):
    def __init__(self, epoch: SharedEpoch) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> int:
        return self.epoch.get()


class TestSharedEpoch:
    def test_get_set_and_validation(self) -> None:
        epoch = SharedEpoch(4)
        assert epoch.get() == 4
        assert repr(epoch) == "SharedEpoch(4)"
        with pytest.raises(ValueError, match="epoch must be an integer"):
            epoch.set(-1)
        with pytest.raises(TypeError, match="epoch must be an integer"):
            epoch.set("2")  # type: ignore[arg-type]
        assert epoch.get() == 4

    @pytest.mark.parametrize("context", ["fork", "spawn"])
    def test_persistent_workers_see_every_set(self, context: str) -> None:
        epoch = SharedEpoch()
        loader = DataLoader(
            _ReadsEpoch(epoch),
            batch_size=None,
            num_workers=2,
            persistent_workers=True,
            multiprocessing_context=context,
        )
        seen = []
        for value in (0, 1, 5):
            epoch.set(value)
            seen.append(sorted(int(x) for x in loader))
        assert seen == [[0, 0], [1, 1], [5, 5]]

    @pytest.mark.parametrize("clone", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
    def test_plain_copies_are_independent_and_shared_again(self, clone: object) -> None:
        epoch = SharedEpoch(2)
        other = clone(epoch)  # type: ignore[operator]
        assert other.get() == 2
        other.set(9)
        assert epoch.get() == 2
        assert other._block.is_shared()
