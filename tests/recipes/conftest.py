"""Shared helpers of the framework recipes: run a script, read what each rank wrote."""

from __future__ import annotations

import contextlib
import json
import os
import signal
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
    """Run a recipe script; fail with its output if it fails.

    A run past ``timeout`` is stopped with ``SIGABRT`` to its whole process group (the
    ranks and their DataLoader workers): with ``PYTHONFAULTHANDLER`` set, each Python
    process prints every thread's stack first, and the failure shows where they hung.
    """
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}  # fmt: skip
    with subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, to stop all of it
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(process.pid, signal.SIGABRT)
            try:
                stdout, stderr = process.communicate(timeout=30)
            finally:
                _stop(process.pid, signal.SIGKILL)
            raise AssertionError(
                f"{command} did not finish in {timeout} s; the stacks of its processes:\n"
                + stdout[-4000:]
                + stderr[-16000:]
            ) from None
    assert process.returncode == 0, stdout[-4000:] + stderr[-8000:]
    return stdout


def _stop(group: int, signal_number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal_number)


def python(script: str, *args: str, timeout: int = 240) -> str:
    """Run ``tests/recipes/<script>`` with this interpreter."""
    return run([sys.executable, str(HERE / script), *args], timeout=timeout)


def lines(out: Path, rank: int) -> list[dict[str, Any]]:
    """The JSON lines rank ``rank`` wrote to ``out/rank{rank}.jsonl``."""
    path = out / f"rank{rank}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]
