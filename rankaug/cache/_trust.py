"""Who may have written a cache: this user (or root) alone, unless the user trusts more.

A cache entry is a pickle; the reader admits only rankaug's own types
(:mod:`rankaug.cache._unpickle`), and on top of that, a directory or entry that
another user owns, or that its group or others may write, is refused: someone else
could plant entries there.
"""

from __future__ import annotations

import os
import stat
from typing import Final

__all__ = ["OVERRIDE", "Untrusted", "fix", "problem", "refuse", "trust_types"]

_OTHERS_WRITE: Final = stat.S_IWGRP | stat.S_IWOTH


class Untrusted(ValueError):
    """A cache directory or entry that someone other than this user could have written.

    Attributes:
        refused: The ``(module, qualname)`` of the global an entry's pickle calls, when
            that is why it was refused; else ``None``.
    """

    def __init__(self, message: str, refused: tuple[str, str] | None = None) -> None:
        super().__init__(message)
        self.refused = refused


def problem(status: os.stat_result) -> str | None:
    """Why a file or directory with this status is not this user's alone, or ``None``.

    >>> problem(os.stat_result((0o40700, 0, 0, 0, os.geteuid(), 0, 0, 0, 0, 0))) is None
    True
    >>> problem(os.stat_result((0o40777, 0, 0, 0, os.geteuid(), 0, 0, 0, 0, 0)))
    'writable by its group and others (mode 0o777)'
    """
    owner = status.st_uid
    if owner not in (0, os.geteuid()):
        return f"owned by uid {owner}, not by this process's user (uid {os.geteuid()})"
    mode = status.st_mode
    if mode & _OTHERS_WRITE:
        who = {
            stat.S_IWGRP: "its group",
            stat.S_IWOTH: "others",
            _OTHERS_WRITE: "its group and others",
        }[mode & _OTHERS_WRITE]
        return f"writable by {who} (mode {oct(stat.S_IMODE(mode))})"
    return None


#: How a refusal's message says to trust the directory anyway (the CLI names its flag).
OVERRIDE = "pass trust_directory=True"


def fix(path: str, reason: str) -> str:
    """How to make ``path``, refused for ``reason`` (:func:`problem`'s), trusted."""
    own = (
        f"chmod go-w {path}"
        if reason.startswith("writable")
        else "use a directory of your own (or chown it)"
    )
    return f"{own}; or {OVERRIDE} if you trust everyone who can write there"


def refuse(path: str, what: str, reason: str) -> Untrusted:
    """The error for ``path`` (a ``what``: ``"directory"`` or ``"entry"``) and the fix."""
    return Untrusted(
        f"CachedDataset refuses the cache {what} {path}: it is {reason}, so another user "
        f"could plant an entry there that runs code in this job when it is read. Fix: "
        f"{fix(path, reason)}."
    )


def trust_types(qualname: str) -> str:
    """How a message says to trust a type of the user's (the CLI names its flag)."""
    return f"pass trusted_types=[{qualname}]"
