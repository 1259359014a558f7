"""Section 6, end to end: a YOLO folder of JPEGs to batches of tensors, as users train.

The contenders (``benchmarks._pipelines``) all make full decode (ultralytics'
``load_image``: the long side to ``side`` by ``INTER_LINEAR``) -> mosaic -> random affine
-> HSV (every sample) -> flip (p=0.5) -> ``(B, 3, side, side)`` uint8 RGB batches from the
same folder (``benchmarks._jpegs``): ultralytics' ``YOLODataset`` (``cache=False``,
``cache="ram"``), rankaug (cache off and on, ``A.Affine`` or the fused ``MosaicAffine``)
and the floor (the pixel work alone); the "same work" table shows, from their objects,
that they do the same work (a goal on contenders that do not is refused). One more row,
outside the goals, runs rankaug fused over ``YoloFolder``'s default reduced JPEG decode,
its ratios marked "not like for like". rankaug's contenders batch with
``BatchCollator`` (recycled shared buffers in workers, as the batches guide recommends),
the floor with the same pool; ultralytics with its own ``collate_fn``. Each runs behind
its own persistent DataLoader, with 0 and with 2 workers, over one fixed shuffled order:

1. **First epoch**: construction (``cache="ram"`` decodes every image there; rankaug's
   cache starts empty, in a fresh directory) plus one whole pass. The in-process
   loaders take turns a few batches at a time, the order reversed every turn; the
   2-worker loaders run their epochs one after another.
2. **Later epochs**: the same loaders, now warm (caches full), timed in interleaved
   blocks per round as section 4 does (steady state, the first batches of a chunk not
   timed).

Then where the time goes, in-process: each contender's ``dataset[i]`` with OpenCV's
decode, resize, warp and colour calls timed apart, and its collate.
"""

from __future__ import annotations

import atexit
import gc
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.data import DataLoader

from benchmarks import peers
from benchmarks._bench import Bench
from benchmarks._catalogue import E2E_FIRST, E2E_PIPELINES, E2E_WORKERS, section
from benchmarks._cv2_split import CV2_STAGES, cv2_split, kernel_share
from benchmarks._jpegs import JpegFolder, default_data_dir, jpeg_folder
from benchmarks._loaders import Chunk, ChunkSampler, Loader, cpu_ns, time_chunk
from benchmarks._pipelines import REDUCED, Pipeline, build, pipeline_work, ultralytics_classes
from benchmarks._report import Row, print_rows, ratio_text
from benchmarks._same_work import print_work
from benchmarks._timing import summarize

__all__ = ["SECTION", "cache_root", "folder", "measure", "prepare", "side"]

SECTION = section("e2e")


def side(bench: Bench) -> int:
    """The section's output side: ``--size`` times ``e2e_scale``, a multiple of 8."""
    return max(8, round(bench.size * bench.settings.e2e_scale / 8) * 8)


def folder(bench: Bench) -> JpegFolder:
    """The section's JPEG folder (built once, reused by later runs and the memory section)."""
    made = bench.shared.get("jpegs")
    if made is None:
        bench.progress.set_label("6 e2e: the JPEG folder (not timed)")
        made = jpeg_folder(
            bench.settings.e2e_images,
            side(bench),
            data=bench.data,
            data_dir=bench.data_dir,
            seed=bench.seed,
        )
        bench.shared["jpegs"] = made
        bench.report.meta["e2e_data"] = {"kind": made.kind, "description": made.description}
    return made


def cache_root(bench: Bench) -> Path:
    """A directory for this run's caches, removed when the process exits."""
    root = bench.shared.get("caches")
    if root is None:
        base = default_data_dir() if bench.data_dir is None else bench.data_dir
        base.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="caches-", dir=base))
        atexit.register(shutil.rmtree, root, True)
        bench.shared["caches"] = root
    return root


@dataclass
class Contender:
    """One pipeline at one worker count, behind its persistent DataLoader."""

    name: str
    workers: int
    pipeline: Pipeline
    loader: Loader
    built: float
    built_cpu: float
    cache_dir: Path | None = None
    first: list[float] = field(default_factory=list)
    first_cpu: list[float | None] = field(default_factory=list)

    @property
    def row(self) -> str:
        return f"e2e/{self.name}_{self.workers}w"


