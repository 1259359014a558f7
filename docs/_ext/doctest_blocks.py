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
_HEADER = re.compile(r"^\s*[A-Z][\w ]*:$")  # "Example:", "Returns:"
_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`~?([^`]+)`")


def fence_doctests(text: str) -> str:
    """``text`` with each run of ``>>>`` lines fenced as ``pycon``.

    A run indented deeper than the text before it (Markdown would read it as an
    indented code block, fences and all) is brought back to that text's indentation.
    """
    out: list[str] = []
    base, header = "", False  # the text's indentation; whether it is a section's title
    extra: str | None = None  # the run's surplus indentation, while in a run
    for line in text.splitlines():
        if extra is None:
            match = _PROMPT.match(line)
            if match and header:  # a section's content: griffe wants it indented
                base, extra = match.group(1), ""
                out.append(f"{base}```pycon")
            elif match:
                indent = match.group(1)
                keep = base if indent.startswith(base) else indent
                extra = indent[len(keep) :]
                if out and out[-1].strip():
                    out.append("")
                out.append(f"{keep}```pycon")
                base = keep
            elif line.strip():
                base = line[: len(line) - len(line.lstrip())]
                header = _HEADER.match(line) is not None
        elif not line.strip():
            out.append(f"{base}```")
            extra = None
        if extra and line.startswith(extra):
            line = line[len(extra) :]
        out.append(line)
    if extra is not None:
        out.append(f"{base}```")
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
