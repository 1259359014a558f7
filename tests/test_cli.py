"""``python -m rankaug``: demo, audit and show on real gloo ranks, and their errors.

Every launch here is real: fresh rank processes (rankaug.cli.launch) in a gloo group,
each seeded alike, with forked or spawned DataLoader workers. The audit runs all its targets in one
launch (each from a freshly seeded state) to keep the file fast.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankaug.cli import COMMANDS, build_parser
from rankaug.cli.demo_sheet import (
    OUTLINE,
    REPEATED,
    demo_heading,
    demo_sheet_size,
    heading_lines,
)
from rankaug.cli.sheet import sheet_size
from rankaug.cli.verdicts import Layout, analyse
from rankaug.datasets import SyntheticDetection, YoloFolder, write_yolo_folder
from tests import ahead, cli_targets
from tests.cli_helpers import ROOT, T, read_png, run_cli, run_main, thumbnails

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(300)]


# target -> (the verdicts that fail, a phrase of the "positions" verdict)
EXPECTED: dict[str, tuple[set[str], str]] = {
    "plain": (set(), "no randomness detected"),
    "synthetic": (set(), "no randomness detected"),
    "rankaug_stream": (set(), "random: the same index gives a new output"),
    "rankaug_sample": (set(), "keyed per sample:"),
    "rankaug_sample_rank": (set(), "keyed per sample and rank"),
    "rankaug_mosaic": (set(), "random: the same index gives a new output"),
    "global_random": ({"ranks"}, "random: the same index gives a new output"),
    "yolov5_mosaic": ({"ranks"}, "random: the same index gives a new output"),
    "copied_generator": ({"ranks", "workers", "epochs"}, "random: the same"),
    "rank_worker_seeded": ({"epochs"}, "random: the same index gives a new output"),
    "unseeded": ({"reproducible"}, "random: the same index gives a new output"),
    # EpochSampler mode (the default): the epoch comes from the index, set_epoch never
    "rankaug_stream_no_set_epoch": (set(), "random: the same index gives a new output"),
    "rankaug_sample_no_set_epoch": (set(), "keyed per sample:"),
    "own_set_epoch": ({"epochs"}, "random: the same index gives a new output"),
    # ultralytics' layout, fingerprinted whole: the load time never repeats
    "ultralytics_stamped": ({"reproducible"}, "random: the same index gives a new output"),
}
CHECKED = ("ranks", "workers", "epochs", "reproducible")


# ----------------------------------------------------------------------- audit


def audit_every_target(folder: Path) -> tuple[int, str, dict[str, Any]]:
    """One audit of every target: fork workers, 2 ranks x 2 workers, 2 epochs, 2 runs
    (a job of tests.ahead)."""
    report = folder / "report.json"
    code, text, _ = run_main(
        "audit", *(T + name for name in EXPECTED), "--output", str(report), "-q"
    )
    return code, text, json.loads(report.read_text())


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, Any]]:
    return ahead.result("cli-audit", lambda: tmp_path_factory.mktemp("audit"))


class TestAudit:
    def test_exit_code_is_1_when_any_target_fails(self, audit: Any) -> None:
        code, _, report = audit
        assert code == 1
        assert report["exit_code"] == 1
        assert [r["target"] for r in report["reports"]] == [T + name for name in EXPECTED]

    @pytest.mark.parametrize("name", list(EXPECTED))
    def test_verdicts(self, audit: Any, name: str) -> None:
        failing, phrase = EXPECTED[name]
        (found,) = [r for r in audit[2]["reports"] if r["target"] == T + name]
        verdicts = {v["name"]: v for v in found["verdicts"]}
        statuses = {key: verdicts[key]["status"] for key in CHECKED}
        assert statuses == {key: "fail" if key in failing else "pass" for key in CHECKED}
        assert verdicts["positions"]["status"] == "info"
        assert phrase in verdicts["positions"]["summary"]
        assert found["exit_code"] == int(bool(failing))
        assert found["samples"] == 2 * 2 * 2 * 2 * 16  # runs x epochs x ranks x workers x positions
        nothing_random = phrase == "no randomness detected"
        outcome = "fail" if failing else "no randomness found" if nothing_random else "pass"
        assert found["verdict"] == outcome
        assert bool(found["fixes"]) is bool(failing)

    def test_the_seeds_bug_is_named_with_its_evidence(self, audit: Any) -> None:
        _, text, report = audit
        (bug,) = [r for r in report["reports"] if r["target"] == T + "global_random"]
        ranks = bug["verdicts"][0]
        assert ranks["summary"].startswith("duplicated random streams across ranks")
        # Worker w of rank 0 repeats worker w of rank 1, never another worker.
        assert ranks["evidence"][:2] == [
            "rank 0 worker 0 vs rank 1 worker 0: 32/32 identical at the same position; "
            "same index at other positions: 0/32 identical (e.g. index 0 at position 0, "
            "epoch 0)",
            "rank 0 worker 1 vs rank 1 worker 1: 32/32 identical at the same position; "
            "same index at other positions: 0/32 identical (e.g. index 0 at position 0, "
            "epoch 0)",
        ]
        assert ranks["stats"]["flagged_pairs"] == 2
        assert "verdict on tests.cli_targets:global_random: FAIL (ranks)\nfix: " in text
        assert "verdict on tests.cli_targets:rankaug_stream: PASS" in text
        assert "verdict on tests.cli_targets:plain: NO RANDOMNESS FOUND" in text
        assert "verdict on tests.cli_targets:plain: PASS" not in text
        assert text.rstrip().endswith("exit 1")

    def test_a_fail_ends_with_the_fix_for_that_pipeline(self, audit: Any) -> None:
        _, text, report = audit
        fixes = {r["target"][len(T) :]: r["fixes"] for r in report["reports"]}
        (mosaic,) = fixes["yolov5_mosaic"]
        assert "rankaug.MosaicDataset(SyntheticDetection(...), seed=0) in place of " \
            "GlobalRandomMosaic" in mosaic  # fmt: skip
        assert "worker_init_fn=rankaug.WorkerSeeder(0)" in mosaic
        (copied,) = fixes["copied_generator"]  # ranks, workers and epochs: one fix
        assert "CopiedGenerator keeps rng (Generator), made once" in copied
        assert "WorkerSeeder" not in copied  # it cannot reseed a private Generator
        assert fixes["own_set_epoch"][0].startswith("fix: key OwnSetEpoch's draws by the epoch")
        assert "WorkerSeeder(0)" in fixes["unseeded"][0]
        block = text.split("rankaug audit tests.cli_targets:global_random\n")[1].split("\n\n")[0]
        assert block.splitlines()[-1] == fixes["global_random"][0]

    def test_keyed_per_sample_is_not_a_duplicate(self, audit: Any) -> None:
        (keyed,) = [r for r in audit[2]["reports"] if r["target"] == T + "rankaug_sample"]
        ranks = keyed["verdicts"][0]
        assert ranks["status"] == "pass"
        assert "keyed per sample (or no randomness), not a duplicated stream" in ranks["summary"]
        assert ranks["stats"]["same_position_identical"] == ranks["stats"]["same_position_compared"]

    def test_epoch_replay_and_irreproducibility_are_named(self, audit: Any) -> None:
        reports = {r["target"]: r for r in audit[2]["reports"]}
        epochs = reports[T + "rank_worker_seeded"]["verdicts"][3]
        assert epochs["summary"].startswith("augmentations replay every epoch")
        assert "rank 1 worker 1: 16/16 identical at the same position" in "".join(
            epochs["evidence"]
        )
        rerun = reports[T + "unseeded"]["verdicts"][4]
        assert rerun["summary"].startswith("irreproducible")
        assert rerun["stats"] == {"differing": 128, "compared": 128}

    def test_epochs_come_from_the_sampler_and_set_epoch_is_never_called(self, audit: Any) -> None:
        _, text, report = audit
        assert report["config"]["epoch_from"] == "sampler"
        assert "epochs: every index carries its epoch (rankaug.EpochSampler); nobody calls " \
            "set_epoch" in text  # fmt: skip
        reports = {r["target"]: r for r in report["reports"]}
        # NoSetEpoch.set_epoch raises; a "keyed per sample" verdict needs epochs to differ,
        # so the epoch reached the wrapper through the index alone.
        keyed = reports[T + "rankaug_sample_no_set_epoch"]["verdicts"]
        assert keyed[2]["summary"].startswith("keyed per sample: within an epoch")
        assert keyed[3]["stats"]["same_position_identical"] == 0

    def test_replay_under_epoch_sampler_says_the_index_is_ignored(self, audit: Any) -> None:
        reports = {r["target"]: r for r in audit[2]["reports"]}
        own = reports[T + "own_set_epoch"]["verdicts"][3]
        assert own["summary"].startswith(
            "augmentations replay every epoch even with EpochSampler: the dataset does not "
            "take its epoch from the index (rankaug wrappers do, from rankaug.EpochIndex.epoch)"
        )
        assert "It has set_epoch, which nobody calls under EpochSampler" in own["summary"]
        seeded = reports[T + "rank_worker_seeded"]["verdicts"][3]
        assert seeded["summary"].startswith("augmentations replay every epoch even with")
        assert "It has set_epoch" not in seeded["summary"]


def audit_set_epoch_targets(_: Path) -> tuple[int, str, dict[str, Any]]:
    """The older loop: plain indices and dataset.set_epoch(epoch) before every epoch
    (a job of tests.ahead)."""
    names = ("own_set_epoch", "rank_worker_seeded", "rankaug_stream", "rankaug_sample")
    code, text, _err = run_main(
        "audit", *(T + name for name in names), "--epoch-from", "set_epoch", "--no-rerun",
        "--json", "-q",
    )  # fmt: skip
    return code, text, json.loads(text)


@pytest.fixture(scope="module")
def audit_set_epoch(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, Any]]:
    return ahead.result("cli-audit-set-epoch", lambda: tmp_path_factory.mktemp("set-epoch"))


class TestAuditSetEpochMode:
    def test_set_epoch_keys_what_ignores_the_index(self, audit_set_epoch: Any) -> None:
        code, _, report = audit_set_epoch
        assert code == 1
        assert report["config"]["epoch_from"] == "set_epoch"
        failed = {r["target"]: r["failed"] for r in report["reports"]}
        assert failed == {
            T + "own_set_epoch": [],  # the epochs replay only under EpochSampler
            T + "rank_worker_seeded": ["epochs"],
            T + "rankaug_stream": [],
            T + "rankaug_sample": [],
        }

    def test_replay_suggests_epoch_sampler(self, audit_set_epoch: Any) -> None:
        (seeded,) = [
            r for r in audit_set_epoch[2]["reports"] if r["target"] == T + "rank_worker_seeded"
        ]
        summary = seeded["verdicts"][3]["summary"]
        assert summary.startswith("augmentations replay every epoch: each position repeats")
        assert "sampler=rankaug.EpochSampler(sampler)" in summary
        assert "even with EpochSampler" not in summary

    def test_no_set_epoch_target_refuses_the_call(self) -> None:
        with pytest.raises(AssertionError, match=r"set_epoch\(3\) was called"):
            cli_targets.rankaug_stream_no_set_epoch().set_epoch(3)


def audit_spawned(_: Path) -> tuple[int, str, str]:
    """One target's audit with spawned persistent workers (a job of tests.ahead)."""
    return run_main(
        "audit", T + "rankaug_mosaic", "--start-method", "spawn", "--workers", "1",
        "--persistent", "--no-rerun", "--json", "-q",
    )  # fmt: skip


