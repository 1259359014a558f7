"""How a pooled buffer reaches the main process: through ``/proc``, once that is known to work.

A storage torch shares travels as a file descriptor: the receiving process connects to
the worker's resource sharer, whose thread needs the worker's GIL (about 0.5 ms of the
main process's fetch per batch here with a worker making mosaics, up to the
interpreter's 5 ms switch interval when the worker's Python keeps the GIL). A pooled
buffer's descriptor stays open in its worker as long as the buffer, so on Linux the
main process can open the same shared memory as ``/proc/<worker>/fd/<fd>``, without the
worker. Whether it may (the same user, ``/proc`` mounted and readable) is probed on a
buffer's first batch, which still travels as torch shares it; the main process writes
the answer into the buffer's route word, and the worker reads it for the next batches.
Under the ``file_system`` sharing strategy, and off Linux, buffers always travel as
torch shares them.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.multiprocessing

#: The route word's values: not probed yet, open through ``/proc``, as torch shares it.
UNKNOWN, PROC, TORCH = 0, 1, 2


Handle = tuple[int, int, int, int]
"""A worker's shared storage: ``(pid, fd, st_dev, st_ino)``, the last two its file's."""


def handle(storage: torch.UntypedStorage) -> Handle | None:
    """The :data:`Handle` of a worker's shared storage, where ``/proc`` may reach it."""
    if not sys.platform.startswith("linux"):
        return None
    if torch.multiprocessing.get_sharing_strategy() != "file_descriptor":  # type: ignore[no-untyped-call]
        return None
    fd, _ = storage._share_fd_cpu_()  # the descriptor it keeps: nothing is copied
    stat = os.fstat(fd)
    return os.getpid(), int(fd), stat.st_dev, stat.st_ino


def reachable(found: Handle) -> bool:
    """Whether this process may open the worker's storage through ``/proc``."""
    try:
        os.close(_open(found))
    except OSError:
        return False
    return True


def open_twice(found: Handle, size: int) -> tuple[torch.UntypedStorage, torch.UntypedStorage]:
    """Two mappings of the worker's storage: one for the batch, one that outlives it.

    Raises:
        RuntimeError: If it cannot be opened (the worker has exited).
    """
    try:
        opened = _open(found)
    except OSError as error:
        raise RuntimeError(
            f"rankaug: cannot open the batch buffer of DataLoader worker {found[0]} "
            f"({_path(found)}): {error}; has the worker exited?"
        ) from error
    try:
        return _map(opened, size), _map(opened, size)
    finally:
        os.close(opened)


def _open(found: Handle) -> int:
    """Open the storage; ``OSError`` if it is not the one named (the worker is gone)."""
    opened = os.open(_path(found), os.O_RDWR)
    stat = os.fstat(opened)
    if (stat.st_dev, stat.st_ino) != found[2:]:  # the pid, or the descriptor, reused
        os.close(opened)
        raise FileNotFoundError(f"{_path(found)} is no longer the worker's batch buffer")
    return opened


def _path(found: Handle) -> str:
    return f"/proc/{found[0]}/fd/{found[1]}"


def _map(fd: int, size: int) -> torch.UntypedStorage:
    storage: torch.UntypedStorage = torch.UntypedStorage._new_shared_fd_cpu(fd, size)  # type: ignore[attr-defined]
    return storage
