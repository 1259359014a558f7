"""``rankaug demo``: the seeds' bug, and rankaug's fix, side by side on a real DDP job.

The demo launches ``ranks`` gloo processes on this machine, each seeded with the same
seed (``torch.manual_seed`` included, see :mod:`rankaug.cli.launch`), and on each rank
builds two pipelines over the same source (the photographs bundled with scikit-image
when it is installed, see :mod:`rankaug.cli.photos`, else the built-in
:class:`~rankaug.datasets.SyntheticDetection`, or a YOLO folder with ``data``; a
YOLO-seg folder with ``segments`` too, its polygons drawn on the sheet):

* ``yolov5``: :class:`~rankaug.cli.legacy.GlobalRandomMosaic`, partners from the
  global ``random`` module, as YOLOv5's ``load_mosaic``, then YOLOv5's mixup with a
  second mosaic (:class:`~rankaug.cli.legacy_mixup.SeededAlikeMixUp`: partner and
  ratio drawn as from the generators PyTorch seeds alike on every rank);
* ``rankaug``: :class:`rankaug.MosaicDataset`, partners from the rankaug key, then
  :class:`rankaug.mix.MixUpDataset` over it (YOLOX's recipe), partner and ratio from
  the key.

Every sample is mixed (``p=1``; YOLOv5's own ``mixup`` hyperparameter is 0 to 0.15), so
each step shows a mixup beside its mosaic. Each pipeline goes through a
``DistributedSampler`` and a DataLoader with ``workers`` workers for ``epochs`` epochs,
as training does. The YOLOv5-style side calls ``sampler.set_epoch(epoch)`` every epoch,
as YOLOv5's trainer does; rankaug's side is the recommended loop and nothing else::

    DataLoader(mosaic, sampler=EpochSampler(DistributedSampler(mosaic)), ...)

(the demo checks that every index of pass ``e`` carried epoch ``e``). It prints a digest
of every rank's partner draws per epoch, counts the draws another rank repeats at the
same step, and writes one sheet with both approaches side by side
(:mod:`rankaug.cli.demo_sheet`); ``--steps`` prints every step's draws.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from torch.utils.data import DataLoader, Dataset, DistributedSampler, Subset

from rankaug.cli.demo_sheet import Block, DemoCell, block_title, demo_heading, demo_sheet
from rankaug.cli.demo_text import ApproachResult, DemoResult, Row, mark_repeats
from rankaug.cli.failure import Failure, load
from rankaug.cli.launch import launch, only_sample, progress
from rankaug.cli.legacy import GlobalRandomMosaic
from rankaug.cli.legacy_mixup import SeededAlikeMixUp
from rankaug.cli.options import integer, launch_options
from rankaug.cli.photos import PhotoSource, photo_folder
from rankaug.cli.sheet import write_png
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
    "add_parser",
    "demo_source",
    "run",
    "run_demo",
]

#: ``name -> (title, the mixup's title)``, in the order the demo runs them.
APPROACHES: dict[str, tuple[str, str]] = {
    "yolov5": ("YOLOv5-style (global random)", "YOLOv5-style (global random)"),
    "rankaug": ("rankaug.MosaicDataset", "rankaug.MixUpDataset"),
}
_HEADER_COLOURS = {"yolov5": (200, 30, 30), "rankaug": (20, 130, 50)}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``rankaug demo`` and its options."""
    demo = commands.add_parser(
        "demo",
        help="YOLOv5-style mosaics vs rankaug's on a real 2-rank DDP job",
        description=(
            "Launch a real DDP job on this machine (gloo, every rank with the same "
            "torch.manual_seed), run YOLOv5's mosaic and mixup (partners from global "
            "random) and rankaug's MosaicDataset and MixUpDataset side by side, the latter "
            "through EpochSampler(DistributedSampler) with no set_epoch call, print a "
            "digest of every rank's partner draws per epoch, count the draws that repeat "
            "across ranks, and write one PNG sheet with both side by side."
        ),
    )
    demo.add_argument(
        "--data", metavar="PATH", help="a YOLO folder (images/, labels/) instead of built-in data"
    )
    demo.add_argument(
        "--segments",
        action="store_true",
        help="--data is a YOLO-seg folder (polygon labels): polygons drawn on the sheet",
    )
    demo.add_argument(
        "--output",
        metavar="DIR",
        default="rankaug-demo",
        help="folder for the sheet, rankaug-demo.png (default: rankaug-demo)",
    )
    demo.add_argument("--epochs", type=integer(1, 1000), default=2, help="epochs (default: 2)")
    demo.add_argument(
        "--samples",
        type=integer(2),
        default=32,
        help="dataset size: built-in samples, or the first N images of --data (default: 32)",
    )
    demo.add_argument(
        "--size", type=integer(32, 4096), default=256, help="mosaic side in pixels (default: 256)"
    )
    demo.add_argument(
        "--columns",
        type=integer(1, 64),
        default=4,
        help="steps per approach on the sheet (default: 4)",
    )
    demo.add_argument(
        "--steps", action="store_true", help="print every step's partners, rank by rank"
    )
    demo.add_argument("--json", action="store_true", help="print the result as JSON")
    launch_options(demo, fewest_ranks=2)  # it counts draws repeated on another rank
    demo.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``rankaug demo`` with parsed arguments; return the exit code."""
    result = run_demo(
        DemoConfig(
            data=args.data,
            segments=args.segments,
            output=args.output,
            ranks=args.ranks,
            workers=args.workers,
            epochs=args.epochs,
            samples=args.samples,
            size=args.size,
            columns=args.columns,
            seed=args.seed,
            start_method=args.start_method,
            progress=not args.quiet,
            steps=args.steps,
        )
    )
    print(result.to_json() if args.json else result.to_text())
    return 0


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
    columns: int = 4
    thumb: int = 160
    seed: int = 0
    start_method: Literal["fork", "spawn"] = "fork"
    progress: bool = True
    steps: bool = False
    segments: bool = False


def demo_source(
    data: str | None, samples: int, seed: int, size: int = 256, segments: bool = False
) -> tuple[Any, str]:
    """The demo's source and its name: a YOLO folder, the photographs, or built-in shapes.

    ``segments``: read the YOLO folder's polygon labels (YOLO-seg).

    >>> source, name = demo_source(None, 8, 0)
    >>> len(source), name in ("8 bundled photographs", "built-in SyntheticDetection(8)")
    (8, True)
    """
    if data is not None:
        folder = YoloFolder(data, segments=segments)
        return Subset(folder, range(min(samples, len(folder)))), data
    photos = photo_folder()
    if photos is not None:
        return PhotoSource(photos, samples, size), f"{samples} bundled photographs"
    source = SyntheticDetection(samples, image_size=(192, 256), seed=seed, masks=False)
    return source, f"built-in SyntheticDetection({samples})"


# (index, worker, mixed image, mosaic record, mixup record, its polygons), or a failure
_Item = tuple[int, int, Any, dict[str, Any], dict[str, Any], tuple[Any, ...]]


class _Load(Dataset[_Item | Failure]):
    """Loads a mixed mosaic in a worker; hands back its image and both records."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> _Item | Failure:
        loaded = load(self.dataset, index)
        if isinstance(loaded, Failure):
            return loaded
        worker, sample = loaded
        outlines = sample.get("segments", sample.get("outlines", ()))
        return (index, worker, sample["image"], dict(sample["mosaic"]), dict(sample["mixup"]),
                tuple(outlines))  # fmt: skip