def test_audit_spawned_persistent_workers_pass_rankaug(tmp_path: Path) -> None:
    code, text, _ = ahead.result("cli-audit-spawn", lambda: tmp_path)
    report = json.loads(text)
    assert code == 0, text
    assert report["config"]["start_method"] == "spawn"
    (found,) = report["reports"]
    statuses = {v["name"]: v["status"] for v in found["verdicts"]}
    assert statuses == {
        "ranks": "pass",
        "workers": "skipped",
        "positions": "info",
        "epochs": "pass",
        "reproducible": "skipped",
    }


class TestVerdictLogic:
    """The statistics alone, on made-up fingerprints (no processes)."""

    SCHEDULE = [0, 1, 2, 3, 4, 5, 6, 7] * 2

    def records(self, draw: Any) -> dict[tuple[int, int, int, int, int], str]:
        return {
            (0, epoch, rank, worker, position): draw(epoch, rank, worker, position)
            for epoch in range(2)
            for rank in range(2)
            for worker in range(2)
            for position in range(len(self.SCHEDULE))
        }

    def statuses(self, draw: Any) -> dict[str, str]:
        layout = Layout(ranks=2, workers=2, epochs=2, rerun=False)
        return {v.name: v.status for v in analyse(layout, self.SCHEDULE, self.records(draw))}

    def test_a_coin_flip_per_sample_is_not_called_a_duplicate(self) -> None:
        rng = np.random.default_rng(7)
        flips = {key: str(rng.integers(2)) for key in np.ndindex(2, 2, 2, 16)}
        assert self.statuses(lambda *key: flips[key])["ranks"] == "pass"

    def test_a_coin_flip_repeated_on_every_rank_is(self) -> None:
        rng = np.random.default_rng(7)
        flips = {key: str(rng.integers(2)) for key in np.ndindex(2, 2, 16)}
        statuses = self.statuses(lambda e, r, w, j: flips[(e, w, j)])
        assert statuses["ranks"] == "fail"
        assert statuses["workers"] == "pass"

    def test_too_small_a_probe_decides_nothing(self) -> None:
        layout = Layout(ranks=2, workers=0, epochs=1, rerun=False)
        records = {
            (0, 0, rank, 0, position): str(position) for rank in (0, 1) for position in (0, 1)
        }
        ranks = analyse(layout, [3, 3], records)[0]
        assert ranks.status == "skipped"
        assert "raise --probe, --repeats or --epochs" in ranks.summary

    def test_a_perfect_repeat_of_few_outcomes_is_not_decided_rather_than_passed(self) -> None:
        # A flip repeated on every rank and every epoch: identical at every same position,
        # and the same index identical at its other position 24 times of 32, so even a
        # perfect repeat is not significant. It used to pass ("no more often").
        layout = Layout(ranks=2, workers=0, epochs=2, rerun=False)
        records = {
            (0, epoch, rank, 0, position): "flipped" if position in (0, 9) else "kept"
            for epoch in range(2)
            for rank in range(2)
            for position in range(16)
        }
        ranks, _, _, epochs, _ = analyse(layout, self.SCHEDULE, records)
        for verdict in (ranks, epochs):
            assert verdict.status == "skipped"
            assert verdict.summary.startswith("not decided: identical at every same position")
            assert "raise --probe, --repeats or --epochs" in verdict.summary
            assert verdict.stats["undecided"] is True
        assert ranks.evidence == [
            "rank 0 worker 0 vs rank 1 worker 0: 32/32 identical at the same position; same "
            "index at other positions: 24/32 identical (e.g. index 0 at position 0, epoch 0)"
        ]

    def test_additive_seeds_alias_across_ranks_and_workers(self) -> None:
        # seed + rank + worker: rank 0 worker 1 draws what rank 1 worker 0 draws.
        statuses = self.statuses(lambda e, r, w, j: f"{e}/{r + w}/{j}")
        assert statuses["ranks"] == "fail"
        assert statuses["workers"] == "pass"


