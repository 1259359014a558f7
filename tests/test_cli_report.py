"""The audit's outcome and fixes, on made-up fingerprints (no processes)."""

from __future__ import annotations

import json
from dataclasses import replace

import albumentations as A
import numpy as np
import pytest

from rankaug import RandomAugmentWrapper
from rankaug.cli.fixes import Pipeline, describe_pipeline, fix_lines
from rankaug.cli.legacy import GlobalRandomMosaic
from rankaug.cli.probe import AuditConfig
from rankaug.cli.report import AuditReport, AuditResult
from rankaug.cli.verdicts import Layout, analyse
from rankaug.datasets import SyntheticDetection
from tests import cli_targets

SCHEDULE = list(range(8)) * 2
LAYOUT = Layout(ranks=2, workers=0, epochs=2, rerun=False)
CONFIG = AuditConfig(targets=("m:a",), workers=0, rerun=False)


def report(draw: object, pipeline: Pipeline | None = None, target: str = "m:a") -> AuditReport:
    """A report on ``draw(epoch, rank, position) -> digest``."""
    records = {
        (0, epoch, rank, 0, position): draw(epoch, rank, position)  # type: ignore[operator]
        for epoch in range(2)
        for rank in range(2)
        for position in range(len(SCHEDULE))
    }
    verdicts = analyse(LAYOUT, SCHEDULE, records)
    extra = {} if pipeline is None else {"pipeline": pipeline}
    return AuditReport(target, CONFIG, list(range(8)), SCHEDULE, verdicts, 64, [], **extra)


def fixed(epoch: int, rank: int, position: int) -> str:
    return f"image {SCHEDULE[position]}"


def seeds_bug(epoch: int, rank: int, position: int) -> str:
    return f"draw {epoch} {position}"


def keyed(epoch: int, rank: int, position: int) -> str:
    return f"draw {epoch} {rank} {position}"


class Folder:
    """Two samples, keeping the attributes it is given (what the report names)."""

    def __init__(self, **kept: object) -> None:
        vars(self).update(kept)

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> dict[str, object]:
        return {"image": np.zeros((4, 4, 3), np.uint8)}


