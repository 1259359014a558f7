"""The scoreboard's goals: each kind of goal carries its own measurement.

A goal reads the rows (and diagnostics) a run put in the :class:`~benchmarks._report.Report`
and turns them into one figure, compared with its target:

* :class:`Absolute`: the median of one row (µs per sample, say);
* :class:`Ratio`: the ratio of the medians of two rows measured side by side;
* :class:`CpuRatio`: the same of samples per CPU-second, robust to the machine's other
  load, the wall ratio beside it;
* :class:`PairedRatio`: a drift-free ratio a section computed from adjacent pairs of
  operations (in ``report.diagnostics``), the ratio of the medians beside it;
* :class:`ScalingRatio`: a ratio of loader rows, with the CPU time the loaders got and
  the speed-up projected on idle cores;
* :class:`Difference`: the difference of the medians of two rows (what a feature adds,
  in µs), with the spread of the per-round differences.

The evaluation (PASS/MISS, margin, notes, what to look at when missed) is the same for
every kind; a goal whose two rows' contenders do different work (``report.work``, see
``benchmarks._same_work``) is REFUSED, its note saying where they differ. This is
benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from benchmarks._report import Report
from benchmarks._same_work import differences
from benchmarks._timing import summarize

__all__ = [
    "Absolute",
    "CpuRatio",
    "Difference",
    "Goal",
    "Measurement",
    "PairedRatio",
    "Ratio",
    "ScalingRatio",
]

Op = Literal["<=", ">="]


@dataclass(frozen=True)
class Measurement:
    """A goal's measured figure and what to print beside it."""

    value: float
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Goal:
    """One goal: a figure computed from the report, compared with a target.

    Attributes:
        id: Stable identifier, in the JSON's ``goals``.
        what: What is compared, for the table.
        op: ``"<="`` or ``">="``.
        target: The goal.
        hint: What to look at when the goal is missed.
        like_for_like: Whether its rows must do the same work (``False`` for what a
            feature costs: the rows differ by that feature).
    """

    id: str
    what: str
    op: Op
    target: float
    hint: str = "run --profile"
    like_for_like: bool = True

    @property
    def rows(self) -> tuple[str, ...]:
        """The rows the goal reads (a goal is evaluated when its rows were selected)."""
        raise NotImplementedError

    def measure(self, report: Report) -> Measurement | None:
        """The measured figure, ``None`` when its rows could not be measured."""
        raise NotImplementedError

    def evaluate(self, report: Report) -> dict[str, Any]:
        """PASS/MISS, the figure, the margin and the notes, as the JSON's ``goals`` hold."""
        works = [report.work.get(row) for row in self.rows[:2]]
        unlike: list[str] = []
        if self.like_for_like and works[0] is not None and works[-1] is not None:
            unlike = differences(works[0], works[-1])
        measurement = None if unlike else self.measure(report)
        notes: list[str] = []
        if unlike:
            measured, status, margin = None, "REFUSED", None
            notes.append("not like for like: " + "; ".join(unlike))
        elif measurement is None:
            measured, status, margin = None, "N/A", None
        else:
            measured = measurement.value
            ok = measured <= self.target if self.op == "<=" else measured >= self.target
            status = "PASS" if ok else "MISS"
            # how far from the goal, relative to it (negative: missed by that much)
            if self.op == "<=":
                margin = (self.target - measured) / self.target
            else:
                margin = measured / self.target - 1
            notes.extend(measurement.notes)
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


@dataclass(frozen=True, kw_only=True)
class Absolute(Goal):
    """The median of one row, with its best round and a baseline row's median beside it.

    Attributes:
        row: The row measured.
        baseline: A row measured in the same rounds, for context; ``None`` for none.
        baseline_what: How the note names the baseline.
    """

    row: str
    baseline: str | None = None
    baseline_what: str = ""

    @property
    def rows(self) -> tuple[str, ...]:
        return (self.row,)

    def measure(self, report: Report) -> Measurement | None:
        row = report.rows.get(self.row)
        summary = None if row is None else row.summary
        if summary is None:
            return None
        base = None if self.baseline is None else report.rows.get(self.baseline)
        context = None if base is None else base.summary
        notes: tuple[str, ...] = ()
        if context is not None:
            notes = (
                f"best round {summary.low:.1f}; {self.baseline_what} "
                f"{context.median:.1f} in the same rounds",
            )
        return Measurement(summary.median, notes)


@dataclass(frozen=True, kw_only=True)
class Ratio(Goal):
    """The ratio of the medians of two rows measured side by side.

    Attributes:
        numerator: The row measured.
        denominator: The row it is divided by.
        compare: Other ratios the note gives beside it, ``(label, numerator,
            denominator)`` (rows that may be missing: they are not the goal's).
    """

    numerator: str
    denominator: str
    compare: tuple[tuple[str, str, str], ...] = ()

    @property
    def rows(self) -> tuple[str, ...]:
        return (self.numerator, self.denominator)

    def compared(self, report: Report) -> tuple[str, ...]:
        """The ``compare`` ratios that could be computed, as notes."""
        notes = []
        for label, numerator, denominator in self.compare:
            entry = report.ratio(numerator, denominator)
            if entry is not None:
                notes.append(f"{label} {entry['ratio']:.2f}x")
        return tuple(notes)

    def measure(self, report: Report) -> Measurement | None:
        entry = report.ratio(self.numerator, self.denominator)
        return None if entry is None else Measurement(entry["ratio"], self.compared(report))


