from __future__ import annotations

import multiprocessing
import os
import weakref
from collections.abc import Iterator

from torch.utils.data import DataLoader, IterableDataset

from rankaug._owned import foreign, track


class _Counter:
    """An Owned that counts its claims."""

    def __init__(self) -> None:
        self.claims = 0

    def claim(self) -> None:
        self.claims += 1


class _Foreign(IterableDataset[bool]):
    def __iter__(self) -> Iterator[bool]:
        yield foreign(-1)


def _leave() -> None:
    return None


class TestForeign:
    def test_this_process_owns_its_own(self) -> None:
        assert foreign(os.getpid()) is False

    def test_another_processs_counter_is_claimed_here(self) -> None:
        assert foreign(-1) is True

    def test_a_dataloader_worker_never_claims(self) -> None:
        loader = DataLoader(_Foreign(), batch_size=None, num_workers=1,
                            multiprocessing_context="fork")  # fmt: skip
        assert [bool(x) for x in loader] == [False]


class TestTrack:
    def test_a_tracked_counter_is_claimed_before_every_fork(self) -> None:
        counter = _Counter()
        track(counter)
        child = multiprocessing.get_context("fork").Process(target=_leave)
        child.start()
        child.join(timeout=60)
        assert (child.exitcode, counter.claims) == (0, 1)

    def test_keeps_no_counter_alive(self) -> None:
        counter = _Counter()
        track(counter)
        alive = weakref.ref(counter)
        del counter
        assert alive() is None
