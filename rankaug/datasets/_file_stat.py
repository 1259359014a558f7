"""The size and modification time of a file as a reader parsed it.

A reader that parses its labels when it is built (:class:`~rankaug.datasets.YoloFolder`,
:class:`~rankaug.datasets.CocoDetection`) records each file's stat at that moment, and
:class:`~rankaug.CachedDataset`'s fingerprint uses that record rather than the file's
stat when the cache is made: a label file edited in between then keys a new cache
instead of storing the labels parsed before under the new file's stat.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FileStat", "file_stat", "check_unchanged"]

#: ``(size, mtime in ns)``, or ``None`` for a file that does not exist.
FileStat = tuple[int, int] | None


def file_stat(path: Path) -> FileStat:
    """Return ``(size, mtime_ns)`` of ``path``, or ``None`` if it does not exist.

    >>> file_stat(Path("/no/such/file")) is None
    True
    """
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_size, status.st_mtime_ns


def check_unchanged(path: Path, before: FileStat) -> None:
    """Raise if ``path`` changed while it was read (its stat differs from ``before``).

    Raises:
        ValueError: Naming the file.
    """
    if file_stat(path) != before:
        raise ValueError(
            f"{path} changed while it was being read (its size or modification time "
            "differs from before the read): build the reader again once it is written"
        )
