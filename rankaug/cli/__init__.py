"""The command line: ``python -m rankaug {demo,audit,show}`` (or the ``rankaug`` script).

* ``demo``: the seeds' bug and rankaug's fix side by side on a real DDP job.
* ``audit TARGET [TARGET ...]``: does a dataset repeat its random draws across ranks, workers,
  epochs, or fail to reproduce? Exit 1 if so, so it can guard a CI.
* ``show TARGET``: a PNG contact sheet of what every rank loads.

``TARGET`` is ``module:factory``, a function returning a map-style dataset (see
:mod:`rankaug.cli.target`). Exit codes: 0 success, 1 the audit found a problem,
2 bad arguments, a bad TARGET, or a failed run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rankaug.cli import cache
from rankaug.cli.launch import LaunchError
from rankaug.cli.target import TargetError

__all__ = ["build_parser", "main"]

_TARGET_HELP = (
    "module:factory, a function (called with no arguments in every rank) returning a "
    "map-style dataset, e.g. mypkg.data:build_train; the current directory is searched first"
)


def _integer(low: int, high: int | None = None) -> Callable[[str], int]:
    expected = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {expected}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {expected}, got {text!r}")
        return value

    return parse


def _launch_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("launch (like torchrun on one machine)")
    group.add_argument(
        "--ranks", type=_integer(1, 64), default=2, help="number of gloo ranks (default: 2)"
    )
    group.add_argument(
        "--workers",
        type=_integer(0, 64),
        default=2,
        help="DataLoader workers per rank (default: 2)",
    )
    group.add_argument(
        "--start-method",
        choices=("fork", "spawn"),
        default="fork",
        help="how DataLoader workers start (default: fork)",
    )
    group.add_argument(
        "--seed",
        type=_integer(0, 2**32 - 1),
        default=0,
        help="the seed every rank passes to torch.manual_seed (default: 0)",
    )
    group.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")


def _reader_options(parser: argparse.ArgumentParser, what: str) -> None:
    group = parser.add_argument_group(
        "samples of another layout (see rankaug.cli.adapter)"
    ).add_mutually_exclusive_group()
    group.add_argument(
        "--keys",
        metavar="NAME=KEY,...",
        help=(
            "dict samples with other key names, e.g. ultralytics' "
            "image=img,bboxes=bboxes,labels=cls (rankaug's name = the sample's key; "
            f"image required); {what}"
        ),
    )
    group.add_argument(
        "--adapter",
        metavar="module:factory",
        help=(
            "a function or class (called with no arguments in every rank) returning a "
            f"rankaug.SampleAdapter with unpack(sample, targets) and repack(data, state); {what}"
        ),
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m rankaug``.

    >>> build_parser().parse_args(["audit", "m:f", "--epochs", "3"]).epochs
    3
    """
    parser = argparse.ArgumentParser(
        prog="rankaug",
        description=(
            "Check that data augmentation differs across GPUs, workers and epochs and "
            "reproduces across runs."
        ),
        epilog="exit codes: 0 success, 1 the audit found a problem, 2 error",
    )
    from rankaug import __version__

    parser.add_argument("--version", action="version", version=f"rankaug {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="YOLOv5-style mosaics vs rankaug's on a real 2-rank DDP job",
        description=(
            "Launch a real DDP job on this machine (gloo, every rank with the same "
            "torch.manual_seed), run YOLOv5's mosaic (partners from global random) and "
            "rankaug.MosaicDataset side by side, the latter through "
            "EpochSampler(DistributedSampler) with no set_epoch call, print every rank's "
            "partner indices, "
            "count the mosaics whose partners repeat across ranks, and write one PNG "
            "contact sheet per approach."
        ),
    )
    demo.add_argument(
        "--data", metavar="PATH", help="a YOLO folder (images/, labels/) instead of built-in data"
    )
    demo.add_argument(
        "--output",
        metavar="DIR",
        default="rankaug-demo",
        help="folder for the contact sheets (default: rankaug-demo)",
    )
    demo.add_argument("--epochs", type=_integer(1, 1000), default=2, help="epochs (default: 2)")
    demo.add_argument(
        "--samples",
        type=_integer(1),
        default=32,
        help="dataset size: built-in samples, or the first N images of --data (default: 32)",
    )
    demo.add_argument(
        "--size", type=_integer(32, 4096), default=256, help="mosaic side in pixels (default: 256)"
    )
    demo.add_argument(
        "--columns",
        type=_integer(1, 64),
        default=8,
        help="mosaics per rank on the sheets (default: 8)",
    )
    demo.add_argument("--json", action="store_true", help="print the result as JSON")
    _launch_options(demo)

    audit = commands.add_parser(
        "audit",
        help="find duplicated random streams, epoch replay and irreproducibility",
        description=(
            "Run TARGET's dataset as a real DDP launch would (identical torch.manual_seed "
            "on every rank), with every rank and worker loading the same index sequence "
            "(through rankaug.EpochSampler unless --epoch-from set_epoch), "
            "fingerprint every sample, and compare one index at the same position across "
            "ranks and workers, at other positions, in other epochs and in a second run. "
            "Exit 1 on duplicated streams, epoch replay or irreproducibility."
        ),
    )
    audit.add_argument(
        "targets",
        metavar="TARGET",
        nargs="+",
        help=_TARGET_HELP + "; several are audited in the same launches",
    )
    audit.add_argument("--epochs", type=_integer(1, 100), default=2, help="epochs (default: 2)")
    audit.add_argument(
        "--persistent",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="persistent_workers (default: off)",
    )
    audit.add_argument(
        "--probe",
        type=_integer(1, 1000),
        default=8,
        help="distinct indices probed, spread over the dataset (default: 8)",
    )
    audit.add_argument(
        "--repeats",
        type=_integer(2, 100),
        default=2,
        help="positions of each index per epoch (default: 2)",
    )
    audit.add_argument(
        "--no-rerun",
        dest="rerun",
        action="store_false",
        help="skip the second run (no reproducibility check)",
    )
    audit.add_argument(
        "--epoch-from",
        choices=("sampler", "set_epoch"),
        default="sampler",
        help=(
            "sampler: the indices come from rankaug.EpochSampler and carry their epoch, "
            "nobody calls set_epoch (the recommended training loop); set_epoch: plain "
            "indices and dataset.set_epoch(epoch) before every epoch (default: sampler)"
        ),
    )
    audit.add_argument("--json", action="store_true", help="print the report as JSON")
    audit.add_argument("--output", metavar="FILE", help="also write the JSON report to FILE")
    _reader_options(audit, "the audit then fingerprints what it reads of every sample")
    _launch_options(audit)

    show = commands.add_parser(
        "show",
        help="PNG contact sheet of what every rank loads",
        description=(
            "Run TARGET's dataset on every rank as a DDP launch would and write a PNG "
            "contact sheet: rows = ranks, columns = samples, boxes drawn."
        ),
    )
    show.add_argument("target", metavar="TARGET", help=_TARGET_HELP)
    show.add_argument(
        "--output",
        metavar="FILE",
        default="rankaug-show.png",
        help="the PNG to write (default: rankaug-show.png)",
    )
    show.add_argument(
        "--samples", type=_integer(1, 64), default=8, help="samples per rank (default: 8)"
    )
    show.add_argument("--epoch", type=_integer(0), default=0, help="the epoch to show (default: 0)")
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
    show.add_argument(
        "--box-format",
        choices=("pascal_voc", "coco", "yolo", "albumentations"),
        help=(
            "format of dict samples' bboxes, e.g. yolo for ultralytics' (default: the "
            "dataset's box_format, else pascal_voc)"
        ),
    )
    show.add_argument(
        "--thumb", type=_integer(32, 1024), default=160, help="thumbnail side (default: 160)"
    )
    _reader_options(show, "the sheet shows its image, bboxes and labels")
    _launch_options(show)
    cache.add_parser(commands)
    return parser


