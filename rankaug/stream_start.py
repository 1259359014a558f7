"""Where a ``keying="stream"`` stream starts: once per key, and only where it repeats.

A stream's key is ``(seed, stream, rank, worker_id, epoch)``, the worker id being the
DataLoader's, 0 outside a worker. That premise fails silently for two kinds of caller:

* **processes that are not DataLoader workers** (``multiprocessing.Pool``, torchdata's
  ``ParallelMapper(method="process")``, ``os.fork``): each one counts as worker 0 and
  starts the same stream, so their draws repeat one another's;
* **threads sharing a wrapper** (a ``ThreadPoolExecutor``,
  ``ParallelMapper(method="thread")``): they share its streams, and which thread draws
  which numbers depends on timing, so a rerun differs.

:func:`check` warns, once per process, when a stream starts in a child process that is
not a DataLoader worker (a rank, whose process group is up, is not warned) or in a thread
other than the main thread; ``keying="sample"`` keys each sample by its index and suits
both. :data:`LOCK` makes threads that miss one stream together start it once.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import warnings
from typing import Final

import torch.distributed as dist
from torch.utils.data import get_worker_info

from rankaug._process import current_pid, forked
from rankaug.context import DISTRIBUTED
from rankaug.errors import RankaugWarning

__all__ = ["LOCK", "check"]

LOCK = threading.Lock()
"""Held while a stream is looked up again and started (a new one in a forked child)."""

_warned: int | None = None  # the process that warned
_ADVICE: Final = (
    "keying='sample' keys each sample by its index instead, the same wherever it is "
    "loaded (if this thread or process alone loads from the wrapper, its draws do repeat)"
)


def _new_lock() -> None:
    global LOCK
    LOCK = threading.Lock()  # a thread of the parent may have held the old one


os.register_at_fork(after_in_child=_new_lock)


def check(name: str) -> None:
    """Warn, once per process, where a stream of the wrapper ``name`` starts unrepeatably.

    Args:
        name: The wrapper's class name, for the message.

    Warns:
        RankaugWarning: In a thread other than the main thread, or in a child process
            that is neither a DataLoader worker nor a rank with its process group up.
    """
    global _warned
    pid = current_pid()
    if _warned == pid or get_worker_info() is not None:
        return
    thread = threading.current_thread()
    if thread is not threading.main_thread():
        where = (
            f"in the thread {thread.name!r}, not the main thread: threads that share the "
            "wrapper share its streams, and which thread draws which numbers depends on "
            "timing, so a rerun differs"
        )
    elif (forked() or multiprocessing.parent_process() is not None) and not (
        DISTRIBUTED and dist.is_initialized()
    ):
        where = (
            "in a child process that is not a DataLoader worker: every such process "
            "counts as worker 0 and starts the same stream, so their draws repeat one "
            "another's"
        )
    else:
        return
    _warned = pid
    warnings.warn(
        f"{name} (keying='stream') starts a stream {where}. {_ADVICE}",
        RankaugWarning,
        stacklevel=4,
    )
