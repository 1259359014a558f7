"""Smoke tests of the throughput benchmark (no timing assertions).

The script runs in a subprocess: it pins thread counts, may import ultralytics (which
changes process-wide settings) and starts DataLoader workers, none of which belongs in
the test process.
"""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import _timing

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "throughput.py"

EXPECTED_ROWS = {
    "key/numpy_default_rng",
    "key/numpy_seedsequence",
    "key/sample_derive",
    "key/sample_item",
    "key/stream_new",
    "key/stream_item",
    "wrapper/direct",
    "wrapper/stream",
    "mosaic/rankaug_2x2",
    "mosaic/rankaug_3x3",
    "mosaic/floor",
    "mosaic/albumentations",
    "mosaic/ultralytics_affine",
    "mosaic/ultralytics_mosaic",
    "mosaic/yolov5_style",
    "mosaic/albumentations_3x3",
    "mosaic/ultralytics9_affine",
    *(f"scaling/{t}_{w}w" for t in ("tensor", "numpy", "reused") for w in (0, 1, 2)),
}
EXPECTED_GOALS = [
    "key_sample",
    "key_stream",
    "wrapper",
    "mosaic_floor",
    "mosaic_albumentations",
    "mosaic_ultralytics",
    "scaling_tensor",
    "scaling_numpy",
]
# Rows that may say "unavailable" when an optional peer is not installed; rankaug's own
# rows and the peers written in benchmarks/peers.py must always be measured.
OPTIONAL_ROWS = {
    "mosaic/albumentations",
    "mosaic/albumentations_3x3",
    "mosaic/ultralytics_affine",
    "mosaic/ultralytics_mosaic",
    "mosaic/ultralytics9_affine",
}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    tmp = tmp_path_factory.mktemp("bench")
    out = tmp / "nested" / "bench.json"
    env = {
        **os.environ,
        "YOLO_CONFIG_DIR": str(tmp / "yolo"),  # ultralytics writes its settings there
        "NO_ALBUMENTATIONS_UPDATE": "1",
    }
    command = [
        sys.executable,
        str(SCRIPT),
        "--quick",
        "--repeats",
        "1",
        "--size",
        "96",
        "--sources",
        "6",
        "--data",
        "synthetic",
        "--batch-size",
        "4",
        "--progress",
        "off",
        "--json",
        str(out),
    ]
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=200, check=False
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return json.loads(out.read_text(encoding="utf-8")), result.stdout


def test_json_has_every_row(quick_run: tuple[dict[str, Any], str]) -> None:
    report, _ = quick_run
    assert set(report["rows"]) == EXPECTED_ROWS
    for row_id, row in report["rows"].items():
        assert row["id"] == row_id
        if row["status"] == "ok":
            assert len(row["values"]) == 1, row_id  # --repeats 1
            assert row["median"] > 0, row_id
            assert row["min"] <= row["median"] <= row["max"], row_id
        else:
            assert row_id in OPTIONAL_ROWS, f"{row_id}: {row['status']} {row['reason']}"
            assert row["status"] == "unavailable"
            assert row["reason"]
            assert row["median"] is None


def test_json_has_goals_ratios_and_meta(quick_run: tuple[dict[str, Any], str]) -> None:
    report, _ = quick_run
    assert [goal["id"] for goal in report["goals"]] == EXPECTED_GOALS
    for goal in report["goals"]:
        assert goal["status"] in {"PASS", "MISS", "N/A"}
        assert (goal["measured"] is None) == (goal["status"] == "N/A")
    assert "mosaic/rankaug_2x2 / mosaic/floor" in report["ratios"]
    assert "wrapper/stream / wrapper/direct" in report["ratios"]
    meta = report["meta"]
    assert meta["data"]["kind"] == "synthetic"
    assert meta["threads"]["OMP_NUM_THREADS"] == "1"
    assert meta["threads"]["cv2.getNumThreads"] == 1
    assert meta["threads"]["torch.get_num_threads"] == 1
    assert meta["versions"]["rankaug"]
    assert meta["versions"]["numpy"]
    assert meta["peak_rss_mib"]["self"] > 0
    assert meta["settings"]["repeats"] == 1
    assert meta["wrapper_draws_matched"] is True
    paired = report["diagnostics"]["wrapper_paired"]
    assert set(paired) == {"ratio", "extra_us", "cache_us", "pairs"}
    assert paired["ratio"] > 0
    transport = report["diagnostics"]["transport"]
    assert set(transport) == {
        "batch_mb",
        "pickle_ms",
        "shm_fresh_ms",
        "shm_reused_ms",
        "make_ms",
    }


def test_printed_tables(quick_run: tuple[dict[str, Any], str]) -> None:
    _, stdout = quick_run
    for text in (
        "1. Key cost",
        "2. Wrapper overhead",
        "3. Mosaic",
        "4. Scaling",
        "decoding is not timed",
        "threads: pinned to 1",
        "Peak RSS",
        "Goals",
    ):
        assert text in stdout
    # the goals table comes last
    assert stdout.index("Goals") > stdout.index("4. Scaling")


def test_timing_helpers_doctests() -> None:
    results = doctest.testmod(_timing)
    assert results.attempted > 0
    assert results.failed == 0


def test_alternate_and_interleave_time_every_contender() -> None:
    calls: list[str] = []
    ops = {
        "a": _timing.counted(lambda i: calls.append(f"a{i}")),
        "b": _timing.counted(lambda i: calls.append(f"b{i}")),
    }
    record: dict[str, list[float]] = {}
    firsts: list[str] = []
    seconds = _timing.alternate(ops, per_round=2, repeats=3, warmup=1, record=record, firsts=firsts)
    assert {name: len(values) for name, values in seconds.items()} == {"a": 3, "b": 3}
    assert {name: len(values) for name, values in record.items()} == {"a": 6, "b": 6}
    # warm-up, then turns alternate the order: a b, b a, ...; the next round starts reversed
    assert calls[:6] == ["a0", "b0", "a1", "b1", "b2", "a2"]
    assert firsts == ["a", "b", "b", "a", "a", "b"]
    calls.clear()
    seconds = _timing.interleave(ops, per_round=2, repeats=2, warmup=0)
    assert all(len(values) == 2 for values in seconds.values())
    assert calls == ["a7", "a8", "b7", "b8", "b9", "b10", "a9", "a10"]
