"""Plots of a run, written next to its ``--json`` (matplotlib, where it is installed).

One PNG per section: each measured row's median as a bar, its min..max over the rounds
as the error bar, the unit on the axis (a row whose name another row shares is labelled
with its id too: the e2e section's first epochs). This is benchmark code, never imported
by rankaug.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["write_plots"]


def write_plots(report: dict[str, Any], json_path: Path) -> list[Path]:
    """Write ``<json stem>.<section>.png`` beside ``json_path`` for every measured section.

    ``report`` is the run's JSON (``Report.to_json()``); returns the files written, none
    when matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    sections: dict[str, list[dict[str, Any]]] = {}
    names = [row["name"] for row in report["rows"].values()]
    for row_id, row in report["rows"].items():
        if row["median"] is not None:
            label = row["name"] if names.count(row["name"]) == 1 else f"{row['name']} ({row_id})"
            sections.setdefault(row_id.split("/")[0], []).append({**row, "name": label})
    written = []
    for name, rows in sections.items():
        fig, ax = plt.subplots(figsize=(9, 0.35 * len(rows) + 1.2))
        medians = [row["median"] for row in rows]
        spread = [
            [m - row["min"] for m, row in zip(medians, rows, strict=True)],
            [row["max"] - m for m, row in zip(medians, rows, strict=True)],
        ]
        ax.barh(range(len(rows)), medians, xerr=spread, color="#4c72b0", capsize=2)
        ax.set_yticks(range(len(rows)), [row["name"] for row in rows], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(
            rows[0]["unit"] + ("" if rows[0]["better"] == "higher" else " (lower is better)")
        )
        ax.set_title(f"{name}: median, min..max over the rounds", fontsize=9)
        fig.tight_layout()
        path = json_path.with_name(f"{json_path.stem}.{name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written