@dataclass
class Prepared:
    """What ``prepare`` found: the folder, and why contenders are missing."""

    jpegs: JpegFolder
    unavailable: dict[str, str]


def prepare(bench: Bench) -> Prepared:
    """Build (or find) the JPEG folder; import ultralytics' dataset (it changes cv2)."""
    unavailable: dict[str, str] = {}
    try:
        ultralytics_classes()
    except peers.PeerUnavailable as exc:
        unavailable["ultralytics"] = unavailable["ultralytics_ram"] = f"not installed: {exc.reason}"
    return Prepared(folder(bench), unavailable)


def _contenders(bench: Bench, prepared: Prepared) -> dict[str, Contender]:
    """Every available pipeline at every worker count, each timed as it is built."""
    made: dict[str, Contender] = {}
    root, n = prepared.jpegs.root, prepared.jpegs.count
    order = np.random.default_rng(bench.seed).permutation(n).tolist()
    for workers in E2E_WORKERS:
        for name in E2E_PIPELINES:
            if name in prepared.unavailable:
                continue
            bench.progress.set_label(f"6 e2e: building {name}, {workers}w")
            cache_dir = None
            if "cached" in name:
                cache_dir = Path(
                    tempfile.mkdtemp(prefix=f"{name}-{workers}w-", dir=cache_root(bench))
                )
            gc.collect()
            cpu0, t0 = time.process_time(), time.perf_counter()
            pipeline = build(
                name,
                root,
                side(bench),
                cache_dir=cache_dir,
                batch_size=bench.batch_size,
                seed=bench.seed,
                rank=0,
            )
            built, built_cpu = time.perf_counter() - t0, time.process_time() - cpu0
            sampler = ChunkSampler(n, order=order)
            loader: DataLoader[Any] = DataLoader(
                pipeline.dataset,
                batch_size=bench.batch_size,
                sampler=sampler,
                num_workers=workers,
                collate_fn=pipeline.collate,
                persistent_workers=workers > 0,
                prefetch_factor=2 if workers else None,
            )
            contender = Contender(
                name, workers, pipeline, Loader(loader, sampler, workers), built, built_cpu
            )
            contender.cache_dir = cache_dir
            made[contender.row] = contender
    return made


def _worker_pids(loader: DataLoader[Any]) -> list[int]:
    running = getattr(loader, "_iterator", None)  # a persistent loader's workers, if any
    return [int(process.pid) for process in getattr(running, "_workers", [])]


def _run(contender: Contender, batches: int, batch_size: int) -> tuple[float, float | None]:
    """Load ``batches`` batches (one chunk); return its wall and CPU seconds.

    The CPU time is this process's (all its threads) plus the workers' (``/proc``;
    ``None`` without it); other work on the machine does not count in it.
    """
    loader = contender.loader.loader
    contender.loader.sampler.count = batches * batch_size
    before_pids = _worker_pids(loader)
    before = cpu_ns(before_pids) if before_pids else (0, 0)
    cpu0, t0 = time.process_time(), time.perf_counter()
    for _ in loader:
        pass
    wall, main = time.perf_counter() - t0, time.process_time() - cpu0
    pids = _worker_pids(loader)
    if not pids:
        return wall, main
    after = cpu_ns(pids)
    since = before if before_pids == pids else (0, 0)  # workers started in this chunk
    if after is None or since is None:
        return wall, None
    return wall, main + (after[0] - since[0]) / 1e9


def _first_epochs(bench: Bench, made: dict[str, Contender], batches: int) -> None:
    """Time every first-epoch contender's construction plus one whole pass."""
    chunk = bench.settings.e2e_chunk
    inline = [c for c in made.values() if c.name in E2E_FIRST and c.workers == 0]
    left = {c.row: batches for c in inline}
    turn = 0
    while any(left.values()):  # in-process: turns of a few batches, order reversed
        for c in inline if turn % 2 == 0 else inline[::-1]:
            if left[c.row]:
                bench.progress.set_label(f"6 e2e: first epoch {c.name}, 0w")
                k = min(chunk, left[c.row])
                wall, cpu = _run(c, k, bench.batch_size)
                c.first.append(wall)
                c.first_cpu.append(cpu)
                left[c.row] -= k
        turn += 1
    pooled = [c for c in made.values() if c.name in E2E_FIRST and c.workers > 0]
    for c in pooled:  # workers: whole epochs, one after another
        bench.progress.set_label(f"6 e2e: first epoch {c.name}, {c.workers}w")
        wall, cpu = _run(c, batches, bench.batch_size)
        c.first.append(wall)
        c.first_cpu.append(cpu)


