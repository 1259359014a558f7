"""Tests for rankaug.datasets._walk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankaug import RankaugWarning
from rankaug.datasets._walk import walk_files

TXT = frozenset({".txt"})


def found(top: Path) -> list[str]:
    return sorted(
        Path(path).relative_to(top).as_posix() for path in walk_files(top, TXT, what="label")
    )


class TestWalkFiles:
    def test_follows_links_to_folders(self, tmp_path: Path) -> None:
        (tmp_path / "top" / "sub").mkdir(parents=True)
        (tmp_path / "other").mkdir()
        for path in ("top/a.txt", "top/sub/b.TXT", "top/c.jpg", "other/d.txt"):
            (tmp_path / path).write_text("")
        os.symlink(tmp_path / "other", tmp_path / "top" / "linked")
        os.symlink(tmp_path / "other", tmp_path / "top" / "sub" / "again")  # both read
        assert found(tmp_path / "top") == ["a.txt", "linked/d.txt", "sub/again/d.txt", "sub/b.TXT"]

    def test_hidden_names_below_the_top_are_skipped(self, tmp_path: Path) -> None:
        top = tmp_path / ".data"  # a hidden top is still read
        (top / ".cache").mkdir(parents=True)
        (top / "sub").mkdir()
        for path in ("a.txt", "._a.txt", ".cache/b.txt", "sub/.c.txt", "sub/c.txt"):
            (top / path).write_text("")
        assert found(top) == ["a.txt", "sub/c.txt"]

    def test_a_cycle_is_warned_about_and_not_entered(self, tmp_path: Path) -> None:
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "a.txt").write_text("")
        os.symlink(tmp_path, tmp_path / "sub" / "up")
        with pytest.warns(RankaugWarning, match=r"up links back to .*: not entered"):
            assert found(tmp_path) == ["sub/a.txt"]

    def test_a_dangling_link_is_refused(self, tmp_path: Path) -> None:
        os.symlink(tmp_path / "missing.txt", tmp_path / "a.txt")
        with pytest.raises(
            ValueError,
            match=r"a\.txt has an extension of the label files read "
            r"but is not a readable file \(a link to .*missing\.txt, missing\)",
        ):
            found(tmp_path)
