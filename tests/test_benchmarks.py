"""Smoke tests of the throughput benchmark (no timing assertions).

The script runs in a subprocess: it pins thread counts, may import ultralytics (which
changes process-wide settings) and starts DataLoader workers, none of which belongs in
the test process.
"""

from __future__ import annotations

import doctest
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Generator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from benchmarks import (
    _catalogue,
    _cli,
    _cv2_split,
    _goal_table,
    _goals,
    _jpegs,
    _memory,
    _report,
    _same_work,
    _timing,
)
from tests import ahead

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
    "mosaic/rankaug_affine",
    "mosaic/floor",
    "mosaic/floor_targets",
    "mosaic/albumentations",
    "mosaic/ultralytics_affine",
    "mosaic/ultralytics_mosaic",
    "mosaic/yolov5_style",
    "mosaic/albumentations_3x3",
    "mosaic/ultralytics9_affine",
    *(f"scaling/{t}_{w}w" for t in ("tensor", "recycled", "numpy") for w in (0, 1, 2)),
    "epoch/sampler_plain",
    "epoch/sampler_carried",
    "epoch/wrapper_plain",
    "epoch/wrapper_carried",
    *(f"epoch/loader_{kind}_{w}w" for kind in ("plain", "carried", "batches") for w in (0, 1)),
    *(
        f"e2e/{name}_first_{w}w"
        for name in ("ultralytics", "ultralytics_ram", "rankaug_cached", "fused_cached")
        for w in (0, 2)
    ),
    *(
        f"e2e/{name}_{w}w"
        for name in (
            "ultralytics",
            "ultralytics_ram",
            "rankaug",
            "rankaug_cached",
            "fused",
            "fused_cached",
            "floor",
            "floor_cached",
            "fused_reduced",
        )
        for w in (0, 2)
    ),
    "memory/ultralytics_ram",
    "memory/rankaug_cached",
    "memory/rankaug_cached_pss",
    *(
        f"mix/{who}_{kind}"
        for kind in ("mixup", "cutmix", "copypaste", "copypaste_flip")
        for who in ("rankaug", "ultralytics")
    ),
    "mix/rankaug_copypaste_polygons",
    "mix/rankaug_copypaste_flip_polygons",
    "mix/copypaste_floor",
    "mix/copypaste_polygon_floor",
    "mix/ultralytics_copypaste_masks",
    "mix/ultralytics_copypaste_flip_masks",
    "color/rankaug_hsv",
    "color/ultralytics_hsv",
    "stream/wds_map",
    "stream/wds_wrapper",
    "stream/mosaic_map",
    "stream/mosaic_stream",
}
EXPECTED_GOALS = [
    "key_sample",
    "key_stream",
    "wrapper",
    "mosaic_floor",
    "mosaic_albumentations",
    "mosaic_affine_plain",
    "mosaic_affine_ultralytics",
    "loader_1w_0w",
    "loader_2w_1w",
    "scaling_numpy",
    "epoch_sampler",
    "epoch_wrapper",
    "epoch_loader_0w",
    "epoch_loader_1w",
    "epoch_batches_0w",
    "epoch_batches_1w",
    "e2e_ram",
    "e2e_default",
    "e2e_floor",
    "e2e_first",
    "memory",
    "mix_mixup",
    "mix_cutmix",
    "mix_copypaste",
    "mix_copypaste_polygons",
    "hsv_ultralytics",
    "stream_wrapper",
    "stream_mosaic",
]
EPOCH_PAIRS = [
    ("epoch/sampler_carried", "epoch/sampler_plain"),
    ("epoch/wrapper_carried", "epoch/wrapper_plain"),
    ("epoch/loader_carried_0w", "epoch/loader_plain_0w"),
    ("epoch/loader_carried_1w", "epoch/loader_plain_1w"),
    ("epoch/loader_batches_0w", "epoch/loader_plain_0w"),
    ("epoch/loader_batches_1w", "epoch/loader_plain_1w"),
]
# Rows that may say "unavailable" when an optional peer is not installed; rankaug's own
# rows and the peers written in benchmarks/peers.py must always be measured.
OPTIONAL_ROWS = {
    "mosaic/albumentations",
    "mosaic/albumentations_3x3",
    "mosaic/ultralytics_affine",
    "mosaic/ultralytics_mosaic",
    "mosaic/ultralytics9_affine",
    "memory/ultralytics_ram",
    *(
        row
        for row in EXPECTED_ROWS
        if row.startswith(("e2e/ultralytics", "mix/ultralytics", "color/ultralytics"))
    ),
}


