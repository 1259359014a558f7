"""The scoreboard's sections, one module each: its contenders, how it runs them, its table.

Each module has ``SECTION`` (its entry in ``benchmarks._catalogue.SECTIONS``),
``prepare(bench)``, which builds what must exist before the timing starts (the run then
pins the thread counts again and freezes the GC), and ``measure(bench, prepared)``,
which times its contenders side by side, adds its rows to ``bench.report`` and prints
its table. :data:`RUNNERS` maps each section's name to its module.
"""

from __future__ import annotations

from typing import Any, Protocol

from benchmarks._bench import Bench
from benchmarks._catalogue import SECTIONS, Section
from benchmarks.sections import (
    color,
    e2e,
    epoch,
    keys,
    memory,
    mix,
    mosaic,
    scaling,
    stream,
    wrapper,
)

__all__ = ["RUNNERS", "Runner"]


class Runner(Protocol):
    """What a section module provides."""

    SECTION: Section

    def prepare(self, bench: Bench) -> Any:
        """Build what must exist before any timing (peers, contenders)."""
        ...

    def measure(self, bench: Bench, prepared: Any) -> None:
        """Time the contenders, add the rows, print the table."""
        ...


RUNNERS: dict[str, Runner] = {
    module.SECTION.name: module
    for module in (keys, wrapper, mosaic, scaling, epoch, e2e, memory, mix, color, stream)
}
"""Section name -> its module."""

if set(RUNNERS) != {s.name for s in SECTIONS}:  # the catalogue and the modules must agree
    raise ImportError(f"sections {sorted(RUNNERS)} do not match the catalogue's")
