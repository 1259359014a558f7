"""torchvision's tv_tensors in the cache: the plain tensor, the class and its metadata.

A ``tv_tensors.Image``, ``Mask``, ``Video``, ``BoundingBoxes`` or ``KeyPoints`` (any
class ``torchvision.tv_tensors`` exports) is stored as the plain CPU tensor it wraps
(out of band, as any tensor: :func:`rankaug.cache._unpickle.tensor_reduction`), its
class's name and its metadata (``format``, ``canvas_size``, ``clamping_mode``): plain
values, and torchvision's own enums (``BoundingBoxFormat``) by member name. Reading wraps
the tensor again (``as_subclass``, as torch's own unpickling does) and sets the metadata
back. The class is looked up by name in ``torchvision.tv_tensors`` and never handed to
the pickle as something to call, and only the attributes it declares, holding plain
values, are set: so the reader admits these without ``trusted_types``. A ``TVTensor``
subclass of the user's own is stored with its class as a global: reading it needs the
class in ``trusted_types``.
"""

from __future__ import annotations

import enum
import importlib
import pickle
import sys
from typing import Any, Final

import torch

__all__ = ["is_tv_tensor", "tv_tensor", "tv_tensor_reduction"]

_MODULE: Final = "torchvision.tv_tensors"
_PLAIN: Final = (bool, int, float, str, type(None))


def is_tv_tensor(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is one of torchvision's tv_tensors (or a subclass of one)."""
    module = sys.modules.get(_MODULE)  # a sample can hold tv_tensors only once imported
    return module is not None and isinstance(tensor, module.TVTensor)


def tv_tensor_reduction(tensor: torch.Tensor) -> Any:
    """How a tv_tensor is pickled.

    ``NotImplemented`` for any other tensor, and for one of torchvision's tv_tensors that
    holds metadata other than plain values and torchvision's enums.
    """
    if not is_tv_tensor(tensor):
        return NotImplemented
    module = sys.modules[_MODULE]
    kind = type(tensor)
    state = dict(tensor.__dict__)
    enums: dict[str, tuple[str, str]] = {}
    name: str | type = kind
    if getattr(module, kind.__name__, None) is kind:  # torchvision's own: by name
        name = kind.__name__
        declared = _declared(kind)
        for key, value in list(state.items()):
            if key not in declared:
                return NotImplemented
            kind_of = type(value)
            if isinstance(value, enum.Enum) and getattr(module, kind_of.__name__, None) is kind_of:
                enums[key] = (kind_of.__name__, value.name)
                del state[key]
            elif not _plain(value):
                return NotImplemented
    plain = tensor.detach().as_subclass(torch.Tensor)
    return tv_tensor, (name, plain, tensor.requires_grad, state, enums)


def tv_tensor(
    kind: str | type,
    tensor: torch.Tensor,
    requires_grad: bool,
    state: dict[str, Any],
    enums: dict[str, tuple[str, str]],
) -> torch.Tensor:
    """A tv_tensor again: ``tensor`` wrapped in its class, its metadata set back."""
    module = importlib.import_module(_MODULE)
    if not (type(tensor) is torch.Tensor and isinstance(state, dict) and isinstance(enums, dict)):
        raise pickle.UnpicklingError("a tv_tensor is a plain tensor and dicts of metadata")
    if isinstance(kind, str):  # torchvision's own: only what it declares, plain values
        found = getattr(module, kind, None)
        if not (isinstance(found, type) and issubclass(found, module.TVTensor)):
            raise pickle.UnpicklingError(f"torchvision.tv_tensors has no TVTensor {kind!r}")
        declared = _declared(found)
        restored = dict(state)
        for key, value in state.items():
            if key not in declared or not _plain(value):
                raise pickle.UnpicklingError(f"tv_tensors.{kind} has no attribute {key!r}")
        for key, (enum_name, member) in enums.items():
            kind_of = getattr(module, enum_name, None)
            if key not in declared or not (
                isinstance(kind_of, type) and issubclass(kind_of, enum.Enum)
            ):
                raise pickle.UnpicklingError(f"tv_tensors.{kind} has no enum {key!r}")
            restored[key] = kind_of[member]
        kind = found
    elif isinstance(kind, type) and issubclass(kind, module.TVTensor) and not enums:
        restored = state  # the user's own class, which they trust
    else:
        raise pickle.UnpicklingError(f"{kind!r} is not a TVTensor")
    wrapped: torch.Tensor = tensor.as_subclass(kind)
    wrapped.__dict__.update(restored)
    if requires_grad:
        wrapped.requires_grad_(True)
    return wrapped


def _declared(kind: type) -> frozenset[str]:
    """The public attributes a tv_tensors class declares (``format``, ``canvas_size``)."""
    names: set[str] = set()
    for klass in kind.__mro__:
        if klass is torch.Tensor:
            break
        names.update(vars(klass).get("__annotations__", {}))
    return frozenset(name for name in names if not name.startswith("_"))


def _plain(value: object) -> bool:
    if isinstance(value, tuple | list):
        return all(isinstance(item, _PLAIN) for item in value)
    return isinstance(value, _PLAIN)
