"""The audit's verdicts on a stream: the same sample id across ranks, workers, epochs, runs.

Over a stream (:mod:`rankaug.cli.stream_probe`) the audit cannot load one index at
chosen positions; it matches samples by id instead. For two passes (two ranks, two
workers, two epochs) it counts the samples both read **at the same position** and how
many of those gave identical outputs. The baseline, how often one sample gives the same
output when the draws are *not* aligned, is the same sample in two consecutive passes
of one process, plus any sample two passes read at different positions. The test is
the map-style audit's (:mod:`rankaug.cli.stats`).

Two limits, said in the verdicts: passes that share no sample (a stream split by node
or by worker) cannot be compared; and when every pass reads the same samples in the
same order, identical outputs across ranks are what a duplicated random stream gives
and also what keying by the sample id alone gives (rankaug's ``keying="sample"``,
harmless once the ranks read disjoint shards). The audit reports the second for a
rankaug streaming wrapper that declares ``keying="sample"``, the first otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rankaug.cli.stats import Tally, evidence_lines, tally_summary
from rankaug.cli.stream_probe import BASELINE_EPOCH, StreamRows
from rankaug.cli.verdict import Verdict, epochs_pass, repeat_undecided

__all__ = ["StreamLayout", "StreamRecords", "analyse_stream", "stream_records_of"]

Side = tuple[int, int, int, int]  # (run, epoch, rank, worker)
# side -> sample id -> (position in the pass, digest)
StreamRecords = dict[Side, dict[Any, tuple[int, str]]]


@dataclass(frozen=True)
class StreamLayout:
    """Where a stream's records come from.

    Attributes:
        ranks: Number of ranks.
        workers: DataLoader workers per rank (0: the rank process reads).
        epochs: Epochs per run.
        rerun: Whether a second run (run 1) was recorded.
        keyed_by_sample: Whether the stream is a rankaug streaming wrapper with
            ``keying="sample"``.
    """

    ranks: int
    workers: int
    epochs: int
    rerun: bool
    keyed_by_sample: bool = False


def stream_records_of(run: int, rank: int, rows: StreamRows, into: StreamRecords) -> None:
    """Add one rank's rows of one run to ``into``."""
    for epoch, worker, position, sample_id, digest in rows:
        into.setdefault((run, epoch, rank, worker), {})[sample_id] = (position, digest)


def _compare(a: dict[Any, tuple[int, str]], b: dict[Any, tuple[int, str]], epoch: int) -> Tally:
    tally = Tally()
    for sample_id, (j, digest) in a.items():
        if sample_id not in b:
            continue
        k, other = b[sample_id]
        if j == k:
            tally.same_total += 1
            if digest == other:
                tally.same += 1
                tally.examples.append((epoch, j, sample_id))
        else:
            tally.other_total += 1
            tally.other += digest == other
    return tally


class _Analysis:
    def __init__(self, layout: StreamLayout, records: StreamRecords) -> None:
        self.layout = layout
        self.records = records
        self.streams = [(r, w) for r in range(layout.ranks) for w in range(max(layout.workers, 1))]
        self.baseline = Tally()
        for rank in range(layout.ranks):
            first = records.get((0, BASELINE_EPOCH, rank, 0), {})
            second = records.get((0, BASELINE_EPOCH - 1, rank, 0), {})
            for sample_id, (_, digest) in first.items():
                if sample_id in second:
                    self.baseline.other_total += 1
                    self.baseline.other += digest == second[sample_id][1]

    def side(self, epoch: int, rank: int, worker: int, run: int = 0) -> dict[Any, tuple[int, str]]:
        return self.records.get((run, epoch, rank, worker), {})

    def category(self, pairs: Iterable[tuple[Any, Side, Side]]) -> tuple[Tally, dict[Any, Tally]]:
        pooled = Tally()
        by_key: dict[Any, Tally] = {}
        for key, (_, e, r, w), (_, f, s, v) in pairs:
            tally = _compare(self.side(e, r, w), self.side(f, s, v), e)
            pooled.add(tally)
            by_key.setdefault(key, Tally()).add(tally)
        for tally in (pooled, *by_key.values()):
            tally.other += self.baseline.other
            tally.other_total += self.baseline.other_total
        return pooled, by_key


def _stream(rank: int, worker: int) -> str:
    return f"rank {rank} worker {worker}"


