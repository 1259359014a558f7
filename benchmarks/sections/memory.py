"""Section 7, memory: what 2 ranks with 2 DataLoader workers each need, all processes counted.

Two real 2-rank jobs on the section 6 folder, started together as separate processes
(``benchmarks/_rank_job.py``; ``RANK`` and ``WORLD_SIZE`` set as ``torchrun`` sets them,
each rank its own ``DistributedSampler`` shard and 2 persistent workers):

* ultralytics ``YOLODataset(cache="ram")``: every rank decodes and keeps every image;
* rankaug ``MosaicDataset(CachedDataset(YoloFolder(...)))`` over a cache that is full
  (filled by section 6, or here first): the ranks and workers read one copy through the
  page cache; batched by ``BatchCollator``, whose workers keep the shared buffers they
  recycle (section 6's pipeline).

Each process tree's PSS (``/proc/PID/smaps_rollup``) is sampled while the jobs run; the
figure is the sum over all processes once every rank has loaded its batches. PSS counts
a page shared by k processes 1/k in each, so the sum counts it once. rankaug's cache
files are counted apart, once: each process's PSS leaves out its mappings of them (the
cache is read with ``read_only_arrays=True``, which keeps files mapped), and the rankaug
row adds what of those files is resident (``mincore``), mapped or not: memory the
machine holds for the cache, once, whatever the number of ranks.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import peers
from benchmarks._bench import Bench
from benchmarks._catalogue import section
from benchmarks._memory import Watched, resident_bytes, watch
from benchmarks._pipelines import build, source, ultralytics_classes
from benchmarks._report import Row, number, print_rows
from benchmarks._same_work import Setting, Work, print_work
from benchmarks.sections.e2e import cache_root, folder, side
from rankaug import CachedDataset

__all__ = ["RANKS", "SECTION", "WORKERS", "measure", "prepare"]

SECTION = section("memory")
RANKS = 2
WORKERS = 2
_JOB = Path(__file__).resolve().parent.parent / "_rank_job.py"
_ROOT = Path(__file__).resolve().parent.parent.parent


def prepare(bench: Bench) -> str:
    """Whether ultralytics can run (``""``) or why not."""
    try:
        ultralytics_classes()
    except peers.PeerUnavailable as exc:
        return f"unavailable: not installed: {exc.reason}"
    return ""


def _filled_cache(bench: Bench, root: Path) -> Path:
    """A full cache of the folder: section 6's, or one filled here (not timed)."""
    filled = bench.shared.get("filled_cache")
    if filled is not None:
        return Path(filled)
    directory = Path(tempfile.mkdtemp(prefix="memory-", dir=cache_root(bench)))
    bench.progress.set_label("7 memory: filling the cache (not timed)")
    # the folder as the rankaug_cached pipeline reads it: the same cache fingerprint
    cached: CachedDataset[Any] = CachedDataset(source(root, side(bench)), directory)
    for i in range(len(cached)):
        cached[i]
    bench.shared["filled_cache"] = directory
    return directory


def _commands(
    bench: Bench, pipelines: list[str], root: Path, cache: Path
) -> tuple[list[list[str]], list[dict[str, str]]]:
    commands, envs = [], []
    for name in pipelines:
        for rank in range(RANKS):
            commands.append(
                [
                    sys.executable,
                    str(_JOB),
                    "--pipeline",
                    name,
                    "--root",
                    str(root),
                    "--side",
                    str(side(bench)),
                    "--cache-dir",
                    str(cache),
                    "--workers",
                    str(WORKERS),
                    "--batch-size",
                    str(bench.batch_size),
                    "--batches",
                    str(bench.settings.memory_batches),
                    "--seed",
                    str(bench.seed),
                ]
            )
            envs.append({**os.environ, "RANK": str(rank), "WORLD_SIZE": str(RANKS)})
    return commands, envs


def _work(lines: list[str]) -> Work | None:
    """The same-work record a rank job printed (``work {...}``), if it printed one."""
    for line in lines:
        if line.startswith("work {"):
            return {a: Setting(**s) for a, s in json.loads(line[len("work ") :]).items()}
    return None


def _mib(kib: float) -> float:
    return kib / 1024


