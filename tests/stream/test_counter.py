from __future__ import annotations

import pickle
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from rankaug.stream.counter import SLOTS, PassCounter
from tests.forked import in_a_forked_child


class _Takes(IterableDataset[int]):
    """Each worker's pass: the epoch the counter gives it."""

    def __init__(self, passes: PassCounter) -> None:
        self.passes = passes

    def __iter__(self) -> Iterator[int]:
        info = get_worker_info()
        yield self.passes.take(0 if info is None else info.id)


class _JoinsAResume(IterableDataset[int]):
    """Worker 0 resumes a pass of epoch 5; worker 1 then starts its pass."""

    def __init__(self, passes: PassCounter) -> None:
        self.passes = passes

    def __iter__(self) -> Iterator[int]:
        info = get_worker_info()
        if info is None or info.id == 0:
            self.passes.resume(0, 5)
            yield 5
            return
        while self.passes.peek(0) != 6:  # worker 0's resume is counted
            time.sleep(0.01)
        yield self.passes.take(1)


def _pickled_in_a_forked_rank(passes: PassCounter, queue: Any) -> None:
    """What a forked rank pickles ``passes`` as (for spawned workers), then its set_all."""
    sent = passes.__getstate__()
    passes.set_all(9)
    queue.put(int(sent[0]))


def _in_a_forked_rank(passes: PassCounter, queue: Any) -> None:
    """A process forked after ``passes`` was made, no DataLoader worker: a rank."""
    loader = DataLoader(_Takes(passes), batch_size=None, num_workers=2,
                        multiprocessing_context="fork")  # fmt: skip
    workers = [sorted(int(x) for x in loader) for _ in range(2)]
    queue.put((workers, passes.take_all(), passes.front()))


class TestPassCounter:
    def test_passes_started_at_once_in_threads_take_different_epochs(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        front = PassCounter.front

        def slow_front(self: PassCounter) -> int:
            epoch = front(self)
            time.sleep(0.05)  # the other thread reads the front here
            return epoch

        monkeypatch.setattr(PassCounter, "front", slow_front)
        passes = PassCounter()
        with ThreadPoolExecutor(2) as pool:
            assert sorted(pool.map(lambda _: passes.take_all(), range(2))) == [0, 1]

    def test_each_worker_counts_its_passes(self) -> None:
        passes = PassCounter()
        assert [passes.take(0), passes.take(0), passes.take(3)] == [0, 1, 0]
        passes.put(3, 9)
        assert passes.peek(3) == 9
        passes.set_all(4)
        assert [passes.peek(0), passes.peek(SLOTS - 1)] == [4, 4]

    def test_a_worker_joins_the_epoch_of_a_resumed_pass(self) -> None:
        passes = PassCounter()
        passes.put(0, 2)  # before the resume, worker 0 counts 2, worker 1 none
        loader = DataLoader(_JoinsAResume(passes), batch_size=None, num_workers=2)
        assert sorted(int(epoch) for epoch in loader) == [5, 5]  # before, worker 1 took 6
        assert (passes.peek(0), passes.peek(1)) == (6, 6)

    def test_upcoming_is_the_epoch_take_would_give(self) -> None:
        passes = PassCounter()
        passes.put(2, 4)
        assert (passes.upcoming(0), passes.take(0), passes.upcoming(0)) == (0, 0, 1)

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

    def test_a_pass_of_a_given_epoch_runs_it_and_counts_on_from_it(self) -> None:
        passes = PassCounter()
        assert passes.start(1, 2) == 0  # none given: the worker's count
        assert passes.start(0, 2, epoch=7) == 7  # given: the pass reading it, or a resume
        assert [passes.peek(0), passes.peek(1)] == [8, 1]
        assert passes.start(0, 0, epoch=2**32 - 1) == 2**32 - 1  # the main process...
        assert [passes.peek(0), passes.peek(1), passes.front()] == [2**32] * 3  # moves all on
        with pytest.raises(ValueError, match="run its last epoch"):
            passes.start(0, 0)

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


class TestPassCounterInForkedRanks:
    def test_a_forked_rank_and_its_workers_count_apart_from_this_process(self) -> None:
        passes = PassCounter()
        assert passes.take_all() == 0  # inherited: the rank's first pass is epoch 1
        seen = in_a_forked_child(_in_a_forked_rank, passes)
        assert seen == ([[1, 1], [2, 2]], 3, 4)  # its workers counted with it
        assert (passes.front(), passes.take_all()) == (1, 1)  # none of the rank's passes

    def test_a_forked_rank_pickles_its_own_counts(self) -> None:
        passes = PassCounter()
        passes.set_all(6)
        seen = in_a_forked_child(_pickled_in_a_forked_rank, passes)
        assert seen == 9  # its spawned workers would get its own counts
        assert passes.front() == 6
