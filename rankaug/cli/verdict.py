"""One finding of the audit (:class:`Verdict`), and the epochs' pass both audits share.

The map-style audit (:mod:`rankaug.cli.verdicts`) and the stream's
(:mod:`rankaug.cli.stream_verdicts`) each make their verdicts from their records; what
a passing epochs check says is one rule, :func:`epochs_pass`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rankaug.cli.stats import Tally

__all__ = ["Status", "Verdict", "epochs_pass"]

Status = Literal["pass", "fail", "info", "skipped"]


@dataclass
class Verdict:
    """The finding on one property.

    Attributes:
        name: ``"ranks"``, ``"workers"``, ``"positions"``, ``"epochs"`` or
            ``"reproducible"``.
        status: ``"pass"``, ``"fail"``, ``"info"`` or ``"skipped"``.
        summary: One sentence.
        evidence: Lines naming the ranks, workers, epochs and indices involved.
        stats: The counts behind the summary.
    """

    name: str
    status: Status
    summary: str
    evidence: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def epochs_pass(pooled: Tally, stats: dict[str, Any], *, keyed: str, repeated: str) -> Verdict:
    """The epochs' pass, for the map-style audit and the stream's: all identical, or epochs differ.

    Args:
        pooled: The epochs' pooled tally; identical in every epoch and in the baseline
            is no randomness or randomness ``keyed`` by the sample alone.
        stats: Its figures for the report.
        keyed: ``"keyed by the index alone"`` or the like.
        repeated: What the count counts (``"same-position outputs"``).

    >>> epochs_pass(Tally(2, 2, 1, 1), {}, keyed="keyed by the id", repeated="x").summary[:38]
    'identical in every epoch, as in the ba'
    >>> epochs_pass(Tally(0, 2, 0, 1), {}, keyed="keyed by the id", repeated="x").summary
    'epochs differ: 0/2 x repeated in a later epoch'
    """
    if pooled.same == pooled.same_total and pooled.other == pooled.other_total:
        return Verdict(
            "epochs",
            "pass",
            "identical in every epoch, as in the baseline (the draws not aligned): no "
            f"randomness detected, or randomness {keyed} (then every epoch repeats it)",
            stats=stats,
        )
    return Verdict(
        "epochs",
        "pass",
        f"epochs differ: {pooled.same}/{pooled.same_total} {repeated} repeated in a later epoch",
        stats=stats,
    )
