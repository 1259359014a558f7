"""BatchAugment: kornia batches keyed per sample (issue 18), on CPU."""

from __future__ import annotations

import copy as copy_module
import os
import pickle
import re
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug import BatchAugment, EpochIndex
from rankaug.errors import RankaugWarning
from tests import ahead
from tests.batch.helpers import assert_unchanged, global_states
from tests.batch.helpers import images as _images
from tests.ddp.harness import launch

K = pytest.importorskip("kornia.augmentation")


def _transform(**keys: Any) -> Any:
    return K.AugmentationSequential(
        K.RandomAffine(degrees=20.0, translate=(0.1, 0.1), scale=(0.8, 1.2), p=0.8),
        K.RandomHorizontalFlip(p=0.5),
        K.ColorJitter(0.2, 0.2, 0.2, 0.05, p=0.7, order=(0, 1, 2, 3)),
        K.RandomResizedCrop((16, 16), p=1.0),
        **keys,
    )


def _rows(params: list[Any]) -> torch.Tensor:
    """One row per sample: every per-sample float parameter of the call, side by side."""
    columns = []
    for item in params:
        for name, value in sorted(item.data.items()):
            if name != "forward_input_shape" and value.is_floating_point() and value.dim() >= 1:
                columns.append(value.reshape(value.shape[0], -1))
    return torch.cat(columns, dim=1)


def _with_p_batch(aug: Any) -> Any:
    aug.p_batch = 0.5  # only kornia's mix augmentations take it as an argument
    return aug


def _drawn_rows(params: dict[str, torch.Tensor]) -> torch.Tensor:
    """One row per sample of one augmentation's drawn float parameters, side by side."""
    fixed = ("batch_prob", "forward_input_shape", "src")  # src: the spline's fixed points
    drawn = [v for k, v in sorted(params.items()) if k not in fixed and v.is_floating_point()]
    return torch.cat([value.reshape(value.shape[0], -1) for value in drawn], dim=1)


# Kornia 0.9 augmentations whose samplers sit in PlainUniformGenerator.sampler_dict, and
# one whose sampler is its own attribute (RandomThinPlateSpline.dist).
_DICT_OR_OWN_SAMPLERS = {
    "RandomRotation": lambda: K.RandomRotation(30.0, p=0.8),
    "RandomBrightness": lambda: K.RandomBrightness((0.6, 1.4), p=0.8),
    "RandomContrast": lambda: K.RandomContrast((0.6, 1.4), p=0.8),
    "RandomGamma": lambda: K.RandomGamma((0.6, 1.4), p=0.8),
    "RandomHue": lambda: K.RandomHue((-0.3, 0.3), p=0.8),
    "RandomSaturation": lambda: K.RandomSaturation((0.5, 1.5), p=0.8),
    "RandomSolarize": lambda: K.RandomSolarize(0.2, 0.2, p=0.8),
    "RandomSharpness": lambda: K.RandomSharpness(1.0, p=0.8),
    "RandomRGBShift": lambda: K.RandomRGBShift(p=0.8),
    "RandomThinPlateSpline": lambda: K.RandomThinPlateSpline(p=0.8),
}


def _shared_rows(a: torch.Tensor, b: torch.Tensor) -> int:
    return sum(bool((row == b).all(dim=1).any()) for row in a)


def _fallback_rank(rank: int, world_size: int) -> list[float]:
    aug = BatchAugment(_transform(), seed=0)
    return aug(_images(8)).flatten().tolist()[:64]


def _slow_affine() -> Any:
    """A RandomAffine whose draws wait a little after rankaug set its keyed samplers."""

    class SlowAffine(K.RandomAffine):  # type: ignore[misc, name-defined]
        def forward_parameters(self, batch_shape: torch.Size) -> dict[str, torch.Tensor]:
            time.sleep(0.002)  # another thread runs here
            params: dict[str, torch.Tensor] = super().forward_parameters(batch_shape)
            return params

    return SlowAffine(degrees=20.0, translate=(0.1, 0.1), p=1.0)


class _SlowStep(BatchAugment):
    """A BatchAugment whose step is read slowly: another thread runs between the read
    and the count, unless the two are one step."""

    @property  # type: ignore[override]
    def step(self) -> int:
        value: int = self.__dict__["_step"]
        time.sleep(0.005)  # another thread runs here
        return value

    @step.setter
    def step(self, value: int) -> None:
        self.__dict__["_step"] = value