def _later_epochs(bench: Bench, made: dict[str, Contender]) -> dict[str, list[Chunk]]:
    """Interleaved blocks of steady-state chunks, one per loader per round."""
    settings, bs = bench.settings, bench.batch_size
    batches = settings.e2e_batches + settings.e2e_batches % 2  # a multiple of 2 workers
    names = list(made)  # no warm-up: each chunk's first batches are not timed
    chunks: dict[str, list[Chunk]] = {name: [] for name in names}
    for r in range(settings.e2e_repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            bench.progress.set_label(f"6 e2e: {name}")
            chunks[name].append(time_chunk(made[name].loader, batches, bs))
            bench.progress.advance()
    return chunks


def _split(bench: Bench, made: dict[str, Contender], count: int) -> None:
    """Where each in-process contender's time goes (its caches are full by now)."""
    splits = bench.report.diagnostics.setdefault("e2e_split_ms", {})
    kernels = bench.report.diagnostics.setdefault("e2e_kernel", {})
    for c in made.values():
        if c.workers:
            continue
        bench.progress.set_label(f"6 e2e: split {c.name}")
        dataset, collate = c.pipeline.dataset, c.pipeline.collate
        n = len(dataset)
        split = cv2_split(lambda i, d=dataset, n=n: d[(i * 7) % n], count)  # type: ignore[misc]
        spread = lambda i, d=dataset, n=n: d[(i * 11) % n]  # noqa: E731
        kernels[c.name] = kernel_share(spread, 16 * count)
        batch = [dataset[i] for i in range(bench.batch_size)]
        t0 = time.perf_counter()
        for _ in range(3):
            collate(batch)
        split["collate"] = (time.perf_counter() - t0) / 3 / len(batch) * 1e3
        splits[c.name] = split
    if not splits:
        return
    bench.out(
        f"  where the time goes, in-process, ms per sample ({count} samples each; OpenCV calls "
        "timed apart; collate per sample of a batch):"
    )
    for name, s in splits.items():
        rest = s["total"] - sum(s[k] for k in CV2_STAGES)
        bench.out(
            f"    {name:16s} {s['total'] + s['collate']:5.2f} = decode {s['decode']:.2f} + "
            f"resize {s['resize']:.2f} + warp {s['warp']:.2f} + colour {s['colour']:.2f} + "
            f"the rest {rest:.2f} + collate {s['collate']:.2f}"
        )
    bench.out(
        f"  what the kernel does for it, per sample ({16 * count} samples each; a page fault "
        "maps a page in, of a cache file or of fresh memory):"
    )
    for name, k in kernels.items():
        bench.out(
            f"    {name:16s} {k['faults']:5.1f} page faults, {k['system_ms']:.2f} ms system "
            f"time, {k['user_ms']:.2f} ms user time"
        )


def _record(
    bench: Bench, made: dict[str, Contender], later: dict[str, list[Chunk]], batches: int
) -> None:
    report, rounds = bench.report, bench.settings.e2e_repeats
    samples = batches * bench.batch_size
    for c in made.values():
        if c.first:
            row_id = f"e2e/{c.name}_first_{c.workers}w"
            epoch = sum(c.first)
            rate = samples / (c.built + epoch)
            row = report.add(
                Row(row_id, SECTION.rows[row_id], SECTION.unit, SECTION.better, [rate])
            )
            row.extra = {"build_s": [c.built], "epoch_s": [epoch]}
            row.note = f"built {c.built:.2f} s + epoch {epoch:.2f} s"
            cpus = c.first_cpu
            if cpus and all(cpu is not None for cpu in cpus):
                cpu = c.built_cpu + sum(x for x in cpus if x is not None)
                row.extra["per_cpu_second"] = [samples / cpu]
                row.note += f"; {samples / cpu:.0f}/CPU-s"
            bench.progress.advance(rounds)
        chunks = later[c.row]
        row = report.add(
            Row(c.row, SECTION.rows[c.row], SECTION.unit, SECTION.better, [x.rate for x in chunks])
        )
        measured = [x for x in chunks if x.cores]
        if measured:
            row.extra = {
                "per_cpu_second": [x.rate / x.cores for x in measured if x.cores],
                "cores": [x.cores for x in measured if x.cores is not None],
                "waiting": [x.waiting for x in measured if x.waiting is not None],
            }
            row.note = (
                f"{summarize(row.extra['per_cpu_second']).median:.0f}/CPU-s; got "
                f"{summarize(row.extra['cores']).median:.2f} cores, waited "
                f"{summarize(row.extra['waiting']).median:.2f}"
            )


def measure(bench: Bench, prepared: Prepared) -> None:
    """First epoch, later epochs, the split; then the table."""
    report, out, settings = bench.report, bench.out, bench.settings
    for name, reason in prepared.unavailable.items():
        ids = [f"e2e/{name}_{w}w" for w in E2E_WORKERS]
        if name in E2E_FIRST:
            ids += [f"e2e/{name}_first_{w}w" for w in E2E_WORKERS]
        bench.missing(SECTION, ids, f"unavailable: {reason}")
    batches = max(1, prepared.jpegs.count // bench.batch_size)
    made = _contenders(bench, prepared)
    gc.collect()
    gc.freeze()
    try:
        _first_epochs(bench, made, batches)
        later = _later_epochs(bench, made)
        _record(bench, made, later, batches)
        works = {}
        for c in made.values():
            if c.name not in works:
                works[c.name] = pipeline_work(c.pipeline)  # after the timing: it makes samples
            report.work[c.row] = works[c.name]
            if c.first:
                report.work[f"e2e/{c.name}_first_{c.workers}w"] = works[c.name]
        out(
            f"{SECTION.number}. End to end: JPEG files to batches of {bench.batch_size} "
            f"(3x{side(bench)}x{side(bench)} uint8 tensors), samples/s; "
            "full decode, mosaic, affine (scale 0.5-1.5, translate 0.1), HSV, flip"
        )
        out(f"  data: {prepared.jpegs.description}")
        print_work(out, "every contender", works)
        out(
            '  first epoch: construction + one pass (rankaug\'s cache empty, cache="ram" '
            f"filled while built); one round; in-process loaders in turns of "
            f"{settings.e2e_chunk} batch(es)"
        )
        firsts = [r for r in SECTION.rows if "_first_" in r]
        baseline = {r: f"e2e/ultralytics_first_{r.rsplit('_', 1)[1]}" for r in firsts}
        print_rows(out, report, firsts, baseline=baseline, label="vs ultralytics")
        even = settings.e2e_batches + settings.e2e_batches % 2
        out(
            f"  later epochs (caches full): {settings.e2e_repeats} rounds of {even} timed "
            "batches per loader, interleaved"
        )
        laters = [r for r in SECTION.rows if "_first_" not in r]
        baseline = {r: f"e2e/ultralytics_{r.rsplit('_', 1)[1]}" for r in laters}
        print_rows(out, report, laters, baseline=baseline, label="vs ultralytics")
        for name in E2E_PIPELINES:
            two, zero = f"e2e/{name}_2w", f"e2e/{name}_0w"
            entry = report.ratio(two, zero)
            if entry is not None:
                out(f"    {name:16s} 2 workers vs 0: {ratio_text(entry)}")
        for name in REDUCED:  # what YoloFolder's default decode saves (unlike: its decode)
            for w in E2E_WORKERS:
                entry = report.ratio(f"e2e/{name}_{w}w", f"e2e/fused_{w}w")
                if entry is not None:
                    out(f"    {name:16s} vs fused, {w} workers: {ratio_text(entry)}")
        _split(bench, made, max(4, 2 * settings.e2e_batches))
        filled = made.get("e2e/rankaug_cached_0w")
        if filled is not None and filled.cache_dir is not None:
            bench.shared["filled_cache"] = filled.cache_dir
    finally:
        kept = bench.shared.get("filled_cache")
        spent = [c.cache_dir for c in made.values() if c.cache_dir not in (None, kept)]
        made.clear()  # shuts the persistent workers down
        gc.collect()
        for directory in spent:  # a gigabyte each at 1200 images
            shutil.rmtree(directory, ignore_errors=True)
    out()
