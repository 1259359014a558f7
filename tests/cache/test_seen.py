"""Tests for rankaug.cache._seen: each cache file checked once per boot, by any process."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import DataLoader, Dataset

import rankaug.cache._format
import rankaug.cache._seen
from rankaug.cache import CachedDataset
from rankaug.cache._seen import TABLE, Checked
from rankaug.datasets import SyntheticDetection
from tests.cache.helpers import assert_identical

FORK = multiprocessing.get_context("fork")
BOOT = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every checksum computed from now on, in this process and in forked ones."""
    calls: list[int] = []
    checksum = rankaug.cache._format._checksum

    def counted(data: memoryview) -> int:
        calls.append(1)
        return checksum(data)

    monkeypatch.setattr(rankaug.cache._format, "_checksum", counted)
    return calls


def another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process checked and the tables it opened, as a new process."""
    monkeypatch.setattr(rankaug.cache._format, "_verified", set())
    monkeypatch.setattr(rankaug.cache._seen, "_open", {})


def entries(cached: CachedDataset[Any]) -> list[Path]:
    return sorted(cached.path.glob("*/[!.]*.sample"))


def filled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int = 4
) -> tuple[SyntheticDetection, CachedDataset[Any]]:
    """A cache of ``count`` samples whose files nobody has checked yet."""
    source = SyntheticDetection(count, image_size=(96, 128), seed=1)
    cached = CachedDataset(source, tmp_path)
    for index in range(count):
        cached[index]
    (cached.path / TABLE).unlink(missing_ok=True)  # the writer's records, gone
    another_process(monkeypatch)
    return source, cached


class Counted(Dataset[int]):
    """Reads ``cached[index]`` and returns how many checksums this process made so far."""

    def __init__(self, cached: CachedDataset[Any], calls: list[int]) -> None:
        self.cached, self.calls = cached, calls

    def __len__(self) -> int:
        return len(self.cached)

    def __getitem__(self, index: int) -> int:
        self.cached[index]
        return len(self.calls)


def checksums_in_workers(dataset: Counted, workers: int) -> int:
    """How many checksums fresh DataLoader workers made reading every sample."""
    loader = DataLoader(dataset, batch_size=None, num_workers=workers, multiprocessing_context=FORK)
    made: dict[int, int] = {}
    for position, count in enumerate(loader):
        made[position % workers] = int(count)  # each worker's running count, in order
    return sum(made.values())


class TestChecked:
    def test_a_record_is_held_at_its_index_only(self, tmp_path: Path) -> None:
        table = Checked(str(tmp_path), trust=False)
        token = table.token(os.stat(tmp_path))
        assert token is not None
        assert len(token) == 8
        assert not table.holds(3, token)
        table.record(3, token)
        assert table.holds(3, token)
        assert not table.holds(2, token)
        assert not table.holds(4, token)
        assert (tmp_path / TABLE).stat().st_size == 4 * 8

    def test_the_token_names_the_file_and_the_boot(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        first, second = tmp_path / "a", tmp_path / "b"
        first.write_bytes(b"x")
        second.write_bytes(b"x")
        table = Checked(str(tmp_path), trust=False)
        token = table.token(os.stat(first))
        assert token == table.token(os.stat(first))
        assert token != table.token(os.stat(second))
        first.write_bytes(b"y")  # rewritten in place: another mtime and ctime
        assert token != table.token(os.stat(first))
        monkeypatch.setattr(rankaug.cache._seen, "boot_id", lambda: BOOT)
        rebooted = Checked(str(tmp_path), trust=False)
        assert rebooted.token(os.stat(first)) != table.token(os.stat(first))

    def test_without_a_boot_id_there_is_no_table(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(rankaug.cache._seen, "boot_id", lambda: None)
        table = Checked(str(tmp_path), trust=False)
        assert table.token(os.stat(tmp_path)) is None
        table.record(0, b"\x07" * 8)
        assert not table.holds(0, b"\x07" * 8)
        assert not (tmp_path / TABLE).exists()


class TestCachedDatasetChecksOncePerBoot:
    def test_fresh_workers_trust_what_earlier_ones_checked(
        self, tmp_path: Path, checks: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        _, cached = filled(tmp_path, monkeypatch)
        dataset = Counted(cached, checks)
        assert checksums_in_workers(dataset, 1) == 4  # every file, once
        assert checksums_in_workers(dataset, 2) == 0  # new processes: none again

    def test_a_writer_records_what_it_stored(
        self, tmp_path: Path, checks: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source = SyntheticDetection(2, image_size=(96, 128))
        cached = CachedDataset(source, tmp_path)
        cached[0]
        another_process(monkeypatch)
        assert_identical(CachedDataset(source, tmp_path)[0], source[0])
        assert checks == []

    def test_a_process_checks_a_file_once_without_a_table(
        self, tmp_path: Path, checks: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(rankaug.cache._seen, "boot_id", lambda: None)
        source, cached = filled(tmp_path, monkeypatch)
        for _ in range(3):
            assert_identical(cached[1], source[1])
        assert len(checks) == 1
        another_process(monkeypatch)
        cached[1]
        assert len(checks) == 2

    def test_after_a_reboot_every_file_is_checked_again(
        self, tmp_path: Path, checks: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source, cached = filled(tmp_path, monkeypatch)
        cached[2]
        another_process(monkeypatch)
        cached[2]
        assert len(checks) == 1
        monkeypatch.setattr(rankaug.cache._seen, "boot_id", lambda: BOOT)
        another_process(monkeypatch)
        assert_identical(CachedDataset(source, tmp_path)[2], source[2])
        assert len(checks) == 2

    def test_a_file_damaged_after_its_check_is_caught(
        self, tmp_path: Path, checks: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source, cached = filled(tmp_path, monkeypatch, 1)
        cached[0]
        (path,) = entries(cached)
        whole, status = path.read_bytes(), path.stat()
        with open(path, "r+b") as file:  # pixels overwritten, the mtime put back
            file.seek(len(whole) // 2)
            file.write(b"\x55" * 64)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
        another_process(monkeypatch)
        assert_identical(CachedDataset(source, tmp_path)[0], source[0])
        assert len(checks) == 2  # checked again (its ctime moved), found damaged
        assert path.read_bytes() == whole  # and rewritten

    def test_garbage_in_the_table_only_means_checking(
        self, tmp_path: Path, checks: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source, cached = filled(tmp_path, monkeypatch)
        (cached.path / TABLE).write_bytes(os.urandom(64))
        another_process(monkeypatch)
        for index in range(4):
            assert_identical(cached[index], source[index])
        assert len(checks) == 4

    @pytest.mark.parametrize("trust", [False, True])
    def test_a_table_others_may_write_is_used_only_when_trusted(
        self, tmp_path: Path, checks: list[int], monkeypatch: pytest.MonkeyPatch, trust: bool
    ) -> None:
        source, cached = filled(tmp_path, monkeypatch, 1)
        cached[0]
        (cached.path / TABLE).chmod(0o646)
        another_process(monkeypatch)
        reader = CachedDataset(source, tmp_path, trust_directory=trust)
        assert_identical(reader[0], source[0])
        assert len(checks) == (1 if trust else 2)
