"""The pass a plain index belongs to, when an index map lost its epoch on the way.

``Subset`` (``self.indices[i]``), ``i * 2``, ``i % n`` and other index maps hand a
rankaug wrapper a plain ``int`` where :class:`~rankaug.EpochSampler` gave an
:class:`~rankaug.EpochIndex`. Inside a DataLoader fetch the batch being fetched is
still at hand, in the frame of PyTorch's ``_MapDatasetFetcher.fetch``, in the main
process and in every worker (torchdata's ``StatefulDataLoader`` uses it too): when its
indices carry one epoch, that is the sample's epoch, exactly. The frame is looked for
at any depth of the calling thread's stack, then in the process's other threads: a
thread pool that loads a batch for the fetch (a dataset's ``__getitems__``) runs outside
the fetch's stack, while the thread that fetches waits for it (a worker fetches one
batch at a time). Outside any fetch, the epoch was lost when an ``EpochSampler`` pass
runs in the process, or, in a worker, when the worker has fetched a batch of indices
that carry their epoch: the wrapper falls back to its ``set_epoch`` value and warns, once.

Nothing here runs while the process has never made an EpochIndex, nor for an index
that carries its epoch.

Also here: the streaming passes reading their streams in this process, whose epoch a
rankaug wrapper called in a thread a stream started does not get (:func:`warn_threaded`).
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from types import FrameType
from typing import Final

from rankaug._process import current_pid
from rankaug.epoch import _CLASSES, EpochIndex
from rankaug.errors import RankaugWarning

__all__ = [
    "MIXED",
    "PLAIN",
    "STREAMING",
    "UNKNOWN",
    "begin",
    "begin_stream",
    "end",
    "end_stream",
    "pass_epoch",
    "warn_lost",
    "warn_threaded",
]

PLAIN: Final = -1
"""No pass epoch to find (no EpochIndex in the batch, or none in this process)."""
UNKNOWN: Final = -2
"""Called outside a DataLoader fetch while an EpochSampler pass runs in this process (or,
in a worker, after it fetched a batch of one), or while threads fetch batches of several."""
MIXED: Final = -3
"""The batch being fetched holds indices of several epochs, or some without one."""

_PROBE: Final = 32  # stack frames probed by depth; deeper ones are walked one by one


def _fetch_code() -> object:
    try:
        from torch.utils.data._utils.fetch import _MapDatasetFetcher
    except ImportError:  # pragma: no cover - a PyTorch without it: nothing found
        return None
    return _MapDatasetFetcher.fetch.__code__


_FETCH: Final = _fetch_code()  # compared by identity: a code object's hash is slow
_last: tuple[object, int] = (None, PLAIN)  # the last batch looked at, and its epoch
_fetched: tuple[int, int] = (0, PLAIN)  # (pid, epoch) of the last such batch with one
_NONE: Final = object()  # no fetch on a stack


def _batch_epoch(batch: object) -> int:
    global _last, _fetched
    last = _last
    if last[0] is batch:  # the next sample of the same batch
        return last[1]
    if isinstance(batch, EpochIndex):  # batch_size=None: the index itself
        found = batch.epoch
    elif isinstance(batch, list | tuple) and batch:
        epochs = {index.epoch if isinstance(index, EpochIndex) else None for index in batch}
        if len(epochs) == 1:
            one = epochs.pop()
            found = PLAIN if one is None else one
        else:
            found = MIXED
    else:
        found = PLAIN
    _last = (batch, found)
    if found >= 0:
        _fetched = (current_pid(), found)
    return found


def pass_epoch(in_worker: bool = False) -> int:
    """The epoch of the DataLoader batch being fetched, for an index without one.

    Args:
        in_worker: Whether this runs in a DataLoader worker.

    Returns:
        The epoch, or :data:`PLAIN` (no pass epoch: the ``set_epoch`` value is right),
        :data:`UNKNOWN` or :data:`MIXED` (the epoch was lost: fall back and warn).
    """
    if not _CLASSES:  # no EpochIndex was ever made or received in this process
        return PLAIN
    get = sys._getframe
    # From here: 1 is sample_epoch, 2 the wrapper's context(), 3 its __getitem__; the
    # fetch is above.
    # Probing by depth materialises one frame object each, not every frame between.
    for depth in range(4, _PROBE):
        try:
            frame = get(depth)
        except ValueError:  # the top of the stack: not in a fetch on this thread
            return _elsewhere(in_worker)
        if frame.f_code is _FETCH:
            return _batch_epoch(frame.f_locals.get("possibly_batched_index"))
    batch = _fetch_in(frame.f_back)  # a deep stack: the rest, frame by frame
    return _elsewhere(in_worker) if batch is _NONE else _batch_epoch(batch)


def _fetch_in(frame: FrameType | None) -> object:
    """The batch of the innermost fetch at or above ``frame``, or :data:`_NONE`."""
    while frame is not None:
        if frame.f_code is _FETCH:
            return frame.f_locals.get("possibly_batched_index")
        frame = frame.f_back
    return _NONE


def _elsewhere(in_worker: bool) -> int:
    """The verdict for a call outside a fetch: the batch another thread fetches, if one.

    The thread that called a thread pool's ``map`` in ``__getitems__`` (the worker's
    own, or the one iterating the loader) waits inside the fetch for its pool: its
    batch is the one being loaded. Threads fetching batches of different epochs leave
    the call's unknown. The main thread borrows no batch: a call there outside a fetch
    (a sample indexed by hand) is no pool's.
    """
    me = threading.get_ident()
    verdicts = set()
    if me != threading.main_thread().ident:
        for ident, top in sys._current_frames().items():
            batch = _NONE if ident == me else _fetch_in(top)
            if batch is not _NONE:
                verdicts.add(_batch_epoch(batch))
    if len(verdicts) == 1:
        return verdicts.pop()
    if verdicts or running() or (in_worker and _fetched_epoch() is not None):
        return UNKNOWN
    return PLAIN


def _fetched_epoch() -> int | None:
    """The epoch of the last batch this process fetched whose indices carried one."""
    pid, epoch = _fetched
    return epoch if pid == current_pid() and epoch >= 0 else None


# ------------------------------------------------------------------ running passes
_RUNNING: Final[dict[int, tuple[int, int]]] = {}  # id of a pass -> (pid, epoch)


def begin(key: int, epoch: int) -> None:
    """Record that the pass ``key`` of ``epoch`` runs in this process."""
    _RUNNING[key] = (os.getpid(), epoch)


def end(key: int, _running: dict[int, tuple[int, int]] = _RUNNING) -> None:
    """Record that the pass ``key`` has ended (finished, closed or dropped).

    The table is bound when the function is made: a pass dropped while the interpreter
    exits, after the module's globals are gone, still ends quietly.
    """
    _running.pop(key, None)


def running() -> set[int]:
    """The epochs of the EpochSampler passes running in this process."""
    if not _RUNNING:
        return set()
    pid = os.getpid()
    return {epoch for owner, epoch in list(_RUNNING.values()) if owner == pid}


def warn_lost(
    wrapper: str, index: object, shared: int, verdict: int, in_worker: bool = False
) -> bool:
    """Warn that ``wrapper[index]`` lost its pass's epoch; ``False`` when it did not.

    Args:
        wrapper: The wrapper's class name.
        index: The plain index it was given.
        shared: The ``set_epoch`` value it falls back to.
        verdict: :data:`UNKNOWN` or :data:`MIXED`, from :func:`pass_epoch`.
        in_worker: Whether this runs in a DataLoader worker.

    Returns:
        Whether a warning was given (not when the fallback is the running pass's epoch,
        or in a worker the epoch of the batch it fetched last).
    """
    fix = (
        "Hand the EpochIndex on (EpochIndex(j, epoch=i.epoch) for a mapped index; + and - "
        "with ints keep the epoch), index through a DataLoader (rankaug reads the epoch of "
        "the batch being fetched), or call set_epoch on the wrapper before each pass."
    )
    if verdict == MIXED:
        cause = (
            "the DataLoader batch it belongs to holds indices of several epochs, or some "
            "without one, so the pass's epoch is unknown"
        )
    elif (epochs := running()) or not in_worker:
        if not epochs or shared in epochs:
            return False
        cause = (
            f"an EpochSampler pass of epoch {min(epochs)} is running in this process (and "
            "this is no DataLoader fetch): if the index came from that pass, an index map "
            "(Subset's indices[i], i * 2) turned its EpochIndex into a plain int"
        )
    else:
        last = _fetched_epoch()
        if last is None or shared == last:
            return False
        cause = (
            f"this DataLoader worker fetched a batch of epoch {last} (its indices carried "
            "it) and this call comes outside any batch fetch (from a thread that outlives "
            "the fetch, say), or during fetches of several epochs at once"
        )
    warnings.warn(
        f"{wrapper}[{index!r}]: the index carries no epoch although {cause}. It is keyed "
        f"with set_epoch's epoch, {shared}, which repeats the same augmentation every pass "
        f"until set_epoch changes it. {fix}",
        RankaugWarning,
        stacklevel=5,
    )
    return True


# ------------------------------------------------------------------ streaming passes
STREAMING: Final[dict[int, tuple[int, int, int]]] = {}
"""The streaming passes reading their streams: id of a pass -> (pid, thread, epoch)."""


def begin_stream(key: int, epoch: int) -> None:
    """Record that the streaming pass ``key`` of ``epoch`` reads its stream in this thread."""
    STREAMING[key] = (os.getpid(), threading.get_ident(), epoch)


def end_stream(key: int, _streaming: dict[int, tuple[int, int, int]] = STREAMING) -> None:
    """Record that the streaming pass ``key`` has ended (bound as :func:`end`)."""
    _streaming.pop(key, None)


def warn_threaded(wrapper: str, index: object, shared: int) -> bool:
    """Warn that ``wrapper[index]`` runs in a thread beside a streaming pass of another epoch.

    A streaming wrapper hands its pass's epoch to the wrappers its stream calls in the
    thread that reads it; a thread the stream starts (a pool loading ahead) does not
    inherit it. Not warned: a call in a thread that reads a stream itself, or one whose
    ``set_epoch`` value ``shared`` is the epoch of a pass running beside it.

    Returns:
        Whether a warning was given.
    """
    pid, me = os.getpid(), threading.get_ident()
    beside = [(thread, epoch) for owner, thread, epoch in list(STREAMING.values()) if owner == pid]
    epochs = {epoch for thread, epoch in beside if thread != me}
    if not epochs or shared in epochs or any(thread == me for thread, _ in beside):
        return False
    warnings.warn(
        f"{wrapper}[{index!r}] runs in a thread beside a streaming pass of epoch "
        f"{min(epochs)} that reads its stream in this process, and gets no epoch there: a "
        "streaming wrapper hands its pass's epoch to the wrappers its stream calls in the "
        "thread that iterates it, and a thread the stream starts (a pool loading ahead) "
        f"does not inherit it. It is keyed with set_epoch's epoch, {shared}, which repeats "
        "the same augmentation every pass until set_epoch changes it. Call it in the "
        "thread that iterates the stream, or call set_epoch on it before each pass.",
        RankaugWarning,
        stacklevel=5,
    )
    return True
