"""Tests for rankaug.cache._trust: a cache must be this user's alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankaug.cache._trust import Untrusted, fix, problem, refuse


class TestProblem:
    def test_own_and_private(self, tmp_path: Path) -> None:
        tmp_path.chmod(0o755)
        assert problem(tmp_path.stat()) is None

    @pytest.mark.parametrize(
        ("mode", "who"), [(0o775, "its group"), (0o757, "others"), (0o1777, "its group and others")]
    )
    def test_writable_by_others(self, tmp_path: Path, mode: int, who: str) -> None:
        tmp_path.chmod(mode)
        assert f"writable by {who}" in str(problem(tmp_path.stat()))

    def test_another_owner(self, tmp_path: Path) -> None:
        (tmp_path / "f").write_text("")
        os.chown(tmp_path / "f", 12345, -1)  # the tests run as root
        assert "owned by uid 12345" in str(problem((tmp_path / "f").stat()))


class TestRefuse:
    def test_names_the_path_and_the_fix(self) -> None:
        error = refuse("/x/y", "directory", "writable by others (mode 0o777)")
        assert isinstance(error, Untrusted)
        assert isinstance(error, ValueError)
        assert "refuses the cache directory /x/y" in str(error)
        assert "chmod go-w /x/y" in str(error)
        assert "trust_directory=True" in str(error)


class TestFix:
    def test_chmod_for_a_writable_path_else_a_directory_of_ones_own(self) -> None:
        assert fix("/x/y", "writable by others (mode 0o777)") == (
            "chmod go-w /x/y; or pass trust_directory=True if you trust everyone who can "
            "write there"
        )
        assert fix("/x/y", "owned by uid 7, not by this process's user (uid 0)").startswith(
            "use a directory of your own (or chown it); or pass trust_directory=True"
        )
