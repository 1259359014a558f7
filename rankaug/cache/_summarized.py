"""The arrays a dataset's ``repr`` may abbreviate, found so their content keys the cache.

numpy and torch print an array of more elements than their print threshold (1000 by
default) as its corners and ``...``: a dataclass dataset holding its images in an
array (its automatic ``repr`` lists every field) has one ``repr`` for any pixels but
the corners, and a cache keyed by that ``repr`` alone would serve one dataset's samples
for another's (pandas prints a table's first and last rows alike). When a ``repr``
shows ``...``, the fingerprint also hashes the content of every such array and table
the dataset holds (:func:`summarized`): its attributes
(``__dict__`` and ``__slots__``) and the items of lists, tuples and dicts, depth first
in their order, each object once, at most :data:`DEPTH` levels and :data:`LIMIT`
objects (more is a caveat). An array reached only through something else (a C
extension's object, a property) is not seen: pass ``fingerprint=``.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Final

import numpy as np
import torch

from rankaug.cache._content import Opaque, content_hash
from rankaug.cache._walk import only_data

__all__ = ["DEPTH", "LIMIT", "Summarized", "summarized"]

#: Attributes and items nested deeper than this are not looked into.
DEPTH: Final = 8
#: At most this many objects are visited.
LIMIT: Final = 100_000
#: What holds no array: not looked into (nor lists, tuples and dicts of only these).
_SKIPPED: Final = (
    str,
    bytes,
    bytearray,
    int,
    float,
    complex,
    type(None),
    np.generic,
    np.dtype,
    torch.dtype,
    os.PathLike,
    range,
    slice,
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
)
_CONTAINERS: Final = frozenset({list, tuple, dict})
#: What stands for a table the content hash cannot read (see ``_table``).
_OPAQUE: Final[list[Any]] = ["a table holding values that cannot be hashed"]
_NOT_DATA: Final = frozenset({"__dict__", "__weakref__"})


class Summarized:
    """The abbreviated arrays found: where they are, their content hash, a full walk?

    Attributes:
        places: Each array's place (``dataset.images``, ``dataset.parts[1]``).
        digest: The BLAKE2b hex digest of their content (dtype, shape, bytes), in order.
        unseen: Why some may not have been seen (``""`` when all were): the walk stopped
            at :data:`LIMIT` objects, or a table holds values that cannot be hashed.
    """

    __slots__ = ("digest", "places", "unseen")

    def __init__(self, places: list[str], digest: str, unseen: str) -> None:
        self.places, self.digest, self.unseen = places, digest, unseen


def summarized(dataset: Any, where: str) -> Summarized:
    """The arrays and tensors ``dataset`` holds that numpy or torch print abbreviated.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Frames:
    ...     images: np.ndarray
    >>> one, two = Frames(np.zeros((4, 64, 64))), Frames(np.zeros((4, 64, 64)))
    >>> two.images[1, 30, 30] = 1.0
    >>> repr(one) == repr(two)  # the corners alone are printed
    True
    >>> summarized(one, "dataset").places
    ['dataset.images']
    >>> summarized(one, "dataset").digest != summarized(two, "dataset").digest
    True
    """
    numpy_threshold = int(np.get_printoptions()["threshold"])
    torch_threshold = int(getattr(torch._tensor_str.PRINT_OPTS, "threshold", 1000))
    places: list[str] = []
    arrays: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[str, Any, int]] = [(where, dataset, 0)]
    visits, unseen = 0, []
    while stack:
        if visits >= LIMIT:
            unseen.append(f"it stopped looking after {LIMIT} objects")
            break
        place, value, depth = stack.pop()
        if isinstance(value, _SKIPPED) or id(value) in seen:
            continue
        seen.add(id(value))
        visits += 1
        if isinstance(value, np.ndarray):
            if value.size > numpy_threshold:
                places.append(place)
                arrays.append(value)
            continue
        if isinstance(value, torch.Tensor):
            if value.numel() > torch_threshold:
                places.append(place)
                arrays.append(value)
            continue
        if type(value) in _CONTAINERS and only_data(value, _SKIPPED):
            continue  # (file, label) records, say: told by their types, not item by item
        table = _table(value)
        if table is not None:
            places.append(place)
            arrays.append(table)
            if table is _OPAQUE:
                unseen.append(f"{place} holds values it cannot hash")
            continue
        if depth < DEPTH:
            children = _children(place, value)
            stack.extend((name, child, depth + 1) for name, child in reversed(children))
    return Summarized(places, content_hash(arrays), " and ".join(unseen))


def _table(value: Any) -> list[Any] | None:
    """A pandas ``DataFrame``, ``Series`` or ``Index`` as hashable parts, else ``None``.

    Its class, dtypes, rows (pandas' own row hashes, the index included) and columns; a
    table whose cells pandas cannot hash (lists, say) by its values, index and columns;
    one the content hash cannot read either is :data:`_OPAQUE`.
    """
    pandas = sys.modules.get("pandas")  # imported by the user if a table is here
    if pandas is None or not isinstance(value, pandas.DataFrame | pandas.Series | pandas.Index):
        return None
    dtypes = value.dtypes if isinstance(value, pandas.DataFrame) else value.dtype
    labels = [getattr(value, "columns", None), getattr(value, "index", None)]
    described = [type(value).__name__, [str(dtype) for dtype in np.atleast_1d(dtypes)]]
    try:
        rows = pandas.util.hash_pandas_object(value, index=True).to_numpy()
        columns = labels[0]
        return [*described, rows, None if columns is None else _table(columns)]
    except (TypeError, ValueError):  # cells pandas cannot hash
        parts = [value.to_numpy(), *(None if part is None else part.to_numpy() for part in labels)]
        try:
            content_hash(parts)
        except Opaque:
            return _OPAQUE
        return [*described, *parts]


def _children(place: str, value: Any) -> list[tuple[str, Any]]:
    """The named items (lists, tuples, dicts) or attributes of ``value``, in order."""
    if isinstance(value, list | tuple):  # a place named only for what may hold arrays
        items = enumerate(value)
        return [(f"{place}[{n}]", item) for n, item in items if not isinstance(item, _SKIPPED)]
    if isinstance(value, dict):
        pairs = value.items()
        return [(f"{place}[{k!r}]", item) for k, item in pairs if not isinstance(item, _SKIPPED)]
    named: dict[str, Any] = dict(getattr(value, "__dict__", None) or {})
    for kind in type(value).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in named and slot not in _NOT_DATA and hasattr(value, slot):
                named[slot] = getattr(value, slot)
    return [(f"{place}.{name}", item) for name, item in named.items()]
