"""``rankaug show``: a contact sheet of what every rank loads from any dataset.

Each rank (a fresh process seeded like a real DDP launch, see :mod:`rankaug.cli.launch`)
loads ``samples`` samples through a DataLoader with ``workers`` workers, and the
sheet shows them, one row per rank, boxes drawn. With ``sampler="distributed"`` each
rank loads its own share from a ``DistributedSampler`` (what every GPU sees in
training: in the seeds' bug, mosaics with the same partner tiles); with
``sampler="same"`` every rank loads the same indices ``0, 1, 2...``, so a column of
identical thumbnails shows identical random draws at a glance. Either way the indices
come through :class:`rankaug.EpochSampler` and carry ``epoch``, as in the recommended
training loop; a dataset with a ``set_epoch`` of its own is also given ``epoch``.
Samples of another layout are read with ``keys`` or ``adapter`` (see
:mod:`rankaug.cli.adapter`); a sample that fails stops the command with one line naming
it (see :mod:`rankaug.cli.failure`).
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from torch.utils.data import DataLoader, DistributedSampler

from rankaug import checks, nesting
from rankaug.boxes import check_box_format
from rankaug.cli.adapter import build_adapter, reader_text
from rankaug.cli.failure import Failure
from rankaug.cli.launch import keep_as_is, launch, progress
from rankaug.cli.options import (
    TARGET_HELP,
    box_format_option,
    integer,
    launch_options,
    reader_options,
)
from rankaug.cli.output import check_output, output_error
from rankaug.cli.sheet import caption, contact_sheet, render_tile, write_png
from rankaug.cli.target import build_dataset
from rankaug.cli.views import SheetViews
from rankaug.keyed import KeyedDataset
from rankaug.sampler import EpochSampler

__all__ = ["ShowConfig", "ShowJob", "add_parser", "box_format_of", "run", "run_show"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``rankaug show`` and its options."""
    show = commands.add_parser(
        "show",
        help="PNG contact sheet of what every rank loads",
        description=(
            "Run TARGET's dataset on every rank as a DDP launch would and write a PNG "
            "contact sheet: rows = ranks, columns = samples, boxes drawn."
        ),
    )
    show.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    show.add_argument(
        "--output",
        metavar="FILE",
        default="rankaug-show.png",
        help="the PNG to write (default: rankaug-show.png)",
    )
    show.add_argument(
        "--samples", type=integer(1, 64), default=8, help="samples per rank (default: 8)"
    )
    show.add_argument(
        "--epoch",
        type=integer(0, 2**32 - 1),
        default=0,
        help="the epoch to show (default: 0)",
    )
    show.add_argument(
        "--sampler",
        choices=("distributed", "same"),
        default="distributed",
        help=(
            "distributed: each rank's DistributedSampler share, as in training; same: "
            "indices 0, 1, 2... on every rank, so identical columns mean identical draws "
            "(default: distributed)"
        ),
    )
    box_format_option(show)
    show.add_argument(
        "--thumb", type=integer(32, 1024), default=160, help="thumbnail side (default: 160)"
    )
    reader_options(show, "the sheet shows its image, bboxes and labels")
    launch_options(show)
    show.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``rankaug show`` with parsed arguments; return the exit code."""
    path, (height, width), columns = run_show(
        ShowConfig(
            target=args.target,
            output=args.output,
            ranks=args.ranks,
            workers=args.workers,
            start_method=args.start_method,
            seed=args.seed,
            samples=args.samples,
            epoch=args.epoch,
            sampler=args.sampler,
            box_format=args.box_format,
            thumb=args.thumb,
            progress=not args.quiet,
            adapter=args.adapter,
            keys=args.keys,
        )
    )
    plural = "" if columns == 1 else "s"
    print(f"wrote {path} ({width}x{height}: {args.ranks} rank rows, {columns} column{plural})")
    return 0


def box_format_of(dataset: Any) -> str:
    """The ``box_format`` of ``dataset`` or of the first dataset inside it; else pascal_voc.

    >>> from rankaug.datasets import SyntheticDetection
    >>> box_format_of(SyntheticDetection(2, box_format="yolo"))
    'yolo'
    >>> box_format_of([])
    'pascal_voc'
    """
    for candidate in (dataset, *nesting.walk(dataset, KeyedDataset)):
        found = getattr(candidate, "box_format", None)
        if isinstance(found, str):
            return found
    return "pascal_voc"


@dataclass(frozen=True)
class ShowConfig:
    """The ``show`` command's options (see ``rankaug show --help``)."""

    target: str
    output: str = "rankaug-show.png"
    ranks: int = 2
    workers: int = 2
    start_method: Literal["fork", "spawn"] = "fork"
    seed: int = 0
    samples: int = 8
    epoch: int = 0
    sampler: Literal["distributed", "same"] = "distributed"
    box_format: str | None = None
    thumb: int = 160
    progress: bool = True
    adapter: str | None = None
    keys: str | None = None

    @property
    def reader(self) -> str:
        """How samples are read, for messages (:func:`~rankaug.cli.adapter.reader_text`)."""
        return reader_text(self.adapter, self.keys)


