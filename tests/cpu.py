"""CPU time of a command and of every process it starts: ``python -m tests.cpu ...``.

``python -m tests.cpu JOB [JOB...]`` runs each job of :mod:`tests.ahead` alone in a new
interpreter, as a runner does (``tests.ahead._run``) but at the usual priority (a runner
lowers its own); ``python -m tests.cpu -- COMMAND...`` runs any command (a test file:
``-- python -m pytest -q tests/test_x.py``, with ``RANKAUG_TESTS_AHEAD=0`` to count its
jobs in it). Each prints its wall time and its CPU time (user + system), counting every
process it started, children of children too: this process is their *subreaper*
(Linux), so a descendant whose parent ended first is handed to it, and it waits for
each one (a process's times reach its parent's ``RUSAGE_CHILDREN`` when the parent
waits for it). What still runs 30 s after the command ends is killed, and said. For
jobs, as in the suite, our modules' bytecode is compiled first and removed after
(tests/bytecode.py, under ``PYTHONDONTWRITEBYTECODE``): else each interpreter compiles
them again; a command runs as it is (pytest compiles them itself, tests/conftest.py).

The suite is CPU-bound on 2 cores: a job's CPU-s, not its wall time, is what it costs
the suite. On a loaded machine processes that wait on each other (ranks) spin longer:
compare figures taken at the same load, turn about.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PR_SET_CHILD_SUBREAPER = 36


def _subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _children() -> list[int]:
    """This process's living children (those handed to it included)."""
    own = Path(f"/proc/self/task/{os.getpid()}/children")
    return [int(pid) for pid in own.read_text().split()] if own.exists() else []


def _reap(grace: float) -> int:
    """Wait for every descendant handed over; kill what still runs after ``grace`` s.

    Returns how many were killed.
    """
    deadline, killed = time.monotonic() + grace, set()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return len(killed)
        if pid:
            continue
        if time.monotonic() > deadline:
            for pid in _children():  # (their own children are handed over next)
                killed.add(pid)
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


def measure(command: list[str], *, grace: float = 30.0) -> tuple[float, float, float, int]:
    """Run ``command``: its wall time, user and system CPU-s (every descendant), status."""
    _subreaper()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    status = subprocess.run(command, cwd=ROOT, check=False).returncode
    killed = _reap(grace)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if killed:
        print(f"killed {killed} process(es) still running {grace} s after", file=sys.stderr)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jobs", nargs="*", help="jobs of tests.ahead, or -- COMMAND...")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (default 1)")
    arguments = sys.argv[1:]
    command = arguments[arguments.index("--") + 1 :] if "--" in arguments else []
    options = parser.parse_args(arguments[: arguments.index("--")] if command else arguments)
    from tests import bytecode

    compiled = bytecode.compile_ours() if options.jobs else []
    try:
        _measure_each(options.jobs, command, options.repeat)
    finally:
        bytecode.remove(compiled)


def _measure_each(jobs: list[str], command: list[str], repeat: int) -> None:
    from tests import ahead

    for name in jobs or [" ".join(command)]:
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="rankaug-cpu-") as folder:
                if jobs:  # as a runner runs it, not niced
                    pair = f"{name}={ahead.JOBS[name][0]}"
                    code = f"from tests.ahead import _run; _run(Path({folder!r}), [{pair!r}])"
                    command = [sys.executable, "-c", "from pathlib import Path; " + code]
                wall, user, system, status = measure(command)
                failed = _failure(Path(folder), name) if jobs else ""
            print(
                f"{name}: {user + system:.1f} CPU-s ({user:.1f} user, {system:.1f} sys), "
                f"{wall:.1f} s wall, exit {status}{failed}",
                flush=True,
            )


def _failure(folder: Path, name: str) -> str:
    """`` FAILED: ...`` where the job ran and failed (its runner's pickle), else ``""``."""
    import pickle

    done = folder / f"{name}.pickle"
    if not done.exists():
        return " FAILED: no result"
    outcome, _, text = pickle.loads(done.read_bytes())
    return "" if outcome == "ok" else f" FAILED:\n{text}"


if __name__ == "__main__":
    main()
