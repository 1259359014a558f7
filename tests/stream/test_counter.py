from __future__ import annotations

import pickle

import pytest

from rankaug.stream.counter import SLOTS, PassCounter


class TestPassCounter:
    def test_each_worker_counts_its_passes(self) -> None:
        passes = PassCounter()
        assert [passes.take(0), passes.take(0), passes.take(3)] == [0, 1, 0]
        passes.put(3, 9)
        assert passes.peek(3) == 9
        passes.set_all(4)
        assert [passes.peek(0), passes.peek(SLOTS - 1)] == [4, 4]

    def test_a_plain_pickle_copies_the_counts(self) -> None:
        passes = PassCounter()
        passes.take(1)
        copy = pickle.loads(pickle.dumps(passes))
        assert copy.peek(1) == 1

    def test_refuses_bad_workers_and_epochs(self) -> None:
        passes = PassCounter()
        with pytest.raises(ValueError, match=f"up to {SLOTS} DataLoader workers"):
            passes.take(SLOTS)
        with pytest.raises(ValueError, match="epoch must be"):
            passes.put(0, 2**32)

    def test_a_pass_in_the_main_process_moves_every_worker_on(self) -> None:
        passes = PassCounter()
        assert passes.take(1) == 0  # a worker ahead of the others
        assert passes.take_all() == 1  # the main process runs the front...
        assert [passes.peek(0), passes.peek(1), passes.peek(SLOTS - 1)] == [2, 2, 2]

    def test_the_front_is_the_largest_next_epoch(self) -> None:
        passes = PassCounter()
        passes.put(5, 3)
        assert (passes.front(), passes.peek(0), repr(passes)) == (3, 0, "PassCounter(next=3)")

    def test_the_last_epoch_runs_and_then_the_next_is_refused(self) -> None:
        passes = PassCounter()
        passes.set_all(2**32 - 1)
        assert passes.take(1) == 2**32 - 1
        with pytest.raises(ValueError, match="run its last epoch, 2\\*\\*32 - 1"):
            passes.take(1)
        with pytest.raises(ValueError, match="run its last epoch"):
            passes.take_all()  # worker 1 ran the front
        passes.set_all(2**32 - 1)
        assert passes.take_all() == 2**32 - 1
        with pytest.raises(ValueError, match="run its last epoch"):
            passes.take(0)