@dataclass(frozen=True)
class DemoJob:
    """What every rank runs: both pipelines through a DistributedSampler, all epochs."""

    config: DemoConfig

    def __call__(self, rank: int, world_size: int) -> dict[str, tuple[list[Row], list[DemoCell]]]:
        """Return ``{approach: (rows, the cells of the first steps of epoch 0)}``."""
        config = self.config
        source, _ = demo_source(config.data, config.samples, config.seed, config.size,
                                config.segments)  # fmt: skip
        yolo = GlobalRandomMosaic(source, output_size=config.size)
        keyed: MosaicDataset[Any] = MosaicDataset(source, seed=config.seed, output_size=config.size)
        pipelines: dict[str, tuple[Any, Any]] = {
            "yolov5": (SeededAlikeMixUp(yolo), yolo),
            "rankaug": (MixUpDataset(keyed, seed=config.seed), keyed),
        }
        return {
            name: self._one(name, mixed, mosaic, rank, world_size)
            for name, (mixed, mosaic) in pipelines.items()
        }

    def _one(
        self, name: str, mixed: Any, mosaic: Any, rank: int, world_size: int
    ) -> tuple[list[Row], list[DemoCell]]:
        config = self.config
        shares: DistributedSampler[Any] = DistributedSampler(
            mixed, num_replicas=world_size, rank=rank, shuffle=True, seed=config.seed
        )
        # YOLOv5's trainer calls set_epoch on its sampler; rankaug's loop needs nothing.
        by_index = name == "rankaug"
        loader: DataLoader[Any] = DataLoader(
            _Load(mixed),
            sampler=EpochSampler(shares) if by_index else shares,
            batch_size=1,
            num_workers=config.workers,
            multiprocessing_context=config.start_method if config.workers > 0 else None,
            collate_fn=only_sample,
        )
        rows: list[Row] = []
        cells: list[DemoCell] = []
        for epoch in range(config.epochs):
            if not by_index:
                shares.set_epoch(epoch)
            for step, item in enumerate(loader):
                if isinstance(item, Failure):
                    raise item.error(config.data or "the demo's data", rank=rank, epoch=epoch)
                index, worker, image, record, mix, outlines = item
                if by_index and index_epoch(index) != epoch:
                    raise RuntimeError(
                        f"step {step} of epoch {epoch} got index {index!r}, which carries "
                        f"epoch {index_epoch(index)}"
                    )
                indices = [int(i) for i in record["indices"]]
                rows.append((epoch, step, worker, int(index), tuple(indices[1:]),
                             record.get("epoch"), int(mix["indices"][1]),
                             float(mix["ratio"])))  # fmt: skip
                if epoch == 0 and step < config.columns:
                    regions = list(zip(indices, (tuple(w) for w in record["dst"]), strict=True))
                    again = mosaic.replay(record)
                    shown = tuple(again.get("segments", again.get("outlines", ())))
                    cells.append(DemoCell(rank, worker, int(index), again["image"], regions, image,
                                          int(mix["indices"][1]), float(mix["ratio"]), shown,
                                          outlines))  # fmt: skip
            progress(
                config.progress,
                rank,
                f"{APPROACHES[name][0]}: epoch {epoch + 1}/{config.epochs}, {len(shares)} mosaics",
            )
        return rows, cells


