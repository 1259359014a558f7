"""Jobs that only wait for other programs, run ahead of their tests beside the suite.

Most of the suite runs in the pytest process, on one core. A few fixtures spend their
time in whole programs: a Lightning or accelerate training, the docs site's build, the
wheel's build and install, mypy, the benchmark's quick run, loaders whose workers are
spawned (each imports torch afresh). Each such fixture names a *job* in
:data:`JOBS`, a module-level function ``job(folder) -> result`` of its own test file
(one program's run that two files' tests take: :data:`SHARED`).
Once pytest has collected, :func:`start` hands the jobs of the selected test files to
two runner processes (``python -m tests.ahead FOLDER NAME=MODULE:FUNCTION...``), which
take them one at a time in the order their tests come; those files' tests run last
(tests/conftest.py). A run of whole files and folders starts them before collection
instead (:func:`start_early`, on the jobs of those files), and drops once collected
the jobs no selected test takes. A fixture takes its job's result with :func:`result`: the
runner's, or, for a job no runner has begun, its own run of it; while a runner is on
its job, the suite runs the next job nobody has begun. Each job runs once, the same
way either way, and its error is raised in its fixture. ``RANKAUG_TESTS_AHEAD=N`` sets
the number of runners (0: none, every job runs in its fixture, as in pytest-xdist).
"""

from __future__ import annotations

import functools
import importlib
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from tests.yielding import yield_the_cpu

ROOT = Path(__file__).resolve().parents[1]

# name -> ("module:function", its user): the module is the test file whose tests take
# the job's result, the user the fixture or test that takes it (scheduled only when a
# selected test is, or uses, that one).
JOBS: dict[str, tuple[str, str]] = {
    "ddp-wrapper": ("tests.ddp.test_ddp_wrapper:launch_once", "runs"),
    "ddp-mosaic": ("tests.ddp.test_ddp_mosaic:launch_once", "runs"),
    "ddp-mix": ("tests.ddp.test_ddp_mix:launch_once", "runs"),
    "cli-audit": ("tests.test_cli:audit_every_target", "audit"),
    "cli-audit-set-epoch": ("tests.test_cli:audit_set_epoch_targets", "audit_set_epoch"),
    "cli-audit-spawn": (
        "tests.test_cli:audit_spawned",
        "test_audit_spawned_persistent_workers_pass_rankaug",
    ),
    "cli-stream-audit": ("tests.test_cli_stream:audit_streams", "audit"),
    "lightning": ("tests.recipes.test_lightning:train_and_resume", "runs"),
    "lightning-sampler": ("tests.recipes.test_lightning_sampler:what_lightning_does", "lightning"),
    "lightning-val": ("tests.recipes.test_lightning_val:fit_with_validation", "runs"),
    "accelerate": ("tests.recipes.test_accelerate:launch", "runs"),
    "torchdata": ("tests.recipes.test_torchdata:save_and_resume", "runs"),
    "quick-tier": (
        "tests.recipes.test_collection:collect_quick_tier",
        "test_the_quick_tier_collects_without_the_frameworks",
    ),
    "benchmark": ("tests.test_benchmarks:run_quick", "quick_run"),
    "benchmark-sections": (
        "tests.test_benchmarks:run_two_sections",
        "test_only_runs_the_selected_sections",
    ),
    "wheel": ("tests.test_packaging:build_install_and_run", "built"),
    "mypy": ("tests.test_quality:mypy", "test_mypy_strict"),
    "sampler-spawn": (
        "tests.test_sampler:two_spawned_epochs",
        "test_epochs_reach_spawned_workers_with_every_index",
    ),
    "epoch-spawn": (
        "tests.test_epoch:every_set_spawned",
        "test_persistent_spawned_workers_see_every_set",
    ),
    "passes-spawn": (
        "tests.test_passes:spawned_subset_passes",
        "test_spawned_persistent_workers_find_it_too",
    ),
    "stream-spawn": (
        "tests.stream.test_augment:spawned_passes",
        "test_a_loader_with_more_spawned_workers_runs_one_epoch",
    ),
    "cache-spawn": (
        "tests.cache.test_init:fill_and_read_spawned",
        "test_spawned_dataloader_workers_fill_and_read",
    ),
    "numpy-1": (
        "tests.cache.test_unpickle:numpy_1",
        "test_numpy_1_core_is_the_fallback",
    ),
    "compare": (
        "tests.test_compare:against_head",
        "test_runs_a_case_against_head",
    ),
    "sampler-left-open": (
        "tests.test_sampler:left_open",
        "test_a_pass_left_open_at_exit_ends_quietly",
    ),
    "stream-left-open": (
        "tests.stream.test_base:left_open",
        "test_a_pass_left_open_at_exit_ends_quietly",
    ),
    "epoch-afresh": (
        "tests.test_epoch:unpickled_afresh",
        "test_each_epoch_is_a_class_found_by_name_in_a_fresh_process",
    ),
    "cli-bad-target": (
        "tests.test_cli:bad_target",
        "test_bad_target_through_python_m",
    ),
    "cli-help": (
        "tests.test_cli:help_text",
        "test_help_everywhere",
    ),
    "cache-verify": (
        "tests.test_cli_cache:verified_as_a_module",
        "test_as_a_module",
    ),
    "batch-stream": (
        "tests.batch.test_batch_augment:stream_elsewhere",
        "test_the_default_stream_is_the_same_in_every_process",
    ),
    "batch-alone": (
        "tests.batch.test_batch_augment:imported_alone",
        "test_rankaug_imports_without_kornia",
    ),
    "epoch-descriptors": (
        "tests.test_epoch:many_epochs",
        "test_thousands_of_wrappers_hold_a_handful_of_descriptors",
    ),
    "site": ("tests.test_site:build", "test_mkdocs_builds_strictly"),
    "torchrun": (
        "tests.test_readme:quick_start_under_torchrun",
        "test_quick_start_runs_under_torchrun_as_written",
    ),
}

