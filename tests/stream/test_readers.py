"""``rankaug.stream.readers``: accelerate dealing again a stream that splits by rank, and
DataLoader workers each reading a whole stream."""

from __future__ import annotations

import collections
import copy
import functools
import os
import pickle
import re
import sys
import tempfile
import time
import warnings
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pytest
from torch.utils.data import DataLoader, Dataset

from rankaug import RandomAugmentWrapper
from rankaug.errors import RankaugWarning
from rankaug.stream.readers import Told, _Exclusive, rank_split, worker_unsplit
from tests.stream.helpers import Shards

accelerate_data = pytest.importorskip("accelerate.data_loader")
datasets = pytest.importorskip("datasets")
split_dataset_by_node = pytest.importorskip("datasets.distributed").split_dataset_by_node


def _keep(sample: Any, rng: Any) -> Any:
    return sample


def _stream(world_size: int | None) -> Any:
    table = {"image": [np.full((4, 4), k, np.uint8) for k in range(8)], "id": list(range(8))}
    stream = datasets.Dataset.from_dict(table).to_iterable_dataset(num_shards=4)
    if world_size is not None:
        stream = split_dataset_by_node(stream, rank=0, world_size=world_size)
    return stream.with_format("numpy")


def _shard(wrapper: Any, processes: int) -> list[int]:
    shard = accelerate_data.IterableDatasetShard(
        wrapper, batch_size=2, num_processes=processes, process_index=0
    )
    return [int(sample["id"]) for sample in shard]


