"""One cached sample as one file: a small header, a pickle, then the arrays' bytes.

Layout (little-endian)::

    magic "RKCACHE" 0x01 | file size u64 | pickle size u64 | buffer count u32 | 4 zero bytes
    buffer table: (offset u64, size u64) per buffer
    the pickle (protocol 5)
    each buffer, at an offset that is a multiple of 64

The pickle holds the sample's structure and every small value; numpy arrays of
:data:`INLINE_BYTES` or more (and CPU tensors, through a numpy view) travel
*out of band*: their bytes sit after the pickle, and reading hands the pickle
memoryviews of the memory-mapped file, so an image costs no copy and no parse. The
mapping is private copy-on-write (``ACCESS_COPY``): writing into a returned array
changes only the reader's own pages, never the file.

Each live mapping holds one file descriptor (Python's ``mmap`` keeps its own). To
keep a program that holds thousands of samples from running out of descriptors, at
most :func:`map_limit` mappings are live at once per process; past that, files are
read into memory instead (the same values, one copy more).
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import resource
import struct
import threading
import weakref
from typing import Any, Final

import numpy as np
import torch

__all__ = ["INLINE_BYTES", "Corrupt", "encode", "map_limit", "read"]

MAGIC: Final = b"RKCACHE\x01"
#: Arrays smaller than this are stored inside the pickle.
INLINE_BYTES: Final = 4096
_HEAD: Final = struct.Struct("<8sQQI4x")
_ENTRY: Final = struct.Struct("<QQ")
_ALIGN: Final = 64
_SMALL_FILE: Final = 1 << 16  # files below this are read, not mapped

_live_lock = threading.Lock()
_live = [0]
_limit: list[int] = []


class Corrupt(Exception):
    """A cache file that cannot be read back (torn by a crash, or from other code)."""


class _Pickler(pickle.Pickler):
    """Protocol 5 with large arrays and CPU tensors out of band."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is np.ndarray:
            if (
                obj.nbytes >= INLINE_BYTES
                and not obj.dtype.hasobject
                and not (obj.flags.c_contiguous or obj.flags.f_contiguous)
            ):
                return np.ascontiguousarray(obj).__reduce_ex__(5)
            return NotImplemented
        if type(obj) is torch.Tensor and _plain_tensor(obj):
            try:
                array = obj.numpy()
            except (RuntimeError, TypeError):  # conjugate or negative views, odd dtypes
                return NotImplemented
            return torch.from_numpy, (array,)
        return NotImplemented


def _plain_tensor(tensor: torch.Tensor) -> bool:
    return (
        tensor.device.type == "cpu" and tensor.layout == torch.strided and not tensor.requires_grad
    )


def encode(sample: object) -> tuple[list[bytes | memoryview], int]:
    """The chunks of one sample's file, in order, and the file's size.

    Raises:
        pickle.PicklingError, TypeError, AttributeError: If the sample cannot be pickled.
    """
    buffers: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        raw = buffer.raw()
        if raw.nbytes < INLINE_BYTES:
            return True  # in band
        buffers.append(raw)
        return False

    stream = io.BytesIO()
    _Pickler(stream, protocol=5, buffer_callback=out_of_band).dump(sample)
    payload = stream.getbuffer()
    position = _HEAD.size + _ENTRY.size * len(buffers) + payload.nbytes
    body: list[bytes | memoryview] = [payload]
    table = []
    for raw in buffers:
        pad = -position % _ALIGN
        if pad:
            body.append(bytes(pad))
            position += pad
        table.append(_ENTRY.pack(position, raw.nbytes))
        body.append(raw)
        position += raw.nbytes
    head = _HEAD.pack(MAGIC, position, payload.nbytes, len(buffers)) + b"".join(table)
    return [head, *body], position


def read(path: str) -> Any:
    """The sample stored at ``path``.

    Raises:
        FileNotFoundError: If there is no file (the sample is not cached).
        Corrupt: If the file is not a complete cache file.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        if size < _HEAD.size:
            raise Corrupt(f"{path}: {size} bytes, shorter than a header")
        if size < _SMALL_FILE or not _take_map():
            data = memoryview(_read_all(fd, size, path))
        else:
            try:
                mapped = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
            except BaseException:
                _release_map()
                raise
            weakref.finalize(mapped, _release_map).atexit = False
            data = memoryview(mapped)
    finally:
        os.close(fd)
    return _decode(data, size, path)


def _decode(data: memoryview, size: int, path: str) -> Any:
    magic, total, payload_size, count = _HEAD.unpack_from(data, 0)
    table_end = _HEAD.size + _ENTRY.size * count
    if magic != MAGIC or total != size or table_end + payload_size > size:
        raise Corrupt(f"{path}: not a complete rankaug cache file")
    buffers = []
    for number in range(count):
        offset, length = _ENTRY.unpack_from(data, _HEAD.size + _ENTRY.size * number)
        if offset < table_end + payload_size or offset + length > size:
            raise Corrupt(f"{path}: buffer {number} lies outside the file")
        buffers.append(data[offset : offset + length])
    try:
        return pickle.loads(data[table_end : table_end + payload_size], buffers=buffers)
    except Exception as error:  # a torn pickle, or a class that no longer exists
        raise Corrupt(f"{path}: cannot unpickle ({type(error).__name__}: {error})") from None


def _read_all(fd: int, size: int, path: str) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        count = os.preadv(fd, [view[done:]], done)
        if count == 0:
            raise Corrupt(f"{path}: shorter than its size while being read")
        done += count
    return buffer


def map_limit() -> int:
    """How many cache files one process keeps mapped at once.

    An eighth of its file descriptor limit, at most 1,024.

    >>> 0 <= map_limit() <= 1024
    True
    """
    if not _limit:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        _limit.append(1024 if soft == resource.RLIM_INFINITY else max(0, min(1024, soft // 8)))
    return _limit[0]


def _take_map() -> bool:
    limit = map_limit()
    with _live_lock:
        if _live[0] >= limit:
            return False
        _live[0] += 1
        return True


def _release_map() -> None:
    with _live_lock:
        _live[0] -= 1
