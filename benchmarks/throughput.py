"""rankaug's scoreboard: what its guarantees cost, and its pipelines against the peers'.

Run from the repository root (the peers and the photographs are optional; install them
with the step in ``benchmarks/README_peers.md``)::

    .venv-bench/bin/python benchmarks/throughput.py          # full run, about 5 minutes
    .venv-bench/bin/python benchmarks/throughput.py --quick  # about 30 s
    .venv-bench/bin/python benchmarks/throughput.py --json out.json --repeats 9  # + out.*.png
    .venv-bench/bin/python benchmarks/throughput.py --only e2e,memory

(``.venv/bin/python`` runs it too, every peer row then "unavailable".)

The sections and their rows are declared in ``_catalogue.py``, the goals in
``_goal_table.py`` (each kind of goal in ``_goals.py``), one module per section in
``sections/``; ``benchmarks/README.md`` describes each. Every section measures its
contenders side by side in one run, interleaved, after a warm-up: medians and min..max
over the rounds, ratios of the medians, and a "same work" table per race
(``_same_work.py``: a goal whose contenders do different work is refused).

Every process runs one thread: the OpenMP/BLAS thread variables are set to 1 before
numpy, cv2 and torch load, and ``cv2.setNumThreads(1)`` and ``torch.set_num_threads(1)``
are called again after the peers are imported (importing ultralytics changes cv2's).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._threads import THREAD_VARIABLES

# One thread everywhere, set before numpy, cv2 and torch start their thread pools.
os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")  # before rankaug imports albumentations

import cv2
import torch

from benchmarks import peers  # noqa: F401  (sets the variables that keep ultralytics offline)
from benchmarks._bench import Bench, describe_run, pin_threads
from benchmarks._catalogue import FULL, QUICK, ROW_IDS, SECTIONS, Settings
from benchmarks._cli import parse_args
from benchmarks._goal_table import GOALS
from benchmarks._plots import write_plots
from benchmarks._profile import profile_rankaug
from benchmarks._report import Console, Report, print_goals, print_header
from benchmarks._timing import Progress, peak_rss_mib
from benchmarks.sections import RUNNERS

__all__ = ["GOALS", "ROW_IDS", "SECTIONS", "main", "parse_args", "run"]


def run(args: argparse.Namespace) -> Report:
    """Measure the selected sections and return the report (printing as it goes)."""
    base = QUICK if args.quick else FULL
    given: dict[str, int] = {}
    if args.repeats:
        given = {"repeats": args.repeats, "e2e_repeats": args.repeats}
    if args.images:
        given["e2e_images"] = args.images
    settings = Settings(**{**base.__dict__, **given})
    selected = [s for s in SECTIONS if s.name in args.only]
    total = sum(getattr(settings, s.rounds) * len(s.rows) for s in selected)
    progress = Progress(total, enabled={"auto": None, "on": True, "off": False}[args.progress])
    out = Console(progress)
    pin_threads()
    report = Report(meta=describe_run(args, settings, args.only), order=ROW_IDS)
    bench = Bench(
        settings,
        args.size,
        args.seed,
        args.batch_size,
        report,
        progress,
        out,
        data=args.data,
        data_dir=args.data_dir,
    )
    if any(s.needs_sources for s in selected):
        progress.set_label("loading sources (not timed)")
        bench.load(args.data, args.sources)

    # Contenders that must exist first (the mosaic's: importing ultralytics changes cv2's
    # thread setting), then the thread counts pinned again.
    prepared = {s.name: RUNNERS[s.name].prepare(bench) for s in selected}
    pin_threads()
    report.meta["threads"]["cv2.getNumThreads"] = cv2.getNumThreads()
    report.meta["threads"]["torch.get_num_threads"] = torch.get_num_threads()
    # The imported libraries leave ~200k objects for the cyclic GC; a full collection
    # then takes ~100 ms and lands on whichever contender triggers it. Freeze them.
    gc.collect()
    gc.freeze()
    report.meta["gc_frozen_objects"] = gc.get_freeze_count()
    print_header(out, report.meta)

    for s in selected:
        RUNNERS[s.name].measure(bench, prepared[s.name])
    if args.profile:
        profile_rankaug(bench, args.only)

    report.meta["peak_rss_mib"] = peak_rss_mib()
    report.meta["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    measured = {row for s in selected for row in s.rows}
    report.goals = [goal.evaluate(report) for goal in GOALS if set(goal.rows) <= measured]
    rss = report.meta["peak_rss_mib"]
    out(
        f"Peak RSS: main process {rss['self']:.0f} MiB, largest worker {rss['children']:.0f} "
        f"MiB; load average {report.meta['machine']['load_average_end']} at the end"
    )
    out()
    print_goals(out, report)
    progress.close()
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print the tables and the goals; write ``--json``.

    Args:
        argv: Command-line arguments (``sys.argv[1:]`` when ``None``).

    Returns:
        The exit status: 0, whether goals pass or miss (the table says which).
    """
    args = parse_args(argv)
    t0 = time.perf_counter()
    report = run(args)
    report.meta["wall_seconds"] = round(time.perf_counter() - t0, 1)
    print(f"\n(total {report.meta['wall_seconds']:.0f} s)")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        data = report.to_json()
        args.json.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}")
        plots = write_plots(data, args.json)
        print(
            f"plots: {', '.join(p.name for p in plots)}" if plots else "plots: none (no matplotlib)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
