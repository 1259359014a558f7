"""Run a job on N ranks the way a real DDP launch does, on this machine.

:func:`launch` starts one fresh process per rank with ``torch.multiprocessing``, joins
them into a gloo process group through a file in a temporary folder (no ports), sets
``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE`` as ``torchrun`` does, and seeds every rank
with :func:`rankaug.seed_everything` and the **same** seed, which includes
``torch.manual_seed(seed)``: the usual training script, and the setting in which
augmentation drawn from global state repeats on every GPU. Each rank then calls
``job(rank, world_size)``; the results come back pickled, in rank order.

The ranks are started by ``forkserver`` where the platform has it (spawn elsewhere): each
is forked from one clean interpreter that has imported torch, albumentations and rankaug
once, so a launch costs milliseconds instead of the seconds of importing them again per
rank; nothing else of the calling process reaches them, as with spawn.
"""

from __future__ import annotations

import datetime
import multiprocessing
import os
import pickle
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Protocol

import torch
import torch.distributed as dist
from torch.multiprocessing.spawn import ProcessExitedException, start_processes

from rankaug.seeding import seed_everything

__all__ = [
    "Job",
    "LaunchError",
    "fresh_start_method",
    "keep_as_is",
    "launch",
    "only_sample",
    "progress",
]

_RENDEZVOUS_TIMEOUT = datetime.timedelta(seconds=120)
# gloo's full-mesh connect over loopback fails now and then ("Connection closed by
# peer"); before any job has run the whole launch is simply tried again, fresh.
_RENDEZVOUS_TRIES = 3
# What the fork server imports once for every rank it starts (a missing one is skipped).
_PRELOAD = ["torch", "torch.distributed", "numpy", "cv2", "albumentations", "rankaug"]


def fresh_start_method() -> str:
    """``"forkserver"`` with torch, albumentations and rankaug preloaded, else ``"spawn"``.

    Either starts each process fresh; the fork server starts once per calling process.
    It sets multiprocessing's preload list, a setting of the whole process (read when
    its fork server starts): the CLI's process, which is its own.

    >>> fresh_start_method() in ("forkserver", "spawn")
    True
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return "spawn"
    multiprocessing.set_forkserver_preload(_PRELOAD)  # (only read when the server starts)
    return "forkserver"


class Job(Protocol):
    """A picklable callable run on every rank; its result must be picklable."""

    def __call__(self, rank: int, world_size: int) -> Any:
        """Run on one rank and return that rank's result."""
        ...


class LaunchError(RuntimeError):
    """A rank failed; the message holds its traceback.

    A job may raise a ``LaunchError`` itself to report a failure in its own words:
    :func:`launch` then re-raises that error as it is.
    """


def keep_as_is(sample: Any) -> Any:
    """A ``collate_fn`` that hands samples over unchanged (no conversion to tensors).

    >>> keep_as_is((1, "a"))
    (1, 'a')
    """
    return sample


def only_sample(batch: list[Any]) -> Any:
    """A ``collate_fn`` for ``batch_size=1``: the batch's one sample, unchanged.

    The CLI's loaders batch by one rather than ``batch_size=None``, as training loops
    do: a DataLoader of ``batch_size=None`` calls ``iter()`` on its sampler twice for
    the first pass when it has workers.

    >>> only_sample([{"image": None}])
    {'image': None}
    """
    (sample,) = batch
    return sample


def progress(enabled: bool, rank: int, message: str) -> None:
    """Print ``[rank R] message`` to stderr when ``enabled`` (progress of long runs).

    >>> progress(False, 0, "epoch 1/2")
    """
    if enabled:
        print(f"[rank {rank}] {message}", file=sys.stderr, flush=True)


