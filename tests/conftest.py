"""Shared test set-up. No global seeding here: rankaug must not need it."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# No garbage collector until the tests are collected (pytest_collection_finish): imports
# and collection grow the heap from nothing to ~460,000 objects, and the collector walked
# all of it again at each quarter's growth (25 full collections, 4.3 of the quick tier's
# 20 CPU-s of collection); what little garbage that makes is freed once, at its end.
gc.disable()

# albumentations checks PyPI for a newer release on import unless told not to.
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

from hypothesis import HealthCheck, settings  # noqa: E402  (after gc.disable)
from torch._utils import ExceptionWrapper  # noqa: E402

from tests import ahead, bytecode  # noqa: E402
from tests.toolchain import missing_optional  # noqa: E402

# 40 examples a property (hypothesis draws anew every run; the cases found once are
# pinned with @example): at 60 the suite's properties took about 21 s of its 180
settings.register_profile(
    "rankaug",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("rankaug")

_IMPORTED = re.compile(r"^\s*>>> (?:from|import) (\w+)", re.MULTILINE)

# The plugin that hides the framework extras runs only when asked for (-p).
collect_ignore = ["without_extras.py"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every ``ddp`` and ``framework`` test is ``slow`` too: the quick tier skips them.

    In a pytest-xdist worker (``-n 2 --dist loadfile --no-loadscope-reorder``, opt-in:
    CONTRIBUTING.md), the files that hold a slow test come first: ``loadfile`` hands each
    file to one worker (a module's fixture, a launch or a build, runs once), in this
    order, so the long files start early and the short ones fill in at the end.
    """
    for item in items:
        if item.get_closest_marker("ddp") or item.get_closest_marker("framework"):
            item.add_marker(pytest.mark.slow)
        if isinstance(item, pytest.DoctestItem) and item.dtest is not None:
            absent = missing_optional(_IMPORTED.findall(item.dtest.docstring or ""))
            if absent:  # a docstring's example of BatchAugment, without kornia
                reason = f"needs {', '.join(absent)}, installed on Python 3.11 and newer only"
                item.add_marker(pytest.mark.skip(reason=reason))
    if hasattr(config, "workerinput"):
        slow = {item.path for item in items if item.get_closest_marker("slow")}
        items.sort(key=lambda item: item.path not in slow)  # (stable: file order kept)
    elif ahead.runners() > 0:
        # The files whose fixtures take a job of tests.ahead come last: by then its
        # runners have done most of them, beside the rest of the suite.
        items.sort(key=lambda item: ahead.has_jobs(item.path))


@pytest.fixture(autouse=True, scope="session")
def _loaders_stop_at_a_worker_error() -> Iterator[None]:
    """A worker's error shuts its loader's workers down before it is raised.

    Otherwise they stop when the garbage collector frees the loader, which is kept in a
    reference cycle by the raised error's traceback: by then the collector may have
    closed the loader's queues, and each worker is waited for 5 s (a 10 s stall in
    whichever test happens to collect it). Nothing else changes: the error is the same.
    """
    from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

    iterators: list[Any] = [_MultiProcessingDataLoaderIter]
    with contextlib.suppress(ImportError):  # torchdata's StatefulDataLoader has its own
        from torchdata.stateful_dataloader import stateful_dataloader

        iterators.append(stateful_dataloader._StatefulMultiProcessingDataLoaderIter)

    def stopping(process: Any) -> Any:
        def stop_first(self: Any, data: Any, *args: Any) -> Any:
            if isinstance(data, ExceptionWrapper):
                self._shutdown_workers()
            return process(self, data, *args)

        return stop_first

    with pytest.MonkeyPatch.context() as patch:
        for iterator in iterators:
            patch.setattr(iterator, "_process_data", stopping(iterator._process_data))
        yield


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_under_pytest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every temporary file of the session goes under pytest's base folder.

    The docs' examples (``tempfile.mkdtemp()``), litdata's ``optimize`` (``<tmp>/chunks``,
    ``<tmp>/data``) and mosaicml-streaming (``<tmp>/000000_barrier_filelock``, one more
    each run, as it skips the names it finds) leave what they make in the temporary
    folder. Here that folder is one in pytest's base folder, of which pytest keeps the
    last three runs', so nothing piles up in ``/tmp``; the processes the tests start
    (ranks, DataLoader workers) inherit it through ``TMPDIR``.
    """
    folder = tmp_path_factory.mktemp("tempdir")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(folder))
        patch.setenv("TMPDIR", str(folder))
        yield folder


_compiled: list[Path] = []  # what tests.bytecode wrote, removed at the end


def pytest_configure(config: pytest.Config) -> None:
    """Start the jobs of tests.ahead where the run selects whole files, then compile our
    modules for the fresh interpreters to come (tests/bytecode.py), about 2 s in which the
    runners have the other core (a process that imports a module before it is compiled
    compiles it for itself, as without tests/bytecode.py)."""
    if not hasattr(config, "workerinput"):
        if _selects_whole_files(config):
            ahead.start_early(config.invocation_params.dir / arg for arg in config.args)
        _compiled.extend(bytecode.compile_ours())


# What selects tests within files, or runs none: with any, the jobs start once collected.
_NARROWING = (
    "keyword", "markexpr", "deselect", "ignore", "ignore_glob", "lf", "failedfirst",
    "stepwise", "collectonly", "help", "showfixtures", "show_fixtures_per_test",
    "markers", "setuponly", "setupplan", "numprocesses",
)  # fmt: skip


def _selects_whole_files(config: pytest.Config) -> bool:
    """Whether the run's tests are every test of the files and folders it names."""
    return (
        ahead.runners() > 0
        and not any(getattr(config.option, option, None) for option in _NARROWING)
        and all("::" not in arg for arg in config.args)
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Turn the garbage collector back on; start the jobs of tests.ahead that the
    selected tests use (not in xdist workers)."""
    _collect_garbage_again()
    if (
        ahead.runners() > 0
        and not hasattr(session.config, "workerinput")
        and not session.config.option.collectonly
    ):
        ahead.start(
            (item.path, {item.name.partition("[")[0], *getattr(item, "fixturenames", ())})
            for item in session.items
        )


def _collect_garbage_again() -> None:
    """What collection left in reference cycles freed, and the collector on again."""
    if not gc.isenabled():
        gc.collect()
        gc.enable()


def pytest_sessionfinish(session: pytest.Session) -> None:
    _collect_garbage_again()  # (a session whose collection was cut short)
    ahead.stop()
    bytecode.remove(_compiled)


def pytest_unconfigure(config: pytest.Config) -> None:
    ahead.stop()  # runners started early, in a run that ended before its session did


@pytest.fixture
def process_group(tmp_path: Path) -> Iterator[Callable[[], None]]:
    """Starts a one-process gloo group (rank 0) when called; destroyed after the test."""
    import torch.distributed as dist

    def start() -> None:
        rendezvous = f"file://{tmp_path / 'rendezvous'}"
        dist.init_process_group("gloo", init_method=rendezvous, rank=0, world_size=1)

    yield start
    if dist.is_initialized():
        dist.destroy_process_group()