class TestCheckReader:
    def test_accelerate_sharding_a_stream_split_by_rank_warns(self) -> None:
        wrapper = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        expected = (
            "StreamingAugment reads IterableDataset, which splits by rank itself (Hugging "
            "Face's split_dataset_by_node), and accelerate's IterableDatasetShard deals its "
            "samples among the 2 processes again: each rank keeps 1/2 of its own share, and "
            "the rest is never trained on. Either give accelerator.prepare a stream that"
        )
        with pytest.warns(RankaugWarning, match=re.escape(expected)):
            kept = _shard(wrapper, 2)
        assert kept == [0, 1]  # of this rank's 0, 1, 4, 5: half never kept

    def test_it_warns_once_for_all_the_workers_and_epochs(
        self, capfd: pytest.CaptureFixture[str]
    ) -> None:
        # before: in DataLoader workers (accelerate's IterableDatasetShard without
        # dispatch_batches), each epoch's new workers warned again
        wrapper = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        shard = accelerate_data.IterableDatasetShard(
            wrapper, batch_size=2, num_processes=2, process_index=0
        )
        loader = DataLoader(shard, batch_size=None, num_workers=2, multiprocessing_context="fork")
        with warnings.catch_warnings():  # the workers' filter and printer: forked with them
            warnings.simplefilter("always", RankaugWarning)
            warnings.showwarning = _show
            read = [len(list(loader)) for _ in range(3)]
        assert read == [4] * 3  # 3 epochs read
        told = [line for line in capfd.readouterr().err.splitlines() if "RankaugWarning" in line]
        assert len(told) == 1

    @pytest.mark.parametrize(("world_size", "processes"), [(None, 2), (2, 1), (1, 2)])
    def test_a_whole_stream_or_one_process_is_not_warned(
        self, world_size: int | None, processes: int
    ) -> None:
        wrapper = RandomAugmentWrapper(_stream(world_size), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            kept = _shard(wrapper, processes)
        read = {None: 8, 1: 8, 2: 4}[world_size]  # the stream's 8 samples, or rank 0's half
        assert len(kept) == read // processes

    def test_a_stream_read_directly_is_not_warned(self) -> None:
        wrapper: Any = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(list(wrapper)) == 4

    @pytest.mark.parametrize("module", ["accelerated", "my_accelerate.data"])
    def test_a_reader_of_another_library_named_alike_is_not_warned(self, module: str) -> None:
        class IterableDatasetShard:  # accelerate's name, another library's class
            num_processes = 2

            def __init__(self, dataset: Any) -> None:
                self.dataset = dataset

            def __iter__(self) -> Any:
                yield from self.dataset

        IterableDatasetShard.__module__ = module
        wrapper = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(list(IterableDatasetShard(wrapper))) == 4


class TestTold:
    def test_each_warning_is_told_once(self) -> None:
        told = Told()
        assert [told.first("unsplit"), told.first("dealt"), told.first("unsplit")] == [
            True, True, False,
        ]  # fmt: skip

    def test_workers_reading_it_at_once_tell_it_once(self) -> None:
        # before: first() read the word, then set it: 2 workers that read it at once both
        # found it unset, and both told (here its reads are slowed, so that they do)
        loader = DataLoader(_Telling(), batch_size=None, num_workers=2,
                            multiprocessing_context="fork")  # fmt: skip
        assert sorted(bool(first) for first in loader) == [False, False, False, True]

    def test_workers_of_other_temporary_folders_tell_it_once(self, tmp_path: Path) -> None:
        # before: each process locked a file in its own temporary folder: workers whose
        # TMPDIR differs (set by a worker_init_fn here) took two locks, and both told
        own = functools.partial(_own_temporary_folder, tmp_path)
        loader = DataLoader(_Telling(), batch_size=None, num_workers=2,
                            multiprocessing_context="fork", worker_init_fn=own)  # fmt: skip
        assert sorted(bool(first) for first in loader) == [False, False, False, True]

    def test_its_lock_file_is_its_makers_in_a_spawned_worker_too(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        told = Told()
        made = told._lock_file
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the worker's own TMPDIR
        sent = ForkingPickler.loads(bytes(ForkingPickler.dumps(told)))  # as to a spawned one
        assert (sent._block.is_shared(), sent._lock_file) == (True, made)
        assert Told()._lock_file == str(tmp_path / f"rankaug-told-{os.getuid()}.lock")

    def test_another_users_lock_file_is_not_locked(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # a file of that name in a shared /tmp that another user made: they could hold
        # its lock for ever, and every worker of ours would wait on it
        name = Told()._lock_file
        assert name is not None
        assert _Exclusive()._descriptor(name) is not None  # this user's
        monkeypatch.setattr(os, "getuid", lambda: os.stat(name).st_uid + 1)
        assert _Exclusive()._descriptor(name) is None

    def test_a_copy_in_another_process_or_a_deepcopy_tells_afresh(self) -> None:
        # before: a wrapper pickled after it warned (a checkpoint, a job sent elsewhere)
        # never warned in the process that loaded it, though nothing was told there
        told = Told()
        told.first("unsplit")
        for copied in (pickle.loads(pickle.dumps(told)), copy.deepcopy(told)):
            assert copied.first("unsplit")
            assert not copied.first("unsplit")
        assert not told.first("unsplit")


def _own_temporary_folder(folder: Path, worker: int) -> None:
    """Give this worker a temporary folder of its own, as TMPDIR would."""
    own = folder / f"worker-{worker}"
    own.mkdir()
    os.environ["TMPDIR"] = tempfile.tempdir = str(own)


class _SlowTold(Told):
    """A Told whose reads take a while: workers starting together read it at once."""

    __slots__ = ()

    def get(self) -> int:
        value = super().get()
        time.sleep(0.3)
        return value


class _Telling(Dataset[bool]):
    """Each sample: whether its worker was the first to tell (``Told.first``)."""

    def __init__(self) -> None:
        self.told = _SlowTold()

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> bool:
        return self.told.first("unsplit")


class TestRankSplit:
    def test_what_it_tells(self) -> None:
        assert rank_split(_stream(2)) == "Hugging Face's split_dataset_by_node"
        assert rank_split(_stream(None)) is None
        assert rank_split(_stream(1)) is None
        assert rank_split(Shards(4)) is None


class TestCheckPickled:
    # read over accelerate's dispatcher with a spawned worker: tests/recipes/
    # test_accelerate_stream.py ("dispatched-spawn"), in 2 real processes
    def test_a_wrapper_pickled_without_a_dispatcher_is_not_warned(self) -> None:
        wrapper: Any = RandomAugmentWrapper(_stream(2), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            copy = pickle.loads(pickle.dumps(wrapper))
        assert [int(s["id"]) for s in copy] == [int(s["id"]) for s in wrapper]


def _shards(folder: Path) -> str:
    """4 webdataset shards of 2 samples each (ids ``s0``... ``s7``) in ``folder``: their urls."""
    wds = pytest.importorskip("webdataset")
    for shard in range(4):
        with wds.TarWriter(str(folder / f"t-{shard}.tar")) as sink:
            for k in (2 * shard, 2 * shard + 1):
                sink.write({"__key__": f"s{k}", "npy": np.full((4, 4), k, np.uint8)})
    return str(folder / "t-{0..3}.tar")


def _unpack(sample: dict[str, Any]) -> dict[str, Any]:
    return {"image": sample["npy"], "id": sample["__key__"]}


def _pipelines(urls: str, *, split: bool) -> list[Any]:
    """webdataset pipelines over ``urls`` that split by worker, or that do not."""
    wds = pytest.importorskip("webdataset")
    stages = (wds.tarfile_to_samples(), wds.decode(), wds.map(_unpack))
    if not split:
        return [
            wds.WebDataset(urls, shardshuffle=False, workersplitter=None).decode().map(_unpack),
            wds.DataPipeline(wds.SimpleShardList(urls), *stages),
            wds.DataPipeline(wds.DataPipeline(wds.SimpleShardList(urls)), *stages),  # nested
        ]
    own = wds.WebDataset(urls, shardshuffle=False, workersplitter=_every_other)
    return [
        wds.WebDataset(urls, shardshuffle=False).decode().map(_unpack),  # its default
        wds.DataPipeline(wds.SimpleShardList(urls), wds.split_by_worker, *stages),
        own.decode().map(_unpack),
    ]


def _every_other(urls: Any) -> Any:
    """A workersplitter of one's own: trusted to split."""
    from torch.utils.data import get_worker_info

    info = get_worker_info()
    for k, url in enumerate(urls):
        if info is None or k % info.num_workers == info.id:
            yield url


def _show(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` that prints where a warning points, on one line."""
    print(f"{filename}:{lineno}: {category.__name__}", file=sys.stderr, flush=True)


def _ids(wrapper: Any, workers: int) -> collections.Counter[str]:
    loader = DataLoader(wrapper, batch_size=None, num_workers=workers,
                        multiprocessing_context="fork" if workers else None)  # fmt: skip
    return collections.Counter(sample["id"] for sample in loader)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # webdataset's
@pytest.mark.filterwarnings("ignore::ResourceWarning")  # tar files, left to the collector
class TestCheckWorkers:
    @pytest.mark.parametrize("kind", [0, 1, 2])
    def test_a_webdataset_not_split_by_worker_read_by_workers_warns(
        self, tmp_path: Path, kind: int
    ) -> None:
        stream = _pipelines(_shards(tmp_path), split=False)[kind]
        wrapper = RandomAugmentWrapper(stream, _keep, seed=0)
        expected = (
            f"StreamingAugment reads {type(stream).__name__}, a webdataset pipeline over a "
            "shard list with no split_by_worker stage, in 2 DataLoader workers: each worker "
            "reads every shard, so every sample comes 2 times an epoch"
        )
        with warnings.catch_warnings():  # the forked workers' filter: raised, and handed back
            warnings.simplefilter("error", RankaugWarning)
            with pytest.raises(RankaugWarning, match=re.escape(expected)):
                _ids(wrapper, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankaugWarning)
            assert set(_ids(wrapper, 2).values()) == {2}  # what it warns of: each twice

    def test_a_forked_worker_names_the_loop_over_the_loader(
        self, tmp_path: Path, capfd: pytest.CaptureFixture[str]
    ) -> None:
        # it named rankaug/stream/base.py (the pass reading the stream), though a forked
        # worker's calls go on with the main process's loop that started it
        stream = _pipelines(_shards(tmp_path), split=False)[0]
        wrapper = RandomAugmentWrapper(stream, _keep, seed=0)
        with warnings.catch_warnings():  # the workers' filter and printer: forked with them
            warnings.simplefilter("always", RankaugWarning)
            warnings.showwarning = _show
            _ids(wrapper, 2)
        loop = _ids.__code__.co_firstlineno + 3  # its line iterating the loader
        named = [line for line in capfd.readouterr().err.splitlines() if "RankaugWarning" in line]
        assert named == [f"{__file__}:{loop}: RankaugWarning"]

    @pytest.mark.parametrize("persistent", [False, True])
    def test_each_wrapper_warns_once_for_all_its_workers_and_epochs(
        self, tmp_path: Path, capfd: pytest.CaptureFixture[str], persistent: bool
    ) -> None:
        # before: each epoch's workers warned again (new processes where they are not
        # persistent, with a fresh registry of warnings given), and worker 0 of every pass
        # where the filter shows each warning
        urls = _shards(tmp_path)
        wrappers = [RandomAugmentWrapper(_pipelines(urls, split=False)[0], _keep, seed=0)
                    for _ in range(2)]  # fmt: skip
        loaders = [DataLoader(wrapper, batch_size=None, num_workers=2,
                              persistent_workers=persistent, multiprocessing_context="fork")
                   for wrapper in wrappers]  # fmt: skip
        with warnings.catch_warnings():  # the workers' filter and printer: forked with them
            warnings.simplefilter("always", RankaugWarning)
            warnings.showwarning = _show
            read = [len(list(loader)) for loader in (*loaders, *loaders, loaders[0])]
        assert read == [16] * 5  # every sample twice, in each of the 5 epochs
        told = [line for line in capfd.readouterr().err.splitlines() if "RankaugWarning" in line]
        assert len(told) == 2  # once by each wrapper, at its first epoch

    @pytest.mark.parametrize("kind", [0, 1, 2])
    def test_a_webdataset_split_by_worker_is_not_warned(self, tmp_path: Path, kind: int) -> None:
        wrapper = RandomAugmentWrapper(_pipelines(_shards(tmp_path), split=True)[kind], _keep,
                                       seed=0)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            assert _ids(wrapper, 2) == {f"s{k}": 1 for k in range(8)}

    def test_one_reader_is_not_warned(self, tmp_path: Path) -> None:
        wrapper = RandomAugmentWrapper(_pipelines(_shards(tmp_path), split=False)[1], _keep,
                                       seed=0)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            assert _ids(wrapper, 0) == _ids(wrapper, 1) == {f"s{k}": 1 for k in range(8)}

    @pytest.mark.parametrize("shards", [1, 3])
    def test_a_hugging_face_stream_splits_itself(self, shards: int) -> None:
        table = {"image": [np.full((4, 4), k, np.uint8) for k in range(8)],
                 "id": [f"s{k}" for k in range(8)]}  # fmt: skip
        stream = datasets.Dataset.from_dict(table).to_iterable_dataset(num_shards=shards)
        wrapper = RandomAugmentWrapper(stream.with_format("numpy"), _keep, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RankaugWarning)
            assert _ids(wrapper, 2) == {f"s{k}": 1 for k in range(8)}  # 1 shard: 1 worker


class TestWorkerUnsplit:
    def test_what_it_tells(self, tmp_path: Path) -> None:
        wds = pytest.importorskip("webdataset")
        urls = _shards(tmp_path)
        assert [worker_unsplit(s) for s in _pipelines(urls, split=False)] == [True] * 3
        assert [worker_unsplit(s) for s in _pipelines(urls, split=True)] == [False] * 3
        resampled = wds.DataPipeline(wds.ResampledShards(urls), wds.tarfile_to_samples())
        assert not worker_unsplit(resampled)  # each worker draws its own shards
        assert not worker_unsplit(wds.DataPipeline(lambda: iter(range(4))))  # a source of yours
        assert not worker_unsplit(Shards(4))
