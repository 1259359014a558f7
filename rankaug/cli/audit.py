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
frequent than the baseline (b) for the same streams: a one-sided Fisher exact test on
the two counts, ``p < 1e-6`` (:mod:`rankaug.cli.stats`). With continuous augmentations
that is any clear excess (16 of 16 identical against 0 of 16); with low-entropy ones (a
flip only) the baseline is high and it takes a larger probe (``--probe 32``).
So identical outputs across ranks at the same position *and* across positions are
keyed per sample (or there is no randomness), not duplicated streams. Any difference
in (d) is irreproducibility. When the probe is so small that even identical outputs
everywhere could not pass the test, or streams identical at every same position are
not significantly so against a high baseline (a flip repeated on every rank), the
verdict is "not decided" rather than a pass.

The verdict on each target is FAIL (exit 1) when a comparison failed, followed by the
fix for that pipeline (:mod:`rankaug.cli.fixes`: the rankaug wrapper to use, or
:class:`rankaug.WorkerSeeder`); NO RANDOMNESS FOUND when every index gave the same
output everywhere (nothing random to audit, exit 0); PASS otherwise. ``box_format``
(``--box-format``) reads the samples' boxes as that format into the fingerprint.

Several targets can be audited in the same launches; each starts from a freshly
seeded state (``seed_everything`` again, a new DataLoader), as a script just started.

