"""``PassCounter``: each worker's next epoch, in shared memory made before the workers.

A pass over a streaming wrapper is the next epoch of the worker that runs it. The
counts live in one shared ``int64`` tensor made in the main process, so that a
DataLoader worker started afresh every epoch (``persistent_workers=False``) reads the
count its predecessor left, and a persistent one keeps counting; forked workers inherit
the mapping and spawned ones receive it through PyTorch's multiprocessing pickler (as
:class:`~rankaug.shared_epoch.SharedEpoch`). The main process (``num_workers=0``)
takes worker 0's count, the worker id its key uses, and moves every worker's on past
its pass (:meth:`PassCounter.take_all`): a pass there (a look at one sample, a loop
without workers) leaves the workers of a later DataLoader on one epoch, as they must be
to share a stream's shards out.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import torch

from rankaug import checks

__all__ = ["SLOTS", "PassCounter"]

SLOTS: Final = 1024
"""The most DataLoader workers one wrapper counts passes for."""


class PassCounter:
    """The next epoch of each worker (see the module docstring).

    >>> passes = PassCounter()
    >>> passes.take(0), passes.take(0), passes.take(1)
    (0, 1, 0)
    >>> passes.set_all(5)
    >>> passes.peek(1)
    5
    """

    __slots__ = ("_counts", "_view")

    def __init__(self) -> None:
        counts = torch.zeros(SLOTS, dtype=torch.int64)
        self._counts: torch.Tensor = counts.share_memory_()  # type: ignore[no-untyped-call]
        self._view: np.ndarray | None = None

    def _numbers(self) -> np.ndarray:
        view = self._view
        if view is None:
            view = self._view = self._counts.numpy()
        return view

    def _slot(self, worker_id: int) -> int:
        if not 0 <= worker_id < SLOTS:
            raise ValueError(
                f"a streaming wrapper counts the passes of up to {SLOTS} DataLoader workers, "
                f"got worker id {worker_id}"
            )
        return worker_id

    def peek(self, worker_id: int) -> int:
        """The epoch of the worker's next pass."""
        count: int = self._numbers().item(self._slot(worker_id))
        return count

    def take(self, worker_id: int) -> int:
        """The epoch of the pass starting now in the worker; the next one is one more.

        Raises:
            ValueError: If the worker has run the last epoch, ``2**32 - 1``.
        """
        epoch = _runnable(self.peek(worker_id))
        self._numbers()[self._slot(worker_id)] = epoch + 1  # 2**32 only as a next pass
        return epoch

    def take_all(self) -> int:
        """The epoch of a pass in the main process (worker 0's); every worker's next is one more.

        >>> passes = PassCounter()
        >>> passes.take(1), passes.take_all(), passes.peek(1)
        (0, 0, 1)
        """
        epoch = _runnable(self.peek(0))
        self._numbers()[:] = epoch + 1
        return epoch

    def put(self, worker_id: int, epoch: int) -> None:
        """Make ``epoch`` the worker's next pass."""
        self._numbers()[self._slot(worker_id)] = checks.uint(epoch, "epoch", 32)

    def set_all(self, epoch: int) -> None:
        """Make ``epoch`` every worker's next pass (``set_epoch``)."""
        self._numbers()[:] = checks.uint(epoch, "epoch", 32)

    def __getstate__(self) -> torch.Tensor:
        counts: torch.Tensor = self._counts
        return counts

    def __setstate__(self, counts: torch.Tensor) -> None:
        self._counts, self._view = counts, None

    def __repr__(self) -> str:
        return f"PassCounter(next={self.peek(0)} in worker 0)"


def _runnable(epoch: int) -> int:
    """``epoch``, if a pass may start at it: epochs are 32-bit words of the key."""
    if epoch >= 2**32:
        raise ValueError(
            "this stream has run its last epoch, 2**32 - 1 (epochs are 32-bit): call "
            "set_epoch(epoch) with an epoch in [0, 2**32) before the next pass"
        )
    return epoch
