"""One finding of the audit (:class:`Verdict`), and the epochs' pass both audits share.

The map-style audit (:mod:`rankaug.cli.verdicts`) and the stream's
(:mod:`rankaug.cli.stream_verdicts`) each make their verdicts from their records; what
a passing epochs check says is one rule, :func:`epochs_pass`, and when a perfect repeat
is left undecided another, :func:`repeat_undecided`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rankaug.cli.stats import Tally, evidence_lines

__all__ = ["Status", "Verdict", "epochs_pass", "repeat_undecided"]

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


def repeat_undecided(
    name: str,
    pooled: Tally,
    by_key: dict[Any, Tally],
    stats: dict[str, Any],
    label: Callable[[Any], str],
    item: str = "index",
) -> Verdict | None:
    """A "not decided" verdict where a perfect repeat is not significant, else ``None``.

    Called when nothing was flagged. Streams identical at every same position look like
    a duplicate; the test cannot tell it from chance when the same ``item`` is often
    identical unaligned too (few distinct outputs: a flip alone), and a pass would hide
    a duplicate. Identical unaligned every time as well is keyed per sample (or no
    randomness): decided.

    >>> flip = Tally(same=32, same_total=32, other=24, other_total=32)
    >>> repeat_undecided("ranks", flip, {"a": flip}, {}, str).stats["undecided"]
    True
    >>> keyed = Tally(same=32, same_total=32, other=32, other_total=32)
    >>> repeat_undecided("ranks", keyed, {"a": keyed}, {}, str) is None
    True
    """

    def perfect(t: Tally) -> bool:  # a stream pair may share no position: not a repeat
        return 0 < t.same == t.same_total and t.other < t.other_total

    if not any(perfect(t) for t in (pooled, *by_key.values())):
        return None
    shown = {key: t for key, t in by_key.items() if perfect(t)} or by_key
    where = "at other positions" if item == "index" else "unaligned"
    return Verdict(
        name,
        "skipped",
        "not decided: identical at every same position, as a duplicated stream would be, "
        f"but the same {item} is often identical {where} too (few distinct outputs, a "
        "flip say), so even a perfect repeat is not significant; raise --probe, --repeats "
        "or --epochs",
        evidence_lines(shown, label, item=item),
        {**stats, "undecided": True},
    )
