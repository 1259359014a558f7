"""The audit's verdicts: from fingerprints to findings, with their evidence.

The records say, for every run, epoch, rank, worker and position of the schedule,
the fingerprint of the sample loaded there. A comparison of one index at the same
position across ranks (or workers, or epochs) is flagged when identical outputs are
significantly more frequent there than for the same index at *other* positions of the
same streams: a one-sided Fisher exact test (:mod:`rankaug.cli.stats`). See
:mod:`rankaug.cli.audit` for how the schedule is built.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rankaug.cli.stats import ALPHA, Tally, evidence_lines, tally_summary
from rankaug.cli.verdict import Verdict, epochs_pass, repeat_undecided

__all__ = ["ALPHA", "EpochFrom", "Layout", "Records", "Verdict", "analyse", "epochs_pass"]

#: Where the audit's epochs come from: rankaug.EpochSampler's indices, or set_epoch.
EpochFrom = Literal["sampler", "set_epoch"]
# (run, epoch, rank, worker, position) -> fingerprint digest
Records = dict[tuple[int, int, int, int, int], str]


@dataclass(frozen=True)
class Layout:
    """Where the records come from.

    Attributes:
        ranks: Number of ranks.
        workers: DataLoader workers per rank (0: one stream per rank).
        epochs: Epochs per run.
        rerun: Whether a second run (run 1) was recorded.
        epoch_from: ``"sampler"``: the indices carried their epoch
            (:class:`rankaug.EpochSampler`) and nobody called ``set_epoch``;
            ``"set_epoch"``: plain indices, ``dataset.set_epoch`` before every epoch.
        has_set_epoch: Whether the dataset has a ``set_epoch`` method.
    """

    ranks: int
    workers: int
    epochs: int
    rerun: bool
    epoch_from: EpochFrom = "sampler"
    has_set_epoch: bool = False


Side = tuple[int, int, int]  # (epoch, rank, worker)


class _Analysis:
    def __init__(self, schedule: Sequence[int], records: Records, layout: Layout) -> None:
        self.layout = layout
        self.positions = list(schedule)
        self.records = records
        self.streams = [(r, w) for r in range(layout.ranks) for w in range(max(layout.workers, 1))]
        count = len(self.positions)
        self.twins = [
            (j, k)
            for j in range(count)
            for k in range(count)
            if j != k and self.positions[j] == self.positions[k]
        ]

    def digest(self, side: Side, position: int, run: int = 0) -> str:
        epoch, rank, worker = side
        return self.records[(run, epoch, rank, worker, position)]

    def compare(self, a: Side, b: Side) -> Tally:
        tally = Tally()
        for j, index in enumerate(self.positions):
            tally.same_total += 1
            if self.digest(a, j) == self.digest(b, j):
                tally.same += 1
                tally.examples.append((a[0], j, index))
        for j, k in self.twins:
            tally.other_total += 1
            tally.other += self.digest(a, j) == self.digest(b, k)
        return tally

    def category(self, pairs: Iterable[tuple[Any, Side, Side]]) -> tuple[Tally, dict[Any, Tally]]:
        pooled = Tally()
        by_key: dict[Any, Tally] = defaultdict(Tally)
        for key, a, b in pairs:
            tally = self.compare(a, b)
            pooled.add(tally)
            by_key[key].add(tally)
        return pooled, dict(by_key)


_TOO_FEW = (
    "not decided: too few comparisons for even a perfect repeat to be significant; "
    "raise --probe, --repeats or --epochs"
)


def _stream(rank: int, worker: int) -> str:
    return f"rank {rank} worker {worker}"


def _cross_stream(
    analysis: _Analysis, name: str, same_rank: bool, fail_text: str, what: str
) -> Verdict:
    layout = analysis.layout
    pairs = [
        ((s, t), (e, *s), (e, *t))
        for s, t in itertools.combinations(analysis.streams, 2)
        if (s[0] == t[0]) == same_rank
        for e in range(layout.epochs)
    ]
    if not pairs:
        reason = "only one worker per rank" if same_rank else "only one rank"
        return Verdict(name, "skipped", f"not checked: {reason}")
    pooled, by_key = analysis.category(pairs)
    stats = tally_summary(pooled, by_key)
    if not pooled.decisive:
        return Verdict(name, "skipped", _TOO_FEW, stats=stats)

    def label(key: Any) -> str:
        return f"{_stream(*key[0])} vs {_stream(*key[1])}"

    if pooled.flagged or any(t.flagged for t in by_key.values()):
        return Verdict(name, "fail", fail_text, evidence_lines(by_key, label), stats)
    undecided = repeat_undecided(name, pooled, by_key, stats, label)
    if undecided is not None:
        return undecided
    if pooled.same == pooled.same_total and pooled.other == pooled.other_total:
        summary = (
            f"identical across {what} at the same position, but equally at every other "
            "position: keyed per sample (or no randomness), not a duplicated stream"
        )
    elif pooled.same == 0:
        summary = f"every {what[:-1]} draws its own randomness: no identical outputs"
    else:
        summary = (
            f"identical outputs across {what} no more often at the same position "
            f"({pooled.same}/{pooled.same_total}) than at other positions "
            f"({pooled.other}/{pooled.other_total})"
        )
    evidence = [f"{len(by_key)} pair(s) of streams: {pooled.text()}"]
    return Verdict(name, "pass", summary, evidence, stats)


def _positions(analysis: _Analysis) -> Verdict:
    layout = analysis.layout
    pairs = [((e, *s), (e, *s), (e, *s)) for s in analysis.streams for e in range(layout.epochs)]
    pooled, _ = analysis.category(pairs)
    equal, total = pooled.other, pooled.other_total
    stats = {"repeats_identical": equal, "repeats_compared": total, "no_randomness": False}
    if equal == total:
        return Verdict(
            "positions",
            "info",
            "deterministic per index: the same index gives the same output at every "
            "position of a stream",
            stats=stats,
        )
    if equal == 0:
        return Verdict(
            "positions",
            "info",
            "random: the same index gives a new output at every position of a stream",
            stats=stats,
        )
    return Verdict(
        "positions",
        "info",
        f"partly random: {equal} of {total} repeats of an index within a stream were identical",
        stats=stats,
    )


def _epochs(analysis: _Analysis) -> Verdict:
    layout = analysis.layout
    if layout.epochs < 2:
        return Verdict("epochs", "skipped", "not checked: only one epoch")
    pairs = [
        (s, (e, *s), (f, *s))
        for s in analysis.streams
        for e, f in itertools.combinations(range(layout.epochs), 2)
    ]
    pooled, by_key = analysis.category(pairs)
    stats = tally_summary(pooled, by_key)
    if not pooled.decisive:
        return Verdict("epochs", "skipped", _TOO_FEW, stats=stats)
    if pooled.flagged or any(t.flagged for t in by_key.values()):
        return Verdict(
            "epochs",
            "fail",
            _replay_text(layout),
            evidence_lines(by_key, lambda key: _stream(*key)),
            stats,
        )
    undecided = repeat_undecided("epochs", pooled, by_key, stats, lambda key: _stream(*key))
    if undecided is not None:
        return undecided
    keyed = (
        "keyed by the index alone and not by the epoch the index carries"
        if layout.epoch_from == "sampler"
        else "keyed by the index alone"
    )
    return epochs_pass(pooled, stats, keyed=keyed, repeated="same-position outputs")


def _replay_text(layout: Layout) -> str:
    """The epoch replay's summary: what happened, why, and what to do in this mode."""
    what = (
        "each position repeats its output from the previous epoch, though the same index "
        "differs at other positions (workers reseeded identically at every epoch, or a "
        "random state copied into fresh workers)"
    )
    if layout.epoch_from == "sampler":
        text = (
            "augmentations replay every epoch even with EpochSampler: the dataset does "
            "not take its epoch from the index (rankaug wrappers do, from "
            f"rankaug.EpochIndex.epoch); {what}"
        )
        if layout.has_set_epoch:
            text += (
                ". It has set_epoch, which nobody calls under EpochSampler: key its draws "
                "by the index's epoch, or audit with --epoch-from set_epoch if your "
                "training loop calls set_epoch itself"
            )
        return text
    return (
        f"augmentations replay every epoch: {what}. Key the draws by epoch: "
        "rankaug's wrappers under DataLoader(..., sampler=rankaug.EpochSampler(sampler)) "
        "take it from every index (audit that loop with --epoch-from sampler)"
    )


