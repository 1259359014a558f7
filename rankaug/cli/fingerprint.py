"""A fingerprint of a sample: one hash over every array, tensor, image and number in it.

The walk goes through dicts (keys sorted by ``repr``), lists, tuples, dataclasses and
objects with a ``__dict__``; every value is encoded with a type tag, so ``1`` and
``1.0``, or an array and the same bytes with another shape or dtype, differ. Values
of other types (a file handle, an object without fields) enter only by their type
name and are listed in :attr:`Fingerprint.skipped`, never by a ``repr`` that could
hold a memory address.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["Fingerprint", "fingerprint"]

_MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """The hash of one sample and the type names that entered by name only.

    Attributes:
        digest: 16 hexadecimal digits.
        skipped: Sorted type names of values hashed by their type alone.
    """

    digest: str
    skipped: tuple[str, ...] = ()


class _Hasher:
    def __init__(self) -> None:
        self.hash = hashlib.blake2b(digest_size=8)
        self.skipped: set[str] = set()

    def tag(self, name: str, payload: bytes = b"") -> None:
        self.hash.update(name.encode() + b"\0" + struct.pack("<Q", len(payload)) + payload)

    def array(self, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        if array.dtype.hasobject:
            self.tag("object-array", str(array.shape).encode())
            for item in array.flat:
                self.walk(item, 1)
            return
        self.tag("array", f"{array.dtype.str}{array.shape}".encode())
        self.hash.update(array.tobytes())

    def walk(self, value: Any, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.tag("too-deep")
            return
        if value is None or isinstance(value, bool | str | bytes):
            self.tag(type(value).__name__, repr(value).encode())
        elif isinstance(value, int):
            self.tag("int", str(value).encode())
        elif isinstance(value, float):
            self.tag("float", b"nan" if math.isnan(value) else struct.pack("<d", value))
        elif isinstance(value, complex):
            self.tag("complex", struct.pack("<dd", value.real, value.imag))
        elif isinstance(value, np.ndarray | np.generic):
            self.array(np.asarray(value))
        elif isinstance(value, torch.Tensor):
            tensor = value.detach().cpu()
            if tensor.dtype == torch.bfloat16:
                tensor = tensor.float()
            self.tag("tensor")
            self.array(tensor.numpy())
        elif type(value).__module__.startswith("PIL."):
            self.tag("pil", f"{value.mode}{value.size}".encode())
            self.hash.update(value.tobytes())
        elif isinstance(value, Mapping):
            self.tag("mapping", str(len(value)).encode())
            for key in sorted(value, key=repr):
                self.walk(key, depth + 1)
                self.walk(value[key], depth + 1)
        elif isinstance(value, list | tuple | set | frozenset):
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            self.tag(type(value).__name__, str(len(items)).encode())
            for item in items:
                self.walk(item, depth + 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            self.tag("dataclass", type(value).__qualname__.encode())
            for field in dataclasses.fields(value):
                self.walk(field.name, depth + 1)
                self.walk(getattr(value, field.name), depth + 1)
        elif hasattr(value, "__dict__") and not callable(value):
            self.tag("object", type(value).__qualname__.encode())
            self.walk(vars(value), depth + 1)
        else:
            name = f"{type(value).__module__}.{type(value).__qualname__}"
            self.skipped.add(name)
            self.tag("opaque", name.encode())


def fingerprint(sample: Any) -> Fingerprint:
    """Hash everything in ``sample`` (see the module docstring).

    Args:
        sample: Anything a dataset returns.

    Returns:
        The fingerprint.

    >>> a = {"image": np.zeros((2, 2), np.uint8), "labels": [1, 2]}
    >>> b = {"labels": [1, 2], "image": np.zeros((2, 2), np.uint8)}
    >>> fingerprint(a) == fingerprint(b)
    True
    >>> fingerprint(np.zeros(4, np.uint8)) == fingerprint(np.zeros((2, 2), np.uint8))
    False
    >>> fingerprint((torch.ones(2), 1)) == fingerprint((torch.ones(2), 1.0))
    False
    >>> fingerprint(len).skipped
    ('builtins.builtin_function_or_method',)
    """
    hasher = _Hasher()
    hasher.walk(sample, 0)
    return Fingerprint(hasher.hash.hexdigest(), tuple(sorted(hasher.skipped)))
