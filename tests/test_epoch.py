from __future__ import annotations

import contextlib
import copy
import copyreg
import gc
import multiprocessing
import os
import pickle
import subprocess
import sys
import traceback
import warnings
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.data import DataLoader, Dataset

from rankaug import EpochIndex, KeyedDataset, RankaugWarning, SampleContext
from rankaug.epoch import (
    EpochBatch,
    SharedEpoch,
    _reducer,
    carried_epoch,
    carrying,
    epoch_class,
    index_epoch,
)
from tests import ahead
from tests.forked import in_a_forked_child
from tests.frozen_heap import frozen_heap  # noqa: F401  (autouse: cheap gc.collect calls)


class _ReadsEpoch(Dataset[int]):
    def __init__(self, epoch: SharedEpoch) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> int:
        return self.epoch.read() if index else self.epoch.get()  # both readers


def every_set(context: str, workers: int = 2) -> list[list[int]]:
    """What ``workers`` persistent workers of ``context`` read (both readers) after each
    of three sets."""
    epoch = SharedEpoch()
    loader = DataLoader(
        _ReadsEpoch(epoch),
        batch_size=None,
        num_workers=workers,
        persistent_workers=True,
        multiprocessing_context=context,
    )
    seen = []
    for value in (0, 1, 5):
        epoch.set(value)
        seen.append(sorted(int(x) for x in loader))
    return seen


def every_set_spawned(_: Path) -> list[list[int]]:
    """:func:`every_set` with one spawned worker (a job of tests.ahead; two, as the fork
    case has, would import torch once more for nothing the transport needs)."""
    return every_set("spawn", workers=1)