def _all_identical(verdict: Verdict) -> bool:
    stats = verdict.stats
    return verdict.status == "skipped" or (
        stats["same_position_identical"] == stats["same_position_compared"]
    )


def _describe(positions: Verdict, ranks: Verdict, workers: Verdict, epochs: Verdict) -> None:
    """Name the kind of randomness once the other verdicts are known."""
    if positions.stats["repeats_identical"] != positions.stats["repeats_compared"]:
        return
    if _all_identical(ranks) and _all_identical(workers):
        if _all_identical(epochs):
            positions.stats["no_randomness"] = True
            where = "epoch" if epochs.status != "skipped" else "epoch (one epoch audited)"
            positions.summary = (
                "no randomness detected: every index gives the same output at every "
                f"position, rank, worker and {where} (or its randomness is keyed by the "
                "index alone)"
            )
        else:
            positions.summary = (
                "keyed per sample: within an epoch an index gives the same output at every "
                "position, rank and worker, and a new one each epoch (like rankaug's "
                "keying='sample'); ranks load different indices under a "
                "DistributedSampler, so this is not a duplicate"
            )
    elif _all_identical(workers):
        positions.summary = (
            "keyed per sample and rank: an index gives the same output at every position "
            "and worker of a rank, and another on each rank (like rankaug's "
            "keying='sample_rank')"
        )


