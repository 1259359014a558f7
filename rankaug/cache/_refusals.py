"""Why a sample cannot be stored, said with the fix (and never "trust torch's internals").

The cache stores plain values, numpy arrays, CPU tensors and torchvision's tv_tensors;
other types only when the user trusts them (``trusted_types``). A tensor it does not
store (on a GPU, sparse, a subclass of its own) is refused as it is pickled, by what it
is: torch would pickle it through private functions (``torch._utils._rebuild_tensor_v2``,
``torch.storage._load_from_bytes``, which runs ``torch.load``), and a library's private
function is never offered as something to trust.
"""

from __future__ import annotations

from typing import Final

import torch

from rankaug.cache._trust import Untrusted, trust_types
from rankaug.cache._tv_tensors import is_tv_tensor
from rankaug.cache._unpickle import Refused

__all__ = ["Unstorable", "cannot_store", "internal", "refuse_global", "unstorable"]

_LIBRARIES: Final = frozenset({"torch", "torchvision", "numpy"})


class Unstorable(TypeError):
    """A sample holds a tensor the cache does not store (the message says which, and why)."""


def internal(module: str, name: str) -> bool:
    """Whether a pickled global is a library's private function, never a type to trust.

    A private name (a part starting with ``_``) in torch, torchvision or numpy: how
    those pickle their own objects (``torch.storage._load_from_bytes`` runs
    ``torch.load``). A private class of the user's own is theirs to trust.

    >>> internal("torch._utils", "_rebuild_tensor_v2"), internal("torch", "Size")
    (True, False)
    >>> internal("numpy", "_private"), internal("mymodule", "_Sample")
    (True, False)
    """
    return module.partition(".")[0] in _LIBRARIES and any(
        part.startswith("_") for part in name.split(".")
    )


def unstorable(tensor: torch.Tensor) -> Unstorable:
    """The error for a tensor that neither the plain nor the tv_tensor path stores."""
    kind = type(tensor)
    name = f"{kind.__module__}.{kind.__qualname__}"
    if tensor.device.type != "cpu":
        why = f"a tensor on {tensor.device}"
    elif tensor.layout != torch.strided:
        why = f"a tensor of layout {tensor.layout}"
    elif tensor.is_quantized:
        why = "a quantized tensor"
    elif tensor.requires_grad and not tensor.is_leaf:
        why = "a tensor that requires grad and is no leaf"
    elif is_tv_tensor(tensor):
        why = (
            f"a {name} with metadata other than the attributes its class declares, holding "
            f"plain values ({sorted(tensor.__dict__)})"
        )
    elif kind is not torch.Tensor:
        why = f"a {name}, a tensor subclass other than torchvision's tv_tensors"
    else:
        why = f"a tensor of dtype {tensor.dtype}"
    return Unstorable(
        f"it holds {why}, which the cache does not store (it stores CPU tensors, dense, "
        "detached or leaves, and torchvision's tv_tensors); return one of those from the "
        "dataset"
    )


def cannot_store(what: str, error: Exception) -> TypeError:
    """The error for a sample (``what``: ``dataset[3]``) that :func:`encode` refused.

    ``error`` is what ``encode`` raised: a :class:`~rankaug.cache._unpickle.Refused`
    global, an :class:`Unstorable` tensor, or the pickler's own error.
    """
    start = f"CachedDataset cannot store {what}"
    if isinstance(error, Refused):
        found = f"{error.module}.{error.name}"
        if internal(error.module, error.name):
            return TypeError(
                f"{start}: it holds something that pickles through {found}, a private "
                "function, which the cache never runs (do not trust it: a cache file could "
                "call it with any arguments); store plain values, numpy arrays, CPU tensors "
                "or torchvision's tv_tensors instead"
            )
        return TypeError(
            f"{start}: it holds {found}, which the cache reads back only when named; "
            f"{trust_types(error.name)} if you trust that type's unpickling"
        )
    if isinstance(error, Unstorable):
        return TypeError(f"{start}: {error}")
    return TypeError(f"{start}: the sample cannot be pickled ({type(error).__name__}: {error})")


def refuse_global(path: str, error: Refused) -> Untrusted:
    """The error for an entry whose pickle names a global the reader does not admit."""
    start = (
        f"CachedDataset refuses the cache entry {path}: its pickle calls "
        f"{error.module}.{error.name}, which is not one of the types rankaug stores, so it "
        "was not unpickled."
    )
    if internal(error.module, error.name):  # torch's _rebuild_tensor_v2: never to trust
        return Untrusted(
            f"{start} A library's private function is no type of your samples: delete it."
        )
    return Untrusted(
        f"{start} If that is a type of your samples, {trust_types(error.name)}; "
        "otherwise someone else wrote this file: delete it.",
        refused=(error.module, error.name),
    )
