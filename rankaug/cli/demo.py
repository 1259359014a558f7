"""``rankaug demo``: the seeds' bug, and rankaug's fix, side by side on a real DDP job.

The demo launches ``ranks`` gloo processes on this machine, each seeded with the same
seed (``torch.manual_seed`` included, see :mod:`rankaug.cli.launch`), and on each rank
builds two mosaic datasets over the same source (the built-in
:class:`~rankaug.datasets.SyntheticDetection`, or a YOLO folder with ``data``):

* ``yolov5``: :class:`~rankaug.cli.legacy.GlobalRandomMosaic`, partners from the
  global ``random`` module, as YOLOv5's ``load_mosaic``, then YOLOv5's mixup with a
  second mosaic (:class:`~rankaug.cli.legacy_mixup.SeededAlikeMixUp`: partner and
  ratio drawn as from the generators PyTorch seeds alike on every rank);
* ``rankaug``: :class:`rankaug.MosaicDataset`, partners from the rankaug key, then
  :class:`rankaug.mix.MixUpDataset` over it (YOLOX's recipe), partner and ratio from
  the key.

Every sample is mixed (``p=1``; YOLOv5's own ``mixup`` hyperparameter is 0 to 0.15), so
each step shows a mixup beside its mosaic.

Each goes through a ``DistributedSampler`` and a DataLoader with ``workers`` workers
for ``epochs`` epochs, exactly as training does. The YOLOv5-style side calls
``sampler.set_epoch(epoch)`` every epoch, as YOLOv5's trainer does. rankaug's side is
the recommended loop and nothing else::

    DataLoader(mosaic, sampler=EpochSampler(DistributedSampler(mosaic)), ...)

every index carries the epoch of its pass and nobody calls ``set_epoch`` (the demo
checks that every index of pass ``e`` carried epoch ``e``). The demo prints, per
epoch, every rank's mosaics (main index and partner indices) and mixups (partner and
ratio), counts the mosaics whose partners, and the mixups whose partner and ratio,
repeat on another rank at the same step, and writes one contact sheet per approach
(rows = ranks, columns = the first samples of epoch 0).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from torch.utils.data import DataLoader, DistributedSampler, Subset

from rankaug.cli.failure import Failure
from rankaug.cli.launch import launch, only_sample, progress
from rankaug.cli.legacy import GlobalRandomMosaic
from rankaug.cli.legacy_mixup import SeededAlikeMixUp
from rankaug.cli.sheet import caption, contact_sheet, render_tile, write_png
from rankaug.cli.views import MixupViews
from rankaug.datasets import SyntheticDetection, YoloFolder
from rankaug.epoch import index_epoch
from rankaug.mix import MixUpDataset
from rankaug.mosaic import MosaicDataset
from rankaug.sampler import EpochSampler

__all__ = [
    "APPROACHES",
    "DemoConfig",
    "DemoJob",
    "DemoResult",
    "demo_source",
    "run_demo",
]

#: ``name -> (title, sheet file stem)``, in the order the demo runs them.
APPROACHES: dict[str, tuple[str, str]] = {
    "yolov5": ("YOLOv5-style (global random)", "yolov5-style"),
    "rankaug": ("rankaug.MosaicDataset", "rankaug"),
}
#: ``name -> title`` of each approach's mixup, for the summary.
MIXUP_TITLES: dict[str, str] = {
    "yolov5": "YOLOv5-style (global random)",
    "rankaug": "rankaug.MixUpDataset",
}
# (epoch, step, worker, index, partners, the epoch in the mosaic's record or None,
#  the mixup's partner and ratio)
Row = tuple[int, int, int, int, tuple[int, ...], int | None, int, float]


@dataclass(frozen=True)
class DemoConfig:
    """The ``demo`` command's options (see ``rankaug demo --help``)."""

    data: str | None = None
    output: str = "rankaug-demo"
    ranks: int = 2
    workers: int = 2
    epochs: int = 2
    samples: int = 32
    size: int = 256
    columns: int = 8
    thumb: int = 160
    seed: int = 0
    start_method: Literal["fork", "spawn"] = "fork"
    progress: bool = True


def demo_source(data: str | None, samples: int, seed: int) -> Any:
    """The demo's source dataset: built-in shapes, or the first ``samples`` of a YOLO folder.

    >>> len(demo_source(None, 8, 0))
    8
    """
    if data is None:
        return SyntheticDetection(samples, image_size=(192, 256), seed=seed, masks=False)
    folder = YoloFolder(data)
    return Subset(folder, range(min(samples, len(folder))))


