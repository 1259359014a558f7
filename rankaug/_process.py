"""This process's id, without a system call for every sample.

``os.getpid()`` is a system call (glibc stopped caching the id in 2.25): about 0.5 µs
here, and the keyed wrappers ask for every sample whether a stream is this process's or
one a forked worker inherited. :func:`current_pid` reads the id taken at import, taken
again in every child :func:`os.fork` makes (:func:`os.register_at_fork`: DataLoader
workers, multiprocessing's ``fork`` and ``forkserver``); a spawned process imports
rankaug afresh.
"""

from __future__ import annotations

import os

__all__ = ["current_pid", "forked"]

_pid = os.getpid()
_forked_child = False


def _forked() -> None:
    global _pid, _forked_child
    _pid = os.getpid()
    _forked_child = True


os.register_at_fork(after_in_child=_forked)


def current_pid() -> int:
    """``os.getpid()``, from memory.

    >>> current_pid() == os.getpid()
    True
    """
    return _pid


def forked() -> bool:
    """Whether this process was forked from one that had imported rankaug.

    >>> isinstance(forked(), bool)
    True
    """
    return _forked_child
