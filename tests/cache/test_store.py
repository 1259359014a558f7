"""Tests for rankaug.cache._store: the directory, atomic publishing, the budget."""

from __future__ import annotations

import errno
import fcntl
import json
import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankaug.cache._store as store_module
from rankaug.cache._format import encode, read
from rankaug.cache._store import prepare, sample_path, store, stored_bytes
from tests.cache.helpers import assert_identical

FORK = multiprocessing.get_context("fork")


def chunks_of(value: object) -> tuple[list[bytes | memoryview], int]:
    return encode(value)


def _store_one(directory: str, value: object, go: object) -> None:
    go.wait(timeout=60)  # type: ignore[attr-defined]
    chunks, size = encode(value)
    store(directory, 0, chunks, size, max_bytes=None, fsync=False)


def _die_publishing(directory: str, value: object) -> None:
    """Store samples 0 and 1, then be SIGKILLed as sample 2's file is renamed into place."""
    chunks, size = encode(value)
    for index in range(2):
        store(directory, index, chunks, size, max_bytes=None, fsync=False)
    rename = os.replace

    def killed(source: str, target: str) -> None:
        if target.endswith("/2.sample"):
            os.kill(os.getpid(), signal.SIGKILL)
        rename(source, target)

    os.replace = killed  # type: ignore[assignment]  # in this child only
    store(directory, 2, chunks, size, max_bytes=None, fsync=False)


def published(directory: str) -> int:
    """The bytes of the sample files at their final names."""
    files = Path(directory).rglob("*.sample")
    return sum(path.stat().st_size for path in files if not path.name.startswith(".tmp-"))


