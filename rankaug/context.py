"""Where the parts of a key come from: rank, worker id and a shared epoch.

* **rank**: the ``rank=`` argument, else ``torch.distributed`` when a process group is
  initialised (also inside forked DataLoader workers, which inherit it), else the rank
  captured when the dataset was pickled for a spawned worker, else the ``RANK``
  environment variable that torchrun sets, else 0.
* **worker id**: ``torch.utils.data.get_worker_info().id``; 0 in the main process
  (``num_workers=0``), so that ``num_workers=0`` and ``num_workers=1`` draw the same
  stream.
* **epoch**: an int64 in shared memory, written by ``set_epoch`` in the main process and
  read by every worker, persistent or not, forked or spawned.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import get_worker_info

from rankaug.keys import check_uint

__all__ = ["SharedEpoch", "current_worker", "process_group_rank", "resolve_rank"]


def process_group_rank() -> int | None:
    """The rank in the default process group, or ``None`` when there is none.

    >>> process_group_rank() is None  # no process group in the doctest
    True
    """
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return None


def resolve_rank(explicit: int | None = None, captured: int | None = None) -> int:
    """The rank of this process, by the order given in the module docstring.

    Args:
        explicit: A ``rank=`` argument, used as is when not ``None``. Defaults to ``None``.
        captured: A rank recorded in the main process before the dataset travelled to a
            spawned worker. Defaults to ``None``.

    Returns:
        The rank.

    Raises:
        ValueError: If the ``RANK`` environment variable is set but not an integer in
            ``[0, 2**32)``.

    >>> resolve_rank(3)
    3
    >>> resolve_rank(None, captured=2)
    2
    """
    if explicit is not None:
        return explicit
    rank = process_group_rank()
    if rank is not None:
        return rank
    if captured is not None:
        return captured
    env = os.environ.get("RANK")
    if env is None or env == "":
        return 0
    try:
        value = int(env)
    except ValueError:
        raise ValueError(
            f"the RANK environment variable must be an integer in [0, 2**32), got {env!r}"
        ) from None
    return check_uint(value, "the RANK environment variable", 32)


def current_worker() -> tuple[int, int]:
    """``(worker_id, num_workers)`` of this DataLoader worker; ``(0, 0)`` in the main process.

    >>> current_worker()
    (0, 0)
    """
    info = get_worker_info()
    if info is None:
        return 0, 0
    return info.id, info.num_workers


class SharedEpoch:
    """An epoch counter that every DataLoader worker sees.

    Args:
        value: The initial epoch. Defaults to ``0``.

    The value lives in a one-element int64 tensor moved to shared memory at
    construction. Forked workers inherit the mapping; spawned workers receive it
    through PyTorch's multiprocessing pickler, which shares tensor storage rather than
    copying it. Either way a ``set`` in the main process before ``iter(loader)`` is what
    the workers read, also with ``persistent_workers=True``. A plain ``pickle`` or
    ``copy.deepcopy`` makes an independent counter, moved to shared memory again.

    >>> epoch = SharedEpoch()
    >>> epoch.set(3)
    >>> epoch.get()
    3
    """

    __slots__ = ("_tensor", "_view")

    def __init__(self, value: int = 0) -> None:
        self._tensor = torch.zeros(1, dtype=torch.int64).share_memory_()  # type: ignore[no-untyped-call]
        self._view: np.ndarray | None = None
        self.set(value)

    def _numpy(self) -> np.ndarray:
        view = self._view
        if view is None:
            view = self._view = self._tensor.numpy()
        return view

    def get(self) -> int:
        """The current epoch."""
        return int(self._numpy()[0])

    def set(self, value: int) -> None:
        """Set the epoch (call it in the main process, before ``iter(loader)``).

        Args:
            value: The epoch, an integer in ``[0, 2**32)``.
        """
        self._numpy()[0] = check_uint(value, "epoch", 32)

    def __getstate__(self) -> dict[str, Any]:
        # The numpy view must not travel: pickled, it would be a private copy.
        return {"_tensor": self._tensor}

    def __setstate__(self, state: dict[str, Any]) -> None:
        tensor: torch.Tensor = state["_tensor"]
        if not tensor.is_shared():  # type: ignore[no-untyped-call]
            tensor = tensor.share_memory_()  # type: ignore[no-untyped-call]
        self._tensor = tensor
        self._view = None

    def __repr__(self) -> str:
        return f"SharedEpoch({self.get()})"
