"""benchmarks/compare.py: the paired A/B against a git revision (never a timing assertion)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks._compare import BASE, CASES, export, same_outputs
from tests import ahead

ROOT = Path(__file__).resolve().parent.parent


class TestSameOutputs:
    def test_arrays_by_value_and_dtype(self) -> None:
        a = np.arange(4, dtype=np.int64)
        assert same_outputs(a, a.copy())
        assert not same_outputs(a, a.astype(np.int32))
        assert not same_outputs(a, a + 1)

    def test_containers_item_by_item(self) -> None:
        one = {"image": np.zeros((2, 2)), "record": {"indices": [1, 2], "state": "ab"}}
        two = {"image": np.zeros((2, 2)), "record": {"indices": [1, 3], "state": "ab"}}
        assert same_outputs(one, {**one})
        assert not same_outputs(one, two)
        assert not same_outputs([1, 2], (1, 2))
        assert not same_outputs({"a": 1, "b": 2}, {"b": 2, "a": 1})  # the keys' order too


class TestExport:
    def test_the_revision_as_its_own_package(self, tmp_path: Path) -> None:
        folder = export("HEAD", tmp_path)
        package = folder / BASE
        assert (package / "__init__.py").is_file()
        assert not (folder / "rankaug").exists()
        text = (package / "mosaic" / "__init__.py").read_text(encoding="utf-8")
        assert f"from {BASE}.mosaic.config import" in text  # a name of its __all__
        assert "from rankaug." not in text

    def test_refuses_a_revision_git_does_not_know(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="revision 'no-such-revision-x': git archive"):
            export("no-such-revision-x", tmp_path)


def against_head(folder: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """compare.py on one case against HEAD, its report in ``folder`` (a job of tests.ahead)."""
    out = folder / "compare.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "compare.py"), "HEAD", "--cases",
               "cutmix", "--ops", "64", "--data", "synthetic", "--progress", "off",
               "--json", str(out)]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300), out


def test_runs_a_case_against_head(tmp_path: Path) -> None:
    done, out = ahead.result("compare", lambda: tmp_path)
    assert done.returncode == 0, done.stderr
    assert "cutmix" in done.stdout
    assert "µs per operation" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert report["revision"] == "HEAD"
    assert result["case"] == "cutmix"
    assert result["pairs"] == 64
    assert set(result) >= {"difference_us", "ratio", "same_outputs", "base_mean_us"}


def test_every_case_is_named_in_the_scripts_docstring() -> None:
    text = (ROOT / "benchmarks" / "compare.py").read_text(encoding="utf-8")  # not imported:
    docstring = text.split('"""')[1]  # running it pins this process's threads
    for case in CASES:
        assert f"``{case}``" in docstring
