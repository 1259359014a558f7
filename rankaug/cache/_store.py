"""The cache directory on disk: one subdirectory per fingerprint, one file per sample.

Layout::

    directory/
        <key>/                  32 hex digits of the fingerprint's SHA-256
            fingerprint.json    what the key was made from (for people; never parsed)
            bytes               bytes stored so far (8 bytes; the budget's counter)
            <index // 1024 in hex>/<index>.sample

A sample is written to a temporary file in its final folder (``mkstemp``: a name no
other process can pick, even one in another container), optionally fsynced, then
renamed over its final name under an exclusive ``flock`` of ``bytes``; the lock also
makes the budget check and the counter update atomic, and lets the first writer of
an index win. Readers only ever open final names, so they see a whole sample or none.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

__all__ = ["SAMPLE_SUFFIX", "key_directory", "prepare", "sample_path", "store", "stored_bytes"]

SAMPLE_SUFFIX: Final = ".sample"
_COUNTER: Final = "bytes"
_DESCRIPTION: Final = "fingerprint.json"
_SHARD_BITS: Final = 10
_IOV_MAX: Final = 512


def key_directory(root: Path, key: str) -> Path:
    """The subdirectory of one fingerprint."""
    return root / key


def sample_path(directory: str, index: int) -> str:
    """Where sample ``index`` lives (a string: the read path builds no ``Path``)."""
    return f"{directory}/{index >> _SHARD_BITS:x}/{index}{SAMPLE_SUFFIX}"


def prepare(root: Path, key: str, description: Mapping[str, object]) -> Path:
    """Create the fingerprint's subdirectory and check that this process can write there.

    Raises:
        OSError: Of the original kind (``PermissionError``, ``NotADirectoryError``,
            ...), naming the directory.
    """
    directory = key_directory(root, key)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        counter = os.open(directory / _COUNTER, os.O_RDWR | os.O_CREAT, 0o666)
        os.close(counter)
        target = directory / _DESCRIPTION
        if not target.exists():
            text = json.dumps(description, indent=1, sort_keys=True) + "\n"
            _atomic_write(directory, target, text.encode("utf-8"))
        else:  # prove that this process can create files here too
            fd, probe = tempfile.mkstemp(dir=directory, prefix=".probe-")
            os.close(fd)
            os.unlink(probe)
    except OSError as error:
        raise type(error)(
            error.errno,
            f"CachedDataset cannot write to its directory {root} ({error.strerror or error}); "
            "pass a directory this process can create files in",
        ) from error
    return directory


def stored_bytes(directory: str) -> int:
    """Bytes of samples stored under one fingerprint so far (read without the lock)."""
    try:
        fd = os.open(f"{directory}/{_COUNTER}", os.O_RDONLY)
    except FileNotFoundError:
        return 0
    try:
        return _read_counter(fd)
    finally:
        os.close(fd)


def store(
    directory: str,
    index: int,
    chunks: Sequence[bytes | memoryview],
    size: int,
    *,
    max_bytes: int | None,
    fsync: bool,
) -> Literal["stored", "present", "full"]:
    """Write one sample's file atomically.

    Returns:
        ``"stored"`` when this call stored it, ``"present"`` when another writer was
        first, ``"full"`` when it would take the stored bytes past ``max_bytes``
        (nothing is written then).

    Raises:
        OSError: If writing fails (a full disk, say); no file is left behind.
    """
    if max_bytes is not None and stored_bytes(directory) + size > max_bytes:
        return "full"
    final = sample_path(directory, index)
    shard = os.path.dirname(final)
    os.makedirs(shard, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=shard, prefix=".tmp-", suffix=SAMPLE_SUFFIX)
    try:
        try:
            write_chunks(fd, chunks)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        outcome = _publish(directory, temporary, final, size, max_bytes=max_bytes, fsync=fsync)
    except BaseException:
        _remove(temporary)
        raise
    if outcome != "stored":
        _remove(temporary)
    elif fsync:
        _fsync_directory(shard)
    return outcome


def write_chunks(fd: int, chunks: Sequence[bytes | memoryview]) -> None:
    """Write every chunk to ``fd``: the cache's one low-level write."""
    views = [view for view in (memoryview(chunk).cast("B") for chunk in chunks) if view.nbytes]
    while views:
        written = os.writev(fd, views[:_IOV_MAX])
        if written == 0:
            raise OSError(errno.EIO, "writev wrote nothing")
        while views and written >= views[0].nbytes:
            written -= views[0].nbytes
            views.pop(0)
        if written:
            views[0] = views[0][written:]


def _publish(
    directory: str, temporary: str, final: str, size: int, *, max_bytes: int | None, fsync: bool
) -> Literal["stored", "present", "full"]:
    counter = os.open(f"{directory}/{_COUNTER}", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(counter, fcntl.LOCK_EX)
        if os.path.exists(final):
            return "present"
        used = _read_counter(counter)
        if max_bytes is not None and used + size > max_bytes:
            return "full"
        os.pwrite(counter, (used + size).to_bytes(8, "little"), 0)
        if fsync:
            os.fsync(counter)
        os.replace(temporary, final)
        return "stored"
    finally:
        os.close(counter)  # releases the lock


def _read_counter(fd: int) -> int:
    data = os.pread(fd, 8, 0)
    return int.from_bytes(data, "little") if len(data) == 8 else 0


def _atomic_write(directory: Path, target: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        try:
            write_chunks(fd, [data])
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


def _fsync_directory(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as error:  # some file systems cannot sync a directory
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
