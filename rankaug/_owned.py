"""Counters in shared memory that belong to one process and its DataLoader workers.

A wrapper's epoch (:class:`~rankaug.shared_epoch.SharedEpoch`) and a streaming
wrapper's pass counts (:class:`~rankaug.stream.counter.PassCounter`) live in shared
memory so that the DataLoader workers of the process that uses the wrapper see what it
writes: forked workers inherit the mapping, spawned ones receive it. Every other process
forked from it inherits the mapping too (and one spawned with it as an argument receives
it), and that is wrong for a rank: a wrapper built before ``torch.multiprocessing`` or
``multiprocessing.get_context("fork")`` starts the ranks would count every rank's passes
together (each rank skipping the epochs the others ran) and hand one rank's
``set_epoch`` to the others' workers.

So a counter records the process it belongs to, and a process that is not that one and
not a DataLoader worker (a rank) claims a copy of its own (:meth:`Owned.claim`), with the
values it inherited: before it writes one (a pass counter: before any use), before it
forks (:func:`os.register_at_fork`: its workers then inherit its copy) and before it
pickles one (for spawned workers). A DataLoader worker never claims: its counters are
its main process's.
"""

from __future__ import annotations

import os
import weakref
from typing import Protocol

from torch.utils.data import get_worker_info

from rankaug._process import current_pid

__all__ = ["Owned", "foreign", "track"]


class Owned(Protocol):
    """A counter in shared memory that a rank claims (see the module docstring)."""

    def claim(self) -> None:
        """Take a copy of its own here when :func:`foreign` says so."""


_LIVE: weakref.WeakSet[Owned] = weakref.WeakSet()


def track(counter: Owned) -> None:
    """Claim ``counter`` before this process forks, while it lives."""
    _LIVE.add(counter)


def foreign(owner: int) -> bool:
    """Whether a counter of process ``owner`` must be claimed here before it is used.

    True in a process other than ``owner`` that is no DataLoader worker.

    >>> foreign(os.getpid()), foreign(-1)
    (False, True)
    """
    return owner != current_pid() and get_worker_info() is None


def _before_fork() -> None:
    """Claim every live counter this process inherited, before it forks a child."""
    if get_worker_info() is not None:
        return
    for counter in list(_LIVE):
        counter.claim()


os.register_at_fork(before=_before_fork)
