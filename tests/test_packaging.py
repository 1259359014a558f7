"""The package as users get it: the sdist and wheel build, check, install and run.

The files git tracks or would track are copied to a scratch directory and built there
(``python -m build --no-isolation``: this venv's setuptools, which must satisfy
``[build-system] requires``; nothing is written into the checkout). ``twine check
--strict`` reads both. The wheel is installed, without its dependencies, into a fresh
venv whose only other path is a ``.pth`` line naming this venv's site-packages, so the
dependencies come from there while its editable rankaug (an import hook that only a
site directory's own ``.pth`` files start) stays out; the demo then runs from the
installed copy, outside the checkout. The sdist must hold every file git tracks (a
packager runs the tests and builds the docs from it: ``MANIFEST.in``), and the whole
suite must collect in it, unpacked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import rankaug
from tests import ahead

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def run(*command: str | Path, cwd: Path, timeout: int = 300) -> str:
    env = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    assert result.returncode == 0, (command, result.stdout[-4000:], result.stderr[-4000:])
    return result.stdout


def project_files() -> list[str]:
    """The files git tracks or would track; in an unpacked sdist (no git), what it holds."""
    sources = ROOT / "rankaug.egg-info" / "SOURCES.txt"
    if not (ROOT / ".git").exists() and sources.is_file():
        names = sources.read_text().splitlines()
        return [name for name in names if not name.startswith("rankaug.egg-info/")]
    tracked = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                  cwd=ROOT).split("\0")  # fmt: skip
    # a file deleted but not yet committed is skipped
    return [name for name in tracked if name and (ROOT / name).is_file()]


def loose_files() -> set[str]:
    """Files git does not track, at the top of a checkout (a log, notes): not the project's.

    Untracked files in the project's folders (a test not committed yet) are its own; in an
    unpacked sdist (no git) there are none.
    """
    if not (ROOT / ".git").exists():
        return set()
    untracked = run("git", "ls-files", "-z", "--others", "--exclude-standard", cwd=ROOT)
    return {name for name in untracked.split("\0") if name and "/" not in name}


@dataclass(frozen=True)
class Built:
    """The distributions, the venv the wheel went into, and what it printed there."""

    dist: Path
    venv: Path
    files: list[str]  # what it was built from (project_files)
    collected: str  # pytest --collect-only in the unpacked sdist
    imported: str  # rankaug.__file__ and the installed version
    version: str  # rankaug --version
    demo: str  # the demo's output


def build_install_and_run(folder: Path) -> Built:
    """Build both, install the wheel in a fresh venv and run it (a job of tests.ahead)."""
    source, out, env = folder / "source", folder / "dist", folder / "venv"
    for path in (source, out, env):
        path.mkdir()
    tracked = project_files()
    for name in tracked:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source, cwd=source)
    run(sys.executable, "-m", "venv", "--without-pip", env, cwd=env)
    python = env / "bin" / "python"
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=env)
    Path(site.strip(), "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(folder / "unpacked", filter="data")
    (unpacked,) = (folder / "unpacked").iterdir()
    # Collection only (its runners start with no job), from the sdist: a subfolder with
    # its helpers and a top-level file, through the conftest (every file's presence is
    # test_the_sdist_is_the_whole_project's; collecting all of it cost the suite 15 s,
    # tests/cache 8 CPU-s, tests/datasets 5; rewriting asserts, never cached under
    # PYTHONDONTWRITEBYTECODE, is not what it checks)
    collected = run(sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                    "no:cacheprovider", "--assert=plain", "tests/datasets", "tests/test_keys.py",
                    cwd=unpacked)  # fmt: skip
    (wheel,) = out.glob("*.whl")
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
        "--no-index", wheel, cwd=env)  # fmt: skip
    code = "import rankaug, importlib.metadata as m; print(rankaug.__file__, m.version('rankaug'))"
    # The whole demo (2 ranks x 2 workers, the sheet), on less data than its default.
    return Built(
        dist=out,
        venv=env,
        files=tracked,
        collected=collected,
        imported=run(python, "-c", code, cwd=env),
        version=run(env / "bin" / "rankaug", "--version", cwd=env),
        demo=run(python, "-m", "rankaug", "demo", "--output", env / "demo", "--epochs", "1",
                 "--samples", "8", "--size", "64", cwd=env),
    )  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return ahead.result("wheel", lambda: tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def dist(built: Built) -> Path:
    return built.dist


class TestDistributions:
    def test_the_build_backend_accepts_the_licence_expression(self) -> None:
        # license = "MIT" (PEP 639) needs setuptools 77; 75.8 rejects it. The build below
        # runs this venv's setuptools, so the floor itself is checked here.
        config = (ROOT / "pyproject.toml").read_text()  # (tomllib needs Python 3.11)
        assert re.search(r'^license = "MIT"$', config, re.MULTILINE)
        floor = re.search(r'^requires = \["setuptools>=(\d+)[\d.]*"\]', config, re.MULTILINE)
        assert floor is not None
        assert int(floor.group(1)) >= 77

    def test_both_build_and_pass_twine_check(self, dist: Path) -> None:
        version = rankaug.__version__
        names = sorted(path.name for path in dist.iterdir())
        assert names == [f"rankaug-{version}-py3-none-any.whl", f"rankaug-{version}.tar.gz"]
        out = run(sys.executable, "-m", "twine", "check", "--strict", *dist.iterdir(), cwd=dist)
        assert out.count("PASSED") == 2, out

    def test_the_wheel_holds_the_package_its_licence_and_nothing_else(self, dist: Path) -> None:
        (wheel,) = dist.glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            metadata = archive.read(f"rankaug-{rankaug.__version__}.dist-info/METADATA").decode()
        info = f"rankaug-{rankaug.__version__}.dist-info"
        assert f"{info}/licenses/LICENSE" in names
        assert "rankaug/py.typed" in names
        assert {name.split("/")[0] for name in names} == {"rankaug", info}
        assert "License-Expression: MIT" in metadata
        assert f"Version: {rankaug.__version__}" in metadata

    def test_the_sdist_holds_the_licence_and_the_readme(self, dist: Path) -> None:
        (sdist,) = dist.glob("*.tar.gz")
        with tarfile.open(sdist) as archive:
            names = archive.getnames()
        top = f"rankaug-{rankaug.__version__}"
        assert {f"{top}/LICENSE", f"{top}/README.md", f"{top}/pyproject.toml"} <= set(names)

    def test_the_sdist_is_the_whole_project(self, built: Built) -> None:
        # A packager runs the tests and builds the docs from it: every file git tracks
        # (tests/ with its conftest, helpers and subfolders, docs/, benchmarks/, the
        # changelog and the constraints), and nothing else but setuptools' metadata.
        (sdist,) = built.dist.glob("*.tar.gz")
        top = f"rankaug-{rankaug.__version__}/"
        with tarfile.open(sdist) as archive:
            names = {info.name.removeprefix(top) for info in archive if info.isfile()}
        metadata = {"PKG-INFO", "setup.cfg"}
        assert {
            name for name in names if not name.startswith("rankaug.egg-info/")
        } - metadata == set(built.files) - loose_files()
        assert {"tests/conftest.py", "tests/cache/helpers.py", "docs/reference/api.md",
                "mkdocs.yml", "CHANGELOG.md", "constraints.txt"} <= names  # fmt: skip

    def test_the_suite_collects_from_the_sdist(self, built: Built) -> None:
        # (run() asserted pytest's exit status: 0, no collection error)
        assert re.search(r"^\d+ tests collected", built.collected, re.MULTILINE)


class TestInstalledWheel:
    def test_it_imports_from_the_venv_not_the_checkout(self, built: Built) -> None:
        where, version = built.imported.split()
        assert Path(where).is_relative_to(built.venv)
        assert version == rankaug.__version__

    def test_its_script_and_demo_run(self, built: Built) -> None:
        assert built.version.strip() == f"rankaug {rankaug.__version__}"
        assert "8 of 8" in built.demo, built.demo
        assert " 0 of 8" in built.demo, built.demo
        assert (built.venv / "demo" / "rankaug-demo.png").is_file()
