"""BatchAugment over torchvision v2 transforms (issue 18): keyed per sample, one call each.

Runs where torchvision is installed: ``.venv-tv`` (torch 2.14.1 + torchvision 0.29.1, see
``constraints-tv.txt``; ``.ci/run`` runs this file there), and skips elsewhere (the main
venv's torch 2.13.0 CPU wheel has no torchvision beside it).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug import BatchAugment
from tests.batch.helpers import assert_unchanged, global_states
from tests.batch.helpers import images as _images

v2 = pytest.importorskip(
    "torchvision.transforms.v2",
    reason="torchvision is not installed here: it lives in .venv-tv (torch 2.14.1 + "
    "torchvision 0.29.1, constraints-tv.txt); .ci/run runs this file there",
)
from torchvision import tv_tensors  # noqa: E402 (after the skip)


def _transform() -> Any:
    return v2.Compose(
        [
            v2.RandomResizedCrop((16, 16), antialias=True),
            v2.RandomHorizontalFlip(p=0.5),
            v2.RandomApply([v2.ColorJitter(0.3, 0.3, 0.3, 0.05)], p=0.8),
            v2.RandomRotation(15.0),
        ]
    )


def _row(record: list[tuple[str, dict[str, Any]]]) -> tuple[float, ...]:
    """One sample's parameters, flattened: every number its transforms drew."""
    values: list[float] = []
    for _, params in record:
        for _, value in sorted(params.items()):
            if isinstance(value, int | float) and not isinstance(value, bool):
                values.append(float(value))
            elif isinstance(value, torch.Tensor):
                values.extend(value.double().flatten().tolist())
            elif isinstance(value, list | tuple):
                values.extend(float(v) for v in value if isinstance(v, int | float))
    return tuple(values)


def _shared(a: list[tuple[float, ...]], b: list[tuple[float, ...]]) -> int:
    return len(set(a) & set(b))


def _pause(value: Any) -> Any:
    time.sleep(0.002)  # another thread runs here
    return value


