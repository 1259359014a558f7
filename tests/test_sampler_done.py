"""When an EpochSampler pass is given whole: at its wrapped sampler's exact len(), or its end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from torch.utils.data import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
)

from rankaug import EpochSampler
from rankaug.sampler_done import exact_length


class Counted(SequentialSampler):  # type: ignore[type-arg]
    """A subclass whose passes give one index more than its len()."""

    def __iter__(self) -> Iterator[int]:
        yield from range(len(self) + 1)


class Plain:
    """A sampler of its own: len() 3, and 3 indices."""

    def __len__(self) -> int:
        return 3

    def __iter__(self) -> Iterator[int]:
        return iter(range(3))


def run_of(iterator: Any) -> Any:
    return iterator._ticket.run


class TestExactLength:
    @pytest.mark.parametrize(
        ("sampler", "length"),
        [
            (SequentialSampler(range(5)), 5),
            (RandomSampler(range(5), num_samples=7), 7),
            (DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False), 3),
            (BatchSampler(SequentialSampler(range(5)), 2, drop_last=False), 3),
            (BatchSampler(SequentialSampler(range(5)), 2, drop_last=True), 2),
            ([4, 2, 0], 3),
            (range(4), 4),
        ],
    )
    def test_pytorchs_samplers_lists_and_ranges(self, sampler: Any, length: int) -> None:
        assert exact_length(sampler) == length
        assert len(list(sampler)) == length

    @pytest.mark.parametrize(
        "sampler",
        [Counted(range(3)), Plain(), BatchSampler(Counted(range(3)), 2, drop_last=False)],
    )
    def test_any_other_sampler_is_not_trusted(self, sampler: Any) -> None:
        assert exact_length(sampler) is None


class TestGivenWhole:
    def test_a_pass_is_whole_at_its_last_index_and_done_when_it_stops(self) -> None:
        sampler = EpochSampler(SequentialSampler(range(3)))
        iterator = iter(sampler)
        assert [int(next(iterator)) for _ in range(3)] == [0, 1, 2]
        run = run_of(iterator)
        assert (run.whole, run.done, run.last) == (True, False, 2)
        assert sampler._epochs.ran == -1  # its epoch ran once its iterator stops
        assert list(iterator) == []
        assert (run.whole, run.done, run.last, sampler._epochs.ran) == (True, True, 2, 0)

    def test_a_resumed_pass_counts_the_indices_it_skipped(self) -> None:
        sampler = EpochSampler(SequentialSampler(range(4)))
        first: Any = iter(sampler)
        next(first), next(first)
        state = sampler.state_dict()
        first.close()
        sampler.load_state_dict(state)
        resumed = iter(sampler)
        assert [int(next(resumed)) for _ in range(2)] == [2, 3]
        assert (run_of(resumed).whole, run_of(resumed).last) == (True, 3)

    def test_a_sampler_whose_len_is_not_what_it_gives_is_whole_when_it_stops(self) -> None:
        iterator = iter(EpochSampler(Counted(range(3))))
        assert [int(next(iterator)) for _ in range(3)] == [0, 1, 2]
        assert run_of(iterator).whole is False
        assert [int(index) for index in iterator] == [3]
        assert (run_of(iterator).whole, run_of(iterator).last) == (True, 3)