def _rank_main(
    rank: int,
    job_bytes: bytes,
    world_size: int,
    seed: int,
    folder: str,
    sys_path: list[str],
    environ: dict[str, str],
) -> None:
    # The caller's path and environment as they are now (a fork server's are those of
    # its start), before the job's modules are imported by unpickling it.
    for entry in reversed(sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    os.environ.clear()
    os.environ.update(environ)
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
    if "OMP_NUM_THREADS" not in os.environ and world_size > 1:
        torch.set_num_threads(1)  # what torchrun does for several ranks on one machine
    out = Path(folder)
    try:
        dist.init_process_group(
            "gloo",
            init_method=f"file://{out / 'rendezvous'}",
            rank=rank,
            world_size=world_size,
            timeout=_RENDEZVOUS_TIMEOUT,
        )
    except Exception:  # no job has run: the launch may be tried again
        (out / f"rank{rank}.rendezvous").write_text(traceback.format_exc(), encoding="utf-8")
        return
    except BaseException:  # an interrupt: not tried again
        (out / f"rank{rank}.error").write_text(traceback.format_exc(), encoding="utf-8")
        return
    try:
        try:
            job: Job = pickle.loads(job_bytes)
            seed_everything(seed)
            result = job(rank, world_size)
        finally:
            dist.destroy_process_group()
        (out / f"rank{rank}.pkl").write_bytes(pickle.dumps(result))
    except LaunchError as error:  # a failure the job reports in its own words
        (out / f"rank{rank}.failure").write_bytes(pickle.dumps(error))
    except BaseException:
        (out / f"rank{rank}.error").write_text(traceback.format_exc(), encoding="utf-8")


def launch(job: Job, world_size: int, *, seed: int) -> list[Any]:
    """Run ``job`` on ``world_size`` fresh gloo ranks, each seeded with ``seed``.

    Args:
        job: A picklable callable ``job(rank, world_size)`` defined in an importable
            module.
        world_size: The number of ranks, at least 1.
        seed: The seed every rank passes to :func:`rankaug.seed_everything`,
            in ``[0, 2**32)``.

    Returns:
        The ranks' results, indexed by rank.

    Raises:
        ValueError: If ``world_size`` is below 1.
        LaunchError: If a rank raised (the message holds the first failing rank's
            traceback) or died, or the ranks failed to join their group in every one
            of three tries (each from fresh processes, before the job runs). A
            :class:`LaunchError` the job raised itself (such as
            :class:`rankaug.cli.failure.SampleFailure`) comes back as it is, without
            a traceback.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    failed: list[str] = []
    for _ in range(_RENDEZVOUS_TRIES):
        results = _attempt(job, world_size, seed)
        if isinstance(results, list):
            return results
        failed.append(results)
    raise LaunchError(
        f"the {world_size} rank(s) could not join their gloo group in "
        f"{_RENDEZVOUS_TRIES} tries ({'; '.join(failed)})"
    )


def _attempt(job: Job, world_size: int, seed: int) -> list[Any] | str:
    """One launch: the ranks' results, or the first rank's last line if its rendezvous failed."""
    with tempfile.TemporaryDirectory(prefix="rankaug-launch-") as folder:
        out = Path(folder)
        try:
            start_processes(  # type: ignore[no-untyped-call]
                _rank_main,
                args=(
                    pickle.dumps(job),
                    world_size,
                    seed,
                    folder,
                    list(sys.path),
                    dict(os.environ),
                ),
                nprocs=world_size,
                start_method=fresh_start_method(),
                join=True,
            )
        except ProcessExitedException as error:
            raise LaunchError(f"a rank process died: {error}") from None
        for rank in range(world_size):  # (a peer's error then follows from it)
            rendezvous = out / f"rank{rank}.rendezvous"
            if rendezvous.exists():
                return f"rank {rank}: {_last_line(rendezvous.read_text(encoding='utf-8'))}"
        for rank in range(world_size):
            reported = out / f"rank{rank}.failure"
            if reported.exists():
                raise pickle.loads(reported.read_bytes())
            failure = out / f"rank{rank}.error"
            if failure.exists():
                text = failure.read_text(encoding="utf-8").rstrip()
                raise LaunchError(f"rank {rank} failed ({_last_line(text)}):\n{text}")
        return [pickle.loads((out / f"rank{rank}.pkl").read_bytes()) for rank in range(world_size)]


def _last_line(text: str) -> str:
    lines = text.rstrip().splitlines()
    return lines[-1] if lines else "no traceback"
