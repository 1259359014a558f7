"""Tests for rankaug.cli.cache: ``python -m rankaug cache verify DIR``."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from rankaug.cache import CachedDataset
from rankaug.cli import main
from rankaug.datasets import SyntheticDetection
from tests import ahead
from tests.cache.helpers import ListDataset, Planted, Point, Shapes, forge


def filled(directory: Path, length: int = 3) -> CachedDataset[object]:
    cached = CachedDataset(SyntheticDetection(length, image_size=(60, 80)), directory)
    for index in range(length):
        cached[index]
    return cached


def verified_as_a_module(folder: Path) -> subprocess.CompletedProcess[str]:
    """``python -m rankaug cache verify`` of a filled cache (a job of tests.ahead)."""
    filled(folder, 1)
    return subprocess.run(
        [sys.executable, "-m", "rankaug", "cache", "verify", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


class TestCacheVerify:
    def test_a_whole_cache_passes(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        cached = filled(tmp_path)
        assert main(["cache", "verify", str(tmp_path)]) == 0
        assert "3 entries checked, 0 problem(s)" in capsys.readouterr().out
        assert main(["cache", "verify", str(cached.path)]) == 0  # one fingerprint's folder

    def test_damaged_entries_are_listed(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = filled(tmp_path)
        damaged = cached.path / "0" / "1.sample"
        data = bytearray(damaged.read_bytes())
        data[len(data) // 2] ^= 0xFF
        damaged.write_bytes(bytes(data))
        torn = cached.path / "0" / "2.sample"
        torn.write_bytes(torn.read_bytes()[:100])
        assert main(["cache", "verify", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert f"{damaged}: damaged: its checksum does not match its bytes\n" in out
        assert f"{torn}: damaged: not a complete rankaug cache file" in out
        assert "3 entries checked, 2 problem(s)" in out
        assert str(cached.path / "0" / "0.sample") not in out

    def test_an_entry_copied_under_another_index_or_cache_is_listed(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = filled(tmp_path)
        other = CachedDataset(SyntheticDetection(3, image_size=(60, 80), seed=9), tmp_path)
        other[0]
        copied, foreign = cached.path / "0" / "1.sample", cached.path / "0" / "0.sample"
        copied.write_bytes((cached.path / "0" / "2.sample").read_bytes())
        foreign.write_bytes((other.path / "0" / "0.sample").read_bytes())
        misplaced = cached.path / "1" / "5.sample"  # shard 1 holds 1024 to 2047
        misplaced.parent.mkdir()
        misplaced.write_bytes((cached.path / "0" / "2.sample").read_bytes())
        assert main(["cache", "verify", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert (
            f"{copied}: damaged: holds dataset[2] of the cache {cached.path.name}, not "
            "dataset[1] (copied or moved from elsewhere): not served\n"
        ) in out
        assert (
            f"{foreign}: damaged: holds dataset[0] of the cache {other.path.name}, not "
            f"dataset[0] of the cache {cached.path.name}"
        ) in out
        assert f"{misplaced}: misplaced: CachedDataset reads no entry of this name here" in out
        assert "5 entries checked, 3 problem(s)" in out

    def test_an_entry_of_the_older_format_is_listed(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = filled(tmp_path, 1)
        entry = cached.path / "0" / "0.sample"
        entry.write_bytes(b"RKCACHE\x02" + entry.read_bytes()[8:])
        assert main(["cache", "verify", str(tmp_path)]) == 1
        assert f"{entry}: damaged: an entry of an older rankaug cache format" in (
            capsys.readouterr().out
        )

    def test_a_whole_cache_of_the_older_format_is_one_line_not_damaged_entries(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        # a format 2 folder (left beside the new one): every entry was listed as damaged
        old = filled(tmp_path / "old")
        for index in range(3):
            entry = old.path / "0" / f"{index}.sample"
            entry.write_bytes(b"RKCACHE\x02" + entry.read_bytes()[8:])
        described = old.path / "fingerprint.json"
        described.write_text(described.read_text().replace("CachedDataset/3", "CachedDataset/2"))
        assert main(["cache", "verify", str(tmp_path / "old")]) == 1
        out = capsys.readouterr().out
        assert out == (
            f"{old.path}: a cache of another format (rankaug.CachedDataset/2; this version "
            "reads rankaug.CachedDataset/3), which CachedDataset does not read (it keys a new "
            "cache beside it): its entries were not checked; CachedDataset.prune() removes it\n"
            f"0 entries checked, 1 problem(s) in {tmp_path / 'old'}\n"
        )
        assert main(["cache", "verify", str(old.path)]) == 1  # the folder itself, named
        assert "0 entries checked, 1 problem(s)" in capsys.readouterr().out

    def test_a_cache_of_a_newer_format_is_not_called_older(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = filled(tmp_path, 1)
        described = cached.path / "fingerprint.json"
        described.write_text(described.read_text().replace("CachedDataset/3", "CachedDataset/4"))
        assert main(["cache", "verify", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert f"{cached.path}: a cache of another format (rankaug.CachedDataset/4; " in out
        assert "0 entries checked, 1 problem(s)" in out

    def test_a_planted_entry_is_reported_not_run(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = filled(tmp_path, 1)
        target = tmp_path / "pwned"
        entry = cached.path / "0" / "0.sample"
        entry.write_bytes(forge(pickle.dumps(Planted(str(target)), protocol=5)))
        os.chown(cached.path, 12345, -1)
        assert main(["cache", "verify", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert f"{entry}: refused: " in out
        assert "calls posix.system" in out
        assert f"{cached.path}: untrusted folder, owned by uid 12345" in out
        assert "Fix: use a directory of your own (or chown it); or rerun with --no-owner" in out
        assert not target.exists()

    def test_a_refusal_names_the_flag(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = filled(tmp_path, 1)
        entry = cached.path / "0" / "0.sample"
        entry.chmod(0o666)
        assert main(["cache", "verify", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert f"{entry}: refused: CachedDataset refuses the cache entry" in out
        assert "or rerun with --no-owner-check if you trust everyone" in out
        assert "trust_directory" not in out
        assert main(["cache", "verify", str(tmp_path), "--no-owner-check"]) == 0

    def test_trusted_types_by_name(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = CachedDataset(ListDataset([Point(1, 2)]), tmp_path, trusted_types=[Point])
        cached[0]
        assert main(["cache", "verify", str(tmp_path)]) == 1
        out = capsys.readouterr().out  # the flag, not the Python argument
        assert "If that is a type of your samples, rerun with --trusted " in out
        assert "--trusted tests.cache.helpers.Point; otherwise" in out
        assert "trusted_types=" not in out
        assert (
            main(["cache", "verify", str(tmp_path), "--trusted", "tests.cache.helpers.Point"]) == 0
        )
        capsys.readouterr()

    def test_a_nested_type_by_the_name_the_refusal_gives(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        box = Shapes.Box
        CachedDataset(ListDataset([box(3)]), tmp_path, trusted_types=[box])[0]
        assert main(["cache", "verify", str(tmp_path)]) == 1
        assert "--trusted tests.cache.helpers.Shapes.Box; otherwise" in capsys.readouterr().out
        named = ["--trusted", "tests.cache.helpers.Shapes.Box"]  # as the refusal advised
        assert main(["cache", "verify", str(tmp_path), *named]) == 0
        assert "1 entries checked, 0 problem(s)" in capsys.readouterr().out

    @pytest.mark.parametrize("name", ["Point", "tests.cache.helpers.", "a..Point"])
    def test_a_trusted_name_without_its_module_is_an_error(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
    ) -> None:
        filled(tmp_path, 1)
        assert main(["cache", "verify", str(tmp_path), "--trusted", name]) == 2
        assert (
            f"--trusted must be a type's module and name, module.Name (as the refusal names "
            f"it, e.g. mypkg.data.Box), got {name!r}"
        ) in capsys.readouterr().err

    def test_an_untrusted_folder_gets_its_fix(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cached = filled(tmp_path, 1)
        cached.path.chmod(0o775)
        assert main(["cache", "verify", str(tmp_path)]) == 1
        out = capsys.readouterr().out
        assert (
            f"{cached.path}: untrusted folder, writable by its group (mode 0o775). Fix: "
            f"chmod go-w {cached.path}; or rerun with --no-owner-check if you trust everyone "
            "who can write there\n"
        ) in out
        assert main(["cache", "verify", str(tmp_path), "--no-owner-check"]) == 0

    @pytest.mark.parametrize("arguments", [["verify", "missing"], ["verify", "."], []])
    def test_errors(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: list[str],
        capsys: pytest.CaptureFixture[str],
    ) -> None:  # fmt: skip
        monkeypatch.chdir(tmp_path)
        assert main(["cache", *arguments]) == 2
        assert "error" in capsys.readouterr().err

    @pytest.mark.slow  # a new interpreter, run ahead (tests/ahead.py)
    def test_as_a_module(self, tmp_path: Path) -> None:
        done = ahead.result("cache-verify", lambda: tmp_path)
        assert done.returncode == 0, done.stderr
        assert "1 entries checked, 0 problem(s)" in done.stdout
