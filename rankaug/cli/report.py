"""The audit's report: verdicts per target, for people (text) and for CI (JSON)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rankaug.cli.verdicts import Verdict

if TYPE_CHECKING:
    from rankaug.cli.audit import AuditConfig

__all__ = ["AuditReport", "AuditResult"]


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
            "  epochs: "
            + (
                "every index carries its epoch (rankaug.EpochSampler); nobody calls set_epoch"
                if c.epoch_from == "sampler"
                else "plain indices; dataset.set_epoch(epoch) before every epoch, if it has one"
            ),
        ]
        if c.reader:
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
