"""A pytest plugin that hides the framework extras, as on a machine without them.

``python -m pytest -p tests.without_extras -m "not slow"`` runs the quick tier as if
Lightning, accelerate, torchdata and datasets were not installed: importing any of
them (or their submodules) raises ``ModuleNotFoundError``, so a test module that needs
one must skip (``pytest.importorskip``) or be left out of collection.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

EXTRAS = frozenset(
    {"lightning", "pytorch_lightning", "lightning_fabric", "accelerate", "torchdata", "datasets"}
)


class _Hidden(importlib.abc.MetaPathFinder):
    """Refuses every module under one of :data:`EXTRAS`."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in EXTRAS:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden)", name=fullname)
        return None


for _name in [name for name in sys.modules if name.partition(".")[0] in EXTRAS]:
    del sys.modules[_name]  # (none should be loaded yet: this runs before collection)
sys.meta_path.insert(0, _Hidden())
