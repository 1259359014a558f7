"""tests/ahead.py: each job runs once, in a runner or in the suite, its result or error
reaching its fixture."""

from __future__ import annotations

import os
import re
import time
from functools import partial
from pathlib import Path

import pytest

from tests.ahead import JOBS, ROOT, Runners, has_jobs, module_path, wanted

pytestmark = pytest.mark.slow  # starts runner processes

HERE = "tests.test_ahead:"


def pid(folder: Path) -> int:
    """Who ran it; each run leaves a file behind."""
    (folder / f"ran-{os.getpid()}-{time.monotonic_ns()}").touch()
    return os.getpid()


def slow_pid(folder: Path) -> int:
    time.sleep(1.5)
    return pid(folder)


def fails(folder: Path) -> None:
    raise ValueError(f"the job's own error in {folder.name}")


def dies(folder: Path) -> None:
    os._exit(3)


def runs(runners: Runners, name: str) -> int:
    return len(list((runners.folder / name).glob("ran-*")))


def claimed(runners: Runners, name: str) -> None:
    """Wait until a runner has taken job ``name``."""
    deadline = time.monotonic() + 60
    while not (runners.folder / f"{name}.claimed").exists():
        assert time.monotonic() < deadline, f"no runner took {name}"
        time.sleep(0.02)


class TestRunners:
    def test_each_job_runs_once_and_its_result_reaches_the_fixture(self) -> None:
        jobs = dict.fromkeys(("a", "b", "c"), HERE + "pid")
        runners = Runners(jobs, 2)
        try:
            pids = [runners.result(name, partial(Path, runners.folder, name)) for name in jobs]
            assert [runs(runners, name) for name in jobs] == [1, 1, 1]
        finally:
            runners.stop()
        assert set(pids) <= set(runners.processes) | {os.getpid()}
        assert not runners.folder.exists()

    def test_a_job_no_runner_has_begun_runs_here_in_the_fixtures_folder(
        self, tmp_path: Path
    ) -> None:
        runners = Runners({"busy": HERE + "slow_pid", "next": HERE + "pid"}, 1)
        try:
            claimed(runners, "busy")
            assert runners.result("next", lambda: tmp_path) == os.getpid()
            assert len(list(tmp_path.glob("ran-*"))) == 1
            assert runners.result("busy", lambda: tmp_path) in runners.processes
        finally:
            runners.stop()

    def test_while_a_runner_is_on_its_job_the_suite_runs_the_next_one(self) -> None:
        runners = Runners({"busy": HERE + "slow_pid", "next": HERE + "pid"}, 1)
        try:
            claimed(runners, "busy")
            assert runners.result("busy", lambda: runners.folder / "busy") != os.getpid()
            assert runs(runners, "next") == 1  # done here while it waited
            assert runners.result("next", lambda: runners.folder / "next") == os.getpid()
            assert runs(runners, "next") == 1
        finally:
            runners.stop()

    def test_a_jobs_error_is_raised_in_its_fixture(self) -> None:
        runners = Runners({"fails": HERE + "fails"}, 1)
        try:
            claimed(runners, "fails")
            with pytest.raises(ValueError, match="the job's own error in fails"):
                runners.result("fails", lambda: runners.folder / "fails")
        finally:
            runners.stop()

    def test_a_runner_that_dies_is_reported_not_waited_for(self) -> None:
        runners = Runners({"dies": HERE + "dies"}, 1)
        try:
            claimed(runners, "dies")
            with pytest.raises(RuntimeError, match="the runner of job 'dies' died"):
                runners.result("dies", lambda: runners.folder / "dies")
        finally:
            runners.stop()


class TestJobs:
    def test_every_job_is_a_function_of_the_file_that_uses_it(self) -> None:
        for name, (target, user) in JOBS.items():
            path = module_path(target)
            assert path.is_file(), name
            assert has_jobs(path)
            text = path.read_text()
            assert f"\ndef {target.partition(':')[2]}(" in text, name
            assert re.search(rf"\n *def {user}\((.*\n)*? *.*ahead\.result\(", text), name

    def test_only_the_jobs_of_selected_tests_start_in_their_order(self) -> None:
        bench, readme = ROOT / "tests" / "test_benchmarks.py", ROOT / "tests" / "test_readme.py"
        selected = [
            (readme, {"test_quick_start_runs_under_torchrun_as_written", "tmp_path"}),
            (bench, {"test_catalogue", "quick_run"}),
            (bench, {"test_other", "tmp_path"}),
            (ROOT / "tests" / "test_cli.py", {"runs"}),  # another file's user name
        ]
        assert wanted(selected) == ["torchrun", "benchmark"]
        assert wanted([(bench, {"test_other"})]) == []
