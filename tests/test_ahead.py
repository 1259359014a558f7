"""tests/ahead.py: each job runs once, in a runner or in the suite, its result or error
reaching its fixture."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.ahead import (
    JOBS,
    LONGEST_FIRST,
    ROOT,
    SHARED,
    Runners,
    has_jobs,
    module_path,
    takers,
    under,
    wanted,
)

pytestmark = pytest.mark.slow  # starts runner processes

HERE = "tests.ahead_jobs:"  # a module without pytest: each runner imports it


def go(runners: Runners) -> Path:
    """The file whose writing lets a waiting job end: in the runners' folder."""
    return runners.folder / "go"


def runs(runners: Runners, name: str) -> int:
    return len(list((runners.folder / name).glob("ran-*")))


def claimed(runners: Runners, name: str) -> None:
    """Wait until a runner has taken job ``name``."""
    deadline = time.monotonic() + 60
    while not (runners.folder / f"{name}.claimed").exists():
        assert time.monotonic() < deadline, f"no runner took {name}"
        time.sleep(0.02)


@pytest.fixture
def start() -> Iterator[Callable[[dict[str, str], int], Runners]]:
    """``start(jobs, count)``: runners, stopped when the test ends."""
    started: list[Runners] = []

    def make(jobs: dict[str, str], count: int) -> Runners:
        started.append(Runners(jobs, count))
        return started[-1]

    yield make
    for runners in started:
        runners.stop()


def here(runners: Runners, name: str) -> Callable[[], Path]:
    """A fixture's folder for job ``name``: its folder in the runners' own."""
    return partial(Path, runners.folder, name)


class TestRunners:
    def test_each_job_runs_once_and_its_result_reaches_the_fixture(self, start: Any) -> None:
        jobs = dict.fromkeys(("a", "b", "c"), HERE + "pid")
        runners = start(jobs, 2)
        pids = [runners.result(name, here(runners, name)) for name in jobs]
        assert [runs(runners, name) for name in jobs] == [1, 1, 1]
        runners.stop()
        assert set(pids) <= set(runners.processes) | {os.getpid()}
        assert not runners.folder.exists()

    def test_a_job_no_runner_has_begun_runs_here_in_the_fixtures_folder(
        self, start: Any, tmp_path: Path
    ) -> None:
        runners = start({"busy": HERE + "waiting_pid", "next": HERE + "pid"}, 1)
        claimed(runners, "busy")
        assert runners.result("next", lambda: tmp_path) == os.getpid()
        assert len(list(tmp_path.glob("ran-*"))) == 1
        go(runners).touch()
        assert runners.result("busy", lambda: tmp_path) in runners.processes

    def test_while_a_runner_is_on_its_job_the_suite_runs_the_next_one(self, start: Any) -> None:
        runners = start({"busy": HERE + "waiting_pid", "next": HERE + "freeing_pid"}, 1)
        claimed(runners, "busy")
        assert runners.result("busy", here(runners, "busy")) != os.getpid()
        assert runs(runners, "next") == 1  # done here while it waited: busy waited for it
        assert runners.result("next", here(runners, "next")) == os.getpid()
        assert runs(runners, "next") == 1

    def test_a_runners_temporary_files_go_in_its_folder(self, start: Any) -> None:
        runners = start({"tmp": HERE + "temporary"}, 1)
        claimed(runners, "tmp")
        assert runners.result("tmp", here(runners, "tmp")) == str(runners.folder / "tmp")
        runners.stop()
        assert not runners.folder.exists()

    def test_a_dropped_job_no_runner_has_begun_never_runs(self, start: Any) -> None:
        jobs = {"busy": HERE + "waiting_pid", "dropped": HERE + "pid", "kept": HERE + "freeing_pid"}
        runners = start(jobs, 1)
        claimed(runners, "busy")
        runners.keep({"busy", "kept"})
        assert list(runners.jobs) == ["busy", "kept"]
        assert runners.result("busy", here(runners, "busy")) in runners.processes
        assert runners.result("kept", here(runners, "kept")) == os.getpid()  # done here
        for process in runners.processes.values():
            process.wait(timeout=60)  # the runner is through its list
        assert (runs(runners, "busy"), runs(runners, "dropped"), runs(runners, "kept")) == (1, 0, 1)

    @pytest.mark.parametrize(
        ("job", "error", "message"),
        [
            ("fails", ValueError, "the job's own error in fails"),
            ("dies", RuntimeError, "the runner of job 'dies' died"),  # not waited for
        ],
    )
    def test_a_jobs_error_is_raised_in_its_fixture(
        self, start: Any, job: str, error: type[Exception], message: str
    ) -> None:
        runners = start({job: HERE + job}, 1)
        claimed(runners, job)
        with pytest.raises(error, match=message):
            runners.result(job, here(runners, job))


