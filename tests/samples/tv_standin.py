"""A stand-in for ``torchvision.tv_tensors`` in the main venv, whose CPU torch has no
torchvision beside it: the same API as torchvision 0.29's (a ``TVTensor`` base class, a
``wrap`` classmethod per class and the module function ``wrap(wrappee, like=...,
**kwargs)``; no ``wrap_like``), registered in ``sys.modules`` under its name for one test.
``tests/samples/test_tv_tensors.py`` runs the same behaviour against the real torchvision
(in ``.venv-tv``)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
import torch


class TVTensor(torch.Tensor):
    """Like ``tv_tensors.TVTensor``: metadata carried over by ``wrap``."""

    @classmethod
    def wrap(cls, tensor: torch.Tensor, like: Any, **kwargs: Any) -> Any:
        out = tensor.as_subclass(cls)
        out.__dict__.update({**like.__dict__, **kwargs})
        return out


class Image(TVTensor):
    """Like ``tv_tensors.Image``."""


class BoundingBoxes(TVTensor):
    """Like ``tv_tensors.BoundingBoxes``: a ``format`` and a ``canvas_size``."""


class KeyPoints(TVTensor):
    """Like ``tv_tensors.KeyPoints``: a ``canvas_size``."""


class Mask(TVTensor):
    """Like ``tv_tensors.Mask``."""


def wrap(wrappee: torch.Tensor, *, like: Any, **kwargs: Any) -> Any:
    """Like ``tv_tensors.wrap``."""
    return type(like).wrap(wrappee, like, **kwargs)


def make(kind: type[TVTensor], data: Any, **metadata: Any) -> Any:
    """A ``kind`` holding ``data``, with ``metadata`` as attributes."""
    out = torch.as_tensor(data).as_subclass(kind)
    out.__dict__.update(metadata)
    return out


def install(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """Register the stand-in as ``torchvision.tv_tensors`` (undone after the test)."""
    module = types.ModuleType("torchvision.tv_tensors")
    for name in ("TVTensor", "Image", "BoundingBoxes", "KeyPoints", "Mask", "wrap"):
        setattr(module, name, globals()[name])
    monkeypatch.setitem(sys.modules, "torchvision.tv_tensors", module)
    return module
