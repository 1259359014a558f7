"""Temporary files named by their writer, so that those of dead writers can be removed.

A writer names its temporary files ``.tmp-<tag>-<random>`` where the tag is this
machine's boot id, the writer's pid namespace, its pid and its start time (from
``/proc``). A file whose tag has this boot and namespace but whose process is gone
(or is another process under a reused pid) belongs to a writer that died (killed by
``SIGKILL``, say) and can never be published: :func:`clean` removes it. Files of live
writers, of other machines or containers, and untagged ones are left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Final

__all__ = ["TEMPORARY", "boot_id", "clean", "dead_files", "prefix"]

TEMPORARY: Final = ".tmp-"
_TAG: Final = re.compile(r"\.tmp-([0-9a-f]{32})\.(\d+)\.(\d+)\.(\d+)-")
_tags: dict[int, str] = {}


def boot_id() -> str | None:
    """This boot of the machine as 32 hex digits (``/proc``), or ``None`` off Linux."""
    try:
        text = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None
    text = text.replace("-", "").lower()
    return text if re.fullmatch(r"[0-9a-f]{32}", text) else None


def _namespace() -> str | None:
    try:
        match = re.fullmatch(r"pid:\[(\d+)\]", os.readlink("/proc/self/ns/pid"))
    except OSError:
        return None
    return match[1] if match else None


def _start_time(pid: int | str) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of its stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else None


def _machine() -> tuple[str, str] | None:
    boot, namespace = boot_id(), _namespace()
    return None if boot is None or namespace is None else (boot, namespace)


def prefix() -> str:
    """The prefix of this process's temporary files (``.tmp-`` alone off Linux).

    >>> prefix().startswith(TEMPORARY)
    True
    """
    pid = os.getpid()
    found = _tags.get(pid)
    if found is None:
        machine, start = _machine(), _start_time("self")
        if machine is None or start is None:
            found = TEMPORARY
        else:
            found = f"{TEMPORARY}{machine[0]}.{machine[1]}.{pid}.{start}-"
        _tags.clear()  # a forked child drops its parent's tag
        _tags[pid] = found
    return found


def _dead(name: str, machine: tuple[str, str]) -> bool:
    match = _TAG.match(name)
    if match is None or (match[1], match[2]) != machine:
        return False  # untagged, another machine or container: cannot tell
    return _start_time(match[3]) != match[4]


def dead_files(directory: Path) -> list[Path]:
    """Dead writers' temporary files in ``directory`` and its subdirectories."""
    machine = _machine()
    if machine is None:
        return []
    found = []
    folders = [directory]
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        folders += [Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False)]
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                names = [entry.name for entry in entries if entry.name.startswith(TEMPORARY)]
        except OSError:
            continue
        found += [folder / name for name in names if _dead(name, machine)]
    return found


def clean(directory: Path, files: list[Path] | None = None) -> int:
    """Remove dead writers' temporary files in ``directory`` and its subdirectories.

    Args:
        directory: The folder.
        files: Those found by :func:`dead_files` already; ``None`` looks for them.

    Returns:
        How many files were removed.
    """
    removed = 0
    for path in dead_files(directory) if files is None else files:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
            removed += 1
    return removed
