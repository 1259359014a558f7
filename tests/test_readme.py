"""The README's promises, run: its set-up commands, its quick start under torchrun, as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ahead

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def python_block(after_heading: str) -> str:
    section = README.split(after_heading, 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


def quick_start_under_torchrun(folder: Path) -> subprocess.CompletedProcess[str]:
    """The quick start as written, on 2 torchrun ranks (a job of tests.ahead)."""
    script = folder / "quick_start.py"
    script.write_text(python_block("## Quick start"))
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         "--nproc_per_node=2", str(script)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip


class TestReadme:
    def test_first_lines_are_the_two_set_up_commands(self) -> None:
        lines = README.splitlines()
        assert lines[0] == "# rankaug"
        assert lines[2] == "```bash"
        demo, tests = lines[3], lines[4]
        assert demo.endswith("python -m rankaug demo")
        assert tests.endswith("python -m pytest")
        for command in (demo, tests):
            assert command.startswith(
                "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt"
            )

    def test_it_stays_short(self) -> None:
        # the rest lives on the docs site (docs/); the README links to it
        assert len(README.splitlines()) <= 160
        assert "docs/getting-started.md" in README

    def test_ci_runs_the_readme_test_command(self) -> None:
        ci = (ROOT / ".ci" / "run").read_text().splitlines()
        assert README.splitlines()[4] in ci

    @pytest.mark.ddp
    @pytest.mark.timeout(300)
    def test_quick_start_runs_under_torchrun_as_written(self, tmp_path: Path) -> None:
        assert ".set_epoch(" not in python_block("## Quick start")
        result = ahead.result("torchrun", lambda: tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        # "rank R epoch E: N mosaics keyed with epoch [E], the first with partners [a, b, c]",
        # found wherever it is: torchrun starts each rank with `python -u`, so print()
        # writes a line and its newline in two calls, and the ranks' lines may interleave
        # on the shared pipe ("...[58, 30, 4]rank 1 epoch 0: ...\n\n")
        printed = list(re.finditer(
            r"rank (\d) epoch (\d): (\d+) mosaics keyed with epoch (\[[\d, ]*\]), "
            r"the first with partners (\[[\d, ]*\])",
            result.stdout,
        ))  # fmt: skip
        lines = {(int(m[1]), int(m[2])): (int(m[3]), json.loads(m[4]), json.loads(m[5]))
                 for m in printed}  # fmt: skip
        assert len(printed) == 4, result.stdout
        assert sorted(lines) == [(0, 0), (0, 1), (1, 0), (1, 1)], result.stdout
        for (_, epoch), (count, keyed, partners) in lines.items():
            # 64 samples on 2 ranks: 32 a rank and epoch, each keyed with its pass's epoch
            assert (count, keyed, len(partners)) == (32, [epoch], 3)
        for epoch in (0, 1):  # the ranks' first mosaics have different partners
            assert lines[(0, epoch)][2] != lines[(1, epoch)][2]
        assert lines[(0, 0)][2] != lines[(0, 1)][2]  # and so do the epochs
        # the output the README shows is this run's, line for line (in any order)
        shown = README.split("## Quick start", 1)[1].split("```text\n", 1)[1].split("```")[0]
        assert sorted(shown.splitlines()) == sorted(m[0] for m in printed)
