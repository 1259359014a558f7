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
not a DataLoader worker (a rank, whose process group is up, is not warned), and
:func:`drawn` when a thread draws from a stream that another thread drew from last, and
that thread is still running (the main thread always is). :func:`check_saved` warns, once
per process, when a stream starts under torchdata's ``StatefulDataLoader`` whose dataset
(a ``Subset`` or ``ConcatDataset`` of wrappers) has no ``state_dict``: the loader saves
none of the stream's position, and a resumed run would start it over. One thread alone
drawing from a wrapper (a ``ThreadPoolExecutor(1)``, a training loop run in a thread of its own), or
threads taking turns, each started after the last one ended, draw in an order the
program fixes: they repeat, and are not warned. ``keying="sample"`` keys each sample by
its index and suits both. :data:`LOCK` makes threads that miss one stream together start
it once.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import warnings
from collections.abc import Mapping
from types import FrameType
from typing import Final, TypeAlias

import torch.distributed as dist
from torch.utils.data import get_worker_info
from torch.utils.data._utils.fetch import _BaseDatasetFetcher as _Fetcher

from rankaug._process import current_pid, forked
from rankaug.context import DISTRIBUTED
from rankaug.errors import RankaugWarning
from rankaug.streams import KEPT

__all__ = ["LOCK", "Drawers", "check", "check_saved", "drawn", "restarted"]

LOCK = threading.Lock()
"""Held while a stream is looked up again and started (a new one in a forked child)."""

Drawers: TypeAlias = dict[tuple[int, int, int, int], threading.Thread]
"""The thread that last drew from each of a wrapper's streams (keyed as its streams)."""

_warned: int | None = None  # the process that warned
_restarted: int | None = None  # the process that warned of a dropped stream started again
_unsaved: int | None = None  # the process that warned of a stream no loader state holds
_STATEFUL: Final = f"{os.sep}torchdata{os.sep}stateful_dataloader{os.sep}"
_ADVICE: Final = (
    "keying='sample' keys each sample by its index instead, the same wherever it is loaded"
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
        RankaugWarning: In a child process that is neither a DataLoader worker nor a
            rank with its process group up.
    """
    if _warned == current_pid() or get_worker_info() is not None:
        return
    if (forked() or multiprocessing.parent_process() is not None) and not (
        DISTRIBUTED and dist.is_initialized()
    ):
        _warn(
            f"{name} (keying='stream') starts a stream in a child process that is not a "
            "DataLoader worker: every such process counts as worker 0 and starts the same "
            "stream, so their draws repeat one another's. "
            f"{_ADVICE} (if this process alone loads from the wrapper, its draws do repeat)"
        )


def check_saved(wrapper: object) -> None:
    """Warn, once per process, where a stream of ``wrapper`` starts that no state saves.

    torchdata's ``StatefulDataLoader`` saves the state of the dataset it loads from, when
    that has ``state_dict`` and ``load_state_dict``: a rankaug wrapper (which saves those
    inside it) does, a ``Subset`` or ``ConcatDataset`` around one does not.

    Warns:
        RankaugWarning: In a ``StatefulDataLoader`` fetch from a dataset other than
            ``wrapper`` that has no state of its own.
    """
    global _unsaved
    if _unsaved == current_pid():
        return
    frame: FrameType | None = sys._getframe(1)
    outer = None
    while frame is not None:
        if outer is None and isinstance(fetcher := frame.f_locals.get("self"), _Fetcher):
            outer = fetcher.dataset
        if outer is not None and _STATEFUL in frame.f_code.co_filename:
            break
        frame = frame.f_back
    if (
        frame is None
        or outer is wrapper
        or all(callable(getattr(outer, name, None)) for name in ("state_dict", "load_state_dict"))
    ):
        return
    _unsaved = current_pid()
    warnings.warn(
        f"{type(wrapper).__name__} (keying='stream') starts a stream under torchdata's "
        f"StatefulDataLoader, whose dataset, a {type(outer).__name__}, has no state_dict(): "
        "the loader saves none of the stream's position, so a resumed run starts it over "
        "and repeats its draws. Make a rankaug wrapper the loader's dataset (it saves the "
        "wrappers inside it, also behind Subset or ConcatDataset), give that dataset "
        "state_dict/load_state_dict that save the wrappers', or use keying='sample', which "
        "resumes without state",
        RankaugWarning,
        stacklevel=4,
    )


def restarted(name: str, key: tuple[int, int, int, int]) -> None:
    """Warn, once per process, that a stream the wrapper ``name`` dropped starts again.

    A worker keeps the :data:`~rankaug.streams.KEPT` streams it drew from last; one
    started again repeats the draws it gave before.

    Args:
        name: The wrapper's class name, for the message.
        key: The stream, ``(pid, worker_id, rank, epoch)``.
    """
    global _restarted
    if _restarted == current_pid():
        return
    _restarted = current_pid()
    _, worker_id, rank, epoch = key
    warnings.warn(
        f"{name} (keying='stream') starts its stream of epoch {epoch} (rank {rank}, worker "
        f"{worker_id}) again: a worker keeps the {KEPT} streams it drew from last, and passes "
        f"of {KEPT} or more other epochs in between (validation loops over the same wrapper "
        "with num_workers=0, whose EpochSampler counts its own epochs) dropped it, so it "
        "repeats the draws it gave before. Give the other loop a wrapper of its own, or use "
        "keying='sample'. (An epoch run again on purpose, set_epoch(e) once more, is warned "
        "too: a stream cannot tell it from that; its rerun repeats the epoch's draws only "
        "once dropped, and a kept stream continues. keying='sample' repeats them each time.)",
        RankaugWarning,
        stacklevel=4,
    )


def drawn(
    drawers: Drawers,
    live: Mapping[tuple[int, int, int, int], object],
    key: tuple[int, int, int, int],
    name: str,
) -> None:
    """Record that this thread draws from the stream ``key``; warn if it shares it.

    Warns (once per process) if another thread drew from the stream last and is still
    running: then which thread draws which numbers depends on timing. The record of a
    stream no longer in ``live`` is dropped.

    Args:
        drawers: The wrapper's record (:data:`Drawers`).
        live: The wrapper's streams.
        key: The stream.
        name: The wrapper's class name, for the message.

    Warns:
        RankaugWarning: If the thread that last drew from the stream is another one,
            still running.
    """
    me = threading.current_thread()
    if drawers.get(key) is me or _warned == current_pid():
        return
    with LOCK:
        last = drawers.get(key)
        for old in [other for other in drawers if other not in live]:
            del drawers[old]
        drawers[key] = me
    if last is None or last is me or not last.is_alive():
        return  # the first thread, or the next one after the last ended: one order
    _warn(
        f"{name} (keying='stream') draws from a stream in the thread {me.name!r} while "
        f"the thread {last.name!r}, which drew from it too, is still running: threads "
        "that share the wrapper share its streams, and which thread draws which numbers "
        f"depends on timing, so a rerun differs. {_ADVICE}"
    )


def _warn(message: str) -> None:
    global _warned
    _warned = current_pid()
    warnings.warn(message, RankaugWarning, stacklevel=5)
