"""``rankaug audit`` of batch transforms: kornia plainly FAILs, ``BatchAugment`` passes.

Real launches (spawned gloo ranks, each ``torch.manual_seed(0)``), real kornia; the
factories are in :mod:`tests.cli_batch_targets`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rankaug import BatchAugment
from rankaug.cli.audit import AuditConfig
from rankaug.cli.batch_probe import batch_kind, keying_refusal, probe_batch, synthetic_batch
from rankaug.cli.failure import SampleFailure
from rankaug.cli.fixes import describe_batch, fix_lines
from rankaug.cli.probe import AuditJob
from tests import cli_batch_targets
from tests.batch.helpers import assert_unchanged, global_states
from tests.cli_helpers import run_main

K = pytest.importorskip("kornia.augmentation")

B = "tests.cli_batch_targets:"
CHECKED = ("ranks", "epochs", "reproducible")
# target -> (failing verdicts, a phrase of the "positions" verdict)
EXPECTED: dict[str, tuple[set[str], str]] = {
    "kornia_plain": ({"ranks"}, "random: the same index gives a new output"),
    "kornia_alone": ({"ranks"}, "random: the same index gives a new output"),
    "kornia_keyed": (set(), "keyed per sample:"),
    "kornia_unkeyable": ({"ranks"}, "random: the same index gives a new output"),
    "kornia_detection": ({"ranks"}, "random: the same index gives a new output"),
    "kornia_detection_keyed": (set(), "keyed per sample:"),
}


def _verdicts(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in report["verdicts"]}


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, Any]]:
    """One audit of the kornia targets (recognised as batch transforms without --batch)."""
    path = tmp_path_factory.mktemp("audit") / "report.json"
    names = [*EXPECTED, "kornia_flip"]
    code, text, _ = run_main("audit", *(B + name for name in names), "--output", str(path), "-q")
    return code, text, json.loads(path.read_text())


@pytest.mark.ddp
@pytest.mark.timeout(300)
class TestBatchAudit:
    @pytest.mark.parametrize("name", list(EXPECTED))
    def test_verdicts(self, audit: Any, name: str) -> None:
        failing, phrase = EXPECTED[name]
        (found,) = [r for r in audit[2]["reports"] if r["target"] == B + name]
        verdicts = _verdicts(found)
        assert found["batch"] == ("BatchAugment" if name.endswith("_keyed") else "kornia")
        assert {k: verdicts[k]["status"] for k in CHECKED} == {
            k: "fail" if k in failing else "pass" for k in CHECKED
        }
        assert verdicts["workers"]["status"] == "skipped"
        assert phrase in verdicts["positions"]["summary"]
        assert found["samples"] == 2 * 2 * 2 * 16  # runs x epochs x ranks x positions
        assert found["exit_code"] == int(bool(failing))

    def test_plain_kornia_is_the_seeds_bug_and_the_fix_is_batch_augment(self, audit: Any) -> None:
        code, text, report = audit
        assert code == 1
        (plain,) = [r for r in report["reports"] if r["target"] == B + "kornia_plain"]
        ranks = _verdicts(plain)["ranks"]
        assert ranks["summary"].startswith("duplicated random streams across ranks")
        assert ranks["evidence"][0].startswith(
            "rank 0 worker 0 vs rank 1 worker 0: 32/32 identical at the same position; "
            "same index at other positions: 0/32 identical"
        )
        (fix,) = plain["fixes"]
        assert fix.startswith(
            "fix: AugmentationSequential draws its parameters from torch's global generator"
        )
        assert "rankaug.BatchAugment(transform, seed=0)" in fix
        assert "batch transform (AugmentationSequential): 2 rank(s), 2 epoch(s)" in text
        assert "every rank calls it plainly, transform(images) 2 times per epoch" in text
        assert "no DataLoader (--workers does not apply)" in text
        assert "verdict on tests.cli_batch_targets:kornia_keyed: PASS" in text

    def test_a_flip_repeated_on_every_rank_is_not_a_pass(self, audit: Any) -> None:
        # Identical on both ranks at every position, but a flip has two outcomes: the same
        # index is identical at its other positions often enough that the default probe
        # cannot tell a repeat from chance. It used to PASS ("no more often").
        _, text, report = audit
        (flip,) = [r for r in report["reports"] if r["target"] == B + "kornia_flip"]
        ranks = _verdicts(flip)["ranks"]
        assert ranks["status"] == "skipped"
        assert ranks["summary"].startswith("not decided: identical at every same position")
        assert ranks["evidence"][0].startswith(
            "rank 0 worker 0 vs rank 1 worker 0: 32/32 identical at the same position"
        )
        assert flip["verdict"] == "not decided"
        assert "verdict on tests.cli_batch_targets:kornia_flip: NOT DECIDED (ranks)" in text

    def test_the_fix_does_not_advise_a_wrapper_that_refuses(self, audit: Any) -> None:
        (found,) = [r for r in audit[2]["reports"] if r["target"] == B + "kornia_unkeyable"]
        (fix,) = found["fixes"]
        assert fix.startswith(
            "fix: RandomGaussianNoise draws its parameters from torch's global generator"
        )
        assert (
            "rankaug.BatchAugment refuses it as it is (augmentation 0 (RandomGaussianNoise) "
            "drew from torch's global generator (restored)" in fix
        )
        assert "change or drop what that names (the BatchAugment guide lists what it keys)" in fix

    def test_a_failing_batch_transform_is_named_in_one_line(self) -> None:
        # it was a rank's 40-line traceback, where a dataset's error is one line
        code, out, err = run_main(
            "audit", B + "keyed_unkeyable", "--ranks", "1", "--no-rerun", "--epochs", "1", "-q"
        )
        assert code == 2
        assert out == ""
        assert err.count("\n") == 1
        assert err.startswith(
            f"rankaug audit: error: {B}keyed_unkeyable: the batch transform failed on the "
            "audit's batch of 8 synthetic 32x32 images (rank 0, epoch 0): RuntimeError: "
            "augmentation 0 (RandomGaussianNoise) drew from torch's global generator"
        )
        assert "; the batch audit feeds the transform images alone" in err

    def test_batch_flag_audits_any_callable(self, tmp_path: Any) -> None:
        path = tmp_path / "report.json"
        code, _, _ = run_main(
            "audit", "--batch", B + "noise", B + "identity", "--epochs", "1", "--no-rerun",
            "--output", str(path), "-q",
        )  # fmt: skip
        reports = {r["target"][len(B) :]: r for r in json.loads(path.read_text())["reports"]}
        assert code == 1
        assert reports["noise"]["failed"] == ["ranks"]
        assert "make it a kornia augmentation or torchvision v2" in reports["noise"]["fixes"][0]
        assert reports["identity"]["verdict"] == "no randomness found"


class TestBatchProbe:
    def test_kinds(self) -> None:
        assert batch_kind(cli_batch_targets.kornia_plain()) == "kornia"
        assert batch_kind(cli_batch_targets.kornia_alone()) == "kornia"
        assert batch_kind(cli_batch_targets.kornia_keyed()) == "BatchAugment"
        assert batch_kind(cli_batch_targets.identity()) == ""
        config = AuditConfig(targets=("m:f",))
        assert config.is_batch(cli_batch_targets.kornia_plain())
        assert not config.is_batch(cli_batch_targets.identity())
        assert AuditConfig(targets=("m:f",), batch=True).is_batch(cli_batch_targets.identity())

    def test_keyed_rows_repeat_at_every_position_and_plain_ones_do_not(self) -> None:
        keyed = probe_batch(cli_batch_targets.kornia_keyed(), [0, 1, 2], 2, 0, 16)
        assert [row[2] for row in keyed] == list(range(6))
        assert [row[4] for row in keyed[:3]] == [row[4] for row in keyed[3:]]
        plain = probe_batch(cli_batch_targets.kornia_plain(), [0, 1, 2], 2, 0, 16)
        assert all(a[4] != b[4] for a, b in zip(plain[:3], plain[3:], strict=True))

    def test_the_synthetic_image_depends_on_its_index_alone(self) -> None:
        assert synthetic_batch([3, 5], 8)[1].equal(synthetic_batch([5], 8)[0])

    def test_a_transform_that_returns_no_batch_is_named(self) -> None:
        with pytest.raises(TypeError, match=r"returned int for a batch of 2 images"):
            probe_batch(lambda images: 0, [0, 1], 2, 0, 8)
        with pytest.raises(TypeError, match="must give a callable transform"):
            probe_batch([1, 2], [0, 1], 2, 0, 8)

    def test_the_advised_wrapper_keys_what_it_is_advised_for(self) -> None:
        before = global_states()
        alone = describe_batch(cli_batch_targets.kornia_alone(), 16)  # RandomRotation
        refused = describe_batch(cli_batch_targets.kornia_unkeyable(), 16)
        same = describe_batch(K.RandomAffine(10.0, same_on_batch=True, p=1.0), 16)
        assert_unchanged(before)
        assert (alone.batch, alone.refused) == ("kornia", "")
        (line,) = fix_lines(alone, ["ranks"], seed=3, epoch_from="sampler")
        assert "wrap it, rankaug.BatchAugment(transform, seed=3)" in line
        assert "refuses" not in line
        keyed = BatchAugment(cli_batch_targets.kornia_alone(), seed=3)
        rows = probe_batch(keyed, [0, 1, 2], 2, 0, 16)  # the advice, followed
        assert [row[4] for row in rows[:3]] == [row[4] for row in rows[3:]]
        assert refused.refused.startswith("augmentation 0 (RandomGaussianNoise) drew from")
        assert "has same_on_batch=True" in same.refused
        (line,) = fix_lines(same, ["ranks"], seed=3, epoch_from="sampler")
        assert "rankaug.BatchAugment refuses it as it is (RandomAffine has same_on_batch" in line

    @pytest.mark.parametrize("name", ["kornia_detection", "kornia_detection_keyed"])
    def test_a_detection_container_is_probed_on_images_alone(self, name: str) -> None:
        # data_keys=["input", "bbox_xyxy"] failed kornia's "number of inputs" assertion
        transform = getattr(cli_batch_targets, name)()
        rows = probe_batch(transform, [0, 1, 2], 2, 0, 16)
        assert [row[2] for row in rows] == list(range(6))
        repeated = [a[4] == b[4] for a, b in zip(rows[:3], rows[3:], strict=True)]
        assert repeated == [name.endswith("_keyed")] * 3
        assert describe_batch(transform, 16).refused == ""

    def test_a_keying_trial_that_fails_otherwise_is_a_refusal(self) -> None:
        # only ValueError and RuntimeError were caught: anything else was a traceback
        flip = K.RandomHorizontalFlip(p=1.0)

        def broken(*_: Any, **__: Any) -> Any:
            raise AssertionError("kornia's own check\nfailed")

        flip.apply_transform = broken
        assert keying_refusal(flip, 8) == "AssertionError: kornia's own check | failed"

    def test_every_batch_probe_error_is_one_line_naming_target_rank_and_epoch(self) -> None:
        config = AuditConfig(targets=("m:f",), epochs=1, repeats=2, progress=False)
        job = AuditJob(config, ((0, 1, 0, 1),), 0)
        with pytest.raises(SampleFailure) as caught:
            job._batch(1, "m:f", lambda images: 0, (0, 1, 0, 1))
        assert str(caught.value).startswith(
            "m:f: the batch transform failed on the audit's batch of 2 synthetic 32x32 "
            "images (rank 1, epoch 0): TypeError: function returned int for a batch of 2 "
            "images"
        )
        assert "\n" not in str(caught.value)
        assert caught.value.__cause__ is None

    def test_fix_for_batch_augment_without_indices(self) -> None:
        pipeline = describe_batch(cli_batch_targets.kornia_keyed())
        (line,) = fix_lines(pipeline, ["epochs"], seed=3, epoch_from="sampler")
        assert line == (
            "fix: BatchAugment repeats its draws every epoch: pass it the batch's dataset "
            "indices (index=) and the epoch (epoch=) on every call"
        )
