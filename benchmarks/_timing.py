"""Timing helpers for the benchmarks: interleaved rounds, medians, a progress bar, peak RSS.

Nothing here imports numpy, torch or cv2, so a script can import it before it pins thread
counts. This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import contextlib
import math
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = [
    "Op",
    "alternate",
    "Progress",
    "Summary",
    "counted",
    "interleave",
    "paired_overhead",
    "paired_throughput",
    "peak_rss_mib",
    "race_both_listings",
    "summarize",
]

Op = Callable[[int], object]
"""``op(n)`` performs ``n`` operations (mosaics, samples, keys), continuing its own count."""


def counted(fn: Callable[[int], object], start: int = 0) -> Op:
    """``op(n)``: ``fn(i)``, ``fn(i + 1)``, ... ``n`` times, ``i`` counting on from ``start``.

    >>> seen = []
    >>> op = counted(seen.append)
    >>> _ = op(2), op(3)
    >>> seen
    [0, 1, 2, 3, 4]
    """
    position = [start]

    def op(n: int) -> None:
        i = position[0]
        for k in range(i, i + n):
            fn(k)
        position[0] = i + n

    return op


class Progress:
    """The run's progress bar: ``tqdm`` on stderr, where it is installed.

    It counts ``total`` units of work and draws on ``stream`` (``sys.stderr``) only when
    ``enabled``; ``None``: when the stream is a terminal, so that logs and pipes stay
    clean. Without ``tqdm`` nothing is drawn.
    """

    def __init__(
        self, total: int, *, enabled: bool | None = None, stream: TextIO | None = None
    ) -> None:
        stream = sys.stderr if stream is None else stream
        self._bar: Any = None
        if stream.isatty() if enabled is None else enabled:
            with contextlib.suppress(ImportError):
                from tqdm import tqdm

                self._bar = tqdm(total=max(int(total), 1), file=stream, leave=False)

    def set_label(self, label: str) -> None:  # the section or contender being timed
        if self._bar is not None:
            self._bar.set_description_str(label[:38])

    def advance(self, units: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(units)

    def clear(self) -> None:  # until it next draws (before printing a table)
        if self._bar is not None:
            self._bar.clear()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@dataclass(frozen=True)
class Summary:
    """The median and the range (``low``..``high``) of one figure over the rounds."""

    median: float
    low: float
    high: float


def summarize(values: Iterable[float]) -> Summary:
    """Return the median and the min..max of ``values`` (at least one: else ValueError).

    >>> summarize([3.0, 1.0, 2.0]).median
    2.0
    """
    data = tuple(float(v) for v in values)
    return Summary(statistics.median(data), min(data), max(data))


def interleave(
    ops: Mapping[str, Op],
    *,
    per_round: int,
    repeats: int,
    warmup: int,
    progress: Progress | None = None,
    label: str = "",
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Time several contenders in interleaved rounds; return seconds per operation.

    Every contender first runs ``warmup`` untimed operations. Then, in each of
    ``repeats`` rounds, every contender runs ``per_round`` operations in one block, timed
    with ``clock``; the order is the given one on even rounds and reversed on odd rounds
    (A B C, C B A, A B C, ...), so that slow drift of the machine's speed and the cost of
    going first or last hit every contender alike.

    Args:
        ops: Contender name -> :data:`Op`.
        per_round: Operations per contender per round (at least 1).
        repeats: Rounds (at least 1).
        warmup: Untimed operations per contender first.
        progress: Advanced by one unit per contender per round.
        label: Shown beside the progress bar.
        clock: The clock; ``time.thread_time`` counts only this thread's CPU time, so
            that other work on the machine does not (for single-threaded contenders).

    Returns:
        Name -> seconds per operation, one value per round.
    """
    return _rounds(ops, per_round, 1, repeats, warmup, progress, label, clock)