def _run_script(tmp: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Run the script on tiny synthetic inputs, one round, writing ``tmp/nested/bench.json``."""
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
        "--images",
        "8",
        "--data-dir",
        str(tmp / "data"),
        "--progress",
        "off",
        "--json",
        str(tmp / "nested" / "bench.json"),
        *options,
    ]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=200, check=False
    )


def _run_report(tmp: Path, *options: str) -> tuple[dict[str, Any], str]:
    result = _run_script(tmp, *options)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return json.loads((tmp / "nested" / "bench.json").read_text(encoding="utf-8")), result.stdout


def run_quick(tmp: Path) -> tuple[dict[str, Any], str]:
    """The whole benchmark, --quick (a job of tests.ahead)."""
    return _run_report(tmp)


def run_two_sections(tmp: Path) -> tuple[dict[str, Any], str]:
    """Two sections, --profile (a job of tests.ahead)."""
    return _run_report(tmp, "--only", "epoch,keys", "--profile")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    return ahead.result("benchmark", lambda: tmp_path_factory.mktemp("bench"))


@pytest.mark.slow  # runs benchmarks/throughput.py
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


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_json_has_goals_ratios_and_meta(quick_run: tuple[dict[str, Any], str]) -> None:
    report, _ = quick_run
    assert [goal["id"] for goal in report["goals"]] == EXPECTED_GOALS
    for goal in report["goals"]:
        assert goal["status"] in {"PASS", "MISS", "N/A"}  # every race like for like
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
    control = report["diagnostics"]["wrapper_control_paired"]  # the A/A race
    assert set(control) == {"ratio", "extra_us", "cache_us", "pairs", "matched"}
    assert control["matched"] == 1.0  # the two pipelines drew alike, sample for sample
    assert control["pairs"] == paired["pairs"]
    # the mosaic floor's pair raced again alone, a diagnostic beside the group's figure
    mosaic = report["diagnostics"]["mosaic_floor_paired"]
    assert set(mosaic) == {"ratio", "extra_us", "pairs"}
    assert mosaic["ratio"] > 0
    settings = _catalogue.QUICK
    assert mosaic["pairs"] == 2 * (settings.mosaics // 2) * meta["settings"]["repeats"]
    transport = report["diagnostics"]["transport"]
    assert set(transport) == {
        "batch_mb",
        "dumps_ms",
        "loads_ms",
        "pickle_ms",
        "shm_fresh_ms",
        "shm_reused_ms",
        "make_ms",
    }
    for transport in ("tensor", "recycled", "numpy"):
        rows = [report["rows"][f"scaling/{transport}_{w}w"] for w in (0, 1, 2)]
        assert "bound_median" not in rows[0]  # no worker
        assert 0 < rows[1]["bound_median"] <= rows[2]["bound_median"]  # more with two
        assert 0 < rows[1]["main_median"] < rows[1]["cores_median"]  # the main process's share
    notes = {goal["id"]: goal["note"] for goal in report["goals"]}
    for goal_id in ("loader_2w_1w", "scaling_numpy"):
        assert "idle cores" in notes[goal_id].split("the split of the work")[1]
    assert meta["settings"]["only"] == [
        "keys",
        "wrapper",
        "mosaic",
        "scaling",
        "epoch",
        "e2e",
        "memory",
        "mix",
        "color",
        "stream",
    ]
    recycled = report["diagnostics"]["recycle_stats"]
    assert recycled["pooled"] >= 1  # the workers stacked into pooled buffers
    assert recycled["pooled"] + recycled["reused"] + recycled["unpooled"] > 0


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_epoch_goals_are_differences_of_medians(quick_run: tuple[dict[str, Any], str]) -> None:
    report, _ = quick_run
    rows, goals = report["rows"], {goal["id"]: goal for goal in report["goals"]}
    measured = {}
    for row, baseline in EPOCH_PAIRS:
        entry = report["differences"][f"{row} - {baseline}"]
        assert entry["difference"] == pytest.approx(rows[row]["median"] - rows[baseline]["median"])
        assert entry["paired_min"] <= entry["paired_median"] <= entry["paired_max"]
        measured[row] = entry["difference"]
    assert [goals[g]["measured"] for g in EXPECTED_GOALS if g.startswith("epoch")] == [
        measured[row] for row, _ in EPOCH_PAIRS
    ]
    for goal_id in ("epoch_sampler", "epoch_wrapper", "epoch_loader_0w", "epoch_loader_1w"):
        assert goals[goal_id]["op"] == "<="
        assert goals[goal_id]["target"] == 1.0
        assert "per round" in goals[goal_id]["note"]
    pickled = report["diagnostics"]["epoch_pickle"]
    assert set(pickled) == {
        "int_us",
        "carried_us",
        "batch_us",
        "extra_us",
        "batch_extra_us",
        "batch",
    }
    assert pickled["batch"] == 4
    assert pickled["extra_us"] == pytest.approx(pickled["carried_us"] - pickled["int_us"])
    assert report["diagnostics"]["epoch_loader_clock"] == "main process and worker"  # /proc read
    for row, baseline in EPOCH_PAIRS[2:]:
        for row_id in (row, baseline):
            assert rows[row_id]["wall_us_median"] > 0
            assert rows[row_id]["note"].startswith("wall ")


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_e2e_runs_rankaug_on_the_jpeg_folder(quick_run: tuple[dict[str, Any], str]) -> None:
    report, _ = quick_run
    rows = report["rows"]
    data = report["meta"]["e2e_data"]
    assert data["kind"] == "synthetic"
    assert data["description"].startswith("8 JPEGs (quality 90")
    assert "scikit-image is not installed" in data["description"]
    first = rows["e2e/rankaug_cached_first_0w"]
    assert first["note"].startswith("built ")
    # 8 images, batches of 4: the epoch's 8 samples over construction plus the pass
    assert first["median"] == pytest.approx(8 / (first["build_s_median"] + first["epoch_s_median"]))
    split = report["diagnostics"]["e2e_split_ms"]
    rankaug_rows = {"rankaug", "rankaug_cached", "fused", "fused_cached", "fused_reduced"}
    floors = {"floor", "floor_cached"}
    assert set(split) == rankaug_rows | floors  # ultralytics is not installed here
    for parts in split.values():
        assert set(parts) == {"total", "decode", "resize", "warp", "colour", "collate"}
    cached = {name for name in rankaug_rows if name.endswith("_cached")}
    assert all(split[name]["decode"] == 0 for name in cached)  # later epochs: the full cache
    assert all(split[name]["decode"] > 0 for name in rankaug_rows - cached)  # a JPEG per tile
    assert all(split[name]["decode"] == 0 for name in floors)  # decoded when built
    kernel = report["diagnostics"]["e2e_kernel"]  # page faults, system and user time
    assert set(kernel) == set(split)
    assert all(set(k) == {"faults", "system_ms", "user_ms"} for k in kernel.values())
    assert all(k["faults"] >= 0 and k["system_ms"] >= 0 for k in kernel.values())
    assert all(k["user_ms"] > 0 for k in kernel.values())
    later = rows["e2e/rankaug_cached_0w"]
    assert later["per_cpu_second_median"] > 0
    assert "/CPU-s; got " in later["note"]
    assert {goal["id"]: goal["status"] for goal in report["goals"]}["e2e_first"] == "N/A"


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_memory_counts_every_process_of_both_ranks(quick_run: tuple[dict[str, Any], str]) -> None:
    report, stdout = quick_run
    rows, memory = report["rows"], report["diagnostics"]["memory"]
    assert memory["processes"] == {"rankaug_cached": [3, 3]}  # each rank and its 2 workers
    assert all("ready" in lines for lines in memory["lines"])
    assert memory["cache_resident_mib"] > 0
    with_cache, pss = rows["memory/rankaug_cached"], rows["memory/rankaug_cached_pss"]
    assert with_cache["median"] == pytest.approx(pss["median"] + memory["cache_resident_mib"])
    assert pss["peak_mib_median"] >= pss["median"]
    assert "rankaug_cached   PSS per process, MiB: rank 0: " in stdout
    # each job printed its work (rank 0's recorded): the goal checks it like for like
    work = report["work"]["memory/rankaug_cached"]
    assert work == report["work"]["memory/rankaug_cached_pss"]
    assert work == report["work"]["e2e/rankaug_cached_0w"]
    assert "same work, the jobs' pipelines" in stdout


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_printed_tables(quick_run: tuple[dict[str, Any], str]) -> None:
    _, stdout = quick_run
    for text in (
        "1. Key cost",
        "2. Wrapper overhead",
        "A/A control (a second pipeline built alike",
        "3. Mosaic",
        "raced alone, one mosaic each in turn (both orders and listings): rankaug_2x2 vs floor",
        "4. Scaling",
        "5. Epoch carried by the index",
        "6. End to end",
        "7. Memory",
        "pickling one list of 4 indices",
        "decoding is not timed",
        "threads: pinned to 1",
        "Peak RSS",
        "what the kernel does for it, per sample",
        "Goals",
        "plots: none (no matplotlib)",  # the test venv has none; .venv-bench writes PNGs
    ):
        assert text in stdout
    # the sections in the catalogue's order, numbered by it, the goals table last
    for s in _catalogue.SECTIONS:
        assert stdout.count(f"\n{s.number}. ") == 1, s.name
    assert "\n10. Streaming" in stdout
    positions = [stdout.index(f"{k}. ") for k in range(1, 9)]
    assert positions == sorted(positions)
    assert stdout.index("Goals") > positions[-1]


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_only_runs_the_selected_sections(tmp_path: Path) -> None:
    report, stdout = ahead.result("benchmark-sections", lambda: tmp_path)
    wanted = {row for row in EXPECTED_ROWS if row.startswith(("key/", "epoch/"))}
    assert set(report["rows"]) == wanted
    assert [goal["id"] for goal in report["goals"]] == [
        goal for goal in EXPECTED_GOALS if goal.startswith(("key_", "epoch_"))
    ]
    assert report["meta"]["settings"]["only"] == ["keys", "epoch"]  # the catalogue's order
    assert "data" not in report["meta"]  # neither section needs the source images
    assert "1. Key cost" in stdout
    assert "5. Epoch" in stdout
    assert "2. Wrapper" not in stdout
    # --profile lists the selected sections' rankaug contenders only
    assert sorted(name.split(" ")[0] for name in report["profiles"]) == [
        "epoch/sampler_carried",
        "epoch/wrapper_carried",
        "key/sample_item",
    ]
    assert all("ncalls" in text for text in report["profiles"].values())


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_e2e_contenders_do_the_same_work(quick_run: tuple[dict[str, Any], str]) -> None:
    report, stdout = quick_run
    works = {k: v for k, v in report["work"].items() if k.startswith("e2e/")}
    measured = {k for k, row in report["rows"].items() if k.startswith("e2e/") and row["median"]}
    assert set(works) == measured
    reduced = {k: works.pop(k) for k in list(works) if "fused_reduced" in k}
    assert len(reduced) == 2
    values = {
        json.dumps({a: s["value"] for a, s in w.items()}, sort_keys=True) for w in works.values()
    }
    assert len(values) == 1  # every contender, the floor included, does the same work
    work = next(iter(works.values()))
    # ultralytics' decode (full, INTER_LINEAR, long side 48) for all but the extra row
    assert work["decode"]["value"] == "full decode, long side 48, INTER_LINEAR"
    for row, other in reduced.items():
        assert _same_work.differences(_settings(other), _settings(work)) == [
            "decode: JPEG decoder shrinks 2-8x where it can, long side 48, INTER_AREA for 2x+ "
            "shrinks, else INTER_LINEAR vs full decode, long side 48, INTER_LINEAR"
        ]
        assert report["ratios"][f"{row} / e2e/fused_{row.rsplit('_', 1)[1]}"]["unlike"]
    assert "fused_reduced    vs fused, 0 workers: " in stdout
    assert "not like for like: decode: JPEG decoder shrinks" in stdout
    assert work["hsv"]["value"] == "p=1, gains h 0.015 s 0.7 v 0.4"  # ultralytics' RandomHSV
    assert work["flip"]["value"] == "horizontal p=0.5, vertical p=0"
    assert work["affine"]["value"].startswith("p=1, scale 0.5-1.5, translate ±0.1")
    assert work["output"]["value"] == "(B, 3, 48, 48) torch.uint8, RGB"
    assert (
        work["mosaic"]["value"]
        == "2x2 p=1, tiles fit in 48x48 (aspect kept), up to 4 cells visible"
    )
    assert (
        "rankaug.HSVJitter(MosaicDataset(color=)"
        in report["work"]["e2e/fused_cached_0w"]["hsv"]["via"]
    )
    assert "same work, every contender:\n    decode  full decode, long side 48" in stdout
    goals = {goal["id"]: goal for goal in report["goals"]}
    assert goals["e2e_floor"]["status"] in {"PASS", "MISS"}


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_mix_contenders_do_the_same_work(quick_run: tuple[dict[str, Any], str]) -> None:
    report, _ = quick_run
    work = report["work"]
    dense, polygons = work["mix/rankaug_copypaste"], work["mix/rankaug_copypaste_polygons"]
    assert dense["mix"] == polygons["mix"] == work["mix/copypaste_floor"]["mix"]
    assert dense["mix"]["value"] == "copypaste p=1, partner, all eligible, max overlap 0.3"
    assert dense["output"]["value"].endswith("dense instance masks (N, H, W)")
    assert polygons["output"]["value"].endswith("instance polygons")
    assert work["mix/rankaug_mixup"]["mix"]["value"] == "mixup p=1, ratio Beta(32, 32)"
    flip = work["mix/rankaug_copypaste_flip"]
    assert flip["output"]["value"].endswith("dense instance masks (N, H, W)")
    peer = work.get("mix/ultralytics_copypaste_flip_masks")  # ultralytics installed
    assert peer is None or _same_work.differences(_settings(peer), _settings(flip)) == []
    for numerator, denominator in _catalogue.MIX_PAIRS:  # every ratio printed like for like
        entry = report["ratios"].get(f"{numerator} / {denominator}")
        assert entry is None or entry["unlike"] == [], (numerator, denominator)


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_hsv_contenders_do_the_same_work(quick_run: tuple[dict[str, Any], str]) -> None:
    report, stdout = quick_run
    work = report["work"]
    hsv = "p=1, gains h 0.015 s 0.7 v 0.4"  # ultralytics' RandomHSV, its default gains
    peer = report["rows"]["color/ultralytics_hsv"]["median"] is not None
    races = {k: w for k, w in work.items() if k.startswith("color/")}
    assert sorted(races) == ["color/rankaug_hsv", "color/ultralytics_hsv"][: 1 + peer]
    assert {w["hsv"]["value"] for w in races.values()} == {hsv}
    assert {w["output"]["value"] for w in races.values()} == {"(96, 96, 3) uint8"}
    # with the peer installed the section compares their pixels: none differs
    difference = report["diagnostics"].get("hsv_max_pixel_difference")
    assert (difference is None) == (report["rows"]["color/ultralytics_hsv"]["median"] is None)
    assert difference in (None, 0)
    assert ("largest pixel difference, rankaug vs ultralytics, 8 draws: 0" in stdout) == (
        difference == 0
    )
    goals = {goal["id"]: goal for goal in report["goals"]}
    assert goals["hsv_ultralytics"]["status"] in {"PASS", "MISS", "N/A"}


@pytest.mark.slow  # runs benchmarks/throughput.py
def test_stream_contenders_do_the_same_work(quick_run: tuple[dict[str, Any], str]) -> None:
    report, stdout = quick_run
    work = report["work"]
    assert work["stream/wds_map"] == work["stream/wds_wrapper"]
    assert work["stream/wds_map"]["affine"]["value"].startswith(
        "p=1, scale x 0.75-1.25 and y 0.75-1.25 drawn apart"  # its A.Affine, keep_ratio=False
    )
    assert work["stream/mosaic_map"] == work["stream/mosaic_stream"]
    assert work["stream/mosaic_map"]["mosaic"]["value"].startswith("2x2 p=1, tiles fit in 96x96")
    assert report["meta"]["stream_samples_per_pass"] == 96
    assert report["meta"]["stream_draws_matched"] is True  # the same augmentations drawn
    assert "wds_wrapper vs wds_map" in stdout
    # the goal reads the same two streams paired in process, the loaders' ratio beside it
    paired = report["diagnostics"]["stream_wrapper_paired"]
    assert set(paired) == {"ratio", "extra_us", "cache_us", "pairs"}
    assert paired["pairs"] == 2 * (16 // 2)  # --repeats 1, both listings of 16 // 2
    assert "paired in this process" in stdout
    goal = next(goal for goal in report["goals"] if goal["id"] == "stream_wrapper")
    assert goal["measured"] == paired["ratio"]
    assert goal["note"].startswith(f"from {paired['pairs']:.0f} paired samples")


def _settings(work: dict[str, dict[str, str]]) -> _same_work.Work:
    return {aspect: _same_work.Setting(**setting) for aspect, setting in work.items()}


def test_epoch_plain_wrapper_runs_as_in_a_set_epoch_program() -> None:
    from benchmarks.sections import epoch
    from rankaug.epoch import _CLASSES

    ops = epoch.index_contenders(seed=0)
    ops["epoch/sampler_carried"](5)  # an EpochSampler pass running, EpochIndex kinds made
    ops["epoch/wrapper_carried"](5)
    kinds = dict(_CLASSES)
    assert kinds  # what the plain side must not see
    seen: list[dict[int, object]] = []
    with epoch.as_if_never_carried():
        seen.append(dict(_CLASSES))
    # filterwarnings=error: a plain index that searched for the fetch's epoch, with the
    # carried pass running, would warn that the epoch was lost
    ops["epoch/wrapper_plain"](64)
    assert seen == [{}]
    assert dict(_CLASSES) == kinds  # put back


def test_epoch_loaders_fetch_plain_batches_as_a_set_epoch_program() -> None:
    from benchmarks.sections import epoch
    from rankaug import EpochIndex, EpochSampler
    from rankaug.epoch import _CLASSES

    fetched = epoch.loaders(seed=0, batch_size=4)[0][0].loader.dataset  # no workers
    assert isinstance(fetched, epoch._Fetched)
    # a carried pass running, of another epoch than the wrappers' set_epoch value
    running = cast(Generator[Any, None, None], iter(EpochSampler(range(8), epoch=2)))
    next(running)
    kinds = dict(_CLASSES)
    assert kinds
    # filterwarnings=error: a plain batch that searched for the fetch's epoch would warn
    assert fetched.__getitems__([0, 1, 2]) == [0, 1, 2]
    assert dict(_CLASSES) == kinds  # put back
    carried = [EpochIndex(i, epoch.EPOCH) for i in (3, 4)]
    assert fetched.__getitems__(carried) == [3, 4]
    assert dict(_CLASSES) == kinds
    running.close()


# webdataset's tar reader leaves the shards' files for the collector to close
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_stream_paired_contenders_draw_alike_pass_after_pass(tmp_path: Path) -> None:
    pytest.importorskip("webdataset")
    from benchmarks.sections import stream

    rng = np.random.default_rng(0)
    samples = [
        {
            "image": rng.integers(0, 255, (48, 64, 3), dtype=np.uint8),
            "bboxes": np.array([[4.0, 4.0, 40.0, 30.0]], np.float32),
            "labels": np.array([k], np.int64),
        }
        for k in range(3)
    ]
    urls = stream.write_shards(samples, 6, tmp_path)  # 6 a pass
    makers = stream.paired_contenders(urls, seed=3)
    baseline, wrapped = makers["stream/wds_map"], makers["stream/wds_wrapper"]
    images = [(baseline(k)["image"], wrapped(k)["image"]) for k in range(15)]  # 2.5 passes
    assert all(np.array_equal(ours, theirs) for ours, theirs in images)
    # the draws change from pass to pass (the same JPEG, augmented anew)
    assert not np.array_equal(images[0][0], images[6][0])


# webdataset's tar reader leaves the shards' files for the collector to close
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_stream_shards_go_in_a_data_dir_not_made_yet(tmp_path: Path) -> None:
    # --only stream --data-dir DIR failed with FileNotFoundError where DIR was not made
    # yet (in a whole run an earlier section made it)
    pytest.importorskip("webdataset")
    from benchmarks.sections import stream

    square = [{"image": np.zeros((32, 32, 3), np.uint8), "bboxes": np.zeros((0, 4), np.float32),
               "labels": np.zeros(0, np.int64)}]  # fmt: skip
    data_dir = tmp_path / "not" / "made"
    bench = SimpleNamespace(
        data_dir=data_dir, seed=0, batch_size=2, settings=SimpleNamespace(stream_samples=4),
        sources=SimpleNamespace(square=square),
    )  # fmt: skip
    prepared = stream.prepare(bench)  # type: ignore[arg-type]
    assert prepared.folder is not None
    assert prepared.folder.parent == data_dir
    assert prepared.samples == 4
    prepared.loaders.clear()
    shutil.rmtree(prepared.folder)


def test_only_refuses_an_unknown_section(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        _cli.parse_args(["--only", "keys,speed"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert (
        "--only takes sections among keys,wrapper,mosaic,scaling,epoch,e2e,memory,mix,color,stream"
        in err
    )
    assert "'keys,speed'" in err


def test_catalogue_declares_every_row_and_goal() -> None:
    assert set(_catalogue.ROW_IDS) == EXPECTED_ROWS
    assert len(_catalogue.ROW_IDS) == len(EXPECTED_ROWS)
    assert [goal.id for goal in _goal_table.GOALS] == EXPECTED_GOALS
    for goal in _goal_table.GOALS:
        assert set(goal.rows) <= EXPECTED_ROWS, goal.id
    with pytest.raises(ValueError, match="'epoch_sampler' reads rows"):
        _goal_table.check_goals(_goal_table.GOALS, sorted(EXPECTED_ROWS - {"epoch/sampler_plain"}))
    with pytest.raises(ValueError, match="goal ids repeat"):
        _goal_table.check_goals([*_goal_table.GOALS, _goal_table.GOALS[0]], _catalogue.ROW_IDS)
    assert _catalogue.section("epoch").better == "lower"
    assert _catalogue.section("memory").better == "lower"
    assert _catalogue.section("mosaic").better == "higher"
    assert _catalogue.section("epoch").values([2e-6]) == [pytest.approx(2.0)]
    assert _catalogue.section("mosaic").values([0.5]) == [2.0]


def test_end_to_end_goals_against_ultralytics_note_the_floors_own_ratio() -> None:
    # the floor bounds every contender: a miss reads against what the floor itself reaches
    racing = [g for g in _goal_table.GOALS if g.id in ("e2e_ram", "e2e_default")]
    assert len(racing) == 2
    for goal in racing:
        assert ("the floor with cached reads itself", "e2e/floor_cached_0w",
                goal.rows[1]) in goal.compare, goal.id  # fmt: skip
        assert ("from memory", "e2e/floor_0w", goal.rows[1]) in goal.compare, goal.id
    report = _report.Report(meta={})
    for row_id, rate in (("e2e/fused_cached_0w", 3.0), ("e2e/ultralytics_ram_0w", 2.0),
                         ("e2e/floor_cached_0w", 4.0), ("e2e/floor_0w", 5.0)):  # fmt: skip
        extra = {"per_cpu_second": [rate, rate]}
        report.add(_report.Row(row_id, row_id, "samples/s", "higher", [rate, rate], extra=extra))
    report.work = {row_id: {"hsv": _same_work.Setting("p=1")} for row_id in report.rows}
    result = racing[0].evaluate(report)
    assert result["measured"] == pytest.approx(1.5)
    assert "the floor with cached reads itself 2.00x; from memory 2.50x" in result["note"]
    floor = next(g for g in _goal_table.GOALS if g.id == "e2e_floor").evaluate(report)
    assert floor["measured"] == pytest.approx(0.75)  # against the floor with rankaug's reads
    assert "the floor from memory 0.60x" in floor["note"]


def _report_of(*, recorded: bool = True, **values: list[float]) -> _report.Report:
    """Rows of these values; ``recorded``: each row's contender does the same work."""
    report = _report.Report(meta={})
    for row_id, per_round in values.items():
        report.add(_report.Row(row_id, row_id, "µs/index", "lower", per_round))
        if recorded:
            report.work[row_id] = {"hsv": _same_work.Setting("p=1")}
    return report


class TestGoals:
    def test_difference_is_of_the_medians_with_the_spread(self) -> None:
        report = _report_of(a=[1.5, 1.2, 1.4], b=[0.5, 0.6, 0.1])
        goal = _goals.Goal("d", "difference", ("a", "b"), "<=", 1.0, "a - b", "look")
        result = goal.evaluate(report)
        assert result["measured"] == pytest.approx(1.4 - 0.5)
        assert result["status"] == "PASS"
        assert result["margin"] == pytest.approx((1.0 - 0.9) / 1.0)
        assert "per round +0.60..+1.30 (median +1.00)" in result["note"]
        assert "look" not in result["note"]
        assert report.differences["a - b"]["difference"] == pytest.approx(0.9)
        missed = _goals.Goal("d", "difference", ("a", "b"), "<=", 0.5, "a - b", "look")
        result = missed.evaluate(report)
        assert result["status"] == "MISS"
        assert result["note"].endswith("; look")

    def test_ratio_absolute_and_missing_rows(self) -> None:
        report = _report_of(a=[4.0, 6.0], b=[2.0, 2.0])
        ratio = _goals.Goal("r", "ratio", ("a", "b"), ">=", 2.0, "a / b")
        assert ratio.evaluate(report)["measured"] == pytest.approx(2.5)
        assert ratio.evaluate(report)["status"] == "PASS"
        absolute = _goals.Goal("x", "absolute", ("a",), "<=", 4.0, "a", compare=(("b alone", "b"),))
        result = absolute.evaluate(report)
        assert (result["measured"], result["status"]) == (5.0, "MISS")
        assert result["note"] == "best round 4.0; b alone 2.0 in the same rounds; run --profile"
        report.add(_report.Row("c", "c", "mosaics/s", "higher", status="unavailable"))
        absent = _goals.Goal("r", "ratio", ("a", "c"), ">=", 1, "a / c")
        result = absent.evaluate(report)
        assert (result["measured"], result["status"], result["margin"]) == (None, "N/A", None)

    def test_ratio_notes_the_ratios_it_compares_with(self) -> None:
        report = _report_of(a=[6.0], b=[2.0], c=[4.0])
        compare = (("against c", "a", "c"), ("missing", "a", "nowhere"))
        goal = _goals.Goal("r", "ratio", ("a", "b"), ">=", 2.0, "a / b", compare=compare)
        result = goal.evaluate(report)
        assert (result["measured"], result["status"]) == (3.0, "PASS")
        assert result["note"] == "against c 1.50x"  # a row that is missing adds nothing
        assert goal.rows == ("a", "b")

    def test_cpu_ratio_reads_samples_per_cpu_second(self) -> None:
        report = _report_of(a=[60.0, 80.0], b=[40.0, 40.0], c=[10.0])
        report.rows["a"].extra["per_cpu_second"] = [100.0, 120.0]
        report.rows["b"].extra["per_cpu_second"] = [50.0, 50.0]
        compare = (("against c", "a", "c"),)
        goal = _goals.Goal("c", "cpu", ("a", "b"), ">=", 2.0, "a / b", compare=compare)
        result = goal.evaluate(report)
        assert (result["measured"], result["status"]) == (pytest.approx(2.2), "PASS")
        # c has no CPU figure: its comparison is left out rather than mixed with wall time
        assert result["note"] == "per CPU-second; wall time 1.75x"
        del report.rows["a"].extra["per_cpu_second"]
        result = goal.evaluate(report)  # no CPU time read: the wall ratio, said so
        assert (result["measured"], result["status"]) == (1.75, "MISS")
        assert result["note"].startswith("wall time (no CPU time read); against c 7.00x")

    def test_paired_ratio_prefers_the_paired_estimate(self) -> None:
        report = _report_of(w=[90.0, 100.0], d=[100.0, 100.0])
        goal = _goals.Goal("p", "paired", ("w", "d"), ">=", 0.98, "w / d", diagnostic="pairs")
        assert goal.evaluate(report)["measured"] == pytest.approx(0.95)  # no pairs: medians
        report.diagnostics["pairs"] = {"ratio": 0.99, "extra_us": 10.0, "pairs": 8.0}
        result = goal.evaluate(report)
        assert (result["measured"], result["status"]) == (0.99, "PASS")
        assert "from 8 paired samples" in result["note"]
        assert "ratio of the round medians 0.950" in result["note"]

    def test_paired_ratio_notes_the_ratios_it_compares_with(self) -> None:
        report = _report_of(w=[90.0], d=[100.0], f=[50.0])
        compare = (("floor", "f", "d"),)
        goal = _goals.Goal("p", "paired", ("w", "d"), ">=", 0.9, "w / d", compare=compare,
                           diagnostic="pairs")  # fmt: skip
        report.diagnostics["pairs"] = {"ratio": 0.93, "extra_us": 5.0, "pairs": 4.0}
        result = goal.evaluate(report)
        assert result["measured"] == 0.93
        assert result["note"].endswith("; floor 0.50x")

    def test_scaling_ratio_notes_the_projection(self) -> None:
        report = _report_of(two=[300.0], one=[200.0])
        report.rows["two"].note = "got 1.9 cores"
        report.rows["two"].extra["projected"] = [400.0]
        report.rows["one"].extra["projected"] = [200.0]
        goal = _goals.Goal("s", "scaling", ("two", "one"), ">=", 1.6, "2 / 1")
        result = goal.evaluate(report)
        assert (result["measured"], result["status"]) == (1.5, "MISS")
        assert result["note"].startswith("got 1.9 cores; projected on")
        assert "2.00x" in result["note"]
        assert "bound" not in result["note"]  # no transport bound measured

    def test_scaling_ratio_notes_what_the_split_of_the_work_allows(self) -> None:
        from benchmarks._loaders import Chunk, share_bound

        one = Chunk(rate=100.0, cores=1.5, waiting=0.0, main=0.5)  # 10 + 5 ms a sample
        report = _report_of(two=[120.0], one=[100.0])
        for row, workers in (("two", 2), ("one", 1)):
            report.rows[row].extra["bound"] = [share_bound(one, workers, 2) or 0.0]
        goal = _goals.Goal("s", "scaling", ("two", "one"), ">=", 1.6, "2 / 1")
        note = goal.evaluate(report)["note"]
        assert f"allows 1.33x on {os.cpu_count()} idle cores" in note  # 2 x 10 / (10 + 5)

    def test_share_bound_is_the_slowest_of_workers_main_and_cores(self) -> None:
        from benchmarks._loaders import Chunk, share_bound

        one = Chunk(rate=25.0, cores=1.125, waiting=0.1, main=0.125)  # 40 + 5 ms a sample
        assert share_bound(one, 1, 8) == pytest.approx(1000 / 40)  # the worker
        assert share_bound(one, 4, 8) == pytest.approx(1000 / 10)  # four workers
        assert share_bound(one, 16, 8) == pytest.approx(1000 / 5.625)  # the cores
        assert share_bound(one, 16, 64) == pytest.approx(1000 / 5)  # the main process
        assert share_bound(Chunk(25.0, None, None), 2, 2) is None  # no CPU times read

    def test_a_goal_on_contenders_doing_different_work_is_refused(self) -> None:
        report = _report_of(a=[4.0], b=[2.0])
        ratio = _goals.Goal("r", "ratio", ("a", "b"), ">=", 1.5, "a / b")
        same = {"hsv": _same_work.Setting("p=1", "RandomHSV"), "flip": _same_work.Setting("p=0.5")}
        report.work = {"a": same, "b": {**same, "hsv": _same_work.Setting("p=1", "A.HSV")}}
        assert ratio.evaluate(report)["status"] == "PASS"  # how ("via") is not compared
        report.work["a"] = {**same, "hsv": _same_work.Setting("p=0.5")}
        result = ratio.evaluate(report)
        assert (result["status"], result["measured"]) == ("REFUSED", None)
        assert result["note"] == "not like for like: hsv: p=0.5 vs p=1"
        cost = _goals.Goal("c", "ratio", ("a", "b"), ">=", 1.5, "a / b", like_for_like=False)
        assert cost.evaluate(report)["status"] == "PASS"  # what a feature costs

    def test_a_goal_without_work_records_is_not_reported(self) -> None:
        report = _report_of(recorded=False, a=[4.0], b=[2.0])
        peer = _goals.Goal("r", "ratio", ("a", "b"), ">=", 1.5, "a / b")
        result = peer.evaluate(report)  # like for like unchecked: no figure, no PASS
        assert (result["status"], result["measured"]) == ("N/A", None)
        assert result["note"] == "like for like unchecked: no same-work record for a, b"
        report.work["a"] = {"hsv": _same_work.Setting("p=1")}
        assert peer.evaluate(report)["note"].endswith("record for b")
        cost = _goals.Goal("c", "ratio", ("a", "b"), ">=", 1.5, "a / b", like_for_like=False)
        assert cost.evaluate(report)["status"] == "PASS"  # what a feature costs: no check
        alone = _goals.Goal("x", "absolute", ("a",), "<=", 5.0, "a")
        assert alone.evaluate(_report_of(a=[4.0]))["status"] == "PASS"  # one row: no peer

    def test_every_goal_on_two_rows_has_its_rows_work_recorded_or_measures_a_cost(self) -> None:
        # the sections record work for every row a like-for-like goal reads: see the
        # quick run's goals (none N/A for want of a record where both rows were measured)
        costs = {g.id for g in _goal_table.GOALS if not g.like_for_like}
        assert costs == {
            "mosaic_affine_plain",
            *(g for g in EXPECTED_GOALS if g.startswith("epoch_")),
        }

    def test_a_ratio_of_unlike_work_says_where_they_differ(self) -> None:
        report = _report_of(a=[4.0, 4.0], b=[2.0, 2.0], c=[1.0, 1.0])
        same = {"affine": _same_work.Setting("none"), "flip": _same_work.Setting("p=0")}
        report.work = {"a": same, "b": {**same, "affine": _same_work.Setting("p=1")}, "c": same}
        entry = report.ratio("a", "b")
        assert entry is not None
        assert entry["unlike"] == ["affine: none vs p=1"]
        assert _report.ratio_text(entry) == "2.00x; not like for like: affine: none vs p=1"
        like = report.ratio("a", "c")
        assert like is not None
        assert (like["unlike"], _report.ratio_text(like)) == ([], "4.00x")
        lines: list[str] = []
        _report.print_rows(lines.append, report, ["a"], baseline="b")  # type: ignore[arg-type]
        assert lines[-1].endswith("[not like for like: affine: none vs p=1]")

    def test_describe_reads_the_affines_axes(self) -> None:
        import albumentations as A

        def affine(**kwargs: Any) -> str:
            compose = A.Compose([A.Affine(scale=(0.5, 1.5), translate_percent=(-0.1, 0.1), p=1,
                                          **kwargs)])  # fmt: skip
            return _same_work.describe(compose)["affine"].value

        one = "p=1, scale 0.5-1.5, translate ±0.1, degrees ±0, shear ±0"
        assert affine(keep_ratio=True) == one  # one scale for both axes, as ultralytics
        assert affine() == (  # keep_ratio=False draws x and y apart: not the same work
            "p=1, scale x 0.5-1.5 and y 0.5-1.5 drawn apart, translate ±0.1, degrees ±0, shear ±0"
        )
        assert "shear x ±0 y ±5" in affine(keep_ratio=True, shear={"x": 0, "y": (-5, 5)})

    def test_describe_reads_a_mosaics_tiles_and_visible_cells(self) -> None:
        import albumentations as A

        from rankaug import MosaicDataset, MosaicGrid

        blank = {"image": np.zeros((8, 8, 3), np.uint8), "bboxes": np.zeros((0, 4)), "labels": []}

        def albumentations(grid: int, cell: int, fit: str) -> str:
            mosaic = A.Mosaic(grid_yx=(grid, grid), target_size=(96, 96), cell_shape=(cell, cell),
                              fit_mode=fit, p=1.0)  # fmt: skip
            return _same_work.describe(A.Compose([mosaic]))["mosaic"].value

        def rankaug(grid: int) -> str:
            layout = MosaicGrid(grid=(grid, grid))
            dataset = MosaicDataset([blank], seed=0, output_size=96, layout=layout)
            return _same_work.describe(dataset)["mosaic"].value

        assert (
            rankaug(2)
            == albumentations(2, 96, "contain")
            == ("2x2 p=1, tiles fit in 96x96 (aspect kept), up to 4 cells visible")
        )
        assert albumentations(2, 96, "cover").endswith(
            "tiles cover 96x96 (cropped), up to 4 cells visible"
        )
        assert albumentations(3, 96, "cover").endswith("up to 4 cells visible")  # the window: 2x2
        assert albumentations(3, 32, "cover").endswith("up to 9 cells visible")
        assert rankaug(3).endswith("tiles fit in 96x96 (aspect kept), up to 9 cells visible")

    def test_describe_reads_how_a_folder_decodes(self, tmp_path: Path) -> None:
        from benchmarks._e2e_floor import floor_work
        from benchmarks._pipelines import source
        from rankaug import CachedDataset, MosaicDataset

        root = _jpegs.jpeg_folder(2, 32, data="synthetic", data_dir=tmp_path, seed=1).root
        ours = _same_work.describe(MosaicDataset(source(root, 32), seed=0, output_size=32))
        cached = CachedDataset(source(root, 32), tmp_path / "cache")
        read = _same_work.describe(MosaicDataset(cached, seed=0, output_size=32))
        reduced = _same_work.describe(MosaicDataset(source(root, 32, reduced=True), seed=0,
                                                    output_size=32))  # fmt: skip
        floor = _same_work.describe(floor_work(32))
        full = "full decode, long side 32, INTER_LINEAR"
        assert ours["decode"].value == read["decode"].value == floor["decode"].value == full
        assert read["decode"].via.endswith("decoded once, read from CachedDataset")
        assert reduced["decode"].value.startswith("JPEG decoder shrinks 2-8x")
        assert ours["output"].value == floor["output"].value == "RGB"  # the channel order
        output = _same_work.with_output(ours, "(B, 3, 32, 32) torch.uint8")["output"].value
        assert output == "(B, 3, 32, 32) torch.uint8, RGB"
        assert _same_work.differences(ours, floor, ("decode", "mosaic", "output")) == []

    def test_describe_reads_the_contenders_objects(self) -> None:
        import numpy as np

        from rankaug import MosaicAffine, MosaicDataset

        blank = {"image": np.zeros((8, 8, 3), np.uint8), "bboxes": np.zeros((0, 4)), "labels": []}
        mosaic: MosaicDataset[Any] = MosaicDataset(
            [blank], seed=0, output_size=8, affine=MosaicAffine(flip=0.5)
        )
        floor = _same_work.FloorWork(grid=(2, 2), tile=(8, 8), scale=0.5, translate=0.1, flip=0.5)
        work, other = _same_work.describe(mosaic), _same_work.describe(floor)
        assert _same_work.differences(work, other) == []
        assert work["affine"].value == "p=1, scale 0.5-1.5, translate ±0.1, degrees ±0, shear ±0"
        assert work["flip"].value == "horizontal p=0.5, vertical p=0"
        plain = _same_work.describe(MosaicDataset([blank], seed=0, output_size=8))
        assert _same_work.differences(plain, other) == [
            "affine: none vs p=1, scale 0.5-1.5, translate ±0.1, degrees ±0, shear ±0",
            "flip: horizontal p=0, vertical p=0 vs horizontal p=0.5, vertical p=0",
        ]


@pytest.mark.parametrize("module", [_timing, _goal_table, _report, _same_work, _cv2_split])
def test_helpers_doctests(module: Any) -> None:
    results = doctest.testmod(module)
    assert results.attempted > 0
    assert results.failed == 0


def test_pass_chunks_continue_each_pass_and_keep_the_epoch() -> None:
    from benchmarks import _loaders
    from rankaug import EpochIndex, EpochSampler

    assert doctest.testmod(_loaders).failed == 0
    chunks = _loaders.PassChunks({"carried": EpochSampler([0, 1, 2], epoch=4), "plain": [5, 6]})
    chunks.count = 2
    seen = [list(chunks)]
    chunks.use = "plain"
    assert [list(chunks), list(chunks)] == [[5, 6], [5, 6]]
    chunks.use = "carried"
    seen += [list(chunks), list(chunks)]  # the carried pass continues where it stopped
    assert seen == [[0, 1], [2, 0], [1, 2]]
    flat = [index for chunk in seen for index in chunk]
    assert all(isinstance(index, EpochIndex) for index in flat)
    assert [index.epoch for index in flat] == [4, 4, 4, 5, 5, 5]  # a new pass, a new epoch
    empty = _loaders.PassChunks({"none": []})
    empty.count = 1
    with pytest.raises(ValueError, match="'none' gives no index"):
        list(empty)


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


class TestPairedThroughput:
    def test_a_ratio_of_total_times_not_a_median_of_ratios(self) -> None:
        from benchmarks._timing import paired_throughput

        # three cheap pairs the contender does at half the time, one dear pair at 1.5x
        baseline, contender = [1.0, 1.0, 1.0, 10.0], [0.5, 0.5, 0.5, 15.0]
        paired = paired_throughput(baseline, contender, [True, False, True, False])
        # totals by who went first: 11 / 15.5 and 2 / 1, averaged geometrically
        assert paired["ratio"] == pytest.approx(math.sqrt(11.0 / 15.5 * 2.0 / 1.0))
        assert paired["extra_us"] == pytest.approx((16.5 - 13.0) / 4 * 1e6)
        assert paired["pairs"] == 4.0

    def test_one_order_alone_is_its_ratio(self) -> None:
        from benchmarks._timing import paired_throughput

        assert paired_throughput([2.0, 2.0], [1.0, 3.0], [True, True])["ratio"] == 1.0

    def test_refuses_unmatched_lists(self) -> None:
        from benchmarks._timing import paired_throughput

        with pytest.raises(ValueError, match="as many pairs"):
            paired_throughput([1.0], [1.0, 2.0], [True])


def test_race_both_listings_builds_afresh_and_lists_each_contender_first_once() -> None:
    from benchmarks._timing import race_both_listings

    calls: list[str] = []
    builds: list[int] = []

    def build() -> dict[str, _timing.Op]:
        builds.append(len(builds))
        tag = len(builds)
        return {
            "a": _timing.counted(lambda i: calls.append(f"a{tag}.{i}")),
            "b": _timing.counted(lambda i: calls.append(f"b{tag}.{i}")),
        }

    seconds, record, firsts = race_both_listings(
        build, per_round=4, repeats=3, warmup=1, progress=None, label="x"
    )
    assert builds == [0, 1]  # fresh contenders for each listing
    # the first listing warms up and starts with a, the second with b
    assert calls[:3] == ["a1.0", "b1.0", "a1.1"]
    second = calls.index("b2.0")
    assert calls[second : second + 3] == ["b2.0", "a2.0", "b2.1"]
    # one value per repeat, as in every other race (the report's rows count on it)
    assert {name: len(values) for name, values in seconds.items()} == {"a": 3, "b": 3}
    assert {name: len(values) for name, values in record.items()} == {"a": 12, "b": 12}
    assert len(firsts) == 12
    assert Counter(firsts) == {"a": 6, "b": 6}
    assert Counter(firsts[:6]) == Counter(firsts[6:])


def test_alternate_shuffles_three_or_more_so_no_one_keeps_a_neighbour() -> None:
    def run() -> list[str]:
        calls: list[str] = []

        def contender(name: str) -> _timing.Op:
            return _timing.counted(lambda i: calls.append(name))

        ops = {name: contender(name) for name in "abcd"}
        _timing.alternate(ops, per_round=60, repeats=2, warmup=0)
        return calls

    calls = run()
    turns = [calls[k : k + 4] for k in range(0, len(calls), 4)]
    assert all(sorted(turn) == list("abcd") for turn in turns)  # each once a turn
    followed = Counter(itertools.pairwise(calls))
    # every contender follows every other, none mostly the same one (12 pairs, 479 steps)
    others = {(x, y): count for (x, y), count in followed.items() if x != y}
    assert len(others) == 12
    assert max(others.values()) < 2 * min(others.values())
    assert Counter(turn[0] for turn in turns)["a"] < 60  # the first listed is not always first
    assert run() == calls  # seeded: the same orders in every run


class TestJpegFolder:
    def test_built_once_then_reused(self, tmp_path: Path) -> None:
        from rankaug.datasets import YoloFolder

        made = _jpegs.jpeg_folder(10, 64, data="synthetic", data_dir=tmp_path, seed=3)
        assert (made.count, made.kind, made.built) == (10, "synthetic", True)
        jpegs = sorted((made.root / "images").glob("*.jpg"))
        assert len(jpegs) == 10
        folder = YoloFolder(made.root)  # the labels parse, every box inside its image
        shapes = {folder[i]["image"].shape[:2] for i in range(len(folder))}
        assert shapes <= {(48, 64), (43, 64), (64, 48), (72, 128)}
        assert (72, 128) in shapes  # the 1280x720 class, scaled for a 64 output
        assert sum(len(folder[i]["bboxes"]) for i in range(len(folder))) > 0
        again = _jpegs.jpeg_folder(10, 64, data="synthetic", data_dir=tmp_path, seed=3)
        assert (again.root, again.built) == (made.root, False)
        (made.root / "folder.json").write_text("{}")  # a stale marker: built anew
        assert _jpegs.jpeg_folder(10, 64, data="synthetic", data_dir=tmp_path, seed=3).built
        other = _jpegs.jpeg_folder(10, 64, data="synthetic", data_dir=tmp_path, seed=4)
        assert other.root != made.root
        assert not list(tmp_path.glob("*.building-*"))  # nothing left half-built

    def test_doctests(self) -> None:
        results = doctest.testmod(_jpegs)
        assert (results.attempted > 0, results.failed) == (True, 0)


class TestFloorMosaic:
    @staticmethod
    def _tiles(sizes: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
        """One constant colour per tile (10, 20, ...), one box over the whole tile, labelled so."""
        return [
            {
                "image": np.full((h, w, 3), 10 * (k + 1), np.uint8),
                "bboxes": np.array([[0.0, 0.0, w, h]], np.float32),
                "labels": np.array([k], np.int64),
            }
            for k, (h, w) in enumerate(sizes)
        ]

    def test_targets_cover_exactly_the_pixels_of_their_tiles(self) -> None:
        import random

        from benchmarks.peers import floor_mosaic

        tiles = self._tiles([(48, 64), (64, 48), (40, 40), (64, 64)])
        plain = floor_mosaic(tiles, (64, 64), rng=random.Random(3))
        step = floor_mosaic(tiles, (64, 64), rng=random.Random(3), targets=True)
        for i in range(12):
            out, image = step(i), plain(i)["image"]
            np.testing.assert_array_equal(out["image"], image)  # the same draws and pixels
            assert out["bboxes"].dtype == np.float32
            assert out["labels"].dtype == np.int64
            assert out["bboxes"].shape == (len(out["labels"]), 4)
            assert len(out["labels"]) >= 1  # the main tile always shows
            covered = np.zeros(image.shape[:2], bool)
            rows = zip(out["bboxes"].tolist(), out["labels"].tolist(), strict=True)
            for (x0, y0, x1, y1), label in rows:
                region = image[round(y0) : round(y1), round(x0) : round(x1)]
                assert region.size
                assert bool((region == 10 * (label + 1)).all())
                covered[round(y0) : round(y1), round(x0) : round(x1)] = True
            assert bool((image[~covered] == 114).all())  # the rest is fill: no tile missed

    def test_without_targets_the_output_is_the_image_alone(self) -> None:
        import random

        from benchmarks.peers import floor_mosaic

        out = floor_mosaic(self._tiles([(32, 32)] * 4), (32, 32), rng=random.Random(0))(0)
        assert list(out) == ["image"]


def test_the_mosaic_contenders_3x3_show_nine_sources() -> None:
    from benchmarks.sections.mosaic import mosaic_contenders

    sources: list[dict[str, np.ndarray]] = []
    for k in range(40):  # each a flat colour of its own (partners: rarely one twice)
        image = np.empty((72, 96, 3) if k % 2 else (96, 72, 3), np.uint8)
        image[:] = (10 + 5 * k, 250 - 3 * k, 6 * k)
        sources.append({"image": image, "bboxes": np.array([[1.0, 1.0, 9.0, 9.0]], np.float32),
                        "labels": np.array([k], np.int64)})  # fmt: skip
    colours = {tuple(s["image"][0, 0]) for s in sources}
    makers, _ = mosaic_contenders(sources, 96, 0)
    for row in ("mosaic/rankaug_3x3", "mosaic/albumentations_3x3"):
        seen = [
            len({tuple(c) for c in np.unique(makers[row](i)["image"].reshape(-1, 3), axis=0)}
                & colours)
            for i in range(24)
        ]  # fmt: skip
        assert max(seen) == 9, row  # a cell of the output's size showed four at most


class TestFloorDataset:
    def test_its_images_are_ultralytics_decode_in_rgb(self, tmp_path: Path) -> None:
        from benchmarks._e2e_floor import FloorDataset
        from benchmarks._pipelines import source

        root = _jpegs.jpeg_folder(3, 48, data="synthetic", data_dir=tmp_path, seed=1).root
        floor, folder = FloorDataset(root, 24), source(root, 24)  # a 2x shrink of each JPEG
        for i in range(3):  # rankaug's folder as its pipelines read it: the same pixels
            np.testing.assert_array_equal(floor.images[i], folder[i]["image"])

    def test_cached_reads_give_the_same_batches_from_the_cache_files(self, tmp_path: Path) -> None:
        import numpy as np

        from benchmarks._e2e_floor import CACHED_FLOOR_WORK, FLOOR_WORK, FloorDataset
        from benchmarks._e2e_floor import collate_floor as collate
        from rankaug import CachedDataset

        root = _jpegs.jpeg_folder(6, 48, data="synthetic", data_dir=tmp_path, seed=1).root
        memory = FloorDataset(root, 48, seed=2)
        cached = FloorDataset(root, 48, seed=2, cache_dir=tmp_path / "cache")
        floors = (memory, cached)
        assert isinstance(cached.images, CachedDataset)  # every tile read from the cache
        assert cached.images.read_only_arrays  # as rankaug cached reads its tiles
        assert len(cached.images) == len(memory.images) == 6
        images = [memory.images[i] for i in range(6)]
        pixels = sum(image.nbytes for image in images)
        assert cached.images.stored_bytes() >= pixels  # every image stored when built
        for i, image in enumerate(images):
            np.testing.assert_array_equal(cached.images[i], image)  # decoded alike
        for start in (0, 3):
            batch = [memory[i] for i in range(start, start + 3)]
            again = [cached[i] for i in range(start, start + 3)]
            assert [f for _, f in again] == [f for _, f in batch]
            assert bool((collate(again) == collate(batch)).all())  # the same pixel work
        assert (cached.work.via, memory.work.via) == (CACHED_FLOOR_WORK.via, FLOOR_WORK.via)
        assert "cached reads" in cached.work.via
        assert "cached" not in memory.work.via
        values = [{a: w.value for a, w in _same_work.describe(f.work).items()} for f in floors]
        assert values[0] == values[1]  # the same work, said to be done another way
        other = FloorDataset(root, 40, seed=2, cache_dir=tmp_path / "cache")  # same directory
        assert isinstance(other.images, CachedDataset)
        assert other.images.path != cached.images.path  # another side: never the stale images
        assert other.images[0].shape[:2] != cached.images[0].shape[:2]

    def test_in_workers_its_batches_go_into_recycled_shared_buffers(self, tmp_path: Path) -> None:
        import torch
        from torch.utils.data import DataLoader

        from benchmarks._e2e_floor import FLOOR_TALLY, FloorDataset, collate_floor

        root = _jpegs.jpeg_folder(8, 32, data="synthetic", data_dir=tmp_path, seed=1).root
        loader = DataLoader(FloorDataset(root, 32, seed=2), batch_size=2, num_workers=2,
                            collate_fn=collate_floor, persistent_workers=True)  # fmt: skip
        before = dict(FLOOR_TALLY.counts)
        shapes = {tuple(batch.shape) for _ in range(3) for batch in loader}
        counts = {kind: FLOOR_TALLY.counts[kind] - before[kind] for kind in before}
        assert shapes == {(2, 3, 32, 32)}
        assert sum(counts.values()) == 12  # every batch came in a buffer of the pools
        assert counts["reused"] >= 4  # as BatchCollator recycles rankaug's
        assert counts["unpooled"] == 0
        assert collate_floor([FloorDataset(root, 32, seed=2)[0]]).dtype == torch.uint8

    def test_its_colour_is_ultralytics_hsv_without_the_exactness_probes(
        self, tmp_path: Path
    ) -> None:
        import numpy as np

        from benchmarks._e2e_floor import FLOOR_WORK, FloorDataset
        from rankaug import HSVJitter

        root = _jpegs.jpeg_folder(2, 64, data="synthetic", data_dir=tmp_path, seed=1).root
        floor = FloorDataset(root, 64, seed=2)
        assert FLOOR_WORK.hsv is not None
        jitter, rng = HSVJitter(*FLOOR_WORK.hsv), np.random.default_rng(0)  # RGB, as its images
        exact = 0
        for _ in range(200):
            image = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
            draw = jitter.draw(rng)
            expected = jitter.apply(image, draw)
            floor.colour(image, draw)
            assert int(np.abs(image.astype(int) - expected).max()) <= 1
            exact += bool((image == expected).all())
        assert exact >= 190  # the rest: k * x within float32's error of a whole number


class TestPipelines:
    def test_the_cached_pipelines_read_as_the_floor_with_cached_reads(self, tmp_path: Path) -> None:
        import torch

        from benchmarks._pipelines import CACHED, build
        from rankaug import CachedDataset

        root = _jpegs.jpeg_folder(4, 48, data="synthetic", data_dir=tmp_path, seed=1).root
        for name in CACHED:
            pipeline = build(name, root, 48, cache_dir=tmp_path / name)
            layer = pipeline.dataset
            while not isinstance(layer, CachedDataset):  # the wrappers, then the cache
                layer = layer.images if name == "floor_cached" else layer.dataset
            assert layer.read_only_arrays, name
            batch = pipeline.collate([pipeline.dataset[i] for i in range(2)])  # fills, reads
            image = batch if isinstance(batch, torch.Tensor) else batch["image"]
            assert tuple(image.shape) == (2, 3, 48, 48), name

    def test_rankaug_reads_as_ultralytics_and_affines_with_one_scale(self, tmp_path: Path) -> None:
        import albumentations as A

        from benchmarks._pipelines import build
        from rankaug.datasets import YoloFolder

        root = _jpegs.jpeg_folder(2, 32, data="synthetic", data_dir=tmp_path, seed=1).root
        for name in ("rankaug", "fused", "fused_reduced"):
            layer = build(name, root, 32).dataset
            transform = getattr(layer, "transform", None)
            while not isinstance(layer, YoloFolder):
                layer = layer.dataset
            ultralytics = (layer.reduced_decode, layer.interpolation) == (False, "linear")
            assert ultralytics == (name != "fused_reduced"), name
            if transform is not None:
                affine = next(t for t in transform.transforms if isinstance(t, A.Affine))
                assert affine.keep_ratio, name  # one scale for x and y, as ultralytics

    def test_rankaug_batches_as_the_batches_guide_recommends_with_workers(
        self, tmp_path: Path
    ) -> None:
        from torch.utils.data import DataLoader

        from benchmarks._pipelines import build
        from rankaug.collate import BatchCollator

        root = _jpegs.jpeg_folder(8, 32, data="synthetic", data_dir=tmp_path, seed=1).root
        pipeline = build("fused", root, 32)
        collate = pipeline.collate
        assert isinstance(collate, BatchCollator)
        assert "channels_first=True" in repr(collate)
        loader = DataLoader(pipeline.dataset, batch_size=2, num_workers=2, collate_fn=collate,
                            persistent_workers=True)  # fmt: skip
        shapes = {tuple(batch["image"].shape) for _ in range(3) for batch in loader}
        assert shapes == {(2, 3, 32, 32)}
        assert collate.stats.reused >= 4  # a worker's buffers recycled
        assert collate.stats.unpooled == 0


class TestMemory:
    def test_watch_sums_each_tree_at_ready(self, tmp_path: Path) -> None:
        # a parent holding 48 MiB whose child holds 32 MiB: both in the parent's tree
        child = "import sys; b = bytearray(32 << 20); print('up', flush=True); sys.stdin.read()"
        parent = (
            "import subprocess, sys; "
            f"c = subprocess.Popen([sys.executable, '-c', {child!r}], stdout=subprocess.PIPE, "
            "stdin=subprocess.PIPE); c.stdout.readline(); b = bytearray(48 << 20); "
            "print('ready', flush=True); sys.stdin.read(); c.stdin.close(); c.wait()"
        )
        small = "import sys; print('ready', flush=True); sys.stdin.read()"
        seen = _memory.watch(
            [[sys.executable, "-c", parent], [sys.executable, "-c", small]],
            env=dict(os.environ),
            cwd=tmp_path,
        )
        assert [len(tree) for tree in seen.ready] == [2, 1]
        assert seen.ready_kib([0]) > 80 * 1024
        assert seen.ready_kib([1]) < 40 * 1024
        assert seen.ready_kib([0, 1]) == seen.ready_kib([0]) + seen.ready_kib([1])
        assert seen.peak_kib([0]) >= seen.ready_kib([0])
        assert seen.lines == [["ready"], ["ready"]]

    def test_watch_leaves_out_the_mappings_of_files_under_a_path(self, tmp_path: Path) -> None:
        # one process maps a 32 MiB file under cache/ and touches every page of it
        cache = tmp_path / "cache"
        cache.mkdir()
        (cache / "f").write_bytes(b"x" * (32 << 20))
        mapper = (
            "import mmap, sys; f = open(sys.argv[1], 'rb'); "
            "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); s = sum(m[::4096]); "
            "print('ready', flush=True); sys.stdin.read()"
        )
        command = [[sys.executable, "-c", mapper, str(cache / "f")]]
        counted = _memory.watch(command, env=dict(os.environ), cwd=tmp_path)
        apart = _memory.watch(command, env=dict(os.environ), cwd=tmp_path, excluding=str(cache))
        assert counted.ready_kib([0]) - apart.ready_kib([0]) > 28 * 1024

    def test_watch_reports_a_command_that_fails(self, tmp_path: Path) -> None:
        failing = "import sys; print('oops', file=sys.stderr); sys.exit(3)"
        with pytest.raises(RuntimeError, match=r"command 0 exited \(3\).*oops"):
            _memory.watch([[sys.executable, "-c", failing]], env=dict(os.environ), cwd=tmp_path)

    def test_doctests(self) -> None:
        results = doctest.testmod(_memory)
        assert (results.attempted > 0, results.failed) == (True, 0)


def test_the_e2e_floor_jitters_its_rows_as_it_would_the_whole_image(tmp_path: Path) -> None:
    # the floor converts only the rows its tiles reach and sets the rest to the grey's
    # jittered value: the pixels of its colour step on the whole painted image, bit for
    # bit, within a level of HSVJitter's (the floor skips HSVJitter's exactness probes)
    from benchmarks._e2e_floor import FILL, FloorDataset
    from rankaug import HSVJitter
    from rankaug.hsv import HSVDraw

    class Spy(FloorDataset):
        seen: list[tuple[np.ndarray, list[float]]]

        def colour(self, out: np.ndarray, gains: Sequence[float]) -> None:
            assert out.base is not None  # a block of the output's rows
            self.seen.append((out.base.copy(), list(gains)))
            super().colour(out, gains)

    folder = _jpegs.jpeg_folder(12, 64, data="synthetic", data_dir=tmp_path)
    floor = Spy(folder.root, 64, seed=1)
    floor.seen = []
    jitter = HSVJitter(0.015, 0.7, 0.4)  # RGB, as its images
    skipped = 0
    for i in range(40):
        image, _ = floor[i]
        before, gains = floor.seen[-1]
        skipped += int((before == FILL).all(axis=(1, 2)).sum())
        whole = before.copy()
        FloorDataset.colour(floor, whole, gains)
        np.testing.assert_array_equal(image, whole)
        exact = jitter.apply(before, HSVDraw(*gains)).astype(np.int16)
        assert np.abs(exact - image).max() <= 1
    assert skipped > 0  # some rows held the fill alone
