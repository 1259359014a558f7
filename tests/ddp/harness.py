"""Launch real torch.distributed jobs (gloo, CPU) for the tests.

``launch(fn, world_size, tmp_path, **kwargs)`` starts ``world_size`` fresh processes
with torch.multiprocessing (as the CLI does, :func:`rankaug.cli.launch.fresh_start_method`:
forked from a fork server that has imported torch once, with the caller's environment
as it is at the call), joins them into one gloo process group (file rendezvous, no
ports), calls ``torch.manual_seed(0)`` on every rank — the setting in which naive
augmentation repeats itself across GPUs — runs ``fn(rank, world_size, **kwargs)`` and
returns the ranks' JSON-serialisable results, indexed by rank.
``launch_forked(fn, world_size, tmp_path, *args)`` forks the ranks from the calling
process instead, so that they inherit what it built (a wrapper made before the ranks).

Each rank's default start method for DataLoader workers is ``fork``, as under
``torchrun`` (a process that ``spawn`` started would otherwise default to ``spawn``:
every loader that names no context would start its workers as new interpreters).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import multiprocessing
import os
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from rankaug.cli.launch import fresh_start_method

os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")


def digest(array: Any) -> str:
    """A short fingerprint of an image array or tensor."""
    if isinstance(array, torch.Tensor):
        array = array.numpy()
    array = np.ascontiguousarray(np.asarray(array))
    return hashlib.sha1(array.tobytes() + str(array.shape).encode()).hexdigest()[:16]


def _joined(rank: int, world_size: int, outdir: str) -> bool:
    """Join the launch's gloo group; on failure note it (the launch tries again), False.

    gloo's loopback connect fails now and then, and not always on every rank: a rank
    whose peer gave up could pass ``init_process_group`` and go on into the job, to wait
    for that peer forever (seen: a rank in the job's own group, 5 minutes). A barrier
    makes every rank of a group a peer left fail too (its socket closed), at once.
    """
    try:
        dist.init_process_group(
            "gloo", init_method=f"file://{outdir}/rendezvous", rank=rank, world_size=world_size
        )
    except RuntimeError as error:
        Path(outdir, f"rank{rank}.rendezvous").write_text(str(error))
        return False
    try:
        dist.barrier()
    except RuntimeError as error:
        Path(outdir, f"rank{rank}.rendezvous").write_text(str(error))
        dist.destroy_process_group()
        return False
    return True


def _entry(
    rank: int,
    target: str,
    world_size: int,
    outdir: str,
    kwargs: dict[str, Any],
    environ: dict[str, str],
) -> None:
    os.environ.clear()
    os.environ.update(environ)
    multiprocessing.set_start_method("fork", force=True)  # as under torchrun
    module_name, _, name = target.rpartition(":")
    fn = getattr(importlib.import_module(module_name), name)
    if not _joined(rank, world_size, outdir):
        return
    try:
        torch.manual_seed(0)
        result = fn(rank, world_size, **kwargs)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    Path(outdir, f"rank{rank}.json").write_text(json.dumps(result))


def _forked_entry(rank: int, fn: Callable[..., Any], world_size: int, outdir: str,
                  args: tuple[Any, ...]) -> None:  # fmt: skip
    if not _joined(rank, world_size, outdir):
        return
    try:
        torch.manual_seed(0)
        result = fn(rank, world_size, *args)
        dist.barrier()
    except BaseException:
        Path(outdir, f"rank{rank}.error").write_text(traceback.format_exc())
        raise
    finally:
        dist.destroy_process_group()
    Path(outdir, f"rank{rank}.json").write_text(json.dumps(result))


def launch_forked(
    fn: Callable[..., Any], world_size: int, tmp_path: Path, *args: Any, timeout: float = 300
) -> list[Any]:
    """Run ``fn(rank, world_size, *args)`` on ``world_size`` gloo ranks forked from here.

    Unlike :func:`launch`, the ranks are forked from this process, so they inherit what
    it built before the call: ``args`` (a wrapper made before the ranks start, as with
    ``multiprocessing.get_context("fork")``) reach them unpickled. Returns each rank's
    result; a rank that raised is a ``RuntimeError`` holding its traceback.
    """
    context = multiprocessing.get_context("fork")
    for _ in range(3):
        outdir = Path(tempfile.mkdtemp(prefix=f"ddp-{fn.__name__}-", dir=tmp_path))
        ranks = [
            context.Process(target=_forked_entry, args=(rank, fn, world_size, str(outdir), args))
            for rank in range(world_size)
        ]
        for process in ranks:
            process.start()
        for process in ranks:
            process.join(timeout)
        for process in ranks:
            if process.is_alive():
                process.kill()
                process.join()
        errors = [path.read_text() for path in sorted(outdir.glob("rank*.error"))]
        if errors or any(process.exitcode != 0 for process in ranks):
            codes = [process.exitcode for process in ranks]
            raise RuntimeError(f"a forked rank failed (exit codes {codes}): {errors}")
        if not any(outdir.glob("rank*.rendezvous")):
            return [json.loads((outdir / f"rank{r}.json").read_text()) for r in range(world_size)]
    failures = [path.read_text() for path in sorted(outdir.glob("rank*.rendezvous"))]
    raise RuntimeError(f"the ranks could not join their gloo group in 3 tries: {failures}")


def launch(fn: Callable[..., Any], world_size: int, tmp_path: Path, **kwargs: Any) -> list[Any]:
    """Run ``fn`` on ``world_size`` gloo ranks; return each rank's result."""
    target = f"{fn.__module__}:{fn.__name__}"
    for _ in range(3):  # as rankaug.cli.launch does, a failed rendezvous is tried again
        outdir = Path(tempfile.mkdtemp(prefix=f"ddp-{fn.__name__}-", dir=tmp_path))
        mp.start_processes(  # type: ignore[attr-defined]
            _entry,
            args=(target, world_size, str(outdir), kwargs, dict(os.environ)),
            nprocs=world_size,
            start_method=fresh_start_method(),
            join=True,
        )
        if not any(outdir.glob("rank*.rendezvous")):
            return [json.loads((outdir / f"rank{r}.json").read_text()) for r in range(world_size)]
    failures = [path.read_text() for path in sorted(outdir.glob("rank*.rendezvous"))]
    raise RuntimeError(f"the ranks could not join their gloo group in 3 tries: {failures}")
