"""The command line: ``python -m rankaug {demo,audit,show,cache}`` (or the ``rankaug`` script).

* ``demo``: the seeds' bug and rankaug's fix side by side on a real DDP job.
* ``audit TARGET [TARGET ...]``: does a dataset repeat its random draws across ranks, workers,
  epochs, or fail to reproduce? Exit 1 if so, so it can guard a CI.
* ``show TARGET``: a PNG contact sheet of what every rank loads.
* ``cache verify DIR``: check every entry of a :class:`~rankaug.CachedDataset` directory.

``TARGET`` is ``module:factory``, a function returning a map-style dataset; ``audit``
also takes an iterable one (a stream) or a batch transform (see
:mod:`rankaug.cli.target`). Exit codes: 0 success, 1 the audit (or cache verify) found a
problem, 2 bad arguments, a bad TARGET, or a failed run.

Each command is a module of this package with ``add_parser(commands)``, which registers
its subparser and options and sets ``handler=run``, and ``run(args) -> exit code``;
:data:`COMMANDS` lists them and :func:`main` dispatches to ``args.handler``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Protocol

from rankaug.cli import audit, cache, demo, show
from rankaug.cli.launch import LaunchError
from rankaug.cli.target import TargetError

__all__ = ["COMMANDS", "Command", "build_parser", "main"]


class Command(Protocol):
    """A command module: registers its subparser, then runs the parsed arguments."""

    def add_parser(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        """Create the command's subparser and call ``set_defaults(handler=run)``."""
        ...

    def run(self, args: argparse.Namespace) -> int:
        """Run the command; return the exit code."""
        ...


#: The commands, in ``--help`` order. A new command is a module with ``add_parser`` and
#: ``run``, imported above and added here.
COMMANDS: tuple[Command, ...] = (demo, audit, show, cache)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m rankaug``: every command of :data:`COMMANDS`.

    >>> build_parser().parse_args(["audit", "m:f", "--epochs", "3"]).epochs
    3
    """
    parser = argparse.ArgumentParser(
        prog="rankaug",
        description=(
            "Check that data augmentation differs across GPUs, workers and epochs and "
            "reproduces across runs."
        ),
        epilog="exit codes: 0 success, 1 the audit or cache verify found a problem, 2 error",
    )
    from rankaug import __version__

    parser.add_argument("--version", action="version", version=f"rankaug {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Args:
        argv: The arguments after the program name; ``None`` reads ``sys.argv``.

    Returns:
        0 on success, 1 when the audit or cache verify found a problem, 2 on errors
        (argparse exits with 2 itself on bad arguments).

    >>> main(["audit", "no_colon_here"])
    2
    """
    os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code: int = args.handler(args)
        return code
    except (TargetError, LaunchError, ValueError, OSError) as error:
        print(f"rankaug {args.command}: error: {error}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"rankaug {args.command}: interrupted", file=sys.stderr)
    return 2
