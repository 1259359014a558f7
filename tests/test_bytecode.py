"""tests/bytecode.py: our modules' bytecode under PYTHONDONTWRITEBYTECODE, and its removal."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bytecode import compile_ours, remove


def _tree(root: Path) -> list[Path]:
    """Sources in two of our packages and in another folder, in compile order."""
    sources = [
        root / "benchmarks" / "__init__.py",
        root / "benchmarks" / "a.py",
        root / "tests" / "sub" / "b.py",
        root / "other" / "c.py",
    ]
    for number, source in enumerate(sources):
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"VALUE = {number}\n")
    return sources


@pytest.fixture(autouse=True)
def _no_bytecode_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on the machine this is for: PYTHONDONTWRITEBYTECODE set, no cache prefix."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)


class TestCompileOurs:
    def test_compiles_our_packages_once_and_removes_what_it_made(self, tmp_path: Path) -> None:
        *ours, theirs = _tree(tmp_path)
        made = compile_ours(tmp_path)
        assert sorted(made) == sorted(Path(importlib.util.cache_from_source(str(s))) for s in ours)
        assert all(path.is_file() for path in made)
        assert not Path(importlib.util.cache_from_source(str(theirs))).exists()
        assert compile_ours(tmp_path) == []  # up to date: nothing made again
        remove(made)
        assert not any(path.parent.exists() for path in made)  # the emptied folders too

    def test_a_fresh_interpreter_reads_it(self, tmp_path: Path) -> None:
        source = _tree(tmp_path)[1]
        compile_ours(tmp_path)
        # the same size and time, other text: what Python runs is the bytecode's
        stat = source.stat()
        source.write_text("VALUE = 7\n")
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        code = "import benchmarks.a as a; print(a.VALUE, a.__file__)"
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert result.stdout.split() == ["1", str(source)], result.stderr

    def test_a_source_that_does_not_compile_is_left_to_its_import(self, tmp_path: Path) -> None:
        sources = _tree(tmp_path)
        broken = tmp_path / "tests" / "broken.py"
        broken.write_text("def (:\n")
        made = compile_ours(tmp_path)
        assert sorted(made) == sorted(
            Path(importlib.util.cache_from_source(str(s))) for s in sources[:3]
        )
        assert not Path(importlib.util.cache_from_source(str(broken))).exists()

    @pytest.mark.parametrize(
        ("setting", "value"),
        [("PYTHONDONTWRITEBYTECODE", ""), ("PYTHONPYCACHEPREFIX", "elsewhere")],
    )
    def test_does_nothing_where_python_or_the_user_caches_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, value: str
    ) -> None:
        monkeypatch.setenv(setting, value)
        _tree(tmp_path)
        assert compile_ours(tmp_path) == []
        assert not list(tmp_path.rglob("*.pyc"))
