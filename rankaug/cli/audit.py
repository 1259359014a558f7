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
  DataLoader with ``batch_size=None`` and ``in_order=True`` hands sample ``k`` to
  worker ``k % workers``, so every worker loads the whole sequence in order; the
  audit checks the worker id each sample reports.
* ``set_epoch(epoch)`` is called before every epoch when the dataset has it.

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
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from typing import Any, Literal

from torch.utils.data import DataLoader, Dataset, get_worker_info

from rankaug.cli.fingerprint import fingerprint
from rankaug.cli.launch import keep_as_is, launch, progress
from rankaug.cli.target import build_dataset
from rankaug.cli.verdicts import Layout, Records, Verdict, analyse
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


class _Probe(Dataset[tuple[int, int, str, tuple[str, ...]]]):
    """Loads ``dataset[index]`` and returns ``(index, worker id, digest, skipped types)``."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> tuple[int, int, str, tuple[str, ...]]:
        found = fingerprint(self.dataset[index])
        info = get_worker_info()
        return index, 0 if info is None else info.id, found.digest, found.skipped


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
        streams = max(config.workers, 1)
        order = [index for index in schedule for _ in range(streams)]
        loader: DataLoader[Any] = DataLoader(
            _Probe(dataset),
            sampler=order,
            batch_size=None,
            num_workers=config.workers,
            persistent_workers=config.persistent and config.workers > 0,
            multiprocessing_context=config.start_method if config.workers > 0 else None,
            collate_fn=keep_as_is,
        )
        records: RankRecords = []
        skipped: set[str] = set()
        set_epoch = getattr(dataset, "set_epoch", None)
        for epoch in range(config.epochs):
            if callable(set_epoch):
                set_epoch(epoch)
            for k, (index, worker, digest, types) in enumerate(loader):
                expected = k % streams if config.workers > 0 else 0
                if worker != expected or index != order[k]:
                    raise RuntimeError(
                        f"sample {k} came from worker {worker} with index {index}, expected "
                        f"worker {expected} and index {order[k]}: the DataLoader did not "
                        "hand out indices round-robin in order"
                    )
                records.append((epoch, worker, k // streams, index, digest))
                skipped.update(types)
            progress(
                config.progress,
                rank,
                f"{target}: run {self.run + 1}, epoch {epoch + 1}/{config.epochs}, "
                f"{len(order)} samples fingerprinted",
            )
        return records, skipped


@dataclass
class AuditReport:
    """The verdicts on one target and the configuration that produced them."""

    target: str
    config: AuditConfig
    indices: list[int]
    positions: list[int]
    verdicts: list[Verdict]
    samples: int
    skipped_types: list[str]

    @property
    def failed(self) -> list[Verdict]:
        """The failing verdicts."""
        return [v for v in self.verdicts if v.status == "fail"]

    @property
    def exit_code(self) -> int:
        """1 when a verdict failed, else 0."""
        return 1 if self.failed else 0

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "target": self.target,
            "indices": self.indices,
            "positions": self.positions,
            "samples": self.samples,
            "skipped_types": self.skipped_types,
            "verdicts": [asdict(v) for v in self.verdicts],
            "failed": [v.name for v in self.failed],
            "exit_code": self.exit_code,
        }

    def to_text(self) -> str:
        """The report for people."""
        c = self.config
        lines = [
            f"rankaug audit {self.target}",
            f"  {c.ranks} rank(s) x {c.workers} worker(s) ({c.start_method}, persistent "
            f"{'on' if c.persistent else 'off'}), {c.epochs} epoch(s), seed {c.seed} on every "
            f"rank; {self.samples} samples",
            f"  every rank and worker loads indices {self.indices}, each at {c.repeats} "
            f"positions per epoch: {self.positions}",
        ]
        if self.skipped_types:
            lines.append(
                f"  note: values of type {', '.join(self.skipped_types)} were hashed by type only"
            )
        for verdict in self.verdicts:
            lines.append(f"{verdict.status.upper():<8}{verdict.name:<13}{verdict.summary}")
            lines.extend(f"{'':<21}{line}" for line in verdict.evidence)
        if self.failed:
            names = ", ".join(v.name for v in self.failed)
            lines.append(f"verdict on {self.target}: FAIL ({names})")
        else:
            lines.append(f"verdict on {self.target}: PASS")
        return "\n".join(lines)


@dataclass
class AuditResult:
    """The reports on every target of one audit."""

    config: AuditConfig
    reports: list[AuditReport]

    @property
    def exit_code(self) -> int:
        """1 when a verdict on any target failed, else 0."""
        return max((report.exit_code for report in self.reports), default=0)

    def to_json(self) -> str:
        """``{"config", "reports": [...], "exit_code"}`` (the ``--json`` output)."""
        config = asdict(self.config)
        config.pop("progress")
        payload = {
            "config": config,
            "reports": [report.to_dict() for report in self.reports],
            "exit_code": self.exit_code,
        }
        return json.dumps(payload, indent=2)

    def to_text(self) -> str:
        """Every report, then the exit code."""
        parts = [report.to_text() for report in self.reports]
        failed = [report.target for report in self.reports if report.exit_code]
        if failed:
            parts.append(f"FAIL: {', '.join(failed)}; exit 1")
        else:
            parts.append("PASS; exit 0")
        return "\n\n".join(parts)


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


def run_audit(config: AuditConfig) -> AuditResult:
    """Build every dataset here (to report a bad TARGET at once), then launch the runs.

    Args:
        config: The configuration.

    Returns:
        The reports, one per target.

    Raises:
        ValueError: If an option is out of range.
        rankaug.cli.target.TargetError: If a TARGET cannot give a map-style dataset.
        rankaug.cli.launch.LaunchError: If a rank failed.
    """
    _check_config(config)
    indices = [probe_indices(len(build_dataset(t)), config.probe) for t in config.targets]
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
    layout = Layout(config.ranks, config.workers, config.epochs, config.rerun)
    reports = [
        AuditReport(
            target,
            config,
            indices[t],
            schedules[t],
            analyse(layout, schedules[t], records[t]),
            len(records[t]),
            sorted(skipped[t]),
        )
        for t, target in enumerate(config.targets)
    ]
    return AuditResult(config, reports)