# ------------------------------------------------------------------------ demo


def test_demo_shows_duplicates_for_yolov5_and_none_for_rankaug(tmp_path: Path) -> None:
    code, text, _ = run_main(
        "demo", "--epochs", "1", "--samples", "8", "--output", str(tmp_path), "--steps", "-q"
    )  # fmt: skip
    assert code == 0
    lines = text.splitlines()
    # One line per epoch and rank: YOLOv5's ranks draw alike, rankaug's do not.
    digests = lines[2:4]
    assert [line.split()[:4] for line in digests] == [
        ["epoch", "0", "rank", "0:"],
        ["epoch", "0", "rank", "1:"],
    ]
    assert digests[0].split()[5] == digests[1].split()[5]  # YOLOv5-style's digest
    assert digests[1].split()[6:8] == ["=", "rank"]
    assert digests[0].split()[7] != digests[1].split()[10]  # rankaug's
    assert "=" not in digests[1].split("rankaug")[1]
    table = lines.index(
        "epoch 0: each mosaic as 'main: partners', each mixup as 'partner r=ratio'; "
        "'*' = another rank has the same at this step"
    )
    titles = [cell.strip() for cell in lines[table + 1].split("|")[1:5]]
    assert titles == ["YOLOv5-style (global random)", "mixup", "rankaug.MosaicDataset", "mixup"]
    assert lines[table + 2].split() == ["|", *(["rank", "0", "rank", "1", "|"] * 4)]
    steps = lines[table + 3 : table + 7]  # 8 samples, 2 ranks: 4 steps, workers 0 1 0 1
    assert [line.split()[:2] for line in steps] == [["0", "0"], ["1", "1"], ["2", "0"], ["3", "1"]]
    for line in steps:
        yolo, yolo_mixup, keyed, keyed_mixup = line.split("|")[1:5]
        assert yolo.count("*") == 2  # both ranks drew the same partners
        assert yolo_mixup.count("*") == 2  # and mixed the same partner with the same ratio
        assert "*" not in keyed
        assert "*" not in keyed_mixup
    mosaics = lines.index("mosaics whose partners repeat on another rank at the same step:")
    assert lines[mosaics + 1 : mosaics + 6] == [
        "  YOLOv5-style (global random)      8 of 8",
        "  rankaug.MosaicDataset             0 of 8",
        "mixups whose partner and ratio repeat on another rank at the same step:",
        "  YOLOv5-style (global random)      8 of 8",
        "  rankaug.MixUpDataset              0 of 8",
    ]
    height, width = demo_sheet_size(2, 4)  # 2 ranks x 4 steps each
    sheet = tmp_path / "rankaug-demo.png"
    assert read_png(sheet).shape == (height, width, 3)
    assert lines[mosaics + 6].startswith(f"sheet: {sheet} ({width}x{height}; YOLOv5-style left")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rankaug-demo.png"]


