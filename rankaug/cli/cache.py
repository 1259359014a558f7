"""``python -m rankaug cache verify DIR``: check every entry of a CachedDataset cache.

Each entry's checksum, structure and pickle are checked with the cache's own reader,
which never calls code from outside rankaug's allowlist (a planted entry is reported,
not run), and its owner and mode. Exit 0 when all is well, 1 when damaged or refused
entries were found (each listed), 2 on errors (no cache there).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_parser", "run"]


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``cache`` command (with its ``verify`` subcommand) to ``commands``."""
    cache = commands.add_parser(
        "cache",
        help="maintain a CachedDataset directory",
        description="Maintain a CachedDataset directory.",
    )
    actions = cache.add_subparsers(dest="cache_command", metavar="ACTION")
    verify = actions.add_parser(
        "verify",
        help="check every entry; exit 1 if any is damaged",
        description=(
            "Check every entry of a cache (checksum, structure, pickle, owner); list the "
            "damaged ones. Exit 0 all good, 1 damaged entries found, 2 error."
        ),
    )
    verify.add_argument("directory", metavar="DIR", type=Path, help="the cache directory")
    verify.add_argument(
        "--trusted",
        action="append",
        default=[],
        metavar="MODULE.NAME",
        help="a type of yours that samples hold (as given to trusted_types); repeatable",
    )
    verify.add_argument(
        "--no-owner-check",
        action="store_true",
        help="do not report folders and entries others could write (trust_directory=True)",
    )
    cache.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``cache verify``; return the exit code (0 good, 1 damaged, 2 error)."""
    if getattr(args, "cache_command", None) != "verify":
        print("rankaug cache: error: name an action: rankaug cache verify DIR", file=sys.stderr)
        return 2
    from rankaug.cache._verify import verify

    directory: Path = args.directory
    if not directory.is_dir():
        print(f"rankaug cache verify: error: {directory} is not a directory", file=sys.stderr)
        return 2
    try:
        report = verify(directory, args.trusted, owners=not args.no_owner_check)
    except (OSError, ValueError) as error:
        print(f"rankaug cache verify: error: {error}", file=sys.stderr)
        return 2
    for line in report.problems:
        print(line)
    damaged = len(report.problems)
    print(f"{report.checked} entries checked, {damaged} problem(s) in {directory}")
    return 1 if damaged else 0