class _StepCollate:
    """A ``collate_fn`` that augments its batch without indices: the output, the warnings."""

    def __init__(self, aug: BatchAugment) -> None:
        self.aug = aug

    def __call__(self, samples: list[torch.Tensor]) -> tuple[torch.Tensor, list[str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = self.aug(torch.stack(samples))
        return out, [str(warning.message) for warning in caught]


class TestBatchAugment:
    def test_threads_at_once_without_index_take_distinct_steps(self) -> None:
        # the step was read, then counted: two threads could read one step (one key)
        aug = _SlowStep(K.RandomAffine(degrees=30.0, p=1.0), seed=0)
        images, meeting = _images(2), threading.Barrier(8, timeout=10)

        def call(_: int) -> bytes:
            meeting.wait()
            out: torch.Tensor = aug(images)
            return out.numpy().tobytes()

        with ThreadPoolExecutor(8) as pool:
            outputs = list(pool.map(call, range(8)))
        assert aug.step == 8
        assert len(set(outputs)) == 8
        alone = BatchAugment(K.RandomAffine(degrees=30.0, p=1.0), seed=0)
        assert set(outputs) == {alone(images).numpy().tobytes() for _ in range(8)}

    def test_threads_at_once_get_each_keys_own_parameters(self) -> None:
        aug = BatchAugment(K.AugmentationSequential(_slow_affine()), seed=5)
        images = _images(4)
        batches = [list(range(n, n + 4)) for n in range(0, 96, 4)]
        alone = [aug(images, index=index, epoch=0) for index in batches]
        with ThreadPoolExecutor(4) as pool:
            threaded = list(pool.map(lambda index: aug(images, index=index, epoch=0), batches))
        assert all(torch.equal(a, b) for a, b in zip(alone, threaded, strict=True))

    def test_threads_at_once_each_read_their_own_last_params(self) -> None:
        # one attribute for the wrapper: each thread read whichever call ended last
        aug = BatchAugment(K.RandomAffine(degrees=30.0, p=1.0), seed=5)
        images, after = _images(2), threading.Barrier(4, timeout=10)

        def call(start: int) -> bool:
            _, params = aug(images, index=[start, start + 1], epoch=0, return_params=True)
            after.wait()  # every call has ended before any thread reads
            return aug.last_params is params

        with ThreadPoolExecutor(4) as pool:
            mine = list(pool.map(call, range(0, 8, 2)))
        assert mine == [True] * 4
        assert aug.last_params is None  # this thread made no call

    def test_a_copy_calls_alike_and_starts_without_last_params(self) -> None:
        aug = BatchAugment(_transform(), seed=3)
        images = _images(4)
        out = aug(images, index=[1, 2, 3, 4], epoch=1)
        for copy in (pickle.loads(pickle.dumps(aug)), copy_module.deepcopy(aug)):
            before = copy.last_params
            assert torch.equal(copy(images, index=[1, 2, 3, 4], epoch=1), out)
            assert before is None
            assert copy.last_params is not None
            assert aug.last_params is not copy.last_params

    def test_a_sample_is_the_same_alone_in_64_and_in_a_shuffled_16(self) -> None:
        aug = BatchAugment(_transform(), seed=5)
        images = _images(64)
        full = aug(images, index=list(range(100, 164)), epoch=2)
        order = torch.randperm(64, generator=torch.Generator().manual_seed(1))[:16]
        shuffled = aug(images[order], index=(order + 100).tolist(), epoch=2)
        assert (full[order] - shuffled).abs().max() <= 1e-5
        for position in (0, 17, 63):
            alone = aug(images[position : position + 1], index=[100 + position], epoch=2)
            assert (full[position] - alone[0]).abs().max() <= 1e-5

    def test_two_ranks_seeded_alike_share_no_parameter_row(self) -> None:
        images = _images(128, side=16)
        rows = []
        for rank in range(2):
            torch.manual_seed(0)
            aug = BatchAugment(_transform(), seed=0)
            _, params = aug(images, index=list(range(rank, 256, 2)), epoch=0, return_params=True)
            rows.append(_rows(params))
        assert _shared_rows(rows[0], rows[1]) == 0

    def test_plain_kornia_seeded_alike_shares_every_row(self) -> None:  # the control
        images = _images(128, side=16)
        rows = []
        for _ in range(2):
            torch.manual_seed(0)
            transform = _transform()
            transform(images)
            rows.append(_rows(transform._params))
        assert _shared_rows(rows[0], rows[1]) == 128

    @pytest.mark.ddp
    def test_ranks_without_indices_differ(self, tmp_path: Path) -> None:
        first, second = launch(_fallback_rank, 2, tmp_path)
        assert first != second

    def test_epochs_differ_and_reruns_repeat(self) -> None:
        images = _images(16)
        runs = []
        for epoch in (0, 1, 0):
            aug = BatchAugment(_transform(), seed=9)
            _, params = aug(images, index=list(range(16)), epoch=epoch, return_params=True)
            runs.append(_rows(params))
        assert torch.equal(runs[0], runs[2])
        assert _shared_rows(runs[0], runs[1]) == 0

    def test_the_epoch_comes_from_epoch_index_values(self) -> None:
        from rankaug import EpochIndex

        aug = BatchAugment(_transform(), seed=9)
        images = _images(4)
        carried = aug(images, index=[EpochIndex(i, 3) for i in range(4)])
        assert torch.equal(carried, aug(images, index=list(range(4)), epoch=3))

    def test_no_global_generator_moves_in_25_calls(self) -> None:
        # each call runs every sampler of the transform: a move would show in the first;
        # 25 of both kinds (by index, by step) cross the epochs and the step counter
        aug = BatchAugment(_transform(), seed=1)
        images = _images(4, side=16)
        before = global_states()
        for step in range(25):
            aug(images, index=[step, step + 1, step + 2, step + 3], epoch=step % 3)
            aug(images)
        assert_unchanged(before)

    def test_without_indices_in_a_worker_warns(self) -> None:
        # each worker's copy counts its steps from 0: the workers' first batches were
        # keyed alike (and non-persistent workers began again every epoch), silently
        aug = BatchAugment(K.RandomAffine(degrees=40.0, p=1.0), seed=0)
        loader = torch.utils.data.DataLoader(
            [torch.full((3, 8, 8), 0.5)] * 4, batch_size=2, num_workers=2,
            collate_fn=_StepCollate(aug),
        )  # fmt: skip
        (first, warned), (second, _) = list(loader)
        assert torch.equal(first, second)  # what the warning is about
        (message,) = warned
        assert message.startswith(
            "BatchAugment was called without index= in a DataLoader worker: its keys are "
            "(seed, stream, rank, epoch, step, position), and each worker's copy counts "
            "its own steps from 0"
        )

    def test_without_indices_in_workers_warns_once_across_epochs(self) -> None:
        # each epoch's workers are new processes: every epoch warned again, per worker
        aug = BatchAugment(K.RandomAffine(degrees=40.0, p=1.0), seed=0)
        loader = torch.utils.data.DataLoader(
            [torch.full((3, 8, 8), 0.5)] * 4, batch_size=2, num_workers=1,
            collate_fn=_StepCollate(aug),
        )  # fmt: skip
        warned = [message for _ in range(3) for _, messages in loader for message in messages]
        assert len(warned) == 1
        assert "without index= in a DataLoader worker" in warned[0]

    def test_without_indices_each_step_and_position_differs(self) -> None:
        images = _images(1, side=16).repeat(4, 1, 1, 1)
        aug = BatchAugment(_transform(), seed=1)
        first, second = aug(images), aug(images)
        again = BatchAugment(_transform(), seed=1)(images)
        assert torch.equal(first, again)
        assert not torch.equal(first, second)
        assert all(not torch.equal(first[0], first[i]) for i in (1, 2, 3))

    def test_replay_reproduces_one_sample(self) -> None:
        aug = BatchAugment(_transform(), seed=4)
        images = _images(8)
        out, params = aug(images, index=list(range(40, 48)), epoch=1, return_params=True)
        assert aug.last_params is params
        assert (aug.replay(45, 1, images[5])[0] - out[5]).abs().max() <= 1e-5
        assert torch.equal(aug.replay(45, 1, images[5:6]), aug.replay(45, 1, images[5]))

    @pytest.mark.parametrize("shape", [(8, 3, 32, 32), (32, 32), (1, 1, 3, 32, 32)])
    def test_replay_of_anything_but_one_image_is_refused(self, shape: tuple[int, ...]) -> None:
        # a whole batch was refused as "index must have one value per sample (8), got 1"
        with pytest.raises(
            ValueError,
            match=re.escape(
                "image must be one sample's (C, H, W) image or a (1, C, H, W) batch of it, "
                f"got shape {shape}"
            ),
        ):
            BatchAugment(_transform(), seed=4).replay(45, 1, torch.zeros(shape))

    def test_boxes_masks_and_keypoints_follow(self) -> None:
        transform = K.AugmentationSequential(
            K.RandomCrop((48, 48)), data_keys=["input", "bbox_xyxy", "mask", "keypoints"]
        )
        images = torch.zeros(8, 1, 64, 64)
        images[..., 10:30, 20:44] = 1.0
        boxes = torch.tensor([[[20.0, 10.0, 44.0, 30.0]]]).repeat(8, 1, 1)
        points = torch.tensor([[[20.0, 10.0]]]).repeat(8, 1, 1)
        aug = BatchAugment(transform, seed=1)
        out, moved, masks, corners = aug(
            images, boxes, images.clone(), points, index=list(range(8)), epoch=0
        )
        assert torch.equal(masks, out)
        assert torch.equal(corners[:, 0], moved[:, 0, :2])
        for image, box in zip(out, moved, strict=True):
            x1, y1, x2, y2 = box[0].clamp(0, 48).long().tolist()
            assert bool((image[0, y1:y2, x1:x2] == 1).all())
            assert image.sum() == (x2 - x1) * (y2 - y1)
        assert len({tuple(box[0].tolist()) for box in moved}) > 1

    def test_the_returned_parameters_are_the_ones_applied(self) -> None:
        aug = BatchAugment(_transform(), seed=6)
        images = _images(8)
        out, params = aug(images, index=list(range(8)), epoch=0, return_params=True)
        assert torch.equal(aug.transform(images, params=params), out)

    @pytest.mark.parametrize("kind", ["ColorJitter", "ColorJiggle"])
    def test_colour_jitter_draws_its_order_per_sample(self, kind: str) -> None:
        transform = getattr(K, kind)(0.3, 0.3, 0.3, 0.1, p=0.8)
        aug = BatchAugment(transform, seed=0)
        images = _images(32, side=8)
        state = torch.get_rng_state()
        out, params = aug(images, index=list(range(32)), epoch=0, return_params=True)
        assert torch.equal(state, torch.get_rng_state())
        assert params["order"].shape == (32, 4)
        assert len(torch.unique(params["order"], dim=0)) > 1
        order = torch.randperm(32, generator=torch.Generator().manual_seed(2))[:8]
        assert (aug(images[order], index=order.tolist(), epoch=0) - out[order]).abs().max() <= 1e-5
        assert (aug.replay(7, 0, images[7])[0] - out[7]).abs().max() <= 1e-5

    @pytest.mark.parametrize(
        "make",
        [
            lambda: K.ColorJitter(0.3, 0.3, 0.3, p=1.0),
            lambda: K.ColorJiggle(0.3, 0.3, 0.3, 0.1, p=0.5),
            lambda: K.AugmentationSequential(K.RandomHorizontalFlip(), K.ColorJitter(0.2, 0.2)),
            _transform,
        ],
        ids=["ColorJitter", "ColorJiggle", "Sequential", "fixed-order"],
    )
    def test_an_empty_batch_comes_back_empty_as_kornia_s(self, make: Any) -> None:
        # a colour jitter's order per sample failed a bare assertion on no samples
        images = _images(0, side=16)
        alone = make()(images)
        out = BatchAugment(make(), seed=0)(images, index=torch.arange(0), epoch=0)
        assert out.shape == alone.shape == (0, 3, 16, 16)
        assert out.dtype == alone.dtype

    @pytest.mark.parametrize("name", list(_DICT_OR_OWN_SAMPLERS))
    def test_samplers_in_a_dict_or_on_the_augmentation_are_keyed(self, name: str) -> None:
        make = _DICT_OR_OWN_SAMPLERS[name]
        images = _images(16, side=12)
        before = global_states()
        aug = BatchAugment(make(), seed=3)
        out, params = aug(images, index=list(range(16)), epoch=1, return_params=True)
        _, other = aug(images, index=list(range(16)), epoch=2, return_params=True)
        assert_unchanged(before)
        rows = _drawn_rows(params)
        assert len(torch.unique(rows, dim=0)) == 16
        assert _shared_rows(rows, _drawn_rows(other)) == 0
        order = torch.randperm(16, generator=torch.Generator().manual_seed(3))[:5]
        assert (aug(images[order], index=order.tolist(), epoch=1) - out[order]).abs().max() <= 1e-5
        assert torch.equal(
            BatchAugment(make(), seed=3)(images, index=list(range(16)), epoch=1), out
        )

    def test_a_dict_sampler_is_numbered_after_the_attribute_ones_and_put_back(self) -> None:
        from rankaug.batch._keys import DrawKeys

        transform = K.RandomRotation(30.0, p=1.0)
        held = transform._param_generator.sampler_dict
        index, epoch = torch.tensor([4, 9]), torch.tensor([2, 2])
        aug = BatchAugment(transform, seed=8)
        _, params = aug(_images(2), index=index, epoch=epoch, return_params=True)
        keys = DrawKeys.of_samples(8, aug.stream, index, epoch, "cpu")
        u = keys.uniform(torch.Size((2,)), (0, 0, 0), torch.device("cpu"), torch.float32)
        assert torch.equal(params["degrees"], -30.0 + 60.0 * u)  # augmentation 0, sampler 0
        assert transform._param_generator.sampler_dict is held  # plain kornia again

    def test_indices_with_and_without_their_epoch_are_refused_together(self) -> None:
        aug = BatchAugment(K.RandomAffine(degrees=45.0, p=1.0), seed=2)
        mixed = [EpochIndex(3, epoch=2), 4]
        with pytest.raises(ValueError, match="index mixes indices that carry their epoch"):
            aug(_images(2, side=8), index=mixed)
        aug(_images(2, side=8), index=mixed, epoch=2)  # said outright: taken

    def test_one_index_for_a_batch_of_one_without_an_epoch(self) -> None:
        # one integer for a larger batch is refused (TestBatchAugmentRefusals); the same
        # key for every sample is asked for sample by sample ([5, 5, 5])
        aug = BatchAugment(K.RandomAffine(degrees=45.0, p=1.0), seed=2)
        images = _images(3, side=8)
        given = aug(images, index=[5, 5, 5], epoch=0)
        # the same index again with no epoch source: warned, once (tests/batch/test_epoch.py)
        with pytest.warns(RankaugWarning, match="augmented index 5 again"):
            outs = [
                aug(images[:1], index=i) for i in (5, np.int64(5), np.array(5), torch.tensor(5))
            ]
        for out in outs:
            assert torch.equal(out, given[:1])

    @pytest.mark.parametrize("epoch", [torch.tensor(3), np.array(3), np.int64(3)])
    def test_a_0d_epoch_is_taken_without_an_index(self, epoch: Any) -> None:
        # a 0-D tensor epoch was taken with index= and refused without it
        images = _images(2, side=8)
        expected = BatchAugment(K.RandomAffine(degrees=45.0, p=1.0), seed=2)(images, epoch=3)
        got = BatchAugment(K.RandomAffine(degrees=45.0, p=1.0), seed=2)(images, epoch=epoch)
        assert torch.equal(got, expected)

    @pytest.mark.parametrize("epoch", [torch.tensor([3, 3]), np.array([3, 3]), [3, 3]])
    def test_an_epoch_per_sample_without_an_index_asks_for_one(self, epoch: Any) -> None:
        # it was refused as "epoch must be an integer", index= unmentioned
        aug = BatchAugment(K.RandomAffine(degrees=45.0, p=1.0), seed=2)
        with pytest.raises(
            ValueError, match=r"epoch has one value per sample \(2 given\), which needs index="
        ):
            aug(_images(2, side=8), epoch=epoch)
        with pytest.raises(
            TypeError, match=r"epoch must be an integer tensor, got dtype torch\.float32"
        ):
            aug(_images(2, side=8), epoch=torch.tensor(3.0))

    def test_a_uint64_tensor_index_is_taken_like_a_list(self) -> None:
        aug = BatchAugment(K.RandomAffine(degrees=45.0, p=1.0), seed=2)
        images = _images(2, side=8)
        listed = aug(images, index=[2**63 + 5, 6], epoch=1)
        tensor = torch.tensor([2**63 + 5, 6], dtype=torch.uint64)
        assert torch.equal(aug(images, index=tensor, epoch=1), listed)

    def test_a_numpy_index_is_taken_like_a_list(self) -> None:
        aug = BatchAugment(K.RandomAffine(degrees=45.0, p=1.0), seed=2)
        images = _images(4, side=8)
        listed = aug(images, index=[3, 2**63 + 1, 7, 2**64 - 1], epoch=5)
        index = np.array([3, 2**63 + 1, 7, 2**64 - 1], dtype=np.uint64)
        assert torch.equal(aug(images, index=index, epoch=np.array(5)), listed)
        assert torch.equal(aug(images, index=index, epoch=np.full(4, 5, np.int32)), listed)
        short = aug(images[:2], index=np.arange(2), epoch=np.int64(5))
        assert torch.equal(short, aug(images[:2], index=[0, 1], epoch=5))

    def test_two_augmentations_with_one_seed_draw_apart(self) -> None:
        # Before: the keys had no stream word, so two BatchAugments with one seed drew
        # alike: a flip gated exactly the samples a jitter gated (the guide's pair),
        # a vertical flip the horizontal flip's, and RandomAffine's angles were
        # RandomRotation's degrees.
        images, index = _images(64, side=8), list(range(64))

        def params(transform: Any) -> Any:
            aug = BatchAugment(transform, seed=0)
            return aug(images, index=index, epoch=0, return_params=True)[1]

        hflip = params(K.RandomHorizontalFlip(p=0.5))["batch_prob"]
        assert not torch.equal(hflip, params(K.RandomVerticalFlip(p=0.5))["batch_prob"])
        assert not torch.equal(hflip, params(K.ColorJitter(0.3, 0.3, 0.3, p=0.5))["batch_prob"])
        wrapped = params(K.AugmentationSequential(K.RandomHorizontalFlip(p=0.5)))
        assert not torch.equal(hflip, wrapped[0].data["batch_prob"])
        angles = params(K.RandomAffine(degrees=30.0, p=1.0))["angle"]
        assert (
            _shared_rows(angles[:, None], params(K.RandomRotation(30.0, p=1.0))["degrees"][:, None])
            == 0
        )

    def test_one_pipeline_draws_alike_and_views_take_a_stream(self) -> None:
        images, index = _images(16, side=8), list(range(16))

        def view(**stream: Any) -> torch.Tensor:
            aug = BatchAugment(K.ColorJitter(0.4, 0.4, 0.4, 0.1, p=1.0), seed=0, **stream)
            return aug(images, index=index, epoch=0)

        assert torch.equal(view(), view())  # built twice: the same pipeline, the same draws
        assert torch.equal(view(stream="view1"), view(stream="view1"))
        assert not torch.equal(view(stream="view1"), view(stream="view2"))
        assert BatchAugment(K.RandomHorizontalFlip(), seed=0, stream=5).stream == 5

    def test_a_transform_seed_or_stream_set_afterwards_is_keyed_as_if_given(self) -> None:
        # before: a transform set afterwards drew from torch's global generator (the
        # keyed augmentations were the old transform's), a stream name was refused
        # when called, and a seed was not checked
        images, index = _images(4, side=8), [0, 1, 2, 3]
        aug = BatchAugment(K.RandomHorizontalFlip(), seed=0)
        aug.transform = K.RandomAffine(degrees=30.0, p=1.0)
        made = BatchAugment(K.RandomAffine(degrees=30.0, p=1.0), seed=0)
        assert aug.stream == made.stream  # derived from the new transform
        torch.manual_seed(0)
        first = aug(images, index=index, epoch=0)
        torch.manual_seed(1)  # global state moves nothing
        assert torch.equal(aug(images, index=index, epoch=0), first)
        assert torch.equal(made(images, index=index, epoch=0), first)
        aug.stream = "view1"  # a name, as the constructor takes
        assert aug.stream == BatchAugment(K.RandomHorizontalFlip(), seed=0, stream="view1").stream
        aug.transform = K.RandomVerticalFlip()  # a given stream stays
        assert aug.stream == BatchAugment(K.RandomVerticalFlip(), seed=0, stream="view1").stream
        with pytest.raises(ValueError, match="seed must be an integer"):
            aug.seed = -1
        with pytest.raises(ValueError, match="same_on_batch"):
            aug.transform = K.RandomAffine(10.0, same_on_batch=True)
        assert isinstance(aug.transform, K.RandomVerticalFlip)  # the refused one is not kept

    @pytest.mark.slow  # a new interpreter, run ahead (tests/ahead.py)
    def test_the_default_stream_is_the_same_in_every_process(self, tmp_path: Path) -> None:
        here = BatchAugment(
            K.AugmentationSequential(K.RandomAffine(15.0), K.ColorJitter(0.2, p=0.5)), seed=0
        ).stream
        assert ahead.result("batch-stream", lambda: tmp_path) == str(here)

    @settings(max_examples=10, deadline=None)
    @given(
        st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=6, unique=True),
        st.integers(0, 2**32 - 1),
    )
    def test_any_index_gives_its_own_output_in_any_batch(
        self, index: list[int], epoch: int
    ) -> None:
        aug = BatchAugment(K.RandomAffine(degrees=45.0, p=0.5), seed=2)
        images = _images(len(index), side=8)
        full = aug(images, index=index, epoch=epoch)
        tail = aug(images[1:], index=index[1:], epoch=epoch)
        assert (full[1:] - tail).abs().max() <= 1e-5


def stream_elsewhere(_: Path) -> str:
    """The default stream of the same BatchAugment in a new interpreter, with another
    string hashing than this process's (one interpreter: each costs 2 s; a job of
    tests.ahead)."""
    code = (
        "import kornia.augmentation as K, rankaug; print(rankaug.BatchAugment("
        "K.AugmentationSequential(K.RandomAffine(15.0), K.ColorJitter(0.2, p=0.5)), "
        "seed=0).stream)"
    )
    salt = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": salt},
    ).stdout.strip()