def _narrow_size(columns: int, source: str) -> tuple[int, int]:
    """The demo sheet's size for 2 ranks, seed 0 and ``columns``: its heading wrapped."""
    width = demo_sheet_size(2, columns)[1]
    lines = heading_lines(*demo_heading(2, 0, source), width)
    assert len(lines) > 2
    return demo_sheet_size(2, columns, lines=len(lines))


def test_demo_keys_rankaug_by_the_index_epoch(tmp_path: Path) -> None:
    # rankaug's side runs EpochSampler(DistributedSampler) and never calls set_epoch:
    # with fresh workers every epoch, only the index's epoch can change its partners.
    code, text, _ = run_main(
        "demo", "--epochs", "2", "--samples", "8", "--columns", "1", "--output",
        str(tmp_path), "--json", "-q",
    )  # fmt: skip
    assert code == 0
    demo = json.loads(text)
    approaches = demo["approaches"]
    yolo, keyed = approaches["yolov5"], approaches["rankaug"]
    assert (yolo["repeated"], yolo["mosaics"]) == (16, 16)
    assert (keyed["repeated"], keyed["mosaics"]) == (0, 16)
    assert (yolo["mixups_repeated"], keyed["mixups_repeated"]) == (16, 0)
    for rows in (yolo["rows"], keyed["rows"]):  # every sample mixed, ratios near 0.5
        assert all(0.2 < row["mixup"]["ratio"] < 0.8 for row in rows)
        assert {row["mixup"]["partner"] for row in rows} <= set(range(8))
    # rankaug's mixups differ across epochs too: partner and ratio from the index's epoch
    ratios = [{r["mixup"]["ratio"] for r in keyed["rows"] if r["epoch"] == e} for e in (0, 1)]
    assert len(ratios[0]) == len(ratios[1]) == 8
    assert not ratios[0] & ratios[1]
    for rows in (yolo["rows"], keyed["rows"]):  # both reshuffle: set_epoch, or EpochSampler
        order = {e: [r["index"] for r in rows if r["epoch"] == e] for e in (0, 1)}
        assert order[0] != order[1]
        assert sorted(order[0]) == sorted(order[1]) == list(range(8))
    # The epoch each mosaic's key used (its record): the index's, with no set_epoch.
    assert [row["record_epoch"] for row in keyed["rows"]] == [row["epoch"] for row in keyed["rows"]]
    assert {row["record_epoch"] for row in keyed["rows"]} == {0, 1}
    assert {row["record_epoch"] for row in yolo["rows"]} == {None}
    # One sheet: YOLOv5's cells carry the red "same as rank N" bar, rankaug's none.
    sheet = read_png(tmp_path / "rankaug-demo.png")[:, :, ::-1]  # BGR -> RGB
    assert sheet.shape[:2] == _narrow_size(1, demo["source"])  # the title wrapped
    red = (sheet == np.array(REPEATED, np.uint8)).all(axis=2)
    split = (sheet.shape[1] + 76) // 2  # between the blocks
    assert red[:, :split].any()
    assert not red[:, split:].any()