class TestAuditReport:
    def test_no_augmentation_is_its_own_verdict_not_a_pass(self) -> None:
        found = report(fixed)
        assert found.outcome == "no randomness found"
        assert found.exit_code == 0
        text = found.to_text()
        assert "verdict on m:a: NO RANDOMNESS FOUND\n  every index gave the same output" in text
        assert "verdict on m:a: PASS" not in text
        assert found.to_dict()["verdict"] == "no randomness found"
        assert found.fixes == []

    def test_random_and_keyed_is_a_pass(self) -> None:
        found = report(keyed)
        assert found.outcome == "pass"
        assert found.to_text().endswith("verdict on m:a: PASS")

    def test_a_fail_ends_with_the_fix(self) -> None:
        mosaic = describe_pipeline(GlobalRandomMosaic(SyntheticDetection(4, 16), output_size=32))
        found = report(seeds_bug, mosaic)
        assert found.outcome == "fail"
        lines = found.to_text().splitlines()
        assert lines[-2] == "verdict on m:a: FAIL (ranks)"
        assert lines[-1].startswith("fix: GlobalRandomMosaic draws from global random state")
        assert "use rankaug.MosaicDataset(SyntheticDetection(...), seed=0) in place of " \
            "GlobalRandomMosaic" in lines[-1]  # fmt: skip
        assert "worker_init_fn=rankaug.WorkerSeeder(0)" in lines[-1]
        assert found.to_dict()["fixes"] == [lines[-1]]

    def test_the_summary_names_each_outcome(self) -> None:
        result = AuditResult(
            CONFIG, [report(fixed), report(seeds_bug, target="m:b"), report(keyed, target="m:c")]
        )
        assert result.to_text().splitlines()[-1] == (
            "FAIL: m:b; NO RANDOMNESS FOUND: m:a; PASS: m:c; exit 1"
        )
        assert json.loads(result.to_json())["exit_code"] == 1
        assert (
            AuditResult(CONFIG, [report(fixed)])
            .to_text()
            .endswith("\n\nNO RANDOMNESS FOUND; exit 0")
        )

    def test_ranks_not_compared_is_not_a_pass(self) -> None:
        found = report(keyed)
        ranks = next(v for v in found.verdicts if v.name == "ranks")
        found.verdicts[found.verdicts.index(ranks)] = replace(
            ranks, status="skipped", summary="not decided: no baseline"
        )
        assert found.outcome == "not decided"
        assert found.exit_code == 0
        lines = found.to_text().splitlines()
        assert lines[-2] == "verdict on m:a: NOT DECIDED (ranks)"
        assert lines[-1].startswith("  nothing was found wrong, but the ranks could not be")
        assert found.to_dict()["verdict"] == "not decided"
        result = AuditResult(CONFIG, [found, report(keyed, target="m:c")])
        assert result.to_text().endswith("NOT DECIDED: m:a; PASS: m:c; exit 0")

    def test_the_advice_asks_for_more_ranks_only_when_one_was_audited(self) -> None:
        # before: "audit with --ranks 2 or more" after an audit of 2 ranks whose repeats
        # were too few to judge (a dataset of one sample)
        found = report(lambda epoch, rank, position: "b" if position in (0, 9) else "a")
        two = found.to_text().splitlines()[-1]
        assert "--ranks" not in two
        assert two.endswith(": raise --probe, --repeats or --epochs where a repeat was not "
                            "significant")  # fmt: skip
        one = replace(found, config=replace(CONFIG, ranks=1)).to_text().splitlines()[-1]
        assert ": audit with --ranks 2 or more to compare ranks, and raise --probe" in one

    def test_a_repeat_too_few_to_judge_is_not_decided(self) -> None:
        # A flip repeated on every rank and in every epoch: the same index is identical
        # at its other position 24 times of 32, so the probe cannot tell (it was a PASS).
        found = report(lambda epoch, rank, position: "b" if position in (0, 9) else "a")
        assert found.outcome == "not decided"
        assert found.undecided == ["ranks", "epochs"]
        assert found.exit_code == 0
        lines = found.to_text().splitlines()
        assert lines[-2] == "verdict on m:a: NOT DECIDED (ranks, epochs)"
        assert lines[-1] == (
            "  nothing was found wrong, but the ranks and epochs could not be decided (see the "
            "lines above): raise --probe, --repeats or --epochs where a repeat was not "
            "significant"
        )
        assert found.to_dict()["verdict"] == "not decided"

    def test_a_batch_transform_does_not_claim_what_it_ignores(self) -> None:
        # --keys and --box-format read dataset samples; a batch transform is fed synthetic
        # images, yet its report said "fingerprints what --keys image=img reads"
        config = replace(CONFIG, keys="image=img", box_format="yolo", epoch_from="set_epoch")
        found = replace(report(keyed, Pipeline("RandomAffine", batch="kornia")), config=config)
        text = found.to_text()
        assert "fingerprints what" not in text
        assert (
            "  not applied to a batch transform: --keys image=img, --box-format yolo, "
            "--epoch-from set_epoch (it is fed synthetic images alone; its output rows are "
            "fingerprinted)"
        ) in text.splitlines()
        dataset = replace(report(keyed), config=config).to_text()
        assert "  fingerprints what --keys image=img reads of every sample" in dataset

    def test_options_a_dataset_or_stream_audit_does_not_use_are_named(self) -> None:
        # --image-size sizes a batch audit's synthetic images and --sample-id matches a
        # stream's samples: given to a map-style audit they were ignored without a word
        config = replace(CONFIG, image_size=64, sample_id="id")
        dataset = replace(report(keyed), config=config).to_text().splitlines()
        assert (
            "  not applied to a map-style dataset: --image-size 64, --sample-id id (its "
            "samples are fingerprinted by index)"
        ) in dataset
        stream = replace(report(keyed), config=config, stream=True).to_text().splitlines()
        assert (
            "  not applied to a stream: --image-size 64 (its own samples are fingerprinted)"
        ) in stream
        batch = replace(report(keyed, Pipeline("RandomAffine", batch="kornia")), config=config)
        assert "--sample-id id" in batch.to_text()
        assert not any("not applied" in line for line in report(keyed).to_text().splitlines())

    def test_the_loading_line_claims_no_workers_it_did_not_start(self) -> None:
        # before: --workers 0 read "(fork, persistent off)" (or "on", though no worker ran)
        text = report(keyed).to_text().splitlines()
        assert text[1].startswith(
            "  2 rank(s) x 0 worker(s) (each rank loads its samples itself), "
        )
        workers = replace(CONFIG, workers=2, persistent=True, start_method="spawn")
        text = replace(report(keyed), config=workers).to_text().splitlines()
        assert text[1].startswith("  2 rank(s) x 2 worker(s) (spawn, persistent on), 2 epoch(s)")

    def test_one_epoch_says_so(self) -> None:
        layout = Layout(ranks=2, workers=0, epochs=1, rerun=False)
        records = {(0, 0, r, 0, j): fixed(0, r, j) for r in range(2) for j in range(16)}
        positions = analyse(layout, SCHEDULE, records)[2]
        assert positions.stats["no_randomness"] is True
        assert "epoch (one epoch audited)" in positions.summary


