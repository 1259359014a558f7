"""The fenced code blocks of the docs pages and the README, and the recipes among them.

A block is preceded, optionally, by one marker comment on the line before its fence:

* ``<!-- no-run: REASON -->``: shown, never run (shell commands, outputs, launches);
* ``<!-- recipe: NAME -->``: a framework recipe, loaded as a module by
  ``tests/recipes/*_train.py`` (see :func:`load_recipe`) and trained with;
* ``<!-- run-by: PATH -->``: run by the test file ``PATH`` (the README's quick start,
  under torchrun).

Every other ``python`` block is run by ``tests/test_site.py``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
_FENCE = re.compile(
    r"(?:^<!-- (?P<mark>no-run|recipe|run-by): (?P<note>.+?) -->\n)?"
    r"^```(?P<lang>[\w-]*)\n(?P<code>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its marker and its code."""

    page: Path
    line: int
    lang: str
    mark: str | None
    note: str | None
    code: str

    @property
    def name(self) -> str:
        """``page:line``, as test ids and tracebacks show it."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(pages: list[Path] = PAGES) -> list[Block]:
    """Every fenced block of ``pages``, in order."""
    found = []
    for page in pages:
        text = page.read_text()
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start("code"))  # the fence's line, 1-based
            found.append(
                Block(page, line, match["lang"], match["mark"], match["note"], match["code"])
            )
    return found


def recipe(name: str) -> Block:
    """The one block marked ``<!-- recipe: name -->``."""
    (found,) = [b for b in blocks() if b.mark == "recipe" and b.note == name]
    return found


def load_recipe(name: str) -> ModuleType:
    """Run the recipe block ``name`` as a module (not as ``__main__``) and return it.

    Its classes and functions are then the page's own; the recipe scripts give them the
    test pipeline and record what they see. The module is registered in ``sys.modules``
    so that pickling by reference finds it.
    """
    block = recipe(name)
    module = ModuleType(f"rankaug_recipe_{name}")
    module.__file__ = str(block.page)
    sys.modules[module.__name__] = module
    code = compile("\n" * (block.line) + block.code, block.name, "exec")
    exec(code, module.__dict__)
    return module
