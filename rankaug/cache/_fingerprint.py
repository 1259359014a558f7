"""What a cache's contents depend on, hashed into the name of its subdirectory."""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any, Final

__all__ = ["FORMAT", "Fingerprint", "fingerprint"]

#: Bumped when the file format changes, so old caches are never read as new.
FORMAT: Final = "rankaug.CachedDataset/1"
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
    """The fingerprint of ``dataset``: ``given`` if any, else what can be seen of it.

    Always the cache format, the dataset's class and its length. Then ``given``, or
    by default: the dataset's ``repr`` when its class defines one (the readers'
    reprs list every setting; a repr with a memory address, which changes from run
    to run, is left out), and the size and modification time (ns) of every file that
    its ``source_files()`` method lists (a missing file counts as missing).
    """
    kind = type(dataset)
    lines = [f"format={FORMAT}", f"class={kind.__module__}.{kind.__qualname__}"]
    lines.append(f"length={length}")
    if given is not None:
        lines.append(f"given={given}")
        return Fingerprint(lines, sees_changes=True)
    sees_changes = False
    if getattr(kind, "__repr__", None) is not object.__repr__:
        text = repr(dataset)
        if not _ADDRESS.search(text):
            lines.append(f"repr={text}")
            sees_changes = True
    source_files = getattr(dataset, "source_files", None)
    if callable(source_files):
        digest = hashlib.sha256()
        count = 0
        for path in source_files():
            name = os.fspath(path)
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
