"""What the demo prints: a digest per epoch and rank, the counts, the sheet, the loops.

A rank's *digest* hashes its partner draws of one epoch (every mosaic's partners, every
mixup's partner and ratio, in step order): equal digests on two ranks mean the ranks drew
the same augmentations, the seeds' bug. ``--steps`` adds every step's draws, rank by
rank; ``--json`` gives everything as JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankaug.cli.demo import DemoConfig

__all__ = ["ApproachResult", "DemoResult", "Row", "digest", "mark_repeats"]

# (epoch, step, worker, index, partners, the epoch in the mosaic's record or None,
#  the mixup's partner and ratio)
Row = tuple[int, int, int, int, tuple[int, ...], int | None, int, float]


@dataclass
class ApproachResult:
    """One approach's rows on every rank and its repeat counts.

    Attributes:
        title: The mosaic's name.
        mix_title: The mixup's name.
        rows: One dict per rank and step (``rank``, ``epoch``, ``step``, ``worker``,
            ``index``, ``partners``, ``record_epoch``, ``mixup``, ``repeated``).
        repeated: Mosaics whose partners another rank drew at the same step.
        everywhere: Mosaics whose partners every rank drew at the same step.
        mixups_repeated: Mixups whose partner and ratio another rank drew there.
    """

    title: str
    mix_title: str
    rows: list[dict[str, Any]]
    repeated: int
    everywhere: int
    mixups_repeated: int

    @property
    def mosaics(self) -> int:
        """The number of mosaics (rows)."""
        return len(self.rows)


def mark_repeats(rows: list[dict[str, Any]], ranks: int) -> tuple[int, int, int]:
    """Mark rows whose partners (and mixups) another rank drew at the same epoch and step.

    Returns:
        How many mosaics repeat on another rank, on every rank, and how many mixups
        repeat on another rank.

    >>> rows = [{"epoch": 0, "step": 0, "partners": [1, 2], "mixup": {"partner": 3,
    ...          "ratio": 0.5}} for _ in range(2)]
    >>> mark_repeats(rows, 2), rows[0]["repeated"]
    ((2, 2, 2), True)
    """
    seen = Counter((r["epoch"], r["step"], tuple(r["partners"])) for r in rows)
    mixed = Counter((r["epoch"], r["step"], r["mixup"]["partner"], r["mixup"]["ratio"])
                    for r in rows)  # fmt: skip
    count = everywhere = mixups = 0
    for row in rows:
        times = seen[(row["epoch"], row["step"], tuple(row["partners"]))]
        row["repeated"] = times > 1
        mixup = row["mixup"]
        mixup["repeated"] = mixed[(row["epoch"], row["step"], mixup["partner"], mixup["ratio"])] > 1
        count += row["repeated"]
        everywhere += ranks > 1 and times == ranks
        mixups += mixup["repeated"]
    return count, everywhere, mixups


def digest(rows: list[dict[str, Any]]) -> str:
    """Six hex digits over the rows' partner draws (partners, mixup partner and ratio).

    >>> digest([{"step": 0, "partners": [1, 2, 3], "mixup": {"partner": 4, "ratio": 0.5}}])
    '32bca1'
    """
    draws = [
        (row["partners"], row["mixup"]["partner"], round(row["mixup"]["ratio"], 9))
        for row in sorted(rows, key=lambda row: row["step"])
    ]
    return hashlib.blake2b(repr(draws).encode(), digest_size=3).hexdigest()


@dataclass
class DemoResult:
    """Everything the demo found (``--json`` prints it)."""

    config: DemoConfig
    source: str
    approaches: dict[str, ApproachResult]
    sheet: str
    sheet_size: tuple[int, int]

    def to_json(self) -> str:
        """The result as JSON."""
        config = asdict(self.config)
        config.pop("progress")
        approaches = {
            name: {**asdict(result), "mosaics": result.mosaics}
            for name, result in self.approaches.items()
        }
        payload = {
            "config": config,
            "source": self.source,
            "sheet": self.sheet,
            "sheet_size": list(self.sheet_size),
            "approaches": approaches,
        }
        return json.dumps(payload, indent=2)

    def to_text(self) -> str:
        """The digests, the counts, the sheet and the loops (and ``--steps``' tables)."""
        c = self.config
        lines = [
            f"rankaug demo: {c.ranks} ranks x {c.workers} workers ({c.start_method}), "
            f"torch.manual_seed({c.seed}) on every rank, {c.epochs} epoch(s), "
            f"DistributedSampler over {self.source}, {c.size}x{c.size} mosaics, each mixed "
            "with a second",
            "each rank's partner draws per epoch (digest of its mosaics' partners and "
            "mixups' partners and ratios; '= rank N': the same draws as rank N):",
        ]
        lines.extend(self._digests())
        if c.steps:
            for epoch in range(c.epochs):
                lines.extend(["", *self._epoch_table(epoch)])
            lines.append("")
        lines.append("mosaics whose partners repeat on another rank at the same step:")
        for result in self.approaches.values():
            lines.append(f"  {result.title:<30} {result.repeated:>4} of {result.mosaics}")
        lines.append("mixups whose partner and ratio repeat on another rank at the same step:")
        for result in self.approaches.values():
            lines.append(
                f"  {result.mix_title:<30} {result.mixups_repeated:>4} of {result.mosaics}"
            )
        height, width = self.sheet_size
        lines.extend(
            [
                f"sheet: {self.sheet} ({width}x{height}; YOLOv5-style left, rankaug right, "
                f"rows = ranks, {self._shown()} of epoch 0)",
                "the loops:",
                "  YOLOv5-style: DataLoader(mosaic, sampler=DistributedSampler(mosaic)), "
                "sampler.set_epoch(epoch) every epoch",
                "  rankaug:      DataLoader(mosaic, sampler=EpochSampler(DistributedSampler("
                "mosaic))), no set_epoch call",
            ]
        )
        return "\n".join(lines)

    def _shown(self) -> str:
        """The steps the sheet shows: ``--columns``, or all of a shorter epoch 0."""
        steps = 1 + max(
            (row["step"] for result in self.approaches.values() for row in result.rows
             if row["epoch"] == 0), default=-1,
        )  # fmt: skip
        if steps <= self.config.columns:
            return f"its {steps} step{'s' * (steps != 1)}"
        return f"the first {self.config.columns} steps"

    def _digests(self) -> list[str]:
        lines = []
        for epoch in range(self.config.epochs):
            for rank in range(self.config.ranks):
                line = f"  epoch {epoch} rank {rank}:"
                for name, result in self.approaches.items():
                    found = {
                        r: digest([x for x in result.rows if (x["epoch"], x["rank"]) == (epoch, r)])
                        for r in range(rank + 1)
                    }
                    same = next((r for r in range(rank) if found[r] == found[rank]), None)
                    mark = "" if same is None else f" = rank {same}"
                    label = "YOLOv5-style" if name == "yolov5" else name
                    line += f"  {label} {found[rank]}{mark:<10}"
                lines.append(line.rstrip())
        return lines

    def _epoch_table(self, epoch: int) -> list[str]:
        """One line per step: the worker, then every rank's mosaic for each approach."""
        ranks = self.config.ranks
        cells: dict[tuple[str, int, int], dict[str, Any]] = {}
        workers: dict[int, int] = {}
        for name, result in self.approaches.items():
            for row in result.rows:
                if row["epoch"] == epoch:
                    cells[(name, row["rank"], row["step"])] = row
                    workers[row["step"]] = row["worker"]
        width = max([14, *(len(_cell(row)) for row in cells.values())])
        mix_width = max([10, *(len(_mix_cell(row)) for row in cells.values())])
        header, sub = f"{'step':>4} {'wkr':>3} |", f"{'':>8} |"
        for result in self.approaches.values():
            block = " ".join(f"{'rank ' + str(r):<{width}}" for r in range(ranks))
            mixes = " ".join(f"{'rank ' + str(r):<{mix_width}}" for r in range(ranks))
            header += f" {result.title:<{len(block)}} | {'mixup':<{len(mixes)}} |"
            sub += f" {block} | {mixes} |"
        lines = [
            f"epoch {epoch}: each mosaic as 'main: partners', each mixup as 'partner r=ratio'; "
            "'*' = another rank has the same at this step",
            header,
            sub,
        ]
        for step in sorted(workers):
            line = f"{step:>4} {workers[step]:>3} |"
            for name in self.approaches:
                for show, size in ((_cell, width), (_mix_cell, mix_width)):
                    texts = [
                        show(cells[(name, r, step)]) if (name, r, step) in cells else ""
                        for r in range(ranks)
                    ]
                    line += " " + " ".join(f"{text:<{size}}" for text in texts) + " |"
            lines.append(line)
        return lines


def _cell(row: dict[str, Any]) -> str:
    partners = " ".join(str(p) for p in row["partners"])
    return f"{row['index']}: {partners}{' *' if row['repeated'] else ''}"


def _mix_cell(row: dict[str, Any]) -> str:
    mixup = row["mixup"]
    return f"{mixup['partner']} r={mixup['ratio']:.2f}{' *' if mixup['repeated'] else ''}"