def test_yolo_folder_round_trips_boxes_and_feeds_the_demo(tmp_path: Path) -> None:
    source = SyntheticDetection(8, image_size=(48, 64), masks=False, seed=5)
    root = write_yolo_folder(source, tmp_path / "yolo")
    folder = YoloFolder(root)
    assert len(folder) == 8
    for index in range(8):
        np.testing.assert_array_equal(folder[index]["image"], source[index]["image"])
        np.testing.assert_allclose(folder[index]["bboxes"], source[index]["bboxes"], atol=1e-4)
        np.testing.assert_array_equal(folder[index]["labels"], source[index]["labels"])
    out = tmp_path / "sheets"
    code, text, _ = run_main(
        "demo", "--data", str(root), "--epochs", "1", "--samples", "100", "--columns", "2",
        "--output", str(out), "--json", "-q",
    )  # fmt: skip
    assert code == 0
    demo = json.loads(text)
    yolo, keyed = demo["approaches"]["yolov5"], demo["approaches"]["rankaug"]
    assert yolo["mosaics"] == keyed["mosaics"] == 8
    assert yolo["repeated"] == 8
    assert keyed["repeated"] == 0
    for rows in (yolo["rows"], keyed["rows"]):
        assert sorted(row["index"] for row in rows) == list(range(8))  # DistributedSampler
        assert all(len(row["partners"]) == 3 for row in rows)
        assert {row["rank"] for row in rows} == {0, 1}
    size = _narrow_size(2, demo["source"])  # the title wrapped: the folder's path
    assert read_png(Path(demo["sheet"])).shape[:2] == size
    assert demo["sheet_size"] == list(size)


