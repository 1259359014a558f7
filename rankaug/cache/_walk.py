"""Find any rankaug random wrapper inside a dataset that is about to be cached.

A wrapper's draws change every epoch, so a cache above one would freeze them. Another
library's transform (albumentations, torchvision's, kornia's) may be random or not: the
first one found is warned about, once, naming where it is. The
walk visits every attribute (``__dict__`` and ``__slots__``) of every object it
reaches, and every element of lists, tuples, sets and dicts, depth first and each
object once (cycles end there). It does not enter arrays, tensors, strings, numbers,
paths, classes, modules or functions, and it visits at most :data:`LIMIT` objects; a
dataset larger than that gets a :class:`~rankaug.RankaugWarning` that the walk stopped.
"""

from __future__ import annotations

import os
import types
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, Final

import numpy as np
import torch

from rankaug.errors import RankaugWarning
from rankaug.keyed import KeyedDataset

__all__ = ["LIMIT", "foreign_library", "refuse_random"]

#: At most this many objects are visited.
LIMIT: Final = 1_000_000
_LEAVES: Final = (
    str,
    bytes,
    bytearray,
    memoryview,
    int,
    float,
    complex,
    type(None),
    np.ndarray,
    np.generic,
    np.dtype,
    torch.Tensor,
    torch.dtype,
    os.PathLike,
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    range,
    slice,
)


def _children(value: object, where: str) -> Iterator[tuple[object, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield item, f"{where}[{key!r:.40}]"
    elif isinstance(value, list | tuple | set | frozenset):
        for number, item in enumerate(value):
            yield item, f"{where}[{number}]"
    try:  # an object whose attribute lookup fails (a proxy, say) has no visible parts
        attributes = object.__getattribute__(value, "__dict__")
    except Exception:
        attributes = None
    if isinstance(attributes, dict):
        for name, item in list(attributes.items()):
            yield item, f"{where}.{name}"
    for kind in type(value).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__"):
                try:
                    item = object.__getattribute__(value, name)
                except Exception:
                    continue
                yield item, f"{where}.{name}"


_FOREIGN: Final = ("albumentations", "torchvision.transforms", "kornia.augmentation")


def foreign_library(value: object) -> str | None:
    """The library of ``value`` if it is another library's transform, else ``None``.

    >>> foreign_library(len) is None
    True
    """
    module = type(value).__module__
    if not callable(value) or not module.startswith(_FOREIGN):
        return None
    return module.partition(".")[0]


def refuse_random(dataset: Any) -> None:
    """Raise if ``dataset`` holds a rankaug wrapper anywhere among its attributes.

    Warn (once) if it holds another library's transform, which may be random.

    Raises:
        ValueError: Naming the wrapper and where it is (``dataset.inner[0]``, say).

    Warns:
        RankaugWarning: If it holds an albumentations, torchvision or kornia transform.

    >>> refuse_random({"parts": [[1, 2], (3, "x")]})
    """
    seen: set[int] = set()
    warned = False
    stack: list[tuple[object, str]] = [(dataset, "dataset")]
    while stack:
        value, where = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, KeyedDataset):
            raise ValueError(
                f"dataset must be deterministic, but it holds {type(value).__name__} (at "
                f"{where}), whose draws change every epoch; cache what is below the "
                "augmentation, e.g. MosaicDataset(CachedDataset(YoloFolder(...), directory), ...)"
            )
        if not warned and foreign_library(value) is not None:
            warned = True
            warnings.warn(
                f"CachedDataset found {type(value).__name__} from "
                f"{type(value).__module__.partition('.')[0]} at {where}: if it draws at "
                "random, the cache keeps its first draw for every epoch. Cache what is below "
                "it and apply it above the cache, keyed: RandomAugmentWrapper(CachedDataset("
                "...), transform, seed=...)",
                RankaugWarning,
                stacklevel=3,
            )
        if len(seen) > LIMIT:
            warnings.warn(
                f"CachedDataset stopped looking for rankaug wrappers inside "
                f"{type(dataset).__name__} after {LIMIT} objects; make sure none is inside "
                "(a cached random augmentation would repeat every epoch)",
                RankaugWarning,
                stacklevel=3,
            )
            return
        stack.extend(
            (item, place)
            for item, place in _children(value, where)
            if not isinstance(item, _LEAVES) and id(item) not in seen
        )
