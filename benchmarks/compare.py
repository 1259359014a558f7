"""Paired A/B: this checkout's rankaug against the rankaug of a git revision, in one process.

Run from the repository root::

    .venv-bench/bin/python benchmarks/compare.py HEAD~1                 # every case
    .venv-bench/bin/python benchmarks/compare.py main --cases 2x2,cutmix --quick

The revision's ``rankaug/`` is exported (``git archive``) into a temporary folder as the
package ``rankaug_base`` (every ``rankaug`` name in its sources renamed), imported beside
this checkout's ``rankaug``, and each case is built from both with the same seed and
stream, so the two make the same draws and do the same work call for call (the first
calls' outputs are compared: a change that alters the outputs is reported, and then the
figure compares different work). The two then take turns one operation at a time, the
order reversed at every turn, in both listings (``race_both_listings``, as the wrapper
race runs), and each operation is paired with its twin: the paired difference
(``paired_overhead``) cancels the drift of a noisy machine that separate runs, or
separate contenders, suffer from. A change of a few microseconds per sample, invisible
between two full runs of ``throughput.py``, shows here.

Cases: ``2x2`` (``MosaicDataset`` 2x2 over the mosaic sources), ``affine``
(``MosaicDataset`` with ``MosaicAffine(flip=0.5)`` and ``HSVJitter``, the e2e recipe's
augmentation), ``cutmix``, ``copypaste`` (by polygons, partner pasted, as the mix
section's race), ``wrapper`` (``RandomAugmentWrapper`` with the wrapper race's
albumentations pipeline). Figures are this checkout minus the revision: negative is
faster.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._threads import THREAD_VARIABLES

# One thread everywhere, set before numpy, cv2 and torch start their thread pools.
os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")  # before rankaug imports albumentations

from benchmarks._bench import load_sources, pin_threads
from benchmarks._compare import BASE, CASES, compare, export, rounds_for
from benchmarks._timing import Progress

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revision", help="the git revision to compare against (HEAD~1, main)")
    parser.add_argument("--cases", default=",".join(CASES), help=f"of {','.join(CASES)}")
    parser.add_argument("--ops", type=int, default=2048, help="paired operations per case")
    parser.add_argument("--quick", action="store_true", help="256 operations per case")
    parser.add_argument("--data", choices=("auto", "photos", "synthetic"), default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    args = parser.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    ops = 256 if args.quick else args.ops
    with tempfile.TemporaryDirectory(prefix="rankaug-compare-") as folder:
        try:
            sys.path.insert(0, str(export(args.revision, Path(folder))))
        except ValueError as error:
            parser.error(str(error))
        base = importlib.import_module(BASE)
        current = importlib.import_module("rankaug")
        pin_threads()
        sources = load_sources(args.data, 16, 640)
        enabled = {"auto": None, "on": True, "off": False}[args.progress]
        progress = Progress(len(cases) * 2 * rounds_for(ops), enabled=enabled)
        print(
            f"rankaug at {args.revision} (base) against this checkout; {ops} paired operations "
            f"per case, one at a time, both orders and listings; {sources.description}"
        )
        results = []
        for case in cases:
            try:
                result = compare(
                    case, base, current, sources, ops=ops, seed=args.seed, progress=progress
                )
            except Exception as error:  # a case the revision cannot build (an older API)
                progress.clear()
                print(f"  {case:10s} unavailable: {type(error).__name__}: {error}")
                results.append({"case": case, "unavailable": f"{type(error).__name__}: {error}"})
                continue
            progress.clear()
            results.append(result)
            print(
                f"  {case:10s} {result['difference_us']:+8.1f} µs per operation "
                f"(ratio {result['ratio']:.4f}; base {result['base_mean_us']:.0f} µs, "
                f"this {result['current_mean_us']:.0f}; going second "
                f"{result['order_us']:+.0f}); "
                + ("the same outputs" if result["same_outputs"] else "OUTPUTS DIFFER")
            )
        progress.close()
    if args.json is not None:
        args.json.write_text(
            json.dumps({"revision": args.revision, "ops": ops, "results": results}, indent=2),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
