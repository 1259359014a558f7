"""Docstrings keep their promises: a documented default is the signature's.

A default is documented where it means something (``None`` meaning "the adapter's"),
not restated for every argument; where it is, it must be the signature's.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, is_typeddict

import pytest

import rankaug

_ARG = re.compile(r"\n(?=    \*{0,2}\w+(?: \([^)]*\))?: )")


def public_modules() -> Iterator[ModuleType]:
    yield rankaug
    for info in pkgutil.walk_packages(rankaug.__path__, "rankaug."):
        if info.name.rsplit(".", 1)[-1].startswith("_") or ".cli" in info.name:
            continue
        yield importlib.import_module(info.name)


def public_callables() -> list[tuple[str, Callable[..., Any]]]:
    found: dict[str, Callable[..., Any]] = {}
    for module in public_modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (
                (inspect.isfunction(obj) or inspect.isclass(obj))
                and obj.__module__.startswith("rankaug")
                and not is_typeddict(obj)
            ):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
                if inspect.isclass(obj):
                    for method_name, method in vars(obj).items():
                        if inspect.isfunction(method) and not method_name.startswith("_"):
                            found.setdefault(f"{obj.__module__}.{method.__qualname__}", method)
    return sorted(found.items())


def documented_defaults(obj: Callable[..., Any]) -> dict[str, str | None]:
    """Parameter name -> the text of its ``Defaults to ``X``.``, or None without one."""
    doc = inspect.getdoc(obj) or ""
    if "Args:\n" not in doc:
        return {}
    args = doc.split("Args:\n", 1)[1].split("\n\n", 1)[0]
    found: dict[str, str | None] = {}
    for entry in _ARG.split("\n" + args):
        if not entry.strip():
            continue
        name = entry.strip().split(":", 1)[0].split(" ", 1)[0].lstrip("*")
        match = re.search(r"Defaults to\s+``(.+?)``", entry, flags=re.DOTALL)
        found[name] = match.group(1) if match else None
    return found


def evaluate(text: str, obj: Callable[..., Any]) -> object:
    try:
        return ast.literal_eval(text)
    except ValueError:
        return eval(text, vars(importlib.import_module(obj.__module__)))


CALLABLES = public_callables()
# Those with an Args section; the others (make_rng: "arguments as key_words") promise none.
DOCUMENTED = [(name, obj) for name, obj in CALLABLES if documented_defaults(obj)]


class TestDocumentedDefaults:
    def test_the_walk_finds_the_public_api(self) -> None:
        names = {name for name, _ in CALLABLES}
        assert "rankaug.mosaic.MosaicDataset" in names
        assert "rankaug.keys.make_rng" in names
        assert len(names) > 30
        assert len(DOCUMENTED) > 20
        assert documented_defaults(rankaug.Targets)["box_format"] is None  # read, no default

    @pytest.mark.parametrize(("name", "obj"), DOCUMENTED, ids=[name for name, _ in DOCUMENTED])
    def test_every_documented_default_is_the_signatures(
        self, name: str, obj: Callable[..., Any]
    ) -> None:
        signature = inspect.signature(obj)
        documented = documented_defaults(obj)
        for parameter in signature.parameters.values():
            if parameter.name in {"self", "cls"} or parameter.kind in (
                parameter.VAR_POSITIONAL,
                parameter.VAR_KEYWORD,
            ):
                continue
            text = documented.get(parameter.name)
            if parameter.default is parameter.empty:
                assert text is None, f"{name}({parameter.name}) has no default, docs say {text}"
            elif text is not None:
                assert evaluate(text, obj) == parameter.default, (name, parameter.name)

    @pytest.mark.parametrize(("name", "obj"), DOCUMENTED, ids=[name for name, _ in DOCUMENTED])
    def test_every_documented_argument_exists(self, name: str, obj: Callable[..., Any]) -> None:
        parameters = set(inspect.signature(obj).parameters)
        missing = set(documented_defaults(obj)) - parameters
        assert not missing, f"{name} documents arguments it does not take: {sorted(missing)}"