def _reproducible(analysis: _Analysis) -> Verdict:
    layout = analysis.layout
    if not layout.rerun:
        return Verdict("reproducible", "skipped", "not checked (--no-rerun)")
    differ: list[tuple[int, int, int, int]] = []
    total = 0
    for (run, epoch, rank, worker, position), digest in analysis.records.items():
        if run != 0:
            continue
        total += 1
        if analysis.records.get((1, epoch, rank, worker, position)) != digest:
            differ.append((epoch, rank, worker, position))
    stats = {"differing": len(differ), "compared": total}
    if not differ:
        return Verdict(
            "reproducible",
            "pass",
            f"a second run in fresh processes gave the same {total} outputs",
            stats=stats,
        )
    evidence = [
        f"epoch {e}, {_stream(r, w)}, position {j} (index {analysis.positions[j]}) differs"
        for e, r, w, j in differ[:4]
    ]
    if len(differ) > 4:
        evidence.append(f"... and {len(differ) - 4} more")
    return Verdict(
        "reproducible",
        "fail",
        f"irreproducible: a second run with the same seed differs in {len(differ)} of "
        f"{total} outputs (randomness from an unseeded source: OS entropy, time, uuid, "
        "process ids)",
        evidence,
        stats,
    )


def analyse(layout: Layout, schedule: Sequence[int], records: Records) -> list[Verdict]:
    """Turn fingerprints into verdicts (see the module docstring).

    Args:
        layout: The ranks, workers and epochs the records come from.
        schedule: The index at each position of the schedule.
        records: ``(run, epoch, rank, worker, position) -> digest`` for every sample.

    Returns:
        Verdicts on ranks, workers, positions, epochs and reproducibility.

    >>> layout = Layout(ranks=2, workers=0, epochs=1, rerun=False)
    >>> schedule = [5, 6, 7, 8, 9, 10, 11, 12] * 2
    >>> bug = {(0, 0, r, 0, j): f"draw {j}" for r in range(2) for j in range(16)}
    >>> [(v.name, v.status) for v in analyse(layout, schedule, bug)]
    [('ranks', 'fail'), ('workers', 'skipped'), ('positions', 'info'),
     ('epochs', 'skipped'), ('reproducible', 'skipped')]
    """
    analysis = _Analysis(schedule, records, layout)
    ranks = _cross_stream(
        analysis,
        "ranks",
        same_rank=False,
        fail_text=(
            "duplicated random streams across ranks: at the same position the ranks "
            "produce identical outputs for an index that differs at other positions, so "
            "every rank replays the same random draws (the seeds' bug: random state "
            "seeded or copied alike on every rank, e.g. DataLoader workers seeded from the "
            "same torch.manual_seed)"
        ),
        what="ranks",
    )
    workers = _cross_stream(
        analysis,
        "workers",
        same_rank=True,
        fail_text=(
            "duplicated random streams across workers: at the same position the workers "
            "of one rank produce identical outputs for an index that differs at other "
            "positions (a random state copied into every worker, or a worker_init_fn that "
            "ignores the worker id)"
        ),
        what="workers",
    )
    positions = _positions(analysis)
    epochs = _epochs(analysis)
    _describe(positions, ranks, workers, epochs)
    return [ranks, workers, positions, epochs, _reproducible(analysis)]
