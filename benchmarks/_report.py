"""The scoreboard's report: rows, ratios and differences, the console tables and the JSON.

Nothing here measures or imports numpy: sections add :class:`Row` values to a
:class:`Report`, goals read them back (``benchmarks._goals``), and the functions below
print them. This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from benchmarks._same_work import Work, differences
from benchmarks._timing import Progress, Summary, summarize

__all__ = [
    "Better",
    "Console",
    "Report",
    "Row",
    "number",
    "print_goals",
    "print_header",
    "print_rows",
    "ratio_text",
    "unlike_text",
]

Better = Literal["higher", "lower"]


@dataclass
class Row:
    """One contender's figures.

    Attributes:
        id: Stable identifier (``section/name``), a key of the JSON's ``rows``.
        name: Human-readable description.
        unit: ``"µs/sample"``, ``"µs/index"``, ``"samples/s"`` or ``"mosaics/s"``.
        better: Whether higher or lower values are better.
        values: One value per round.
        status: ``"ok"``, ``"unavailable"`` (a peer not installed) or ``"error"``.
        reason: Why the row is not ``"ok"``.
        note: Anything else worth saying about the row.
        extra: Other figures per round. The scaling rows have ``cores`` (CPU time the
            loader's processes got per second), ``waiting`` (time they were runnable but
            waited for a CPU, per second), ``per_cpu_second`` (samples per CPU-second)
            and ``projected`` (samples/s on idle cores: ``per_cpu_second`` times
            ``min(cpus, cores + waiting)``, an estimate for a machine nobody else uses),
            ``main`` (the main process's share of ``cores``) and, with workers,
            ``bound`` (samples/s that the split of the work measured with one worker
            allows on this machine's idle cores, :func:`benchmarks._loaders.share_bound`).
    """

    id: str
    name: str
    unit: str
    better: Better
    values: list[float] = field(default_factory=list)
    status: str = "ok"
    reason: str = ""
    note: str = ""
    extra: dict[str, list[float]] = field(default_factory=dict)

    @property
    def summary(self) -> Summary | None:
        """Median and range over the rounds, ``None`` when nothing was measured."""
        return summarize(self.values) if self.values and self.status == "ok" else None

    def to_json(self) -> dict[str, Any]:
        s = self.summary
        data = asdict(self)
        extra, values = data.pop("extra"), data.pop("values")
        spread = (None, None, None) if s is None else (s.median, s.low, s.high)
        return {
            **data,
            **dict(zip(("median", "min", "max"), spread, strict=True)),
            "values": values,
            **{f"{key}_median": summarize(v).median for key, v in extra.items() if v},
            **{f"{key}_values": v for key, v in extra.items()},
        }


@dataclass
class Report:
    """Everything measured, for printing and for ``--json``.

    Attributes:
        meta: Versions, threads, machine, settings, data.
        order: Row ids in the order the JSON lists them (the catalogue's).
        rows: Row id -> row.
        ratios: ``"a / b"`` -> ratio of the medians (and per round), as computed.
        differences: ``"a - b"`` -> difference of the medians (and per round).
        goals: The evaluated goals, in the catalogue's order.
        diagnostics: Figures beside the rows (the wrapper's pairs, transport costs...).
        profiles: cProfile listings (``--profile``).
        work: Row id -> the work its contender does (``benchmarks._same_work``); a
            goal on two rows whose works differ is refused.
    """

    meta: dict[str, Any]
    order: Sequence[str] = ()
    rows: dict[str, Row] = field(default_factory=dict)
    ratios: dict[str, dict[str, Any]] = field(default_factory=dict)
    differences: dict[str, dict[str, Any]] = field(default_factory=dict)
    goals: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, str] = field(default_factory=dict)
    work: dict[str, Work] = field(default_factory=dict)

    def add(self, row: Row) -> Row:
        self.rows[row.id] = row
        return row

    def ratio(self, numerator: str, denominator: str) -> dict[str, Any] | None:
        """Ratio of the medians of two rows (and the per-round ratios), if both measured.

        ``"unlike"`` lists where the two rows' recorded work differs (empty when it is
        the same or either has no record): a ratio of unlike work, printed with it.
        """
        pair = self._medians(numerator, denominator)
        if pair is None or pair[1] == 0:
            return None
        a, b, rounds = pair
        entry: dict[str, Any] = {"numerator": numerator, "denominator": denominator}
        entry["ratio"] = a / b
        entry.update(_spread([x / y for x, y in rounds if y != 0]))
        mine, theirs = self.work.get(numerator), self.work.get(denominator)
        entry["unlike"] = [] if mine is None or theirs is None else differences(mine, theirs)
        self.ratios[f"{numerator} / {denominator}"] = entry
        return entry

    def difference(self, row: str, baseline: str) -> dict[str, Any] | None:
        """Difference of the medians of two rows (and per round), if both measured."""
        pair = self._medians(row, baseline)
        if pair is None:
            return None
        a, b, rounds = pair
        entry = {"row": row, "baseline": baseline, "difference": a - b}
        entry.update(_spread([x - y for x, y in rounds]))
        self.differences[f"{row} - {baseline}"] = entry
        return entry

    def _medians(self, first: str, second: str) -> tuple[float, float, list[Any]] | None:
        """The two rows' medians and their rounds side by side (none if not aligned)."""
        a, b = self.rows.get(first), self.rows.get(second)
        sa = None if a is None else a.summary
        sb = None if b is None else b.summary
        if a is None or b is None or sa is None or sb is None:
            return None
        aligned = len(a.values) == len(b.values)
        return sa.median, sb.median, list(zip(a.values, b.values, strict=True)) if aligned else []

    def to_json(self) -> dict[str, Any]:
        position = {row_id: k for k, row_id in enumerate(self.order)}
        data = asdict(self)  # a copy, the work's settings as dicts too
        del data["order"]
        data["rows"] = {
            key: self.rows[key].to_json()
            for key in sorted(self.rows, key=lambda k: position.get(k, len(position)))
        }
        return data


def _spread(paired: Sequence[float]) -> dict[str, float | None]:
    """The median, min and max of the per-round figures (``None`` without any)."""
    return {
        "paired_median": summarize(paired).median if paired else None,
        "paired_min": min(paired) if paired else None,
        "paired_max": max(paired) if paired else None,
    }


# ---------------------------------------------------------------------------- output
@dataclass
class Console:
    """Prints tables to stdout, clearing the progress bar first."""

    progress: Progress

    def __call__(self, text: str = "") -> None:
        self.progress.clear()
        print(text, flush=True)


def number(value: float) -> str:
    """Format a figure with three significant digits or so.

    >>> number(1234.5), number(123.4), number(12.34), number(1.234), number(-0.5)
    ('1,234', '123', '12.3', '1.23', '-0.50')
    """
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ratio_text(entry: Mapping[str, Any] | None) -> str:
    """A ratio with its per-round range, ``"n/a"`` when it could not be computed.

    A ratio of two contenders whose work differs says so, and where (:func:`unlike_text`).
    """
    if entry is None:
        return "n/a"
    text = f"{entry['ratio']:.2f}x"
    if entry["paired_min"] is not None and len({entry["paired_min"], entry["paired_max"]}) > 1:
        text += f" (per round {entry['paired_min']:.2f}..{entry['paired_max']:.2f})"
    unlike = unlike_text(entry)
    return f"{text}; {unlike}" if unlike else text


def unlike_text(entry: Mapping[str, Any]) -> str:
    """``"not like for like: <differences>"`` for a ratio of unlike work, else ``""``.

    >>> unlike_text({"unlike": ["affine: none vs p=1"]})
    'not like for like: affine: none vs p=1'
    >>> unlike_text({"unlike": []}), unlike_text({})
    ('', '')
    """
    unlike = entry.get("unlike") or []
    return "not like for like: " + "; ".join(unlike) if unlike else ""


def print_rows(
    out: Console,
    report: Report,
    ids: Sequence[str],
    *,
    baseline: str | Mapping[str, str] | None = None,
    label: str | None = None,
    difference: bool = False,
) -> None:
    """Print rows ``ids``: median, min..max and, optionally, against a ``baseline``.

    ``baseline`` is the row every row is compared with, or row -> its own baseline;
    ``label`` the comparison column's header (``"vs <baseline>"`` by default); with
    ``difference``, the column is the difference of the medians instead of their ratio.
    """
    unit = report.rows[ids[0]].unit
    header = f"  {'contender':54s} {unit:>10s} {'min..max':>15s}"
    if baseline is not None:
        if label is None:
            label = "vs " + (baseline if isinstance(baseline, str) else "baseline").split("/")[-1]
        header += f"  {label:>22s}"
    out(header)
    for row_id in ids:
        row = report.rows[row_id]
        s = row.summary
        if s is None:
            out(f"  {row.name:54s} {row.status + ': ' + row.reason}")
            continue
        spread = f"{number(s.low)}..{number(s.high)}"
        line = f"  {row.name:54s} {number(s.median):>10s} {spread:>15s}"
        base = baseline if isinstance(baseline, str) or baseline is None else baseline.get(row_id)
        unlike = ""
        if base is not None:
            if difference:
                entry = None if base == row_id else report.difference(row_id, base)
                text = "" if entry is None else f"{entry['difference']:+.2f}"
            else:
                entry = report.ratio(row_id, base)
                text = "" if entry is None else format(entry["ratio"], ".2f") + "x"
                unlike = "" if entry is None else unlike_text(entry)
            line += f"  {text:>22s}"
        elif baseline is not None:
            line += f"  {'':>22s}"
        if row.note:
            line += f"  [{row.note}]"
        if unlike:
            line += f"  [{unlike}]"
        out(line)


def print_header(out: Console, meta: Mapping[str, Any]) -> None:
    """Versions, threads, machine, data and how the rounds run."""
    versions, threads, machine = meta["versions"], meta["threads"], meta["machine"]
    out("rankaug throughput: side by side in one run; compare ratios, not absolute figures")
    out("  versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None))
    out("  not installed: " + (", ".join(k for k, v in versions.items() if v is None) or "none"))
    out(
        f"  threads: pinned to 1 (OMP_NUM_THREADS={threads['OMP_NUM_THREADS']}, "
        f"cv2.getNumThreads()={threads['cv2.getNumThreads']}, "
        f"torch.get_num_threads()={threads['torch.get_num_threads']}): every figure is one "
        "thread per process"
    )
    out(f"  machine: {machine['cpus']} CPUs, load average {machine['load_average_start']} at start")
    data = meta.get("data")
    if data is not None:
        out(f"  data: {data['description']}; decoded into memory first, decoding is not timed")
    out(
        f"  gc: {meta['gc_frozen_objects']} objects of the imported libraries frozen "
        "(gc.freeze) before timing"
    )
    settings = meta["settings"]
    repeats = settings["repeats"]
    out(
        f"  {repeats} round{'s' if repeats != 1 else ''} per section, contenders interleaved "
        "(keys, epoch and loaders in blocks, wrapper and mosaics one operation at a time, "
        "two contenders' order reversed at every turn, three or more shuffled, seeded); "
        "median and min..max over rounds"
    )
    out(f"  sections: {', '.join(settings['only'])}")
    out()


def print_goals(out: Console, report: Report) -> None:
    """The goals table: PASS/MISS/REFUSED/N/A, measured, target, margin (and why, for a miss)."""
    out("Goals (ratios of medians measured side by side in this run)")
    out(f"  {'':7s} {'goal':48s} {'measured':>9s} {'target':>9s}  margin")
    for goal in report.goals:
        value = goal["measured"]
        # ratios with three decimals, so that a near miss never prints as the target
        measured = "n/a" if value is None else f"{value:.3f}" if value < 10 else number(value)
        margin = "" if goal["margin"] is None else f"{goal['margin']:+.1%}"
        if goal["status"] == "MISS":
            margin += " (missed)"
        target = f"{goal['op']} {goal['target']:g}"
        out(f"  {goal['status']:7s} {goal['goal']:48s} {measured:>9s} {target:>9s}  {margin}")
        if goal["note"]:
            out(f"          {goal['note']}")
