"""``rankaug audit`` over iterable datasets: real webdataset shards and a Hugging Face
``IterableDataset``, 2 gloo ranks x 2 workers.

The shards are written here; every target (tests/cli_stream_targets.py) reads its
stream without a node split, the workers splitting the shards. One launch audits them
all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rankaug.cli.stream_verdicts import StreamLayout, analyse_stream
from rankaug.cli.target import TargetError, build_dataset, check_dataset
from tests import ahead, cli_stream_targets
from tests.cli_helpers import run_main

pytest.importorskip("webdataset")

pytestmark = [
    pytest.mark.ddp,
    pytest.mark.timeout(600),
    # webdataset 1.0.2 leaves its tar files to the garbage collector
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
S = "tests.cli_stream_targets:"
CHECKED = ("ranks", "workers", "epochs", "reproducible")
# target -> {verdict: status}, the verdict on the target
EXPECTED: dict[str, tuple[dict[str, str], str]] = {
    "webdataset_albumentations": (
        {"ranks": "fail", "workers": "skipped", "epochs": "fail", "reproducible": "pass"}, "fail"
    ),
    # its Generator is drawn from OS entropy once, in the rank process, and copied into
    # the fresh workers of every epoch
    "webdataset_unseeded": (
        {"ranks": "pass", "workers": "skipped", "epochs": "fail", "reproducible": "fail"}, "fail"
    ),
    "webdataset_plain": (
        {"ranks": "pass", "workers": "skipped", "epochs": "pass", "reproducible": "pass"},
        "no randomness found",
    ),
    "rankaug_stream": (
        {"ranks": "pass", "workers": "skipped", "epochs": "pass", "reproducible": "pass"}, "pass"
    ),
    "huggingface_albumentations": (
        {"ranks": "fail", "workers": "skipped", "epochs": "fail", "reproducible": "pass"}, "fail"
    ),
    "huggingface_rankaug": (
        {"ranks": "pass", "workers": "skipped", "epochs": "pass", "reproducible": "pass"}, "pass"
    ),
    "rankaug_sample": (
        {"ranks": "pass", "workers": "skipped", "epochs": "pass", "reproducible": "pass"}, "pass"
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shards")
    cli_stream_targets.write_shards(folder)
    return folder


def audit_streams(folder: Path) -> tuple[int, str, Any]:
    """The shards written, one audit of every target (a job of tests.ahead)."""
    shards, report = folder / "shards", folder / "report.json"
    shards.mkdir()
    cli_stream_targets.write_shards(shards)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cli_stream_targets.ENVIRONMENT, str(shards))
        code, text, _ = run_main(
            "audit", *(S + name for name in EXPECTED), "--output", str(report), "-q"
        )
    return code, text, json.loads(report.read_text())


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Any]:
    return ahead.result("cli-stream-audit", lambda: tmp_path_factory.mktemp("audit"))


def _report(audit: Any, name: str) -> dict[str, Any]:
    (found,) = [r for r in audit[2]["reports"] if r["target"] == S + name]
    return found


class TestStreamAudit:
    @pytest.mark.parametrize("name", list(EXPECTED))
    def test_verdicts(self, audit: Any, name: str) -> None:
        statuses, outcome = EXPECTED[name]
        found = _report(audit, name)
        verdicts = {v["name"]: v["status"] for v in found["verdicts"]}
        assert {key: verdicts[key] for key in CHECKED} == statuses
        assert found["verdict"] == outcome
        assert found["stream"] is True
        assert found["indices"] == []
        # runs x epochs x ranks x workers x 16 samples each (probe 8 x repeats 2)
        assert found["samples"] == 2 * 2 * 2 * 2 * 16

    def test_a_plain_webdataset_map_of_albumentations_is_identical_across_ranks(
        self, audit: Any
    ) -> None:
        code, text, _ = audit
        assert code == 1
        found = _report(audit, "webdataset_albumentations")
        ranks = found["verdicts"][0]
        assert ranks["summary"].startswith("duplicated random streams across ranks")
        assert ranks["evidence"][0] == (
            "rank 0 worker 0 vs rank 1 worker 0: 32/32 identical at the same position; same "
            "sample unaligned (baseline): 0/32 identical (e.g. sample s0000 at position 0, "
            "epoch 0)"
        )
        (fix,) = found["fixes"]
        assert "rankaug.RandomAugmentWrapper(stream, transform, seed=0)" in fix
        assert f"verdict on {S}webdataset_albumentations: FAIL (ranks, epochs)" in text
        assert "an iterable dataset: every rank and worker streams it; the first 16 " in text

    def test_the_wrapper_passes_and_draws_apart(self, audit: Any) -> None:
        ranks = _report(audit, "rankaug_stream")["verdicts"][0]
        assert ranks["stats"]["same_position_identical"] == 0
        assert ranks["stats"]["same_position_compared"] == 64
        assert ranks["summary"] == "every rank draws its own randomness: no identical outputs"

    def test_keying_sample_is_identical_across_ranks_by_declaration(self, audit: Any) -> None:
        ranks = _report(audit, "rankaug_sample")["verdicts"][0]
        assert ranks["stats"]["same_position_identical"] == 64
        assert "as the wrapper's keying='sample' declares" in ranks["summary"]

    def test_workers_splitting_the_shards_are_not_compared(self, audit: Any) -> None:
        workers = _report(audit, "rankaug_stream")["verdicts"][1]
        assert workers["summary"].startswith("not checked: the workers read no sample at")

    def test_no_augmentation_is_no_randomness(self, audit: Any) -> None:
        positions = _report(audit, "webdataset_plain")["verdicts"][2]
        assert positions["stats"]["no_randomness"] is True
        assert positions["summary"].startswith("no randomness detected")


class TestStreamVerdicts:
    """The verdict logic on hand-made records (no launch)."""

    @staticmethod
    def _records(rank_draws: bool, replay: bool) -> dict[Any, Any]:
        records: dict[Any, Any] = {}
        for rank in range(2):
            for epoch in (0, 1, -1, -2):
                tag = (rank if rank_draws else 0, epoch if not replay or epoch < 0 else 0)
                records[(0, epoch, rank, 0)] = {i: (i, f"{tag} {i}") for i in range(24)}
        return records

    def test_duplicated_ranks_fail_and_distinct_ranks_pass(self) -> None:
        layout = StreamLayout(ranks=2, workers=0, epochs=2, rerun=False)
        bad = analyse_stream(layout, self._records(rank_draws=False, replay=False))
        good = analyse_stream(layout, self._records(rank_draws=True, replay=False))
        assert [v.status for v in bad] == ["fail", "skipped", "info", "pass", "skipped"]
        assert [v.status for v in good] == ["pass", "skipped", "info", "pass", "skipped"]

    def test_replayed_epochs_fail(self) -> None:
        layout = StreamLayout(ranks=2, workers=0, epochs=2, rerun=False)
        verdicts = analyse_stream(layout, self._records(rank_draws=True, replay=True))
        assert verdicts[3].status == "fail"
        assert verdicts[3].summary.startswith("augmentations replay every epoch")

    def test_ranks_reading_disjoint_samples_are_not_compared(self) -> None:
        layout = StreamLayout(ranks=2, workers=0, epochs=1, rerun=False)
        records = {
            (0, e, r, 0): {(r, i): (i, "same") for i in range(24)}
            for r in range(2)
            for e in (0, -1, -2)
        }
        (ranks, *_) = analyse_stream(layout, records)
        assert ranks.status == "skipped"
        assert "nodesplitter=None" in ranks.summary


class TestStreamTargets:
    def test_audit_takes_a_stream_show_does_not(self, shards: Path, monkeypatch: Any) -> None:
        monkeypatch.setenv(cli_stream_targets.ENVIRONMENT, str(shards))
        stream = build_dataset(S + "webdataset_plain", streams=True)
        assert type(stream).__name__ == "WebDataset"
        with pytest.raises(TargetError, match="this command needs a map-style dataset"):
            build_dataset(S + "webdataset_plain")
        with pytest.raises(TargetError, match="gave WebDataset, an IterableDataset"):
            check_dataset(stream, "m:f")


class TestStreamBaseline:
    """Only an observed baseline decides (hand-made records, no launch)."""

    def test_no_baseline_decides_nothing(self) -> None:
        # identical across ranks, but the baseline passes share no sample (a shuffled pool)
        layout = StreamLayout(ranks=2, workers=0, epochs=2, rerun=False)
        records = {
            (0, e, r, 0): {(e, i): (i, f"sample {e} {i}") for i in range(32)}
            for r in range(2)
            for e in (0, 1, -1, -2)
        }
        ranks, _, positions, epochs, _ = analyse_stream(layout, records)
        assert ranks.status == "skipped"
        assert ranks.summary.startswith("not decided: no baseline")
        assert epochs.status == "skipped"
        assert "a new order every pass" in positions.summary

    def test_a_deterministic_stream_with_a_tiny_baseline_is_not_a_duplicate(self) -> None:
        # 64 samples identical everywhere, one of them in both baseline passes
        layout = StreamLayout(ranks=2, workers=0, epochs=1, rerun=False)
        records = {(0, 0, r, 0): {i: (i, f"sample {i}") for i in range(64)} for r in range(2)}
        for r in range(2):
            records[(0, -1, r, 0)] = {1000 + r: (0, "x"), 0: (1, "sample 0")}
            records[(0, -2, r, 0)] = {2000 + r: (0, "y"), 0: (0, "sample 0")}
        (ranks, *_) = analyse_stream(layout, records)
        assert ranks.stats["other_position_compared"] == 2
        assert ranks.status == "skipped"
        assert ranks.summary.startswith("not decided: too few samples compared")

    def test_a_repeated_flip_is_not_decided_rather_than_passed(self) -> None:
        # every rank draws the same (rank-independent digests), but a flip has two
        # outcomes: a sample is identical in the two baseline passes 20 times of 24, so
        # even identical at every same position is not significant (it was a PASS)
        layout = StreamLayout(ranks=2, workers=0, epochs=2, rerun=False)
        records = {
            (0, e, r, 0): {i: (i, "flipped" if (i + e) % 12 == 0 else "kept") for i in range(24)}
            for r in range(2)
            for e in (0, 1, -1, -2)
        }
        ranks = analyse_stream(layout, records)[0]
        assert ranks.status == "skipped"
        assert ranks.stats["same_position_identical"] == ranks.stats["same_position_compared"]
        assert ranks.summary.startswith(
            "not decided: identical at every same position, as a duplicated stream would be, "
            "but the same sample is often identical unaligned too"
        )
        assert ranks.stats["undecided"] is True

    def test_identical_epochs_are_reported_as_such(self) -> None:
        layout = StreamLayout(ranks=1, workers=0, epochs=2, rerun=False)
        records = {(0, e, 0, 0): {i: (i, f"sample {i}") for i in range(32)} for e in (0, 1, -1, -2)}
        epochs = analyse_stream(layout, records)[3]
        assert epochs.status == "pass"
        assert epochs.summary.startswith("identical in every epoch, as in the baseline")
        assert "keyed by the sample alone" in epochs.summary


def test_a_one_shot_generator_is_refused() -> None:
    samples = ({"image": i} for i in range(3))
    with pytest.raises(TargetError, match="gave the one-shot iterator generator: it can be"):
        check_dataset(samples, "m:f", streams=True)