_TOO_FEW = (
    "not decided: too few samples compared for even a perfect repeat to be significant; "
    "raise --probe, --repeats or --epochs"
)
_NO_BASELINE = (
    "not decided: no baseline: no sample came in both baseline passes of a rank process, "
    "nor at different positions of the passes compared, so nothing shows whether a sample "
    "gives a new output when the draws are not aligned (a stream read in a new order every "
    "pass, as from a shuffle buffer over a large pool)"
)


def _undecided(name: str, pooled: Tally, stats: dict[str, Any]) -> Verdict | None:
    """The "not decided" verdict when the counts cannot show a replay, else ``None``."""
    if pooled.other_total == 0:
        return Verdict(name, "skipped", _NO_BASELINE, stats=stats)
    if not pooled.decisive:
        return Verdict(name, "skipped", _TOO_FEW, stats=stats)
    return None


def _cross(analysis: _Analysis, name: str, same_rank: bool, what: str) -> Verdict:
    layout = analysis.layout
    pairs = [
        ((s, t), (0, e, *s), (0, e, *t))
        for s, t in itertools.combinations(analysis.streams, 2)
        if (s[0] == t[0]) == same_rank
        for e in range(layout.epochs)
    ]
    if not pairs:
        reason = "only one worker per rank" if same_rank else "only one rank"
        return Verdict(name, "skipped", f"not checked: {reason}")
    pooled, by_key = analysis.category(pairs)
    stats = tally_summary(pooled, by_key)
    if pooled.same_total == 0:
        split = "by worker" if same_rank else "by node (rank)"
        hint = "" if same_rank else (
            "; to compare the ranks' draws, audit a factory that builds the stream without "
            "the node split (webdataset: nodesplitter=None), so every rank reads the same "
            "samples"
        )  # fmt: skip
        return Verdict(
            name,
            "skipped",
            f"not checked: the {what} read no sample at the same position of their passes "
            f"(the stream is split {split}){hint}",
            stats=stats,
        )
    if undecided := _undecided(name, pooled, stats):
        return undecided

    def label(key: Any) -> str:
        return f"{_stream(*key[0])} vs {_stream(*key[1])}"

    evidence = evidence_lines(by_key, label, item="sample")
    if pooled.flagged or any(t.flagged for t in by_key.values()):
        if layout.keyed_by_sample and pooled.same == pooled.same_total:
            return Verdict(
                name,
                "pass",
                f"identical across {what} for the same sample in the same epoch, as the "
                "wrapper's keying='sample' declares (keyed by the sample id, whatever the "
                f"topology; the {what} read the same samples in the same order here, which "
                "a stream split by node never does)",
                evidence,
                stats,
            )
        return Verdict(
            name,
            "fail",
            f"duplicated random streams across {what}: the same sample at the same position "
            f"of their passes gives identical outputs, though a second pass in one process "
            f"gives it a new one, so the {what} replay the same random draws (random state "
            f"seeded or copied alike: e.g. a transform's own seed, or workers seeded from the "
            f"same torch.manual_seed). Every pass read its samples in the same order, so the "
            f"draws may also be keyed by the sample id alone, harmless only when the {what} "
            "read disjoint samples",
            evidence,
            stats,
        )
    if not layout.keyed_by_sample and (  # keying='sample' declares the repeat
        found := repeat_undecided(name, pooled, by_key, stats, label, item="sample")
    ):
        return found
    if pooled.same == 0:
        summary = f"every {what[:-1]} draws its own randomness: no identical outputs"
    else:
        summary = (
            f"identical outputs across {what} no more often for the same sample at the same "
            f"position ({pooled.same}/{pooled.same_total}) than unaligned "
            f"({pooled.other}/{pooled.other_total})"
        )
    evidence = [f"{len(by_key)} pair(s) of passes: {pooled.text('sample')}"]
    return Verdict(name, "pass", summary, evidence, stats)


def _epochs(analysis: _Analysis) -> Verdict:
    layout = analysis.layout
    if layout.epochs < 2:
        return Verdict("epochs", "skipped", "not checked: only one epoch")
    pairs = [
        (s, (0, e, *s), (0, f, *s))
        for s in analysis.streams
        for e, f in itertools.combinations(range(layout.epochs), 2)
    ]
    pooled, by_key = analysis.category(pairs)
    stats = tally_summary(pooled, by_key)
    if pooled.same_total == 0:
        return Verdict(
            "epochs",
            "skipped",
            "not checked: no sample came at the same position of two epochs (the stream "
            "reshuffles every epoch)",
            stats=stats,
        )
    if undecided := _undecided("epochs", pooled, stats):
        return undecided
    if pooled.flagged or any(t.flagged for t in by_key.values()):
        return Verdict(
            "epochs",
            "fail",
            "augmentations replay every epoch: each sample repeats its output from the "
            "previous epoch, though a second pass in one process gives it a new one (random "
            "state copied into fresh workers every epoch, or reseeded alike)",
            evidence_lines(by_key, lambda key: _stream(*key), item="sample"),
            stats,
        )
    if found := repeat_undecided(
        "epochs", pooled, by_key, stats, lambda key: _stream(*key), item="sample"
    ):
        return found
    return epochs_pass(pooled, stats, keyed="keyed by the sample alone", repeated="samples")


