"""Find any rankaug random wrapper inside a dataset that is about to be cached.

A wrapper's draws change every epoch, so a cache above one would freeze them. Another
library's transform (albumentations, torchvision's, kornia's, ultralytics' random
ones), a Hugging Face transform set by ``with_transform``/``set_transform`` and a
dataset built with ``augment=True`` (ultralytics') may be random: the first one found is
warned about, once, naming where it is. The walk visits every attribute (``__dict__``
and ``__slots__``) of every object it reaches, and every element of lists, tuples, sets
and dicts, depth first and each object once (cycles end there). It looks into functions
too: their closure variables, defaults and the globals they name, a
``functools.partial``'s function and arguments, a bound method's object (a function
reached through globals is not looked into, so the walk stays in the user's code). It
does not enter arrays, tensors, strings, numbers, paths, classes or modules, nor plain
data: a list, tuple, set or dict (those classes, not subclasses) holding only such
values and such containers, at most :data:`DATA_DEPTH` deep, which can hold no
wrapper or transform. Plain data is told by the types it holds, a level at a time in
C loops (:func:`only_data`), not visited item by item: a dataset holding a million
``(file, label)`` tuples took about 7 s, it takes about 0.2 s. The walk visits at
most :data:`LIMIT` objects; a dataset larger than that gets a
:class:`~rankaug.RankaugWarning` that the walk stopped.
"""

from __future__ import annotations

import functools
import operator
import os
import types
import warnings
from collections.abc import Iterator, Mapping
from itertools import chain, compress
from typing import Any, Final

import numpy as np
import torch

from rankaug.cache._hf import custom_transform
from rankaug.errors import RankaugWarning
from rankaug.keyed import KeyedDataset

__all__ = ["DATA_DEPTH", "LIMIT", "foreign_library", "only_data", "refuse_random"]

#: At most this many objects are visited.
LIMIT: Final = 1_000_000
#: Plain data nested deeper than this (or in a cycle) is walked like other objects.
DATA_DEPTH: Final = 32
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
    types.BuiltinFunctionType,
    types.CodeType,
    range,
    slice,
)
_FUNCTIONS: Final = (types.FunctionType, types.MethodType, functools.partial)
_CONTAINERS: Final = frozenset({list, tuple, set, frozenset, dict})
_CHUNK: Final = 65_536  # containers whose items are listed at once
_IS_DICT: Final = functools.partial(operator.is_, dict)


def _items(containers: list[Any]) -> list[Any]:
    """The items of ``containers`` (lists, tuples, sets, dicts: keys and values) in one list."""
    if dict not in set(map(type, containers)):
        return list(chain.from_iterable(containers))
    flags = list(map(_IS_DICT, map(type, containers)))
    dicts = list(compress(containers, flags))
    return [
        *chain.from_iterable(compress(containers, map(operator.not_, flags))),
        *chain.from_iterable(map(dict.keys, dicts)),
        *chain.from_iterable(map(dict.values, dicts)),
    ]


def only_data(value: object, leaves: tuple[type, ...] = _LEAVES) -> bool:
    """Whether ``value`` is plain data (a container of ``leaves`` and containers, see above).

    A level of the nesting at a time, by the set of types in it, in chunks of
    containers (so memory stays bounded); ``False`` past :data:`DATA_DEPTH` levels.

    >>> only_data({"boxes": [(0.5, 1), None], "name": "a"}), only_data([[object()]])
    (True, False)
    """
    stack: list[tuple[list[Any], int]] = [([value], 0)]
    while stack:
        containers, depth = stack.pop()
        items = _items(containers)
        kinds = set(map(type, items))
        if not all(kind in _CONTAINERS or issubclass(kind, leaves) for kind in kinds):
            return False
        if kinds.isdisjoint(_CONTAINERS):
            continue
        if depth == DATA_DEPTH:
            return False
        inner = list(compress(items, map(_CONTAINERS.__contains__, map(type, items))))
        stack.extend((inner[at : at + _CHUNK], depth + 1) for at in range(0, len(inner), _CHUNK))
    return True


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


def _function_parts(value: object, where: str) -> Iterator[tuple[object, str, bool]]:
    """What a function, partial or bound method holds: ``(part, where, via_globals)``."""
    if isinstance(value, functools.partial):
        yield value.func, f"{where}.func", False
        for number, item in enumerate(value.args):
            yield item, f"{where}.args[{number}]", False
        for key, item in value.keywords.items():
            yield item, f"{where}.keywords[{key!r:.40}]", False
    elif isinstance(value, types.MethodType):
        yield value.__self__, f"{where}.__self__", False
        yield value.__func__, f"{where}.__func__", False
    elif isinstance(value, types.FunctionType):
        code = value.__code__
        for name, cell in zip(code.co_freevars, value.__closure__ or (), strict=False):
            try:
                yield cell.cell_contents, f"{where}.<closure {name}>", False
            except ValueError:  # a cell not filled yet
                continue
        for number, item in enumerate(value.__defaults__ or ()):
            yield item, f"{where}.__defaults__[{number}]", False
        for key, item in (value.__kwdefaults__ or {}).items():
            yield item, f"{where}.__kwdefaults__[{key!r:.40}]", False
        for item, place in _children(value, where):  # its attributes: __wrapped__, say
            yield item, place, False
        space = value.__globals__
        for name in sorted(_global_names(code)):
            if name in space:
                yield space[name], f"{where}.<global {name}>", True


