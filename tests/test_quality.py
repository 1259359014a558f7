"""The house rules, checked: lint, format, types, and no global random state."""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ahead
from tests.random_audit import dotted, global_random_calls
from tests.toolchain import TOOLCHAIN

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rankaug"
MODULE_LINES = 400  # the house style's most per module

# Who may call global-state functions (tests/random_audit.py finds them): only the
# seeding helpers (their whole job) and the demo's reproduction of YOLOv5's approach.
# (The driver of torch-global transforms seeds and restores torch.default_generator, the
# CPU one, by its methods.)
ALLOWED = {
    ("seeding.py", "random.seed"),
    ("seeding.py", "np.random.seed"),
    ("seeding.py", "torch.manual_seed"),
    # the demo's YOLOv5-style side reproduces the seeds' bug on purpose
    ("cli/legacy.py", "random.choices"),
    ("cli/legacy.py", "random.uniform"),
    # put back the CPU generator's state a call changed: a kornia draw refused for using it,
    # the audit's first try before it tries again with a box target
    ("batch/_kornia.py", "torch.random.set_rng_state"),
    ("cli/batch_probe.py", "torch.random.set_rng_state"),
    ("batch/_kornia.py", "torch.cuda.set_rng_state"),  # the same, on the GPU's generator
}


# What Python 3.11 and later added that the package must not use: requires-python is
# >=3.10 (typing_extensions has the typing names; the modules have no backport here).
NEWER_THAN_3_10 = {
    "typing": {"NotRequired", "Required", "Self", "LiteralString", "Never", "Unpack",
               "TypeVarTuple", "assert_never", "assert_type", "reveal_type",
               "dataclass_transform", "get_overloads", "clear_overloads", "override",
               "TypeAliasType", "get_protocol_members", "is_protocol", "ReadOnly", "TypeIs"},
    "enum": {"StrEnum", "ReprEnum", "verify", "member", "nonmember", "global_enum"},
    "datetime": {"UTC"},
    "tomllib": set(),  # the whole module
    "wsgiref.types": set(),
}  # fmt: skip


def newer_than_3_10(path: Path) -> set[str]:
    """Python 3.11+ names ``path`` imports or uses; a syntax error if its syntax is newer."""
    tree = ast.parse(path.read_text(), filename=str(path), feature_version=(3, 10))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in NEWER_THAN_3_10:
            names = NEWER_THAN_3_10[node.module]
            found |= {f"{node.module}.{a.name}" for a in node.names if not names or a.name in names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if NEWER_THAN_3_10.get(a.name) == set()}
        elif (
            isinstance(node, ast.Attribute)
            and (name := dotted(node.value)) is not None
            and node.attr in NEWER_THAN_3_10.get(name, ())
        ):
            found.add(f"{name}.{node.attr}")
    return found


def run(*command: str) -> None:
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def mypy(_: Path) -> subprocess.CompletedProcess[str]:
    """``mypy`` as configured in pyproject.toml (a job of tests.ahead).

    Its incremental cache is kept per environment outside the checkout
    (:func:`mypy_cache`), so a fresh clone with the same packages reuses what it knows
    of torch and the rest (about 30 CPU-s cold, 1 warm); mypy checks every cached
    module by its content, so a changed file is checked again wherever it lives.
    """
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(mypy_cache())]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def mypy_cache() -> Path:
    """``$XDG_CACHE_HOME/rankaug-tests/mypy-KEY`` (``~/.cache`` by default): one folder
    per Python and installed distributions (names and versions), so two venvs never
    overwrite each other's."""
    installed = sorted(
        f"{dist.metadata['Name']}=={dist.version}" for dist in importlib.metadata.distributions()
    )
    key = hashlib.sha256("\n".join([sys.version, *installed]).encode()).hexdigest()[:16]
    home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(home) / "rankaug-tests" / f"mypy-{key}"


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed next to {sys.executable}")
    return found


class TestHouseRules:
    def test_no_global_random_state_in_library_code(self) -> None:
        offenders = {
            (path.relative_to(PACKAGE).as_posix(), call)
            for path in PACKAGE.rglob("*.py")
            for call in global_random_calls(path)
        }
        assert offenders - ALLOWED == set()

    def test_the_package_runs_on_python_3_10(self) -> None:
        offenders = {
            (path.relative_to(PACKAGE).as_posix(), name)
            for path in PACKAGE.rglob("*.py")
            for name in newer_than_3_10(path)
        }
        assert offenders == set()

    def test_the_3_10_check_finds_newer_names_and_syntax(self, tmp_path: Path) -> None:
        sample = tmp_path / "new.py"
        sample.write_text(
            "import tomllib, typing\nfrom typing import NotRequired, TypedDict\n"
            "from typing_extensions import Self\nx: typing.Self\nimport enum\nenum.StrEnum\n"
        )
        assert newer_than_3_10(sample) == {"tomllib", "typing.NotRequired", "typing.Self",
                                           "enum.StrEnum"}  # fmt: skip
        sample.write_text("try:\n    pass\nexcept* ValueError:\n    pass\n")
        with pytest.raises(SyntaxError):
            newer_than_3_10(sample)

    def test_every_module_is_400_lines_or_fewer(self) -> None:
        # one module per concept, each small: a bigger concept becomes a package
        longer = {
            path.relative_to(PACKAGE).as_posix(): lines
            for path in PACKAGE.rglob("*.py")
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
        }
        assert longer == {}

    def test_ruff_lint(self) -> None:
        run(tool("ruff"), "check", ".")

    def test_ruff_format(self) -> None:
        run(tool("ruff"), "format", "--check", ".")

    @TOOLCHAIN
    def test_mypy_strict(self) -> None:
        result = ahead.result("mypy", lambda: ROOT)
        assert result.returncode == 0, result.stdout + result.stderr
