"""Cache files kept mapped between reads, read-only: their page faults paid once.

A file mapped afresh for every read pays its page faults on every read (here about
0.7 µs a page: some 50 µs for the part of a 640x480 image a mosaic tile reads), where
an image held in memory pays none. ``CachedDataset(read_only_arrays=True)`` keeps each
file it reads mapped instead, read-only (``PROT_READ``): the arrays read back over it
cannot be written (numpy refuses to make them writable), so no read can change what a
later one returns.

The mapping is made with the C library's ``mmap`` and its file descriptor closed at
once (Python's ``mmap`` keeps one per mapping before 3.13, which would bound the files
kept by the descriptor limit); it is unmapped when the last array over it is gone. At
most :func:`keep_limit` files stay mapped per process, the least recently read let go
first. Per process: a forked DataLoader worker starts with its parent's mappings, a
spawned one with none. A kept file is read again only while it is the same file,
unchanged (checked by ``stat``, as the reader checks it): one deleted is gone, one
replaced or written to is read anew. A deleted file keeps its disk space while it is
mapped: while kept (until a read of its path finds it gone, or it is let go) and while
arrays over it are held, as an open file would. Where the
C library's ``mmap`` cannot be called, or the kernel refuses a mapping, files are read
into read-only memory instead (the same values, not faster).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
import weakref
from collections import OrderedDict
from typing import Final

import numpy as np

__all__ = ["KEPT", "Held", "Kept", "keep_limit", "map_read_only"]

_MAP_COUNT: Final = "/proc/sys/vm/max_map_count"
_CAP: Final = 16384
_FAILED: Final = ctypes.c_void_p(-1).value
_limit: list[int] = []


class _Pages:
    """A read-only mapping's bytes, for numpy; unmapped when the last view is gone."""

    __slots__ = ("__array_interface__", "__weakref__")

    def __init__(self, address: int, size: int) -> None:
        self.__array_interface__ = {
            "data": (address, True),  # read-only
            "shape": (size,),
            "typestr": "|u1",
            "version": 3,
        }


def _library() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                              ctypes.c_int, ctypes.c_int, ctypes.c_int64]  # fmt: skip
        libc.munmap.restype = ctypes.c_int
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    except (OSError, AttributeError):  # no C library to call (Windows)
        return None
    return libc


_LIBC: Final = _library()


def map_read_only(fd: int, size: int) -> memoryview | None:
    """A read-only mapping of the file ``fd`` (``size > 0`` bytes); ``None`` if none can be made.

    The mapping outlives ``fd`` (close it when you like) and lasts while the returned
    view, or anything made from it, is referenced.

    Raises:
        OSError: If ``mmap`` fails.
    """
    if _LIBC is None:
        return None
    address = _LIBC.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if address is None or address == _FAILED:
        number = ctypes.get_errno()
        raise OSError(number, f"mmap of a cache file failed: {os.strerror(number)}")
    pages = _Pages(address, size)
    weakref.finalize(pages, _LIBC.munmap, address, size).atexit = False
    return np.asarray(pages).data  # numpy exports the buffer _Pages describes


def keep_limit() -> int:
    """How many files one process keeps mapped at most.

    A quarter of the kernel's mappings per process (``vm.max_map_count``), at most
    16,384.

    >>> 0 < keep_limit() <= 16384
    True
    """
    if not _limit:
        try:
            with open(_MAP_COUNT, encoding="ascii") as file:
                count = int(file.read())
        except (OSError, ValueError):
            count = 4 * _CAP
        _limit.append(max(1, min(_CAP, count // 4)))
    return _limit[0]


Held = tuple[memoryview, tuple[int, int], int]
"""A kept file: its mapping, its ``(st_dev, st_ino)`` and its stamp (see :meth:`Kept.keep`)."""


class Kept:
    """The files kept mapped in this process, least recently read first.

    Args:
        limit: The most files kept; ``None`` for :func:`keep_limit`.

    >>> kept = Kept(limit=1)
    >>> kept.keep("a", memoryview(b"1"), (0, 1), 7); kept.keep("b", memoryview(b"2"), (0, 2), 8)
    >>> kept.get("a") is None, bytes(kept.get("b")[0]), len(kept)
    (True, b'2', 1)
    """

    def __init__(self, limit: int | None = None) -> None:
        self._maps: OrderedDict[str, Held] = OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    def __len__(self) -> int:
        return len(self._maps)

    def get(self, path: str) -> Held | None:
        """What is kept of ``path`` (:data:`Held`), or ``None``."""
        with self._lock:
            held = self._maps.get(path)
            if held is not None:
                self._maps.move_to_end(path)
        return held

    def keep(self, path: str, data: memoryview, identity: tuple[int, int], stamp: int) -> None:
        """Keep ``data`` (a read-only mapping of the whole file) for later reads of ``path``.

        ``identity`` is the file's ``(st_dev, st_ino)``, ``stamp`` what tells it changed
        (a hash of its identity, size and times).
        """
        limit = keep_limit() if self._limit is None else self._limit
        with self._lock:
            self._maps[path] = (data, identity, stamp)
            self._maps.move_to_end(path)
            while len(self._maps) > limit:
                self._maps.popitem(last=False)  # unmapped once no array holds it

    def forget(self, path: str) -> None:
        """Keep ``path`` no longer (it changed, or is gone)."""
        with self._lock:
            self._maps.pop(path, None)

    def let_go(self) -> bool:
        """Let the least recently read file go; ``False`` if none is kept."""
        with self._lock:
            if not self._maps:
                return False
            self._maps.popitem(last=False)
        return True

    def after_fork(self) -> None:
        """A new lock in a forked child (a thread of the parent may have held the old one)."""
        self._lock = threading.Lock()


KEPT: Final = Kept()
"""This process's kept mappings."""
os.register_at_fork(after_in_child=KEPT.after_fork)
