"""Whether the default process group is up, without a Python frame for every sample.

A wrapper given ``rank=None`` resolves its rank once per process and process-group
state (``KeyedDataset._rank_now``), and so asks for every sample whether a process
group is up: one may be made after the wrapper. ``dist.is_initialized()`` reads
``GroupMember.WORLD``, a property over ``_world.default_pg``, itself a property over
``_world._default_pg``: three Python frames, some µs a sample once the transform's
pixel work has taken the processor's caches. :data:`default_group` reads that field
with C calls alone where this torch keeps it there, and ``dist.group.WORLD`` otherwise.

>>> default_group() is None  # no process group in the doctest
True
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any, Final

import torch.distributed as dist

__all__ = ["default_group"]


def _none() -> None:
    return None


def _world() -> Any:
    return dist.group.WORLD


def _reader() -> Callable[[], Any]:
    if not dist.is_available():
        return _none
    from torch.distributed import distributed_c10d as c10d

    world = getattr(c10d, "_world", None)
    if not isinstance(getattr(type(world), "default_pg", None), property) or not hasattr(
        world, "_default_pg"
    ):
        return _world  # another layout: the public reading
    # c10d._world read at every call: one set in its place later is followed
    return functools.partial(operator.attrgetter("_world._default_pg"), c10d)


default_group: Final[Callable[[], Any]] = _reader()
"""The default process group, or ``None`` (``dist.is_initialized()`` is ``not None``)."""