@dataclass(frozen=True)
class ShowJob:
    """What every rank runs: load its samples and render their tiles."""

    config: ShowConfig

    def __call__(self, rank: int, world_size: int) -> list[np.ndarray]:
        """Return this rank's tiles, in loading order."""
        config = self.config
        dataset = build_dataset(config.target)
        adapter = build_adapter(config.adapter, config.keys)
        fmt = config.box_format or box_format_of(dataset)
        set_epoch = getattr(dataset, "set_epoch", None)
        if callable(set_epoch):
            set_epoch(config.epoch)
        if config.sampler == "same":
            indices: Any = range(min(config.samples, len(dataset)))
        else:
            indices = DistributedSampler(
                dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=config.seed
            )
        order = list(itertools.islice(EpochSampler(indices, epoch=config.epoch), config.samples))
        loader: DataLoader[Any] = DataLoader(
            SheetViews(dataset, fmt, adapter, config.reader),
            sampler=order,
            batch_size=None,
            num_workers=config.workers,
            multiprocessing_context=config.start_method if config.workers > 0 else None,
            collate_fn=keep_as_is,
        )
        tiles = []
        for item in loader:
            if isinstance(item, Failure):
                raise item.error(config.target, rank=rank, epoch=config.epoch)
            index, worker, view, partners, _ = item
            tiles.append(
                render_tile(view, caption(rank, worker, index, view, partners), config.thumb)
            )
        progress(config.progress, rank, f"loaded {len(tiles)} samples")
        return tiles


def run_show(config: ShowConfig) -> tuple[Path, tuple[int, int], int]:
    """Check the target here, launch the ranks, write the sheet.

    Args:
        config: The options.

    Returns:
        The PNG's path, its ``(height, width)`` and its number of columns (the most
        samples a rank loaded: fewer than ``samples`` when its share is smaller).

    Raises:
        ValueError: If an option is out of range or malformed (``--output`` a path
            that cannot be written, checked before the launch).
        TypeError: If ``epoch`` is not an integer.
        OSError: If the sheet cannot be written after all (the message names
            ``--output``).
        rankaug.cli.target.TargetError: If TARGET cannot give a map-style dataset, or
            ``--adapter`` no adapter.
        rankaug.cli.failure.SampleFailure: If a sample failed to load or to be read.
        rankaug.cli.launch.LaunchError: If a rank failed otherwise.
    """
    if not config.output.lower().endswith(".png"):
        raise ValueError(f"--output must be a .png file, got {config.output!r}")
    check_output(config.output)
    checks.uint(config.epoch, "--epoch", 32)
    if config.box_format is not None:
        check_box_format(config.box_format, name="--box-format")
    build_adapter(config.adapter, config.keys)
    build_dataset(config.target)
    rows = launch(ShowJob(config), config.ranks, seed=config.seed)
    title = (
        f"rankaug show {config.target}: {config.sampler} sampler, epoch {config.epoch}, "
        f"{config.workers} workers/rank, seed {config.seed} on every rank"
    )
    sheet = contact_sheet(rows, [f"rank {r}" for r in range(len(rows))], title, config.thumb)
    try:
        path = write_png(config.output, sheet)
    except OSError as error:
        raise output_error(config.output, error) from error
    return path, (sheet.shape[0], sheet.shape[1]), max(map(len, rows), default=0)
