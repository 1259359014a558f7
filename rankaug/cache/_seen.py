"""Which cache files were checked since the machine booted: one table for every process.

A file's CRC-32 (:mod:`rankaug.cache._format`) costs about 0.2 ms per megabyte, as much
as resampling the image it holds. Checked once per process, a file was checked by
every DataLoader worker of every rank, and again every epoch where workers are not
persistent. The table ``checked`` in the fingerprint's subdirectory holds, at byte
``8 * index``, a token of the file last found whole at that index: a digest of its
identity (device, inode, size, mtime, ctime) and of this boot of the machine. A read
whose file matches its token skips the check. A file rewritten or replaced has
another identity, and after a reboot (a power loss can lose bytes not yet flushed)
every token is another: such a file is checked again. Writers record the files they
publish (their checksum was made from the very bytes written).

An entry is written with one 8-byte ``pwrite`` at its own offset; a torn or stale one
only makes a file be checked again. A table that is not this user's alone is not used
(unless the user trusts the directory), nor is one without a boot id (not Linux):
each process then checks each file once, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import threading
from typing import Final

from rankaug.cache._trust import problem
from rankaug.cache._writers import boot_id

__all__ = ["TABLE", "Checked"]

TABLE: Final = "checked"
_ENTRY: Final = 8
_IDENTITY: Final = struct.Struct("<QQQQQ")
_lock = threading.Lock()
_open: dict[tuple[int, str], int | None] = {}  # (pid, table) -> its descriptor, or None


def _forget() -> None:  # a forked child opens its own (the parent's are its copies)
    for fd in _open.values():
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
    _open.clear()


os.register_at_fork(after_in_child=_forget)


class Checked:
    """The table of one fingerprint's subdirectory (opened in each process at first use).

    Args:
        directory: The subdirectory.
        trust: Use a table that is not this user's alone.
    """

    def __init__(self, directory: str, *, trust: bool) -> None:
        self.path = f"{directory}/{TABLE}"
        self.trust = trust
        boot = boot_id()
        self._boot = None if boot is None else bytes.fromhex(boot)

    def token(self, status: os.stat_result) -> bytes | None:
        """The token of a file with this status in this boot (``None``: no table)."""
        if self._boot is None:
            return None
        identity = _IDENTITY.pack(
            status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns
        )
        digest = hashlib.blake2b(identity, digest_size=_ENTRY, key=self._boot).digest()
        return digest if any(digest) else b"\x01" * _ENTRY  # zeros: an empty entry

    def holds(self, index: int, token: bytes) -> bool:
        """Whether the file at ``index`` with this token was found whole in this boot."""
        fd = self._fd()
        if fd is None:
            return False
        try:
            return os.pread(fd, _ENTRY, _ENTRY * index) == token
        except OSError:
            return False

    def record(self, index: int, token: bytes | None) -> None:
        """Record that the file at ``index`` with this token is whole (best effort)."""
        fd = self._fd() if token is not None else None
        if fd is None or token is None:
            return
        with contextlib.suppress(OSError):  # a read-only cache: each process checks
            os.pwrite(fd, token, _ENTRY * index)

    def record_file(self, index: int, path: str) -> None:
        """Record the file now at ``path`` (just published by this process) as whole."""
        if self._boot is None:
            return
        with contextlib.suppress(OSError):
            self.record(index, self.token(os.stat(path)))

    def _fd(self) -> int | None:
        key = (os.getpid(), self.path)
        try:
            return _open[key]
        except KeyError:
            pass
        with _lock:
            if key not in _open:
                _open[key] = self._opened()
            return _open[key]

    def _opened(self) -> int | None:
        if self._boot is None:
            return None
        flags = os.O_CLOEXEC | os.O_CREAT
        try:
            fd = os.open(self.path, os.O_RDWR | flags, 0o644)
        except OSError:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        if not self.trust and problem(os.fstat(fd)) is not None:
            os.close(fd)  # others could mark damaged files as whole
            return None
        return fd