class TestStore:
    def test_layout(self, tmp_path: Path) -> None:
        directory, mode, _ = prepare(
            tmp_path, "k" * 32, {"format": "f", "fingerprint": "text"}, trust=False
        )
        assert mode == "write"
        assert directory == tmp_path / ("k" * 32)
        assert json.loads((directory / "fingerprint.json").read_text()) == {
            "fingerprint": "text",
            "format": "f",
        }
        assert sample_path(str(directory), 5) == f"{directory}/0/5.sample"
        assert sample_path(str(directory), 1024 * 37 + 1) == f"{directory}/25/37889.sample"

    def test_outcomes_and_counter(self, tmp_path: Path) -> None:
        directory = str(prepare(tmp_path, "k", {}, trust=False)[0])
        value = np.arange(10000, dtype=np.int64)
        chunks, size = chunks_of(value)
        assert stored_bytes(directory) == 0
        assert store(directory, 3, chunks, size, max_bytes=None, fsync=False) == "stored"
        assert store(directory, 3, chunks, size, max_bytes=None, fsync=True) == "present"
        assert stored_bytes(directory) == size
        assert store(directory, 4, chunks, size, max_bytes=2 * size - 1, fsync=False) == "full"
        assert store(directory, 4, chunks, size, max_bytes=2 * size, fsync=True) == "stored"
        assert stored_bytes(directory) == 2 * size
        assert_identical(read(sample_path(directory, 4)), value)
        left = sorted(p.name for p in Path(directory).rglob("*") if p.is_file())
        assert left == ["3.sample", "4.sample", "bytes", "fingerprint.json"]

    def test_replacing_a_damaged_file(self, tmp_path: Path) -> None:
        directory = str(prepare(tmp_path, "k", {}, trust=False)[0])
        chunks, size = chunks_of(np.arange(10000, dtype=np.int64))
        assert store(directory, 0, chunks, size, max_bytes=None, fsync=False) == "stored"
        final = sample_path(directory, 0)
        status = os.stat(final)
        wrong = (status.st_dev, status.st_ino + 1)
        assert store(directory, 0, chunks, size, max_bytes=None, fsync=False, replace=wrong) == (
            "present"  # someone replaced it already: left alone
        )
        same = (status.st_dev, status.st_ino)
        assert store(directory, 0, chunks, size, max_bytes=None, fsync=False, replace=same) == (
            "stored"
        )
        assert os.stat(final).st_ino != status.st_ino
        assert stored_bytes(directory) == size  # the old file's bytes taken off
        again = (os.stat(final).st_dev, os.stat(final).st_ino)
        assert store(
            directory, 0, chunks, size + 1, max_bytes=size, fsync=False, replace=again
        ) == ("full")
        assert not os.path.exists(final)  # a damaged file that cannot be replaced goes
        assert stored_bytes(directory) == 0

    @pytest.mark.parametrize(
        "damage",
        [
            lambda data: b"",  # emptied
            lambda data: data[:20],  # cut inside the header
            lambda data: bytes(len(data) // 3),  # overwritten, another size
            lambda data: data[:8] + (2**60).to_bytes(8, "little") + data[16:],  # a size flipped
        ],
        ids=["empty", "in-header", "overwritten", "huge-size"],
    )
    def test_a_damaged_file_without_its_size_is_recounted(
        self, tmp_path: Path, damage: Any
    ) -> None:
        # its size on disk was taken off the counter: an emptied file grew it a sample
        directory = str(prepare(tmp_path, "k", {}, trust=False)[0])
        chunks, size = chunks_of(np.arange(10000, dtype=np.int64))
        for index in range(3):
            assert store(directory, index, chunks, size, max_bytes=None, fsync=False) == "stored"
        final = sample_path(directory, 1)
        Path(final).write_bytes(damage(Path(final).read_bytes()))
        status = os.stat(final)
        same = (status.st_dev, status.st_ino)
        assert store(directory, 1, chunks, size, max_bytes=3 * size, fsync=False, replace=same) == (
            "stored"
        )
        assert stored_bytes(directory) == published(directory) == 3 * size
        Path(final).write_bytes(damage(Path(final).read_bytes()))
        status = os.stat(final)
        same = (status.st_dev, status.st_ino)
        assert store(
            directory, 1, chunks, size, max_bytes=3 * size - 1, fsync=False, replace=same
        ) == ("full")
        assert not os.path.exists(final)  # gone, even when empty
        assert stored_bytes(directory) == published(directory) == 2 * size

    def test_a_failed_write_leaves_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        directory = str(prepare(tmp_path, "k", {}, trust=False)[0])

        def disk_full(fd: int, chunks: object) -> None:
            os.write(fd, b"partial")
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(store_module, "write_chunks", disk_full)
        chunks, size = chunks_of(np.zeros(9000, np.uint8))
        with pytest.raises(OSError, match="No space"):
            store(directory, 0, chunks, size, max_bytes=None, fsync=False)
        files = sorted(p.name for p in Path(directory).rglob("*") if p.is_file())
        assert files == ["bytes", "fingerprint.json"]
        assert stored_bytes(directory) == 0

    def test_publishing_waits_for_the_lock(self, tmp_path: Path) -> None:
        directory = str(prepare(tmp_path, "k", {}, trust=False)[0])
        go = FORK.Event()
        writer = FORK.Process(target=_store_one, args=(directory, np.ones(5000, np.uint8), go))
        writer.start()  # before the lock is taken: a forked child would inherit it
        holder = os.open(f"{directory}/bytes", os.O_RDWR)
        fcntl.flock(holder, fcntl.LOCK_EX)
        go.set()
        time.sleep(0.5)
        published_while_locked = os.path.exists(sample_path(directory, 0))
        alive_while_locked = writer.is_alive()
        os.close(holder)  # releases the lock
        writer.join(timeout=60)
        assert not published_while_locked
        assert alive_while_locked
        assert writer.exitcode == 0
        assert os.path.exists(sample_path(directory, 0))

    def test_write_chunks_writes_everything(self, tmp_path: Path) -> None:
        parts = [b"a" * 10, memoryview(b"").cast("B"), bytes(100000), memoryview(b"xyz")]
        parts += [b"q"] * 1500  # more than one writev's worth of buffers
        fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
        try:
            store_module.write_chunks(fd, parts)
        finally:
            os.close(fd)
        assert (tmp_path / "f").read_bytes() == b"".join(bytes(part) for part in parts)

    def test_prepare_names_the_directory(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("")
        with pytest.raises(
            (NotADirectoryError, FileExistsError), match=r"cannot write to its .*file"
        ):
            prepare(tmp_path / "file", "k", {}, trust=False)

    def test_a_writer_killed_before_its_rename_is_recounted_on_open(self, tmp_path: Path) -> None:
        directory = str(prepare(tmp_path, "k", {}, trust=False)[0])
        value = np.arange(3000, dtype=np.int64)
        writer = FORK.Process(target=_die_publishing, args=(directory, value))
        writer.start()
        writer.join(timeout=60)
        assert writer.exitcode == -signal.SIGKILL
        size = encode(value)[1]
        assert (published(directory), stored_bytes(directory)) == (2 * size, 3 * size)
        assert len(list(Path(directory).rglob(".tmp-*"))) == 1  # the dead writer's trace
        prepare(tmp_path, "k", {}, trust=False)  # a reopen: the counter is the files' again
        assert stored_bytes(directory) == 2 * size
        assert list(Path(directory).rglob(".tmp-*")) == []
        chunks = encode(value)[0]  # the budget is whole: a third sample fits in 3 sizes
        assert store(directory, 2, chunks, size, max_bytes=3 * size, fsync=False) == "stored"
        prepare(tmp_path, "k", {}, trust=False)  # no dead writer: nothing recounted
        assert stored_bytes(directory) == published(directory) == 3 * size

    def test_a_failed_rename_puts_the_counter_back(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        directory = str(prepare(tmp_path, "k", {}, trust=False)[0])
        chunks, size = chunks_of(np.zeros(9000, np.uint8))
        assert store(directory, 0, chunks, size, max_bytes=None, fsync=False) == "stored"

        def fails(source: str, target: str) -> None:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "replace", fails)
        with pytest.raises(OSError, match="Input/output"):
            store(directory, 1, chunks, size, max_bytes=None, fsync=True)
        monkeypatch.undo()
        assert stored_bytes(directory) == published(directory) == size
        assert list(Path(directory).rglob(".tmp-*")) == []
