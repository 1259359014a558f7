"""How rankaug wrappers nest: the datasets inside a dataset, how deep, the default stream.

A wrapper finds the datasets inside it through the attributes PyTorch's own wrappers
use: ``.dataset`` (``Subset``, rankaug's wrappers) and ``.datasets`` (``ConcatDataset``'s
list, ``StackDataset``'s tuple or, given by keyword, its dict). A dataset held under any
other attribute is out of sight: :mod:`rankaug.stacking` notices it when it is used.

The default stream of a wrapper names its class and its depth, the number of wrappers of
its kind nested inside it, itself included (:func:`default_stream`), so stacked wrappers
draw independent streams. The name includes the class's module, which is ``__main__``
for a class defined in the script being run: pass ``stream=`` to a class of your own
whose draws must not depend on where it is defined.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["children", "default_stream", "depth", "walk"]


def children(dataset: object) -> list[object]:
    """The datasets directly inside ``dataset``: ``.dataset``, then ``.datasets``'s items.

    >>> from torch.utils.data import StackDataset
    >>> children(StackDataset(a=[1], b=[2]))
    [[1], [2]]
    """
    found: list[object] = []
    inner = getattr(dataset, "dataset", None)
    if inner is not None:
        found.append(inner)
    many = getattr(dataset, "datasets", None)
    if isinstance(many, list | tuple):
        found.extend(many)
    elif isinstance(many, Mapping):
        found.extend(many.values())
    return found


def walk(dataset: object, stop: type | tuple[type, ...] = ()) -> Iterator[object]:
    """Datasets reachable from ``dataset`` through :func:`children`, each once.

    Depth first, in attribute order, ``dataset`` itself not yielded.

    Args:
        dataset: The outer dataset.
        stop: Types whose instances are yielded but not walked into.

    Yields:
        The datasets inside it.
    """
    seen = {id(dataset)}
    stack = list(reversed(children(dataset)))
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if not isinstance(current, stop):
            stack.extend(reversed(children(current)))


def depth(dataset: object, kind: type[Any] | tuple[type[Any], ...]) -> int:
    """How many ``kind`` wrappers nest in ``dataset``, itself included.

    Each ``kind`` wrapper inside holds its own ``depth``, so the walk stops below it.
    ``kind`` may be a tuple of types, counted together.
    """
    inside = max((inner.depth for inner in walk(dataset, kind) if isinstance(inner, kind)),
                 default=0)  # fmt: skip
    return inside + isinstance(dataset, kind)


def default_stream(kind: type[Any], level: int) -> str:
    """The stream name of a ``kind`` wrapper at depth ``level`` made without ``stream=``.

    >>> class Mine: ...
    >>> default_stream(Mine, 2).endswith("Mine/2")
    True
    """
    return f"{kind.__module__}.{kind.__qualname__}/{level}"
