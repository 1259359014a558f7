"""The suite's own set-up (tests/conftest.py): where temporary files go, when the jobs of
tests/ahead.py start."""

from __future__ import annotations

import gc
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import _NARROWING, _selects_whole_files

COLLECTED_WITHOUT_THE_COLLECTOR = not gc.isenabled()  # while pytest imports this module


class TestTemporaryFiles:
    def test_they_go_under_pytests_base_folder(
        self, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        base = tmp_path_factory.getbasetemp()
        made = Path(tempfile.mkdtemp())  # as the docs' examples make theirs
        assert made.parent == Path(tempfile.gettempdir())
        assert made.is_relative_to(base)

    def test_a_process_started_by_a_test_puts_them_there_too(self) -> None:
        code = "import tempfile; print(tempfile.gettempdir())"
        started = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert started.stdout.strip() == tempfile.gettempdir()
        assert started.stdout.strip() != "/tmp"


def _config(args: list[str], **options: object) -> pytest.Config:
    option = SimpleNamespace(**{**dict.fromkeys(_NARROWING), **options})
    config: pytest.Config = SimpleNamespace(option=option, args=args)  # type: ignore[assignment]
    return config


class TestEarlyJobs:
    def test_a_run_of_whole_files_and_folders_starts_them_before_collection(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("RANKAUG_TESTS_AHEAD", "2")
        assert _selects_whole_files(_config(["tests", "rankaug"]))
        assert _selects_whole_files(_config(["tests/test_cli.py"], keyword="", markexpr=""))

    @pytest.mark.parametrize(
        "option",
        [("keyword", "help"), ("markexpr", "not slow"), ("deselect", ["tests/a.py::b"]),
         ("ignore", ["tests/ddp"]), ("collectonly", True), ("numprocesses", 2)],
    )  # fmt: skip
    def test_a_run_that_selects_within_files_starts_them_once_collected(
        self, monkeypatch: pytest.MonkeyPatch, option: tuple[str, object]
    ) -> None:
        monkeypatch.setenv("RANKAUG_TESTS_AHEAD", "2")
        assert not _selects_whole_files(_config(["tests"], **dict([option])))
        assert not _selects_whole_files(_config(["tests/test_cli.py::test_help_everywhere"]))

    def test_none_start_without_runners(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("RANKAUG_TESTS_AHEAD", "0")
        assert not _selects_whole_files(_config(["tests"]))


class TestGarbageCollector:
    def test_it_is_off_while_the_tests_are_collected(self) -> None:
        assert COLLECTED_WITHOUT_THE_COLLECTOR

    def test_it_is_on_while_they_run(self) -> None:
        # reference cycles (a loader's iterator and its workers) are freed as ever
        assert gc.isenabled()
