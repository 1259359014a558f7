"""Section 5, the epoch carried by the index: what ``EpochSampler`` and ``EpochIndex`` cost.

Each pair runs the same work with and without the epoch in the index, side by side in
the same rounds; the difference of the medians is the cost of carrying it:

* iterating ``EpochSampler(DistributedSampler(ds))`` against the bare
  ``DistributedSampler`` (the sampler builds one :class:`~rankaug.EpochIndex` per index);
* ``RandomAugmentWrapper(ds, identity)[EpochIndex(i, e)]`` against ``[i]`` (the wrapper
  reads the epoch from the index instead of its shared ``set_epoch`` value). The plain
  side is a ``set_epoch`` program's, which never makes an ``EpochIndex``: there a plain
  index skips the rule that walks up the stack for a DataLoader fetch's epoch, which a
  process that made one pays for every plain index (and, with a pass of the carried
  sampler running beside it, warns that the epoch was lost). So its operations run with
  rankaug's registry of ``EpochIndex`` kinds emptied, and put back after
  (:func:`as_if_never_carried`), as do the loaders' plain batches (:class:`_Fetched`);
* a DataLoader (``--batch-size``, 0 and 1 worker) over that cheap wrapper with
  ``sampler=EpochSampler(DistributedSampler(ds))`` against the plain sampler: the cost
  end to end, with a worker including the pickling of each index list. Batches stay
  lists of the samples (no tensor in shared memory, whose cost per batch would bury a
  microsecond per index);
* beside them, what pickling one index list for a worker costs, measured in-process.

The figures are CPU time, not wall time: a difference of a fraction of a microsecond
would drown in what other work on a shared machine takes from the contenders. The
sampler and wrapper rows and the pickling line read ``time.thread_time``; the loader
rows add the CPU time of the main process (``time.process_time``: all its threads, the
index queue's feeder thread pickles there) and of its worker (``/proc``, read while it
is idle), over whole chunks (:func:`~benchmarks._loaders.time_cpu_chunk`). The wall
time per index is in each loader row's note (and ``extra``).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import pickle
import time
from collections.abc import Iterable, Iterator, Sequence
from multiprocessing.reduction import ForkingPickler
from typing import Any

from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

from benchmarks._bench import Bench, identity
from benchmarks._catalogue import EPOCH_WORKERS, section
from benchmarks._loaders import Loader, PassChunks, collate_numpy, time_chunk, time_cpu_chunk
from benchmarks._report import print_rows
from benchmarks._timing import Op, interleave, summarize
from rankaug import EpochIndex, EpochSampler, RandomAugmentWrapper
from rankaug.epoch import _CLASSES, EpochBatch

__all__ = [
    "LENGTH",
    "SECTION",
    "as_if_never_carried",
    "index_contenders",
    "loaders",
    "measure",
    "pickle_costs",
    "prepare",
]

SECTION = section("epoch")
LENGTH = 4096
"""Length of the section's dataset (a list of ints)."""
EPOCH = 1
"""The epoch every index carries and every plain wrapper is set to."""


def _distributed(dataset: Any, seed: int) -> DistributedSampler[int]:
    """A shuffling ``DistributedSampler`` of one replica (rank 0) over ``dataset``."""
    return DistributedSampler(dataset, num_replicas=1, rank=0, seed=seed)


def _iterating(sampler: Iterable[Any]) -> Op:
    """``op(k)`` takes the next ``k`` indices of endless passes over ``sampler``."""
    state = [iter(sampler)]

    def op(k: int) -> None:
        while k > 0:
            taken = len(list(itertools.islice(state[0], k)))
            k -= taken
            if k > 0:
                state[0] = iter(sampler)

    return op


def _indexing(dataset: Any, indices: list[Any]) -> Op:
    """``op(k)`` reads ``dataset[indices[j]]`` for the next ``k`` positions, going round."""
    n = len(indices)
    position = [0]

    def op(k: int) -> None:
        start = position[0]
        for j in range(start, start + k):
            dataset[indices[j % n]]
        position[0] = start + k

    return op


@contextlib.contextmanager
def as_if_never_carried(empty: bool = True) -> Iterator[None]:
    """The block runs as in a process that never made an ``EpochIndex``, then it is put back.

    rankaug keeps the ``EpochIndex`` kinds made in a process (``rankaug.epoch._CLASSES``);
    while there are none, a plain index skips the search for a DataLoader fetch's epoch
    (``rankaug.passes.pass_epoch``), as in a program that only calls ``set_epoch``.
    ``empty=False`` takes the same steps and leaves the kinds in place (for a carried
    batch, so that both kinds pay alike for the switch).
    """
    saved = dict(_CLASSES)
    if empty:
        _CLASSES.clear()
    try:
        yield
    finally:
        _CLASSES.update(saved)


