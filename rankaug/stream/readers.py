"""Who reads a streaming wrapper: accelerate dealing a rank split again, workers reading whole.

``accelerator.prepare(DataLoader(stream))`` deals an ``IterableDataset``'s samples among
the processes itself: with ``dispatch_batches`` (its default for one) the main process
alone reads the loader and hands each process a slice of its batches; without, each
process reads the whole stream through an ``IterableDatasetShard`` and keeps a slice. Over
a stream that already splits by rank (Hugging Face's ``split_dataset_by_node``,
webdataset's ``nodesplitter=split_by_node``, litdata, mosaicml-streaming) each rank's
share is dealt again: without a word, half the samples (on 2 processes) are never read,
or never kept. A pass read by either warns (:func:`check_reader`); accelerate and the
libraries are recognised by type name, never imported here. The dispatcher reads in the
main process: its DataLoader's workers, forked, hold its frame among their callers, and
spawned ones do not, so a wrapper pickled for them looks there (:func:`check_pickled`).

Likewise each DataLoader worker reads the stream, which must split itself by worker: a
webdataset pipeline over a shard list without ``split_by_worker`` (``WebDataset(urls,
workersplitter=None)``, a ``DataPipeline`` without it) hands every worker every shard, and
each sample comes once per worker in an epoch (:func:`check_workers`). Hugging Face's
``IterableDataset``, litdata and mosaicml-streaming split by worker themselves; a plain
``IterableDataset`` cannot be told.

Each warning is given once by a wrapper, for all its workers and epochs: a bit of a word
in shared memory (:class:`Told`) says it was, where each epoch's workers, when not
persistent, are new processes that would warn again; it is read and set under a lock of
the machine's, so that two workers never both find it unset.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from types import FrameType
from typing import Any, Final

try:
    import fcntl
except ImportError:  # Windows: this process's threads only
    fcntl = None  # type: ignore[assignment]

import torch

from rankaug.context import current_worker
from rankaug.errors import RankaugWarning
from rankaug.shared_epoch import SharedEpoch, shared_slot

__all__ = ["Told", "check_pickled", "check_reader", "check_workers", "rank_split",
           "worker_unsplit"]  # fmt: skip

#: accelerate's classes that deal an IterableDataset's samples among the processes.
_READERS: Final = frozenset({"IterableDatasetShard", "DataLoaderDispatcher"})
#: The packages between a loop over a DataLoader and a worker's pass: passed over.
_LOADING: Final = frozenset(
    {"rankaug", "torch", "multiprocessing", "webdataset", "accelerate", "torchdata",
     "lightning", "pytorch_lightning", "lightning_fabric"}
)  # fmt: skip


class Told(SharedEpoch):
    """The warnings a wrapper gave once for all its DataLoader workers and epochs.

    One bit per warning (:data:`ONCE`) of a word in shared memory (a
    :class:`~rankaug.shared_epoch.SharedEpoch`): forked workers inherit it, spawned ones
    receive it with the wrapper, and the workers of a later epoch see what those of an
    earlier one set. A copy by ``pickle`` or ``copy.deepcopy`` starts with none told.

    Its lock file (:class:`_Exclusive`) is named where it is made and travels with it:
    every process that shares its word locks that one file, whatever its own ``TMPDIR``
    (a worker's may differ from the process that made the wrapper).

    >>> told = Told()
    >>> told.first("unsplit"), told.first("unsplit")
    (True, False)
    """

    __slots__ = ("_lock_file",)

    def __init__(self, value: int = 0) -> None:
        super().__init__(value)
        self._lock_file = _lock_file()

    ONCE: Final = {"unsplit": 1, "dealt": 2}
    """The warnings given once, by name: their bits."""

    def first(self, kind: str) -> bool:
        """Whether ``kind`` was not given yet; it is counted as given from now on.

        Read and set under the lock of :func:`_exclusive`: two workers (of two loaders)
        that read the word at once would both have found it unset, and both warned.
        """
        bit = self.ONCE[kind]
        if self.get() & bit:  # told: the lock is for the first time only
            return False
        with _exclusive(self._lock_file):
            given = self.get()
            if given & bit:
                return False
            self.set(given | bit)
        return True

    def __reduce__(self) -> tuple[Any, ...]:
        self.claim()  # a rank's spawned workers share its own word
        return (_told, (self._block, self._slot, self._lock_file))


def _lock_file() -> str | None:
    """This user's lock file in this process's temporary folder (``None``: no ``flock``)."""
    name = "rankaug-told-{}.lock"
    return None if fcntl is None else os.path.join(tempfile.gettempdir(), name.format(os.getuid()))


class _Exclusive:
    """This machine's lock for the told words: one process, and one thread, at a time.

    ``flock`` on a lock file of this user's (a :class:`Told`'s, ``rankaug-told-UID.lock``
    in the temporary folder of the process that made it, empty, left there), opened
    once per process: a forked child's inherited descriptor would share its parent's
    lock. A file of that name that another user owns is not locked (they could hold it
    for ever). Without ``flock`` (no ``fcntl``, a folder that cannot be written, another
    user's file), the threads of this process alone are kept apart.
    """

    def __init__(self) -> None:
        self._threads = threading.Lock()
        self._files: tuple[int, dict[str, int | None]] = (-1, {})  # (pid, descriptors)
        if hasattr(os, "register_at_fork"):  # not on Windows
            os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._threads = threading.Lock()  # another thread may have held it at the fork

    def _descriptor(self, name: str) -> int | None:
        pid, files = self._files
        if pid != os.getpid():
            files = {}
            self._files = (os.getpid(), files)
        if name not in files:
            flags = os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            try:
                fd: int | None = os.open(name, flags, 0o600)
            except OSError:
                fd = None
            if fd is not None and os.fstat(fd).st_uid != os.getuid():
                os.close(fd)
                fd = None
            files[name] = fd
        return files[name]

    @contextlib.contextmanager
    def __call__(self, name: str | None) -> Iterator[None]:
        with self._threads:
            fd = None if name is None or fcntl is None else self._descriptor(name)
            if fd is None:
                yield
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)


_exclusive: Final = _Exclusive()


def _told(block: torch.Tensor, slot: int, lock_file: str | None) -> Told:
    """Unpickle :class:`Told`: the same word when the block arrived shared, else a new one.

    A wrapper's spawned workers receive the block shared, and lock its maker's file. A
    plain ``pickle`` (a wrapper loaded in another process: a checkpoint, a job sent
    elsewhere) or ``copy.deepcopy`` does not, and tells afresh what it tells: what the
    original told was not seen there.
    """
    if block.is_shared():  # type: ignore[no-untyped-call]
        told = shared_slot(Told, block, slot)
        told._lock_file = lock_file
        return told
    return Told()


def rank_split(dataset: object) -> str | None:
    """How ``dataset`` splits itself by rank, where it can be told; else ``None``.

    >>> rank_split([1, 2]) is None
    True
    """
    distributed = getattr(dataset, "_distributed", None)
    if isinstance(getattr(distributed, "world_size", None), int) and distributed.world_size > 1:  # type: ignore[union-attr]
        return "Hugging Face's split_dataset_by_node"
    root = type(dataset).__module__.partition(".")[0]
    if root in ("litdata", "streaming"):
        return f"{root}'s {type(dataset).__name__}, which reads the rank's share"
    stages = getattr(dataset, "pipeline", None)
    if isinstance(stages, list) and any(
        getattr(stage, "__name__", None) == "split_by_node" for stage in stages
    ):
        return "webdataset's nodesplitter=split_by_node"
    return None


def worker_unsplit(dataset: object) -> bool:
    """Whether ``dataset`` is seen to hand every DataLoader worker all of its samples.

    So is a webdataset pipeline (its ``pipeline`` of stages, nested pipelines flattened)
    that starts from a ``SimpleShardList`` and has no ``split_by_worker`` stage, all its
    stages being webdataset's own: a stage of another module (a ``workersplitter`` of
    yours) may split, and is trusted to.

    >>> worker_unsplit([1, 2])
    False
    """
    stages = getattr(dataset, "pipeline", None)
    if not isinstance(stages, list) or not stages:
        return False
    while isinstance(getattr(stages[0], "pipeline", None), list):  # a pipeline in a pipeline
        stages = [*stages[0].pipeline, *stages[1:]]
    if type(stages[0]).__name__ != "SimpleShardList":
        return False  # ResampledShards draws each worker's own shards; a source of yours
    return all(
        str(getattr(stage, "__module__", "")).partition(".")[0] == "webdataset"
        and getattr(stage, "__name__", None) != "split_by_worker"
        for stage in stages
    )


def check_workers(wrapper: Any, told: Told, level: int = 2) -> None:
    """Warn if DataLoader workers each read the whole of a stream seen not to split.

    Called by a pass as it starts reading, in worker 0 of two or more (the others read
    alike): :func:`worker_unsplit`. Once for ``wrapper``, whatever its workers and
    epochs (``told``). A forked worker's calls go on with the main process's that
    started it: the line named is the loop over the DataLoader there (the first outside
    rankaug, PyTorch, multiprocessing and the loaders of webdataset, accelerate and
    Lightning); a spawned worker's hold none, and ``level`` is named.

    Args:
        wrapper: The streaming wrapper whose pass starts.
        told: The warnings ``wrapper`` gave once.
        level: The ``stacklevel`` of the pass reading the stream, named where no loop is.

    Warns:
        RankaugWarning: If ``wrapper``'s stream is a webdataset pipeline over a shard list
            without ``split_by_worker``, read by 2 DataLoader workers or more, the first
            time.
    """
    worker_id, workers = current_worker()
    if worker_id != 0 or workers < 2 or not worker_unsplit(wrapper.dataset):
        return
    if not told.first("unsplit"):
        return
    warnings.warn(
        f"{type(wrapper).__name__} reads {type(wrapper.dataset).__name__}, a webdataset "
        f"pipeline over a shard list with no split_by_worker stage, in {workers} DataLoader "
        f"workers: each worker reads every shard, so every sample comes {workers} times an "
        "epoch. Split the shards by worker: leave WebDataset's workersplitter at its "
        "default (wds.split_by_worker), or put wds.split_by_worker after the shard list "
        "(wds.DataPipeline(wds.SimpleShardList(urls), wds.split_by_worker, ...)); or read "
        "it with num_workers=0",
        RankaugWarning,
        stacklevel=_loop_level(sys._getframe(level - 1), level),
    )


def _loop_level(frame: FrameType | None, level: int) -> int:
    """The ``stacklevel`` of the loop over the DataLoader above ``frame`` (at ``level``)."""
    up = 0
    while frame is not None:
        root = str(frame.f_globals.get("__name__", "")).partition(".")[0]
        if root not in _LOADING and not frame.f_code.co_filename.startswith("<"):
            return level + up  # not spawn's "-c" bootstrap either
        frame, up = frame.f_back, up + 1
    return level


def _reader(frame: FrameType | None) -> tuple[str, int, int] | None:
    """The accelerate reader among the callers from ``frame`` up, if any.

    Its name, its process count and how many calls up from ``frame`` it is.

    The whole stack is looked at: in a forked DataLoader worker it goes on with the main
    process's calls that started the worker (the dispatcher's ``__iter__`` among them).
    """
    up = 0
    while frame is not None:
        owner: Any = frame.f_locals.get("self")
        kind = type(owner)
        if kind.__name__ in _READERS and kind.__module__.partition(".")[0] == "accelerate":
            count: Any = getattr(owner, "num_processes", None)
            if count is None:  # the dispatcher's is its state's
                count = getattr(getattr(owner, "state", None), "num_processes", 1)
            return kind.__name__, int(count), up
        frame, up = frame.f_back, up + 1
    return None


def check_reader(wrapper: Any, told: Told) -> None:
    """Warn if accelerate deals again a stream split by rank, or workers each read it whole.

    Called by a pass as it starts reading: accelerate's reader is among its callers. The
    latter is :func:`check_workers`'s.

    Args:
        wrapper: The streaming wrapper whose pass starts.
        told: The warnings ``wrapper`` gave once.

    Warns:
        RankaugWarning: If ``wrapper``'s stream splits by rank and accelerate's
            ``IterableDatasetShard`` or ``DataLoaderDispatcher`` of more than one process
            reads it, the first time; or as :func:`check_workers` says.
    """
    if current_worker()[0] == 0:  # one worker of a DataLoader tells
        _warn_reader(wrapper, sys._getframe(1), told)
        check_workers(wrapper, told, level=3)


def check_pickled(wrapper: Any, told: Told) -> None:
    """:func:`check_reader`, for a wrapper pickled in the main process (for spawned workers).

    A spawned worker's calls start afresh, without the dispatcher that started it: the
    main process, pickling the wrapper for it, is where the dispatcher is seen.
    """
    if current_worker()[1] == 0:
        _warn_reader(wrapper, sys._getframe(1), told, only="DataLoaderDispatcher")


def _warn_reader(wrapper: Any, frame: FrameType, told: Told, only: str | None = None) -> None:
    """Warn if an accelerate reader above ``frame`` deals ``wrapper``'s split stream again.

    Once for ``wrapper`` (``told``).
    """
    how = rank_split(wrapper.dataset)
    found = None if how is None else _reader(frame)
    if found is None or found[1] < 2 or only not in (None, found[0]):
        return
    if not told.first("dealt"):
        return
    reader, count, up = found
    lost = (
        "the main process alone reads its rank's share, and the other ranks' shares are never read"
        if reader == "DataLoaderDispatcher"
        else f"each rank keeps 1/{count} of its own share, and the rest is never trained on"
    )
    warnings.warn(
        f"{type(wrapper).__name__} reads {type(wrapper.dataset).__name__}, which splits by "
        f"rank itself ({how}), and accelerate's {reader} deals its samples among the "
        f"{count} processes again: {lost}. Either give accelerator.prepare a stream that "
        "every rank reads whole (and DataLoaderConfiguration(dispatch_batches=False): each "
        "process keeps its batches), or keep the stream's split and leave the DataLoader "
        "out of accelerator.prepare (move the batches to accelerator.device yourself)",
        RankaugWarning,
        # frame is at 3; the dispatcher's caller is the loop over the loader (the shard's
        # is the DataLoader's fetcher: frame, the pass reading the stream, is named)
        stacklevel=4 + up if reader == "DataLoaderDispatcher" else 3,
    )