def _seg_folder(root: Path, count: int = 8) -> Path:
    """A YOLO-seg folder written by the library's own writer: a triangle per box."""
    source = SyntheticDetection(count, image_size=(48, 64), masks=False, seed=5)
    samples = []
    for index in range(count):
        sample = source[index]
        triangles = [np.array([[x0, y0], [x1, y0], [x0, y1]], np.float32)
                     for x0, y0, x1, y1 in sample["bboxes"].tolist()]  # fmt: skip
        samples.append({**sample, "segments": triangles})
    return write_yolo_folder(samples, root)


def test_a_yolo_seg_folder_feeds_the_demo_with_its_polygons(tmp_path: Path) -> None:
    root = _seg_folder(tmp_path / "seg")
    assert len(YoloFolder(root, segments=True)[0]["segments"]) > 0
    out = tmp_path / "sheets"
    code, text, err = run_main(
        "demo", "--data", str(root), "--segments", "--epochs", "1", "--samples", "8",
        "--columns", "2", "--output", str(out), "--json", "-q",
    )  # fmt: skip
    assert code == 0, err
    demo = json.loads(text)
    assert demo["approaches"]["rankaug"]["mosaics"] == 8
    sheet = read_png(Path(demo["sheet"]))[:, :, ::-1]  # BGR -> RGB
    outline = (sheet == np.array(OUTLINE, np.uint8)).all(axis=2)
    split = (sheet.shape[1] + 76) // 2  # between the blocks: both draw the polygons
    assert outline[:, :split].sum() > 50
    assert outline[:, split:].sum() > 50


def test_a_yolo_seg_folder_without_segments_says_to_give_it(tmp_path: Path) -> None:
    root = _seg_folder(tmp_path / "seg", 2)
    code, _, err = run_main("demo", "--data", str(root), "--output", str(tmp_path / "o"), "-q")
    assert code == 2
    assert "pass segments=True to read polygons" in err
    assert err.strip().endswith("(a YOLO-seg folder: give --segments)")
    code, _, err = run_main("demo", "--segments", "--output", str(tmp_path / "o"), "-q")
    assert code == 2
    assert "--segments reads a YOLO-seg folder: give it with --data" in err


# ------------------------------------------------------------------------ show


@pytest.mark.parametrize(
    ("name", "identical"), [("yolov5_mosaic", True), ("rankaug_mosaic", False)]
)
def test_show_writes_the_sheet(tmp_path: Path, name: str, identical: bool) -> None:
    output = tmp_path / "deep" / "sheet.png"
    code, text, _ = run_main(
        "show", T + name, "--sampler", "same", "--samples", "4", "--thumb", "64",
        "--output", str(output), "-q",
    )  # fmt: skip
    assert code == 0
    sheet = read_png(output)
    height, width = sheet_size(2, 4, 64)
    assert sheet.shape == (height, width, 3)
    assert text.strip() == f"wrote {output} ({width}x{height}: 2 rank rows, 4 columns)"
    # Every rank loads indices 0..3: YOLOv5's rows are the same pictures.
    same = np.array_equal(thumbnails(sheet, 0, 64), thumbnails(sheet, 1, 64))
    assert same is identical


def test_show_counts_the_columns_drawn(tmp_path: Path) -> None:
    # 2 samples over 2 ranks: one each, whatever --samples asks
    output = tmp_path / "sheet.png"
    code, text, _ = run_main(
        "show", T + "two", "--workers", "0", "--thumb", "32", "--output", str(output), "-q"
    )  # fmt: skip
    assert code == 0
    height, width = sheet_size(2, 1, 32)
    assert read_png(output).shape == (height, width, 3)
    assert text.strip() == f"wrote {output} ({width}x{height}: 2 rank rows, 1 column)"


def test_audit_help_names_every_kind_of_target() -> None:
    # it said "returning a map-style dataset": streams and batch transforms are audited too
    code, out, _ = run_main("audit", "--help")
    assert code == 0
    target = " ".join(out.split("TARGET  ", 1)[1].split("options:")[0].split())
    assert "returning a map-style dataset, an iterable one (a stream:" in target
    assert "or a batch transform (kornia, torchvision v2, rankaug.BatchAugment;" in target
    code, out, _ = run_main("show", "--help")  # show needs indices
    assert "returning a map-style dataset, e.g." in " ".join(out.split())


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_pages_list_every_command(page: str) -> None:
    # README and the site's index listed demo, audit and show, not cache verify
    text = (ROOT / page).read_text(encoding="utf-8")
    (item,) = [p for p in text.split("\n* ") if "cli.md)" in p]
    for command in COMMANDS:
        name = command.__name__.rsplit(".", 1)[1]  # type: ignore[attr-defined]
        assert f"`{'cache verify' if name == 'cache' else name}`" in item, (page, name)


# ---------------------------------------------------------------------- errors


