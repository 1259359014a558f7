"""``rankaug audit``: does a dataset repeat its random draws across ranks, workers, epochs?

Comparing the outputs of *different* indices cannot find the seeds' bug: different
images under the same random draws look different. The audit probes the randomness
itself. It launches ``ranks`` gloo processes, each seeded identically as a training
script does (``random``, numpy and ``torch.manual_seed``, see
:mod:`rankaug.cli.launch`), each with a DataLoader of ``workers`` workers, and makes
every rank and worker load the **same** index sequence:

* A probe of ``probe`` distinct indices, spread over the dataset, repeated ``repeats``
  times, gives each index several *positions* in the sequence (``0 1 2 3 0 1 2 3``).
* The sampler repeats every entry ``workers`` times (``0 0 1 1 2 2 ...``). A
  DataLoader with ``batch_size=1`` and ``in_order=True`` hands sample ``k`` to
  worker ``k % workers``, so every worker loads the whole sequence in order; the
  audit checks the worker id each sample reports.
* Where each epoch comes from (``epoch_from``): ``"sampler"`` (the default, the
  recommended training loop) wraps the sequence in :class:`rankaug.EpochSampler`, so
  every index carries the epoch of its pass and nobody calls ``set_epoch`` on the
  dataset; ``"set_epoch"`` hands out plain indices and calls ``dataset.set_epoch(epoch)``
  before every epoch when the dataset has it (the older loop). The sequence is the
  same in both.

Each sample is fingerprinted (a hash of all its arrays, tensors, images and numbers)
inside the worker. A second launch in fresh processes repeats everything. For one
stream (rank, worker) and epoch, the fingerprint of index ``i`` at position ``j``
is then compared:

(a) with other ranks and workers at the **same position**,
(b) with the same index at **other positions**, which is the baseline: how often the
    same index gives the same output when the random draws are *not* aligned,
(c) with the same position in **other epochs**,
(d) with the same position in the **second run**.

A comparison (a) or (c) is flagged when its identical outputs are significantly more
frequent than the baseline (b) for the same streams: a one-sided binomial test,
``P(X >= same | n, p0) < 1e-6`` with ``p0 = (equal_b + 1) / (n_b + 2)``. With
continuous augmentations that is any clear excess (16 of 16 identical against 0 of
16); with low-entropy ones (a flip only) it needs the numbers a default probe gives.
So identical outputs across ranks at the same position *and* across positions are
keyed per sample (or there is no randomness), not duplicated streams. Any difference
in (d) is irreproducibility. When the probe is so small that even identical outputs
everywhere could not pass the test, the verdict is "not decided" rather than a pass.

Several targets can be audited in the same launches; each starts from a freshly
seeded state (``seed_everything`` again, a new DataLoader), as a script just started.

With an adapter (``--keys`` or ``--adapter``, see :mod:`rankaug.cli.adapter`) the
fingerprint covers what the adapter reads (the image and the targets) rather than the
whole sample. A sample that raises stops the audit with one line naming it (see
:mod:`rankaug.cli.failure`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Literal

from torch.utils.data import DataLoader, Dataset, get_worker_info

from rankaug.cli.adapter import AUDIT_TARGETS, KeyMap, build_adapter, reader_text
from rankaug.cli.failure import Failure
from rankaug.cli.fingerprint import fingerprint
from rankaug.cli.launch import launch, only_sample, progress
from rankaug.cli.report import AuditReport, AuditResult
from rankaug.cli.target import build_dataset
from rankaug.cli.verdicts import EpochFrom, Layout, Records, analyse
from rankaug.epoch import index_epoch
from rankaug.sampler import EpochSampler
from rankaug.samples import SampleAdapter
from rankaug.seeding import seed_everything

__all__ = [
    "AuditConfig",
    "AuditJob",
    "AuditReport",
    "AuditResult",
    "probe_indices",
    "run_audit",
]


def probe_indices(length: int, count: int) -> list[int]:
    """``count`` distinct indices spread evenly over ``range(length)``.

    >>> probe_indices(100, 4)
    [0, 33, 66, 99]
    >>> probe_indices(3, 8)
    [0, 1, 2]
    """
    if length <= count:
        return list(range(length))
    if count == 1:
        return [0]
    return sorted({round(k * (length - 1) / (count - 1)) for k in range(count)})


@dataclass(frozen=True)
class AuditConfig:
    """How to run the audit (the CLI's options).

    Attributes:
        targets: ``module:factory`` strings, each returning a dataset; all are audited
            in the same launches, each from a freshly seeded state.
        ranks: Number of gloo ranks.
        workers: DataLoader workers per rank (0: load in the rank process).
        epochs: Epochs per run.
        persistent: ``persistent_workers``.
        start_method: ``"fork"`` or ``"spawn"`` for the workers.
        seed: The seed every rank passes to ``seed_everything`` (``torch.manual_seed``).
        probe: Number of distinct indices probed.
        repeats: Positions per index and epoch (at least 2).
        rerun: Run a second time in fresh processes to check reproducibility.
        progress: Print progress to stderr.
        epoch_from: ``"sampler"``: indices from :class:`rankaug.EpochSampler` carry the
            epoch, no ``set_epoch`` call; ``"set_epoch"``: plain indices and
            ``dataset.set_epoch(epoch)`` before every epoch.
        adapter: ``module:factory`` of a :class:`rankaug.SampleAdapter` (``--adapter``).
        keys: A ``--keys`` map such as ``"image=img,bboxes=bboxes,labels=cls"``.
    """

    targets: tuple[str, ...]
    ranks: int = 2
    workers: int = 2
    epochs: int = 2
    persistent: bool = False
    start_method: Literal["fork", "spawn"] = "fork"
    seed: int = 0
    probe: int = 8
    repeats: int = 2
    rerun: bool = True
    progress: bool = True
    epoch_from: EpochFrom = "sampler"
    adapter: str | None = None
    keys: str | None = None

    @property
    def reader(self) -> str:
        """How samples are read, for messages (:func:`~rankaug.cli.adapter.reader_text`)."""
        return reader_text(self.adapter, self.keys)


# (index, worker id, the epoch the index carried, digest, skipped types), or a failure
ProbeItem = tuple[int, int, int | None, str, tuple[str, ...]] | Failure


class _Probe(Dataset[ProbeItem]):
    """Loads ``dataset[index]`` and fingerprints it (or what ``adapter`` reads of it)."""

    def __init__(self, dataset: Any, adapter: SampleAdapter | None, reader: str) -> None:
        self.dataset = dataset
        self.adapter = adapter
        self.reader = reader
        self.targets = AUDIT_TARGETS | set(adapter.keys if isinstance(adapter, KeyMap) else ())

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> ProbeItem:
        info = get_worker_info()
        worker = 0 if info is None else info.id
        try:
            sample = self.dataset[index]
        except Exception as error:
            return Failure.of(f"dataset[{index}]", index, worker, error)
        if self.adapter is not None:
            try:
                sample, _ = self.adapter.unpack(sample, self.targets)
            except Exception as error:
                return Failure.of(
                    f"reading dataset[{index}] with {self.reader}", index, worker, error
                )
        found = fingerprint(sample)
        return index, worker, index_epoch(index), found.digest, found.skipped


RankRecords = list[tuple[int, int, int, int, str]]  # (epoch, worker, position, index, digest)


@dataclass(frozen=True)
class AuditJob:
    """What every rank runs: build each target's dataset and fingerprint its schedule.

    Every target starts from ``seed_everything(seed)``, as if its training script had
    just started, so auditing several targets together gives each the same result
    as auditing it alone. Returns, per target, ``(records, skipped type names)``.
    """

    config: AuditConfig
    schedules: tuple[tuple[int, ...], ...]
    run: int

    def __call__(self, rank: int, world_size: int) -> list[tuple[RankRecords, set[str]]]:
        """Run every target's schedule on this rank."""
        return [
            self._one(rank, target, schedule)
            for target, schedule in zip(self.config.targets, self.schedules, strict=True)
        ]

    def _one(
        self, rank: int, target: str, schedule: tuple[int, ...]
    ) -> tuple[RankRecords, set[str]]:
        config = self.config
        seed_everything(config.seed)
        dataset = build_dataset(target)
        adapter = build_adapter(config.adapter, config.keys)
        streams = max(config.workers, 1)
        order = [index for index in schedule for _ in range(streams)]
        by_sampler = config.epoch_from == "sampler"
        loader: DataLoader[Any] = DataLoader(
            _Probe(dataset, adapter, config.reader),
            sampler=EpochSampler(order) if by_sampler else order,
            batch_size=1,
            num_workers=config.workers,
            persistent_workers=config.persistent and config.workers > 0,
            multiprocessing_context=config.start_method if config.workers > 0 else None,
            collate_fn=only_sample,
        )
        records: RankRecords = []
        skipped: set[str] = set()
        set_epoch = None if by_sampler else getattr(dataset, "set_epoch", None)
        for epoch in range(config.epochs):
            if callable(set_epoch):
                set_epoch(epoch)
            for k, item in enumerate(loader):
                if isinstance(item, Failure):
                    raise item.error(target, rank=rank, epoch=epoch)
                index, worker, carried, digest, types = item
                expected = k % streams if config.workers > 0 else 0
                if worker != expected or index != order[k]:
                    raise RuntimeError(
                        f"sample {k} came from worker {worker} with index {index}, expected "
                        f"worker {expected} and index {order[k]}: the DataLoader did not "
                        "hand out indices round-robin in order"
                    )
                if carried != (epoch if by_sampler else None):
                    raise RuntimeError(
                        f"sample {k} of epoch {epoch} arrived with an index carrying epoch "
                        f"{carried}"
                    )
                records.append((epoch, worker, k // streams, int(index), digest))
                skipped.update(types)
            progress(
                config.progress,
                rank,
                f"{target}: run {self.run + 1}, epoch {epoch + 1}/{config.epochs}, "
                f"{len(order)} samples fingerprinted",
            )
        return records, skipped


def _check_config(config: AuditConfig) -> None:
    checks = [
        ("--ranks", config.ranks, 1),
        ("--workers", config.workers, 0),
        ("--epochs", config.epochs, 1),
        ("--probe", config.probe, 1),
        ("--repeats", config.repeats, 2),
    ]
    for name, value, low in checks:
        if value < low:
            raise ValueError(f"{name} must be at least {low}, got {value}")
    if not 0 <= config.seed < 2**32:
        raise ValueError(f"--seed must be in [0, 2**32), got {config.seed}")
    if config.epoch_from not in ("sampler", "set_epoch"):
        raise ValueError(f"--epoch-from must be sampler or set_epoch, got {config.epoch_from!r}")


def run_audit(config: AuditConfig) -> AuditResult:
    """Build every dataset here (to report a bad TARGET at once), then launch the runs.

    Args:
        config: The configuration.

    Returns:
        The reports, one per target.

    Raises:
        ValueError: If an option is out of range or malformed.
        rankaug.cli.target.TargetError: If a TARGET cannot give a map-style dataset, or
            ``--adapter`` no adapter.
        rankaug.cli.failure.SampleFailure: If a sample raised (one line naming it).
        rankaug.cli.launch.LaunchError: If a rank failed otherwise.
    """
    _check_config(config)
    build_adapter(config.adapter, config.keys)
    datasets = [build_dataset(t) for t in config.targets]
    indices = [probe_indices(len(dataset), config.probe) for dataset in datasets]
    schedules = [[i for _ in range(config.repeats) for i in chosen] for chosen in indices]
    records: list[Records] = [{} for _ in config.targets]
    skipped: list[set[str]] = [set() for _ in config.targets]
    runs = 2 if config.rerun else 1
    for run in range(runs):
        if config.progress:
            print(
                f"audit: run {run + 1} of {runs}: {len(config.targets)} target(s) on "
                f"{config.ranks} rank(s) x {config.workers} worker(s), "
                f"{config.epochs} epoch(s)",
                file=sys.stderr,
                flush=True,
            )
        job = AuditJob(config, tuple(tuple(s) for s in schedules), run)
        for rank, per_target in enumerate(launch(job, config.ranks, seed=config.seed)):
            for t, (rows, types) in enumerate(per_target):
                skipped[t].update(types)
                for epoch, worker, position, _index, digest in rows:
                    records[t][(run, epoch, rank, worker, position)] = digest
    layouts = [
        Layout(
            config.ranks,
            config.workers,
            config.epochs,
            config.rerun,
            config.epoch_from,
            callable(getattr(dataset, "set_epoch", None)),
        )
        for dataset in datasets
    ]
    reports = [
        AuditReport(
            target,
            config,
            indices[t],
            schedules[t],
            analyse(layouts[t], schedules[t], records[t]),
            len(records[t]),
            sorted(skipped[t]),
        )
        for t, target in enumerate(config.targets)
    ]
    return AuditResult(config, reports)
