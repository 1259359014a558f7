"""The scoreboard's goals: a figure computed from the report's rows, compared with a target.

A goal's ``kind`` says how its figure is measured from its ``rows``:

* ``"absolute"``: the median of one row (µs per sample, say);
* ``"ratio"``: the ratio of the medians of two rows measured side by side;
* ``"cpu"``: the same of samples per CPU-second (the rows' ``extra["per_cpu_second"]``),
  robust to the machine's other load, the wall ratio beside it; the wall ratio alone
  without it (no ``/proc``);
* ``"paired"``: a drift-free ratio a section computed from adjacent pairs of operations
  (``report.diagnostics[diagnostic]``: ``{"ratio", "extra_us", "pairs"}``), the ratio of
  the medians beside it (and in its place without the pairs);
* ``"scaling"``: a ratio of loader rows, with the CPU they got and the idle-core projection;
* ``"difference"``: the difference of the medians of two rows (what a feature adds, in
  µs), with the spread of the per-round differences.

The evaluation (PASS/MISS, margin, notes, what to look at when missed) is the same for
every kind; a goal whose two rows' contenders do different work (``report.work``, see
``benchmarks._same_work``) is REFUSED, its note saying where they differ, and one whose
rows have no such record reads N/A: like for like unchecked is not a result. This is
benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from benchmarks._report import Report
from benchmarks._same_work import differences
from benchmarks._timing import Summary, summarize

__all__ = ["Goal", "Kind"]

Kind = Literal["absolute", "ratio", "cpu", "paired", "scaling", "difference"]
Measured = tuple[float, list[str]] | None
"""A goal's figure and the notes printed beside it; ``None`` when it cannot be measured."""


@dataclass(frozen=True)
class Goal:
    """One goal: ``rows`` measured as its ``kind`` says (see the module), ``op`` ``target``.

    Attributes:
        id: Stable identifier, in the JSON's ``goals``.
        kind: How the figure is measured.
        rows: The rows it reads, the measured one first (the numerator, the row with the
            feature); it is evaluated when they were all selected.
        op: ``"<="`` or ``">="``.
        target: The goal.
        what: What is compared, for the table.
        hint: What to look at when the goal is missed.
        compare: What the note adds: ``(label, numerator, denominator)`` ratios, taken as
            the goal's own (rows that may be missing: they are not the goal's);
            ``(label, row)``, a row's median in the same rounds (absolute); ``(label,
            figure)``, the difference of the medians of an ``extra`` figure (difference).
        diagnostic: The paired kind's ``report.diagnostics`` key.
        like_for_like: Whether its rows must do the same work, each row's work recorded
            (``False`` for what a feature costs: the rows differ by that feature).
    """

    id: str
    kind: Kind
    rows: tuple[str, ...]
    op: Literal["<=", ">="]
    target: float
    what: str
    hint: str = "run --profile"
    compare: tuple[tuple[str, ...], ...] = ()
    diagnostic: str = ""
    like_for_like: bool = True

    def evaluate(self, report: Report) -> dict[str, Any]:
        """PASS/MISS, the figure, the margin and the notes, as the JSON's ``goals`` hold."""
        works = [report.work.get(row) for row in self.rows[:2]]
        unlike: list[str] = []
        unrecorded = []
        if self.like_for_like and len(self.rows) > 1:
            unrecorded = [row for row, work in zip(self.rows, works, strict=False) if not work]
            if not unrecorded and works[0] is not None and works[-1] is not None:
                unlike = differences(works[0], works[-1])
        checked = not (unlike or unrecorded)
        measurement = _MEASURES[self.kind](self, report) if checked else None
        notes: list[str] = []
        measured = margin = None
        if unlike:
            status = "REFUSED"
            notes.append("not like for like: " + "; ".join(unlike))
        elif unrecorded:
            status = "N/A"
            notes.append(
                "like for like unchecked: no same-work record for " + ", ".join(unrecorded)
            )
        elif measurement is None:
            status = "N/A"
        else:
            measured, found = measurement
            below = self.op == "<="
            ok = measured <= self.target if below else measured >= self.target
            status = "PASS" if ok else "MISS"
            # how far from the goal, relative to it (negative: missed by that much)
            margin = (self.target - measured) / self.target if below else measured / self.target - 1
            notes.extend(found)
        if status == "MISS":
            notes.append(self.hint)
        return {
            "id": self.id,
            "goal": self.what,
            "op": self.op,
            "target": self.target,
            "measured": measured,
            "status": status,
            "margin": margin,
            "note": "; ".join(note for note in notes if note),
        }


