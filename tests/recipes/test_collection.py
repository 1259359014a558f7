"""The suite collects without the training frameworks: the recipe scripts are not imported."""

from __future__ import annotations

import subprocess
import sys

from tests.recipes.conftest import ROOT

# Runs pytest with the frameworks made unimportable (None in sys.modules).
BLOCKED = """
import sys
for name in ("pytorch_lightning", "lightning", "accelerate", "torchdata"):
    sys.modules[name] = None
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--collect-only", "tests/recipes"]))
"""


class TestCollection:
    def test_the_recipes_collect_without_the_frameworks(self) -> None:
        result = subprocess.run(
            [sys.executable, "-c", BLOCKED], cwd=ROOT, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout[-4000:]
        assert "error" not in result.stdout.lower(), result.stdout[-4000:]
        assert "tests collected" in result.stdout
