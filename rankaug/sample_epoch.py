"""The epoch of one sample, resolved in one place: :func:`sample_epoch`.

The rule (docs/concepts/context.md, "epoch, first match wins"):

1. the epoch the index carries (an :class:`~rankaug.EpochIndex` from
   :class:`~rankaug.EpochSampler`, :mod:`rankaug.epoch`);
2. the epoch an enclosing rankaug wrapper handed down for the call
   (:meth:`~rankaug.SampleContext.loading`, :func:`rankaug.epoch.carried_epoch`);
3. inside a DataLoader fetch, the epoch of the batch being fetched, for an index an
   index map made plain (:mod:`rankaug.passes`);
4. the wrapper's ``set_epoch`` value (:class:`EpochFallback`), with a warning when the
   epoch was lost on the way (also in a thread beside a streaming pass of another epoch),
   or when ``set_epoch`` came in the middle of a worker's pass.

:mod:`rankaug.epoch`, :mod:`rankaug.passes` and :mod:`rankaug.shared_epoch` provide the
sources; only this module orders them.
"""

from __future__ import annotations

from typing import Any

from rankaug import passes
from rankaug._process import current_pid
from rankaug.epoch import _CLASSES, EpochIndex, carried_epoch
from rankaug.passes import STREAMING
from rankaug.shared_epoch import SharedEpoch, warn_if_late

__all__ = ["EpochFallback", "sample_epoch"]


class EpochFallback:
    """A wrapper's ``set_epoch`` value (rule 4), shared with its workers, and its warnings.

    Attributes:
        shared: The epoch in shared memory that every worker reads.
        seen: ``(pid, epoch)`` last seen by this process, to notice a late ``set_epoch``.
        lost_warned: Whether this wrapper warned that an index map lost the pass's epoch.
    """

    __slots__ = ("lost_warned", "seen", "shared")

    def __init__(self) -> None:
        self.shared = SharedEpoch()
        self.seen: tuple[int, int] | None = None
        self.lost_warned = False

    def get(self) -> int:
        """The ``set_epoch`` value."""
        return self.shared.get()

    def set(self, epoch: int) -> None:
        """Set it (checked by the caller)."""
        self.shared.set(epoch)

    def read_in_worker(self) -> int:
        """The ``set_epoch`` value in a worker, warning once if it changed in its pass.

        Only a worker can see ``set_epoch`` come in the middle of a pass; the main
        process reads ``shared.read()`` alone.
        """
        epoch = self.shared.read()
        pid = current_pid()
        seen = self.seen
        if seen is None or seen[0] != pid:
            self.seen = (pid, epoch)
        elif seen[1] != epoch:
            self.seen = (pid, epoch)
            warn_if_late(seen[1], epoch)
        return epoch

    def __getstate__(self) -> dict[str, Any]:
        return {"shared": self.shared, "seen": None, "lost_warned": self.lost_warned}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)


def sample_epoch(index: object, fallback: EpochFallback, in_worker: bool, owner: str) -> int:
    """The epoch of the sample at ``index``: the first of the four rules that matches.

    Args:
        index: The index as the wrapper was given it.
        fallback: The wrapper's ``set_epoch`` value (rule 4).
        in_worker: Whether this runs in a DataLoader worker.
        owner: The wrapper's class name, for the warning of rule 4.

    Returns:
        The epoch.

    >>> from rankaug import EpochIndex
    >>> sample_epoch(EpochIndex(3, epoch=2), EpochFallback(), False, "X")
    2
    >>> sample_epoch(3, EpochFallback(), False, "X")
    0
    """
    if type(index) is not int and isinstance(index, EpochIndex):  # 1: the index's
        return index.epoch  # (index_epoch written out: it runs for every sample)
    epoch = carried_epoch()  # 2: handed down by an enclosing wrapper
    if epoch is not None:
        return epoch
    # 3: the fetched batch's, for a mapped index (none before any EpochIndex was made)
    verdict = passes.pass_epoch(in_worker) if _CLASSES else passes.PLAIN
    if verdict >= 0:
        return verdict
    # 4: set_epoch's (in a worker, also watched for a change in the middle of its pass)
    epoch = fallback.read_in_worker() if in_worker else fallback.shared.read()
    if verdict != passes.PLAIN and not fallback.lost_warned:
        fallback.lost_warned = passes.warn_lost(owner, index, epoch, verdict, in_worker)
    elif STREAMING and not fallback.lost_warned:  # a thread a stream started, say
        fallback.lost_warned = passes.warn_threaded(owner, index, epoch)
    return epoch
