"""Options several commands share: bounded integers, the launch, the sample reader.

Each command module (:mod:`rankaug.cli.demo`, ``audit``, ``show``, ...) registers its
own subparser with ``add_parser(commands)`` and calls these for the groups it shares.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = [
    "BOX_FORMATS",
    "AUDIT_TARGET_HELP",
    "TARGET_HELP",
    "box_format_option",
    "integer",
    "launch_options",
    "reader_options",
]

TARGET_HELP = (
    "module:factory, a function (called with no arguments in every rank) returning a "
    "map-style dataset, e.g. mypkg.data:build_train; the current directory is searched first"
)
AUDIT_TARGET_HELP = (
    "module:factory, a function (called with no arguments in every rank) returning a "
    "map-style dataset, an iterable one (a stream: an IterableDataset, a webdataset "
    "pipeline, a Hugging Face IterableDataset) or a batch transform (kornia, torchvision "
    "v2, rankaug.BatchAugment; any callable with --batch), e.g. mypkg.data:build_train; "
    "the current directory is searched first"
)
BOX_FORMATS = ("pascal_voc", "coco", "yolo", "albumentations")


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for an integer in ``[low, high]`` (no upper bound: ``None``).

    >>> integer(1, 64)("8")
    8
    >>> integer(1, 64)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer in [1, 64], got '0'
    """
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


def launch_options(parser: argparse.ArgumentParser, fewest_ranks: int = 1) -> None:
    """``--ranks --workers --start-method --seed -q``: how the ranks are launched.

    ``fewest_ranks``: the smallest ``--ranks`` taken (the demo compares ranks: 2).
    """
    group = parser.add_argument_group("launch (like torchrun on one machine)")
    group.add_argument(
        "--ranks",
        type=integer(fewest_ranks, 64),
        default=2,
        help="number of gloo ranks (default: 2)",
    )
    group.add_argument(
        "--workers",
        type=integer(0, 64),
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
        type=integer(0, 2**32 - 1),
        default=0,
        help="the seed every rank passes to torch.manual_seed (default: 0)",
    )
    group.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")


def reader_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--keys`` or ``--adapter``: how samples of another layout are read."""
    group = parser.add_argument_group(
        "samples of another layout (see rankaug.cli.adapter)"
    ).add_mutually_exclusive_group()
    group.add_argument(
        "--keys",
        metavar="NAME=KEY,...",
        help=(
            "dict samples with other key names, e.g. ultralytics' "
            "image=img,bboxes=bboxes,labels=cls (rankaug's name = the sample's key, "
            f"dotted for nested dicts; image required); {what}"
        ),
    )
    group.add_argument(
        "--adapter",
        metavar="module:factory",
        help=(
            "a function or class (called with no arguments in every rank) returning a "
            "rankaug.types.SampleAdapter with unpack(sample, targets) and repack(data, "
            f"state); {what}"
        ),
    )


def box_format_option(parser: argparse.ArgumentParser) -> None:
    """``--box-format``: the format of the samples' boxes (dicts' and pairs' alike)."""
    parser.add_argument(
        "--box-format",
        choices=BOX_FORMATS,
        help=(
            "format of the samples' boxes (a dict's bboxes, a pair's target boxes), e.g. "
            "yolo for ultralytics' (default: the dataset's box_format, else pascal_voc)"
        ),
    )