def measure(bench: Bench, prepared: str) -> None:
    """Both jobs at once, their PSS sampled; the rows, then the per-process line."""
    report, out = bench.report, bench.out
    jpegs = folder(bench)
    cache = _filled_cache(bench, jpegs.root)
    pipelines = ["rankaug_cached"]
    if prepared:
        bench.missing(SECTION, ["memory/ultralytics_ram"], prepared)
    else:
        build("ultralytics", jpegs.root, side(bench))  # its label cache, before the ranks race
        pipelines.insert(0, "ultralytics_ram")
    commands, envs = _commands(bench, pipelines, jpegs.root, cache)
    bench.progress.set_label(f"7 memory: {len(commands)} ranks x (1 + {WORKERS} workers)")
    try:
        seen = watch(commands, env=envs, cwd=_ROOT, excluding=str(cache))
    except RuntimeError as exc:
        missing = [r for r in SECTION.rows if r not in report.rows]
        bench.missing(SECTION, missing, f"error: {exc}")
        out(f"{SECTION.number}. Memory: the jobs failed: {exc}")
        out()
        return
    groups = {name: range(k * RANKS, (k + 1) * RANKS) for k, name in enumerate(pipelines)}
    works = {name: _work(seen.lines[ks[0]]) for name, ks in groups.items()}
    for row_id in SECTION.rows:
        work = works.get("ultralytics_ram" if "ultralytics" in row_id else "rankaug_cached")
        if work is not None:
            report.work[row_id] = work
    files = [path for path in cache.rglob("*") if path.is_file()]
    resident, total = resident_bytes(files)
    figures: dict[str, float] = {}
    for name, commands_of in groups.items():
        figures[name] = _mib(seen.ready_kib(commands_of))
    if "ultralytics_ram" in figures:
        _add(bench, "memory/ultralytics_ram", figures["ultralytics_ram"], seen, groups)
    pss = figures["rankaug_cached"]
    _add(bench, "memory/rankaug_cached_pss", pss, seen, groups)
    row = _add(bench, "memory/rankaug_cached", pss + resident / 2**20, seen, groups)
    row.note = (
        f"PSS but the cache's mappings {pss:.0f} + cache files {number(resident / 2**20)} of "
        f"{number(total / 2**20)} MiB resident; {row.note}"
    )
    report.diagnostics["memory"] = {
        "cache_resident_mib": resident / 2**20,
        "cache_mib": total / 2**20,
        "processes": {name: [len(seen.ready[k]) for k in ks] for name, ks in groups.items()},
        "lines": seen.lines,
    }
    out(
        f"{SECTION.number}. "
        f"Memory: {RANKS} ranks x (1 + {WORKERS} workers), each rank a process with its "
        f"DistributedSampler shard, {bench.settings.memory_batches} batches loaded; MiB, "
        "summed PSS of every process, lower is better"
    )
    shown = {name: work for name, work in works.items() if work is not None}
    if shown:
        print_work(out, "the jobs' pipelines (rank 0's record)", shown)
    print_rows(out, report, list(SECTION.rows), baseline="memory/ultralytics_ram")
    for name, ks in groups.items():
        per = [[_mib(kib) for _, kib in seen.ready[k]] for k in ks]
        text = "; ".join(
            f"rank {r}: {tree[0]:.0f} + workers " + " + ".join(f"{w:.0f}" for w in tree[1:])
            for r, tree in enumerate(per)
        )
        out(f"  {name:16s} PSS per process, MiB: {text}")
    _projection(bench, figures, resident / 2**20)
    out()


def _add(bench: Bench, row_id: str, mib: float, seen: Watched, groups: Any) -> Row:
    name = "ultralytics_ram" if "ultralytics" in row_id else "rankaug_cached"
    row = bench.report.add(Row(row_id, SECTION.rows[row_id], SECTION.unit, SECTION.better, [mib]))
    row.extra = {"peak_mib": [_mib(seen.peak_kib(groups[name]))]}
    if not row.note:
        row.note = f"peak {row.extra['peak_mib'][0]:.0f} MiB while running"
    bench.progress.advance(bench.settings.memory_rounds)
    return row


def _projection(bench: Bench, figures: dict[str, float], cache_mib: float) -> None:
    """What 8 ranks would need, from the per-rank figures (each rank pays its own PSS)."""
    if "ultralytics_ram" not in figures:
        return
    ours = figures["rankaug_cached"] / RANKS
    theirs = figures["ultralytics_ram"] / RANKS
    ranks = 8
    ratio = (ranks * ours + cache_mib) / (ranks * theirs)
    bench.report.diagnostics["memory_8_ranks_ratio"] = ratio
    bench.out(
        f"  per rank (its tree): ultralytics {theirs:.0f} MiB, rankaug {ours:.0f} MiB + the "
        f"shared cache {cache_mib:.0f} MiB once; {ranks} ranks: {ratio:.2f}x"
    )