class TestYieldTheCpu:
    @pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroups here")
    def test_a_runner_lowers_its_session_group_not_only_itself(self) -> None:
        code = (
            "import os; from tests.yielding import yield_the_cpu; before = os.nice(0); "
            "yield_the_cpu(); print(os.nice(0) - before); "
            "print(open('/proc/self/autogroup').read())"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
            start_new_session=True,  # a group of its own, as a runner's: the suite's is not touched
        )  # fmt: skip
        lowered, group = result.stdout.splitlines()[:2]
        assert int(lowered) == min(10, 19 - os.nice(0)), result.stderr
        assert group.endswith(" nice 10"), group

    @pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroups here")
    def test_the_sessions_its_programs_begin_are_lowered_too(self) -> None:
        # torchrun and accelerate start each rank in a session of its own, a new group
        code = (
            "import subprocess, sys, time; from tests.yielding import yield_the_cpu; "
            "yield_the_cpu(); "
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], "
            "start_new_session=True); "
            "group = lambda: open(f'/proc/{child.pid}/autogroup').read().split()[-1]; "
            "print(group()); time.sleep(2); print(group()); child.kill()"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
            start_new_session=True, timeout=60,
        )  # fmt: skip
        assert result.stdout.split() == ["0", "10"], result.stderr


class TestJobs:
    def test_every_job_is_a_function_of_the_file_that_uses_it(self) -> None:
        for name, (target, user) in JOBS.items():
            path = module_path(target)
            assert path.is_file(), name
            assert has_jobs(path)
            text = path.read_text()
            assert f"\ndef {target.partition(':')[2]}(" in text, name
            assert re.search(rf"\n *def {user}\((.*\n)*? *.*ahead\.result\(", text), name

    def test_a_shared_job_is_taken_in_each_file_that_names_it(self) -> None:
        assert set(SHARED) <= set(JOBS)
        for name in SHARED:
            (own, _), *others = takers(name)
            assert others
            for path, user in others:
                assert path != own
                assert has_jobs(path)
                text = path.read_text()
                assert re.search(rf'\n *def {user}\((.*\n)*? *.*ahead\.result\("{name}"', text)

    def test_a_shared_job_starts_for_either_file(self) -> None:
        recipes = ROOT / "tests" / "recipes"
        stream, own = recipes / "test_accelerate_stream.py", recipes / "test_accelerate.py"
        assert wanted([(stream, {"test_x", "out"})]) == ["accelerate"]
        assert wanted([(own, {"test_x", "runs"}), (stream, {"out"})]) == ["accelerate"]
        assert wanted([(stream, {"test_x", "runs"})]) == []  # the other file's user name
        assert under([stream]) == ["accelerate"]

    def test_only_the_jobs_of_selected_tests_start_the_longest_first(self) -> None:
        bench, readme = ROOT / "tests" / "test_benchmarks.py", ROOT / "tests" / "test_readme.py"
        selected = [
            (readme, {"test_quick_start_runs_under_torchrun_as_written", "tmp_path"}),
            (bench, {"test_catalogue", "quick_run"}),
            (bench, {"test_other", "tmp_path"}),
            (ROOT / "tests" / "test_cli.py", {"runs"}),  # another file's user name
        ]
        assert wanted(selected) == ["benchmark", "torchrun"]  # a long one first
        shorter = [(bench, {"test_only_runs_the_selected_sections"}), *selected[:1]]
        assert wanted(shorter) == ["torchrun", "benchmark-sections"]  # its test comes later
        short = [(ROOT / "tests" / "test_cli.py", {"test_help_everywhere"}), shorter[0]]
        assert wanted(short) == ["cli-help", "benchmark-sections"]  # else in their order
        assert wanted([(bench, {"test_other"})]) == []
        assert set(LONGEST_FIRST) <= set(JOBS)

    def test_before_collection_the_jobs_of_the_named_files_start_the_longest_first(self) -> None:
        recipes = ROOT / "tests" / "recipes"
        assert under([recipes]) == [
            "accelerate", "lightning", "quick-tier",  # the longest
            "torchdata", "lightning-val",
            "lightning-sampler",  # then in their files' order
        ]  # fmt: skip
        files = [recipes / "test_lightning_sampler.py", ROOT / "tests" / "test_cli.py"]
        assert under([*files, ROOT / "rankaug"]) == [
            "cli-audit", "cli-audit-spawn", "cli-audit-set-epoch",  # the longest first
            "lightning-sampler", "cli-bad-target", "cli-help",
        ]  # fmt: skip
        assert under([ROOT / "tests" / "test_bytecode.py"]) == []
        assert set(under([ROOT / "tests"])) == set(JOBS)
