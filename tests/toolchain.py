"""What the test extra installs on Python 3.11 and newer only, and the checks that need it.

The library runs on Python 3.10 (the whole suite passes there), but kornia 0.9, which
``BatchAugment`` needs, requires Python 3.11, so the test extra asks for it there only;
and the versions pip resolves for 3.10 of the docs toolchain (pymdown-extensions 12)
and of numpy's type stubs (numpy 2.2) fail ``mkdocs build --strict`` and ``mypy
--strict`` for reasons of their own. CI checks those on 3.11 (``.ci/run``).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Collection

import pytest

__all__ = ["ON_3_11_ONLY", "TOOLCHAIN", "missing_optional"]

_BEFORE_3_11: bool = sys.version_info < (3, 11)  # (a name: mypy checks for one version)
ON_3_11_ONLY = frozenset({"kornia"})
"""Modules the test extra installs on Python 3.11 and newer only."""

TOOLCHAIN = pytest.mark.skipif(
    _BEFORE_3_11,
    reason="the docs toolchain and numpy's type stubs pip resolves for Python 3.10 differ; "
    "CI checks the site and the types on 3.11",
)
"""Marks a check of the docs site or the types: run on Python 3.11 and newer."""


def missing_optional(modules: Collection[str]) -> list[str]:
    """Those of ``modules`` that the test extra leaves out on this Python and are absent."""
    if not _BEFORE_3_11:
        return []
    return sorted(m for m in ON_3_11_ONLY & set(modules) if importlib.util.find_spec(m) is None)
