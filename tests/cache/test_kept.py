"""Tests for rankaug.cache._kept: cache files kept mapped, read-only, between reads."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rankaug.cache import _kept
from rankaug.cache._kept import KEPT, Kept, keep_limit, map_read_only


def mappings_of(path: Path) -> set[tuple[int, int]]:
    """The address ranges at which this process maps the file ``path`` now.

    By the file's name in ``/proc/self/maps``: an address range alone may be the
    file's now and, once it is unmapped, an allocation's the next moment.
    """
    name = str(path.resolve())
    ranges = set()
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].rstrip("\n") == name:
                low, high = fields[0].split("-")
                ranges.add((int(low, 16), int(high, 16)))
    return ranges


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def wait_for(pid: int, seconds: float = 20.0) -> int:
    """The wait status of child ``pid``, killed if it has not ended in ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def a_file(tmp_path: Path, size: int = 1 << 20) -> Path:
    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * (size // 256))
    return path


def mapped(path: Path) -> memoryview:
    """``path`` mapped read-only, its descriptor closed."""
    fd = os.open(path, os.O_RDONLY)
    try:
        view = map_read_only(fd, path.stat().st_size)
    finally:
        os.close(fd)
    assert view is not None
    return view


class TestMapReadOnly:
    def test_the_file_read_only_outliving_its_descriptor(self, tmp_path: Path) -> None:
        path = a_file(tmp_path)
        before = open_descriptors()
        view = mapped(path)
        assert open_descriptors() == before  # the mapping holds no descriptor
        assert view.readonly
        assert bytes(view) == path.read_bytes()
        array = np.frombuffer(view[256:512], np.uint8)
        with pytest.raises(ValueError, match="WRITEABLE"):
            array.flags.writeable = True  # numpy cannot be talked into writing
        assert array.tolist() == list(range(256))

    def test_unmapped_when_the_last_view_is_gone(self, tmp_path: Path) -> None:
        path = a_file(tmp_path)
        assert not mappings_of(path)
        view = mapped(path)
        array = np.frombuffer(view[4096:8192], np.uint8)  # a view of a view
        added = mappings_of(path)
        assert added  # the file's mapping
        del view
        gc.collect()
        assert mappings_of(path) == added  # kept by the array over it
        assert array.tolist()[:3] == [0, 1, 2]
        del array
        gc.collect()
        assert not mappings_of(path)  # unmapped with the last view

    def test_none_without_the_c_library(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(_kept, "_LIBC", None)
        path = a_file(tmp_path)
        fd = os.open(path, os.O_RDONLY)
        try:
            assert map_read_only(fd, path.stat().st_size) is None
        finally:
            os.close(fd)

    def test_a_failed_mapping_is_an_os_error(self, tmp_path: Path) -> None:
        path = a_file(tmp_path)
        fd = os.open(path, os.O_WRONLY)  # mmap needs a descriptor open for reading
        try:
            with pytest.raises(OSError, match="mmap of a cache file failed"):
                map_read_only(fd, path.stat().st_size)
        finally:
            os.close(fd)


class TestKept:
    def test_the_least_recently_read_is_let_go(self) -> None:
        kept = Kept(limit=2)
        views = {name: memoryview(name.encode()) for name in "abc"}
        kept.keep("a", views["a"], (0, 1), 11)
        kept.keep("b", views["b"], (0, 2), 12)
        assert kept.get("a") == (views["a"], (0, 1), 11)  # read: now the most recent
        kept.keep("c", views["c"], (0, 3), 13)
        assert kept.get("b") is None
        assert kept.get("a") is not None
        assert kept.get("c") is not None
        assert len(kept) == 2

    def test_keeping_again_replaces(self) -> None:
        kept = Kept(limit=4)
        kept.keep("a", memoryview(b"old"), (0, 1), 1)
        kept.keep("a", memoryview(b"new"), (0, 2), 2)
        held = kept.get("a")
        assert held is not None
        assert bytes(held[0]) == b"new"
        assert held[1] == (0, 2)
        assert len(kept) == 1

    def test_forget_and_let_go(self) -> None:
        kept = Kept(limit=4)
        for number, name in enumerate("abc"):
            kept.keep(name, memoryview(name.encode()), (0, number), number)
        kept.forget("b")
        kept.forget("nothing")  # not kept: nothing to do
        assert kept.get("b") is None
        assert kept.let_go()  # "a", the least recently read
        assert kept.get("a") is None
        assert kept.get("c") is not None
        assert kept.let_go()
        assert not kept.let_go()  # none left
        assert len(kept) == 0

    def test_the_default_limit(self) -> None:
        assert Kept()._limit is None
        limit = keep_limit()
        with open("/proc/sys/vm/max_map_count", encoding="ascii") as file:
            assert limit == max(1, min(16384, int(file.read()) // 4))

    def test_a_forked_child_reads_while_a_parent_thread_held_the_lock(self) -> None:
        KEPT.keep("/rankaug-test/kept", memoryview(b"x"), (0, 0), 0)
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with KEPT._lock:
                held.set()
                release.wait(10)

        thread = threading.Thread(target=hold)
        thread.start()
        held.wait(10)
        try:
            pid = os.fork()
            if pid == 0:  # the child: a fresh lock, the parent's mappings
                os._exit(0 if KEPT.get("/rankaug-test/kept") is not None else 1)
            status = wait_for(pid)
        finally:
            release.set()
            thread.join()
        assert os.waitstatus_to_exitcode(status) == 0