class TestSharedEpoch:
    def test_get_set_and_validation(self) -> None:
        epoch = SharedEpoch(4)
        assert epoch.get() == epoch.read() == 4
        assert repr(epoch) == "SharedEpoch(4)"
        with pytest.raises(ValueError, match="epoch must be an integer"):
            epoch.set(-1)
        with pytest.raises(TypeError, match="epoch must be an integer"):
            epoch.set("2")  # type: ignore[arg-type]
        assert epoch.get() == 4

    def test_persistent_workers_see_every_set(self) -> None:
        assert every_set("fork") == [[0, 0], [1, 1], [5, 5]]

    @pytest.mark.slow  # each spawned worker imports torch: run ahead (tests/ahead.py)
    def test_persistent_spawned_workers_see_every_set(self, tmp_path: Path) -> None:
        assert ahead.result("epoch-spawn", lambda: tmp_path) == [[0, 0], [1, 1], [5, 5]]

    @pytest.mark.parametrize("clone", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
    def test_plain_copies_are_independent_and_shared_again(self, clone: object) -> None:
        epoch = SharedEpoch(2)
        other = clone(epoch)  # type: ignore[operator]
        assert other.get() == 2
        other.set(9)
        assert epoch.get() == 2
        assert other._block.is_shared()


def _in_a_forked_rank(epoch: SharedEpoch, queue: Any) -> None:
    """A process forked after ``epoch`` was made, no DataLoader worker: a rank."""
    loader = DataLoader(_ReadsEpoch(epoch), batch_size=None, num_workers=2,
                        persistent_workers=True, multiprocessing_context="fork")  # fmt: skip
    first = sorted(int(x) for x in loader)  # workers forked before this rank sets anything
    epoch.set(7)
    queue.put((first, sorted(int(x) for x in loader), epoch.get()))


def _pickled_in_a_forked_rank(epoch: SharedEpoch, queue: Any) -> None:
    """What a forked rank pickles ``epoch`` as (for spawned workers), then its set."""
    block, slot = epoch.__reduce__()[1]
    epoch.set(9)
    queue.put(int(block[slot]))


class TestSharedEpochInForkedRanks:
    def test_a_forked_rank_sets_its_own_epoch_for_its_workers(self) -> None:
        epoch = SharedEpoch(3)
        seen = in_a_forked_child(_in_a_forked_rank, epoch)
        assert seen == ([3, 3], [7, 7], 7)  # what it inherited, then its own set
        assert epoch.get() == 3  # this process's epoch: the rank's set stayed there
        epoch.set(4)
        assert epoch.get() == 4

    def test_a_forked_rank_pickles_its_own_slot(self) -> None:
        epoch = SharedEpoch(6)
        seen = in_a_forked_child(_pickled_in_a_forked_rank, epoch)
        assert seen == 9  # its spawned workers would read its own slot
        assert epoch.get() == 6


class TestEpochIndex:
    def test_is_the_index(self) -> None:
        index = EpochIndex(5, epoch=2)
        assert index == 5
        assert index.epoch == 2
        assert list(range(10))[index] == 5
        assert np.arange(10)[index] == 5
        assert str(index) == "5"
        assert f"{index}.jpg" == "5.jpg"
        assert f"{index:03d}" == "005"
        assert repr(index) == "EpochIndex(5, epoch=2)"

    def test_plus_and_minus_with_ints_keep_the_epoch(self) -> None:
        # Issue 19 item 1: ConcatDataset's idx - offset gave a plain int (epoch lost).
        index, same = EpochIndex(7, epoch=3), EpochIndex(2, epoch=3)
        kept = {
            "i - 5": index - 5, "i + 1": index + 1, "10 + i": 10 + index, "10 - i": 10 - index,
            "len + i": 10 + EpochIndex(-1, epoch=3), "i - same": index - same,
            "i + same": index + same,
        }  # fmt: skip
        assert {k: (type(v), int(v), v.epoch) for k, v in kept.items()} == {  # type: ignore[attr-defined]
            "i - 5": (type(index), 2, 3), "i + 1": (type(index), 8, 3),
            "10 + i": (type(index), 17, 3), "10 - i": (type(index), 3, 3),
            "len + i": (type(index), 9, 3), "i - same": (type(index), 5, 3),
            "i + same": (type(index), 9, 3),
        }  # fmt: skip

    @given(st.integers(-(2**70), 2**70), st.integers(-(2**70), 2**70), st.integers(0, 2**32 - 1))
    def test_sums_and_differences_are_exact_and_keep_the_epoch(
        self, index: int, other: int, epoch: int
    ) -> None:
        carried = EpochIndex(index, epoch=epoch)
        results = {
            "i + n": (carried + other, index + other), "n + i": (other + carried, other + index),
            "i - n": (carried - other, index - other), "n - i": (other - carried, other - index),
        }  # fmt: skip
        for got, want in results.values():
            assert (type(got), int(got), got.epoch) == (type(carried), want, epoch)  # type: ignore[attr-defined]

    def test_other_arithmetic_gives_plain_ints(self) -> None:
        index = EpochIndex(7, epoch=3)
        plain = [index * 2, index // 2, index % 4, -index, index + True, 2 * index,
                 index - EpochIndex(1, epoch=4), index + EpochIndex(1, epoch=4)]  # fmt: skip
        assert [(type(v), v) for v in plain] == [
            (int, 14),
            (int, 3),
            (int, 3),
            (int, -7),
            (int, 8),
            (int, 14),
            (int, 6),
            (int, 8),
        ]
        numpy_sum = index + np.int64(1)
        assert (type(numpy_sum), numpy_sum) == (np.int64, 8)  # type: ignore[comparison-overlap]

    @pytest.mark.parametrize("clone", [copy.deepcopy, lambda i: pickle.loads(pickle.dumps(i))])
    def test_survives_copies(self, clone: Any) -> None:
        again = clone(EpochIndex(9, epoch=4))
        assert isinstance(again, EpochIndex)
        assert type(again) is type(EpochIndex(1, epoch=4))
        assert (again, again.epoch) == (9, 4)

    def test_bad_arguments(self) -> None:
        with pytest.raises(TypeError, match="index must be an integer"):
            EpochIndex(1.5, epoch=0)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"epoch must be an integer in \[0, 2\*\*32\)"):
            EpochIndex(1, epoch=2**32)
        with pytest.raises(TypeError, match="epoch must be an integer"):
            EpochIndex(1, epoch=True)
        with pytest.raises(TypeError, match=r"^EpochIndex\(\) missing 1 required .*'epoch'"):
            EpochIndex(1)  # type: ignore[call-arg]

    def test_index_epoch(self) -> None:
        assert index_epoch(EpochIndex(1, epoch=3)) == 3
        assert index_epoch(1) is None
        assert index_epoch(np.int64(1)) is None


