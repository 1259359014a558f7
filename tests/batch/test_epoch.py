"""BatchAugment on plain indices (torch's default collate): the epoch of the pass read."""

from __future__ import annotations

import copy
import gc
import itertools
import multiprocessing
import pickle
import queue
import re
import threading
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler, default_collate

from rankaug import BatchAugment, EpochIndex, EpochSampler
from rankaug.batch import _epoch
from rankaug.errors import RankaugWarning
from rankaug.sampler_read import LastBatch, read_epoch
from tests.ddp.harness import launch_forked
from tests.frozen_heap import frozen_heap  # noqa: F401  (autouse: cheap gc.collect calls)
from tests.recipes.infinite import InfiniteDataLoader

K = pytest.importorskip("kornia.augmentation")


class _Indexed:
    """Ten constant 4x4 images that return their index (collated to an int tensor)."""

    def __len__(self) -> int:
        return 10

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"image": torch.full((3, 4, 4), index / 10), "index": index}


# the loaders a pass's batches come through: in the process, by workers, by persistent ones
LOADERS: list[dict[str, Any]] = [
    {"num_workers": 0},
    {"num_workers": 2},
    {"num_workers": 2, "persistent_workers": True},
]


def _aug() -> BatchAugment:
    return BatchAugment(K.RandomAffine(degrees=40.0, p=1.0), seed=3)


def _loader(sampler: Any, **options: Any) -> DataLoader[Any]:
    return DataLoader(_Indexed(), batch_size=4, sampler=sampler, **options)


#: Each BatchAugment's outputs for given images, indices and epoch: a call with both
#: is keyed by them alone (no pass read, no step counted), so computed once a test.
_KEYED: weakref.WeakKeyDictionary[BatchAugment, dict[Any, torch.Tensor]] = (
    weakref.WeakKeyDictionary()
)


def _keyed_as(aug: BatchAugment, batch: dict[str, Any], **given: Any) -> int | None:
    """The epoch (0 to 9) whose keys gave ``aug``'s output for ``batch`` (``None``: none)."""
    images, index = batch["image"], batch["index"]
    out = aug(images, index=index, **given)
    known = _KEYED.setdefault(aug, {})
    plain = [int(i) for i in index]
    for epoch in range(10):
        key = (images.numpy().tobytes(), tuple(images.shape), tuple(plain), epoch)
        if key not in known:
            known[key] = aug(images, index=index, epoch=epoch)
        if torch.equal(out, known[key]):
            return epoch
    return None


class _AugmentingCollate:
    """A ``collate_fn`` that augments each batch in its worker: the epoch it keyed, the warnings."""

    def __init__(self, aug: BatchAugment) -> None:
        self.aug = aug

    def __call__(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = default_collate(samples)  # plain indices
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            keyed = _keyed_as(self.aug, batch)
        warned = [str(warning.message) for warning in caught]
        return {"keyed": keyed, "warned": warned, "from": [w.filename for w in caught]}


class _Lit(_Indexed):
    """``_Indexed`` without its black image 0, which every epoch augments alike (batches of one)."""

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"image": torch.full((3, 4, 4), (index + 1) / 10), "index": index}


class _Gated(_Lit):
    """``_Lit`` whose samples but the first wait for the gate (a multiprocessing Event)."""

    def __init__(self, gate: Any) -> None:
        self.gate = gate

    def __getitem__(self, index: int) -> dict[str, Any]:
        if index > 0:
            self.gate.wait()
        return super().__getitem__(index)


