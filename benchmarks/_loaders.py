"""DataLoader machinery for the scaling, epoch and end-to-end sections.

Chunked sampling so persistent workers sit idle between timed chunks, the three ways a
batch leaves a worker (tensors in fresh shared memory, tensors in shared buffers that
``rankaug.collate.BatchCollator`` recycles, numpy samples pickled), the CPU time a
loader's processes got (``/proc``), and in-process measurements of what moving a batch
costs. Import it after pinning thread counts.

This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import itertools
import os
import pickle
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Sampler

from benchmarks._timing import summarize
from rankaug import collate_detection
from rankaug.collate import BatchCollator

__all__ = [
    "COLLATES",
    "Chunk",
    "ChunkSampler",
    "CpuChunk",
    "Loader",
    "PassChunks",
    "collate_numpy",
    "cpu_ns",
    "make_loaders",
    "share_bound",
    "time_chunk",
    "time_cpu_chunk",
    "transport_costs",
]


class PassChunks(Sampler[Any]):
    """Endless passes over one of several samplers, ``count`` indices per ``iter()``.

    Like :class:`ChunkSampler`, but the indices come from other samplers, unchanged (an
    :class:`~rankaug.EpochIndex` stays one). ``use`` names the sampler the next chunk
    comes from; each sampler's pass continues where its last chunk stopped, and a new
    pass (``iter(sampler)``) starts when one ends. One DataLoader, and so one worker
    process, then serves several contenders in turn.

    Args:
        samplers: Name -> sampler (or any iterable of indices); ``use`` starts at the
            first.

    >>> chunks = PassChunks({"a": [10, 11, 12], "b": [7]})
    >>> chunks.count = 2
    >>> list(chunks), list(chunks)
    ([10, 11], [12, 10])
    >>> chunks.use = "b"
    >>> list(chunks)
    [7, 7]
    >>> chunks.use = "a"
    >>> list(chunks)
    [11, 12]
    """

    def __init__(self, samplers: Mapping[str, Iterable[Any]]) -> None:
        self.samplers = dict(samplers)
        self.use = next(iter(self.samplers))
        self.count = 0
        self._passes: dict[str, Iterator[Any]] = {}

    def __iter__(self) -> Iterator[Any]:
        name, remaining = self.use, self.count
        while remaining > 0:
            running = self._passes.get(name)
            fresh = running is None
            if running is None:
                running = self._passes[name] = iter(self.samplers[name])
            taken = 0
            for value in itertools.islice(running, remaining):
                taken += 1
                yield value
            if taken < remaining:  # the pass has ended
                del self._passes[name]
                if fresh and taken == 0:
                    raise ValueError(f"PassChunks: sampler {name!r} gives no index")
            remaining -= taken

    def __len__(self) -> int:
        return self.count


class ChunkSampler(PassChunks):
    """Indices ``0, 1, 2, ...`` modulo ``n`` (or ``order[k % n]``); ``count`` per ``iter()``.

    Set ``count`` before each ``iter(loader)``; every chunk continues where the last
    stopped. A finite chunk lets a persistent loader's workers run out of work, so that
    they sit idle while another loader is timed.

    Args:
        n: The dataset's length.
        order: The indices in the order to give them (a permutation, say), every pass
            the same; ``None`` for ``0 .. n - 1``.

    >>> chunks = ChunkSampler(3, order=[2, 0, 1])
    >>> chunks.count = 4
    >>> list(chunks), list(chunks)
    ([2, 0, 1, 2], [0, 1, 2, 0])
    """

    def __init__(self, n: int, order: Sequence[int] | None = None) -> None:
        super().__init__({"indices": range(n) if order is None else list(order)})


def collate_numpy(batch: list[Any]) -> list[Any]:
    """Keep the numpy samples as they are: a worker pickles them through its pipe."""
    return batch


@dataclass
class Loader:
    """A DataLoader with its chunk sampler and worker count."""

    loader: DataLoader[Any]
    sampler: PassChunks
    workers: int


COLLATES: dict[str, Callable[[], Callable[[list[Any]], Any]]] = {
    "tensor": lambda: collate_detection,  # images in fresh shared memory, one handle
    "recycled": BatchCollator,
    "numpy": lambda: collate_numpy,
}
"""Transport name -> a factory of its collate function."""


def make_loaders(
    dataset: Any, batch_size: int, transports: Sequence[str], workers_counts: Sequence[int]
) -> dict[str, Loader]:
    """``"scaling/{transport}_{workers}w"`` -> a DataLoader with persistent workers.

    ``transports`` are keys of :data:`COLLATES`.
    """
    loaders: dict[str, Loader] = {}
    for transport in transports:
        collate = COLLATES[transport]()
        for workers in workers_counts:
            sampler = ChunkSampler(len(dataset))
            loader: DataLoader[Any] = DataLoader(
                dataset,
                batch_size=batch_size,
                sampler=sampler,
                num_workers=workers,
                collate_fn=collate,
                persistent_workers=workers > 0,
                prefetch_factor=2 if workers else None,
            )
            loaders[f"scaling/{transport}_{workers}w"] = Loader(loader, sampler, workers)
    return loaders


def cpu_ns(pids: Sequence[int]) -> tuple[int, int] | None:
    """``(running_ns, waiting_ns)`` of processes so far, ``None`` without ``/proc``.

    Nanoseconds running, and runnable but waiting for a CPU (what other work on the
    machine took from them), summed over every thread (``/proc/PID/task/*/schedstat``).
    """
    running = waiting = 0
    found = False
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as stats:
                    fields = stats.read().split()
            except OSError:  # the thread has just exited
                continue
            running += int(fields[0])
            waiting += int(fields[1])
            found = True
    return (running, waiting) if found else None


@dataclass(frozen=True)
class Chunk:
    """One timed chunk of a loader.

    Attributes:
        rate: Samples per second.
        cores: CPU time the main process and the workers got, per second of wall time.
        waiting: Time their threads were runnable but waited for a CPU, per second.
        main: The main process's share of ``cores``.
    """

    rate: float
    cores: float | None
    waiting: float | None
    main: float | None = None


def time_chunk(entry: Loader, batches: int, batch_size: int) -> Chunk:
    """Samples per second of one loader in steady state, over ``batches`` batches.

    A chunk of ``skip + batches`` batches is started on a fresh iterator (the persistent
    workers stay up). The first ``skip`` batches (one per worker) are not timed: they
    include the pipeline filling up. The clock then runs from the arrival of one batch to
    the arrival of the batch ``batches`` later; with ``batches`` a multiple of the worker
    count both come from the same worker, busy the whole time, so the span is a whole
    number of its steady-state periods. The chunk is then drained, leaving the workers
    idle while the other loaders are timed. The CPU time of the main process and the
    workers is read around the timed span (:func:`cpu_ns`).
    """
    skip = max(entry.workers, 1)
    entry.sampler.count = (skip + batches) * batch_size
    iterator = iter(entry.loader)
    # A private attribute of the multi-process iterator; without it, only this process.
    workers = getattr(iterator, "_workers", [])
    pids = [os.getpid(), *(int(process.pid) for process in workers)]
    for _ in range(skip):
        next(iterator)
    before, main_before = cpu_ns(pids), cpu_ns(pids[:1])
    t0 = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    seconds = time.perf_counter() - t0
    after, main_after = cpu_ns(pids), cpu_ns(pids[:1])
    for _ in iterator:  # nothing should be left
        pass
    cores = waiting = main = None
    if before is not None and after is not None:
        cores = (after[0] - before[0]) / 1e9 / seconds
        waiting = (after[1] - before[1]) / 1e9 / seconds
    if main_before is not None and main_after is not None:
        main = (main_after[0] - main_before[0]) / 1e9 / seconds
    return Chunk(batches * batch_size / seconds, cores, waiting, main)


@dataclass(frozen=True)
class CpuChunk:
    """One chunk of a loader, whole: wall and CPU seconds per sample.

    Attributes:
        wall: Wall time per sample, the chunk's start and end included.
        cpu: CPU time per sample of the main process (all its threads) and the workers.
        precise: Whether the workers' CPU time was read (``/proc``); without it, ``cpu``
            counts the main process only.
    """

    wall: float
    cpu: float
    precise: bool


def time_cpu_chunk(entry: Loader, batches: int, batch_size: int, settle: float = 0.002) -> CpuChunk:
    """CPU time per sample of one whole chunk of ``batches`` batches, for small costs.

    Unlike :func:`time_chunk`, the CPU time is read when the workers are idle, before
    the chunk starts and ``settle`` seconds after its last batch arrived: ``/proc``
    brings a running thread's CPU time up to date only every scheduler tick (4 ms
    here), an error that would swamp a microsecond per sample over a chunk of tens of
    milliseconds. The main process's own CPU time is ``time.process_time``, exact. The
    chunk's start (waking persistent workers) and its filling up are included: the
    same for every contender of one loader. The loader's workers must have been started
    (one chunk before).
    """
    running = getattr(entry.loader, "_iterator", None)  # the persistent workers, if any
    pids = [int(process.pid) for process in getattr(running, "_workers", [])]
    entry.sampler.count = batches * batch_size
    before = cpu_ns(pids) if pids else (0, 0)
    main = time.process_time()
    t0 = time.perf_counter()
    for _ in entry.loader:
        pass
    wall = time.perf_counter() - t0
    main = time.process_time() - main
    time.sleep(settle)
    after = cpu_ns(pids) if pids else (0, 0)
    precise = before is not None and after is not None
    workers = (after[0] - before[0]) / 1e9 if before is not None and after is not None else 0.0
    samples = batches * batch_size
    return CpuChunk(wall / samples, (main + workers) / samples, precise)


def transport_costs(dataset: Any, batch_size: int, repeats: int) -> dict[str, float]:
    """What moving one batch out of a worker costs, measured in this process.

    Returns:
        Medians: ``batch_mb`` (pickled size of a numpy batch), ``dumps_ms``
        (``ForkingPickler.dumps``: the worker's copy of numpy samples), ``loads_ms``
        (``pickle.loads``: the main process's; the pipe between them is not in it),
        ``pickle_ms`` (both), ``shm_fresh_ms`` (stacking the images into
        newly allocated shared memory, as ``default_collate`` does in a worker, page
        faults included), ``shm_reused_ms`` (stacking them into a shared buffer
        allocated once) and ``make_ms`` (making the batch's samples).
    """
    batch = [dataset[i] for i in range(batch_size)]
    images = [torch.from_numpy(np.ascontiguousarray(sample["image"])) for sample in batch]
    shape = (len(images), *images[0].shape)
    reused = torch.empty(shape, dtype=images[0].dtype).share_memory_()  # type: ignore[no-untyped-call]
    figures = ("dumps_ms", "loads_ms", "pickle_ms", "shm_fresh_ms", "shm_reused_ms", "make_ms")
    timings: dict[str, list[float]] = {name: [] for name in figures}
    size = 0
    for r in range(max(repeats, 9)):
        t0 = time.perf_counter()
        data = ForkingPickler.dumps(batch)
        half = time.perf_counter()
        pickle.loads(data)
        t1 = time.perf_counter()
        fresh = torch.empty(shape, dtype=images[0].dtype).share_memory_()  # type: ignore[no-untyped-call]
        torch.stack(images, out=fresh)
        t2 = time.perf_counter()
        torch.stack(images, out=reused)
        t3 = time.perf_counter()
        for i in range(batch_size):
            dataset[(r * batch_size + i) % len(dataset)]
        t4 = time.perf_counter()
        del fresh
        size = len(data)
        spans = (half - t0, t1 - half, t1 - t0, t2 - t1, t3 - t2, t4 - t3)
        for key, seconds in zip(timings, spans, strict=True):
            timings[key].append(seconds * 1000)
    return {"batch_mb": size / 1e6, **{k: summarize(v).median for k, v in timings.items()}}


def share_bound(chunk: Chunk, workers: int, cpus: int) -> float | None:
    """The most samples per second ``workers`` can reach on ``cpus`` idle cores.

    From a chunk of one worker: each sample costs the workers ``(cores - main) / rate``
    seconds of CPU, in parallel over the workers, and the main process ``main / rate``,
    alone; all of it shares ``cpus``. The rate is bound by the slowest of the three. It
    takes each CPU cost to stay as measured with one worker (no contention), so it is
    what the transport's split of the work allows, not a prediction.

    Args:
        chunk: A chunk of a loader with one worker.
        workers: The workers to bound (at least 1).
        cpus: The cores they share.

    Returns:
        Samples per second, or ``None`` when the chunk's CPU times were not read.

    >>> one = Chunk(rate=100.0, cores=1.25, waiting=0.0, main=0.25)  # 10 + 2.5 ms a sample
    >>> [round(share_bound(one, w, 2)) for w in (1, 2, 4)]  # the worker, cores, main alone
    [100, 160, 160]
    >>> round(share_bound(one, 8, 16))  # many cores: the main process bounds it
    400
    """
    if chunk.cores is None or chunk.main is None or chunk.rate <= 0:
        return None
    worker, main = (chunk.cores - chunk.main) / chunk.rate, chunk.main / chunk.rate
    return 1.0 / max(worker / workers, main, (worker + main) / cpus)