# name -> ("module", its user) of each other test file that takes the job's result too:
# one launch for two files' tests (scheduled for either file; once per process either way)
SHARED: dict[str, tuple[tuple[str, str], ...]] = {
    "accelerate": (("tests.recipes.test_accelerate_stream", "out"),),
}

Outcome = tuple[str, Any, str]  # ("ok", result, "") or ("error", exception, traceback)


def module_path(target: str) -> Path:
    """The file of ``"module:function"`` (or of ``"module"``)."""
    return ROOT / (target.partition(":")[0].replace(".", "/") + ".py")


@functools.cache
def takers(name: str) -> tuple[tuple[Path, str], ...]:
    """The test files that take job ``name``'s result, each with its user there."""
    target, user = JOBS[name]
    return ((module_path(target), user), *((module_path(m), u) for m, u in SHARED.get(name, ())))


def _function(target: str) -> Callable[[Path], Any]:
    module, _, function = target.partition(":")
    job: Callable[[Path], Any] = getattr(importlib.import_module(module), function)
    return job


def _call(target: str, folder: Path) -> Outcome:
    folder.mkdir(exist_ok=True)
    try:
        return ("ok", _function(target)(folder), "")
    except BaseException as error:  # handed to the fixture, which raises it
        return ("error", error, traceback.format_exc())


