"""Tests for rankaug.cache._writers: temporary files of dead writers are removed."""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path
from typing import Any

from rankaug.cache._writers import TEMPORARY, clean, dead_files, prefix

FORK = multiprocessing.get_context("fork")


def _write_and_hang(folder: str, ready: Any) -> None:
    with open(f"{folder}/{prefix()}abc.sample", "wb") as file:
        file.write(b"x" * 1000)
    ready.set()
    ready.wait()
    signal.pause()  # a writer stuck mid-sample, until it is killed


def _start_writer(folder: Path) -> Any:
    ready = FORK.Event()
    writer = FORK.Process(target=_write_and_hang, args=(str(folder), ready), daemon=True)
    writer.start()
    assert ready.wait(timeout=60)
    return writer


def temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob(f"{TEMPORARY}*"))


class TestClean:
    def test_prefix_names_this_process(self) -> None:
        name = prefix()
        assert name.startswith(f"{TEMPORARY}")
        assert f".{os.getpid()}." in name
        assert prefix() == name

    def test_a_sigkilled_writers_files_go_a_live_writers_stay(self, tmp_path: Path) -> None:
        (tmp_path / "0").mkdir()
        killed = _start_writer(tmp_path / "0")
        live = _start_writer(tmp_path)
        try:
            assert len(temporaries(tmp_path)) == 2
            os.kill(killed.pid, signal.SIGKILL)
            killed.join(timeout=60)
            assert killed.exitcode == -signal.SIGKILL
            dead = dead_files(tmp_path)
            assert [path.parent for path in dead] == [tmp_path / "0"]
            assert clean(tmp_path, dead) == 1
            left = temporaries(tmp_path)
            assert left == [f"{TEMPORARY}{left[0].split('-', 2)[1]}-abc.sample"]
            assert f".{live.pid}." in left[0]  # the live writer's file stays
        finally:
            live.kill()
            live.join(timeout=60)
        assert clean(tmp_path) == 1
        assert temporaries(tmp_path) == []

    def test_foreign_and_untagged_files_stay(self, tmp_path: Path) -> None:
        names = [
            ".tmp-abc123.sample",  # an older rankaug's: no tag
            f"{TEMPORARY}{'0' * 32}.1.999999.5-x.sample",  # another boot or machine
        ]
        for name in names:
            (tmp_path / name).write_bytes(b"")
        assert clean(tmp_path) == 0
        assert temporaries(tmp_path) == sorted(names)