def _global_names(code: types.CodeType) -> set[str]:
    """The names ``code`` (and the code nested in it) may read as globals."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


_FOREIGN: Final = (
    "albumentations",
    "torchvision.transforms",
    "kornia.augmentation",
    "ultralytics.data.augment",
)
#: ultralytics' transforms that draw nothing (its Compose is looked into instead).
_STEADY: Final = frozenset(
    {
        "BaseTransform",
        "CenterCrop",
        "ClassifyLetterBox",
        "Compose",
        "DepthFormat",
        "Format",
        "LetterBox",
        "SemanticFormat",
        "ToTensor",
    }
)


def foreign_library(value: object) -> str | None:
    """The library of ``value`` if it is another library's transform, else ``None``.

    ultralytics' transforms that draw nothing (``LetterBox``, ``Format``, its
    ``Compose``...) are not counted.

    >>> foreign_library(len) is None
    True
    """
    kind = type(value)
    module = kind.__module__
    if not callable(value) or not module.startswith(_FOREIGN):
        return None
    if module.startswith("ultralytics.") and kind.__name__ in _STEADY:
        return None
    return module.partition(".")[0]


def _augmenting(value: object) -> bool:
    """Whether ``value`` is a dataset built with ``augment=True`` (ultralytics')."""
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except Exception:
        return False
    kind = type(value)
    return (
        isinstance(attributes, dict)
        and attributes.get("augment") is True
        and hasattr(kind, "__getitem__")
        and hasattr(kind, "__len__")
    )


def _random_part(value: object, where: str) -> str | None:
    """The warning for ``value`` if it may draw at random, else ``None``."""
    name = type(value).__name__
    keyed = "keyed: RandomAugmentWrapper(CachedDataset(...), transform, seed=...)"
    library = foreign_library(value)
    if library is not None:
        return (
            f"CachedDataset found {name} from {library} at {where}: if it draws at random, "
            "the cache keeps its first draw for every epoch. Cache what is below it and "
            f"apply it above the cache, {keyed}"
        )
    if _augmenting(value):
        return (
            f"CachedDataset found {name} with augment=True at {where}: it augments every "
            "sample as it is read, and if that draws at random, the cache keeps its first "
            "draw for every epoch. Cache it built with augment=False and augment above the "
            f"cache, {keyed}"
        )
    transform = custom_transform(value)
    if transform is not None:
        shown = getattr(transform, "__name__", type(transform).__name__)
        return (
            f"CachedDataset found a Hugging Face transform ({shown}, set by with_transform "
            f"or set_transform) on the {name} at {where}: it runs on every read, and if it "
            "draws at random, the cache keeps its first draw for every epoch. Cache the "
            "dataset without it (with_format('numpy'), say) and apply the transform above "
            f"the cache, {keyed}"
        )
    return None


def refuse_random(dataset: Any) -> None:
    """Raise if ``dataset`` holds a rankaug wrapper anywhere among its attributes.

    Warn (once) if it holds another library's transform, a Hugging Face transform or a
    dataset built with ``augment=True``, any of which may be random.

    Raises:
        ValueError: Naming the wrapper and where it is (``dataset.inner[0]``, say).

    Warns:
        RankaugWarning: If it holds an albumentations, torchvision, kornia or
            ultralytics transform (anywhere: in a function's closure, say), a Hugging
            Face ``with_transform`` transform or a dataset with ``augment=True``.

    >>> refuse_random({"parts": [[1, 2], (3, "x")]})
    """
    seen: set[int] = set()
    warned = False
    stack: list[tuple[object, str, bool]] = [(dataset, "dataset", False)]
    while stack:
        value, where, via_globals = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, KeyedDataset):
            raise ValueError(
                f"dataset must be deterministic, but it holds {type(value).__name__} (at "
                f"{where}), whose draws change every epoch; cache what is below the "
                "augmentation, e.g. MosaicDataset(CachedDataset(YoloFolder(...), directory), ...)"
            )
        message = None if warned else _random_part(value, where)
        if message is not None:
            warned = True
            warnings.warn(message, RankaugWarning, stacklevel=3)
        if len(seen) > LIMIT:
            warnings.warn(
                f"CachedDataset stopped looking for rankaug wrappers inside "
                f"{type(dataset).__name__} after {LIMIT} objects; make sure none is inside "
                "(a cached random augmentation would repeat every epoch)",
                RankaugWarning,
                stacklevel=3,
            )
            return
        if type(value) in _CONTAINERS and only_data(value):
            continue
        if isinstance(value, _FUNCTIONS):
            if via_globals:  # another module's function: not followed further
                continue
            parts = list(_function_parts(value, where))
        else:
            parts = [(item, place, via_globals) for item, place in _children(value, where)]
        stack.extend(
            (item, place, further)
            for item, place, further in parts
            if not isinstance(item, _LEAVES) and id(item) not in seen
        )
