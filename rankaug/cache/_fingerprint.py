"""What a cache's contents depend on, hashed into the name of its subdirectory."""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any, Final

from rankaug.cache._content import Opaque, content_hash

__all__ = ["FORMAT", "Fingerprint", "fingerprint"]

#: Bumped when the file format changes, so old caches are never read as new.
FORMAT: Final = "rankaug.CachedDataset/2"
_ADDRESS: Final = re.compile(r" at 0x[0-9A-Fa-f]+")


class Fingerprint:
    """The text a cache is keyed by, its key, and whether it can see changes.

    Attributes:
        text: What was hashed, one ``name=value`` per line.
        key: 32 hex digits of the text's SHA-256.
        sees_changes: Whether more than the class and length went in (a settings
            ``repr``, the source files' sizes and mtimes, or the user's string).
    """

    __slots__ = ("key", "sees_changes", "text")

    def __init__(self, lines: list[str], sees_changes: bool) -> None:
        self.text = "\n".join(lines)
        self.key = hashlib.sha256(self.text.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.sees_changes = sees_changes


def fingerprint(dataset: Any, length: int, given: str | None) -> Fingerprint:
    """The fingerprint of ``dataset``: its class, length and settings, then its data.

    Always the cache format, the dataset's class and its length, and the dataset's
    ``repr`` when its class defines one (the readers' reprs list every setting; a repr
    with a memory address, which changes from run to run, is left out). Then the
    data: ``given`` if any; else a Hugging Face ``datasets.Dataset``'s own
    ``_fingerprint`` (which ``map``, ``filter``, ``with_format`` and other data files
    change; its repr lists only features and rows); else the size and modification
    time (ns) of every file that its ``source_files()`` method lists (a missing file
    counts as missing), taken from its ``source_stats()`` mapping (path to ``(size,
    mtime_ns)`` or ``None``) for the files it parsed when it was built (the readers'
    label and annotation files: the cache then holds what they parsed, even if a file
    changed since), and from the file system now for the others; for a plain list,
    tuple or dict of samples, a hash of their content instead of any ``repr``
    (:mod:`rankaug.cache._content`).

    Raises:
        ValueError: If ``dataset`` is a list, tuple or dict whose samples hold values
            the content hash cannot see into, and ``given`` is ``None``.
    """
    kind = type(dataset)
    lines = [f"format={FORMAT}", f"class={kind.__module__}.{kind.__qualname__}"]
    lines.append(f"length={length}")
    in_memory = isinstance(dataset, list | tuple | dict)
    sees_changes = False
    if not in_memory and getattr(kind, "__repr__", None) is not object.__repr__:
        text = repr(dataset)
        if not _ADDRESS.search(text):
            lines.append(f"repr={text}")
            sees_changes = True
    if given is not None:
        lines.append(f"given={given}")
        return Fingerprint(lines, sees_changes=True)
    tracked = getattr(dataset, "_fingerprint", None)  # Hugging Face datasets' own
    if isinstance(tracked, str) and tracked and not in_memory:
        lines.append(f"datasets_fingerprint={tracked}")  # it changes with data and format
        return Fingerprint(lines, sees_changes=True)
    if in_memory:
        try:
            lines.append(f"content={content_hash(dataset)}")
        except Opaque as error:
            raise ValueError(
                f"dataset is a {kind.__name__} of samples holding {error.args[0]}, which "
                "CachedDataset cannot fingerprint by content (only arrays, tensors, numbers, "
                "strings, bytes, lists, tuples and dicts); pass fingerprint='...' (and "
                "change it with the data)"
            ) from None
        return Fingerprint(lines, sees_changes=True)
    source_files = getattr(dataset, "source_files", None)
    if callable(source_files):
        source_stats = getattr(dataset, "source_stats", None)
        parsed = source_stats() if callable(source_stats) else {}
        digest = hashlib.sha256()
        count = 0
        for path in source_files():
            name = os.fspath(path)
            if name in parsed:  # parsed when the reader was built: the stat it had then
                stat = parsed[name]
                entry = f"{name}\0missing\n" if stat is None else f"{name}\0{stat[0]}\0{stat[1]}\n"
            else:
                try:
                    status = os.stat(name)
                    entry = f"{name}\0{status.st_size}\0{status.st_mtime_ns}\n"
                except FileNotFoundError:
                    entry = f"{name}\0missing\n"
            digest.update(entry.encode("utf-8", "surrogateescape"))
            count += 1
        lines.append(f"files={count} sha256={digest.hexdigest()}")
        sees_changes = True
    return Fingerprint(lines, sees_changes)