def _summary(report: Report, row_id: str) -> Summary | None:
    row = report.rows.get(row_id)
    return None if row is None else row.summary


def _wall(report: Report, numerator: str, denominator: str) -> float | None:
    entry = report.ratio(numerator, denominator)
    return None if entry is None else float(entry["ratio"])


def _cpu(report: Report, numerator: str, denominator: str) -> float | None:
    rows = [report.rows.get(k) for k in (numerator, denominator)]
    figures = [None if row is None else row.extra.get("per_cpu_second") for row in rows]
    if not (figures[0] and figures[1]):
        return None
    return summarize(figures[0]).median / summarize(figures[1]).median


def _compared(
    goal: Goal, report: Report, ratio: Callable[[Report, str, str], float | None]
) -> list[str]:
    """The ``compare`` ratios that could be computed, as notes."""
    found = [(label, ratio(report, *rows)) for label, *rows in goal.compare]
    return [f"{label} {value:.2f}x" for label, value in found if value is not None]


def _absolute(goal: Goal, report: Report) -> Measured:
    summary = _summary(report, goal.rows[0])
    if summary is None:
        return None
    notes = []
    for label, row in goal.compare:
        context = _summary(report, row)
        if context is not None:
            notes.append(
                f"best round {summary.low:.1f}; {label} {context.median:.1f} in the same rounds"
            )
    return summary.median, notes


def _ratio(goal: Goal, report: Report) -> Measured:
    wall = _wall(report, *goal.rows)
    return None if wall is None else (wall, _compared(goal, report, _wall))


def _cpu_ratio(goal: Goal, report: Report) -> Measured:
    wall = _wall(report, *goal.rows)
    if wall is None:
        return None
    cpu = _cpu(report, *goal.rows)
    if cpu is None:
        return wall, ["wall time (no CPU time read)", *_compared(goal, report, _wall)]
    return cpu, [f"per CPU-second; wall time {wall:.2f}x", *_compared(goal, report, _cpu)]


def _paired(goal: Goal, report: Report) -> Measured:
    paired = report.diagnostics.get(goal.diagnostic)
    of_medians = _wall(report, *goal.rows)
    if paired is None:
        return None if of_medians is None else (of_medians, [])
    notes = []
    if of_medians is not None:
        notes.append(
            f"from {paired['pairs']:.0f} paired samples (same draws), "
            f"{paired['extra_us']:+.0f} µs per sample; ratio of the round medians "
            f"{of_medians:.3f}"
        )
    return paired["ratio"], [*notes, *_compared(goal, report, _wall)]


def _scaling(goal: Goal, report: Report) -> Measured:
    wall = _wall(report, *goal.rows)
    if wall is None:
        return None
    notes = [report.rows[goal.rows[0]].note]
    projected = [report.rows[k].extra.get("projected", []) for k in goal.rows]
    if projected[0] and projected[1]:
        notes.append(
            f"projected on {os.cpu_count()} idle cores from CPU efficiency and demand: "
            f"{summarize(projected[0]).median / summarize(projected[1]).median:.2f}x"
        )
    bounds = [report.rows[k].extra.get("bound") for k in goal.rows]
    if bounds[0] and bounds[1]:  # what the split of the work allows
        notes.append(
            f"the split of the work between the workers and the main process (1 worker's) "
            f"allows {summarize(bounds[0]).median / summarize(bounds[1]).median:.2f}x on "
            f"{os.cpu_count()} idle cores"
        )
    return wall, [*notes, *_compared(goal, report, _wall)]


def _difference(goal: Goal, report: Report) -> Measured:
    entry = report.difference(*goal.rows)
    if entry is None:
        return None
    with_it, without = (report.rows[k] for k in goal.rows)
    medians = [summarize(row.values).median for row in (with_it, without)]  # both measured
    notes = []
    if entry["paired_min"] is not None:
        notes.append(
            f"per round {entry['paired_min']:+.2f}..{entry['paired_max']:+.2f} "
            f"(median {entry['paired_median']:+.2f})"
        )
    notes.append(f"{medians[0]:.2f} vs {medians[1]:.2f} µs")
    for label, figure in goal.compare:
        extra = [with_it.extra.get(figure), without.extra.get(figure)]
        if extra[0] and extra[1]:
            also = summarize(extra[0]).median - summarize(extra[1]).median
            notes.append(f"{label} {also:+.2f} µs")
    return entry["difference"], notes


_MEASURES: dict[str, Callable[[Goal, Report], Measured]] = {
    "absolute": _absolute,
    "ratio": _ratio,
    "cpu": _cpu_ratio,
    "paired": _paired,
    "scaling": _scaling,
    "difference": _difference,
}
