"""Jobs for tests/test_ahead.py's runners, in a module that imports no pytest.

Each runner that test starts imports the module of its jobs afresh; pytest's import
alone was about a third of a runner's start.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def pid(folder: Path) -> int:
    """Who ran it; each run leaves a file behind."""
    (folder / f"ran-{os.getpid()}-{time.monotonic_ns()}").touch()
    return os.getpid()


def waiting_pid(folder: Path) -> int:
    """Busy until someone writes ``go`` beside its folder: a test, or :func:`freeing_pid`."""
    deadline = time.monotonic() + 60
    while not (folder.parent / "go").exists():
        if time.monotonic() > deadline:
            raise TimeoutError("nobody wrote go in 60 s")
        time.sleep(0.01)
    return pid(folder)


def freeing_pid(folder: Path) -> int:
    """Run, then let the waiting job end: it can only end after this one has run."""
    ran = pid(folder)
    (folder.parent / "go").touch()
    return ran


def temporary(folder: Path) -> str:
    return tempfile.gettempdir()


def fails(folder: Path) -> None:
    raise ValueError(f"the job's own error in {folder.name}")


def dies(folder: Path) -> None:
    os._exit(3)
