"""Tests for rankaug.datasets._file_stat."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankaug.datasets._file_stat import check_unchanged, file_stat


class TestFileStat:
    def test_size_and_mtime_or_none(self, tmp_path: Path) -> None:
        path = tmp_path / "a.txt"
        assert file_stat(path) is None
        path.write_text("abc")
        assert file_stat(path) == (3, path.stat().st_mtime_ns)


class TestCheckUnchanged:
    def test_a_change_is_refused_naming_the_file(self, tmp_path: Path) -> None:
        path = tmp_path / "a.txt"
        path.write_text("abc")
        before = file_stat(path)
        check_unchanged(path, before)
        status = path.stat()
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))
        with pytest.raises(ValueError, match=r"a\.txt changed while it was being read"):
            check_unchanged(path, before)
        with pytest.raises(ValueError, match=r"a\.txt changed"):
            check_unchanged(path, None)  # appeared