class TestEpochBatch:
    @pytest.mark.parametrize("big", [2**63, -(2**63) - 1, 2**80])
    def test_indices_beyond_64_bits_pickle_exactly(self, big: int) -> None:
        # Issue 19: an index >= 2**63 raised OverflowError when pickled.
        batch = EpochBatch([EpochIndex(1, epoch=2), EpochIndex(big, epoch=2)])
        again = pickle.loads(ForkingPickler.dumps(batch))
        assert type(again) is EpochBatch
        assert [(type(i), int(i)) for i in again] == [(type(batch[0]), 1), (type(batch[0]), big)]

    def test_64_bit_indices_pack(self) -> None:
        batch = EpochBatch([EpochIndex(2**63 - 1, epoch=2), EpochIndex(-(2**63), epoch=2)])
        assert pickle.loads(pickle.dumps(batch)) == [2**63 - 1, -(2**63)]
        assert len(pickle.dumps(batch)) < 120  # one packed block, not one reduce per index


class TestCarrying:
    def test_nests_and_restores(self) -> None:
        assert carried_epoch() is None
        with carrying(2):
            assert carried_epoch() == 2
            with carrying(5):
                assert carried_epoch() == 5
            assert carried_epoch() == 2
        assert carried_epoch() is None

    def test_restores_after_an_error(self) -> None:
        with pytest.raises(KeyError), carrying(3):
            raise KeyError
        assert carried_epoch() is None


_MANY_EPOCHS = """
import os, resource, sys
# 58 descriptors free: as many as a new interpreter's 6 left under a limit of 64
limit = len(os.listdir("/proc/self/fd")) + 58
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
from rankaug import RandomAugmentWrapper
from rankaug.epoch import SharedEpoch
before = len(os.listdir("/proc/self/fd"))
data = [{"image": __import__("numpy").zeros((2, 2), "uint8")}]
held = [RandomAugmentWrapper(data, lambda s, rng: s, seed=0) for _ in range(3000)]
held += [SharedEpoch(i) for i in range(2000)]
assert held[-1].get() == 1999 and held[3].epoch == 0
print(len(os.listdir("/proc/self/fd")) - before)
open(os.devnull).close()  # the process can still open files
"""