class _Fetched(RandomAugmentWrapper[Any]):
    """The loaders' cheap wrapper: each batch fetched as its own kind of program would.

    A batch of plain ints is read :func:`as_if_never_carried`; a carried batch through
    the same steps with the kinds left in place. The DataLoader's fetch calls this once
    per batch, in the main process or in the worker that serves every kind.
    """

    def __getitems__(self, indices: Sequence[Any]) -> list[Any]:
        with as_if_never_carried(empty=type(indices[0]) is int):
            return [self[index] for index in indices]


def _never_carried(op: Op) -> Op:
    """``op``, each call run :func:`as_if_never_carried`."""

    def plain(k: int) -> None:
        with as_if_never_carried():
            op(k)

    return plain


def index_contenders(seed: int) -> dict[str, Op]:
    """The sampler and wrapper contenders: one operation is one index.

    Args:
        seed: The run's seed.

    Returns:
        Row id -> operation.
    """
    items = list(range(LENGTH))
    plain: DistributedSampler[int] = _distributed(items, seed)
    carried = EpochSampler(_distributed(items, seed))
    by_shared: RandomAugmentWrapper[Any] = RandomAugmentWrapper(items, identity, seed=seed, rank=0)
    by_shared.set_epoch(EPOCH)
    by_index: RandomAugmentWrapper[Any] = RandomAugmentWrapper(items, identity, seed=seed, rank=0)
    return {
        "epoch/sampler_plain": _iterating(plain),
        "epoch/sampler_carried": _iterating(carried),
        "epoch/wrapper_plain": _never_carried(_indexing(by_shared, list(range(LENGTH)))),
        "epoch/wrapper_carried": _indexing(by_index, [EpochIndex(i, EPOCH) for i in range(LENGTH)]),
    }


class BatchChunks(PassChunks):
    """:class:`~benchmarks._loaders.PassChunks` over batch samplers, ``count`` in indices.

    A chunk of ``count`` indices is the batches whose lengths add up to it (every batch
    has ``batch_size`` indices here), so the timing helpers, which set ``count`` in
    indices, serve batch samplers unchanged.
    """

    def __iter__(self) -> Iterator[Any]:
        name, remaining = self.use, self.count
        while remaining > 0:
            running = self._passes.get(name)
            if running is None:
                running = self._passes[name] = iter(self.samplers[name])
            batch = next(running, None)
            if batch is None:
                del self._passes[name]
                continue
            remaining -= len(batch)
            yield batch


def loaders(seed: int, batch_size: int) -> dict[int, tuple[Loader, PassChunks]]:
    """One DataLoader per worker count, serving the three contenders in turn.

    Each has its own cheap wrapper (a list of ints, the identity transform, set to
    :data:`EPOCH`; its batches fetched as each kind's program would, :class:`_Fetched`)
    and three batch samplers over it: ``BatchSampler(DistributedSampler)`` (plain ints),
    ``BatchSampler(EpochSampler(DistributedSampler))`` (lists of
    :class:`~rankaug.EpochIndex`: exactly what ``DataLoader(sampler=EpochSampler(...))``
    builds) and ``EpochSampler(BatchSampler(DistributedSampler))`` (one
    :class:`~rankaug.epoch.EpochBatch` per batch). Its :class:`BatchChunks` switches
    between them (``use``). The contenders thus run in the same worker process: two
    loaders' workers may land on the machine's cores differently, which costs CPU time of
    its own. Workers are persistent.
    """
    made: dict[int, tuple[Loader, PassChunks]] = {}
    for workers in EPOCH_WORKERS:
        dataset = _Fetched(list(range(LENGTH)), identity, seed=seed, rank=0)
        dataset.set_epoch(EPOCH)

        def batches(sampler: Any) -> BatchSampler:
            return BatchSampler(sampler, batch_size, drop_last=False)

        sampler = BatchChunks(
            {
                "plain": batches(_distributed(dataset, seed)),
                "carried": batches(EpochSampler(_distributed(dataset, seed), epoch=EPOCH)),
                "batches": EpochSampler(batches(_distributed(dataset, seed)), epoch=EPOCH),  # type: ignore[arg-type]
            }
        )
        loader: DataLoader[Any] = DataLoader(
            dataset,
            batch_sampler=sampler,
            num_workers=workers,
            collate_fn=collate_numpy,
            persistent_workers=workers > 0,
            prefetch_factor=2 if workers else None,
        )
        made[workers] = (Loader(loader, sampler, workers), sampler)
    return made


