"""What reading a cache entry may build: rankaug's allowlist, and nothing else.

A cache entry is a pickle, and unpickling may call any function a pickle names. The
reader here admits only the globals rankaug itself writes: a few builtin types
(``complex``, ``set``, ``frozenset``, ``bytearray``, ``slice``, ``range``,
``collections.OrderedDict``), numpy's array, dtype and scalar reconstructors,
:func:`_tensor` (how the cache stores a CPU tensor) and
:func:`~rankaug.cache._tv_tensors.tv_tensor` (torchvision's tv_tensors). Any other
global is refused before it is looked up, unless the user named that very object in
``trusted_types``; the object returned is then the one named, never an import.
"""

from __future__ import annotations

import collections
import io
import pickle
import types
from collections.abc import Iterable, Mapping
from typing import Any, Final

import numpy as np
import torch

try:
    from numpy._core import multiarray as _multiarray
    from numpy._core import numeric as _numeric
except ImportError:  # numpy 1.x, where numpy.core is not yet private
    from numpy.core import multiarray as _multiarray  # type: ignore[no-redef]
    from numpy.core import numeric as _numeric  # type: ignore[no-redef]

from rankaug.cache._tv_tensors import tv_tensor

__all__ = ["NOTHING", "Refused", "Trusted", "load", "tensor_reduction", "trusted"]

Trusted = Mapping[tuple[str, str], object]
#: No extra trusted globals.
NOTHING: Final[Trusted] = types.MappingProxyType({})


def _tensor(array: np.ndarray, dtype: str, requires_grad: bool) -> torch.Tensor:
    """A CPU tensor from the array of its bytes (reinterpreted as ``dtype`` if given).

    A read-only array (of a file kept mapped read-only) is copied: a tensor cannot be
    made read-only, and writing into one over such a mapping would crash the process.
    """
    tensor = torch.from_numpy(array if array.flags.writeable else array.copy())
    if dtype:
        kind = getattr(torch, dtype, None)
        if not isinstance(kind, torch.dtype):
            raise pickle.UnpicklingError(f"unknown tensor dtype {dtype!r}")
        tensor = tensor.view(kind)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


_VIEWS: Final = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def tensor_reduction(tensor: torch.Tensor) -> Any:
    """How a CPU strided tensor is pickled (``NotImplemented`` for any other)."""
    if (
        tensor.device.type != "cpu"
        or tensor.layout != torch.strided
        or (tensor.requires_grad and not tensor.is_leaf)
        or tensor.is_quantized
    ):
        return NotImplemented
    plain = tensor.detach().resolve_conj().resolve_neg()
    try:
        return _tensor, (plain.numpy(), "", tensor.requires_grad)
    except TypeError:  # a dtype numpy lacks (bfloat16, float8...): its bits as integers
        pass
    view = _VIEWS.get(plain.element_size())
    if view is None:
        return NotImplemented
    try:
        bits = plain.view(view).numpy()
    except (RuntimeError, TypeError):
        return NotImplemented
    return _tensor, (bits, str(plain.dtype).removeprefix("torch."), tensor.requires_grad)


def _allowed() -> dict[tuple[str, str], object]:
    allowed: dict[tuple[str, str], object] = {
        ("builtins", kind.__name__): kind
        for kind in (complex, set, frozenset, bytearray, slice, range)
    }
    allowed["collections", "OrderedDict"] = collections.OrderedDict
    allowed["numpy", "dtype"] = np.dtype
    allowed["numpy", "ndarray"] = np.ndarray
    for prefix in ("numpy._core", "numpy.core"):  # the name numpy 2 and numpy 1 write
        allowed[f"{prefix}.multiarray", "_reconstruct"] = _multiarray._reconstruct
        allowed[f"{prefix}.multiarray", "scalar"] = _multiarray.scalar
        allowed[f"{prefix}.numeric", "_frombuffer"] = getattr(_numeric, "_frombuffer")  # noqa: B009
    allowed[_tensor.__module__, _tensor.__qualname__] = _tensor
    allowed[tv_tensor.__module__, tv_tensor.__qualname__] = tv_tensor
    return allowed


_ALLOWED: Final = _allowed()


class Refused(pickle.UnpicklingError):
    """A pickle names a global outside the allowlist (``module`` and ``name``)."""

    def __init__(self, module: str, name: str) -> None:
        super().__init__(f"{module}.{name}")
        self.module, self.name = module, name


class _Reader(pickle.Unpickler):
    extra: Trusted = NOTHING  # set on an instance when the user trusts more

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None:
            found = self.extra.get((module, name))
            if found is None:
                raise Refused(module, name)
        return found


def load(data: memoryview, buffers: list[memoryview], extra: Trusted) -> Any:
    """Unpickle ``data`` with out-of-band ``buffers``, admitting only allowed globals.

    Raises:
        Refused: If the pickle names any other global.
        Exception: Whatever a torn pickle raises.

    >>> load(memoryview(pickle.dumps({"a": (1, 2.5)})), [], {})
    {'a': (1, 2.5)}
    >>> import os
    >>> load(memoryview(pickle.dumps(os.getcwd)), [], {})
    Traceback (most recent call last):
    ...
    rankaug.cache._unpickle.Refused: posix.getcwd
    """
    reader = _Reader(io.BytesIO(data), buffers=buffers)
    if extra:
        reader.extra = extra
    return reader.load()


def trusted(types: Iterable[object] | None) -> dict[tuple[str, str], object]:
    """The ``trusted_types`` argument as a table ``(module, qualname) -> object``.

    Raises:
        TypeError: If it is not an iterable of classes or functions.
    """
    if types is None:
        return {}
    if isinstance(types, str | bytes) or not isinstance(types, Iterable):
        raise TypeError(
            f"trusted_types must be None or an iterable of classes, got {types!r} of type "
            f"{type(types).__name__}"
        )
    table: dict[tuple[str, str], object] = {}
    for kind in types:
        module = getattr(kind, "__module__", None)
        name = getattr(kind, "__qualname__", None)
        if not (callable(kind) and isinstance(module, str) and isinstance(name, str)):
            raise TypeError(
                f"trusted_types must hold classes (or functions) with a module and a name, "
                f"got {kind!r} of type {type(kind).__name__}"
            )
        table[module, name] = kind
    return table
