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

from tests.yielding import descendants

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
            # the whole tree, found while the launcher lives: one that starts its ranks
            # in sessions of their own (accelerate's) leaves them running otherwise,
            # holding the pipes open (the output never ends) and their ports
            tree = [process.pid, *descendants(process.pid)]
            _stop(tree, signal.SIGABRT)
            try:
                stdout, stderr = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                _stop(tree, signal.SIGKILL)
                stdout, stderr = process.communicate()
            finally:
                _stop(tree, signal.SIGKILL)
            raise AssertionError(
                f"{command} did not finish in {timeout} s; the stacks of its processes:\n"
                + stdout[-4000:]
                + stderr[-16000:]
            ) from None
    assert process.returncode == 0, stdout[-4000:] + stderr[-8000:]
    return stdout


def _stop(tree: list[int], signal_number: int) -> None:
    """Signal each process of ``tree`` and the process group of its first (the leader)."""
    for pid in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal_number)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(tree[0], signal_number)


def python(script: str, *args: str, timeout: int = 240) -> str:
    """Run ``tests/recipes/<script>`` with this interpreter."""
    return run([sys.executable, str(HERE / script), *args], timeout=timeout)


def lines(out: Path, rank: int) -> list[dict[str, Any]]:
    """The JSON lines rank ``rank`` wrote to ``out/rank{rank}.jsonl``."""
    path = out / f"rank{rank}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]
