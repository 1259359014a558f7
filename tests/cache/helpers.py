"""Helpers for the cache tests: bit-for-bit comparison and small datasets."""

from __future__ import annotations

import math
import os
import struct
import zlib
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

Point = namedtuple("Point", ["x", "y"])


class Shapes:
    """A namespace: its nested class pickles as ``("tests.cache.helpers", "Shapes.Box")``."""

    @dataclass(frozen=True)
    class Box:
        side: int


def assert_identical(got: Any, expected: Any, where: str = "sample") -> None:
    """``got`` is ``expected`` bit for bit: types, keys and their order, dtypes, shapes."""
    assert type(got) is type(expected), f"{where}: {type(got)} is not {type(expected)}"
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
        if expected.dtype.hasobject:
            for number, (a, b) in enumerate(zip(got.ravel(), expected.ravel(), strict=True)):
                assert_identical(a, b, f"{where}.flat[{number}]")
        else:
            assert got.tobytes() == expected.tobytes(), f"{where}: values differ"
    elif isinstance(expected, torch.Tensor):
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape"
        assert _tensor_bytes(got) == _tensor_bytes(expected), f"{where}: values differ"
    elif isinstance(expected, dict):
        assert list(got) == list(expected), f"{where}: keys {list(got)} != {list(expected)}"
        for key in expected:
            assert_identical(got[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, list | tuple):
        assert len(got) == len(expected), f"{where}: length"
        for number, (a, b) in enumerate(zip(got, expected, strict=True)):
            assert_identical(a, b, f"{where}[{number}]")
    elif isinstance(expected, float | np.floating) and math.isnan(expected):
        assert np.array(got).tobytes() == np.array(expected).tobytes(), where
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


class ListDataset(Dataset[Any]):
    """The given samples; ``repr`` names a version so the cache can key it."""

    def __init__(self, samples: list[Any], version: str = "v1") -> None:
        self.samples = samples
        self.version = version

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> Any:
        return self.samples[index]

    def __repr__(self) -> str:
        return f"ListDataset(version={self.version!r}, length={len(self.samples)})"


class Failing(Dataset[Any]):
    """Raises on one index; counts the loads it served."""

    def __init__(self, length: int, bad: int, error: Exception) -> None:
        self.length, self.bad, self.error = length, bad, error

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Any:
        if index == self.bad:
            raise self.error
        return {"image": np.full((4, 4), index, np.uint8)}

    def __repr__(self) -> str:
        return f"Failing({self.length}, {self.bad})"


class Anonymous(Dataset[Any]):
    """No repr, no source files: the cache cannot see it change."""

    def __len__(self) -> int:
        return 3

    def __getitem__(self, index: int) -> Any:
        return {"value": index}


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    tensor = tensor.detach().contiguous()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.view(torch.int16)
    return bytes(tensor.numpy().tobytes())


def forge(
    payload: bytes, buffers: list[bytes] | None = None, index: int = 0, key: bytes = bytes(16)
) -> bytes:
    """A cache file around any pickle, checksum and all: what an attacker can write."""
    buffers = buffers or []
    head = struct.Struct("<8sQQIQ16sI")
    table_end = head.size + 16 * len(buffers)
    position = table_end + len(payload)
    body, table = [payload], b""
    for raw in buffers:
        pad = -position % 64
        body.append(bytes(pad))
        position += pad
        table += struct.pack("<QQ", position, len(raw))
        body.append(raw)
        position += len(raw)
    prefix = head.pack(b"RKCACHE\x03", position, len(payload), len(buffers), index, key, 0)[:-4]
    crc = zlib.crc32(b"".join(body), zlib.crc32(table, zlib.crc32(prefix)))
    return prefix + struct.pack("<I", crc) + table + b"".join(body)


class Unhashable:
    """A transform ``datasets`` cannot hash (it holds what does not pickle, say)."""

    def __reduce__(self) -> Any:
        raise TypeError("cannot pickle Unhashable")

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        return batch


class Planted:
    """Unpickling it would create the file at ``path``: a stand-in for planted code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.path}",))


@dataclass
class Frames(Dataset[Any]):
    """A dataclass dataset: its automatic repr prints a large array's corners alone."""

    images: np.ndarray
    names: list[tuple[str, int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> Any:
        return {"image": self.images[index]}