def many_epochs(_folder: Path) -> subprocess.CompletedProcess[str]:
    """:data:`_MANY_EPOCHS` in a forked child (a job of tests.ahead): its descriptors,
    limit and epoch slots are its own (rankaug's slot pool starts anew in a child), as
    in a new interpreter, without importing torch again."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: what it prints, then any error's traceback, into the pipe
        status = 1
        try:
            os.close(read)
            with os.fdopen(write, "w") as out, contextlib.redirect_stdout(out):
                try:
                    exec(_MANY_EPOCHS, {})
                    status = 0
                except BaseException:
                    out.write("\0" + traceback.format_exc())
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as pipe:
        stdout, _, stderr = pipe.read().partition("\0")
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return subprocess.CompletedProcess(["fork", "_MANY_EPOCHS"], code, stdout, stderr)


class TestSharedEpochSlots:
    def test_thousands_of_wrappers_hold_a_handful_of_descriptors(self, tmp_path: Path) -> None:
        # Issue 9 item 8: one descriptor per wrapper exhausted `ulimit -n` at ~1,000
        # (a forked child, run ahead: tests/ahead.py).
        result = ahead.result("epoch-descriptors", lambda: tmp_path)
        assert result.returncode == 0, result.stderr
        assert int(result.stdout.strip()) <= 8

    def test_slots_are_independent_and_reused(self) -> None:
        gc.collect()  # earlier tests' garbage must not free slots during the collect below
        first, second = SharedEpoch(1), SharedEpoch(2)
        assert (first.get(), second.get()) == (1, 2)
        slot = second._slot, second._block.data_ptr()
        del second
        gc.collect()
        third = SharedEpoch(7)
        assert (third._slot, third._block.data_ptr()) == slot  # the freed slot again
        assert (first.get(), third.get()) == (1, 7)


class _Draw(KeyedDataset[tuple[int, int]]):
    def augment(self, context: SampleContext, keyed: Any) -> tuple[int, int]:
        return context.epoch, int(keyed.generator.integers(2**31))


class _SetEpochLate(Dataset[tuple[int, int]]):
    """Waits, at index 2, until the main process has called set_epoch(1)."""

    def __init__(self, gate: Any) -> None:
        self.gate = gate

    def __len__(self) -> int:
        return 6

    def __getitem__(self, index: int) -> tuple[int, int]:
        if index == 2:
            assert self.gate.wait(timeout=30)
        return index, 0


def _errors_on_rankaug_warnings(worker_id: int) -> None:
    warnings.simplefilter("error", RankaugWarning)


class TestLateSetEpoch:
    def test_a_non_persistent_worker_seeing_the_epoch_change_mid_pass_warns(self) -> None:
        gate = multiprocessing.get_context("fork").Event()
        keyed = _Draw(_SetEpochLate(gate), seed=0)
        loader = DataLoader(
            keyed,
            batch_size=None,
            num_workers=1,
            prefetch_factor=1,
            multiprocessing_context="fork",
            worker_init_fn=_errors_on_rankaug_warnings,
        )
        iterator = iter(loader)
        assert next(iterator)[0] == 0  # the pass has started, keyed with epoch 0
        keyed.set_epoch(1)  # too late: Lightning's order
        gate.set()
        with pytest.raises(RankaugWarning, match=r"set_epoch came after iter\(loader\)"):
            list(iterator)

    @pytest.mark.parametrize("persistent", [True, False])
    def test_set_epoch_between_passes_does_not_warn(self, persistent: bool) -> None:
        keyed = _Draw(Seen(), seed=0)
        loader = DataLoader(
            keyed,
            batch_size=None,
            num_workers=2,
            persistent_workers=persistent,
            multiprocessing_context="fork",
            worker_init_fn=_errors_on_rankaug_warnings,
        )
        epochs = []
        for epoch in range(3):
            keyed.set_epoch(epoch)
            epochs.append({int(e) for e, _ in loader})
        assert epochs == [{0}, {1}, {2}]


class Seen(Dataset[int]):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> int:
        return index


_SPAWNED_UNPICKLE = """
import pickle, sys
index = pickle.loads(bytes.fromhex(sys.argv[1]))
print(type(index).__name__, int(index), index.epoch)
"""


def unpickled_afresh(_: Path) -> subprocess.CompletedProcess[str]:
    """An epoch-77 index unpickled in a new interpreter (a job of tests.ahead)."""
    return subprocess.run(
        [sys.executable, "-c", _SPAWNED_UNPICKLE, pickle.dumps(EpochIndex(5, epoch=77)).hex()],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


class TestEpochClasses:
    @pytest.mark.slow  # a new interpreter, run ahead (tests/ahead.py)
    def test_each_epoch_is_a_class_found_by_name_in_a_fresh_process(self, tmp_path: Path) -> None:
        data = pickle.dumps([EpochIndex(5, epoch=123456), EpochIndex(6, epoch=123456)])
        result = ahead.result("epoch-afresh", lambda: tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["_EpochIndex_77", "5", "77"]
        assert [(int(i), i.epoch) for i in pickle.loads(data)] == [(5, 123456), (6, 123456)]

    def test_instances_hold_nothing_of_their_own(self) -> None:
        index = EpochIndex(5, epoch=2)
        assert not hasattr(index, "__dict__")
        assert epoch_class(2) is type(index)
        assert epoch_class(2)(9) == EpochIndex(9, epoch=2)

    def test_the_latest_epochs_pickle_from_the_dispatch_table_and_it_stays_small(self) -> None:
        first = 900_000  # epochs no other test makes
        for epoch in range(first, first + 20):
            assert epoch_class(epoch) in copyreg.dispatch_table  # the newest is registered
        table = copyreg.dispatch_table
        ours = [k for k in table if isinstance(k, type) and issubclass(k, EpochIndex)]
        assert 1 <= len(ours) <= 8
        old, new = EpochIndex(3, epoch=first), EpochIndex(3, epoch=first + 19)
        assert type(old) not in copyreg.dispatch_table  # it falls back to __reduce__
        for index in (old, new):
            again = pickle.loads(ForkingPickler.dumps([index, int(index)]))
            assert again == [3, 3]
            assert (type(again[0]), type(again[1])) == (type(index), int)
        # the same bytes either way (each epoch's class has a reducer of its own)
        reduce_new = copyreg.dispatch_table[type(new)]
        assert reduce_new(new) == (type(new), (3,))
        assert type(reduce_new(new)[1][0]) is int
        copyreg.pickle(type(old), _reducer(type(old)))
        try:
            registered = pickle.dumps(old)
        finally:
            del copyreg.dispatch_table[type(old)]
        assert pickle.dumps(old) == registered

    def test_other_module_attributes_are_still_missing(self) -> None:
        import rankaug.epoch

        with pytest.raises(AttributeError, match="has no attribute '_EpochIndex_x'"):
            rankaug.epoch._EpochIndex_x  # noqa: B018
