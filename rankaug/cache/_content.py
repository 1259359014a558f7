"""The content hash of an in-memory dataset: a list, tuple or dict of samples.

A container's ``repr`` is no fingerprint (numpy abbreviates arrays, so a changed
pixel keeps the same text, and a long list takes seconds to print). Instead every
sample is hashed by what it holds, with BLAKE2b: arrays and tensors by dtype, shape
and bytes (a tensor subclass, such as torchvision's ``BoundingBoxes``, also by its
attributes: ``format``, ``canvas_size``); numbers, strings, bytes and ``None`` by type
and value; lists, tuples (named ones too) and dicts by type, length and items, in order.
A sample holding anything else cannot be hashed: the caller asks for ``fingerprint=``.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import numpy as np
import torch

__all__ = ["Opaque", "content_hash"]

_SCALARS: Final = (type(None), bool, int, float, complex)


class Opaque(TypeError):
    """A value the content hash cannot see into (its type is in ``args[0]``)."""


def content_hash(samples: list[Any] | tuple[Any, ...] | dict[Any, Any]) -> str:
    """The BLAKE2b hex digest of every sample's content.

    Raises:
        Opaque: If a sample holds a value of another type.

    >>> import numpy as np
    >>> one, two, three = ([np.zeros((300, 300))] for _ in range(3))
    >>> two[0][150, 150] = 1  # repr(two) == repr(one), the content differs
    >>> content_hash(one) != content_hash(two), content_hash(one) == content_hash(three)
    (True, True)
    """
    digest = hashlib.blake2b(digest_size=20)
    _feed(digest, samples)
    return digest.hexdigest()


def _feed(digest: Any, value: object) -> None:
    kind = type(value)
    tag = f"{kind.__module__}.{kind.__qualname__}"
    if isinstance(value, _SCALARS):
        digest.update(f"{tag}:{value!r};".encode())
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        digest.update(f"{tag}:{len(data)}:".encode())
        digest.update(data)
    elif isinstance(value, bytes | bytearray):
        digest.update(f"{tag}:{len(value)}:".encode())
        digest.update(value)
    elif isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        digest.update(f"{tag}:{array.dtype!r}:{array.shape}:".encode())
        if array.dtype.hasobject:
            for item in array.ravel():
                _feed(digest, item)
        else:
            digest.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data)
    elif isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().resolve_conj().resolve_neg().contiguous()
        digest.update(f"{tag}:{tensor.dtype}:{tuple(tensor.shape)}:{value.requires_grad}:".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().data)
        if kind is not torch.Tensor:  # a tv_tensor's metadata (format, canvas_size)
            digest.update(repr(sorted(vars(value).items())).encode())
    elif isinstance(value, list | tuple):
        digest.update(f"{tag}:{len(value)}[".encode())
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    elif isinstance(value, dict):
        digest.update(f"{tag}:{len(value)}{{".encode())
        for key, item in value.items():
            _feed(digest, key)
            _feed(digest, item)
        digest.update(b"}")
    else:
        raise Opaque(kind.__qualname__)
