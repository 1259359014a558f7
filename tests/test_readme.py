"""The README's promises, run: its set-up commands, its quick start under torchrun."""

from __future__ import annotations

import json
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
        # Record what the loop saw: the batch size, the epochs its mosaics were keyed
        # with, and its partners, so the run proves it iterated, keyed each pass with its
        # epoch without any set_epoch call, and drew differently on the two ranks.
        code = code.replace(
            "        ...  #",
            "        seen.append([batch['image'].shape[0], sorted({r['epoch'] for r in "
            "batch['mosaic']}), [r['indices'][1:] for r in batch['mosaic']]])  #",
        )
        assert "seen.append" in code
        assert ".set_epoch(" not in code
        script.write_text(
            "import json\nseen = []\n" + code
            + "\nprint('rank', dist.get_rank(), json.dumps(seen))\n"
        )  # fmt: skip
        env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "OMP_NUM_THREADS": "1"}
        result = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone",
             "--nproc_per_node=2", str(script)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        runs = dict(
            line.split(" ", 2)[1:]
            for line in result.stdout.splitlines()
            if line.startswith("rank ")
        )
        assert sorted(runs) == ["0", "1"], result.stdout
        seen = {rank: json.loads(text) for rank, text in runs.items()}
        # 64 samples, 2 ranks, batches of 8, 2 epochs: 4 batches of 8 per rank and epoch
        for batches in seen.values():
            assert [size for size, _, _ in batches] == [8] * 8
            assert [epochs for _, epochs, _ in batches] == [[0]] * 4 + [[1]] * 4
        partners = [[p for _, _, p in seen[rank]] for rank in ("0", "1")]
        assert all(a != b for a, b in zip(*partners, strict=True))
