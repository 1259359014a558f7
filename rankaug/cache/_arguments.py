"""The checks of :class:`~rankaug.CachedDataset`'s own arguments: its directory and fingerprint.

>>> check_fingerprint("v2")
'v2'
>>> check_directory("")
Traceback (most recent call last):
...
ValueError: directory must be a non-empty path, got ''
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["check_directory", "check_fingerprint"]


def check_directory(directory: object) -> Path:
    """``directory`` resolved (absolute, ``..`` and symlinks followed).

    Raises:
        TypeError: If it is not a ``str`` or ``os.PathLike`` (bytes are refused).
        ValueError: If it is empty.
    """
    if isinstance(directory, bytes) or not isinstance(directory, str | os.PathLike):
        raise TypeError(
            f"directory must be a path (str or os.PathLike), got {directory!r} of type "
            f"{type(directory).__name__}"
        )
    if os.fspath(directory) == "":
        raise ValueError(f"directory must be a non-empty path, got {directory!r}")
    return Path(directory).resolve()


def check_fingerprint(value: object) -> str:
    """``value``, a non-empty string naming a version of the data.

    Raises:
        TypeError: If it is not a string.
        ValueError: If it is empty.
    """
    if not isinstance(value, str):
        raise TypeError(
            f"fingerprint must be None or a non-empty string, got {value!r} of type "
            f"{type(value).__name__}"
        )
    if not value:
        raise ValueError(f"fingerprint must be None or a non-empty string, got {value!r}")
    return value
