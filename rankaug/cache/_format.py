"""One cached sample as one file: a small header, a pickle, then the arrays' bytes.

Layout (little-endian)::

    magic "RKCACHE" 0x03 | file size u64 | pickle size u64 | buffer count u32 |
    index u64 | cache key 16 bytes | CRC-32 u32
    buffer table: (offset u64, size u64) per buffer
    the pickle (protocol 5)
    each buffer, at an offset that is a multiple of 64

The pickle holds the sample's structure and every small value; numpy arrays of
:data:`INLINE_BYTES` or more (and CPU tensors, through a numpy view; torchvision's
tv_tensors as their tensor, :mod:`rankaug.cache._tv_tensors`) travel *out of band*:
their bytes sit after the pickle, and reading hands the pickle memoryviews of the
memory-mapped file, so an image costs no copy and no parse. The mapping is private
copy-on-write (``ACCESS_COPY``): writing into a returned array changes only the
reader's own pages, never the file.

Each live mapping holds one file descriptor (Python's ``mmap`` keeps its own). To
keep a program that holds thousands of samples from running out of descriptors, at
most :func:`map_limit` mappings are live at once per process; past that, files are
read into memory instead (the same values, one copy more). With ``keep`` a file is
mapped read-only, without a descriptor, and stays mapped for later reads
(:mod:`rankaug.cache._kept`).

Identity: each file records the dataset index it holds and its cache's key, checked
on every read (:mod:`rankaug.cache._identity`): a mismatch is :class:`Corrupt`.

Integrity: the CRC-32 covers every byte of the file but its own four; it is checked
the first time a file (identified by device, inode, size, mtime and ctime) is read in
this boot of the machine, by any process (:mod:`rankaug.cache._seen`), not on every
read. Safety: the pickle is read by
:mod:`rankaug.cache._unpickle`, which builds only rankaug's own types, and a file that
another user owns or others may write is refused (:mod:`rankaug.cache._trust`).
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
import zlib
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import torch

from rankaug.cache._identity import OLDER, key_bytes, mismatch, older
from rankaug.cache._kept import KEPT, map_read_only
from rankaug.cache._refusals import refuse_global, unstorable
from rankaug.cache._seen import Checked
from rankaug.cache._trust import problem, refuse
from rankaug.cache._tv_tensors import tv_tensor_reduction
from rankaug.cache._unpickle import NOTHING, Refused, Trusted, load, tensor_reduction

__all__ = ["INLINE_BYTES", "Corrupt", "encode", "map_limit", "read", "recorded_size", "seal"]

MAGIC: Final = b"RKCACHE\x03"
#: Arrays smaller than this are stored inside the pickle.
INLINE_BYTES: Final = 4096
_HEAD: Final = struct.Struct("<8sQQIQ16sI")
_CRC_AT: Final = _HEAD.size - 4
_OTHERS_WRITE: Final = 0o022
_ENTRY: Final = struct.Struct("<QQ")
_ALIGN: Final = 64
_SMALL_FILE: Final = 1 << 16  # files below this are read, not mapped

_live_lock = threading.Lock()
_live = [0]
_limit: list[int] = []
_verified: set[int] = set()  # files this process has checked, by hash of their identity


class Corrupt(Exception):
    """A cache file that cannot be read back (torn, damaged, or from other code).

    Attributes:
        identity: The file's ``(st_dev, st_ino)``, to replace exactly this file.
    """

    def __init__(self, message: str, identity: tuple[int, int] = (-1, -1)) -> None:
        super().__init__(message)
        self.identity = identity


class _Pickler(pickle.Pickler):
    """Protocol 5 with large arrays and CPU tensors (tv_tensors' too) out of band."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is np.ndarray:
            if (
                obj.nbytes >= INLINE_BYTES
                and not obj.dtype.hasobject
                and not (obj.flags.c_contiguous or obj.flags.f_contiguous)
            ):
                return np.ascontiguousarray(obj).__reduce_ex__(5)
            return NotImplemented
        if type(obj) is torch.Tensor:
            reduced = tensor_reduction(obj)
        elif isinstance(obj, torch.Tensor):
            reduced = tv_tensor_reduction(obj)
        else:
            return NotImplemented
        if reduced is NotImplemented:  # torch's own pickling: private functions, refused
            raise unstorable(obj)
        return reduced


def encode(
    sample: object,
    extra: Trusted = NOTHING,
    *,
    sealed: bool = True,
    index: int = 0,
    key: str | None = None,
) -> tuple[list[bytes | memoryview], int]:
    """The chunks of one sample's file, in order, and the file's size.

    Args:
        sample: What to store.
        extra: Globals the reader admits beyond rankaug's (``trusted_types``).
        sealed: Compute the checksum now; ``False`` leaves it to :func:`seal`.
        index: The dataset index the file holds.
        key: The cache's key (32 hex digits), or ``None``.

    Raises:
        pickle.PicklingError, TypeError, AttributeError: If the sample cannot be pickled.
        rankaug.cache._refusals.Unstorable: If it holds a tensor the cache does not store
            (on a GPU, sparse, a subclass other than tv_tensors...).
        rankaug.cache._unpickle.Refused: If the reader would refuse it (it holds
            a type that is neither rankaug's nor in ``extra``).
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
    load(payload, buffers, extra)  # what the reader could not build is refused now
    head = bytearray(
        _HEAD.pack(MAGIC, position, payload.nbytes, len(buffers), index, key_bytes(key), 0)
    )
    head += b"".join(table)
    chunks: list[bytes | memoryview] = [memoryview(head), *body]
    if sealed:
        seal(chunks)
    return chunks, position


def seal(chunks: Sequence[bytes | memoryview]) -> None:
    """Write the checksum into the header, ``chunks[0]`` (as :func:`encode` made it)."""
    head = chunks[0]
    if not isinstance(head, memoryview) or head.readonly:
        raise TypeError("seal needs the chunks encode(sealed=False) made")
    crc = zlib.crc32(head[:_CRC_AT])
    crc = zlib.crc32(head[_HEAD.size :], crc)
    for chunk in chunks[1:]:
        crc = zlib.crc32(chunk, crc)
    struct.pack_into("<I", head, _CRC_AT, crc)


def recorded_size(path: str) -> int | None:
    """The size a cache file's header records (what was counted when it was stored).

    ``None`` when the header is not whole (a file cut short, emptied or overwritten): its
    size on disk is not what was counted either.
    """
    try:
        with open(path, "rb") as file:
            head = file.read(_HEAD.size)
    except OSError:
        return None
    if len(head) < _HEAD.size or head[:8] != MAGIC:
        return None
    recorded: int = _HEAD.unpack(head)[1]
    return recorded


def _checksum(data: memoryview) -> int:
    return zlib.crc32(data[_HEAD.size :], zlib.crc32(data[:_CRC_AT]))


def read(
    path: str,
    extra: Trusted = NOTHING,
    *,
    owner_check: bool = True,
    verify: bool = False,
    table: Checked | None = None,
    index: int = 0,
    key: str | None = None,
    keep: bool = False,
) -> Any:
    """The sample stored at ``path``.

    Args:
        path: The file.
        extra: Globals admitted beyond rankaug's (``trusted_types``).
        owner_check: Refuse a file that is not this user's alone.
        verify: Check the checksum even if this process (or ``table``) checked this
            file before.
        table: The cache's table of files found whole in this boot
            (:mod:`rankaug.cache._seen`): consulted before checking, written after.
        index: The dataset index the file must hold (and its index in ``table``).
        key: The key of the cache the file must belong to (32 hex digits), or
            ``None`` to accept any.
        keep: Map the file read-only and keep it mapped for later reads
            (:mod:`rankaug.cache._kept`): its arrays come back read-only.

    Raises:
        FileNotFoundError: If there is no file (the sample is not cached).
        Corrupt: If the file is not a whole, undamaged cache file, or holds another
            index or another cache's sample than ``index`` and ``key`` (or is of the
            older format).
        rankaug.cache._trust.Untrusted: If another user could have written it, or its
            pickle names a global that the reader does not admit.
    """
    if keep and not verify:
        held = KEPT.get(path)
        if held is not None:
            try:
                same = _stamp(os.stat(path)) == held[2]
            except FileNotFoundError:
                KEPT.forget(path)  # deleted: its pages are let go with the last array
                raise
            if same:  # the same file, unchanged: whole and checked when it was kept
                where = (index, key)
                return _decode(held[0], len(held[0]), path, extra, False, held[1], where)
            KEPT.forget(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        status = os.fstat(fd)
        owner = status.st_uid
        if owner_check and (
            (owner and owner != os.geteuid()) or status.st_mode & _OTHERS_WRITE
        ):  # the quick test of problem(status)
            raise refuse(path, "entry", problem(status) or "not this user's alone")
        size = status.st_size
        identity = (status.st_dev, status.st_ino)
        seen = _stamp(status)
        check: int | None = None
        token = None
        if verify:
            check = seen
        elif seen not in _verified:
            token = None if table is None else table.token(status)
            if token is not None and table is not None and table.holds(index, token):
                _verified.add(seen)  # another process found it whole in this boot
            else:
                check = seen
        if size < _HEAD.size:
            raise Corrupt(f"{path}: {size} bytes, shorter than a header", identity)
        kept = _map_kept(fd, size) if keep and size >= _SMALL_FILE else None
        if kept is not None:
            data = kept
        elif size < _SMALL_FILE or keep or not _take_map():
            data = memoryview(_read_all(fd, size, path))
            if keep:
                data = data.toreadonly()
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
    sample = _decode(data, size, path, extra, check is not None, identity, (index, key))
    if kept is not None:
        KEPT.keep(path, kept, identity, seen)
    if check is not None:
        _verified.add(check)
        if table is not None:
            table.record(index, token if token is not None else table.token(status))
    return sample


def _map_kept(fd: int, size: int) -> memoryview | None:
    """A read-only mapping to keep, or ``None`` (read the file instead) if none is made.

    A mapping the kernel refuses (``ENOMEM`` past ``vm.max_map_count``, say) lets the
    least recently read kept file go, so that later reads can map theirs.
    """
    try:
        return map_read_only(fd, size)
    except OSError:
        KEPT.let_go()
        return None


def _stamp(status: os.stat_result) -> int:
    """What tells a file changed: a hash of its identity, size and times."""
    return hash((status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
                 status.st_ctime_ns))  # fmt: skip


def _decode(
    data: memoryview,
    size: int,
    path: str,
    extra: Trusted,
    check: bool,
    identity: tuple[int, int],
    expected: tuple[int, str | None],
) -> Any:
    if bytes(data[:8]) == OLDER:
        raise Corrupt(older(path), identity)
    magic, total, payload_size, count, held, key, crc = _HEAD.unpack_from(data, 0)
    table_end = _HEAD.size + _ENTRY.size * count
    if magic != MAGIC or total != size or table_end + payload_size > size:
        raise Corrupt(f"{path}: not a complete rankaug cache file", identity)
    if check and _checksum(data) != crc:
        raise Corrupt(f"{path}: damaged (its checksum does not match its bytes)", identity)
    buffers = []
    for number in range(count):
        offset, length = _ENTRY.unpack_from(data, _HEAD.size + _ENTRY.size * number)
        if offset < table_end + payload_size or offset + length > size:
            raise Corrupt(f"{path}: buffer {number} lies outside the file", identity)
        buffers.append(data[offset : offset + length])
    try:
        sample = load(data[table_end : table_end + payload_size], buffers, extra)
    except Refused as error:
        raise refuse_global(path, error) from None
    except Exception as error:  # a torn pickle, or a class that no longer exists
        raise Corrupt(
            f"{path}: cannot unpickle ({type(error).__name__}: {error})", identity
        ) from None
    wrong = mismatch(path, (held, key), expected)  # after the pickle: a planted global
    if wrong is not None:  # is refused as such
        raise Corrupt(wrong, identity)
    return sample


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
