"""Memory of process trees: PSS from ``/proc``, and what part of a set of files is in RAM.

* :func:`tree_pss`: the proportional set size (psutil, ``/proc/PID/smaps_rollup``) of
  every process of each root's tree: its private pages plus its share of every page it
  shares (a page mapped by three processes counts a third in each), so summing over
  processes counts every page once.
* :func:`resident_bytes`: how much of some files is in the page cache (``mincore``),
  which PSS does not count once no process maps the pages.
* :func:`watch`: run commands (the ranks), sample the PSS of each one's process tree
  until all print ``ready``, and return every sample and the figures at ``ready``.

Nothing here imports numpy or torch. Linux only (PSS). This is benchmark code, never imported
by rankaug.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import mmap
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

__all__ = ["Watched", "mapped_kib", "resident_bytes", "tree_pss", "watch"]


def tree_pss(roots: Sequence[int], excluding: str | None = None) -> list[list[tuple[int, int]]]:
    """``(pid, PSS KiB)`` of every process of each root's tree (the root first).

    A process that is gone or unreadable is left out. With ``excluding`` (a path
    prefix), each process's PSS leaves out its mappings of the files under it (memory
    counted apart, as :func:`resident_bytes`).

    >>> [pid for pid, _ in tree_pss([os.getpid()])[0]][:1] == [os.getpid()]
    True
    """
    out = []
    for root in roots:
        found = []
        try:
            tree = [psutil.Process(root), *psutil.Process(root).children(recursive=True)]
        except psutil.Error:
            tree = []
        for process in tree:
            with contextlib.suppress(psutil.Error):
                kib = process.memory_full_info().pss // 1024
                if excluding is not None:
                    kib -= mapped_kib(process.pid, excluding)
                found.append((process.pid, kib))
        out.append(found)
    return out


def mapped_kib(pid: int, prefix: str) -> int:
    """The PSS (KiB) of process ``pid``'s mappings of files whose path starts with ``prefix``.

    0 where its ``/proc/PID/smaps`` cannot be read.

    >>> with tempfile.NamedTemporaryFile() as handle:
    ...     _ = handle.write(b"x" * 65536); handle.flush()
    ...     held = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    ...     _ = held[:]  # every page touched: resident, mapped by this process alone
    ...     print(mapped_kib(os.getpid(), handle.name)); held.close()
    64
    """
    total, inside = 0, False
    try:
        with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as smaps:
            for line in smaps:
                if line.startswith("Pss:"):
                    if inside:
                        total += int(line.split()[1])
                elif not line[:1].isupper():  # a mapping's first line: its range, ..., path
                    fields = line.split(maxsplit=5)
                    inside = len(fields) == 6 and fields[5].startswith(prefix)
    except OSError:
        return 0
    return total


def resident_bytes(paths: Iterable[Path]) -> tuple[int, int]:
    """Bytes of ``paths`` in the page cache (``mincore``), and their total size.

    Where ``mincore`` cannot be called, every byte counts as resident (an upper bound).

    >>> with tempfile.NamedTemporaryFile() as handle:
    ...     _ = handle.write(b"x" * 10000); handle.flush()
    ...     resident_bytes([Path(handle.name)])
    (10000, 10000)
    """
    libc = _libc()
    page = mmap.PAGESIZE
    resident = total = 0
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            total += size
            if size:
                resident += _resident(libc, fd, size, page)
        finally:
            os.close(fd)
    return resident, total


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]  # fmt: skip
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
    return libc


def _resident(libc: ctypes.CDLL | None, fd: int, size: int, page: int) -> int:
    """Bytes of one open file in the page cache (all of it where mincore fails)."""
    if libc is None:
        return size
    address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        return size
    try:
        pages = (size + page - 1) // page
        vector = (ctypes.c_ubyte * pages)()
        if libc.mincore(address, size, vector) != 0:
            return size
        return min(size, sum(byte & 1 for byte in vector) * page)
    finally:
        libc.munmap(address, size)


@dataclass
class Watched:
    """What :func:`watch` saw.

    Attributes:
        ready: Per command, ``(pid, PSS KiB)`` of each process of its tree (the command
            first) once every command had printed ``ready``.
        history: Per sample, per command, the summed PSS (KiB) of its tree.
        lines: Every line each command printed (stdout), per command.
        seconds: Wall time until every command was ready.
    """

    ready: list[list[tuple[int, int]]]
    history: list[list[int]] = field(default_factory=list)
    lines: list[list[str]] = field(default_factory=list)
    seconds: float = 0.0

    def ready_kib(self, commands: Iterable[int]) -> int:
        """Summed PSS at ``ready`` of the trees of ``commands`` (indices)."""
        return sum(kib for k in commands for _, kib in self.ready[k])

    def peak_kib(self, commands: Iterable[int]) -> int:
        """The largest summed PSS of the trees of ``commands`` over the samples."""
        chosen = list(commands)
        return max((sum(sample[k] for k in chosen) for sample in self.history), default=0)


def watch(
    commands: Sequence[Sequence[str]],
    *,
    env: Mapping[str, str] | Sequence[Mapping[str, str]],
    cwd: Path,
    timeout: float = 300.0,
    interval: float = 0.2,
    excluding: str | None = None,
) -> Watched:
    """Start ``commands`` together and sample the PSS of all their process trees.

    Each command must print a line ``ready`` (flushed) once it is in the state to
    measure, then wait for its standard input to close. The trees are sampled every
    ``interval`` seconds until all are ready, and once more then (``ready_kib``); then
    their inputs are closed and they are waited for.

    Args:
        commands: The commands (argument lists).
        env: Their environment, one for all or one per command.
        cwd: Their working directory.
        timeout: Seconds before they are killed and :class:`RuntimeError` raised.
        interval: Seconds between samples.
        excluding: Leave the mappings of the files under this path out of the PSS
            (:func:`tree_pss`).

    Returns:
        The figures.

    Raises:
        RuntimeError: A command failed, or did not get ready in time (with its stderr).
    """
    envs = [env] * len(commands) if isinstance(env, Mapping) else list(env)
    errors = [tempfile.TemporaryFile(mode="w+") for _ in commands]  # noqa: SIM115
    processes = [
        subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(e),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=error,
        )
        for command, e, error in zip(commands, envs, errors, strict=True)
    ]
    selector = selectors.DefaultSelector()
    for k, process in enumerate(processes):
        assert process.stdout is not None
        selector.register(process.stdout.fileno(), selectors.EVENT_READ, k)
    lines: list[list[str]] = [[] for _ in processes]
    pending = [b""] * len(processes)  # read from the pipes unbuffered: select sees all
    ready: list[Any] = [False] * len(processes)  # then each tree at ready
    roots = [p.pid for p in processes]
    history: list[list[int]] = []
    t0 = time.perf_counter()
    try:
        while not all(ready):
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"not ready after {timeout:.0f} s")
            for key, _ in selector.select(interval):
                k = key.data
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fd)
                    if not ready[k]:
                        processes[k].wait(10)
                        raise RuntimeError(f"command {k} exited ({processes[k].returncode})")
                    continue
                *complete, pending[k] = (pending[k] + data).split(b"\n")
                for raw in complete:
                    line = raw.decode(errors="replace")
                    lines[k].append(line)
                    ready[k] = ready[k] or line.strip() == "ready"
            history.append([sum(kib for _, kib in tree) for tree in tree_pss(roots, excluding)])
        seconds = time.perf_counter() - t0
        ready = tree_pss(roots, excluding)
        history.append([sum(kib for _, kib in tree) for tree in ready])
    except BaseException as exc:
        for process in processes:
            with contextlib.suppress(OSError):
                process.kill()
        messages = []
        for k, error in enumerate(errors):
            error.seek(0)
            messages.append(f"[{k}] {error.read()[-2000:]}")
        if isinstance(exc, RuntimeError):
            raise RuntimeError(f"{exc}; stderr: {' '.join(messages)}") from exc
        raise
    finally:
        for process in processes:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
        for process in processes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
            if process.stdout is not None:
                process.stdout.close()
        selector.close()
        for error in errors:
            error.close()
    return Watched(ready, history, lines, seconds)