def _demo(args: argparse.Namespace) -> int:
    from rankaug.cli.demo import DemoConfig, run_demo

    result = run_demo(
        DemoConfig(
            data=args.data,
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
        )
    )
    print(result.to_json() if args.json else result.to_text())
    return 0


def _audit(args: argparse.Namespace) -> int:
    from rankaug.cli.audit import AuditConfig, run_audit

    report = run_audit(
        AuditConfig(
            targets=tuple(args.targets),
            ranks=args.ranks,
            workers=args.workers,
            epochs=args.epochs,
            persistent=args.persistent,
            start_method=args.start_method,
            seed=args.seed,
            probe=args.probe,
            repeats=args.repeats,
            rerun=args.rerun,
            progress=not args.quiet,
            epoch_from=args.epoch_from,
            adapter=args.adapter,
            keys=args.keys,
        )
    )
    if args.output:
        path = Path(args.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report.to_json() + "\n", encoding="utf-8")
    print(report.to_json() if args.json else report.to_text())
    return report.exit_code


def _show(args: argparse.Namespace) -> int:
    from rankaug.cli.show import ShowConfig, run_show

    path, (height, width) = run_show(
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
    print(f"wrote {path} ({width}x{height}: {args.ranks} rank rows, {args.samples} columns)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Args:
        argv: The arguments after the program name; ``None`` reads ``sys.argv``.

    Returns:
        0 on success, 1 when the audit found a problem, 2 on errors (argparse exits
        with 2 itself on bad arguments).

    >>> main(["audit", "no_colon_here"])
    2
    """
    os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "demo": _demo,
        "audit": _audit,
        "show": _show,
        "cache": cache.run,
    }
    try:
        return handlers[args.command](args)
    except (TargetError, LaunchError, ValueError, OSError) as error:
        print(f"rankaug {args.command}: error: {error}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"rankaug {args.command}: interrupted", file=sys.stderr)
    return 2