_SEG_HINT = " (a YOLO-seg folder: give --segments)"
_FEWEST = 2  # images: a mixup needs a partner other than the sample itself


def _check(config: DemoConfig) -> None:
    for name, value, low in (
        ("--ranks", config.ranks, 2),  # one rank repeats nothing: "0 of N" proves nothing
        ("--workers", config.workers, 0),
        ("--epochs", config.epochs, 1),
        ("--samples", config.samples, _FEWEST),
        ("--size", config.size, 32),
        ("--columns", config.columns, 1),
    ):
        if value < low:
            raise ValueError(f"{name} must be at least {low}, got {value}")
    if config.data is not None and not os.path.isdir(config.data):
        raise ValueError(f"--data must be a YOLO dataset folder, got {config.data!r}")
    if config.segments and config.data is None:
        raise ValueError("--segments reads a YOLO-seg folder: give it with --data")


def _matches(
    rows: list[dict[str, Any]], ranks: int, columns: int, draw: Callable[[dict[str, Any]], Any]
) -> list[list[int | None]]:
    """``[rank][step]``: another rank whose ``draw(row)`` equals this one's in epoch 0."""
    found = {(row["rank"], row["step"]): draw(row) for row in rows if row["epoch"] == 0}
    return [
        [
            next((o for o in range(ranks) if o != r and found.get((o, s)) == found.get((r, s))),
                 None)
            for s in range(columns)
        ]
        for r in range(ranks)
    ]  # fmt: skip


def _partners(row: dict[str, Any]) -> Any:
    return tuple(row["partners"])


def _mixup(row: dict[str, Any]) -> Any:
    return row["mixup"]["partner"], row["mixup"]["ratio"]


def run_demo(config: DemoConfig) -> DemoResult:
    """Run the demo job, write the sheet, return the result.

    Raises:
        ValueError: If an option is out of range or ``--data`` is not a YOLO folder.
        rankaug.cli.launch.LaunchError: If a rank failed.
    """
    _check(config)
    if config.data is not None:  # a bad folder fails here, once, not on every rank
        try:
            found, _ = demo_source(config.data, config.samples, config.seed, config.size,
                                   config.segments)  # fmt: skip
            images = len(found)
        except (OSError, ValueError) as error:
            hint = "" if config.segments else _SEG_HINT if "segments=True" in str(error) else ""
            raise ValueError(f"--data {config.data!r}: {error}{hint}") from None
        if images < _FEWEST:
            raise ValueError(
                f"--data {config.data!r}: a YOLO folder of {images} image(s); the demo needs "
                f"at least {_FEWEST} (a mixup needs a partner other than the sample itself)"
            )
    source = config.data or (
        f"{config.samples} bundled photographs"
        if photo_folder() is not None
        else f"built-in SyntheticDetection({config.samples})"
    )
    per_rank = launch(DemoJob(config), config.ranks, seed=config.seed)
    approaches: dict[str, ApproachResult] = {}
    blocks: list[Block] = []
    for name, (title, mix_title) in APPROACHES.items():
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
        counts = mark_repeats(rows, config.ranks)
        approaches[name] = ApproachResult(title, mix_title, rows, *counts)
        cells = [list(results[name][1]) for results in per_rank]
        columns = max(len(row) for row in cells)
        short = title.split(" ")[0].split(".")[0]
        header, compact = block_title(short, counts[1], len(rows), config.epochs)
        partners, mixups = (_matches(rows, config.ranks, columns, of) for of in (_partners, _mixup))
        blocks.append(Block(header, _HEADER_COLOURS[name], cells, partners, mixups, compact))
    sheet = demo_sheet(blocks, *demo_heading(config.ranks, config.seed, source), config.thumb)
    path = write_png(Path(config.output) / "rankaug-demo.png", sheet)
    return DemoResult(config, source, approaches, str(path), (sheet.shape[0], sheet.shape[1]))
