from __future__ import annotations

import copy
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rankaug import _threads
from rankaug._threads import PerThread, passes, steps, torch_cpu
from tests.forked import in_a_forked_child


def _locks_in_a_forked_child(queue: Any) -> None:
    free = [lock().acquire(blocking=False) for lock in (torch_cpu, passes, steps)]
    queue.put(tuple(free))


class TestPerThread:
    def test_each_thread_gets_its_own_copy_made_on_first_use(self) -> None:
        made: list[int] = []

        def copied(value: list[int]) -> list[int]:
            made.append(threading.get_ident())
            return list(value)

        shared = PerThread([1, 2], copied)
        assert made == []
        with ThreadPoolExecutor(2) as pool:
            copies = list(pool.map(lambda _: shared.get(), range(2)))
        mine = shared.get()
        assert mine == [1, 2]
        assert mine is shared.get()
        assert len({id(mine), *(id(c) for c in copies)}) == len(made)

    def test_the_token_is_the_threads_own(self) -> None:
        shared = PerThread({"a": 1}, copy.deepcopy)
        shared.slot()[1] = "mine"
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(lambda: shared.slot()[1]).result() is None
        assert shared.slot()[1] == "mine"

    def test_local_holds_the_threads_slot_once_it_has_one(self) -> None:
        shared = PerThread({"a": 1}, copy.deepcopy)
        assert not hasattr(shared.local, "held")
        held = shared.slot()
        assert shared.local.held is held
        with ThreadPoolExecutor(1) as pool:
            assert not pool.submit(lambda: hasattr(shared.local, "held")).result()

    def test_pickles_as_the_original_alone(self) -> None:
        shared = PerThread({"a": [1]}, copy.deepcopy)
        shared.slot()[1] = "token"
        clone = pickle.loads(pickle.dumps(shared))
        assert clone.original == {"a": [1]}
        assert clone.slot() == [{"a": [1]}, None]


class TestTorchCpu:
    def test_is_re_entrant(self) -> None:
        with torch_cpu(), torch_cpu():
            assert _threads.torch_cpu() is torch_cpu()

    def test_a_forked_child_gets_free_locks_held_in_the_parent(self) -> None:
        with torch_cpu(), passes(), steps():  # held by this thread while the child forks
            assert in_a_forked_child(_locks_in_a_forked_child) == (True, True, True)
