"""The cache directory on disk: one subdirectory per fingerprint, one file per sample.

Layout::

    directory/
        <key>/                  32 hex digits of the fingerprint's SHA-256
            fingerprint.json    what the key was made from (for people; never parsed)
            bytes               bytes stored so far (8 bytes; the budget's counter)
            checked             files found whole in this boot (:mod:`rankaug.cache._seen`)
            <index // 1024 in hex>/<index>.sample

A sample is written to a temporary file in its final folder (``mkstemp``: a name no
other process can pick, even one in another container), optionally fsynced, then
renamed over its final name under an exclusive ``flock`` of ``bytes``; the lock also
makes the budget check and the counter update atomic, and lets the first writer of
an index win. Readers only ever open final names, so they see a whole sample or none.
Temporary files carry their writer's tag (:mod:`rankaug.cache._writers`): opening a
cache removes those of dead writers. The counter is moved before the rename (a budget
check and its bytes are one step under the lock), so a writer killed between the two
left it counting a file never published; its temporary file is the trace: when opening
finds one of a dead writer, it recounts the published files under the lock before
removing it (a walk of the folders, only after such a death). A rename that fails puts
the counter back. Folders are made ``0o755`` and checked to be this
user's alone (:mod:`rankaug.cache._trust`) unless the user trusts the directory.

A damaged entry is replaced under the lock, and only if it is still the same file
(device and inode), its old size (as its header records it) taken off the counter:
each entry is counted once. A damaged file whose header is not whole (emptied, cut
short, overwritten) does not say what was counted for it, so the other published files
are recounted instead (a walk of the folders, only for such a file): the counter grows
by no more than the new file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

from rankaug.cache._format import recorded_size, seal
from rankaug.cache._trust import problem, refuse
from rankaug.cache._writers import TEMPORARY, clean, dead_files, prefix

__all__ = [
    "SAMPLE_SUFFIX",
    "Mode",
    "key_directory",
    "prepare",
    "prune",
    "sample_path",
    "store",
    "stored_bytes",
]

#: How a process may use a cache: store and read, read only, or (a full disk) read only.
Mode = Literal["write", "read", "full"]

SAMPLE_SUFFIX: Final = ".sample"
_COUNTER: Final = "bytes"
_DESCRIPTION: Final = "fingerprint.json"
_SHARD_BITS: Final = 10
_IOV_MAX: Final = 512
_FULL: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
_READ_ONLY: Final = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def key_directory(root: Path, key: str) -> Path:
    """The subdirectory of one fingerprint."""
    return root / key


def sample_path(directory: str, index: int) -> str:
    """Where sample ``index`` lives (a string: the read path builds no ``Path``)."""
    return f"{directory}/{index >> _SHARD_BITS:x}/{index}{SAMPLE_SUFFIX}"


def prepare(
    root: Path, key: str, description: Mapping[str, object], *, trust: bool
) -> tuple[Path, Mode, str]:
    """Create the fingerprint's subdirectory, check it, and find how it can be used.

    Returns:
        The subdirectory, the mode (``"read"`` when it exists but this process cannot
        write there, ``"full"`` when the disk is full), and the error behind a mode
        other than ``"write"``.

    Raises:
        rankaug.cache._trust.Untrusted: If ``root`` or the subdirectory is not this
            user's alone and ``trust`` is false.
        OSError: Of the original kind (``PermissionError``, ``NotADirectoryError``,
            ...), naming the directory, if it cannot be used at all.
    """
    directory = key_directory(root, key)
    try:
        for folder in (root, directory):
            folder.mkdir(mode=0o755, parents=True, exist_ok=True)
            reason = None if trust else problem(folder.stat())
            if reason is not None:
                raise refuse(str(folder), "directory", reason)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=prefix())  # can we create files?
        os.close(fd)
        os.unlink(probe)
        os.close(os.open(directory / _COUNTER, os.O_RDWR | os.O_CREAT, 0o644))
        target = directory / _DESCRIPTION
        if not target.exists():
            text = json.dumps(description, indent=1, sort_keys=True) + "\n"
            _atomic_write(directory, target, text.encode("utf-8"))
    except OSError as error:
        if error.errno in _FULL:
            return directory, "full", str(error)
        if error.errno in _READ_ONLY and directory.is_dir():
            return directory, "read", str(error)
        raise type(error)(
            error.errno,
            f"CachedDataset cannot write to its directory {root} ({error.strerror or error}); "
            "pass a directory this process can create files in",
        ) from error
    _repair(str(directory))
    return directory, "write", ""


def prune(root: Path, keep: Path) -> list[Path]:
    """Delete the fingerprints' subdirectories in ``root`` but ``keep``; the deleted ones.

    Only folders laid out as a cache's (32 hex digits holding ``fingerprint.json``) are
    deleted.
    """
    removed = []
    for child in sorted(root.iterdir()):
        if child != keep and _is_cache(child):
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child)
    return removed


def _is_cache(path: Path) -> bool:
    name = path.name
    return (
        len(name) == 32
        and all(c in "0123456789abcdef" for c in name)
        and path.is_dir()
        and (path / _DESCRIPTION).is_file()
    )


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
    replace: tuple[int, int] | None = None,
) -> Literal["stored", "present", "full"]:
    """Seal and write one sample's file atomically (chunks from ``encode(sealed=False)``).

    Args:
        directory: The fingerprint's subdirectory.
        index: The sample's index.
        chunks: The file's bytes, in order.
        size: Their total.
        max_bytes: The budget, or ``None``.
        fsync: Flush file and folder to the disk.
        replace: The ``(st_dev, st_ino)`` of a damaged file at the final name to
            replace (only if it is still that file).

    Returns:
        ``"stored"`` when this call stored it, ``"present"`` when another writer was
        first, ``"full"`` when it does not fit in ``max_bytes`` (nothing is written
        then; a damaged file it was to replace is removed).

    Raises:
        OSError: If writing fails (a full disk, say); no file is left behind.
    """
    if replace is None and max_bytes is not None and stored_bytes(directory) + size > max_bytes:
        return "full"
    seal(chunks)
    final = sample_path(directory, index)
    shard = os.path.dirname(final)
    os.makedirs(shard, mode=0o755, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=shard, prefix=prefix(), suffix=SAMPLE_SUFFIX)
    try:
        try:
            write_chunks(fd, chunks)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        outcome = _publish(
            directory, temporary, final, size, max_bytes=max_bytes, fsync=fsync, replace=replace
        )
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
    directory: str,
    temporary: str,
    final: str,
    size: int,
    *,
    max_bytes: int | None,
    fsync: bool,
    replace: tuple[int, int] | None,
) -> Literal["stored", "present", "full"]:
    counter = os.open(f"{directory}/{_COUNTER}", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(counter, fcntl.LOCK_EX)
        try:
            status = os.stat(final)
        except FileNotFoundError:
            damaged = False
        else:
            if (status.st_dev, status.st_ino) != replace:
                return "present"
            damaged = True
        before = _read_counter(counter)
        used = _without(directory, final, before) if damaged else before
        if max_bytes is not None and used + size > max_bytes:
            if damaged:
                os.unlink(final)
                os.pwrite(counter, used.to_bytes(8, "little"), 0)
            return "full"
        os.pwrite(counter, (used + size).to_bytes(8, "little"), 0)
        try:
            if fsync:
                os.fsync(counter)
            os.replace(temporary, final)
        except BaseException:
            os.pwrite(counter, before.to_bytes(8, "little"), 0)  # nothing was published
            raise
        return "stored"
    finally:
        os.close(counter)  # releases the lock


def _without(directory: str, final: str, counted: int) -> int:
    """The counter less the damaged file at ``final`` (under the lock).

    Its header's size is what was counted when it was stored; a file whose header is not
    whole (emptied, cut short, overwritten) tells nothing, nor one that records more than
    the counter holds: the other published files are counted instead.
    """
    old = recorded_size(final)
    if old is None or old > counted:
        return _published_bytes(directory, leaving=final)
    return counted - old


def _repair(directory: str) -> None:
    """Remove dead writers' temporary files, recounting the stored bytes first if any.

    A writer killed inside :func:`_publish` may have moved the counter for a file it
    never renamed into place; its temporary file is still there. The files are removed
    only once the counter is right, so an opener killed in between leaves the trace.
    """
    dead = dead_files(Path(directory))
    if not dead:
        return
    counter = os.open(f"{directory}/{_COUNTER}", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(counter, fcntl.LOCK_EX)  # no file is published while counting
        os.pwrite(counter, _published_bytes(directory).to_bytes(8, "little"), 0)
        os.fsync(counter)
    finally:
        os.close(counter)
    clean(Path(directory), dead)


def _published_bytes(directory: str, leaving: str = "") -> int:
    """The bytes counted for the sample files at their final names, but ``leaving``.

    Each file counts the size its header records, or, with no whole header, its size on
    disk (what replacing it takes off again: :func:`_without` counts anew).
    """
    total = 0
    with os.scandir(directory) as shards:
        folders = [entry.path for entry in shards if entry.is_dir(follow_symlinks=False)]
    for folder in folders:
        with contextlib.suppress(FileNotFoundError), os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if (
                    name.endswith(SAMPLE_SUFFIX)
                    and not name.startswith(TEMPORARY)
                    and entry.path != leaving
                ):
                    with contextlib.suppress(FileNotFoundError):
                        recorded = recorded_size(entry.path)
                        total += entry.stat().st_size if recorded is None else recorded
    return total


def _read_counter(fd: int) -> int:
    data = os.pread(fd, 8, 0)
    return int.from_bytes(data, "little") if len(data) == 8 else 0


def _atomic_write(directory: Path, target: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=prefix())
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
