"""The one ``accelerate launch`` of the accelerate recipes (2 CPU processes).

``accelerate launch --multi_gpu --num_processes 2`` runs accelerate_train.py once:
test_accelerate.py's "first" and "seedable" trainings, the rerun of "first" ("again",
new objects, loaders and workers, the processes' state moved on), then, in the same
two processes, the stream recipe of test_accelerate_stream.py (accelerate_train.py's
``--stream``). Each launch starts three interpreters (the launcher and two ranks), each
importing torch, accelerate and albumentations, ~12 CPU-s before the first batch: a
second launch for the rerun in new processes cost that again (a fresh process's rerun
of the same pipeline is torchdata's resume, test_torchdata.py).
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from tests.recipes.conftest import HERE, run

LAUNCH = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
          "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
          "--dynamo_backend", "no", str(HERE / "accelerate_train.py")]  # fmt: skip
EPOCHS = 3
RUNS = ("first", "seedable", "again")

_done: list[Path] = []  # the launch's folder, once run in this process


def free_port() -> str:
    """A port no one listens on now (accelerate's default, 29500, is shared by every run)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def launch(root: Path, *options: str) -> None:
    """One launch of accelerate_train.py writing in ``root``, on a free port: another
    test run (an xdist worker, a second checkout) may be launching at the same time."""
    port = ["--main_process_port", free_port()]
    # (the test files' own limit: the two launches it replaces shared it)
    command = [*LAUNCH[:-1], *port, LAUNCH[-1], str(root), "--epochs", str(EPOCHS), *options]
    run(command, timeout=300)


def trained(root: Path) -> Path:
    """The launch: ``root/NAME`` for each of :data:`RUNS`, then the stream recipe's
    reports in ``root`` (``whole``, ``split``, ``dispatched``...); its folder. Run once
    per process: both test files take it, from tests.ahead or, without its runners,
    from their own fixtures."""
    if not _done:
        launch(root, "--runs", ",".join(RUNS), "--stream")
        _done.append(root)
    return _done[0]