def imported_alone(_: Path) -> subprocess.CompletedProcess[str]:
    """``import rankaug`` in a new interpreter (a job of tests.ahead)."""
    code = "import sys, rankaug; print('kornia' in sys.modules)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


class TestBatchAugmentOptionalKornia:
    @pytest.mark.slow  # a new interpreter, run ahead (tests/ahead.py)
    def test_rankaug_imports_without_kornia(self, tmp_path: Path) -> None:
        result = ahead.result("batch-alone", lambda: tmp_path)
        assert result.stdout.strip() == "False"

    def test_a_missing_kornia_is_named(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "kornia.augmentation", None)
        with pytest.raises(ImportError, match=r"BatchAugment needs kornia: pip install"):
            BatchAugment(object(), seed=0)

    @pytest.mark.parametrize("version", ["0.8.3", "0.7.4"])
    def test_a_kornia_older_than_0_9_is_refused(
        self, monkeypatch: pytest.MonkeyPatch, version: str
    ) -> None:
        # kornia 0.8 draws a p < 1 augmentation's parameters for the samples its gate
        # applies only: every such augmentation failed, saying "a batch-level value"
        monkeypatch.setattr(sys.modules["kornia"], "__version__", version)
        message = f"BatchAugment needs kornia>=0.9, found kornia {version}"
        with pytest.raises(ImportError, match=re.escape(message)):
            BatchAugment(K.RandomHorizontalFlip(), seed=0)

    def test_kornia_0_9_and_newer_are_taken(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for version in ("0.9.0", "0.10.1", "1.0.0rc1"):
            monkeypatch.setattr(sys.modules["kornia"], "__version__", version)
            assert BatchAugment(K.RandomHorizontalFlip(), seed=0).seed == 0


class TestBatchAugmentRefusals:
    def test_a_keyword_a_single_augmentation_would_misread_is_refused(self) -> None:
        # epcoh=3 was ignored (every epoch keyed alike) and angle= replaced the keyed draws
        images = torch.rand(2, 3, 8, 8)
        flip = BatchAugment(K.RandomHorizontalFlip(), seed=0)
        with pytest.raises(
            TypeError, match=re.escape("takes the keyword arguments [], got ['epcoh']")
        ):
            flip(images, index=[0, 1], epcoh=3)
        affine = BatchAugment(K.RandomAffine(30.0, p=1.0), seed=0)
        with pytest.raises(TypeError, match=re.escape("got ['angle']")):
            affine(images, index=[0, 1], angle=torch.zeros(2))

    def test_a_container_takes_its_own_keywords_only(self) -> None:
        images = torch.rand(2, 3, 8, 8)
        sequential = K.AugmentationSequential(K.RandomHorizontalFlip(p=1.0), data_keys=["input"])
        aug = BatchAugment(sequential, seed=0)
        out = aug(images, index=[0, 1], data_keys=["input"])
        assert torch.equal(out, images.flip(-1))
        with pytest.raises(TypeError, match=re.escape("['data_keys'], got ['epoch_']")):
            aug(images, index=[0, 1], epoch_=1)

    @pytest.mark.parametrize(
        ("transform", "match"),
        [
            (lambda: K.RandomAffine(10.0, same_on_batch=True), "same_on_batch"),
            (lambda: K.RandomRotation(10.0, same_on_batch=True, p=1.0), "same_on_batch"),
            (lambda: _with_p_batch(K.RandomAffine(10.0)), "p_batch"),
            (
                lambda: K.AugmentationSequential(K.RandomAffine(10.0), random_apply=1),
                "random_apply",
            ),
            (lambda: K.RandomMixUpV2(), "mixes"),
            (lambda: K.RandomResizedCrop((8, 8), p=0.5), "use p=1.0"),
            (lambda: K.AugmentationSequential(K.auto.RandAugment(n=2, m=10)), "a RandAugment"),
            (lambda: K.auto.TrivialAugment(), "a TrivialAugment, a policy that picks"),
        ],
    )
    def test_a_batch_level_draw_is_refused(self, transform: Any, match: str) -> None:
        with pytest.raises(ValueError, match=match):
            BatchAugment(transform(), seed=0)

    def test_deterministic_batch_level_augmentations_are_kept(self) -> None:
        transform = K.AugmentationSequential(K.Resize((8, 8)), K.CenterCrop((6, 6)))
        images = _images(3, side=16)
        out = BatchAugment(transform, seed=0)(images, index=[0, 1, 2], epoch=0)
        assert torch.equal(out, transform(images))

    def test_a_global_draw_is_refused_and_the_state_restored(self) -> None:
        aug = BatchAugment(K.RandomGaussianNoise(p=1.0), seed=0)
        state = torch.get_rng_state()
        with pytest.raises(
            RuntimeError,
            match=r"augmentation 0 \(RandomGaussianNoise\) drew from torch's global generator "
            r"\(restored\): BatchAugment cannot key it \(the draw is made outside the "
            r"torch.distributions samplers it swaps for keyed ones: torch.rand, torch.randn",
        ):
            aug(_images(2), index=[0, 1], epoch=0)
        assert torch.equal(state, torch.get_rng_state())
        assert "forward_parameters" not in vars(aug.transform)  # plain kornia again

    def test_a_batch_level_sampler_draw_names_the_augmentation_and_sampler(self) -> None:
        aug = BatchAugment(K.RandomMotionBlur((3, 7), 35.0, 0.5, p=1.0), seed=0)
        with pytest.raises(
            ValueError,
            match=r"augmentation 0 \(RandomMotionBlur\), sampler ksize_sampler drew a "
            r"batch-level value of shape \(1,\) for a batch of 2 \(kornia draws it once",
        ):
            aug(_images(2), index=[0, 1], epoch=0)

    @pytest.mark.parametrize(
        ("index", "shown"),
        [
            (torch.arange(4).reshape(2, 2), r"a tensor of shape \(2, 2\)"),
            (np.arange(4).reshape(2, 2), r"an array of shape \(2, 2\)"),
            ([[0, 1], [2, 3]], r"a nested sequence \(shape \(2, 2\)\)"),
        ],
        ids=["tensor", "array", "list"],
    )
    def test_an_index_of_two_dimensions_is_refused(self, index: Any, shown: str) -> None:
        aug = BatchAugment(K.RandomHorizontalFlip(), seed=0)
        with pytest.raises(
            ValueError, match=r"index must be one value per sample, shape \(4,\), got " + shown
        ):
            aug(_images(4), index=index, epoch=0)

    @pytest.mark.parametrize(
        ("index", "shown"),
        [(5, "5"), (np.int64(5), "np.int64(5)"), (np.array(5), "array(5)"),
         (torch.tensor(5), "tensor(5)")],
    )  # fmt: skip
    def test_one_index_for_a_batch_is_refused(self, index: Any, shown: str) -> None:
        # it keyed every sample alike: the same angle for the four (index=step, say)
        aug = BatchAugment(K.RandomAffine(degrees=40.0, p=1.0), seed=0)
        with pytest.raises(ValueError, match=re.escape(
            f"index must be one value per sample, shape (4,), got one integer, {shown}, for 4"
        )):  # fmt: skip
            aug(_images(4), index=index, epoch=0)
        assert aug(_images(1), index=index, epoch=0).shape == _images(1).shape  # a batch of one
        _, params = aug(_images(4), index=[5, 6, 7, 8], epoch=5, return_params=True)
        assert len(set(params["angle"].tolist())) == 4  # one epoch for all: still taken

    @pytest.mark.parametrize("flag", [1, 0, "no", None, [0], np.int64(1)])
    def test_return_params_must_be_a_bool(self, flag: Any) -> None:
        # any truthy value once returned (output, params): "no" and [0] included
        aug = BatchAugment(K.RandomHorizontalFlip(), seed=0)
        with pytest.raises(TypeError, match=r"return_params must be True or False, got "):
            aug(_images(2), return_params=flag)
        assert aug.step == 0  # refused before the call counted
        assert isinstance(aug(_images(2), return_params=np.True_), tuple)

    def test_an_index_of_a_wrong_type_names_the_types_taken(self) -> None:
        aug = BatchAugment(K.RandomHorizontalFlip(), seed=0)
        taken = "an integer, a sequence of integers or a 1-D integer numpy array or tensor"
        with pytest.raises(TypeError, match=rf"index must be {taken} \(one per sample\), got 1.5"):
            aug(_images(2), index=1.5, epoch=0)
        with pytest.raises(TypeError, match="index must be an integer array, got dtype float64"):
            aug(_images(2), index=np.zeros(2), epoch=0)

    @pytest.mark.parametrize("channels", [1, 3, 4])
    def test_a_channels_last_batch_is_refused(self, channels: int) -> None:
        # a float (B, H, W, C) batch ran without error, kornia reading H as the channels
        aug = BatchAugment(K.RandomHorizontalFlip(p=1.0), seed=0)
        with pytest.raises(
            ValueError,
            match=rf"got shape \(2, 16, 16, {channels}\), which looks like \(B, H, W, C\): "
            r"collate with channels_first=True",
        ):
            aug(torch.zeros(2, 16, 16, channels), index=[0, 1], epoch=0)

    @pytest.mark.parametrize("shape", [(2, 3, 3, 4), (2, 4, 16, 3), (2, 1, 8, 1), (2, 6, 8, 8)])
    def test_small_or_many_channel_first_batches_are_taken(self, shape: tuple[int, ...]) -> None:
        images = torch.rand(shape, generator=torch.Generator().manual_seed(0))
        out = BatchAugment(K.RandomHorizontalFlip(p=1.0), seed=0)(images, index=[0, 1], epoch=0)
        assert torch.equal(out, images.flip(-1))

    def test_bad_arguments(self) -> None:
        aug = BatchAugment(K.RandomAffine(10.0), seed=0)
        with pytest.raises(TypeError, match="transform must be a kornia"):
            BatchAugment(lambda x: x, seed=0)
        with pytest.raises(ValueError, match="seed"):
            BatchAugment(K.RandomAffine(10.0), seed=-1)
        with pytest.raises(TypeError, match=r"stream must be a name \(a string\) or an integer"):
            BatchAugment(K.RandomAffine(10.0), seed=0, stream=1.5)
        with pytest.raises(ValueError, match=r"stream must be .* got 4294967296"):
            BatchAugment(K.RandomAffine(10.0), seed=0, stream=2**32)
        with pytest.raises(ValueError, match=r"index must have one value per sample \(2\), got 3"):
            aug(_images(2), index=[0, 1, 2], epoch=0)
        with pytest.raises(ValueError, match=r"images must be a \(B, C, H, W\) tensor, got shape"):
            aug(torch.zeros(3, 8, 8), index=[0], epoch=0)
        with pytest.raises(TypeError, match="index must be an integer tensor"):
            aug(_images(2), index=torch.zeros(2), epoch=0)