def alternate(
    ops: Mapping[str, Op],
    *,
    per_round: int,
    repeats: int,
    warmup: int,
    progress: Progress | None = None,
    label: str = "",
    record: dict[str, list[float]] | None = None,
    firsts: list[str] | None = None,
) -> dict[str, list[float]]:
    """Time contenders one operation at a time, alternating; return seconds per operation.

    Like :func:`interleave`, but finer: within a round the contenders take turns one
    operation each, each operation timed on its own. Two contenders alternate the order
    at every turn (A B, B A, A B, ...); three or more take each turn in a shuffled order
    (seeded: the same orders in every run), so that none always follows the same
    neighbour: what ran just before finds the caches warm or cold for what follows, and
    in a fixed order (or one reversed at every turn) the first contender is always
    preceded by itself or by the second. Drift on any scale longer than a few operations
    then hits every contender alike. Meant for operations of a millisecond or more.

    It takes :func:`interleave`'s arguments (its clock is ``time.perf_counter``), and
    fills, if given, ``record`` with every timed operation's seconds, per name, in order
    (so that operation ``k`` of two contenders can be paired), and ``firsts`` with the
    name of the contender that went first in each turn (it alone may find the data cold
    in cache).

    Returns:
        Name -> seconds per operation, one value per round.
    """
    return _rounds(ops, 1, per_round, repeats, warmup, progress, label, time.perf_counter,
                   record, firsts, shuffled=True)  # fmt: skip


def _rounds(
    ops: Mapping[str, Op],
    per_turn: int,
    turns: int,
    repeats: int,
    warmup: int,
    progress: Progress | None,
    label: str,
    clock: Callable[[], float],
    record: dict[str, list[float]] | None = None,
    firsts: list[str] | None = None,
    *,
    shuffled: bool = False,
) -> dict[str, list[float]]:
    """``repeats`` rounds of ``turns`` turns, each contender ``per_turn`` operations a turn.

    The order is reversed at every turn and every round (``shuffled``, with three or more
    contenders: drawn anew for every turn, from a fixed seed); each contender's turn is
    timed on its own (and appended to ``record``), its rounds summed per operation.
    """
    if per_turn * turns < 1 or repeats < 1:
        raise ValueError(f"per_round and repeats must be >= 1, got {per_turn * turns}, {repeats}")
    names = list(ops)
    backward = names[::-1]
    orders = random.Random(0) if shuffled and len(names) > 2 else None
    for name in names:
        if progress is not None:
            progress.set_label(f"{label}: warm-up {name}")
        if warmup > 0:
            ops[name](warmup)
    log: dict[str, list[float]] = {} if record is None else record
    for name in names:
        log.setdefault(name, [])
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        if progress is not None and turns > 1:
            progress.set_label(f"{label}: round {r + 1} of {repeats}")
        spent = dict.fromkeys(names, 0.0)
        for turn in range(turns):
            if orders is not None:
                order = orders.sample(names, len(names))
            else:
                order = names if (turn + r) % 2 == 0 else backward
            if firsts is not None:
                firsts.append(order[0])
            for name in order:
                if progress is not None and turns == 1:
                    progress.set_label(f"{label}: {name}")
                op = ops[name]
                t0 = clock()
                op(per_turn)
                elapsed = clock() - t0
                spent[name] += elapsed
                log[name].append(elapsed)
        for name in names:
            seconds[name].append(spent[name] / (per_turn * turns))
        if progress is not None:
            progress.advance(len(names))
    return seconds


def paired_overhead(
    direct: Sequence[float], wrapped: Sequence[float], direct_first: Sequence[bool]
) -> dict[str, float]:
    """The wrapper's overhead from pairs of samples that did the same work.

    Within a turn the contender that goes first may find the sample cold in cache and
    the second warm; the order alternates, so the per-sample differences form two
    groups, ``overhead - c`` and ``overhead + c``. The median of each group, averaged,
    cancels ``c``; so does the geometric mean of the two groups' median time ratios.

    Args:
        direct: Seconds of each baseline sample.
        wrapped: Seconds of the same samples through the wrapper.
        direct_first: Whether the baseline went first in each pair.

    Returns:
        ``ratio`` (wrapper rate / baseline rate), ``extra_us`` (µs per sample),
        ``cache_us`` (the advantage of going second) and ``pairs``.
    """
    groups: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for d, w, first in zip(direct, wrapped, direct_first, strict=True):
        groups[first].append((d, w))
    if not groups[True] or not groups[False]:  # a single turn: no balance possible
        groups = {True: groups[True] + groups[False], False: groups[True] + groups[False]}
    extra = [summarize(w - d for d, w in pairs).median for pairs in groups.values()]
    ratio = [summarize(d / w for d, w in pairs).median for pairs in groups.values()]
    return {
        "ratio": math.sqrt(ratio[0] * ratio[1]),
        "extra_us": (extra[0] + extra[1]) / 2 * 1e6,
        "cache_us": (extra[1] - extra[0]) / 2 * 1e6,
        "pairs": float(len(direct)),
    }


