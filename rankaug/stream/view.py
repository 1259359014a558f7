"""``Window``: the samples at hand of a streaming wrapper, one set per thread."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["Window"]


class _AtHand(threading.local):
    """One thread's samples at hand (none until it sets them)."""

    entries: Sequence[tuple[int, Any, Any]] = ()
    offset = 0


class Window:
    """A map-style view of the samples at hand: ``(position, id, sample)`` entries.

    The map-style wrapper a streaming wrapper holds reads its samples here;
    ``window[i]`` is the sample of entry ``i - offset``. ``len()`` is fixed when it is
    made (a map-style wrapper's partner count depends on it). The entries and offset
    are the calling thread's own: threads that iterate one wrapper at once each read
    their own samples.
    """

    __slots__ = ("_here", "size")

    def __init__(self, size: int = 1) -> None:
        self.size = size
        self._here = _AtHand()

    @property
    def entries(self) -> Sequence[tuple[int, Any, Any]]:
        """This thread's entries."""
        return self._here.entries

    @entries.setter
    def entries(self, entries: Sequence[tuple[int, Any, Any]]) -> None:
        self._here.entries = entries

    @property
    def offset(self) -> int:
        """The position of this thread's first entry."""
        return self._here.offset

    @offset.setter
    def offset(self, offset: int) -> None:
        self._here.offset = offset

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> Any:
        here = self._here
        return here.entries[index - here.offset][2]

    def __getstate__(self) -> int:
        return self.size  # the samples at hand stay in the process reading them

    def __setstate__(self, size: int) -> None:
        self.__init__(size)  # type: ignore[misc]
