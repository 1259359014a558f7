"""Section 4, scaling: a DataLoader over ``MosaicDataset`` with 0, 1 and 2 workers.

Three transports (torch tensors in fresh shared memory, ``collate_detection``; torch
tensors in shared buffers recycled by ``rankaug.collate.BatchCollator``; numpy samples
pickled through the worker pipe), with the
CPU time the loader's processes got and how long they waited for a CPU (other work on
the machine), read from ``/proc``; then what moving one batch out of a worker costs.
"""

from __future__ import annotations

import gc
import os
from typing import Any, cast

from benchmarks._bench import Bench
from benchmarks._catalogue import TRANSPORTS, WORKERS, Settings, section
from benchmarks._loaders import Chunk, make_loaders, share_bound, time_chunk, transport_costs
from benchmarks._report import Report, Row, print_rows, ratio_text
from benchmarks._same_work import describe, with_output
from benchmarks._timing import Progress, summarize
from rankaug import MosaicDataset
from rankaug.collate import BatchCollator

__all__ = ["SECTION", "measure", "measure_scaling", "prepare"]

SECTION = section("scaling")


def measure_scaling(
    report: Report, dataset: Any, batch_size: int, settings: Settings, progress: Progress
) -> None:
    """Interleaved chunks of every loader, then the transport diagnostics."""
    batches = settings.batches + settings.batches % 2  # a multiple of 1 and 2 workers
    loaders = make_loaders(dataset, batch_size, list(TRANSPORTS), WORKERS)
    names = list(loaders)
    chunks: dict[str, list[Chunk]] = {name: [] for name in names}
    try:
        for name in names:  # start the workers, warm up
            progress.set_label(f"4 scaling: warm-up {name}")
            time_chunk(loaders[name], 2, batch_size)
        for r in range(settings.repeats):
            for name in names if r % 2 == 0 else names[::-1]:
                progress.set_label(f"4 scaling: {name}")
                chunks[name].append(time_chunk(loaders[name], batches, batch_size))
                progress.advance()
        stats = cast(BatchCollator, loaders["scaling/recycled_1w"].loader.collate_fn).stats
        report.diagnostics["recycle_stats"] = {
            "pooled": stats.pooled,
            "reused": stats.reused,
            "unpooled": stats.unpooled,
        }
    finally:
        loaders.clear()  # shuts the persistent workers down
        gc.collect()
    for name in names:
        row = report.add(
            Row(
                name,
                SECTION.rows[name],
                SECTION.unit,
                SECTION.better,
                [c.rate for c in chunks[name]],
            )
        )
        measured = [c for c in chunks[name] if c.cores and c.waiting is not None]
        if measured:
            # Throughput = samples per CPU-second x cores running. Idle cores would run
            # everything that was runnable (got + waited), up to the machine's cores.
            cpus = os.cpu_count() or 1
            per_cpu = [c.rate / c.cores for c in measured if c.cores]
            projected = [
                c.rate / c.cores * min(cpus, c.cores + c.waiting)
                for c in measured
                if c.cores and c.waiting is not None
            ]
            row.extra = {
                "cores": [c.cores for c in measured if c.cores is not None],
                "main": [c.main for c in measured if c.main is not None],
                "waiting": [c.waiting for c in measured if c.waiting is not None],
                "per_cpu_second": per_cpu,
                "projected": projected,
            }
            row.note = (
                f"got {summarize(row.extra['cores']).median:.2f} cores, waited "
                f"{summarize(row.extra['waiting']).median:.2f}; "
                f"{summarize(per_cpu).median:.0f}/CPU-s; idle machine "
                f"≈{summarize(projected).median:.0f}/s"
            )
    _bounds(report, chunks)
    work = describe(dataset)  # the same per sample; how the batch leaves a worker differs
    for name in names:
        transport = name.split("/")[1].rsplit("_", 1)[0]
        report.work[name] = with_output(work, TRANSPORTS[transport])
    report.diagnostics["transport"] = transport_costs(dataset, batch_size, settings.repeats)