@dataclass(frozen=True, kw_only=True)
class CpuRatio(Ratio):
    """The ratio of two rows' medians of samples per CPU-second, the wall ratio beside it.

    On a machine shared with other work, what a contender's processes spent in CPU
    time does not depend on how much CPU the others left them; its wall time does. In
    one process and one thread, samples per CPU-second is the rate on an idle core.
    The rows carry it in ``extra[figure]``; ``compare`` ratios are taken the same way
    where both rows have it. Without it (no ``/proc``) the goal is the wall ratio.

    Attributes:
        figure: The ``extra`` key of the rows' samples per CPU-second.
    """

    figure: str = "per_cpu_second"

    def _cpu(self, report: Report, numerator: str, denominator: str) -> float | None:
        rows = [report.rows.get(k) for k in (numerator, denominator)]
        figures = [None if row is None else row.extra.get(self.figure) for row in rows]
        if not (figures[0] and figures[1]):
            return None
        return summarize(figures[0]).median / summarize(figures[1]).median

    def measure(self, report: Report) -> Measurement | None:
        wall = report.ratio(self.numerator, self.denominator)
        if wall is None:
            return None
        cpu = self._cpu(report, self.numerator, self.denominator)
        if cpu is None:
            notes = ["wall time (no CPU time read)", *self.compared(report)]
            return Measurement(wall["ratio"], tuple(notes))
        notes = [f"per CPU-second; wall time {wall['ratio']:.2f}x"]
        for label, numerator, denominator in self.compare:
            ratio = self._cpu(report, numerator, denominator)
            if ratio is not None:
                notes.append(f"{label} {ratio:.2f}x")
        return Measurement(cpu, tuple(notes))


@dataclass(frozen=True, kw_only=True)
class PairedRatio(Ratio):
    """A ratio from pairs of operations (``report.diagnostics[diagnostic]``).

    The section stores ``{"ratio", "extra_us", "pairs"}`` there when it could pair the
    two contenders' operations (same work, adjacent in time); without it the goal falls
    back to the ratio of the medians.

    Attributes:
        diagnostic: The diagnostics key of the paired estimate.
    """

    diagnostic: str

    def measure(self, report: Report) -> Measurement | None:
        paired = report.diagnostics.get(self.diagnostic)
        of_medians = report.ratio(self.numerator, self.denominator)
        if paired is None:
            return None if of_medians is None else Measurement(of_medians["ratio"])
        notes: tuple[str, ...] = ()
        if of_medians is not None:
            notes = (
                f"from {paired['pairs']:.0f} paired samples (same draws), "
                f"{paired['extra_us']:+.0f} µs per sample; ratio of the round medians "
                f"{of_medians['ratio']:.3f}",
            )
        return Measurement(paired["ratio"], notes)


@dataclass(frozen=True, kw_only=True)
class ScalingRatio(Ratio):
    """A ratio of two loader rows, with the CPU they got and the idle-core projection."""

    def measure(self, report: Report) -> Measurement | None:
        entry = report.ratio(self.numerator, self.denominator)
        if entry is None:
            return None
        notes = [report.rows[self.numerator].note]
        projected = [
            report.rows[k].extra.get("projected", []) for k in (self.numerator, self.denominator)
        ]
        if projected[0] and projected[1]:
            notes.append(
                f"projected on {os.cpu_count()} idle cores from CPU efficiency and demand: "
                f"{summarize(projected[0]).median / summarize(projected[1]).median:.2f}x"
            )
        return Measurement(entry["ratio"], (*notes, *self.compared(report)))


@dataclass(frozen=True, kw_only=True)
class Difference(Goal):
    """What ``row`` adds over ``baseline``: the difference of their medians.

    The note gives the spread: the per-round differences (both rows are measured in
    every round, side by side), min..max, and the two medians.

    Attributes:
        row: The row with the feature.
        baseline: The same work without it.
        unit: The unit of the difference, for the note.
        also: A figure of both rows' ``extra`` whose difference of medians the note
            adds (``""`` for none).
        also_what: How the note names it.
    """

    row: str
    baseline: str
    unit: str = "µs"
    also: str = ""
    also_what: str = ""

    @property
    def rows(self) -> tuple[str, ...]:
        return (self.row, self.baseline)

    def measure(self, report: Report) -> Measurement | None:
        entry = report.difference(self.row, self.baseline)
        if entry is None:
            return None
        with_it, without = report.rows[self.row].summary, report.rows[self.baseline].summary
        assert with_it is not None  # measured: the entry exists
        assert without is not None
        notes = []
        if entry["paired_min"] is not None:
            notes.append(
                f"per round {entry['paired_min']:+.2f}..{entry['paired_max']:+.2f} "
                f"(median {entry['paired_median']:+.2f})"
            )
        notes.append(f"{with_it.median:.2f} vs {without.median:.2f} {self.unit}")
        extra = [report.rows[k].extra.get(self.also) for k in (self.row, self.baseline)]
        if self.also and extra[0] and extra[1]:
            also = summarize(extra[0]).median - summarize(extra[1]).median
            notes.append(f"{self.also_what} {also:+.2f} {self.unit}")
        return Measurement(entry["difference"], tuple(notes))
