"""docs/speed.md's figures, rendered from a throughput.py --json report (benchmarks/speed_page.py).

The fixture is a small hand-made report with the real run's schema (the keys and values
of ``throughput.py --quick --json``, fewer rows); the last tests hold the committed page
to the committed JSON, so that the page never drifts from its run.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import speed_page

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "speed.md"
RUN = ROOT / "docs" / "assets" / "speed" / "run.json"


def _row(row_id: str, name: str, unit: str, values: list[float], status: str = "ok") -> Any:
    measured = status == "ok"
    return {
        "id": row_id, "name": name, "unit": unit, "better": "lower", "status": status,
        "reason": "" if measured else "not installed", "note": "",
        "median": sorted(values)[len(values) // 2] if measured else None,
        "min": min(values) if measured else None, "max": max(values) if measured else None,
        "values": values,
    }  # fmt: skip


def _work(mosaic: str) -> dict[str, dict[str, str]]:
    return {"mosaic": {"value": mosaic, "via": ""}, "output": {"value": "none", "via": ""}}


REPORT: dict[str, Any] = {
    "meta": {
        "versions": {"python": "3.11.7", "rankaug": "0.1.0", "ultralytics": None},
        "threads": {"OMP_NUM_THREADS": "1", "cv2.getNumThreads": 1},
        "machine": {"platform": "Linux", "cpus": 2, "load_average_start": [3.5, 4.0, 5.1],
                    "load_average_end": [4.25, 4.1, 5.1]},
        "settings": {"quick": True, "repeats": 3, "e2e_images": 32, "e2e_scale": 0.5,
                     "e2e_repeats": 1, "size": 640, "sources": 16, "batch_size": 16,
                     "seed": 0, "only": ["keys", "epoch"]},
        "data": {"kind": "photos", "description": "16 skimage.data photographs"},
        "gc_frozen_objects": 1000,
        "wall_seconds": 20.4,
    },
    "rows": {
        "key/numpy": _row("key/numpy", "numpy: default_rng(i) (baseline)", "µs/sample",
                          [10.0, 11.0, 12.0]),
        "key/sample": _row("key/sample", "wrapper[i] | no-op", "µs/sample", [9.0, 12.1, 13.0]),
        "key/peer": _row("key/peer", "a peer", "µs/sample", [], status="unavailable"),
        "epoch/plain": _row("epoch/plain", "a sampler", "µs/index", [0.1, 0.1, 0.2]),
        "epoch/carried": _row("epoch/carried", "a sampler", "µs/index", [0.3, 0.3, 0.4]),
    },
    "ratios": {
        "key/numpy / key/numpy": {"numerator": "key/numpy", "denominator": "key/numpy",
                                  "ratio": 1.0, "paired_median": 1.0, "paired_min": 1.0,
                                  "paired_max": 1.0},
        "key/sample / key/numpy": {"numerator": "key/sample", "denominator": "key/numpy",
                                   "ratio": 1.1, "paired_median": 1.1, "paired_min": 0.9,
                                   "paired_max": 1.0833, "unlike": []},
        "epoch/carried / epoch/plain": {"numerator": "epoch/carried", "denominator": "epoch/plain",
                                        "ratio": 3.0, "paired_median": 3.0, "paired_min": 3.0,
                                        "paired_max": 3.0, "unlike": ["mosaic: 2x2 vs none"]},
    },
    "differences": {
        "epoch/carried - epoch/plain": {"row": "epoch/carried", "baseline": "epoch/plain",
                                        "difference": 0.2, "paired_median": 0.2,
                                        "paired_min": 0.2, "paired_max": 0.2},
    },
    "goals": [
        {"id": "key_sample", "goal": "key + wrapper path, µs/sample", "op": "<=", "target": 15,
         "measured": 12.1, "status": "PASS", "margin": 0.1933, "note": ""},
        {"id": "ratio", "goal": "wrapper / direct", "op": ">=", "target": 0.985,
         "measured": 0.9658, "status": "MISS", "margin": -0.0195, "note": "a | b; run --profile"},
        {"id": "e2e", "goal": "rankaug / ultralytics", "op": ">=", "target": 1.6,
         "measured": None, "status": "REFUSED", "margin": None,
         "note": "not like for like: mosaic 2x2 p=1 (rankaug) / none (ultralytics)"},
    ],
    "diagnostics": {"wrapper_paired": {"ratio": 0.96582, "pairs": 48.0},
                    "split": {"floor": {"total_ms": 1.0848}}, "max_difference": 0},
    "profiles": {},
    "work": {"key/numpy": _work("none"), "key/sample": _work("2x2 p=1")},
}  # fmt: skip


def _region(page: str) -> str:
    return page.split(speed_page.BEGIN + "\n", 1)[1].split(speed_page.END, 1)[0]


class TestSpeedPage:
    @pytest.fixture
    def run(self, tmp_path: Path) -> Path:
        """The report in tmp/assets/run.json with one plot beside it; the page in tmp."""
        (tmp_path / "assets").mkdir()
        (tmp_path / "assets" / "run.key.png").write_bytes(b"")
        path = tmp_path / "assets" / "run.json"
        path.write_text(json.dumps(REPORT))
        return path

    def render(self, run: Path, report: dict[str, Any] = REPORT) -> list[str]:
        return speed_page.render(report, run, run.parent.parent / "speed.md").splitlines()

    def test_the_settings_and_the_load_of_a_shared_machine(self, run: Path) -> None:
        lines = self.render(run)
        assert lines[0] == (
            "A `--quick` run of the sections keys, epoch: 3 rounds per section, 640x640 "
            "outputs, batches of 16, seed 0, one thread per process; 20 s in all."
        )
        assert lines[2] == '!!! warning "A shared machine"'
        assert "load average 3.5 on 2 CPUs at the start, 4.25 at the end" in lines[3]
        assert "* Versions: python 3.11.7, rankaug 0.1.0." in lines
        assert "* Not installed (their rows say so): ultralytics." in lines
        assert "* Sources: 16 skimage.data photographs." in lines
        assert (
            "* Every figure below is in [`assets/run.json`](assets/run.json), per round." in lines
        )

    def test_a_quiet_full_run_says_so_without_a_warning(self, run: Path) -> None:
        report = copy.deepcopy(REPORT)
        report["meta"]["settings"]["quick"] = False
        report["meta"]["machine"]["load_average_start"] = [0.25, 0.5, 0.5]
        report["meta"]["settings"]["only"].append("e2e")
        lines = self.render(run, report)
        assert lines[0].startswith(
            "A full run of the sections keys, epoch, e2e: 3 rounds per section (1 for the "
            "end-to-end later epochs), 640x640 outputs (320x320 end to end and for memory, "
            "from 32 JPEGs), batches of 16,"
        )
        assert not any("warning" in line for line in lines)
        assert "The machine: load average 0.25 on 2 CPUs at the start, 4.25 at the end" in lines[2]

    def test_the_goals_table(self, run: Path) -> None:
        lines = self.render(run)
        assert "| goal | measured | target | status | margin | note |" in lines
        assert "| key + wrapper path, µs/sample | 12.1 | &lt;= 15 | PASS | +19.3% |  |" in lines
        missed = (
            r"| wrapper / direct | 0.966 | >= 0.985 | **MISS** | -1.9% | a \| b; run --profile |"
        )
        assert missed in lines
        refused = "| rankaug / ultralytics |  | >= 1.6 | **REFUSED** |  | not like for like: "
        assert any(line.startswith(refused) for line in lines)

    def test_each_section_with_its_ratios_differences_work_and_plot(self, run: Path) -> None:
        lines = self.render(run)
        key, epoch = lines.index("### Key cost"), lines.index("### Epoch carried by the index")
        assert key < epoch
        assert (
            lines[key + 2]
            == "[Plot: every row's median and min..max](assets/run.key.png) (µs/sample)."
        )
        assert not any("run.epoch.png" in line for line in lines)  # no plot beside the JSON
        ratio = (
            r"| wrapper[i] \| no-op | numpy: default\_rng(i) (baseline) | 1.10x | 0.90 .. 1.08 |"
        )
        assert lines[key + 6] == ratio
        assert not any("| 1.00x |" in line for line in lines)  # a row over itself is left out
        # two rows with one name are told apart by their ids, as on the plots
        diff = "| a sampler (epoch/carried) | a sampler (epoch/plain) | +0.20 µs/index |  |"
        assert diff in lines[epoch:]
        unlike = (  # a ratio of unlike work says so, beside it
            "| a sampler (epoch/carried) | a sampler (epoch/plain) | 3.00x; not like for like: "
            "mosaic: 2x2 vs none |  |"
        )
        assert unlike in lines[epoch:]
        assert "Not measured: a peer (unavailable: not installed)." in lines[key:epoch]
        assert "| mosaic | none | numpy |" in lines[key:epoch]
        assert "| mosaic | 2x2 p=1 | sample |" in lines[key:epoch]
        assert "| output | none | all |" in lines[key:epoch]  # shared by every contender

    def test_the_diagnostics(self, run: Path) -> None:
        lines = self.render(run)
        assert lines[lines.index("## Diagnostics") :][4:] == [
            r"| wrapper\_paired | ratio 0.97, pairs 48.0 |",
            r"| split floor | total\_ms 1.08 |",
            r"| max\_difference | 0 |",
        ]

    def test_only_the_region_between_the_markers_is_rewritten(self, run: Path) -> None:
        page = run.parent.parent / "speed.md"
        prose = (
            f"# Speed\n\nProse.\n\n{speed_page.BEGIN}\nstale figures\n{speed_page.END}\n\nMore.\n"
        )
        page.write_text(prose)
        assert speed_page.main([str(run), str(page), "--check"]) == 1
        assert page.read_text() == prose  # --check writes nothing
        assert speed_page.main([str(run), str(page)]) == 0
        text = page.read_text()
        assert text.startswith(f"# Speed\n\nProse.\n\n{speed_page.BEGIN}\nA `--quick` run ")
        assert text.endswith(f"\n{speed_page.END}\n\nMore.\n")
        assert _region(text) == speed_page.render(REPORT, run, page)
        assert speed_page.main([str(run), str(page), "--check"]) == 0

    @pytest.mark.parametrize(
        "text",
        ["no markers", f"{speed_page.END}\n{speed_page.BEGIN}\n", f"{speed_page.BEGIN}\n" * 2],
    )
    def test_a_page_without_its_markers_in_order_is_refused(self, text: str) -> None:
        with pytest.raises(ValueError, match="must hold"):
            speed_page.replace_region(text, "figures\n")

    def test_the_committed_page_is_rendered_from_the_committed_run(self) -> None:
        report = json.loads(RUN.read_text(encoding="utf-8"))
        text = PAGE.read_text(encoding="utf-8")
        assert _region(text) == speed_page.render(report, RUN, PAGE), (
            "docs/speed.md differs from its JSON: run "
            "`python benchmarks/speed_page.py docs/assets/speed/run.json docs/speed.md`"
        )

    def test_the_prose_around_the_figures_names_the_command(self) -> None:
        prose = PAGE.read_text(encoding="utf-8").replace(_region(PAGE.read_text()), "")
        assert "benchmarks/speed_page.py docs/assets/speed/run.json docs/speed.md" in prose
        assert "load average" in prose  # the caveat; the figures themselves are generated
