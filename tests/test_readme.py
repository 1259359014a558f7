"""The README's promises, run: its set-up commands, its quick start under torchrun."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def python_block(after_heading: str) -> str:
    section = README.split(after_heading, 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


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

    def test_ci_runs_the_readme_test_command(self) -> None:
        ci = (ROOT / ".ci" / "run").read_text().splitlines()
        assert README.splitlines()[4] in ci

    @pytest.mark.ddp
    @pytest.mark.timeout(300)
    def test_quick_start_runs_under_torchrun(self, tmp_path: Path) -> None:
        script = tmp_path / "quick_start.py"
        code = python_block("## Quick start")
        # Count what the loop saw, so the run proves it iterated.
        code = code.replace("        ...  #", "        seen.append(batch['image'].shape[0])  #")
        script.write_text("seen = []\n" + code + "\nprint('batches', len(seen), sum(seen))\n")
        env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "OMP_NUM_THREADS": "1"}
        result = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone",
             "--nproc_per_node=2", str(script)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        # 64 samples, 2 ranks, batches of 8, 2 epochs: 4 batches of 8 per rank and epoch
        assert result.stdout.count("batches 8 64") == 2, result.stdout
