"""The quick tier collects without the framework extras; the recipe scripts are not imported.

tests/without_extras.py makes Lightning, accelerate, torchdata and datasets
unimportable; ``-m "not slow"`` then collects every test that does not need them
(and the docstrings' examples) without an error.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ahead
from tests.recipes.conftest import ROOT

# --assert=plain: what fails to import without the extras fails alike; rewriting every
# test module's asserts (never cached under PYTHONDONTWRITEBYTECODE) took 8 of its 13 CPU-s
COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
           "tests.without_extras", "-m", "not slow", "--collect-only",
           "--assert=plain"]  # fmt: skip


def collect_quick_tier(_: Path) -> subprocess.CompletedProcess[str]:
    """The whole quick tier, collected without the extras (a job of tests.ahead)."""
    return subprocess.run(
        COMMAND, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def checked(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert not re.search(r"^(ERROR|E  )", result.stdout, re.MULTILINE), result.stdout[-4000:]
    return result.stdout


class TestCollection:
    def test_the_extras_are_hidden(self) -> None:
        # one fresh interpreter tries each import in turn and prints what each raised
        names = ("pytorch_lightning", "lightning_fabric.utilities", "accelerate",
                 "torchdata.stateful_dataloader", "datasets")  # fmt: skip
        code = (
            "import tests.without_extras, importlib, sys\n"
            "for name in sys.argv[1:]:\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "        print(name, 'imported')\n"
            "    except ImportError as error:\n"
            "        print(name, type(error).__name__, error)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, *names], cwd=ROOT, capture_output=True, text=True,
            timeout=120, check=True,
        )  # fmt: skip
        expected = [
            # a submodule's import stops at its package
            f"{name} ModuleNotFoundError No module named '{name.partition('.')[0]}' (hidden)"
            for name in names
        ]
        assert result.stdout.splitlines() == expected, result.stdout + result.stderr

    @pytest.mark.slow  # imports every test module and the package
    def test_the_quick_tier_collects_without_the_frameworks(self, tmp_path: Path) -> None:
        out = checked(ahead.result("quick-tier", lambda: tmp_path))
        assert re.search(r"^\d+/\d+ tests collected \(\d+ deselected\)", out, re.MULTILINE), out[
            -2000:
        ]
        assert "tests/test_keys.py::" in out
        assert "tests/recipes/test_lightning.py::" not in out  # framework: slow