@dataclass(frozen=True)
class DemoJob:
    """What every rank runs: both mosaics through a DistributedSampler, all epochs."""

    config: DemoConfig

    def __call__(self, rank: int, world_size: int) -> dict[str, tuple[list[Row], list[Any]]]:
        """Return ``{approach: (rows, tiles of the first samples of epoch 0)}``."""
        config = self.config
        source = demo_source(config.data, config.samples, config.seed)
        mosaics: dict[str, Any] = {
            "yolov5": SeededAlikeMixUp(GlobalRandomMosaic(source, output_size=config.size)),
            "rankaug": MixUpDataset(
                MosaicDataset(source, seed=config.seed, output_size=config.size),
                seed=config.seed,
            ),
        }
        results: dict[str, tuple[list[Row], list[Any]]] = {}
        for name, mosaic in mosaics.items():
            shares: DistributedSampler[Any] = DistributedSampler(
                mosaic, num_replicas=world_size, rank=rank, shuffle=True, seed=config.seed
            )
            # YOLOv5's trainer calls set_epoch on its sampler; rankaug's loop needs nothing.
            by_index = name == "rankaug"
            loader: DataLoader[Any] = DataLoader(
                MixupViews(mosaic),
                sampler=EpochSampler(shares) if by_index else shares,
                batch_size=1,
                num_workers=config.workers,
                multiprocessing_context=config.start_method if config.workers > 0 else None,
                collate_fn=only_sample,
            )
            rows: list[Row] = []
            tiles: list[Any] = []
            for epoch in range(config.epochs):
                if not by_index:
                    shares.set_epoch(epoch)
                for step, item in enumerate(loader):
                    if isinstance(item, Failure):
                        raise item.error(config.data or "the demo's data", rank=rank, epoch=epoch)
                    index, worker, view, partners, keyed, mix = item
                    if by_index and index_epoch(index) != epoch:
                        raise RuntimeError(
                            f"step {step} of epoch {epoch} got index {index!r}, which carries "
                            f"epoch {index_epoch(index)}"
                        )
                    rows.append((epoch, step, worker, int(index), tuple(partners or ()), keyed,
                                 int(mix["indices"][1]), float(mix["ratio"])))  # fmt: skip
                    if epoch == 0 and step < config.columns:
                        lines = caption(rank, worker, index, view, partners)
                        tiles.append(render_tile(view, lines, config.thumb))
                progress(
                    config.progress,
                    rank,
                    f"{APPROACHES[name][0]}: epoch {epoch + 1}/{config.epochs}, "
                    f"{len(shares)} mosaics",
                )
            results[name] = (rows, tiles)
        return results


@dataclass
class ApproachResult:
    """One approach's rows on every rank, its repeat count and its sheet."""

    title: str
    rows: list[dict[str, Any]]
    repeated: int
    mosaics: int
    sheet: str
    sheet_size: tuple[int, int]
    mixups_repeated: int = 0


@dataclass
class DemoResult:
    """Everything the demo found, per approach (``--json`` prints it)."""

    config: DemoConfig
    approaches: dict[str, ApproachResult]

    def to_json(self) -> str:
        """The result as JSON."""
        config = asdict(self.config)
        config.pop("progress")
        payload = {
            "config": config,
            "approaches": {name: asdict(result) for name, result in self.approaches.items()},
        }
        return json.dumps(payload, indent=2)

    def to_text(self) -> str:
        """The tables and the summary."""
        c = self.config
        source = c.data or f"built-in SyntheticDetection({c.samples})"
        lines = [
            f"rankaug demo: {c.ranks} ranks x {c.workers} workers ({c.start_method}), "
            f"torch.manual_seed({c.seed}) on every rank, {c.epochs} epoch(s), "
            f"DistributedSampler over {source}, {c.size}x{c.size} mosaics",
        ]
        for epoch in range(c.epochs):
            lines.extend(["", *self._epoch_table(epoch)])
        lines.extend(["", "mosaics whose partners repeat on another rank at the same step:"])
        for result in self.approaches.values():
            lines.append(f"  {result.title:<30} {result.repeated:>4} of {result.mosaics}")
        lines.append("mixups whose partner and ratio repeat on another rank at the same step:")
        for name, result in self.approaches.items():
            title = MIXUP_TITLES[name]
            lines.append(f"  {title:<30} {result.mixups_repeated:>4} of {result.mosaics}")
        lines.append(
            f"contact sheets (rows = ranks, columns = the first {c.columns} mosaics of epoch 0):"
        )
        for result in self.approaches.values():
            height, width = result.sheet_size
            lines.append(f"  {result.sheet}  ({width}x{height})")
        lines.extend(
            [
                "the loops:",
                "  YOLOv5-style: DataLoader(mosaic, sampler=DistributedSampler(mosaic)), "
                "sampler.set_epoch(epoch) every epoch",
                "  rankaug:      DataLoader(mosaic, sampler=EpochSampler(DistributedSampler("
                "mosaic))), no set_epoch call",
            ]
        )
        return "\n".join(lines)

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
                texts = [
                    _cell(cells[(name, r, step)]) if (name, r, step) in cells else ""
                    for r in range(ranks)
                ]
                line += " " + " ".join(f"{text:<{width}}" for text in texts) + " |"
                texts = [
                    _mix_cell(cells[(name, r, step)]) if (name, r, step) in cells else ""
                    for r in range(ranks)
                ]
                line += " " + " ".join(f"{text:<{mix_width}}" for text in texts) + " |"
            lines.append(line)
        return lines


