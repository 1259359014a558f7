"""A griffe extension for the API reference: docstrings' examples and roles as code.

The docstrings put their doctests after the text or under ``Example:``; griffe's
Google parser only reads ``Examples:`` as code, and Markdown would read the rest as
prose (``x["image"]`` as a link). Each run of ``>>>`` lines up to the next blank line
becomes a fenced ``pycon`` block at its own indentation, and Sphinx roles such as
``:class:`~rankaug.X``` become code spans.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_PROMPT = re.compile(r"^(\s*)>>> ")
_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`~?([^`]+)`")


def fence_doctests(text: str) -> str:
    """``text`` with each run of ``>>>`` lines fenced as ``pycon``."""
    out: list[str] = []
    indent: str | None = None
    for line in text.splitlines():
        if indent is None:
            match = _PROMPT.match(line)
            if match:
                indent = match.group(1)
                out.append(f"{indent}```pycon")
        elif not line.strip():
            out.append(f"{indent}```")
            indent = None
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestBlocks(Extension):
    """Fence every docstring's doctests before griffe parses it."""

    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        """Rewrite ``obj``'s docstring, if it has one."""
        if obj.docstring is None:
            return
        # Sphinx roles (:class:`~rankaug.X`) as code: `rankaug.X`.
        obj.docstring.value = _ROLE.sub(r"`\1`", obj.docstring.value)
        if ">>> " in obj.docstring.value:
            # "Examples:" would make griffe split the fences from their code: an
            # "Example:" admonition renders its Markdown, fences included.
            value = re.sub(r"^(\s*)Examples:$", r"\1Example:", obj.docstring.value, flags=re.M)
            obj.docstring.value = fence_doctests(value)
