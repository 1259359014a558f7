"""Random state a transform keeps of its own, which no key reaches: found and warned of.

A transform that made a generator when it was built (``self.rng =
np.random.default_rng(0)`` in a custom albumentations transform, a ``random.Random`` in
a callable class) draws from it, not from the key: every DataLoader worker starts from a
copy of the same state, so the workers draw the same values, and so does every epoch
when the workers are not persistent; ``seed=`` changes nothing. :func:`warn_own_random`
looks for such state in the attributes of the transform and of the transforms in it,
once, when a wrapper is built. An albumentations pipeline is looked at after it was
handed the key's generators (its own ``random_generator`` and ``py_random`` are those).
"""

from __future__ import annotations

import random
import sys
import warnings
from types import FrameType
from typing import Final

import numpy as np
import torch

from rankaug.errors import RankaugWarning

__all__ = ["own_random", "warn_own_random"]

_STATE: Final = (np.random.Generator, np.random.RandomState, random.Random, torch.Generator)
_PACKAGE: Final = __file__.rsplit("_own_random.py", 1)[0]


def own_random(transform: object, handed: tuple[object, ...] = ()) -> list[str]:
    """Where ``transform`` keeps random state of its own: ``"Class.attribute at path"``.

    Args:
        transform: A transform; the transforms in its ``transforms`` (a list or tuple,
            as albumentations and torchvision compositions hold them) are looked at too.
        handed: Generators the caller handed it (the key's), not its own.

    Returns:
        The paths, in the order found.

    >>> class Jitter:
    ...     def __init__(self) -> None:
    ...         self.rng = np.random.default_rng(0)
    >>> own_random(Jitter())
    ['Jitter.rng']
    """
    found: list[str] = []
    seen: set[int] = set()

    def visit(node: object, path: str) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        attributes = getattr(node, "__dict__", None)
        if not isinstance(attributes, dict):
            return
        for name, value in attributes.items():
            if isinstance(value, _STATE) and not any(value is given for given in handed):
                where = "" if path == type(node).__name__ else f" at {path}"
                found.append(f"{type(node).__name__}.{name}{where}")
        children = attributes.get("transforms")
        if isinstance(children, list | tuple):
            for position, child in enumerate(children):
                visit(child, f"{path}.transforms[{position}]")

    visit(transform, type(transform).__name__)
    owner = getattr(transform, "__self__", None)  # a bound method: its object's state
    if owner is not None and not isinstance(owner, type):
        visit(owner, type(owner).__name__)
    return found


def warn_own_random(transform: object, handed: tuple[object, ...] = ()) -> None:
    """Warn once if ``transform`` keeps random state of its own (see :func:`own_random`).

    Warns:
        RankaugWarning: Naming where the state is and what to draw from instead.
    """
    found = own_random(transform, handed)
    if not found:
        return
    frame: FrameType | None = sys._getframe(1)  # the first caller outside rankaug
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"the transform keeps random state of its own ({', '.join(found)}), which the "
        "key does not reach: every DataLoader worker draws the same values from its copy "
        "(every epoch too, with workers that are not persistent) and seed= changes "
        "nothing; draw from self.random_generator or self.py_random in an albumentations "
        "transform (rankaug hands them the key's), or from the rng= argument a callable "
        "is given",
        RankaugWarning,
        stacklevel=level,
    )
