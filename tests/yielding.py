"""A runner of tests.ahead takes only the CPU the suite leaves, its programs' sessions too.

Where Linux schedules by autogroup (``/proc/sys/kernel/sched_autogroup_enabled``), each
session is a group that shares the CPU equally with every other, whatever its
processes' nice value. A runner leads a session of its own and lowers its group
(:func:`yield_the_cpu`); but a program a job starts may begin sessions of its own:
torch's elastic launcher (torchrun, ``accelerate launch``) starts each rank with
``start_new_session=True``, and the recipes' :func:`tests.recipes.conftest.run` starts
its launcher so (to stop all of it). Each such session was a group at nice 0, with as
much of the CPU as the whole suite's: in a suite run, the accelerate launcher and its
two ranks were three such groups. So the runner also lowers, twice a second, the group
of every process below it that is in another group (:func:`lower_escaped`), from a
small process of its own (:func:`watch`): the runner itself stays one thread, as the
jobs that fork expect.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["descendants", "lower_escaped", "watch", "yield_the_cpu"]

_EVERY = 0.5  # seconds between two looks at the runner's processes
_watchers: list[subprocess.Popen[bytes]] = []  # (kept: it ends with the runner)


def descendants(pid: int) -> list[int]:
    """The processes below ``pid``, children first (Linux's /proc; none elsewhere)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            for child in map(int, (task / "children").read_text().split()):
                found += [child, *descendants(child)]
    return found


def _group(pid: int | str) -> tuple[str, int] | None:
    """(name, nice) of the autogroup of ``pid``, from ``/autogroup-7 nice 0``; None if gone."""
    try:
        name, _, nice = Path(f"/proc/{pid}/autogroup").read_text().split()
    except (OSError, ValueError):
        return None
    return name, int(nice)


def lower_escaped(root: int, nice: int) -> list[int]:
    """Give each process below ``root`` in another autogroup than its the nice ``nice``.

    Returns:
        The processes whose group was lowered.
    """
    own = _group(root)
    lowered = []
    for pid in descendants(root):
        group = _group(pid)
        if own is not None and group is not None and group[0] != own[0] and group[1] < nice:
            with contextlib.suppress(OSError):  # ended meanwhile
                Path(f"/proc/{pid}/autogroup").write_text(f"{nice}\n")
                lowered.append(pid)
    return lowered


def watch(root: int, nice: int) -> None:
    """:func:`lower_escaped` twice a second while ``root`` lives (``python -m tests.yielding``)."""
    while _alive(root):
        lower_escaped(root, nice)
        time.sleep(_EVERY)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (not ended, nor ended and waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def yield_the_cpu(nice: int = 10) -> None:
    """Take only the CPU the suite leaves: this process, what it starts, at ``nice``.

    The group of this process's session is lowered too, and, by :func:`watch`, that
    of every session a process below it begins (see the module).
    """
    os.nice(nice)
    with contextlib.suppress(OSError):  # no autogroups (not Linux, or they are off)
        Path("/proc/self/autogroup").write_text(f"{nice}\n")
        _watchers.append(subprocess.Popen(
            [sys.executable, "-m", "tests.yielding", str(os.getpid()), str(nice)],
            cwd=Path(__file__).resolve().parents[1], stdin=subprocess.DEVNULL,
        ))  # fmt: skip


if __name__ == "__main__":
    watch(int(sys.argv[1]), int(sys.argv[2]))