class _Halved(Progress):
    """Forwards every second unit to ``progress``: two listings fill one section's bar."""

    def __init__(self, progress: Progress) -> None:  # draws nothing itself
        self._bar = None
        self.progress, self.owed = progress, 0

    def set_label(self, label: str) -> None:
        self.progress.set_label(label)

    def advance(self, units: int = 1) -> None:
        self.owed += units
        self.progress.advance(self.owed // 2)
        self.owed %= 2


def race_both_listings(
    build: Callable[[], dict[str, Op]],
    *,
    per_round: int,
    repeats: int,
    warmup: int,
    progress: Progress | None,
    label: str,
) -> tuple[dict[str, list[float]], dict[str, list[float]], list[str]]:
    """A two-contender :func:`~benchmarks._timing.alternate` race, run in both listings.

    Which contender is listed first (warmed up first, first in the first turn) moves
    the paired figure by about 10 µs per sample here, either way, even with the turns'
    order alternating (measured: wrapper +48 µs listed second, +31 listed first, the
    same objects' A/A race ±10). So the race is run twice, each time with contenders
    freshly built by ``build`` and ``per_round // 2`` samples per round, listed one way
    and then the other, and the two runs are pooled: the listing's effect cancels.

    Returns:
        (name -> seconds per operation, one value per repeat: round k of either run,
        averaged, so a round is ``per_round`` samples as in any other race; name -> every
        operation's seconds, in order; the name that went first in each turn).
    """
    runs: list[dict[str, list[float]]] = []
    record: dict[str, list[float]] = {}
    firsts: list[str] = []
    halved = None if progress is None else _Halved(progress)
    for backward in (False, True):
        ops = build()
        names = list(ops)[::-1] if backward else list(ops)
        per_op: dict[str, list[float]] = {}
        turns: list[str] = []
        rounds = alternate(
            {name: ops[name] for name in names},
            per_round=max(1, per_round // 2),
            repeats=repeats,
            warmup=warmup,
            progress=halved,
            label=label,
            record=per_op,
            firsts=turns,
        )
        runs.append(rounds)
        for name in ops:
            record.setdefault(name, []).extend(per_op[name])
        firsts.extend(turns)
    seconds = {
        name: [(a + b) / 2 for a, b in zip(runs[0][name], runs[1][name], strict=True)]
        for name in runs[0]
    }
    return seconds, record, firsts


def paired_throughput(
    baseline: Sequence[float], contender: Sequence[float], baseline_first: Sequence[bool]
) -> dict[str, float]:
    """The rate ratio of two contenders from paired operations whose work varies.

    Operation ``k`` of the two did the same work, one right after the other, but the work
    differs from ``k`` to ``k`` (a copy-paste that pastes nothing costs little): the ratio
    is of total times, not a median of per-pair ratios, which would weigh a cheap pair as
    much as a dear one. Whoever goes first may find the data cold, so the pairs are split
    by who went first and the two groups' ratios averaged geometrically (the order
    alternates: the effect cancels).

    Args:
        baseline: Seconds of each baseline operation.
        contender: Seconds of the same operations by the contender.
        baseline_first: Whether the baseline went first in each pair.

    Returns:
        ``ratio`` (the contender's rate over the baseline's: above 1 it is faster),
        ``extra_us`` (the contender's µs per operation more, on the mean) and ``pairs``.

    >>> paired_throughput([2.0, 4.0], [1.0, 2.0], [True, False])["ratio"]
    2.0
    """
    if not baseline or len(baseline) != len(contender) or len(baseline) != len(baseline_first):
        raise ValueError("paired_throughput needs as many pairs of times as of orders, >= 1")
    totals: dict[bool, list[float]] = {}
    for base, other, first in zip(baseline, contender, baseline_first, strict=True):
        total = totals.setdefault(first, [0.0, 0.0])
        total[0] += base
        total[1] += other
    ratios = [base / other for base, other in totals.values()]
    return {
        "ratio": math.prod(ratios) ** (1.0 / len(ratios)),
        "extra_us": (sum(contender) - sum(baseline)) / len(baseline) * 1e6,
        "pairs": float(len(baseline)),
    }


def peak_rss_mib() -> dict[str, float]:
    """Peak resident memory in MiB: ``{"self": this process, "children": ...}``.

    ``children`` counts DataLoader workers once they have been shut down (the largest one,
    not their sum); it is ``getrusage(RUSAGE_CHILDREN)``.
    """
    scale = 1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0  # bytes vs KiB
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / scale
    return {"self": round(own, 1), "children": round(children, 1)}