BAD_TARGETS = {
    "nosuchmodule_xyz:make": "module 'nosuchmodule_xyz' not found",
    T + "missing": "module 'tests.cli_targets' has no attribute 'missing'",
    T + "raising": "calling raising() raised RuntimeError: the data folder is not mounted",
    T + "not_a_dataset": "gave an int, not a map-style dataset",
    T + "empty": "gave an empty list (length 0)",
    T + "NOT_CALLABLE": "gave a str, not a map-style dataset",
    T + "transform": "returned a transform (Compose, from albumentations), not a dataset; wrap it: "
    "RandomAugmentWrapper(dataset, transform, seed=...)",
    "tests.cli_targets": "must be 'module:factory'",
}


@pytest.mark.parametrize("command", ["audit", "show"])
@pytest.mark.parametrize("target", list(BAD_TARGETS))
def test_bad_target(command: str, target: str) -> None:
    code, out, err = run_main(command, target, "-q")
    assert code == 2
    assert out == ""
    assert err.startswith(f"rankaug {command}: error: TARGET {target!r}")
    assert BAD_TARGETS[target] in err


@pytest.mark.parametrize(
    ("command", "taken"),
    [("audit", "__len__), an iterable dataset or a batch transform"), ("show", "__len__)\n")],
)
def test_a_target_that_is_no_dataset_is_told_what_the_command_takes(
    command: str, taken: str
) -> None:
    code, _, err = run_main(command, T + "not_a_dataset", "-q")
    assert code == 2
    assert taken in err


def test_show_refuses_an_iterable_target() -> None:
    # audit takes one (tests/test_cli_stream.py); show needs indices
    code, out, err = run_main("show", T + "iterable", "-q")
    assert (code, out) == (2, "")
    assert err.startswith(f"rankaug show: error: TARGET {T + 'iterable'!r} gave Stream, an ")
    assert "this command needs a map-style dataset" in err
    assert "(rankaug audit takes an iterable one)" in err


def bad_target(_: Path) -> subprocess.CompletedProcess[str]:
    """``python -m rankaug audit`` of a target that raises (a job of tests.ahead)."""
    return run_cli("audit", T + "raising")


def test_bad_target_through_python_m(tmp_path: Path) -> None:
    result = ahead.result("cli-bad-target", lambda: tmp_path)
    assert result.returncode == 2
    assert "the data folder is not mounted (at " in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("name", ["broken", "broken_wrapped"])
def test_a_failing_sample_is_named_in_one_line(name: str) -> None:
    # broken raises OSError itself; broken_wrapped is a rankaug wrapper (a SampleError).
    code, out, err = run_main(
        "audit", T + name, "--ranks", "1", "--workers", "1", "--no-rerun", "--epochs", "1",
        "-q",
    )  # fmt: skip
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(
        f"rankaug audit: error: {T}{name}: dataset[4] failed at index 4 (rank 0, worker 0, "
        f"epoch 0): OSError: cannot read image 4 (at {ROOT / 'tests' / 'cli_targets.py'}:"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", T + "plain", "--ranks", "0"], "argument --ranks: must be an integer in [1, 64]"),
        (["audit", T + "plain", "--repeats", "1"], "argument --repeats: must be an integer in"),
        (
            ["audit", T + "plain", "--persistent", "--workers", "0"],
            "--persistent needs --workers 1 or more",  # it ran without, reported "persistent on"
        ),
        (["show", T + "plain", "--output", "x.jpg"], "--output must be a .png file, got 'x.jpg'"),
        (["demo", "--data", "/no/such/folder"], "--data must be a YOLO dataset folder"),
        (["demo", "--size", "big"], "argument --size: must be an integer in [32, 4096], got 'big'"),
        (["audit", T + "plain", "--keys", "bboxes=b"], "--keys must name the image (image=KEY)"),
        (["show", T + "plain", "--keys", "image"], "--keys must be NAME=KEY entries"),
        (["show", T + "plain", "--keys", "image=a,image=b"], "--keys names 'image' twice"),
        (
            ["show", T + "plain", "--keys", "image=image,boxes=bboxes"],
            "--keys names 'boxes', which is not one of bboxes, image, keypoints, labels, mask, "
            "masks (did you mean 'bboxes'?), got 'image=image,boxes=bboxes'",
        ),
        (
            ["audit", T + "plain", "--keys", "image=img", "--adapter", T + "ultralytics_adapter"],
            "argument --adapter: not allowed with argument --keys",
        ),
        (
            ["show", T + "plain", "--adapter", T + "not_an_adapter"],
            f"--adapter '{T}not_an_adapter': adapter must have unpack(sample, targets) and "
            "repack(data, state) methods, got int",
        ),
        (["audit", T + "plain", "--adapter", T + "missing"], f"--adapter '{T}missing': module"),
        (["audit", T + "plain", "--epoch-from", "index"], "argument --epoch-from: invalid choice"),
        (["audit", T + "plain", "--box-format", "xywh"], "argument --box-format: invalid choice"),
    ],
)
def test_bad_options(args: list[str], message: str) -> None:
    code, _, err = run_main(*args)
    assert code == 2
    assert message in err