def _cell(row: dict[str, Any]) -> str:
    partners = " ".join(str(p) for p in row["partners"])
    return f"{row['index']}: {partners}{' *' if row['repeated'] else ''}"


def _mix_cell(row: dict[str, Any]) -> str:
    mixup = row["mixup"]
    return f"{mixup['partner']} r={mixup['ratio']:.2f}{' *' if mixup['repeated'] else ''}"


def _mark_repeats(rows: list[dict[str, Any]]) -> tuple[int, int]:
    """Mark rows whose partners (and mixups) another rank drew at the same epoch and step.

    Returns:
        How many mosaics, and how many mixups, repeat.
    """
    seen = Counter((r["epoch"], r["step"], tuple(r["partners"])) for r in rows)
    mixed = Counter((r["epoch"], r["step"], r["mixup"]["partner"], r["mixup"]["ratio"])
                    for r in rows)  # fmt: skip
    count = mixups = 0
    for row in rows:
        row["repeated"] = seen[(row["epoch"], row["step"], tuple(row["partners"]))] > 1
        mixup = row["mixup"]
        mixup["repeated"] = mixed[(row["epoch"], row["step"], mixup["partner"], mixup["ratio"])] > 1
        count += row["repeated"]
        mixups += mixup["repeated"]
    return count, mixups


def _check(config: DemoConfig) -> None:
    for name, value, low in (
        ("--ranks", config.ranks, 1),
        ("--workers", config.workers, 0),
        ("--epochs", config.epochs, 1),
        ("--samples", config.samples, 1),
        ("--size", config.size, 32),
        ("--columns", config.columns, 1),
    ):
        if value < low:
            raise ValueError(f"{name} must be at least {low}, got {value}")
    if config.data is not None and not os.path.isdir(config.data):
        raise ValueError(f"--data must be a YOLO dataset folder, got {config.data!r}")


def run_demo(config: DemoConfig) -> DemoResult:
    """Run the demo job, write the sheets, return the result.

    Raises:
        ValueError: If an option is out of range or ``--data`` is not a YOLO folder.
        rankaug.cli.launch.LaunchError: If a rank failed.
    """
    _check(config)
    try:
        demo_source(config.data, config.samples, config.seed)
    except (OSError, ValueError) as error:
        raise ValueError(f"--data {config.data!r}: {error}") from None
    per_rank = launch(DemoJob(config), config.ranks, seed=config.seed)
    output = Path(config.output)
    approaches: dict[str, ApproachResult] = {}
    for name, (title, stem) in APPROACHES.items():
        rows = [
            {
                "rank": rank,
                "epoch": epoch,
                "step": step,
                "worker": worker,
                "index": index,
                "partners": list(partners),
                "record_epoch": keyed,
                "mixup": {"partner": mix_partner, "ratio": ratio},
            }
            for rank, results in enumerate(per_rank)
            for epoch, step, worker, index, partners, keyed, mix_partner, ratio in results[name][0]
        ]
        repeated, mixups = _mark_repeats(rows)
        tiles: list[list[np.ndarray | None]] = [list(results[name][1]) for results in per_rank]
        sheet = contact_sheet(
            tiles,
            [f"rank {r}" for r in range(config.ranks)],
            f"{title}: rows = ranks, epoch 0, torch.manual_seed({config.seed}) on every rank",
            config.thumb,
        )
        path = write_png(output / f"{stem}.png", sheet)
        approaches[name] = ApproachResult(
            title, rows, repeated, len(rows), str(path), (sheet.shape[0], sheet.shape[1]), mixups
        )
    return DemoResult(config, approaches)
