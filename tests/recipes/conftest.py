"""Shared helpers of the framework recipes: run a script, read what each rank wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

# The recipe scripts import their framework at the top and are run, never imported:
# --doctest-modules must not import them (a run without the frameworks, or with
# -m "not framework", would stop at collection).
collect_ignore = [path.name for path in HERE.glob("*_train.py")]


def run(command: list[str], *, timeout: int = 240) -> str:
    """Run a recipe script; fail with its output if it fails."""
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-8000:]
    return result.stdout


def python(script: str, *args: str, timeout: int = 240) -> str:
    """Run ``tests/recipes/<script>`` with this interpreter."""
    return run([sys.executable, str(HERE / script), *args], timeout=timeout)


def lines(out: Path, rank: int) -> list[dict[str, Any]]:
    """The JSON lines rank ``rank`` wrote to ``out/rank{rank}.jsonl``."""
    path = out / f"rank{rank}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]