def _bounds(report: Report, chunks: dict[str, list[Chunk]]) -> None:
    """Each transport's ``bound`` for its loaders with workers, from its 1-worker chunks.

    What the split of the work between the workers and the main process allows on this
    machine's cores, idle (:func:`~benchmarks._loaders.share_bound`), one figure per
    round.
    """
    cpus = os.cpu_count() or 1
    for transport in TRANSPORTS:
        one = chunks.get(f"scaling/{transport}_1w", [])
        for w in WORKERS[1:]:
            row = report.rows.get(f"scaling/{transport}_{w}w")
            bounds = [b for c in one if (b := share_bound(c, w, cpus)) is not None]
            if row is not None and bounds:
                row.extra["bound"] = bounds


def prepare(bench: Bench) -> None:
    """Nothing to build before the timing starts (the sources are loaded by the run)."""


def measure(bench: Bench, prepared: None) -> None:
    """DataLoader scaling over MosaicDataset, three transports."""
    settings, report, out = bench.settings, bench.report, bench.out
    dataset: Any = MosaicDataset(bench.sources.mosaic, seed=bench.seed, output_size=bench.size)
    measure_scaling(report, dataset, bench.batch_size, settings, bench.progress)
    out(
        f"{SECTION.number}. "
        f"Scaling: DataLoader over MosaicDataset 2x2, batch {bench.batch_size}, samples/s "
        f"in steady state ({settings.batches + settings.batches % 2} timed batches per round)"
    )
    for transport in TRANSPORTS:
        ids = [f"scaling/{transport}_{w}w" for w in WORKERS]
        print_rows(out, report, ids, baseline=ids[0])
        line = (
            f"    1 worker vs 0: {ratio_text(report.ratio(ids[1], ids[0]))}; "
            f"2 workers vs 1: {ratio_text(report.ratio(ids[2], ids[1]))}"
        )
        two, one = (report.rows[k].extra.get("projected") for k in (ids[2], ids[1]))
        if two and one:
            line += (
                f"; projected on {os.cpu_count()} idle cores "
                f"{summarize(two).median / summarize(one).median:.2f}x"
            )
        out(line)
        single = report.rows[ids[1]]
        main, cores = single.extra.get("main"), single.extra.get("cores")
        two, one = (report.rows[k].extra.get("bound") for k in (ids[2], ids[1]))
        if main and cores and two and one:
            ms_per_batch = bench.batch_size / summarize(single.values).median * 1000
            main_ms = summarize(main).median * ms_per_batch
            worker_ms = summarize(cores).median * ms_per_batch - main_ms
            allowed = summarize(two).median / summarize(one).median
            out(
                f"    CPU per batch with 1 worker: the worker {worker_ms:.1f} ms, the main "
                f"process {main_ms:.1f} ms; that split allows 2 workers / 1 {allowed:.2f}x on "
                f"{os.cpu_count()} idle cores"
            )
    recycled = report.diagnostics.get("recycle_stats")
    if recycled:
        out(
            f"  BatchCollator's buffers (all its loaders): {recycled['reused']} reused, "
            f"{recycled['pooled']} allocated into a pool, {recycled['unpooled']} allocated "
            "outside it (every pooled buffer busy)"
        )
    costs = report.diagnostics.get("transport")
    if costs:
        make = costs["make_ms"]
        out(
            "  moving one batch out of a worker, measured in-process (making the batch: "
            f"{make:.1f} ms):"
        )
        out(
            f"    numpy: {costs['batch_mb']:.1f} MB pickled, dumps {costs['dumps_ms']:.1f} + "
            f"loads {costs['loads_ms']:.1f} ms ({costs['pickle_ms'] / make:.0%}), plus the pipe"
        )
        out(
            "    tensors: stacking into fresh shared memory (default_collate in a worker) "
            f"{costs['shm_fresh_ms']:.1f} ms ({costs['shm_fresh_ms'] / make:.0%}); into a "
            f"reused shared buffer {costs['shm_reused_ms']:.1f} ms "
            f"({costs['shm_reused_ms'] / make:.0%})"
        )
    out()
