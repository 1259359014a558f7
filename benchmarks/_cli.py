"""The scoreboard's command line (``benchmarks/throughput.py --help``).

Kept apart from ``throughput.py``, which pins thread counts when imported, so that the
tests can parse arguments in their own process. This is benchmark code, never imported
by rankaug.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from benchmarks._catalogue import FULL, QUICK, SECTIONS

__all__ = ["parse_args"]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    names = [s.name for s in SECTIONS]
    parser = argparse.ArgumentParser(
        description="rankaug's throughput scoreboard (side by side, ratios, goals)."
    )
    add = parser.add_argument
    add("--quick", action="store_true", help="a short run (under 30 s)")
    add("--repeats", type=int, help="interleaved rounds")
    add("--json", type=Path, help="also write everything here")
    add("--only", default=",".join(names),
        help=f"comma-separated sections to run, of {','.join(names)} (default: all)")  # fmt: skip
    add("--size", type=int, default=640, help="output side (default 640)")
    add("--sources", type=int, default=16, help="source samples (default 16)")
    add("--data", choices=("auto", "photos", "synthetic"), default="auto",
        help="photos from skimage.data when installed (auto), or synthetic images")  # fmt: skip
    add("--batch-size", type=int, default=16, help="DataLoader batch size")
    images = f"JPEGs in the e2e folder ({FULL.e2e_images}; --quick {QUICK.e2e_images})"
    add("--images", type=int, help=images)
    where = "where the e2e JPEG folder is kept and the caches go (default: under $TMPDIR)"
    add("--data-dir", type=Path, help=where)
    add("--seed", type=int, default=0, help="seed of every contender")
    add("--profile", action="store_true", help="also cProfile rankaug's contenders")
    add("--progress", choices=("auto", "on", "off"), default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.size < 16 or args.sources < 1 or args.batch_size < 1:
        parser.error("--size must be >= 16, --sources and --batch-size >= 1")
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.images is not None and args.images < 1:
        parser.error("--images must be >= 1")
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in only if name not in names]
    if unknown or not only:
        parser.error(f"--only takes sections among {','.join(names)}, got {args.only!r}")
    args.only = [name for name in names if name in only]  # the catalogue's order
    return args