def pickle_costs(batch_size: int, rounds: int, batches: int = 500) -> dict[str, float]:
    """µs per index to pickle one index list for a worker and unpickle it there.

    ``ForkingPickler.dumps`` (what the DataLoader's index queue does) plus
    ``pickle.loads``, for a list of ``batch_size`` ints and of as many
    :class:`~rankaug.EpochIndex`, alternating in ``rounds`` rounds of ``batches`` lists.

    Returns:
        Medians: ``int_us``, ``carried_us`` and ``batch_us`` (an
        :class:`~rankaug.epoch.EpochBatch`), and ``extra_us`` and ``batch_extra_us``
        (their differences from ``int_us``).
    """
    lists = {
        "int_us": list(range(batch_size)),
        "carried_us": [EpochIndex(i, EPOCH) for i in range(batch_size)],
        "batch_us": EpochBatch(EpochIndex(i, EPOCH) for i in range(batch_size)),
    }
    spent: dict[str, list[float]] = {name: [] for name in lists}
    dumps, loads, clock = ForkingPickler.dumps, pickle.loads, time.thread_time
    for r in range(rounds):
        for name in list(lists) if r % 2 == 0 else list(lists)[::-1]:
            batch = lists[name]
            t0 = clock()
            for _ in range(batches):
                loads(dumps(batch))
            spent[name].append((clock() - t0) / batches / batch_size * 1e6)
    medians = {name: summarize(values).median for name, values in spent.items()}
    return {
        **medians,
        "extra_us": medians["carried_us"] - medians["int_us"],
        "batch_extra_us": medians["batch_us"] - medians["int_us"],
    }


def prepare(bench: Bench) -> None:
    """Nothing to build before the timing starts."""


def measure(bench: Bench, prepared: None) -> None:
    """Each pair side by side: sampler, wrapper, loaders; then the pickling line."""
    settings, report, progress = bench.settings, bench.report, bench.progress
    seconds = interleave(
        index_contenders(bench.seed),
        per_round=settings.epoch_indices,
        repeats=settings.repeats,
        warmup=settings.epoch_indices // 4,
        progress=progress,
        label="5 epoch",
        clock=time.thread_time,
    )
    bench.rows(SECTION, seconds)
    made = loaders(bench.seed, bench.batch_size)
    contenders = {
        f"epoch/loader_{kind}_{workers}w": (*made[workers], kind)
        for workers in EPOCH_WORKERS
        for kind in ("plain", "carried", "batches")
    }
    names = list(contenders)
    cpu: dict[str, list[float]] = {name: [] for name in names}
    wall: dict[str, list[float]] = {name: [] for name in names}
    try:
        for name in names:  # start the workers, warm up
            progress.set_label(f"5 epoch: warm-up {name}")
            entry, chunks, kind = contenders[name]
            chunks.use = kind
            time_chunk(entry, 4, bench.batch_size)
        for r in range(settings.repeats):
            for name in names if r % 2 == 0 else names[::-1]:
                progress.set_label(f"5 epoch: {name}")
                entry, chunks, kind = contenders[name]
                chunks.use = kind
                chunk = time_cpu_chunk(entry, settings.epoch_batches, bench.batch_size)
                wall[name].append(chunk.wall)
                cpu[name].append(chunk.cpu)
                if not chunk.precise:
                    report.diagnostics["epoch_loader_clock"] = "main process only (no /proc)"
                progress.advance()
    finally:
        contenders.clear()
        made.clear()  # shuts the persistent workers down
        gc.collect()
    bench.rows(SECTION, cpu)
    for name in names:
        row = report.rows[name]
        row.extra["wall_us"] = SECTION.values(wall[name])
        row.note = f"wall {summarize(row.extra['wall_us']).median:.2f} µs/index"
    report.diagnostics.setdefault("epoch_loader_clock", "main process and worker")
    costs = pickle_costs(bench.batch_size, max(settings.repeats, 9))
    report.diagnostics["epoch_pickle"] = {**costs, "batch": bench.batch_size}

    bench.out(
        f"{SECTION.number}. "
        "Epoch carried by the index: CPU µs per index, lower is better (CPU time of this "
        "process, and of its worker; other work on the machine does not count; "
        f"{settings.epoch_indices} indices per round; loaders: {settings.epoch_batches} "
        f"batches of {bench.batch_size} per round, kept as lists)"
    )
    pairs = {
        row_id.replace("_plain", f"_{kind}"): row_id
        for row_id in SECTION.rows
        if "_plain" in row_id
        for kind in ("carried", "batches")
        if row_id.replace("_plain", f"_{kind}") in SECTION.rows
    }
    print_rows(
        bench.out, report, list(SECTION.rows), baseline=pairs, label="minus plain", difference=True
    )
    bench.out(
        f"  pickling one list of {bench.batch_size} indices for a worker (ForkingPickler.dumps "
        f"+ pickle.loads, CPU): ints {costs['int_us']:.2f}, EpochIndex "
        f"{costs['carried_us']:.2f} µs per index ({costs['extra_us']:+.2f}), one EpochBatch "
        f"{costs['batch_us']:.2f} ({costs['batch_extra_us']:+.2f})"
    )
    bench.out()
