"""The audit's report: verdicts per target, for people (text) and for CI (JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

from rankaug.cli.fixes import Pipeline, fix_lines
from rankaug.cli.verdicts import Verdict

if TYPE_CHECKING:
    from rankaug.cli.probe import AuditConfig

__all__ = ["NO_RANDOMNESS", "AuditReport", "AuditResult", "Outcome", "no_randomness"]

#: The verdict on a target whose every output was identical everywhere.
NO_RANDOMNESS = "no randomness found"
Outcome = Literal["pass", "fail", "no randomness found", "not decided"]
_NOTHING_RANDOM = (
    "every index gave the same output at every position, rank, worker and epoch: there "
    "is nothing random to audit; if this dataset should augment, its transform is not "
    "applied (or is keyed by the index alone)"
)


_UNDECIDED = (
    "nothing was found wrong, but the ranks could not be compared (see the ranks line): "
    "read the stream in the same order every pass (a fixed shuffle seed) for the audit, "
    "or fingerprint more samples a pass (--probe)"
)
_UNDECIDED_INDEXED = (
    "nothing was found wrong, but the {names} could not be decided (see the lines above): "
    "{ranks}raise --probe, --repeats or --epochs where a repeat was not significant"
)
_ONE_RANK = "audit with --ranks 2 or more to compare ranks, and "


def no_randomness(verdicts: Sequence[Verdict]) -> bool:
    """Whether the verdicts found no randomness at all (every output identical everywhere).

    >>> from rankaug.cli.verdicts import Layout, analyse
    >>> layout = Layout(ranks=2, workers=0, epochs=2, rerun=False)
    >>> fixed = {(0, e, r, 0, j): f"image {j % 8}" for e in (0, 1) for r in (0, 1)
    ...          for j in range(16)}
    >>> no_randomness(analyse(layout, list(range(8)) * 2, fixed))
    True
    """
    return any(v.name == "positions" and v.stats.get("no_randomness") for v in verdicts)


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
    pipeline: Pipeline = field(default_factory=lambda: Pipeline("dataset"))
    stream: bool = False

    @property
    def failed(self) -> list[Verdict]:
        """The failing verdicts."""
        return [v for v in self.verdicts if v.status == "fail"]

    @property
    def outcome(self) -> Outcome:
        """What the audit found, one of :data:`Outcome`.

        ``"fail"``, ``"no randomness found"`` (nothing random to audit), ``"not decided"``
        (the ranks could not be compared, or a comparison repeated perfectly where the
        probe was too small to tell it from chance: see :attr:`undecided`) or ``"pass"``.
        """
        if self.failed:
            return "fail"
        if no_randomness(self.verdicts):
            return "no randomness found"
        if self.undecided:
            return "not decided"
        return "pass"

    @property
    def undecided(self) -> list[str]:
        """The comparisons left open: ranks not compared, or a repeat too few to judge."""
        return [
            v.name
            for v in self.verdicts
            if (v.name == "ranks" and v.status == "skipped") or v.stats.get("undecided")
        ]

    @property
    def fixes(self) -> list[str]:
        """What to do about the failures, one ``"fix: ..."`` line each (none on a pass)."""
        return fix_lines(
            self.pipeline,
            [v.name for v in self.failed],
            seed=self.config.seed,
            epoch_from=self.config.epoch_from,
            stream=self.stream,
        )

    @property
    def exit_code(self) -> int:
        """1 when a verdict failed, else 0."""
        return 1 if self.failed else 0

    def _schedule_lines(self) -> list[str]:
        c = self.config
        if self.stream:
            return [
                f"  an iterable dataset: every rank and worker streams it; the first "
                f"{c.probe * c.repeats} samples of each worker's pass are fingerprinted, "
                f"matched by {c.sample_id!r} (else their position in the pass); baseline: "
                "two more passes in each rank process",
                "  epochs: "
                + (
                    "one pass each; nobody calls set_epoch"
                    if c.epoch_from == "sampler"
                    else "one pass each; dataset.set_epoch(epoch) before it, if it has one"
                ),
            ]
        return [
            f"  every rank and worker loads indices {self.indices}, each at {c.repeats} "
            f"positions per epoch: {self.positions}",
            "  epochs: "
            + (
                "every index carries its epoch (rankaug.EpochSampler); nobody calls set_epoch"
                if c.epoch_from == "sampler"
                else "plain indices; dataset.set_epoch(epoch) before every epoch, if it has one"
            ),
        ]

    def _setting(self) -> list[str]:
        """How the records were made: the report's first lines."""
        c = self.config
        if self.pipeline.batch:
            called = (
                "with index= and epoch="
                if self.pipeline.batch == "BatchAugment"
                else "plainly, transform(images)"
            )
            return [
                f"  batch transform ({self.pipeline.name}): {c.ranks} rank(s), {c.epochs} "
                f"epoch(s), seed {c.seed} on every rank; {self.samples} output rows",
                f"  every rank calls it {called} {c.repeats} times per epoch on the same "
                f"batch of {len(self.indices)} synthetic {c.image_size}x{c.image_size} "
                f"images, indices {self.indices}; no DataLoader (--workers does not apply)",
            ]
        how = (
            "each rank loads its samples itself"
            if c.workers == 0
            else f"{c.start_method}, persistent {'on' if c.persistent else 'off'}"
        )
        return [
            f"  {c.ranks} rank(s) x {c.workers} worker(s) ({how}), {c.epochs} epoch(s), "
            f"seed {c.seed} on every rank; {self.samples} samples",
            *self._schedule_lines(),
        ]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "target": self.target,
            "stream": self.stream,
            "indices": self.indices,
            "positions": self.positions,
            "samples": self.samples,
            "skipped_types": self.skipped_types,
            "verdicts": [asdict(v) for v in self.verdicts],
            "failed": [v.name for v in self.failed],
            "verdict": self.outcome,
            "batch": self.pipeline.batch,
            "fixes": self.fixes,
            "exit_code": self.exit_code,
        }

    def _not_applied(self) -> str:
        """The options given that this kind of audit does not use, with why, or ``""``."""
        c = self.config
        defaults = {option.name: option.default for option in fields(c)}
        image_size = c.image_size != defaults["image_size"]
        sample_id = c.sample_id != defaults["sample_id"]
        if self.pipeline.batch:  # it gets synthetic images alone: no sample to read
            given = [(c.reader, c.reader), (c.box_format, f"--box-format {c.box_format}"),
                     (c.epoch_from == "set_epoch", "--epoch-from set_epoch"),
                     (sample_id, f"--sample-id {c.sample_id}")]  # fmt: skip
            why = "a batch transform: {} (it is fed synthetic images alone; its output rows "
            why += "are fingerprinted)"
        elif self.stream:
            given = [(image_size, f"--image-size {c.image_size}")]
            why = "a stream: {} (its own samples are fingerprinted)"
        else:
            given = [(image_size, f"--image-size {c.image_size}"),
                     (sample_id, f"--sample-id {c.sample_id}")]  # fmt: skip
            why = "a map-style dataset: {} (its samples are fingerprinted by index)"
        ignored = [text for option, text in given if option]
        return why.format(", ".join(ignored)) if ignored else ""

    def to_text(self) -> str:
        """The report for people."""
        c = self.config
        lines = [f"rankaug audit {self.target}", *self._setting()]
        ignored = self._not_applied()
        if ignored:
            lines.append(f"  not applied to {ignored}")
        if c.reader and not self.pipeline.batch:
            lines.append(f"  fingerprints what {c.reader} reads of every sample")
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
            lines.extend(self.fixes)
        elif self.outcome == NO_RANDOMNESS:
            lines.append(f"verdict on {self.target}: NO RANDOMNESS FOUND")
            lines.append(f"  {_NOTHING_RANDOM}")
        elif self.outcome == "not decided":
            names = ", ".join(self.undecided)
            lines.append(f"verdict on {self.target}: NOT DECIDED ({names})")
            joined = " and ".join(self.undecided)
            uncompared = any(  # a stream's ranks that read nothing alike, or no baseline
                v.name == "ranks" and v.status == "skipped" and not v.stats.get("undecided")
                for v in self.verdicts
            )
            advice = (
                _UNDECIDED
                if self.stream and uncompared
                else _UNDECIDED_INDEXED.format(
                    names=joined, ranks=_ONE_RANK if self.config.ranks < 2 else ""
                )
            )
            lines.append(f"  {advice}")
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
        by_outcome: dict[str, list[str]] = {
            "fail": [],
            "not decided": [],
            NO_RANDOMNESS: [],
            "pass": [],
        }
        for report in self.reports:
            by_outcome[report.outcome].append(report.target)
        everyone = len(self.reports)
        summary = [
            outcome.upper() + ("" if len(targets) == everyone else f": {', '.join(targets)}")
            for outcome, targets in by_outcome.items()
            if targets
        ]
        parts.append("; ".join([*summary, f"exit {self.exit_code}"]))
        return "\n\n".join(parts)
