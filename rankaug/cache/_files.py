"""The files a dataset lists, for its fingerprint: their sizes and modification times.

A dataset's ``source_files()`` (a torchvision ``DatasetFolder``'s samples, where it has
none) name the files its samples come from; the cache is keyed by each one's size and
modification time (:func:`files_line`), so that a file changed there starts a new cache.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as stat_module
import sys
from typing import Any, Final

__all__ = ["files_line", "folder_files"]


def files_line(
    dataset: Any, paths: Any, prefix: str, lines: list[str], owner: str
) -> tuple[int, str]:
    """Add the line of the files ``paths``: their sizes and mtimes; how many there are.

    Each file is named by its folder resolved (absolute, ``..`` and symlinks followed)
    and its own name, so every spelling of one file keys alike. Also returned: the first
    path listed that is a folder (``""`` if none).

    Raises:
        OSError: Of the original kind (``PermissionError``, ``NotADirectoryError``...), if
            a file's ``stat`` fails other than for a file that does not exist (which
            counts as missing): naming the file and ``owner`` (the dataset), since a key
            without it would not see it change; its ``errno`` and ``filename`` are the stat's.
        ValueError: Likewise, if a path holds a NUL byte (no file's can).
    """
    folder_listed = ""
    source_stats = getattr(dataset, "source_stats", None)
    parsed = source_stats() if callable(source_stats) else {}
    digest = hashlib.sha256()
    count = 0
    folders: dict[str, str] = {}  # each folder resolved once: realpath costs a stat a part
    for path in paths:
        name = os.fspath(path)
        if "\0" in os.fsdecode(name):  # os.stat's ValueError (realpath's too), naming nothing
            raise _unreadable(ValueError("embedded null byte"), name, dataset, owner)
        head, tail = os.path.split(os.fsdecode(name))  # a bytes path named as text
        folder = folders.get(head)
        if folder is None:
            folder = folders[head] = os.path.realpath(head or os.curdir)
        named = os.path.join(folder, tail)
        if name in parsed:  # parsed when the reader was built: the stat it had then
            stat = parsed[name]
            entry = f"{named}\0missing\n" if stat is None else f"{named}\0{stat[0]}\0{stat[1]}\n"
        else:
            try:
                status = os.stat(name)
                entry = f"{named}\0{status.st_size}\0{status.st_mtime_ns}\n"
                if not folder_listed and stat_module.S_ISDIR(status.st_mode):
                    folder_listed = named
            except FileNotFoundError:
                entry = f"{named}\0missing\n"
            except OSError as error:
                raise _unreadable(error, name, dataset, owner) from error
        digest.update(entry.encode("utf-8", "surrogateescape"))
        count += 1
    lines.append(f"{prefix}files={count} sha256={digest.hexdigest()}")
    return count, folder_listed


def _unreadable(error: OSError | ValueError, name: Any, dataset: Any, owner: str) -> Exception:
    """The error for a listed file whose ``stat`` failed: ``error``'s kind, saying whose and why.

    An ``OSError`` keeps ``os.stat``'s ``errno`` and ``filename`` (which ends its message);
    a ``ValueError`` (``os.stat``'s for a NUL byte in the path) names the path in its own.
    """
    own = callable(getattr(dataset, "source_files", None))  # else a DatasetFolder's samples
    listed = "source_files() lists" if own else "samples name"
    if isinstance(error, ValueError):
        what = f"the path {os.fsdecode(name)!r}, a file its {listed}, holds a NUL byte"
    else:
        what = f"the stat of a file its {listed} failed ({error.strerror or error})"
    if isinstance(error, PermissionError):
        fix = "make the file and its folders readable"
    elif isinstance(error, ValueError) or error.errno in _NOT_A_FILE:
        what += ": the path is not a file that can be read"
        fix = "fix the path or leave it out"
    else:
        fix = "make the file readable or leave it out"
    message = (
        f"CachedDataset cannot fingerprint {owner}: {what}. Its cache is keyed by the size and "
        "modification time of every listed file, and a key that left this one out would not "
        f"see it change: {fix}, or pass fingerprint='...' naming this data (and change it "
        "with the data)"
    )
    if isinstance(error, ValueError):
        return ValueError(message)
    filename = name if error.filename is None else error.filename  # os.stat's: the path given
    return type(error)(error.errno, f"{message}. The file", filename)


#: A path that names no file which can be read: a part of it is a file, its links loop,
#: it is too long.
_NOT_A_FILE: Final = frozenset({errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG})


def folder_files(dataset: Any) -> list[Any] | None:
    """The files of a torchvision ``DatasetFolder`` (``ImageFolder``): its samples' paths.

    ``None`` for any other dataset. Its ``repr`` shows its root and transforms, not its
    files: images replaced in the folder would be served from the old cache.
    """
    folder = sys.modules.get("torchvision.datasets.folder")  # imported if one exists
    kind = getattr(folder, "DatasetFolder", None)
    if kind is None or not isinstance(dataset, kind):
        return None
    samples = getattr(dataset, "samples", None)  # [(path, class_index), ...]
    if not isinstance(samples, list):
        return None
    paths = [
        sample[0]
        for sample in samples
        if isinstance(sample, tuple | list) and sample and isinstance(sample[0], str | os.PathLike)
    ]
    return paths if len(paths) == len(samples) else None
