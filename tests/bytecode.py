"""Our own modules' bytecode for the suite's fresh interpreters, under PYTHONDONTWRITEBYTECODE.

The suite starts many fresh interpreters: spawned DataLoader workers, ranks, CLI runs,
the jobs of :mod:`tests.ahead`. Each reads the installed libraries' bytecode, but with
``PYTHONDONTWRITEBYTECODE`` set nothing ever caches rankaug's, the tests' or the
benchmarks', so every one of them compiles those anew: on the 2-core machine the
suite took 171-200 s so, 137-173 s with this (142-157 s with the setting unset).

:func:`compile_ours` compiles what has no bytecode yet, once, before collection (where
Python looks for it: ``__pycache__`` beside each source); every process reads it
(Python reads bytecode under ``PYTHONDONTWRITEBYTECODE``, it only writes none).
:func:`remove` takes away what it wrote once the suite ends, so the setting still
leaves no bytecode in the tree. Without the setting Python caches it itself and this
does nothing.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rankaug", "tests", "benchmarks")


def compile_ours(root: Path = ROOT) -> list[Path]:
    """Compile the sources of :data:`PACKAGES` that have no bytecode; return the files made.

    Nothing under ``PYTHONDONTWRITEBYTECODE`` unset (Python caches bytecode itself) or
    ``PYTHONPYCACHEPREFIX`` set (the user chose where it goes). A source that does not
    compile is left to its import to report; a tree it cannot write into ends the work.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return []
    made = []
    for package in PACKAGES:
        for source in sorted((root / package).rglob("*.py")):
            cached = Path(importlib.util.cache_from_source(str(source)))
            if cached.exists():
                continue
            try:
                py_compile.compile(str(source), cfile=str(cached), doraise=True)
            except py_compile.PyCompileError:
                continue  # its import reports the error, as it would without this
            except OSError:
                return made  # a tree we cannot write into: every process compiles, as before
            made.append(cached)
    return made


def remove(made: list[Path]) -> None:
    """Remove the files :func:`compile_ours` made, and their folders left empty."""
    for cached in made:
        cached.unlink(missing_ok=True)
    for folder in {cached.parent for cached in made}:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
