"""The two ``accelerate launch`` runs of the accelerate recipes (2 CPU processes each).

``accelerate launch --multi_gpu --num_processes 2`` runs accelerate_train.py: once for
test_accelerate.py's "first" and "seedable" trainings, once more for the rerun of
"first" in new processes ("again"), in which the same two processes then run the
stream recipe of test_accelerate_stream.py (accelerate_train.py's ``--stream``): each
launch starts three interpreters (the launcher and two ranks), each importing torch,
accelerate and albumentations, ~12 CPU-s before the first batch.
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

_again: list[Path] = []  # the second launch's folder, once run in this process


def free_port() -> str:
    """A port no one listens on now (accelerate's default, 29500, is shared by every run)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def launch(root: Path, *options: str) -> None:
    """One launch of accelerate_train.py writing in ``root``, on a free port: another
    test run (an xdist worker, a second checkout) may be launching at the same time."""
    port = ["--main_process_port", free_port()]
    run([*LAUNCH[:-1], *port, LAUNCH[-1], str(root), "--epochs", str(EPOCHS), *options])


def first(root: Path) -> dict[str, Path]:
    """The first launch: "first", then "seedable", in ``root/first``, ``root/seedable``."""
    launch(root, "--runs", "first,seedable")
    return {name: root / name for name in ("first", "seedable")}


def again(root: Path) -> Path:
    """The second launch: "again" in ``root/again``, then the stream recipe in ``root``
    (``whole``, ``split``, ``dispatched``). Run once per process: both test files take
    it, from tests.ahead or, without its runners, from their own fixtures."""
    if not _again:
        launch(root, "--runs", "again", "--stream")
        _again.append(root)
    return _again[0]
