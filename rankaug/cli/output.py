"""``--output``: the file a command writes, checked before its work and named when it fails.

``audit`` and ``show`` run for minutes before they write: a path that cannot be written
(a folder, a path under a file, a folder without write permission) is refused by
:func:`check_output` before anything is launched, and a write that still fails is
worded by :func:`output_error`, naming the option.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["check_output", "output_error", "write_text"]


def check_output(path: str | Path, option: str = "--output") -> Path:
    """The file ``option`` names, refused now if it clearly cannot be written later.

    The file need not exist, nor its folder: the nearest folder that exists must be a
    writable folder (the rest is made when the file is written).

    Args:
        path: The path given.
        option: The option, for messages.

    Returns:
        The path.

    Raises:
        ValueError: If the path is a folder, lies under a file, or its nearest existing
            folder (or the file itself) is not writable.

    >>> check_output("/")
    Traceback (most recent call last):
    ...
    ValueError: --output: '/' is a folder; give a file path
    """
    target = Path(path)
    try:
        if target.is_dir():
            raise ValueError(f"{option}: {str(target)!r} is a folder; give a file path")
        folder = next(p for p in (target.parent, *target.parent.parents) if p.exists())
        if not folder.is_dir():
            raise ValueError(
                f"{option}: cannot write {str(target)!r}: {str(folder)!r} is a file, not a folder"
            )
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ValueError(
                f"{option}: cannot write {str(target)!r}: the folder {str(folder)!r} is not "
                "writable"
            )
        if target.exists() and not os.access(target, os.W_OK):
            raise ValueError(f"{option}: cannot write {str(target)!r}: the file is not writable")
    except (OSError, StopIteration) as error:  # a name too long, say
        raise ValueError(f"{option}: cannot write {str(target)!r}: {error}") from error
    return target


def output_error(path: str | Path, error: OSError, option: str = "--output") -> OSError:
    """``error`` (from writing ``path``) worded to name ``option``.

    >>> print(output_error("r.json", PermissionError(13, "Permission denied")))
    --output: cannot write 'r.json': Permission denied
    """
    reason = error.strerror or str(error)
    return OSError(f"{option}: cannot write {str(path)!r}: {reason}")


def write_text(path: str | Path, text: str, option: str = "--output") -> Path:
    """Write ``text`` to ``path`` (UTF-8), making its folder; return the path.

    Raises:
        OSError: If it cannot be written, worded by :func:`output_error`.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise output_error(target, error, option) from error
    return target
