"""The pass a plain index belongs to, when an index map lost its epoch on the way.

``Subset`` (``self.indices[i]``), ``i * 2``, ``i % n`` and other index maps hand a
rankaug wrapper a plain ``int`` where :class:`~rankaug.EpochSampler` gave an
:class:`~rankaug.EpochIndex`. Inside a DataLoader fetch the batch being fetched is
still at hand, in the frame of PyTorch's ``_MapDatasetFetcher.fetch``, in the main
process and in every worker (torchdata's ``StatefulDataLoader`` uses it too): when its
indices carry one epoch, that is the sample's epoch, exactly. Outside a fetch, an
``EpochSampler`` pass running in the process means the epoch was lost: the wrapper
falls back to its ``set_epoch`` value and warns, once.

Nothing here runs while the process has never made an EpochIndex, nor for an index
that carries its epoch.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Final

from rankaug.epoch import _CLASSES, EpochIndex
from rankaug.errors import RankaugWarning

__all__ = ["MIXED", "PLAIN", "UNKNOWN", "begin", "end", "pass_epoch", "warn_lost"]

PLAIN: Final = -1
"""No pass epoch to find (no EpochIndex in the batch, or none in this process)."""
UNKNOWN: Final = -2
"""Called outside a DataLoader fetch while an EpochSampler pass runs in this process."""
MIXED: Final = -3
"""The batch being fetched holds indices of several epochs, or some without one."""

_DEPTH: Final = 25  # frames between a wrapper's context() and the fetch, at most


def _fetch_code() -> object:
    try:
        from torch.utils.data._utils.fetch import _MapDatasetFetcher
    except ImportError:  # pragma: no cover - a PyTorch without it: nothing found
        return None
    return _MapDatasetFetcher.fetch.__code__


_FETCH: Final = _fetch_code()  # compared by identity: a code object's hash is slow
_last: tuple[object, int] = (None, PLAIN)  # the last batch looked at, and its epoch


def _batch_epoch(batch: object) -> int:
    global _last
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
    return found


def pass_epoch() -> int:
    """The epoch of the DataLoader batch being fetched, for an index without one.

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
    for depth in range(4, _DEPTH):
        try:
            frame = get(depth)
        except ValueError:  # the top of the stack: not in a fetch
            break
        if frame.f_code is _FETCH:
            return _batch_epoch(frame.f_locals.get("possibly_batched_index"))
    return UNKNOWN if running() else PLAIN


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


def warn_lost(wrapper: str, index: object, shared: int, verdict: int) -> bool:
    """Warn that ``wrapper[index]`` lost its pass's epoch; ``False`` when it did not.

    Args:
        wrapper: The wrapper's class name.
        index: The plain index it was given.
        shared: The ``set_epoch`` value it falls back to.
        verdict: :data:`UNKNOWN` or :data:`MIXED`, from :func:`pass_epoch`.

    Returns:
        Whether a warning was given (not when the fallback is the running pass's epoch).
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
    else:
        epochs = running()
        if not epochs or shared in epochs:
            return False
        cause = (
            f"an EpochSampler pass of epoch {min(epochs)} is running in this process (and "
            "this is no DataLoader fetch): if the index came from that pass, an index map "
            "(Subset's indices[i], i * 2) turned its EpochIndex into a plain int"
        )
    warnings.warn(
        f"{wrapper}[{index!r}]: the index carries no epoch although {cause}. It is keyed "
        f"with set_epoch's epoch, {shared}, which repeats the same augmentation every pass "
        f"until set_epoch changes it. {fix}",
        RankaugWarning,
        stacklevel=5,
    )
    return True
