"""What lets several threads call one wrapper at once: per-thread copies and one lock.

A wrapper shared by threads (a ``ThreadPoolExecutor``, torchdata's
``ParallelMapper(method="thread")``, free-threaded Python) must not keep a random state
in an object every thread calls: one thread would set it between another's setting and
drawing, and a sample would get another key's draws. Two tools keep each key's draws
its own:

* :class:`PerThread`: an object that is handed a random state and then called (an
  albumentations pipeline) is copied once per thread, on that thread's first use, so no
  two threads share one; it pickles as its original alone;
* :func:`torch_cpu`: torch's default CPU generator (and Python's ``random`` module) is
  one per process, so the code that seeds it, runs a transform and puts its state back
  holds this lock throughout: those sections run one at a time. Code outside rankaug
  that draws from torch's global generator (or ``random``) in another thread meanwhile
  still races with it;
* :func:`passes`: passes over one stream started at once in several threads take
  different epochs;
* :func:`steps`: calls of one ``BatchAugment`` without ``index=`` made at once in
  several threads take different steps (so different keys).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["PerThread", "passes", "steps", "torch_cpu"]

T = TypeVar("T")

_TORCH_CPU = threading.RLock()  # re-entrant: a torch-global transform may call another
_PASSES = threading.Lock()
_STEPS = threading.Lock()


def _new_locks() -> None:
    global _TORCH_CPU, _PASSES, _STEPS
    _TORCH_CPU = threading.RLock()  # a thread of the parent may have held the old ones
    _PASSES = threading.Lock()
    _STEPS = threading.Lock()


os.register_at_fork(after_in_child=_new_locks)


def torch_cpu() -> threading.RLock:
    """The lock held while torch's default CPU generator is seeded, used and put back."""
    return _TORCH_CPU


def passes() -> threading.Lock:
    """The lock held while a pass over a stream takes its epoch (two passes, two epochs)."""
    return _PASSES


def steps() -> threading.Lock:
    """The lock held while a call takes its step and counts it (two calls, two steps)."""
    return _STEPS


class PerThread(Generic[T]):
    """One copy of ``original`` per thread, made by ``copy`` on the thread's first use.

    ``slot`` holds the calling thread's ``(copy, token)``: the token is whatever the
    caller last recorded with it (the random state it handed that copy); ``local.held``
    is that slot once the thread has one. Pickled (for a spawned worker), only the
    original and ``copy`` travel.

    >>> shared = PerThread([1, 2], list)
    >>> mine = shared.get()
    >>> mine == [1, 2], mine is shared.original, mine is shared.get()
    (True, False, True)
    """

    def __init__(self, original: T, copy: Callable[[T], T]) -> None:
        self.original = original
        self.copy = copy
        self.local = threading.local()

    def get(self) -> T:
        """This thread's copy (made now on its first call)."""
        mine: T = self.slot()[0]
        return mine

    def slot(self) -> list[Any]:
        """This thread's ``[copy, token]``, mutable (the token starts as ``None``)."""
        try:
            held: list[Any] = self.local.held
        except AttributeError:
            held = self.local.held = [self.copy(self.original), None]
        return held

    def __getstate__(self) -> dict[str, Any]:
        return {"original": self.original, "copy": self.copy}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["original"], state["copy"])  # type: ignore[misc]