class TestBatchAugmentTorchvision:
    def test_threads_at_once_get_each_keys_own_draws(self) -> None:
        transform = v2.Compose([v2.RandomRotation(15.0), v2.Lambda(_pause), v2.RandomErasing(p=1)])
        aug = BatchAugment(transform, seed=5)
        images = _images(2)
        batches = [[n, n + 1] for n in range(0, 48, 2)]
        alone = [aug(images, index=index, epoch=0) for index in batches]
        with ThreadPoolExecutor(4) as pool:
            threaded = list(pool.map(lambda index: aug(images, index=index, epoch=0), batches))
        assert all(torch.equal(a, b) for a, b in zip(alone, threaded, strict=True))

    def test_an_empty_batch_comes_back_empty_as_kornia_s(self) -> None:
        # it raised a bare IndexError (list index out of range) where kornia's returned it
        images = _images(0)
        out = BatchAugment(_transform(), seed=5)(images, index=[], epoch=0)
        assert out.shape == images.shape
        boxes = tv_tensors.BoundingBoxes(torch.zeros(0, 4), format="XYXY", canvas_size=(16, 16))
        both = BatchAugment(v2.RandomHorizontalFlip(), seed=5)(images, boxes, index=[], epoch=0)
        assert [tuple(t.shape) for t in both] == [tuple(images.shape), (0, 4)]

    def test_a_sample_is_the_same_alone_in_64_and_in_a_shuffled_16(self) -> None:
        aug = BatchAugment(_transform(), seed=5)
        images = _images(64)
        full = aug(images, index=list(range(100, 164)), epoch=2)
        assert full.shape == (64, 3, 16, 16)
        order = torch.randperm(64, generator=torch.Generator().manual_seed(1))[:16]
        shuffled = aug(images[order], index=(order + 100).tolist(), epoch=2)
        assert (full[order] - shuffled).abs().max() <= 1e-5
        for position in (0, 17, 63):
            alone = aug(images[position : position + 1], index=[100 + position], epoch=2)
            assert (full[position] - alone[0]).abs().max() <= 1e-5
        assert len({tuple(x.flatten()[:8].tolist()) for x in full}) == 64

    def test_two_ranks_seeded_alike_share_no_parameter_row(self) -> None:
        images = _images(128, side=32)
        rows = []
        for rank in range(2):
            torch.manual_seed(0)
            aug = BatchAugment(_transform(), seed=0)
            _, params = aug(images, index=list(range(rank, 256, 2)), epoch=0, return_params=True)
            rows.append([_row(record) for record in params])
        assert len(set(rows[0])) == 128
        assert _shared(rows[0], rows[1]) == 0

    def test_plain_torchvision_seeded_alike_shares_every_row(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:  # the control: the same rows measure finds plain torchvision's duplicates
        record: list[tuple[str, dict[str, Any]]] = []
        for kind in (v2.RandomResizedCrop, v2.ColorJitter, v2.RandomRotation):

            def make_params(self: Any, flat: list[Any], original: Any = kind.make_params) -> Any:
                params = original(self, flat)
                record.append((type(self).__name__, params))
                return params

            monkeypatch.setattr(kind, "make_params", make_params)
        images = _images(64, side=32)
        rows = []
        for rank in range(2):
            torch.manual_seed(0)
            transform = _transform()
            rows.append([])
            for image in images[rank::2]:
                record.clear()
                transform(image)
                rows[-1].append(_row(record))
        assert _shared(rows[0], rows[1]) == 32

    def test_the_global_state_does_not_change_the_output(self) -> None:
        aug = BatchAugment(_transform(), seed=3)
        images = _images(8)
        torch.manual_seed(1)
        first = aug(images, index=list(range(8)), epoch=0)
        torch.manual_seed(2)
        assert torch.equal(first, aug(images, index=list(range(8)), epoch=0))

    def test_epochs_differ_and_reruns_repeat(self) -> None:
        images = _images(16, side=32)
        runs = []
        for epoch in (0, 1, 0):
            aug = BatchAugment(_transform(), seed=9)
            _, params = aug(images, index=list(range(16)), epoch=epoch, return_params=True)
            runs.append([_row(record) for record in params])
        assert runs[0] == runs[2]
        assert _shared(runs[0], runs[1]) == 0

    def test_no_global_generator_moves_in_100_calls(self) -> None:
        aug = BatchAugment(_transform(), seed=1)
        images = _images(2, side=16)
        before = global_states()
        for step in range(100):
            aug(images, index=[step, step + 1], epoch=step % 3)
            aug(images)
        assert_unchanged(before)

    def test_the_state_comes_back_when_the_transform_raises(self) -> None:
        def fail(image: torch.Tensor) -> torch.Tensor:
            torch.rand(3)
            raise OSError("broken")

        aug = BatchAugment(v2.Compose([v2.RandomHorizontalFlip(), v2.Lambda(fail)]), seed=0)
        state = torch.get_rng_state()
        with pytest.raises(OSError, match="broken"):
            aug(_images(2), index=[0, 1], epoch=0)
        assert torch.equal(state, torch.get_rng_state())
        assert "make_params" not in vars(aug.transform.transforms[0])  # plain torchvision again

    def test_without_indices_each_step_and_position_differs(self) -> None:
        images = _images(1, side=16).repeat(4, 1, 1, 1)
        aug = BatchAugment(_transform(), seed=1)
        first, second = aug(images), aug(images)
        assert torch.equal(first, BatchAugment(_transform(), seed=1)(images))
        assert not torch.equal(first, second)
        assert all(not torch.equal(first[0], first[i]) for i in (1, 2, 3))

    def test_replay_and_the_recorded_parameters(self) -> None:
        aug = BatchAugment(_transform(), seed=4)
        images = _images(8)
        out, params = aug(images, index=list(range(40, 48)), epoch=1, return_params=True)
        assert aug.last_params is params
        assert len(params) == 8
        assert params[5][0][0] == "RandomResizedCrop"
        assert set(params[5][0][1]) == {"top", "left", "height", "width"}
        assert (aug.replay(45, 1, images[5])[0] - out[5]).abs().max() <= 1e-5

    def test_two_transforms_with_one_seed_draw_apart(self) -> None:
        # Before: one seed gave both the same torch seed per sample, so a vertical flip
        # flipped exactly the samples the horizontal flip flipped.
        images = _images(64, side=8)
        index = list(range(64))
        hflip = BatchAugment(v2.RandomHorizontalFlip(p=0.5), seed=0)(images, index=index, epoch=0)
        vflip = BatchAugment(v2.RandomVerticalFlip(p=0.5), seed=0)(images, index=index, epoch=0)
        h_gate = [not torch.equal(a, b) for a, b in zip(hflip, images, strict=True)]
        v_gate = [not torch.equal(a, b) for a, b in zip(vflip, images, strict=True)]
        assert h_gate != v_gate
        again = BatchAugment(v2.RandomHorizontalFlip(p=0.5), seed=0)(images, index=index, epoch=0)
        assert torch.equal(again, hflip)

    def test_replay_keeps_the_types_of_the_batch(self) -> None:
        # replay(i, e, image) made the row a batch with image[None], a plain tensor
        images = torch.zeros(4, 3, 32, 48)
        images[..., 8:16, 4:14] = 1.0
        masks = tv_tensors.Mask(images[:, 0].clone())
        aug = BatchAugment(v2.RandomHorizontalFlip(), seed=0)
        out, moved = aug(tv_tensors.Image(images), masks, index=[0, 1, 2, 3], epoch=0)
        for b in range(4):
            image, mask = aug.replay(
                b, 0, tv_tensors.Image(images[b]), tv_tensors.Mask(masks[b : b + 1])
            )
            assert isinstance(image, tv_tensors.Image)
            assert isinstance(mask, tv_tensors.Mask)
            assert torch.equal(image[0], out[b])
            assert torch.equal(mask[0], moved[b])

    def test_boxes_and_masks_follow(self) -> None:
        transform = v2.Compose(
            [v2.RandomCrop((48, 48)), v2.RandomHorizontalFlip(), v2.RandomVerticalFlip()]
        )
        images = torch.zeros(8, 1, 64, 64)
        images[..., 10:30, 20:44] = 1.0
        masks = tv_tensors.Mask(images[:, 0].clone())
        boxes = [
            tv_tensors.BoundingBoxes([[20, 10, 44, 30]], format="XYXY", canvas_size=(64, 64))
            for _ in range(8)
        ]
        aug = BatchAugment(transform, seed=1)
        out, moved_masks, moved = aug(images, masks, boxes, index=list(range(8)), epoch=0)
        assert isinstance(moved_masks, tv_tensors.Mask)
        assert moved_masks.shape == (8, 48, 48)
        assert isinstance(moved, list)
        assert all(isinstance(box, tv_tensors.BoundingBoxes) for box in moved)
        assert torch.equal(moved_masks, out[:, 0])
        for image, box in zip(out, moved, strict=True):
            assert box.canvas_size == (48, 48)
            x1, y1, x2, y2 = box[0].clamp(0, 48).long().tolist()
            assert bool((image[0, y1:y2, x1:x2] == 1).all())
            assert image.sum() == (x2 - x1) * (y2 - y1)
        assert len({tuple(box[0].tolist()) for box in moved}) > 1

    def test_one_box_per_sample_as_one_tensor_of_rows(self) -> None:
        images = torch.zeros(4, 1, 32, 32)
        images[..., 8:16, 8:20] = 1.0
        boxes = tv_tensors.BoundingBoxes([[8, 8, 20, 16]] * 4, format="XYXY", canvas_size=(32, 32))
        aug = BatchAugment(v2.RandomHorizontalFlip(p=0.5), seed=3)
        out, moved = aug(images, boxes, index=[0, 1, 2, 3], epoch=0)
        assert isinstance(moved, tv_tensors.BoundingBoxes)
        assert moved.shape == (4, 4)
        for image, box in zip(out, moved, strict=True):
            x1, y1, x2, y2 = box.long().tolist()
            assert bool((image[0, y1:y2, x1:x2] == 1).all())
            assert image.sum() == (x2 - x1) * (y2 - y1)

    def test_image_batches_keep_their_type_and_no_seed_function_is_called(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def refuse(*_: Any) -> None:
            raise AssertionError("a global seed function was called")

        for owner in (torch, torch.random, torch.cuda):
            monkeypatch.setattr(owner, "manual_seed", refuse)
        monkeypatch.setattr(torch.cuda, "manual_seed_all", refuse)
        images = tv_tensors.Image(_images(4))
        out = BatchAugment(_transform(), seed=0)(images, index=[0, 1, 2, 3], epoch=0)
        assert isinstance(out, tv_tensors.Image)
        assert out.shape == (4, 3, 16, 16)

    @settings(max_examples=10, deadline=None)
    @given(
        st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=6, unique=True),
        st.integers(0, 2**32 - 1),
    )
    def test_any_index_gives_its_own_output_in_any_batch(
        self, index: list[int], epoch: int
    ) -> None:
        aug = BatchAugment(v2.RandomRotation(45.0), seed=2)
        images = _images(len(index), side=8)
        full = aug(images, index=index, epoch=epoch)
        tail = aug(images[1:], index=index[1:], epoch=epoch)
        assert (full[1:] - tail).abs().max() <= 1e-5


class TestBatchAugmentTorchvisionRefusals:
    def test_outputs_of_different_shapes_are_refused(self) -> None:
        aug = BatchAugment(v2.RandomChoice([v2.Resize((8, 8)), v2.Resize((9, 9))]), seed=0)
        with pytest.raises(ValueError, match=r"images of different shapes .* fixed output size"):
            aug(_images(16), index=list(range(16)), epoch=0)

    @pytest.mark.parametrize("mix", ["MixUp", "CutMix"])
    def test_a_transform_that_mixes_the_batch_is_refused(self, mix: str) -> None:
        mixing = getattr(v2, mix)(num_classes=3)
        with pytest.raises(ValueError, match=f"has a {mix}, which mixes the samples"):
            BatchAugment(v2.Compose([v2.RandomHorizontalFlip(), mixing]), seed=0)

    def test_inputs_need_one_row_per_sample(self) -> None:
        aug = BatchAugment(v2.RandomHorizontalFlip(), seed=0)
        masks = tv_tensors.Mask(torch.zeros(3, 24, 24))
        with pytest.raises(ValueError, match=r"input 1 must have one row per sample \(2\)"):
            aug(_images(2), masks, index=[0, 1], epoch=0)
        with pytest.raises(ValueError, match=r"input 1 must have one item per sample \(2\)"):
            aug(_images(2), [None], index=[0, 1], epoch=0)
        with pytest.raises(TypeError, match="takes no keyword arguments"):
            aug(_images(2), index=[0, 1], epoch=0, data_keys=["input"])
        with pytest.raises(TypeError, match=r"input 1 must be a tensor .* got NoneType"):
            aug(_images(2), None, index=[0, 1], epoch=0)

    def test_a_plain_tensor_inside_a_target_is_refused(self) -> None:
        # A detection target {"boxes": plain tensor}: torchvision flattened the dict and
        # passed the boxes through, so the image was flipped and its boxes came back stale.
        aug = BatchAugment(v2.RandomHorizontalFlip(p=1.0), seed=0)
        images = _images(2)
        boxes = tv_tensors.BoundingBoxes([[1, 2, 5, 6]], format="XYXY", canvas_size=(24, 24))
        wrapped = {"boxes": boxes, "labels": torch.tensor([1]), "rows": [torch.zeros(2)]}
        plain = {"boxes": torch.tensor([[1.0, 2.0, 5.0, 6.0]]), "labels": torch.tensor([1])}
        refused = r"is a plain torch.Tensor of shape \(1, 4\): torchvision v2 passes a plain"
        with pytest.raises(TypeError, match=r"input 1\[1\]\['boxes'\] " + refused):
            aug(images, [wrapped, plain], index=[0, 1], epoch=0)
        with pytest.raises(TypeError, match=r"input 1\[0\]\[0\]\[1\] " + refused):
            aug(images, [([torch.zeros(2), torch.zeros(1, 4)],)] * 2, index=[0, 1], epoch=0)
        _, (first, second) = aug(images, [wrapped, wrapped], index=[0, 1], epoch=0)
        assert first["boxes"].tolist() == [[19, 2, 23, 6]]  # flipped with its image
        assert torch.equal(second["labels"], torch.tensor([1]))

    def test_a_plain_tensor_beside_the_images_is_refused(self) -> None:
        # torchvision passes it through: a plain mask batch came back unmoved, silently
        aug = BatchAugment(v2.RandomHorizontalFlip(p=1.0), seed=0)
        images = _images(2)
        masks = tv_tensors.Mask(torch.zeros(2, 24, 24))
        boxes = tv_tensors.BoundingBoxes([[0, 0, 4, 4]], format="XYXY", canvas_size=(24, 24))
        refused = r"is a plain torch.Tensor of shape {}: torchvision v2 passes a plain tensor"
        with pytest.raises(TypeError, match="input 1 " + refused.format(r"\(2, 24, 24\)")):
            aug(images, masks[0:2], index=[0, 1], epoch=0)  # a slice of a Mask is plain
        with pytest.raises(TypeError, match="input 1 " + refused.format(r"\(1, 24, 24\)")):
            aug.replay(0, 0, images[0], masks[0:1])
        with pytest.raises(TypeError, match=r"input 2\[1\] " + refused.format(r"\(1, 4\)")):
            aug(images, masks, [boxes, torch.zeros(1, 4)], index=[0, 1], epoch=0)
        labels = torch.tensor([3, 5])
        _, moved, kept, rows = aug(images, masks, labels, list(torch.eye(2)), index=[0, 1])
        assert isinstance(moved, tv_tensors.Mask)
        assert torch.equal(kept, labels)  # one value per sample, passed through
        assert [row.tolist() for row in rows] == [[1.0, 0.0], [0.0, 1.0]]


class TestBatchAugmentTorchvisionGuide:
    def test_the_guide_example_runs_and_its_targets_follow(self) -> None:
        from tests.recipes.blocks import load_recipe

        page = load_recipe("torchvision")  # docs/guides/batch-augment.md
        assert page.out.shape == (8, 3, 64, 64)
        assert isinstance(page.moved_masks, tv_tensors.Mask)
        assert page.moved_masks.shape == (8, 64, 64)
        assert [box.canvas_size for box in page.moved_boxes] == [(64, 64)] * 8


@pytest.mark.ddp
@pytest.mark.timeout(300)
class TestBatchAugmentTorchvisionAudit:
    def test_plain_torchvision_fails_and_batch_augment_passes(self, tmp_path: Any) -> None:
        import json

        from tests.cli_helpers import run_main

        targets = [
            "tests.cli_batch_targets:torchvision_plain",
            "tests.cli_batch_targets:torchvision_keyed",
        ]
        path = tmp_path / "report.json"
        code, _, _ = run_main("audit", *targets, "--output", str(path), "-q")
        plain, keyed = json.loads(path.read_text())["reports"]
        assert code == 1
        assert (plain["batch"], plain["failed"]) == ("torchvision", ["ranks"])
        assert "rankaug.BatchAugment(transform, seed=0)" in plain["fixes"][0]
        assert (keyed["batch"], keyed["verdict"]) == ("BatchAugment", "pass")
        positions = {v["name"]: v for v in keyed["verdicts"]}["positions"]
        assert "keyed per sample:" in positions["summary"]


class TestBatchAugmentTorchvisionProbe:
    @pytest.mark.parametrize("name", ["torchvision_detection", "torchvision_detection_keyed"])
    def test_a_transform_that_needs_boxes_is_probed_with_one_box_per_image(self, name: str) -> None:
        # v2.SanitizeBoundingBoxes raised "No bounding boxes were found": a traceback
        from rankaug.cli.batch_probe import box_target, probe_batch, synthetic_batch
        from rankaug.cli.fingerprint import fingerprint
        from tests import cli_batch_targets

        transform = getattr(cli_batch_targets, name)()
        state = torch.get_rng_state()
        rows = probe_batch(transform, [0, 1, 2], 2, 0, 16)
        after = torch.get_rng_state()
        assert [row[2] for row in rows] == list(range(6))
        repeated = [a[4] == b[4] for a, b in zip(rows[:3], rows[3:], strict=True)]
        assert repeated == [name.endswith("_keyed")] * 3
        torch.set_rng_state(state)  # the retry starts from the state the first try did
        images, target = synthetic_batch([0, 1, 2], 16), box_target(transform, 16, 3)
        if name.endswith("_keyed"):
            first = transform(images, target, index=[0, 1, 2], epoch=0)[0]
        else:
            first = transform(images, target)[0]
        assert [row[4] for row in rows[:3]] == [fingerprint(row).digest for row in first]
        torch.set_rng_state(after)

    def test_a_transform_that_fails_with_boxes_too_is_one_line_with_what_to_do(self) -> None:
        from rankaug.cli.audit import AuditConfig
        from rankaug.cli.failure import SampleFailure
        from rankaug.cli.probe import AuditJob
        from tests import cli_batch_targets

        config = AuditConfig(targets=("m:f",), epochs=1, repeats=2, progress=False)
        job = AuditJob(config, ((0, 1, 0, 1),), 0)
        with pytest.raises(SampleFailure) as caught:
            job._batch(0, "m:f", cli_batch_targets.torchvision_iou_crop(), (0, 1, 0, 1))
        message = str(caught.value)
        assert message.startswith(
            "m:f: the batch transform failed on the audit's batch of 2 synthetic 32x32 images "
            "(rank 0, epoch 0): TypeError: RandomIoUCrop() requires input sample to contain "
            "tensor or PIL images and bounding boxes."
        )
        assert (
            "a torchvision transform that fails so is tried once more with a target of one "
            "box per image" in message
        )
        assert "make the TARGET's factory return it without the steps that need them" in message
        assert "\n" not in message