class TestFixes:
    def test_a_private_generator_is_named_and_worker_seeder_is_not_offered(self) -> None:
        pipeline = describe_pipeline(cli_targets.copied_generator())
        assert pipeline.generators == ("rng (Generator)",)
        (line,) = fix_lines(pipeline, ["ranks", "workers", "epochs"], seed=3, epoch_from="sampler")
        assert line.startswith("fix: CopiedGenerator keeps rng (Generator), made once")
        assert "rankaug.RandomAugmentWrapper(the un-augmented dataset, transform, seed=3)" in line
        assert "WorkerSeeder" not in line

    def test_an_albumentations_transform_is_named_and_worker_seeder_is_not_offered(self) -> None:
        # the fix offered WorkerSeeder, which does not reach a Compose's own Generator
        class Folder:
            def __init__(self) -> None:
                self.transform = A.Compose([A.HorizontalFlip()], seed=137)

        pipeline = describe_pipeline(Folder())
        assert pipeline.own_state == ("transform (Compose from albumentations)",)
        failed = ["ranks", "workers", "epochs", "reproducible"]
        duplicates, unseeded = fix_lines(pipeline, failed, seed=0, epoch_from="sampler")
        assert duplicates.startswith("fix: Folder keeps transform (Compose from albumentations)")
        assert "a Compose(seed=...) draws alike in every rank and worker" in duplicates
        assert "rankaug.RandomAugmentWrapper(Folder without its .transform" in duplicates
        assert "WorkerSeeder(" not in duplicates
        assert "WorkerSeeder(" not in unseeded

    def test_an_albumentations_transform_inside_a_rankaug_wrapper_is_named(self) -> None:
        folder = Folder(transforms=[A.Compose([A.HorizontalFlip()], seed=137)])
        wrapper = RandomAugmentWrapper(folder, A.HorizontalFlip(), seed=0)
        (line,) = fix_lines(describe_pipeline(wrapper), ["ranks"], seed=0, epoch_from="sampler")
        assert line.startswith(
            "fix: RandomAugmentWrapper keys its own draws, but the dataset inside it keeps "
            "Folder.transforms (Compose from albumentations)"
        )
        assert "WorkerSeeder(" not in line

    def test_a_generator_inside_the_transform_is_named_and_worker_seeder_is_not_offered(
        self,
    ) -> None:
        # the fix said "draws from global random state" and offered WorkerSeeder, which
        # does not reach a Generator the transform keeps
        class Jitter:
            def __init__(self) -> None:
                self.rng = np.random.default_rng(0)

        class Folder:
            def __init__(self) -> None:
                self.transform = Jitter()

        pipeline = describe_pipeline(Folder())
        assert pipeline.generators == ("transform.rng (Generator)",)
        (line,) = fix_lines(pipeline, ["ranks", "workers"], seed=0, epoch_from="sampler")
        assert line == (
            "fix: Folder keeps transform.rng (Generator), made once and copied alike into "
            "every rank and worker (no worker_init_fn reseeds it): draw from rankaug's keyed "
            "generators instead, rankaug.RandomAugmentWrapper(Folder without its .transform, "
            "that transform, seed=0) (its call taking rng=, the Generator the wrapper passes "
            "for each sample, in place of its own), keyed by (seed, rank, worker, epoch)"
        )

    def test_a_generator_inside_a_rankaug_wrappers_dataset_is_named(self) -> None:
        class Jitter:
            def __init__(self) -> None:
                self.rng = np.random.default_rng(0)

        wrapper = RandomAugmentWrapper(Folder(augment=[Jitter()]), A.HorizontalFlip(), seed=0)
        (line,) = fix_lines(describe_pipeline(wrapper), ["ranks"], seed=0, epoch_from="sampler")
        assert line.startswith(
            "fix: RandomAugmentWrapper keys its own draws, but the dataset inside it keeps "
            "Folder.augment.rng (Generator), made once"
        )
        assert "WorkerSeeder(" not in line

    def test_a_torch_global_library_transform_keeps_worker_seeder(self) -> None:
        K = pytest.importorskip("kornia.augmentation")  # the test extra's, on Python 3.11+

        class Folder:
            def __init__(self) -> None:
                self.transform = K.ColorJitter(0.5, p=1.0)  # torch's global generator

        (line,) = fix_lines(describe_pipeline(Folder()), ["ranks"], seed=0, epoch_from="sampler")
        assert line.startswith("fix: Folder draws from global random state")
        assert "worker_init_fn=rankaug.WorkerSeeder(0)" in line

    def test_a_transform_attribute_says_what_to_wrap(self) -> None:
        class Folder:
            def __init__(self) -> None:
                self.transform = np.flipud

        (line,) = fix_lines(describe_pipeline(Folder()), ["ranks"], seed=0, epoch_from="sampler")
        assert "rankaug.RandomAugmentWrapper(Folder without its .transform, that transform, " \
            "seed=0)" in line  # fmt: skip
        assert "WorkerSeeder(0)" in line

    def test_a_rankaug_wrapper_points_inside(self) -> None:
        wrapper = RandomAugmentWrapper(cli_targets.global_random(), cli_targets.jitter, seed=0)
        pipeline = describe_pipeline(wrapper)
        assert pipeline.keyed
        (line,) = fix_lines(pipeline, ["ranks"], seed=0, epoch_from="sampler")
        assert line.startswith("fix: RandomAugmentWrapper keys its own draws, so ")
        assert "GlobalRandomJitter draws from global random state" in line

    @pytest.mark.parametrize(
        ("epoch_from", "phrase"),
        [("sampler", "audit it with --epoch-from set_epoch"), ("set_epoch", "EpochSampler")],
    )
    def test_replay(self, epoch_from: str, phrase: str) -> None:
        pipeline = describe_pipeline(cli_targets.own_set_epoch())
        (line,) = fix_lines(pipeline, ["epochs"], seed=0, epoch_from=epoch_from)
        assert phrase in line

    def test_irreproducible_and_nothing_failed(self) -> None:
        (line,) = fix_lines(Pipeline("Unseeded"), ["reproducible"], seed=5, epoch_from="sampler")
        assert line.startswith("fix: Unseeded draws from an unseeded source")
        assert "WorkerSeeder(5)" in line
        assert fix_lines(Pipeline("Fine"), [], seed=0, epoch_from="sampler") == []