def _positions(analysis: _Analysis) -> Verdict:
    base = analysis.baseline
    stats = {"repeats_identical": base.other, "repeats_compared": base.other_total,
             "no_randomness": False}  # fmt: skip
    if base.other_total == 0:
        text = (
            "no sample came in both baseline passes of a rank process (an empty stream, or "
            "one read in a new order every pass)"
        )
    elif base.other == base.other_total:
        text = (
            "deterministic per sample: a second pass in one process repeats every sample's output"
        )
    elif base.other == 0:
        text = "random: a second pass in one process gives every sample a new output"
    else:
        text = (
            f"partly random: {base.other} of {base.other_total} samples repeated their output "
            "in a second pass in one process"
        )
    return Verdict("positions", "info", text, stats=stats)


def _same(verdict: Verdict) -> bool:
    stats = verdict.stats
    return (
        verdict.status == "skipped"
        or stats["same_position_identical"] == stats["same_position_compared"]
    )


def _reproducible(analysis: _Analysis) -> Verdict:
    if not analysis.layout.rerun:
        return Verdict("reproducible", "skipped", "not checked (--no-rerun)")
    differ: list[str] = []
    total = 0
    for (run, epoch, rank, worker), samples in sorted(analysis.records.items(), key=str):
        if run != 0 or epoch < 0:
            continue
        again = analysis.records.get((1, epoch, rank, worker), {})
        for sample_id, found in samples.items():
            total += 1
            if again.get(sample_id) != found:
                differ.append(f"epoch {epoch}, {_stream(rank, worker)}, sample {sample_id} differs")
    stats = {"differing": len(differ), "compared": total}
    if not differ:
        return Verdict(
            "reproducible", "pass",
            f"a second run in fresh processes gave the same {total} outputs", stats=stats,
        )  # fmt: skip
    evidence = differ[:4] + ([f"... and {len(differ) - 4} more"] if len(differ) > 4 else [])
    return Verdict(
        "reproducible",
        "fail",
        f"irreproducible: a second run with the same seed differs in {len(differ)} of "
        f"{total} outputs (randomness from an unseeded source: OS entropy, time, a "
        "transform without a seed)",
        evidence,
        stats,
    )


def analyse_stream(layout: StreamLayout, records: StreamRecords) -> list[Verdict]:
    """Turn a stream's fingerprints into verdicts (see the module docstring).

    Args:
        layout: The ranks, workers and epochs the records come from.
        records: ``(run, epoch, rank, worker) -> {sample id: (position, digest)}``;
            epochs ``-1`` and ``-2`` are each rank's two baseline passes.

    Returns:
        Verdicts on ranks, workers, positions (the baseline), epochs, reproducibility.

    >>> layout = StreamLayout(ranks=2, workers=0, epochs=1, rerun=False)
    >>> ids = range(24)
    >>> bug = {(0, 0, r, 0): {i: (i, f"draw {i}") for i in ids} for r in range(2)}
    >>> bug.update({(0, p, r, 0): {i: (i, f"pass {p}, {i}") for i in ids}
    ...             for p in (-1, -2) for r in range(2)})
    >>> [(v.name, v.status) for v in analyse_stream(layout, bug)]
    [('ranks', 'fail'), ('workers', 'skipped'), ('positions', 'info'),
     ('epochs', 'skipped'), ('reproducible', 'skipped')]
    """
    analysis = _Analysis(layout, records)
    ranks = _cross(analysis, "ranks", same_rank=False, what="ranks")
    workers = _cross(analysis, "workers", same_rank=True, what="workers")
    positions = _positions(analysis)
    epochs = _epochs(analysis)
    base = analysis.baseline
    if (
        base.other_total
        and base.other == base.other_total
        and all(_same(v) for v in (ranks, workers, epochs))
    ):
        positions.stats["no_randomness"] = True
        positions.summary = (
            "no randomness detected: every sample gives the same output in every pass, "
            "rank, worker and epoch (or its randomness is keyed by the sample alone)"
        )
    return [ranks, workers, positions, epochs, _reproducible(analysis)]
