"""The recipes' runner (tests/recipes/conftest.py ``run``): a run past its time is stopped
whole, its ranks too, and the failure says so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.recipes.conftest import run

# A launcher that starts its "rank" in a session of its own (as accelerate's does), writes
# the rank's pid, then both hang.
LAUNCHER = """
import subprocess, sys, time
rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                        start_new_session=True)
open(sys.argv[1], "w").write(str(rank.pid))
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state != "Z"  # a zombie is gone but for its parent's wait


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
class TestRun:
    def test_a_hung_run_is_stopped_with_its_ranks_in_their_own_sessions(
        self, tmp_path: Path
    ) -> None:
        written = tmp_path / "rank.pid"
        with pytest.raises(AssertionError, match=r"did not finish in 2 s"):
            run([sys.executable, "-c", LAUNCHER, str(written)], timeout=2)
        rank = int(written.read_text())
        assert not _alive(rank)