class _LoggingCollate(_AugmentingCollate):
    """``_AugmentingCollate`` that also appends its warnings to a file, for batches nobody reads."""

    def __init__(self, aug: BatchAugment, log: Path) -> None:
        super().__init__(aug)
        self.log = log

    def __call__(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = super().__call__(samples)
        with self.log.open("a") as log:
            log.writelines(f"{message}\n" for message in batch["warned"])
        return batch


#: The loaders whose fetch a collate_fn augments in: the main process's, a worker's, a
#: persistent one's (one worker: its batches come in order).
FETCHING: list[dict[str, Any]] = [
    {"num_workers": 0},
    {"num_workers": 1, "prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": 2, "persistent_workers": True},
]


def _ahead_onto_device(loader: DataLoader[Any]) -> Any:
    """A CUDA prefetcher's way (meta here): each batch's indices moved to the device,
    one batch read ahead."""
    held: Any = None
    for batch in loader:
        if held is not None:
            yield held["index"].to("meta")
        held = batch
    yield held["index"].to("meta")


def _ddp_keyed(rank: int, world_size: int) -> list[Any]:
    """One rank's epochs and indices per batch, its sampler sharded by the process group."""
    loader = _loader(EpochSampler(DistributedSampler(_Indexed(), seed=0)), num_workers=2)
    aug = _aug()
    return [[_keyed_as(aug, batch), batch["index"].tolist()] for _ in range(2) for batch in loader]


class TestPlainEpoch:
    @pytest.mark.parametrize("options", LOADERS)
    def test_default_collate_batches_take_the_epoch_of_their_pass(
        self, options: dict[str, Any]
    ) -> None:
        # default_collate turned the EpochIndex values into a tensor: every epoch was keyed 0
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=2), **options)
        aug = _aug()
        keyed = [[_keyed_as(aug, batch) for batch in loader] for _ in range(3)]
        assert keyed == [[2, 2, 2], [3, 3, 3], [4, 4, 4]]

    def test_over_a_distributed_sampler(self) -> None:
        sampler = EpochSampler(DistributedSampler(_Indexed(), num_replicas=2, rank=1, seed=4))
        loader = _loader(sampler, num_workers=2)
        aug = _aug()
        keyed = [[_keyed_as(aug, batch) for batch in loader] for _ in range(2)]
        assert keyed == [[0, 0], [1, 1]]

    @pytest.mark.ddp
    def test_on_two_ranks_of_a_process_group(self, tmp_path: Path) -> None:
        first, second = launch_forked(_ddp_keyed, 2, tmp_path)
        assert [epoch for epoch, _ in first] == [0, 0, 1, 1]
        assert [epoch for epoch, _ in second] == [0, 0, 1, 1]
        shards = [{i for _, batch in rank[:2] for i in batch} for rank in (first, second)]
        assert shards[0].isdisjoint(shards[1])  # each rank its own shard

    def test_epoch_index_values_epoch_and_set_epoch_come_first(self) -> None:
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=2), num_workers=0)
        aug = _aug()
        iterator = iter(loader)
        batch = next(iterator)  # the pass of epoch 2 is read
        assert _keyed_as(aug, batch, epoch=6) == 6
        carried = {**batch, "index": [EpochIndex(int(i), 9) for i in batch["index"]]}
        assert _keyed_as(aug, carried) == 9
        assert _keyed_as(aug, batch) == 2
        aug.set_epoch(7)
        assert [_keyed_as(aug, batch) for batch in iterator] == [7, 7]

    def test_a_copy_sets_its_own_epoch(self) -> None:
        aug = _aug()
        aug.set_epoch(4)
        copied, pickled = copy.copy(aug), pickle.loads(pickle.dumps(aug))
        copied.set_epoch(5)
        assert (aug.epoch, copied.epoch, pickled.epoch) == (4, 5, 4)

    @pytest.mark.parametrize("workers", [0, 2])
    def test_the_last_batch_when_the_loader_drops_an_incomplete_one(self, workers: int) -> None:
        # the pass's last index drawn (9) is in no batch: the last batch ends with 7
        loader = _loader(
            EpochSampler(SequentialSampler(range(10)), epoch=1), num_workers=workers,
            drop_last=True,
        )  # fmt: skip
        aug = _aug()
        keyed = [[_keyed_as(aug, batch) for batch in loader] for _ in range(2)]
        assert keyed == [[1, 1], [2, 2]]

    def test_a_train_and_a_persistent_validation_loader(self) -> None:
        # the validation iterator outlives its loop: only the pass with batches pending counts
        train = _loader(
            EpochSampler(DistributedSampler(_Indexed(), num_replicas=2, rank=0, shuffle=False)),
            num_workers=2,
        )
        val = _loader(
            EpochSampler(SequentialSampler(range(10)), epoch=7),
            num_workers=2,
            persistent_workers=True,
        )
        aug = _aug()
        keyed = []
        for _ in range(3):
            keyed.append([_keyed_as(aug, batch) for batch in train])
            keyed.append([_keyed_as(aug, batch) for batch in val])
        assert keyed == [[0, 0], [7, 7, 7], [1, 1], [8, 8, 8], [2, 2], [9, 9, 9]]

    @pytest.mark.parametrize("options", LOADERS)
    def test_a_validation_loop_that_reads_len_batches_and_keeps_its_iterator(
        self, options: dict[str, Any]
    ) -> None:
        # Lightning's validation loop: len(loader) batches, no next() after the last, the
        # iterator kept while the next training epoch runs: its pass was given whole
        train = _loader(EpochSampler(SequentialSampler(range(10))), num_workers=0)
        val = _loader(EpochSampler(SequentialSampler(range(8)), epoch=7), **options)
        aug = _aug()
        keyed, kept = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            for _ in range(2):
                keyed.append([_keyed_as(aug, batch) for batch in train])
                kept.append(iter(val))
                keyed.append([_keyed_as(aug, next(kept[-1])) for _ in range(len(val))])
        del kept, val
        gc.collect()
        assert keyed == [[0, 0, 0], [7, 7], [1, 1, 1], [8, 8]]

    def test_two_persistent_loaders_whose_passes_end_alike(self) -> None:
        # both iterators sit at the end of a pass ending with 9: the last batch is the one
        # of the loader read just before, not a warning and 0
        train, val = (
            _loader(EpochSampler(SequentialSampler(range(10)), epoch=epoch), num_workers=2,
                    persistent_workers=True)
            for epoch in (0, 7)
        )  # fmt: skip
        aug = _aug()
        keyed = []
        for _ in range(2):
            keyed.append([_keyed_as(aug, batch) for batch in train])
            keyed.append([_keyed_as(aug, batch) for batch in val])
        del train, val
        gc.collect()  # persistent iterators outlive the test otherwise
        assert keyed == [[0, 0, 0], [7, 7, 7], [1, 1, 1], [8, 8, 8]]

    def test_two_loaders_read_at_once_warn_and_fall_back(self) -> None:
        first = _loader(EpochSampler(SequentialSampler(range(10))), num_workers=0)
        second = _loader(EpochSampler(SequentialSampler(range(10)), epoch=5), num_workers=0)
        aug = _aug()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            keyed = [
                _keyed_as(aug, batch) for pair in zip(first, second, strict=True) for batch in pair
            ]
        assert keyed == [0] * 6  # set_epoch's value, never a guess
        messages = [str(warning.message) for warning in caught]
        assert len(messages) == 2
        assert re.search(r"cannot tell .* passes of epochs \[0, 5\] are read at once", messages[0])
        assert "augmented index 0 again with epoch 0" in messages[1]  # the second loader's
        assert {warning.filename for warning in caught} == {__file__}
        assert {warning.category for warning in caught} == {RankaugWarning}

    def test_an_infinite_loader_that_draws_the_next_pass_ahead(self) -> None:
        # its iterator draws the first batches of pass k + 1 while pass k is read
        loader = InfiniteDataLoader(
            _Indexed(), batch_size=2, sampler=EpochSampler(SequentialSampler(range(10))),
            num_workers=2,
        )  # fmt: skip
        aug = _aug()
        try:
            keyed = [[_keyed_as(aug, batch) for batch in loader] for _ in range(3)]
        finally:
            loader.close()
        assert keyed == [[0] * 5, [1] * 5, [2] * 5]

    @pytest.mark.parametrize("options", LOADERS)
    def test_a_wrapper_that_reads_one_batch_ahead(self, options: dict[str, Any]) -> None:
        # timm's PrefetchLoader: batch k is yielded once the loader returned batch k + 1, the
        # last after the loader's end; those were keyed 0, silently
        def ahead(loader: DataLoader[Any]) -> Any:
            held = None
            for batch in loader:
                if held is not None:
                    yield held
                held = batch
            yield held

        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=3), **options)
        aug = _aug()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            keyed = [[_keyed_as(aug, batch) for batch in ahead(loader)] for _ in range(2)]
        del loader
        gc.collect()  # a persistent iterator outlives the test otherwise
        assert keyed == [[3, 0, 3], [4, 0, 4]]  # the one before the last: 0, with a warning
        messages = [str(warning.message) for warning in caught]
        assert len(messages) == 2
        assert "does not end with the last index of the pass of epoch 3" in messages[0]
        assert "augmented index 4 again with epoch 0" in messages[1]
        assert {warning.filename for warning in caught} == {__file__}

    @pytest.mark.parametrize("workers", [0, 2])
    def test_a_wrapper_that_reads_one_batch_ahead_onto_a_device(self, workers: int) -> None:
        # a CUDA prefetcher (meta here): the last batch, after the loader's end, is compared
        # on the device with its pass's last index; it was keyed 0 with a warning (the
        # iterator gone, its indices not read back)
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=3), num_workers=workers)
        found = [[read_epoch(index) for index in _ahead_onto_device(loader)] for _ in range(2)]
        assert found == [
            [3, LastBatch(epoch=3, last=9), LastBatch(epoch=3, last=9)],
            [4, LastBatch(epoch=4, last=9), LastBatch(epoch=4, last=9)],
        ]

    def test_two_calls_on_the_last_batch_a_wrapper_reads_ahead_onto_a_device(self) -> None:
        # two augmentations of one batch (two views): the second call on the last batch,
        # after the loader's end, was refused (a warning, keyed 0) while the first was read
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=3), num_workers=0)
        found = [[read_epoch(index), read_epoch(index)] for index in _ahead_onto_device(loader)]
        assert found[0] == [3, 3]
        assert found[1:] == [[LastBatch(epoch=3, last=9)] * 2] * 2
        replayed = torch.tensor([8, 9]).to("meta")  # other indices: no last batch of it
        assert "after the pass of epoch 3 ended" in str(read_epoch(replayed))

    def test_a_pass_ended_unaugmented_keys_no_later_batch(self) -> None:
        # its iterator is gone and no call read it: a batch ending with its last index
        # (9) is no batch of it, nor told from one (it warns, below)
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=3))
        for _ in loader:
            pass
        aug = _aug()
        batch = {"image": torch.rand(10, 3, 4, 4), "index": torch.arange(10)}
        with pytest.warns(RankaugWarning, match="returned all its batches before any was"):
            keyed = _keyed_as(aug, batch)
        assert keyed == 0
        del loader
        gc.collect()  # its pass is read no more

    @pytest.mark.parametrize("workers", [0, 2])
    def test_batches_kept_from_a_finished_loader_warn_from_the_first_epoch(
        self, workers: int
    ) -> None:
        # batches = list(loader), then augmented: keyed 0 silently in the first epoch (the
        # pass, gone, was read by no call), until the second epoch's "index again"
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=3), num_workers=workers)
        aug = _aug()
        batches = list(loader)
        with pytest.warns(RankaugWarning) as caught:
            keyed = [_keyed_as(aug, batch) for batch in batches]
        assert keyed == [0, 0, 0]
        assert len(caught) == 1
        message = str(caught[0].message)
        assert "cannot tell which EpochSampler pass they come from" in message
        assert "pass of epoch 3, whose loader returned all its batches before any" in message
        assert "pass epoch=" in message
        assert caught[0].filename == __file__
        del loader
        gc.collect()  # its pass is read no more

    @pytest.mark.parametrize("options", LOADERS)
    def test_batches_replayed_by_itertools_cycle_warn(self, options: dict[str, Any]) -> None:
        # cycle() replays the first pass's batches, kept, and begins no pass: they were keyed
        # 0 silently (the first cycle's augmentations again for an epoch-0 sampler), the last
        # one with the finished pass's epoch (3) under a persistent iterator
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=3), **options)
        aug = _aug()
        cycled = itertools.cycle(loader)
        first = [_keyed_as(aug, next(cycled)) for _ in range(3)]
        with pytest.warns(RankaugWarning) as caught:
            replayed = _keyed_as(aug, next(cycled))
        second = [replayed, *(_keyed_as(aug, next(cycled)) for _ in range(2))]
        assert (first, second) == ([3, 3, 3], [0, 0, 0])
        assert len(caught) == 1
        message = str(caught[0].message)
        assert "cannot tell which EpochSampler pass they come from" in message
        assert "after the pass of epoch 3 ended (its loader returned all its batches)" in message
        assert "itertools.cycle(loader)" in message
        assert caught[0].filename == __file__
        del cycled
        assert [_keyed_as(aug, batch) for batch in loader] == [4, 4, 4]  # a new pass: read
        del loader
        gc.collect()  # a persistent iterator outlives the test otherwise

    @pytest.mark.parametrize("workers", [0, 2])
    def test_batches_replayed_by_itertools_cycle_onto_a_device(self, workers: int) -> None:
        # the first replayed batch is compared there with the pass's last index (keyed 0:
        # it does not end with it); from the second on, the pass is not read
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=3), num_workers=workers)
        cycled = itertools.cycle(loader)
        found = [read_epoch(next(cycled)["index"].to("meta")) for _ in range(6)]
        assert found[:4] == [3, 3, LastBatch(epoch=3, last=9), LastBatch(epoch=3, last=9)]
        assert [type(value).__name__ for value in found[4:]] == ["Unknown", "Unknown"]
        assert "after the pass of epoch 3 ended" in str(found[4])
        del cycled, loader
        gc.collect()

    def test_a_resumed_stateful_loader(self) -> None:
        stateful = pytest.importorskip("torchdata.stateful_dataloader")

        def make() -> Any:
            sampler = EpochSampler(SequentialSampler(range(10)), epoch=3)
            return stateful.StatefulDataLoader(
                _Indexed(), batch_size=4, sampler=sampler, num_workers=2
            )

        aug = _aug()
        with warnings.catch_warnings():  # torchdata's own deprecation warning
            warnings.simplefilter("ignore", UserWarning)
            loader = make()
            for _ in loader:  # epoch 3
                pass
            iterator = iter(loader)  # epoch 4
            next(iterator)
            state = loader.state_dict()
            del iterator, loader
            resumed = make()
            resumed.load_state_dict(state)
            keyed = [[_keyed_as(aug, batch) for batch in resumed] for _ in range(2)]
        assert keyed == [[4, 4], [5, 5, 5]]

    def test_a_loader_read_in_another_thread_warns(self) -> None:
        # batches of 2: the feeder draws at most two ahead, so the pass is not all drawn
        sampler = EpochSampler(SequentialSampler(range(10)), epoch=1)
        loader = DataLoader(_Indexed(), batch_size=2, sampler=sampler)
        batches: queue.Queue[Any] = queue.Queue(maxsize=1)

        def feed() -> None:
            for batch in loader:
                batches.put(batch)
            batches.put(None)

        thread = threading.Thread(target=feed)
        thread.start()
        aug = _aug()
        try:
            with pytest.warns(RankaugWarning, match="read by another thread"):
                first = _keyed_as(aug, batches.get())
        finally:
            while batches.get() is not None:
                pass
            thread.join()
        assert first == 0

    def test_an_index_seen_again_without_an_epoch_warns_once(self) -> None:
        loader = DataLoader(_Indexed(), batch_size=4, shuffle=False)  # no EpochSampler
        aug = _aug()
        for batch in loader:
            aug(batch["image"], index=batch["index"])
        with pytest.warns(RankaugWarning, match="augmented index 0 again with epoch 0") as caught:
            _ = [aug(batch["image"], index=batch["index"]) for batch in loader]
        assert len(caught) == 1
        assert caught[0].filename == __file__
        for batch in loader:  # once
            aug(batch["image"], index=batch["index"])

    def test_in_a_worker_without_an_epoch_warns(self) -> None:
        # no EpochSampler: the batch being fetched carries no epoch either; non-persistent
        # workers are new each epoch, so no index comes again there
        collate = _AugmentingCollate(_aug())
        loader = DataLoader(_Indexed(), batch_size=5, sampler=SequentialSampler(range(10)),
                            num_workers=1, collate_fn=collate)  # fmt: skip
        first, second = list(loader)
        assert (first["keyed"], second["keyed"]) == (0, 0)
        (warned,) = first["warned"]
        assert "no epoch (no epoch=, no EpochIndex values, no set_epoch call) in a " in warned
        assert "DataLoader worker" in warned
        assert "wrap the loader's sampler in rankaug.EpochSampler" in warned
        assert second["warned"] == []  # once per process

    @pytest.mark.parametrize("options", FETCHING)
    def test_inside_a_fetch_the_batch_keys_its_epoch(self, options: dict[str, Any]) -> None:
        # a collate_fn that augments: default_collate made the indices plain, but the fetch
        # still holds the sampler's EpochIndex values. In a worker every epoch was keyed 0
        sampler = EpochSampler(SequentialSampler(range(10)), epoch=2)
        loader = DataLoader(_Indexed(), batch_size=5, sampler=sampler,
                            collate_fn=_AugmentingCollate(_aug()), **options)  # fmt: skip
        batches = [batch for _ in range(2) for batch in loader]
        assert [batch["keyed"] for batch in batches] == [2, 2, 3, 3]
        assert [batch["warned"] for batch in batches] == [[], [], [], []]

    @pytest.mark.parametrize("options", FETCHING)
    def test_inside_a_fetch_a_thread_pool_keys_the_fetched_batchs_epoch(
        self, options: dict[str, Any]
    ) -> None:
        # a collate_fn (or __getitems__) that augments in a thread pool: the threads run
        # outside the fetch's stack, while it waits for them. They were keyed 0, warned
        aug = _aug()

        def collate(samples: list[dict[str, Any]]) -> dict[str, Any]:
            batch = default_collate(samples)
            images, index = batch["image"], batch["index"]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with ThreadPoolExecutor(2) as pool:
                    halves = list(pool.map(lambda part: aug(images[part], index=index[part]),
                                           (slice(0, 2), slice(2, None))))  # fmt: skip
            keyed = [
                e
                for e in range(4)
                if torch.equal(torch.cat(halves), aug(images, index=index, epoch=e))
            ]
            return {"keyed": keyed, "warned": [str(warning.message) for warning in caught]}

        sampler = EpochSampler(SequentialSampler(range(10)), epoch=2)
        loader = DataLoader(_Lit(), batch_size=5, sampler=sampler, collate_fn=collate, **options)
        batches = [batch for _ in range(2) for batch in loader]
        assert [batch["keyed"] for batch in batches] == [[2], [2], [3], [3]]
        assert [batch["warned"] for batch in batches] == [[], [], [], []]

    @pytest.mark.parametrize("options", FETCHING)
    def test_set_epoch_after_iter_loader_cannot_mix_the_fetched_batches(
        self, options: dict[str, Any]
    ) -> None:
        # the batches a worker had fetched before the call were keyed with the old epoch,
        # the rest with the new one, without a word: the fetched batch's epoch comes first
        sampler = EpochSampler(SequentialSampler(range(10)), epoch=2)
        aug = _aug()
        loader = DataLoader(_Indexed(), batch_size=2, sampler=sampler,
                            collate_fn=_AugmentingCollate(aug), **options)  # fmt: skip
        iterator = iter(loader)
        first = next(iterator)  # fetched and augmented before set_epoch
        aug.set_epoch(7)
        batches = [first, *iterator]
        assert [batch["keyed"] for batch in batches] == [2, 2, 2, 2, 2]
        assert [message for batch in batches for message in batch["warned"]] == []

    @pytest.mark.parametrize("options", FETCHING)
    def test_set_epoch_in_the_middle_of_a_pass_warns(self, options: dict[str, Any]) -> None:
        # no EpochSampler: set_epoch is the only source, and came after the worker had
        # fetched batches of the pass (those before it keep the old epoch), silently
        aug = _aug()
        aug.set_epoch(0)
        loader = DataLoader(_Lit(), batch_size=1, collate_fn=_AugmentingCollate(aug),
                            **options)  # fmt: skip
        iterator = iter(loader)
        # fetched with epoch 0; a worker tells the change once it fetches a batch it was
        # sent after it, beyond the prefetch_factor it held then: the pass is long enough
        first = next(iterator)
        aug.set_epoch(1)
        batches = [first, *iterator]
        assert (batches[0]["keyed"], batches[-1]["keyed"]) == (0, 1)
        (warned,) = [message for batch in batches for message in batch["warned"]]
        assert "epoch changed from 0 to 1 (set_epoch) between two batches of one pass" in warned
        assert "Call aug.set_epoch(epoch) before iter(loader)" in warned
        assert [name for batch in batches for name in batch["from"]] == [__file__]

    @pytest.mark.parametrize("options", FETCHING)
    def test_inside_a_fetch_a_batch_of_two_passes_keys_each_sample_with_its_own(
        self, options: dict[str, Any]
    ) -> None:
        # a batch sampler that runs on from one pass into the next: the fetch holds each
        # index's epoch. All were keyed 0 (silently without workers)
        batches = [[EpochIndex(8, epoch=0), EpochIndex(9, epoch=0), EpochIndex(0, epoch=1)],
                   [EpochIndex(i, epoch=1) for i in (1, 2, 3)]]  # fmt: skip
        aug = _aug()

        def collate(samples: list[dict[str, Any]]) -> tuple[torch.Tensor, list[str]]:
            batch = default_collate(samples)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = aug(batch["image"], index=batch["index"])
            return out, [str(warning.message) for warning in caught]

        loader = DataLoader(_Lit(), batch_sampler=batches, collate_fn=collate, **options)
        for (out, warned), batch in zip(loader, batches, strict=True):
            images = torch.stack([_Lit()[int(index)]["image"] for index in batch])
            epochs = [index.epoch for index in batch]
            assert torch.equal(out, aug(images, index=[int(i) for i in batch], epoch=epochs))
            assert warned == []

    @pytest.mark.parametrize("options", FETCHING)
    def test_inside_a_fetch_a_batch_some_of_whose_indices_carry_no_epoch_warns(
        self, options: dict[str, Any]
    ) -> None:
        # keyed 0 silently without workers; in a worker the warning said the batch
        # carried no epoch (its sampler no EpochSampler)
        batches = [[EpochIndex(1, epoch=3), 2], [EpochIndex(3, epoch=3), 4]]
        collate = _AugmentingCollate(_aug())
        loader = DataLoader(_Lit(), batch_sampler=batches, collate_fn=collate, **options)
        first, second = list(loader)
        assert (first["keyed"], second["keyed"]) == (0, 0)
        (warned,) = first["warned"]
        assert "inside a DataLoader fetch whose batch holds indices of several epochs" in warned
        assert first["from"] == [__file__]
        assert second["warned"] == []

    def test_a_pass_left_unfinished_is_no_late_set_epoch(self, tmp_path: Path) -> None:
        # a persistent worker still fetches the batches it was sent before a break (or
        # Lightning's limit_train_batches), with the next pass's set_epoch value, called
        # before iter(loader) as it should: nobody reads them, yet it warned of a late call
        gate = multiprocessing.Event()
        aug = _aug()
        aug.set_epoch(0)
        log = tmp_path / "warned"
        loader = DataLoader(_Gated(gate), batch_size=1, num_workers=1, persistent_workers=True,
                            prefetch_factor=2, collate_fn=_LoggingCollate(aug, log))  # fmt: skip
        for _ in loader:
            break  # batch 0 read; the worker waits at the gate with batches 1 and 2
        aug.set_epoch(1)
        gate.set()
        assert [batch["keyed"] for batch in loader] == [1] * 10
        assert log.read_text() == ""  # the unread batches too

    def test_without_indices_set_epoch_in_the_middle_of_a_pass_warns(self) -> None:
        aug = _aug()

        def collate(samples: list[dict[str, Any]]) -> list[tuple[str, str]]:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                aug(default_collate(samples)["image"])  # step keys: the set_epoch epoch
            return [(str(warning.message), warning.filename) for warning in caught]

        iterator = iter(DataLoader(_Indexed(), batch_size=5, collate_fn=collate))
        assert next(iterator) == []
        aug.set_epoch(3)
        ((warned, where),) = next(iterator)
        assert "epoch changed from 0 to 3 (set_epoch) between two batches" in warned
        # without workers nothing depends on timing (it said so): each batch has the value
        # at its fetch, which an infinite loader's epochs need
        assert "without workers: those fetched before the call were keyed with epoch 0, " in warned
        assert where == __file__

    def test_in_workers_warns_once_not_once_per_worker_and_epoch(self) -> None:
        # non-persistent workers are new processes every epoch, and each warned again:
        # num_workers warnings an epoch, every epoch
        collate = _AugmentingCollate(_aug())
        loader = DataLoader(_Indexed(), batch_size=5, num_workers=1, collate_fn=collate)
        warned = [message for _ in range(3) for batch in loader for message in batch["warned"]]
        assert len(warned) == 1
        assert "in a DataLoader worker" in warned[0]

    def test_set_epoch_reaches_persistent_workers(self) -> None:
        aug = _aug()  # augmenting in the workers: they started with the first epoch's copy
        loader = DataLoader(_Indexed(), batch_size=5, num_workers=1, persistent_workers=True,
                            collate_fn=_AugmentingCollate(aug))  # fmt: skip
        keyed, warned = [], []
        for epoch in (3, 4):
            aug.set_epoch(epoch)  # before iter(loader), as for a sampler
            for batch in loader:
                keyed.append(batch["keyed"])
                warned += batch["warned"]
        assert keyed == [3, 3, 4, 4]
        assert warned == []  # a change between two passes is no late set_epoch
        copied = copy.deepcopy(aug)
        copied.set_epoch(6)
        assert (aug.epoch, copied.epoch) == (4, 6)  # a deep copy's set_epoch is its own too

    def test_no_warning_with_an_epoch_source(self) -> None:
        loader = DataLoader(_Indexed(), batch_size=4, shuffle=False)
        aug = _aug()
        aug.set_epoch(0)  # the caller's choice: the same epoch twice
        for _ in range(2):
            for batch in loader:
                aug(batch["image"], index=batch["index"])
                aug(batch["image"], index=batch["index"].tolist(), epoch=1)
        assert aug.epoch == 0

    def test_indices_on_a_device_without_an_epoch_warn(self) -> None:
        # not read back, so no index is seen again: every epoch was keyed 0 without a word
        plain = _epoch.PlainEpoch()
        index = torch.arange(4, device="meta")
        with pytest.warns(RankaugWarning, match="plain indices on meta and no epoch") as caught:
            assert [plain.of(index), plain.of(index)] == [0, 0]
        assert len(caught) == 1
        named = _epoch.PlainEpoch()
        named.set(2)
        assert named.of(index) == 2  # an epoch source: nothing to say

    def test_memory_is_bounded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(_epoch, "TRACKED", 4)
        aug = _aug()
        images = torch.zeros(6, 3, 4, 4)
        aug(images, index=torch.arange(6))  # 0 to 3 remembered
        aug(images[:1], index=[5])  # beyond what is remembered: not caught
        with pytest.warns(RankaugWarning, match="index 3 again"):
            aug(images[:1], index=[3])

    def test_the_last_batch_on_a_device_is_compared_there(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # indices on a device are not read back: the epoch is chosen there, by torch.where
        monkeypatch.setattr(_epoch, "read_epoch", lambda _: LastBatch(epoch=6, last=9))
        plain = _epoch.PlainEpoch()
        chosen = [plain.of(torch.tensor(i, dtype=torch.int64)) for i in ([8, 9], [9, 8], [])]
        assert [int(torch.as_tensor(epoch)) for epoch in chosen] == [6, 0, 0]  # 0: not its last
        aug, batch = _aug(), {"image": torch.rand(2, 3, 4, 4), "index": torch.tensor([8, 9])}
        assert _keyed_as(aug, batch) == 6  # BatchAugment takes the 0-D epoch tensor

    def test_the_last_batch_on_a_device_is_not_read_back(self) -> None:
        # it was read back (a sync) and the LastBatch left unused: meta tensors cannot be
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=2), num_workers=0)
        iterator = iter(loader)
        batches = list(iterator)  # read to its end, the iterator kept
        index = batches[-1]["index"].to("meta")
        assert read_epoch(index) == LastBatch(epoch=2, last=9)
        chosen = _epoch.PlainEpoch().of(index)
        assert isinstance(chosen, torch.Tensor)
        assert chosen.device.type == "meta"

    @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
    def test_cuda_indices_take_the_epoch_of_their_pass(self) -> None:
        loader = _loader(EpochSampler(SequentialSampler(range(10)), epoch=2), num_workers=2)
        aug = _aug()
        keyed = []
        for _ in range(2):
            for batch in loader:
                images, index = batch["image"].cuda(), batch["index"].cuda()
                out = aug(images, index=index)
                epochs = [
                    e for e in range(5) if torch.equal(out, aug(images, index=index, epoch=e))
                ]
                keyed.append(epochs)
        assert keyed == [[2], [2], [2], [3], [3], [3]]