A TARGET may also give an iterable dataset (an ``IterableDataset``, a webdataset
pipeline, a Hugging Face ``IterableDataset``, rankaug's streaming wrappers): having no
index to hand out, the audit then streams it on every rank and worker as training does,
matches samples by their id (``--sample-id``) and compares the same sample across ranks,
workers, epochs and runs against a baseline of two passes in one process
(:mod:`rankaug.cli.stream_probe`, :mod:`rankaug.cli.stream_verdicts`).

With an adapter (``--keys`` or ``--adapter``, see :mod:`rankaug.cli.adapter`) the
fingerprint covers what the adapter reads (the image and the targets) rather than the
whole sample. A sample that raises stops the audit with one line naming it (see
:mod:`rankaug.cli.failure`).

A target that gives a batch transform (kornia, torchvision v2, :class:`rankaug.BatchAugment`;
any callable with ``--batch``) is audited on the same synthetic batch on every rank
instead, one stream per rank, with the same verdicts (:mod:`rankaug.cli.batch_probe`).
"""

from __future__ import annotations

import argparse
import sys

from rankaug.boxes import check_box_format
from rankaug.cli.adapter import build_adapter
from rankaug.cli.fixes import describe_batch, describe_pipeline
from rankaug.cli.launch import launch
from rankaug.cli.options import (
    AUDIT_TARGET_HELP,
    box_format_option,
    integer,
    launch_options,
    reader_options,
)
from rankaug.cli.output import check_output, write_text
from rankaug.cli.probe import AuditConfig, AuditJob, probe_indices
from rankaug.cli.report import AuditReport, AuditResult
from rankaug.cli.stream_verdicts import (
    StreamLayout,
    StreamRecords,
    analyse_stream,
    stream_records_of,
)
from rankaug.cli.target import TargetError, build_target, check_dataset
from rankaug.cli.verdicts import Layout, Records, Verdict, analyse
from rankaug.stream.base import StreamDataset
from rankaug.stream.detect import is_stream

__all__ = [
    "AuditConfig",
    "AuditJob",
    "AuditReport",
    "AuditResult",
    "add_parser",
    "probe_indices",
    "run",
    "run_audit",
]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``rankaug audit`` and its options."""
    audit = commands.add_parser(
        "audit",
        help="find duplicated random streams, epoch replay and irreproducibility",
        description=(
            "Run TARGET's dataset as a real DDP launch would (identical torch.manual_seed "
            "on every rank), with every rank and worker loading the same index sequence "
            "(through rankaug.EpochSampler unless --epoch-from set_epoch), "
            "fingerprint every sample, and compare one index at the same position across "
            "ranks and workers, at other positions, in other epochs and in a second run. "
            "Verdicts: PASS, NO RANDOMNESS FOUND (nothing random to audit) or FAIL, which "
            "ends with the fix. Exit 1 on duplicated streams, epoch replay or "
            "irreproducibility."
        ),
    )
    audit.add_argument(
        "targets",
        metavar="TARGET",
        nargs="+",
        help=AUDIT_TARGET_HELP + "; several are audited in the same launches",
    )
    audit.add_argument("--epochs", type=integer(1, 100), default=2, help="epochs (default: 2)")
    audit.add_argument(
        "--persistent",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="persistent_workers (default: off)",
    )
    audit.add_argument(
        "--probe",
        type=integer(1, 1000),
        default=8,
        help="distinct indices probed, spread over the dataset (default: 8)",
    )
    audit.add_argument(
        "--repeats",
        type=integer(2, 100),
        default=2,
        help="positions of each index per epoch (default: 2)",
    )
    audit.add_argument(
        "--no-rerun",
        dest="rerun",
        action="store_false",
        help="skip the second run (no reproducibility check)",
    )
    audit.add_argument(
        "--epoch-from",
        choices=("sampler", "set_epoch"),
        default="sampler",
        help=(
            "sampler: the indices come from rankaug.EpochSampler and carry their epoch, "
            "nobody calls set_epoch (the recommended training loop); set_epoch: plain "
            "indices and dataset.set_epoch(epoch) before every epoch (default: sampler)"
        ),
    )
    audit.add_argument(
        "--sample-id",
        metavar="KEY",
        default="__key__",
        help=(
            "for an iterable dataset: the key of a sample's id, to match one sample across "
            "ranks, workers, epochs and runs; samples without it are matched by their "
            "position in the pass (default: __key__, webdataset's)"
        ),
    )
    box_format_option(audit)
    audit.add_argument(
        "--batch",
        action="store_true",
        help=(
            "audit every TARGET as a batch transform (any callable on a (B, C, H, W) "
            "tensor); a factory giving a kornia augmentation, a torchvision v2 transform "
            "or a rankaug.BatchAugment is audited so without it"
        ),
    )
    audit.add_argument(
        "--image-size",
        type=integer(8, 1024),
        default=32,
        help="side of the batch audit's synthetic images (default: 32)",
    )
    audit.add_argument("--json", action="store_true", help="print the report as JSON")
    audit.add_argument("--output", metavar="FILE", help="also write the JSON report to FILE")
    reader_options(audit, "the audit then fingerprints what it reads of every sample")
    launch_options(audit)
    audit.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``rankaug audit`` with parsed arguments; return the exit code.

    ``--output`` is checked before the launch, and written after the report is printed.
    """
    if args.output:
        check_output(args.output)
    report = run_audit(
        AuditConfig(
            targets=tuple(args.targets),
            ranks=args.ranks,
            workers=args.workers,
            epochs=args.epochs,
            persistent=args.persistent,
            start_method=args.start_method,
            seed=args.seed,
            probe=args.probe,
            repeats=args.repeats,
            rerun=args.rerun,
            progress=not args.quiet,
            epoch_from=args.epoch_from,
            adapter=args.adapter,
            keys=args.keys,
            box_format=args.box_format,
            batch=args.batch,
            image_size=args.image_size,
            sample_id=args.sample_id,
        )
    )
    print(report.to_json() if args.json else report.to_text(), flush=True)
    if args.output:
        write_text(args.output, report.to_json() + "\n")
    return report.exit_code


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
    if config.persistent and config.workers == 0:  # (DataLoader refuses it too)
        raise ValueError(
            "--persistent needs --workers 1 or more: persistent_workers keeps the "
            "DataLoader's worker processes between epochs, and --workers 0 starts none"
        )
    if not 0 <= config.seed < 2**32:
        raise ValueError(f"--seed must be in [0, 2**32), got {config.seed}")
    if config.epoch_from not in ("sampler", "set_epoch"):
        raise ValueError(f"--epoch-from must be sampler or set_epoch, got {config.epoch_from!r}")
    if config.box_format is not None:
        check_box_format(config.box_format, name="--box-format")


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
    built = [build_target(t) for t in config.targets]
    batch = [config.is_batch(b) for b in built]
    datasets = [
        b if is_batch else check_dataset(b, t, streams=True)
        for b, is_batch, t in zip(built, batch, config.targets, strict=True)
    ]
    for target, found, is_batch in zip(config.targets, datasets, batch, strict=True):
        if is_batch and not callable(found):
            raise TargetError(
                f"TARGET {target!r} gave {type(found).__name__}, not a callable batch transform"
            )
    streamed = [not b and is_stream(d) for d, b in zip(datasets, batch, strict=True)]
    indices = [
        list(range(config.probe))
        if is_batch
        else []
        if stream
        else probe_indices(len(dataset), config.probe)
        for dataset, is_batch, stream in zip(datasets, batch, streamed, strict=True)
    ]
    schedules = [[i for _ in range(config.repeats) for i in chosen] for chosen in indices]
    records: list[Records] = [{} for _ in config.targets]
    stream_records: list[StreamRecords] = [{} for _ in config.targets]
    skipped: list[set[str]] = [set() for _ in config.targets]
    runs = 2 if config.rerun else 1
    for attempt in range(runs):
        if config.progress:
            print(
                f"audit: run {attempt + 1} of {runs}: {len(config.targets)} target(s) on "
                f"{config.ranks} rank(s) x {config.workers} worker(s), "
                f"{config.epochs} epoch(s)",
                file=sys.stderr,
                flush=True,
            )
        job = AuditJob(config, tuple(tuple(s) for s in schedules), attempt)
        for rank, per_target in enumerate(launch(job, config.ranks, seed=config.seed)):
            for t, (rows, types) in enumerate(per_target):
                skipped[t].update(types)
                if streamed[t]:
                    stream_records_of(attempt, rank, rows, stream_records[t])
                    continue
                for epoch, worker, position, _index, digest in rows:
                    records[t][(attempt, epoch, rank, worker, position)] = digest
    layouts = [
        Layout(
            config.ranks,
            0 if is_batch else config.workers,
            config.epochs,
            config.rerun,
            config.epoch_from,
            not is_batch and callable(getattr(dataset, "set_epoch", None)),
        )
        for dataset, is_batch in zip(datasets, batch, strict=True)
    ]
    reports = [
        AuditReport(
            target,
            config,
            indices[t],
            schedules[t],
            _stream_verdicts(config, datasets[t], stream_records[t])
            if streamed[t]
            else analyse(layouts[t], schedules[t], records[t]),
            _count(stream_records[t]) if streamed[t] else len(records[t]),
            sorted(skipped[t]),
            describe_batch(datasets[t], config.image_size)
            if batch[t]
            else describe_pipeline(datasets[t]),
            stream=streamed[t],
        )
        for t, target in enumerate(config.targets)
    ]
    return AuditResult(config, reports)


def _count(records: StreamRecords) -> int:
    """The streamed samples fingerprinted in the epochs (not the baseline passes)."""
    return sum(len(samples) for (_, epoch, _, _), samples in records.items() if epoch >= 0)


def _stream_verdicts(config: AuditConfig, dataset: object, records: StreamRecords) -> list[Verdict]:
    keyed_by_sample = isinstance(dataset, StreamDataset) and dataset.keying == "sample"
    layout = StreamLayout(
        config.ranks, config.workers, config.epochs, config.rerun, keyed_by_sample
    )
    return analyse_stream(layout, records)
