from __future__ import annotations

import multiprocessing
import pickle
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from torch.utils.data import ConcatDataset, DataLoader, Subset

from rankaug import EpochSampler, RandomAugmentWrapper, RankaugWarning, keyed, stream_start, streams
from rankaug.keys import KeyedRandom

DATA = [{"image": np.zeros((2, 2), np.uint8)} for _ in range(8)]


def draw(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {**sample, "draw": int(rng.integers(2**31))}


@pytest.fixture(autouse=True)
def _not_warned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts in a process that has not warned (the warning comes once)."""
    monkeypatch.setattr(stream_start, "_warned", None)
    monkeypatch.setattr(stream_start, "_unsaved", None, raising=False)
    monkeypatch.setattr(stream_start, "_restarted", None, raising=False)


def _in_a_child(wrapper: Any, queue: Any) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrapper[0]
        wrapper[1]
    queue.put([str(w.message) for w in caught if issubclass(w.category, RankaugWarning)])


def in_a_forked_child(wrapper: Any) -> list[str]:
    """The RankaugWarnings of a forked process (no DataLoader worker) drawing 2 samples."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_in_a_child, args=(wrapper, queue))
    child.start()
    messages: list[str] = queue.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0
    return messages


def in_a_thread(wrapper: Any, name: str = "loader") -> None:
    """Draw a sample in a thread of its own, named ``name``, until it ends."""
    thread = threading.Thread(target=wrapper.__getitem__, args=(0,), name=name)
    thread.start()
    thread.join()


class SlowRandom(KeyedRandom):
    """A stream that takes a while to start: two threads both miss it, one after the other."""

    __slots__ = ()

    def __init__(self, seed_sequence: np.random.SeedSequence) -> None:
        time.sleep(0.2)
        super().__init__(seed_sequence)


class TestCheck:
    def test_warns_in_a_forked_child_that_is_no_worker(self) -> None:
        messages = in_a_forked_child(RandomAugmentWrapper(DATA, draw, seed=0))
        assert len(messages) == 1  # once per process
        assert "child process that is not a DataLoader worker" in messages[0]
        assert "keying='sample'" in messages[0]

    def test_keeps_quiet_for_per_sample_keys_and_in_workers(self) -> None:
        assert in_a_forked_child(RandomAugmentWrapper(DATA, draw, seed=0, keying="sample")) == []
        wrapper = RandomAugmentWrapper(DATA, draw, seed=0)
        loader = DataLoader(wrapper, batch_size=4, num_workers=2, collate_fn=list,
                            multiprocessing_context="fork")  # fmt: skip
        assert len(list(loader)) == 2
        stream_start.check("X")  # the main thread of the main process


def stateful_loader(dataset: Any) -> Any:
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    return stateful.StatefulDataLoader(dataset, batch_size=2, collate_fn=list)


@pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
class TestCheckSaved:
    def test_warns_where_the_loader_saves_no_streams(self) -> None:
        # the loader saved nothing of the streams inside a Subset: a resumed run started
        # them over and repeated their draws, silently
        inside = Subset(RandomAugmentWrapper(DATA, draw, seed=0), [5, 1, 2, 7])
        with pytest.warns(RankaugWarning, match=r"a Subset, has no state_dict\(\)") as caught:
            list(stateful_loader(inside))
        ours = [str(w.message) for w in caught if issubclass(w.category, RankaugWarning)]
        assert len(ours) == 1  # once per process
        assert "keying='sample'" in ours[0]

    def test_keeps_quiet_where_the_loaders_dataset_saves_them(self) -> None:
        parts = [RandomAugmentWrapper(DATA, draw, seed=0), RandomAugmentWrapper(DATA, draw, seed=1)]
        outer = RandomAugmentWrapper(ConcatDataset(parts), draw, seed=2)
        assert len(list(stateful_loader(outer))) == 8  # the outer one saves those inside
        sample_keyed = RandomAugmentWrapper(DATA, draw, seed=0, keying="sample")
        assert len(list(stateful_loader(Subset(sample_keyed, [0, 1])))) == 1
        assert len(list(DataLoader(Subset(parts[0], [0, 1]), collate_fn=list))) == 2


def draws_between_checks(checks: int, batch_size: int = 2) -> list[int]:
    """Training draws (num_workers=0), ``checks`` validation passes after each batch.

    The validation loader goes over the training wrapper, its EpochSampler one epoch
    per pass (from 100 on: other epochs than the training one).
    """
    train = RandomAugmentWrapper(DATA, draw, seed=0)
    loader = DataLoader(train, sampler=EpochSampler(range(8)), batch_size=batch_size,
                        collate_fn=list)  # fmt: skip
    check = DataLoader(Subset(train, [0]), sampler=EpochSampler(range(1), epoch=100),
                       collate_fn=list)  # fmt: skip
    draws = []
    for batch in loader:
        draws += [sample["draw"] for sample in batch]
        for _ in range(checks):
            list(check)
    return draws


class TestRestarted:
    def test_warns_where_a_dropped_stream_starts_again(self) -> None:
        # the validation passes dropped the training epoch's stream, which started over
        # and repeated its draws, silently
        with pytest.warns(RankaugWarning, match=r"starts its stream of epoch 0 \(rank 0, wor"):
            draws = draws_between_checks(streams.KEPT)
        assert len(set(draws)) < len(draws)  # what it warns of

    def test_a_deliberate_rerun_is_told_how_to_repeat_its_draws(self) -> None:
        # set_epoch(0) again after more epochs than a worker keeps: warned, as the
        # accidental case (it cannot be told apart), with what a rerun does and needs
        train = RandomAugmentWrapper(DATA, draw, seed=0)
        first = [train[i]["draw"] for i in range(8)]  # epoch 0
        for epoch in range(1, streams.KEPT + 1):
            train.set_epoch(epoch)
            for index in range(8):
                train[index]
        train.set_epoch(0)
        with pytest.warns(RankaugWarning, match=r"An epoch run again on purpose, set_epoch"):
            again = [train[i]["draw"] for i in range(8)]
        assert again == first  # dropped: started over, its draws repeated

    def test_keeps_quiet_while_the_streams_are_kept(self) -> None:
        draws = draws_between_checks(1)  # one other epoch between two training batches
        assert len(set(draws)) == len(draws) == 8

    def test_keeps_the_stream_in_use_however_many_passes_come_between(self) -> None:
        # one validation pass per batch, eight in all: the training stream, drawn from
        # between them, was dropped after four (the oldest started) and started over
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            draws = draws_between_checks(1, batch_size=1)
        assert draws == draws_between_checks(0)  # as with no validation at all


class TestDrawn:
    """A thread drawing from a stream whose last drawer is another thread still running."""

    def test_warns_where_threads_share_a_stream(self) -> None:
        wrapper = RandomAugmentWrapper(DATA, draw, seed=0)
        wrapper[0]  # the main thread draws first, and keeps running
        with pytest.warns(RankaugWarning, match="in the thread 'loader' while the thread "
                          "'MainThread', which drew from it too, is still running"):  # fmt: skip
            in_a_thread(wrapper)

    def test_warns_in_a_pool_of_threads(self) -> None:
        wrapper = RandomAugmentWrapper(DATA, draw, seed=0)
        first, second = threading.Event(), threading.Event()

        def one() -> None:
            wrapper[0]
            first.set()
            second.wait(timeout=60)  # still running while the other draws

        helper = threading.Thread(target=one, name="first")
        helper.start()
        first.wait(timeout=60)
        try:
            with pytest.warns(RankaugWarning, match="thread 'second' while the thread 'first'"):
                in_a_thread(wrapper, name="second")
        finally:
            second.set()
            helper.join()

    def test_keeps_quiet_for_one_thread_at_a_time(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            alone = RandomAugmentWrapper(DATA, draw, seed=0)
            in_a_thread(alone)  # a thread of its own (a training loop run in a thread)
            in_a_thread(alone)  # the next one, after the last ended
            with ThreadPoolExecutor(1) as pool:
                pooled = list(pool.map(alone.__getitem__, range(8)))
            threading.Thread(target=time.sleep, args=(0.3,), daemon=True).start()  # idle
            again = RandomAugmentWrapper(DATA, draw, seed=0)
            again[0], again[0]  # what the two threads drew
            repeated = [again[i]["draw"] for i in range(8)]
            assert repeated == [sample["draw"] for sample in pooled]  # one order: a rerun repeats
            pickle.loads(pickle.dumps(alone))  # the threads are not pickled


class TestLock:
    @pytest.mark.filterwarnings("ignore:.*is still running:rankaug.RankaugWarning")
    def test_two_threads_start_one_stream(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(keyed, "KeyedRandom", SlowRandom)
        wrapper = RandomAugmentWrapper(DATA, draw, seed=0)
        context = wrapper.context(0)
        barrier = threading.Barrier(2)
        got: list[KeyedRandom] = []

        def start() -> None:
            barrier.wait()
            got.append(wrapper.key_random(context))

        threads = [threading.Thread(target=start) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert got[0] is got[1]
        assert len(wrapper._streams) == 1
