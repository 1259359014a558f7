"""Helpers for the CLI tests: run the command line, read its sheets."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

from rankaug.cli import main
from rankaug.cli.sheet import CAPTION_HEIGHT, LABEL_WIDTH, PAD, TITLE_HEIGHT

ROOT = Path(__file__).resolve().parents[1]
T = "tests.cli_targets:"


def run_main(*args: str) -> tuple[int, str, str]:
    """``main(args)`` in this process (its ranks are still real processes)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse: --help, bad options
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m rankaug args`` from the repository root."""
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "rankaug", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
    )


def read_png(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert image is not None, path
    return image


def thumbnails(sheet: np.ndarray, row: int, thumb: int) -> np.ndarray:
    top = TITLE_HEIGHT + row * (thumb + CAPTION_HEIGHT + PAD)
    return sheet[top : top + thumb, LABEL_WIDTH:]