def test_demo_refuses_a_folder_of_one_image(tmp_path: Path) -> None:
    root = write_yolo_folder(SyntheticDetection(1, image_size=(24, 32), masks=False), tmp_path)
    code, _, err = run_main("demo", "--data", str(root), "--output", str(tmp_path / "out"), "-q")
    assert code == 2
    assert err.strip() == (
        f"rankaug demo: error: --data {str(root)!r}: a YOLO folder of 1 image(s); the demo "
        "needs at least 2 (a mixup needs a partner other than the sample itself)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--adapter", T + "nothing_matches"], "ValueError: bboxes=nope matches nothing; the "
         "sample has keys ['image', 'index']"),
        (["--keys", "image=nope"], "image='nope' matches nothing in the sample, which has "
         "keys [image, index]"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("command", ["show", "audit"])
def test_an_adapter_refusing_a_sample_is_one_line(
    command: str, args: list[str], message: str, tmp_path: Path
) -> None:
    more = (
        ["--no-rerun", "--epochs", "1"]
        if command == "audit"
        else ["--output", str(tmp_path / "s.png")]
    )
    code, out, err = run_main(
        command, T + "plain", *args, "--ranks", "1", "--workers", "1", *more, "-q"
    )
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"rankaug {command}: error: {T}plain: reading dataset[")
    assert message in err


class TestParser:
    def test_every_command_registers_itself(self) -> None:
        parser = build_parser()
        assert [module.__name__ for module in COMMANDS] == [  # type: ignore[attr-defined]
            "rankaug.cli.demo", "rankaug.cli.audit", "rankaug.cli.show", "rankaug.cli.cache",
        ]  # fmt: skip
        arguments = {"demo": [], "audit": ["m:f"], "show": ["m:f"], "cache": ["verify", "d"]}
        for module in COMMANDS:
            name = module.__name__.rsplit(".", 1)[1]  # type: ignore[attr-defined]
            args = parser.parse_args([name, *arguments[name]])
            assert args.command == name
            assert args.handler is module.run

    def test_demo_refuses_one_sample_before_launching(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        # A one-sample dataset has no partner for its mixup: a usage error, not a traceback.
        with pytest.raises(SystemExit) as exit_info:
            build_parser().parse_args(["demo", "--samples", "1"])
        assert exit_info.value.code == 2
        assert "--samples" in capsys.readouterr().err

    def test_demo_refuses_one_rank(self, capsys: pytest.CaptureFixture[str]) -> None:
        # One rank has no other rank to repeat: the demo printed "YOLOv5-style 0 of 8",
        # as if global random were fine. audit and show still take one rank.
        with pytest.raises(SystemExit) as exit_info:
            build_parser().parse_args(["demo", "--ranks", "1"])
        assert exit_info.value.code == 2
        assert "argument --ranks: must be an integer in [2, 64], got '1'" in (
            capsys.readouterr().err
        )
        assert build_parser().parse_args(["audit", "m:f", "--ranks", "1"]).ranks == 1
        assert build_parser().parse_args(["show", "m:f", "--ranks", "1"]).ranks == 1

    def test_audit_takes_box_format_like_show(self) -> None:
        for command in ("audit", "show"):
            args = build_parser().parse_args([command, "m:f", "--box-format", "yolo"])
            assert args.box_format == "yolo"

    def test_audit_reads_the_boxes_in_that_format(self) -> None:
        code, text, _ = run_main(
            "audit", T + "albumentations_style", "--box-format", "pascal_voc", "--ranks", "1",
            "--workers", "0", "--no-rerun", "--json", "-q",
        )  # fmt: skip
        assert code == 0, text
        report = json.loads(text)
        assert report["config"]["box_format"] == "pascal_voc"
        assert report["reports"][0]["verdict"] == "no randomness found"


def help_text(_: Path) -> subprocess.CompletedProcess[str]:
    """``python -m rankaug --help`` (a job of tests.ahead)."""
    return run_cli("--help")


def test_help_everywhere(tmp_path: Path) -> None:
    result = ahead.result("cli-help", lambda: tmp_path)
    assert result.returncode == 0
    assert all(command in result.stdout for command in ("demo", "audit", "show"))
    for command in ("demo", "audit", "show"):
        code, out, _ = run_main(command, "--help")
        assert code == 0
        assert out.startswith(f"usage: rankaug {command}")
        assert "--seed" in out
    assert run_main()[0] == 2
