"""``sample_epoch``: the four rules of "epoch, first match wins", in their order."""

from __future__ import annotations

import pytest

from rankaug import EpochIndex, passes
from rankaug.epoch import carrying
from rankaug.sample_epoch import EpochFallback, sample_epoch


class TestSampleEpoch:
    def test_the_index_wins_over_everything(self) -> None:
        fallback = EpochFallback()
        fallback.set(9)
        with carrying(5):
            assert sample_epoch(EpochIndex(3, epoch=2), fallback, False, "X") == 2

    def test_the_handed_down_epoch_wins_over_set_epoch(self) -> None:
        fallback = EpochFallback()
        fallback.set(9)
        with carrying(5):
            assert sample_epoch(3, fallback, False, "X") == 5

    def test_set_epoch_is_the_fallback(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # as in a worker that has fetched no batch whose indices carry an epoch (a loader
        # that ran in this process before would make the call below a lost epoch's)
        monkeypatch.setattr(passes, "_fetched", (0, passes.PLAIN))
        fallback = EpochFallback()
        assert sample_epoch(3, fallback, False, "X") == 0
        fallback.set(7)
        assert sample_epoch(3, fallback, True, "X") == 7
        assert fallback.seen is not None
        assert fallback.seen[1] == 7


class TestEpochFallback:
    def test_a_pickled_copy_keeps_the_epoch_not_what_it_saw(self) -> None:
        import pickle

        fallback = EpochFallback()
        fallback.set(4)
        fallback.read_in_worker()
        copy = pickle.loads(pickle.dumps(fallback))
        assert copy.seen is None
        assert copy.get() == 4
        fallback.set(6)
        assert copy.get() == 4  # a plain pickle makes an independent counter