def _claim(folder: Path, name: str) -> bool:
    """Whether this process takes job ``name``: the first to ask does, once."""
    try:
        descriptor = os.open(folder / f"{name}.claimed", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(descriptor, str(os.getpid()).encode())
    os.close(descriptor)
    return True


class Runners:
    """Runner processes working through ``jobs`` (name -> "module:function")."""

    def __init__(self, jobs: Mapping[str, str], count: int) -> None:
        self.jobs = dict(jobs)
        self.folder = Path(tempfile.mkdtemp(prefix="rankaug-tests-ahead-"))
        self.here: dict[str, Outcome] = {}  # the jobs this process ran
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        pairs = [f"{name}={target}" for name, target in self.jobs.items()]
        # the jobs' temporary files (torchrun's logs, multiprocessing's sockets) go in
        # the folder, removed with it: their programs leave some behind
        (self.folder / "tmp").mkdir()
        environment = {**os.environ, "TMPDIR": str(self.folder / "tmp")}
        for number in range(count):
            with (self.folder / f"runner{number}.log").open("wb") as log:
                process = subprocess.Popen(
                    [sys.executable, "-m", "tests.ahead", str(self.folder), *pairs],
                    cwd=ROOT,
                    env=environment,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,  # its jobs' processes stop with it
                )
            self.processes[process.pid] = process

    def result(self, name: str, folder: Callable[[], Path]) -> Any:
        """Job ``name``'s result, from a runner or run here (in ``folder()``)."""
        done = self.folder / f"{name}.pickle"
        if name not in self.here and _claim(self.folder, name):
            self.here[name] = _call(self.jobs[name], folder())
        while name not in self.here and not done.exists():
            spare = next((n for n in self.jobs if _claim(self.folder, n)), None)
            if spare is not None:
                self.here[spare] = _call(self.jobs[spare], self.folder / spare)
            elif not self._running(name) and not done.exists():
                raise RuntimeError(f"the runner of job {name!r} died:\n{self._logs()}")
            else:
                time.sleep(0.05)
        outcome, value, text = self.here.get(name) or pickle.loads(done.read_bytes())
        if outcome == "ok":
            return value
        if isinstance(value, BaseException):
            raise value
        raise RuntimeError(f"job {name!r} failed:\n{text}")

    def keep(self, names: Collection[str]) -> None:
        """Drop every job but ``names``: claimed here, so that no runner begins it."""
        for name in [name for name in self.jobs if name not in names]:
            _claim(self.folder, name)
            del self.jobs[name]

    def stop(self) -> None:
        """Stop the runners and their jobs' processes; remove the folder."""
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _running(self, name: str) -> bool:
        pid = int((self.folder / f"{name}.claimed").read_text() or 0)
        process = self.processes.get(pid)
        return process is None or process.poll() is None  # (None: claimed, pid not written)

    def _logs(self) -> str:
        return "".join(path.read_text(errors="replace") for path in self.folder.glob("*.log"))


_session: Runners | None = None


def runners() -> int:
    """How many runners take jobs: ``RANKAUG_TESTS_AHEAD``, 2 unless set."""
    return int(os.environ.get("RANKAUG_TESTS_AHEAD", "2"))


def has_jobs(path: Path) -> bool:
    """Whether the test file at ``path`` takes a job's result."""
    return path in _job_files()


@functools.cache
def _job_files() -> frozenset[Path]:
    # once: the suite's collection asks for each of its ~5,000 tests (0.6-1 s afresh)
    return frozenset(path for name in JOBS for path, _ in takers(name))


# The longest jobs, taken first: the suite's job tests run last, and a long job begun
# late kept it waiting at the end (the benchmark's quick run, 35 s, was still waiting for
# a runner when the suite reached it; later compare.py, 35 s). Ranked by CPU-s measured
# alone (python -m tests.cpu: each in a new interpreter, every process it starts
# counted: 6-30 s), less the imports and fork server a runner shares between its jobs
# (about 3.5 s), the longest first; the rest take 5 CPU-s or less so, the most of them
# 1-2 s in a runner. mypy leads: 1 CPU-s when its cache knows every file, up to 30 cold,
# and after a day's merges about 8 (checked again where files changed): ranked by its
# warm figure, it came late, and the suite waited 8.2 s for it at its very end.
LONGEST_FIRST: tuple[str, ...] = (
    "mypy", "accelerate", "wheel", "ddp-wrapper", "cli-stream-audit", "lightning", "quick-tier",
    "benchmark", "cli-audit", "torchdata", "cli-audit-spawn", "torchrun", "stream-spawn",
    "compare", "site", "passes-spawn", "cli-audit-set-epoch", "ddp-mosaic", "ddp-mix",
    "lightning-val",
)  # fmt: skip


def wanted(selected: Iterable[tuple[Path, Collection[str]]]) -> list[str]:
    """The jobs the ``selected`` tests take: the longest first, then in the tests' order.

    Args:
        selected: Each selected test's file and names: its own and its fixtures'.
    """
    names = {
        name: None
        for path, names in selected
        for name in JOBS
        if any(user in names and file == path for file, user in takers(name))
    }
    first = [name for name in LONGEST_FIRST if name in names]
    return first + [name for name in names if name not in first]


def under(paths: Iterable[Path]) -> list[str]:
    """The jobs of the test files under ``paths``: the longest first, then in the order
    pytest collects their files (by name, folder by folder)."""
    folders = [Path(path).resolve() for path in paths]
    names = [
        name
        for name in JOBS
        if any(file.is_relative_to(folder) for file, _ in takers(name) for folder in folders)
    ]
    names.sort(key=lambda name: module_path(JOBS[name][0]).relative_to(ROOT).parts)
    first = [name for name in LONGEST_FIRST if name in names]
    return first + [name for name in names if name not in first]


def start_early(paths: Iterable[Path]) -> None:
    """Start the session's runners before collection, on the jobs of the files under
    ``paths`` (:func:`under`): the suite's collection takes one core for 10 s or more,
    in which they work on the other; :func:`start` then drops those no test takes.

    For a run that selects by file or folder only: a run that selects tests within
    files (``-k``, ``-m``, ``file::test``) starts its runners once it has collected.
    """
    global _session
    names = under(paths)
    if _session is None and names and runners() > 0:
        _session = Runners({name: JOBS[name][0] for name in names}, runners())


def start(selected: Iterable[tuple[Path, Collection[str]]]) -> None:
    """Start the session's runners on the jobs the ``selected`` tests take.

    Runners started early (:func:`start_early`) keep only those jobs: a job no test
    takes is dropped, unless a runner has begun it already.
    """
    global _session
    names = wanted(selected)
    if _session is not None:
        _session.keep(names)
    elif names and runners() > 0:
        _session = Runners({name: JOBS[name][0] for name in names}, runners())


def result(name: str, folder: Callable[[], Path]) -> Any:
    """Job ``name``'s result: the session runners', or run here in ``folder()``."""
    if _session is None or name not in _session.jobs:
        return _function(JOBS[name][0])(folder())
    return _session.result(name, folder)


def stop() -> None:
    """Stop the session's runners."""
    global _session
    if _session is not None:
        _session.stop()
        _session = None


def _run(folder: Path, pairs: list[str]) -> None:
    for name, _, target in (pair.partition("=") for pair in pairs):
        if not _claim(folder, name):  # taken by the suite or another runner
            continue
        outcome = _call(target, folder / name)
        try:
            data = pickle.dumps(outcome)
        except Exception:  # an unpicklable result or error: the traceback is enough
            data = pickle.dumps(("error", None, outcome[2] or "unpicklable result"))
        partial = folder / f"{name}.partial"
        partial.write_bytes(data)
        partial.replace(folder / f"{name}.pickle")


if __name__ == "__main__":
    yield_the_cpu()
    _run(Path(sys.argv[1]), sys.argv[2:])
