"""The suite's own set-up (tests/conftest.py): where temporary files go."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


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
