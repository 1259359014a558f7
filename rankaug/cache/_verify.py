"""Check a whole cache directory: every entry's checksum, structure, pickle, owner and place.

Used by ``python -m rankaug cache verify DIR``. Entries are read with the cache's
own reader (:mod:`rankaug.cache._format`), so checking runs nobody else's code: a
global outside rankaug's allowlist is reported, never called. Names given as
``trusted`` (``module.name``) are admitted as inert stand-ins, not imported. Each entry
must hold the index its name says and belong to the cache of its folder's key
(:mod:`rankaug.cache._identity`): one copied from another index or cache is damaged. A
folder whose ``fingerprint.json`` names an older format (a cache this version does not
read, left beside the one it keys) is listed once, its entries not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rankaug.cache._fingerprint import FORMAT
from rankaug.cache._format import Corrupt, read
from rankaug.cache._store import SAMPLE_SUFFIX, sample_path
from rankaug.cache._trust import OVERRIDE, Untrusted, fix, problem, trust_types

__all__ = ["Report", "verify"]


def _reason(error: Exception, entry: Path) -> str:
    """The error's text for a line that names ``entry`` and the problem's kind already.

    Drops the path and a ``damaged (...)`` wrapper, and names the CLI's flags in place of
    ``trust_directory=True`` and ``trusted_types=[...]``.
    """
    text = str(error).removeprefix(f"{entry}: ")
    if text.startswith("damaged (") and text.endswith(")"):
        text = text.removeprefix("damaged (").removesuffix(")")
    refused = getattr(error, "refused", None)
    if refused is not None:
        module, name = refused
        text = text.replace(trust_types(name), f"rerun with --trusted {module}.{name}")
    return _flags(text)


def _flags(text: str) -> str:
    return text.replace(OVERRIDE, "rerun with --no-owner-check")


class _StandIn:
    """Accepts any construction and state; holds nothing."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _StandIn:
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: object) -> None:
        pass


class Report:
    """What :func:`verify` found.

    Attributes:
        checked: How many entries were read.
        problems: One line per damaged, refused or untrusted entry or folder.
    """

    def __init__(self) -> None:
        self.checked = 0
        self.problems: list[str] = []


def _caches(directory: Path) -> list[Path]:
    if (directory / "fingerprint.json").is_file():
        return [directory]
    return sorted(child.parent for child in directory.glob("*/fingerprint.json"))


def _entries(cache: Path) -> Iterator[Path]:
    for shard in sorted(child for child in cache.iterdir() if child.is_dir()):
        yield from sorted(shard.glob(f"[!.]*{SAMPLE_SUFFIX}"))


def _older(cache: Path) -> str | None:
    """The format ``cache``'s ``fingerprint.json`` names where it is not this version's.

    An older one, or a newer version's: either way this version does not read the cache.
    """
    try:
        named = json.loads((cache / "fingerprint.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # unreadable: its entries say what they are
    found = named.get("format") if isinstance(named, dict) else None
    return found if isinstance(found, str) and found != FORMAT else None


def _place(cache: Path, entry: Path) -> tuple[int, str | None] | None:
    """The index and key ``CachedDataset`` reads ``entry`` for, or ``None`` (it never does).

    The key is the folder's name where that is a key (32 hex digits), else ``None``.
    """
    stem = entry.name.removesuffix(SAMPLE_SUFFIX)
    if not stem.isdigit() or (stem != "0" and stem.startswith("0")):
        return None
    index = int(stem)
    if sample_path(str(cache), index) != str(entry):
        return None
    name = cache.name
    key = name if len(name) == 32 and all(c in "0123456789abcdef" for c in name) else None
    return index, key


def _splits(trusted: Iterable[str]) -> list[tuple[str, str]]:
    """Every ``(module, qualname)`` a dotted ``--trusted`` name can mean.

    A pickle names a nested class by its module and its qualified name
    (``("mymod", "Outer.Inner")``), and a dotted name does not say where the module ends,
    so each split is admitted (as inert stand-ins: nothing is imported).

    Raises:
        ValueError: If a name is not ``module.Name``.

    >>> _splits(["mymod.Outer.Inner"])
    [('mymod.Outer', 'Inner'), ('mymod', 'Outer.Inner')]
    """
    splits = []
    for name in trusted:
        parts = name.split(".")
        if len(parts) < 2 or not all(part.isidentifier() for part in parts):
            raise ValueError(
                f"--trusted must be a type's module and name, module.Name (as the refusal "
                f"names it, e.g. mypkg.data.Box), got {name!r}"
            )
        splits += [
            (".".join(parts[:cut]), ".".join(parts[cut:])) for cut in range(len(parts) - 1, 0, -1)
        ]
    return splits


def verify(directory: Path, trusted: Iterable[str] = (), *, owners: bool = True) -> Report:
    """Read every entry under ``directory`` (a cache directory or one fingerprint's).

    Args:
        directory: The directory given to ``CachedDataset``, or a subdirectory of it.
        trusted: ``module.name`` of each type of yours that samples hold.
        owners: Also report folders and entries that are not this user's alone.

    Raises:
        FileNotFoundError: If ``directory`` holds no cache.
        ValueError: If a ``trusted`` name is not ``module.Name``.
    """
    extra = dict.fromkeys(_splits(trusted), _StandIn)
    caches = _caches(directory)
    if not caches:
        raise FileNotFoundError(f"{directory} holds no rankaug cache (no */fingerprint.json)")
    report = Report()
    for folder in (directory, *caches) if owners else ():
        reason = problem(folder.stat())
        if reason is not None:
            report.problems.append(
                f"{folder}: untrusted folder, {reason}. Fix: {_flags(fix(str(folder), reason))}"
            )
    for cache in caches:
        older = _older(cache)
        if older is not None:
            report.problems.append(
                f"{cache}: a cache of another format ({older}; this version reads {FORMAT}), "
                "which CachedDataset does not read (it keys a new cache beside it): its "
                "entries were not checked; CachedDataset.prune() removes it"
            )
            continue
        for entry in _entries(cache):
            report.checked += 1
            place = _place(cache, entry)
            if place is None:
                report.problems.append(
                    f"{entry}: misplaced: CachedDataset reads no entry of this name here "
                    f"(entries are <index >> 10, hex>/<index>{SAMPLE_SUFFIX})"
                )
                continue
            index, key = place
            try:
                read(str(entry), extra, owner_check=owners, verify=True, index=index, key=key)
            except Corrupt as error:
                report.problems.append(f"{entry}: damaged: {_reason(error, entry)}")
            except Untrusted as error:
                report.problems.append(f"{entry}: refused: {_reason(error, entry)}")
            except OSError as error:
                report.problems.append(f"{entry}: unreadable: {error}")
    return report
