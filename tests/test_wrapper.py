from __future__ import annotations

import copy
import inspect
import pickle
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from unittest import mock

import albumentations as A
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from torch.utils.data import ConcatDataset, DataLoader, Dataset, Subset, get_worker_info

from rankaug import EpochIndex, EpochSampler, RandomAugmentWrapper, RankaugWarning, SampleError
from rankaug.datasets import SyntheticDetection
from tests.albu import bbox_params
from tests.forked import in_a_forked_child
from tests.threads import Meeting, meeting_pipeline


def _assign_in_a_rank(wrapped: RandomAugmentWrapper[Any], queue: Any) -> None:
    try:
        wrapped.transform = A.VerticalFlip(p=1)
        queue.put(wrapped[0]["image"].tolist())
    except Exception as error:  # put back to the test, which shows it
        queue.put(repr(error))


def image(h: int = 24, w: int = 32, c: int = 3) -> np.ndarray:
    ramp = np.arange(h * w * c, dtype=np.int64).reshape(h, w, c)
    return (ramp * 7 % 251).astype(np.uint8)


class Dicts(Dataset[dict[str, Any]]):
    def __init__(self, n: int = 8) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {
            "image": image(),
            "bboxes": np.array([[2.0, 3.0, 12.0, 15.0], [20.0, 1.0, 30.0, 9.0]], np.float32),
            "labels": np.array([1, 4], np.int64),
            "path": f"img{index}.png",
        }


class Indexed(Dataset[dict[str, Any]]):
    """Images that differ by index."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"image": (image() + index).astype(np.uint8)}


def noise(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    out = dict(sample)
    out["image"] = rng.integers(0, 256, sample["image"].shape, dtype=np.uint8)
    return out


def photometric() -> A.Compose:
    return A.Compose(
        [A.Affine(rotate=(-30, 30), p=1), A.RandomBrightnessContrast(p=1)],
        bbox_params=bbox_params("pascal_voc", ["labels"]),
    )


def fingerprint(sample: Any) -> bytes:
    img = sample["image"] if isinstance(sample, dict) else sample[0]
    if isinstance(img, torch.Tensor):
        img = img.numpy()
    return np.asarray(img).tobytes()


class WorkerTagged(Dataset[tuple[int, int, bytes]]):
    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> tuple[int, int, bytes]:
        info = get_worker_info()
        return index, -1 if info is None else info.id, fingerprint(self.dataset[index])


def load_all(dataset: Any, **loader_kwargs: Any) -> list[tuple[int, int, bytes]]:
    loader = DataLoader(WorkerTagged(dataset), batch_size=None, **loader_kwargs)
    return [(int(i), int(w), f) for i, w, f in loader]


class Stepwise(RandomAugmentWrapper[Any]):
    """Overrides a step, so its items go through every step (not the fused common case)."""

    augmented = 0

    def augment(self, context: Any, keyed: Any) -> Any:
        Stepwise.augmented += 1
        return super().augment(context, keyed)


def arrays(n: int) -> list[dict[str, np.ndarray]]:
    """Dict samples of numpy arrays alone, which differ by index."""
    boxes = np.array([[2.0, 3.0, 12.0, 15.0], [18.0, 1.0, 26.0, 9.0]], np.float32)
    return [
        {"image": (image() + i).astype(np.uint8), "bboxes": boxes + i, "labels": np.array([1, i])}
        for i in range(n)
    ]


def same_items(a: Any, b: Any) -> bool:
    """Whether two samples have the same keys, in order, and equal values of one dtype."""
    return list(a) == list(b) and all(
        type(a[k]) is type(b[k]) and np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype
        for k in a
    )


class TestRandomAugmentWrapper:
    # ---------------------------------------------------------------- keys
    def test_same_configuration_repeats_bit_for_bit(self) -> None:
        a = RandomAugmentWrapper(Dicts(), photometric(), seed=3)
        b = RandomAugmentWrapper(Dicts(), photometric(), seed=3)
        assert [fingerprint(a[i]) for i in range(8)] == [fingerprint(b[i]) for i in range(8)]

    def test_seeds_ranks_and_epochs_change_the_draws(self) -> None:
        def draws(**kwargs: Any) -> list[bytes]:
            epoch = kwargs.pop("epoch", 0)
            wrapped = RandomAugmentWrapper(Dicts(), noise, **kwargs)
            wrapped.set_epoch(epoch)
            return [fingerprint(wrapped[i]) for i in range(4)]

        variants = [
            draws(seed=0), draws(seed=1), draws(seed=0, rank=1), draws(seed=0, epoch=1),
            draws(seed=0, keying="sample"), draws(seed=0, keying="sample", epoch=1),
        ]  # fmt: skip
        everything = [f for v in variants for f in v]
        assert len(set(everything)) == len(everything)

    def test_stream_continues_across_samples_of_a_worker(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), noise, seed=0)
        first, again = fingerprint(wrapped[0]), fingerprint(wrapped[0])
        assert first != again  # the stream moved on

    def test_sample_keying_depends_only_on_index_and_epoch(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), noise, seed=0, keying="sample")
        forward = [fingerprint(wrapped[i]) for i in range(8)]
        backward = [fingerprint(wrapped[i]) for i in reversed(range(8))][::-1]
        assert forward == backward
        other_rank = RandomAugmentWrapper(Dicts(), noise, seed=0, keying="sample", rank=5)
        assert [fingerprint(other_rank[i]) for i in range(8)] == forward

    def test_sample_rank_keying_separates_ranks(self) -> None:
        r0 = RandomAugmentWrapper(Dicts(), noise, seed=0, keying="sample_rank", rank=0)
        r1 = RandomAugmentWrapper(Dicts(), noise, seed=0, keying="sample_rank", rank=1)
        assert fingerprint(r0[2]) == fingerprint(r0[2])
        assert fingerprint(r0[2]) != fingerprint(r1[2])

    def test_rank_comes_from_the_rank_environment_variable(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        explicit = RandomAugmentWrapper(Dicts(), noise, seed=0, rank=2)
        from_env = RandomAugmentWrapper(Dicts(), noise, seed=0)
        monkeypatch.setenv("RANK", "2")
        assert fingerprint(from_env[0]) == fingerprint(explicit[0])
        monkeypatch.setenv("RANK", "0")
        default = RandomAugmentWrapper(Dicts(), noise, seed=0)
        with pytest.warns(RankaugWarning, match="rank=2 was given, but the RANK environment"):
            other = RandomAugmentWrapper(Dicts(), noise, seed=0, rank=2)
        assert fingerprint(default[0]) != fingerprint(other[0])

    def test_stacked_wrappers_draw_independent_streams(self) -> None:
        seen: list[int] = []

        def record(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
            seen.append(int(rng.integers(2**62)))
            return sample

        inner = RandomAugmentWrapper(Dicts(), record, seed=0)
        outer = RandomAugmentWrapper(inner, record, seed=0)
        outer[0]
        assert len(seen) == 2
        assert seen[0] != seen[1]
        assert inner.stream != outer.stream

    def test_set_epoch_reaches_inner_wrappers_through_subsets_and_concats(self) -> None:
        inner = RandomAugmentWrapper(Dicts(), noise, seed=0)
        other = RandomAugmentWrapper(Dicts(), noise, seed=1)
        outer = RandomAugmentWrapper(
            ConcatDataset([Subset(inner, [0, 1, 2]), other]), noise, seed=0
        )
        outer.set_epoch(7)
        assert (inner.epoch, other.epoch, outer.epoch) == (7, 7, 7)

    @given(seed=st.integers(0, 2**64 - 1), index=st.integers(0, 7), epoch=st.integers(0, 2**32 - 1))
    def test_same_key_gives_the_same_sample(self, seed: int, index: int, epoch: int) -> None:
        a = RandomAugmentWrapper(Dicts(), noise, seed=seed, keying="sample")
        b = RandomAugmentWrapper(Dicts(), noise, seed=seed, keying="sample")
        a.set_epoch(epoch)
        b.set_epoch(epoch)
        assert fingerprint(a[index]) == fingerprint(b[index])

    # ------------------------------------------------------- global state
    def test_never_reads_global_random_state(self) -> None:
        def run() -> list[bytes]:
            wrapped = RandomAugmentWrapper(Dicts(), photometric(), seed=0)
            return [fingerprint(wrapped[i]) for i in range(4)]

        random.seed(1)
        np.random.seed(1)  # noqa: NPY002 - the point of the test
        torch.manual_seed(1)
        first = run()
        random.seed(2)
        np.random.seed(2)  # noqa: NPY002
        torch.manual_seed(2)
        assert run() == first

    @pytest.mark.parametrize("keying", ["stream", "sample"])
    def test_leaves_global_random_state_unchanged(self, keying: str) -> None:
        def torch_noise(sample: dict[str, Any]) -> dict[str, Any]:
            return {**sample, "image": sample["image"] + int(torch.randint(0, 5, ()))}

        before = (random.getstate(), np.random.get_state(), torch.get_rng_state())  # noqa: NPY002
        for transform in (photometric(), noise, torch_noise):
            wrapped = RandomAugmentWrapper(Dicts(), transform, seed=0, keying=keying)  # type: ignore[arg-type]
            for i in range(4):
                wrapped[i]
        after = (random.getstate(), np.random.get_state(), torch.get_rng_state())  # noqa: NPY002
        assert after[0] == before[0]
        assert all(np.array_equal(a, b) for a, b in zip(after[1][1:], before[1][1:], strict=True))
        assert torch.equal(after[2], before[2])

    def test_torch_global_transform_is_keyed(self) -> None:
        def torch_noise(sample: dict[str, Any]) -> dict[str, Any]:
            return {**sample, "image": torch.randint(0, 256, (4,)).numpy()}

        a = RandomAugmentWrapper(Dicts(), torch_noise, seed=0, keying="sample")
        torch.manual_seed(123)
        first = fingerprint(a[1])
        torch.manual_seed(456)
        assert fingerprint(a[1]) == first
        assert fingerprint(a[2]) != first

    def test_albumentations_transform_is_copied_not_mutated(self) -> None:
        compose = photometric()
        own = compose.random_generator
        RandomAugmentWrapper(Dicts(), compose, seed=0)[0]
        assert compose.random_generator is own

    def test_compose_seed_is_superseded_by_the_key(self) -> None:
        def wrapped(compose_seed: int) -> RandomAugmentWrapper[Any]:
            compose = A.Compose(
                [A.Affine(rotate=(-30, 30), p=1)],
                bbox_params=bbox_params("pascal_voc", ["labels"]),
                seed=compose_seed,
            )
            return RandomAugmentWrapper(Dicts(), compose, seed=0)

        assert fingerprint(wrapped(1)[0]) == fingerprint(wrapped(2)[0])

    def test_pixel_level_pipeline_without_bbox_params_leaves_boxes_untouched(self) -> None:
        out = RandomAugmentWrapper(Dicts(), A.Compose([A.RandomBrightnessContrast(p=1)]), seed=0)[1]
        np.testing.assert_array_equal(out["bboxes"], Dicts()[1]["bboxes"])
        np.testing.assert_array_equal(out["labels"], [1, 4])
        assert not np.array_equal(out["image"], image())

    @pytest.mark.parametrize(
        "transform", [A.Compose([A.Affine(rotate=(-30, 30), p=1)]), A.HorizontalFlip(p=1)]
    )
    def test_geometric_pipeline_without_bbox_params_refuses_boxes(self, transform: Any) -> None:
        # albumentations 2.0.8 would silently return no boxes at all here
        message = "has 'bboxes' but the albumentations transform has no bbox_params"
        with pytest.raises(SampleError, match=message):
            RandomAugmentWrapper(Dicts(), transform, seed=0)[0]

    # ------------------------------------------------------- sample shapes
    def test_dict_sample_keeps_boxes_labels_and_extra_keys(self) -> None:
        flip = A.Compose(
            [A.HorizontalFlip(p=1)],
            bbox_params=bbox_params("pascal_voc", ["labels"]),
            strict=True,
        )
        out = RandomAugmentWrapper(Dicts(), flip, seed=0)[3]
        assert set(out) == {"image", "bboxes", "labels", "path"}
        assert out["path"] == "img3.png"
        assert out["bboxes"].dtype == np.float32
        assert out["labels"].dtype == np.int64
        np.testing.assert_allclose(out["bboxes"], [[20, 3, 30, 15], [2, 1, 12, 9]], atol=1e-4)
        np.testing.assert_array_equal(out["image"], image()[:, ::-1])

    def test_dropped_boxes_drop_their_labels(self) -> None:
        crop = A.Compose(
            [A.Crop(0, 0, 16, 24, p=1)],
            bbox_params=bbox_params("pascal_voc", ["labels"]),
        )
        out = RandomAugmentWrapper(Dicts(), crop, seed=0)[0]
        assert out["bboxes"].shape == (1, 4)
        assert out["labels"].tolist() == [1]

    def test_tuple_with_torchvision_target_and_tensor_image(self) -> None:
        class TV(Dataset[tuple[torch.Tensor, dict[str, torch.Tensor]]]):
            def __len__(self) -> int:
                return 2

            def __getitem__(self, i: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
                img = torch.from_numpy(image()).permute(2, 0, 1).contiguous()
                return img, {"boxes": torch.tensor([[2.0, 3.0, 12.0, 15.0]]),
                             "labels": torch.tensor([7]), "image_id": torch.tensor(i)}  # fmt: skip

        flip = A.Compose(
            [A.HorizontalFlip(p=1)],
            bbox_params=bbox_params("pascal_voc", ["labels"]),
        )
        out = RandomAugmentWrapper(TV(), flip, seed=0)[1]
        assert isinstance(out, tuple)
        assert isinstance(out[0], torch.Tensor)
        img, target = out
        assert img.shape == (3, 24, 32)
        assert img.dtype == torch.uint8
        assert torch.equal(img, torch.from_numpy(image()[:, ::-1].copy()).permute(2, 0, 1))
        assert set(target) == {"boxes", "labels", "image_id"}
        assert target["boxes"].dtype == torch.float32
        assert target["labels"].dtype == torch.int64
        assert target["boxes"].shape == (1, 4)  # and to assert_close's float32 tolerances:
        flipped = torch.tensor([[20.0, 3.0, 30.0, 15.0]])  # (no torch.distributed.tensor import)
        assert torch.allclose(target["boxes"], flipped, rtol=1.3e-6, atol=1e-5)
        assert int(target["image_id"]) == 1

    @pytest.mark.parametrize(
        ("crop", "kept"), [((0, 0, 16, 24), 1), ((0, 16, 6, 24), 0)], ids=["some", "none"]
    )
    def test_integer_tensor_targets_stay_integer(
        self, crop: tuple[int, int, int, int], kept: int
    ) -> None:
        # the labels came back float64 when every box was dropped, the integer boxes
        # always (issue 9, item 1)
        def sample(i: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
            return torch.from_numpy(image()).permute(2, 0, 1).contiguous(), {
                "boxes": torch.tensor([[2, 3, 12, 15], [20, 1, 30, 9]], dtype=torch.int32),
                "labels": torch.tensor([7, 8]),
            }

        pipeline = A.Compose([A.Crop(*crop, p=1)], bbox_params=bbox_params("pascal_voc"))
        _, target = RandomAugmentWrapper([sample(0)], pipeline, seed=0)[0]
        assert target["boxes"].dtype == torch.int32
        assert target["labels"].dtype == torch.int64
        assert tuple(target["boxes"].shape) == (kept, 4)
        assert len(target["labels"]) == kept

    def test_the_class_of_a_transform_is_refused(self) -> None:
        with pytest.raises(TypeError, match=r"got the class .*Compose; call it to make one"):
            RandomAugmentWrapper(Dicts(), A.Compose, seed=0)

    def test_tuple_with_pil_image_and_class_label(self) -> None:
        pil = [(Image.fromarray(image()), 3), (Image.fromarray(image()[:, :, 0]), 5)]
        out = RandomAugmentWrapper(pil, A.HorizontalFlip(p=1), seed=0)
        rgb, gray = out[0], out[1]
        assert isinstance(rgb[0], Image.Image)
        assert rgb[0].mode == "RGB"
        assert rgb[1] == 3
        assert isinstance(gray[0], Image.Image)
        assert gray[0].mode == "L"
        assert gray[1] == 5
        np.testing.assert_array_equal(np.asarray(rgb[0]), image()[:, ::-1])

    def test_list_sample_stays_a_list(self) -> None:
        out = RandomAugmentWrapper([[image(), 1]], A.HorizontalFlip(p=1), seed=0)[0]
        assert isinstance(out, list)
        assert out[1] == 1

    def test_custom_adapter_handles_another_shape(self) -> None:
        class Pair:
            def __init__(self, pixels: np.ndarray, name: str) -> None:
                self.pixels, self.name = pixels, name

        class PairAdapter:
            def unpack(self, sample: Pair, targets: Any) -> tuple[dict[str, Any], str]:
                return {"image": sample.pixels}, sample.name

            def repack(self, data: dict[str, Any], state: str) -> Pair:
                return Pair(data["image"], state)

        out = RandomAugmentWrapper(
            [Pair(image(), "a")], A.HorizontalFlip(p=1), seed=0, adapter=PairAdapter()
        )[0]
        assert out.name == "a"
        np.testing.assert_array_equal(out.pixels, image()[:, ::-1])

    def test_a_transform_or_adapter_set_afterwards_is_used(self) -> None:
        wrapped = RandomAugmentWrapper([{"image": image()}], A.HorizontalFlip(p=1), seed=0)
        validation = A.VerticalFlip(p=1)
        wrapped.transform = validation  # the private copy of the old one went out of use
        assert wrapped.transform is validation
        np.testing.assert_array_equal(wrapped[0]["image"], image()[::-1])

        class Named:
            def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], Any]:
                return {"image": sample["image"]}, None

            def repack(self, data: Any, state: Any) -> dict[str, Any]:
                return {**data, "adapted": True}

        wrapped.adapter = Named()
        assert wrapped[0]["adapted"] is True
        wrapped.adapter = None  # the default again
        assert set(wrapped[0]) == {"image"}

    def test_a_transform_set_after_persistent_workers_started_is_refused_there(self) -> None:
        # before: the main process used the new transform, the persistent workers the old
        # one they had been given, without a word
        wrapped = RandomAugmentWrapper([{"image": image()}] * 4, A.HorizontalFlip(p=1), seed=0)
        flipped, upside_down = image()[:, ::-1].copy(), image()[::-1].copy()

        def outputs(loader: DataLoader[Any]) -> list[np.ndarray]:
            return [out["image"].numpy() for out in loader]

        fresh = DataLoader(wrapped, batch_size=None, num_workers=2)
        assert all(np.array_equal(out, flipped) for out in outputs(fresh))
        wrapped.transform = A.VerticalFlip(p=1)
        # new workers each pass: they get it
        assert all(np.array_equal(out, upside_down) for out in outputs(fresh))
        wrapped.transform = A.HorizontalFlip(p=1)
        kept = DataLoader(wrapped, batch_size=None, num_workers=2, persistent_workers=True)
        assert all(np.array_equal(out, flipped) for out in outputs(kept))
        wrapped.transform = A.VerticalFlip(p=1)
        with pytest.raises(RuntimeError, match="assigned after this DataLoader worker"):
            outputs(kept)
        wrapped.transform = A.HorizontalFlip(p=1)
        np.testing.assert_array_equal(wrapped[0]["image"], image()[:, ::-1])  # here: in use

    def test_a_shallow_copys_transform_leaves_the_originals_workers_going(self) -> None:
        # before: the copy shared the original's count of assignments, so assigning the
        # copy's transform refused the original's persistent workers as stale
        wrapped = RandomAugmentWrapper([{"image": image()}] * 4, A.HorizontalFlip(p=1), seed=0)
        loader = DataLoader(wrapped, batch_size=None, num_workers=2, persistent_workers=True)
        flipped = torch.from_numpy(image()[:, ::-1].copy())
        assert all(torch.equal(out["image"], flipped) for out in loader)
        validation = copy.copy(wrapped)
        validation.transform = A.VerticalFlip(p=1)
        assert all(torch.equal(out["image"], flipped) for out in loader)  # still going
        np.testing.assert_array_equal(validation[0]["image"], image()[::-1])
        np.testing.assert_array_equal(wrapped[0]["image"], image()[:, ::-1])
        validation_loader = DataLoader(validation, batch_size=None, num_workers=2,
                                       persistent_workers=True)  # fmt: skip
        assert len(list(validation_loader)) == 4
        validation.transform = A.HorizontalFlip(p=1)  # its own workers are refused
        with pytest.raises(RuntimeError, match="assigned after this DataLoader worker"):
            list(validation_loader)

    def test_a_subclass_may_set_its_settings_before_the_constructor(self) -> None:
        # before: the transform's setter read an adapter not set yet (AttributeError), and
        # the constructor's own dataset and seed were refused as assignments afterwards
        class Flipped(RandomAugmentWrapper[Any]):
            def __init__(self, dataset: Any) -> None:
                self.dataset, self.seed = dataset, np.int64(3)  # type: ignore[assignment]
                self.adapter, self.transform = None, A.HorizontalFlip(p=1)
                super().__init__(dataset, self.transform, seed=3)

        data = [{"image": image()}] * 2
        flipped = Flipped(data)
        assert (flipped.dataset, flipped.seed, type(flipped.seed)) == (data, 3, int)
        np.testing.assert_array_equal(flipped[0]["image"], image()[:, ::-1])

    def test_a_rank_forked_after_it_was_made_assigns_its_own_transform(self) -> None:
        # before: the rank's own wrapper[i] was refused as a stale DataLoader worker's
        wrapped = RandomAugmentWrapper(
            [{"image": image()}] * 2, A.HorizontalFlip(p=1), seed=0, keying="sample"
        )
        assert in_a_forked_child(_assign_in_a_rank, wrapped) == image()[::-1].tolist()
        np.testing.assert_array_equal(wrapped[0]["image"], image()[:, ::-1])  # the parent's

    def test_len_and_negative_indices_pass_through(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(5), noise, seed=0, keying="sample")
        assert len(wrapped) == 5
        assert fingerprint(wrapped[-1]) == fingerprint(wrapped[4])
        assert fingerprint(wrapped[np.int64(2)]) == fingerprint(wrapped[2])  # type: ignore[index]

    # ------------------------------------------------- the fused common case
    def test_the_common_case_gives_what_the_steps_give(self) -> None:
        fused = RandomAugmentWrapper(arrays(6), photometric(), seed=0, stream="s")
        steps = Stepwise(arrays(6), photometric(), seed=0, stream="s")
        assert fused._fused
        indices: list[Any] = [0, 3, EpochIndex(2, epoch=1), np.int64(4), -1, 5, 1]
        Stepwise.augmented = 0
        for turn in range(2):
            for index in indices:
                assert same_items(fused[index], steps[index]), (turn, index)
            fused.set_epoch(3)
            steps.set_epoch(3)
        assert Stepwise.augmented == 2 * len(indices)

    def test_the_common_case_hands_its_epoch_to_the_wrappers_inside(self) -> None:
        inner = [RandomAugmentWrapper(arrays(4), photometric(), seed=1, stream="i") for _ in "ab"]
        fused = RandomAugmentWrapper(inner[0], noise, seed=0, stream="o")
        steps = Stepwise(inner[1], noise, seed=0, stream="o")
        for index in [1, EpochIndex(1, epoch=5), EpochIndex(2, epoch=5), 3]:
            assert same_items(fused[index], steps[index]), index
        assert [w._streams.last[-1] for w in inner] == [0, 0]  # type: ignore[index]

    @pytest.mark.parametrize("fails", ["dataset", "transform"])
    def test_the_common_case_fails_as_the_steps_do(self, fails: str) -> None:
        class Broken(Dataset[Any]):
            def __len__(self) -> int:
                return 4

            def __getitem__(self, index: int) -> Any:
                if fails == "dataset":
                    raise KeyError(f"missing file {index}")
                return {"image": "not an image"}

        errors = []
        for kind in (RandomAugmentWrapper, Stepwise):
            wrapped = kind(Broken(), photometric(), seed=0, rank=3, stream="s")
            wrapped.set_epoch(2)
            with pytest.raises(SampleError) as info:
                wrapped[EpochIndex(1, epoch=6)]
            err = info.value
            errors.append((str(err), err.stage, err.index, err.epoch, type(err.__cause__)))
        assert errors[0] == errors[1]
        assert errors[0][2:4] == (1, 6)

    def test_a_subclass_that_overrides_a_step_goes_through_it(self) -> None:
        class Loads(RandomAugmentWrapper[Any]):
            def load(self, index: int, context: Any) -> Any:
                return {"image": np.zeros((4, 4, 3), np.uint8)}

        assert RandomAugmentWrapper(arrays(2), noise, seed=0)._fused
        assert not RandomAugmentWrapper(arrays(2), noise, seed=0, keying="sample")._fused
        out = Loads(arrays(2), A.HorizontalFlip(p=1), seed=0)[1]
        assert out["image"].shape == (4, 4, 3)

    def test_a_step_of_the_instance_s_own_is_used(self) -> None:
        white = {"image": np.full((4, 4, 3), 255, np.uint8)}
        wrapped = RandomAugmentWrapper(arrays(2), noise, seed=0)
        wrapped[0]
        # before: the common case went on with the class's load, the instance's unseen
        wrapped.load = lambda index, context: white  # type: ignore[method-assign]
        assert wrapped[1]["image"].shape == (4, 4, 3)
        del wrapped.load
        assert wrapped[1]["image"].shape == (24, 32, 3)

    def test_a_step_set_before_the_constructor_is_used(self) -> None:
        class Early(RandomAugmentWrapper[Any]):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self.load = lambda index, context: {"image": np.zeros((4, 4), np.uint8)}  # type: ignore[method-assign]
                super().__init__(*args, **kwargs)

        assert Early(arrays(2), noise, seed=0)[1]["image"].shape == (4, 4)

    @pytest.mark.parametrize("step", ["context", "key_random", "augment", "load"])
    def test_a_step_patched_on_the_class_is_used(self, step: str) -> None:
        wrapped = RandomAugmentWrapper(arrays(2), noise, seed=0)
        wrapped[0]
        original = getattr(RandomAugmentWrapper, step)
        calls = []

        def spy(self: Any, *args: Any) -> Any:
            calls.append(args)
            return original(self, *args)

        # before: the common case went on without the patched step (mock.patch.object)
        with mock.patch.object(RandomAugmentWrapper, step, spy):
            out = wrapped[1]
        assert len(calls) == 1
        reference = RandomAugmentWrapper(arrays(2), noise, seed=0)
        reference[0]
        assert same_items(out, reference[1])  # the same draws, through the steps

    def test_the_lost_epoch_warning_names_the_line_that_indexed(self) -> None:
        wrapped = RandomAugmentWrapper(arrays(4), noise, seed=0)
        loader = DataLoader(wrapped, sampler=EpochSampler(range(4), epoch=3), collate_fn=list)
        for _ in loader:  # a pass of epoch 3 runs; a plain index outside its fetches:
            line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
            with pytest.warns(RankaugWarning, match="carries no epoch") as record:
                wrapped[1]
            break
        # before: the common case named the line that called this test, one frame out
        assert (record[0].filename, record[0].lineno) == (__file__, line)

    def test_workers_forked_after_the_main_process_loaded_find_their_own_id(self) -> None:
        used = RandomAugmentWrapper(Dicts(), photometric(), seed=0)
        used[0]  # the main process's worker info, kept with its pid
        fresh = RandomAugmentWrapper(Dicts(), photometric(), seed=0)
        assert load_all(used, num_workers=2) == load_all(fresh, num_workers=2)
        assert pickle.loads(pickle.dumps(used))._worker is None

    # ----------------------------------------------------------- DataLoader
    def test_zero_and_one_worker_draw_the_same_stream(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), photometric(), seed=0)
        zero = [f for _, _, f in load_all(wrapped, num_workers=0)]
        one = [f for _, _, f in load_all(wrapped, num_workers=1)]
        assert zero == one

    def test_workers_draw_different_streams(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), photometric(), seed=0)
        outputs = load_all(wrapped, num_workers=2)
        assert {w for _, w, _ in outputs} == {0, 1}
        assert len({f for _, _, f in outputs}) == len(outputs)

    def test_parent_stream_is_not_inherited_by_forked_workers(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), photometric(), seed=0)
        fresh = load_all(wrapped, num_workers=1, multiprocessing_context="fork")
        wrapped[0]  # the main process starts and advances the (rank 0, worker 0) stream
        after = load_all(wrapped, num_workers=1, multiprocessing_context="fork")
        assert after == fresh

    # Spawned persistent workers: tests/ddp/test_ddp_wrapper.py (stream/spawn/True).
    @pytest.mark.parametrize("context", ["fork"])
    def test_set_epoch_reaches_persistent_workers(self, context: str) -> None:
        wrapped = RandomAugmentWrapper(Dicts(4), noise, seed=0, keying="sample")
        loader = DataLoader(
            WorkerTagged(wrapped),
            batch_size=None,
            num_workers=2,
            persistent_workers=True,
            multiprocessing_context=context,
        )
        for epoch in (0, 3):
            wrapped.set_epoch(epoch)
            expected = [fingerprint(wrapped[i]) for i in range(4)]
            assert [f for _, _, f in loader] == expected

    # -------------------------------------------------------------- errors
    def test_bad_arguments_are_named(self) -> None:
        with pytest.raises(
            TypeError, match=r"dataset must be a map-style dataset .* got 3 of type int"
        ):
            RandomAugmentWrapper(3, noise, seed=0)
        with pytest.raises(TypeError, match=r"transform must be .* got 'flip' of type str"):
            RandomAugmentWrapper(Dicts(), "flip", seed=0)
        with pytest.raises(TypeError, match=r"seed must be an integer in \[0, 2\*\*64\), got 1.5"):
            RandomAugmentWrapper(Dicts(), noise, seed=1.5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64\), got -1"):
            RandomAugmentWrapper(Dicts(), noise, seed=-1)
        with pytest.raises(ValueError, match=r"keying must be one of .* got 'index'"):
            RandomAugmentWrapper(Dicts(), noise, seed=0, keying="index")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"rank must be an integer .* got -2"):
            RandomAugmentWrapper(Dicts(), noise, seed=0, rank=-2)
        with pytest.raises(TypeError, match="adapter must have unpack"):
            RandomAugmentWrapper(Dicts(), noise, seed=0, adapter=object())  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"sample_id='id' is for streams"):
            RandomAugmentWrapper(Dicts(), noise, seed=0, sample_id="id")
        with pytest.raises(TypeError, match=r"sample_id must be None here .* got True of type"):
            RandomAugmentWrapper(Dicts(), noise, seed=0, sample_id=True)  # type: ignore[arg-type]

    def test_a_pipeline_box_format_other_than_the_datasets_is_refused(self) -> None:
        # VOC corners read as COCO x, y, w, h flip to wrong boxes without any error
        data = SyntheticDetection(2, image_size=(48, 64), max_objects=1)
        coco = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("coco"))
        said = r"A.BboxParams format is 'coco', but the dataset \(\w+\) gives"
        for inside in (data, Subset(data, [1]), ConcatDataset([data, data])):
            with pytest.raises(ValueError, match=rf"{said} 'pascal_voc' .*format='pascal_voc'"):
                RandomAugmentWrapper(inside, coco, seed=0)
        voc = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        wrapped = RandomAugmentWrapper(data, voc, seed=0)
        x_min, y_min, x_max, y_max = data[0]["bboxes"][0]
        flipped = [64 - x_max, y_min, 64 - x_min, y_max]
        np.testing.assert_allclose(wrapped[0]["bboxes"][0], flipped, atol=1e-4)
        with pytest.raises(ValueError, match=said):  # assigned later: refused alike
            wrapped.transform = coco
        assert wrapped.transform is voc  # the one in use stays
        np.testing.assert_allclose(wrapped[0]["bboxes"][0], flipped, atol=1e-4)

    def test_datasets_of_different_box_formats_without_bbox_params(self) -> None:
        # a pipeline that reads no boxes (or a callable) was refused over them: no format read
        voc = SyntheticDetection(2, image_size=(48, 64), max_objects=1)
        yolo = SyntheticDetection(2, image_size=(48, 64), max_objects=1, box_format="yolo")
        both = ConcatDataset([voc, yolo])
        colour = A.Compose([A.InvertImg(p=1)])
        for transform in (colour, noise):
            wrapped = RandomAugmentWrapper(both, transform, seed=0)
            np.testing.assert_array_equal(wrapped[2]["bboxes"], yolo[0]["bboxes"])
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        with pytest.raises(ValueError, match=r"different formats \['pascal_voc', 'yolo'\]"):
            RandomAugmentWrapper(both, flip, seed=0)  # one BboxParams format for both: refused

    def test_bad_epochs_are_named(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), noise, seed=0)
        with pytest.raises(ValueError, match=r"epoch must be an integer .* got -1"):
            wrapped.set_epoch(-1)
        with pytest.raises(TypeError, match=r"epoch must be an integer .* got 1.0"):
            wrapped.set_epoch(1.0)  # type: ignore[arg-type]
        assert wrapped.epoch == 0

    def test_bad_indices(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(3), noise, seed=0)
        with pytest.raises(IndexError, match="index 3 is out of range for a dataset of length 3"):
            wrapped[3]
        with pytest.raises(TypeError, match="index must be an integer, got '1'"):
            wrapped["1"]  # type: ignore[index]
        with pytest.raises(TypeError, match="index must be an integer, got True"):
            wrapped[True]

    def test_iteration_protocol_stops_at_the_end(self) -> None:
        assert len(list(iter(RandomAugmentWrapper(Dicts(3), noise, seed=0)))) == 3  # type: ignore[call-overload]

    def test_unhandled_sample_shape_is_reported_with_its_index(self) -> None:
        wrapped = RandomAugmentWrapper([1, 2, 3], A.HorizontalFlip(p=1), seed=0, rank=1)
        wrapped.set_epoch(4)
        with pytest.raises(SampleError) as info:
            wrapped[2]
        message = str(info.value)
        assert "index 2 (rank 1, worker 0, epoch 4)" in message
        assert "cannot handle a sample of type int" in message
        assert isinstance(info.value.__cause__, TypeError)

    def test_dataset_failure_carries_index_rank_worker_epoch(self) -> None:
        class Broken(Dicts):
            def __getitem__(self, index: int) -> dict[str, Any]:
                raise KeyError(f"missing file {index}")

        wrapped = RandomAugmentWrapper(Broken(), noise, seed=0, rank=3)
        wrapped.set_epoch(2)
        with pytest.raises(SampleError) as info:
            wrapped[5]
        err = info.value
        assert (err.index, err.rank, err.worker_id, err.epoch) == (5, 3, 0, 2)
        assert err.stage == "dataset[5]"
        assert isinstance(err.__cause__, KeyError)
        assert "dataset[5] failed at index 5 (rank 3, worker 0, epoch 2)" in str(err)
        assert "missing file 5" in str(err)

    def test_transform_failure_inside_a_worker_names_the_worker(self) -> None:
        def explode(sample: Any, rng: np.random.Generator) -> Any:
            if get_worker_info() is not None and get_worker_info().id == 1:  # type: ignore[union-attr]
                raise ValueError("bad augmentation")
            return sample

        wrapped = RandomAugmentWrapper(Dicts(4), explode, seed=0, rank=0)
        expected = r"transform failed at index 1 \(rank 0, worker 1, epoch 0\): ValueError: bad"
        with pytest.raises(SampleError, match=expected):
            list(DataLoader(wrapped, batch_size=None, num_workers=2))

    def test_nested_failures_are_not_wrapped_twice(self) -> None:
        class Broken(Dicts):
            def __getitem__(self, index: int) -> dict[str, Any]:
                raise OSError("disk")

        outer = RandomAugmentWrapper(RandomAugmentWrapper(Broken(), noise, seed=0), noise, seed=0)
        with pytest.raises(SampleError) as info:
            outer[1]
        assert isinstance(info.value.__cause__, OSError)

    def test_pickles_for_spawned_workers(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), photometric(), seed=5, keying="sample")
        wrapped.set_epoch(2)
        clone = pickle.loads(pickle.dumps(wrapped))
        assert clone.epoch == 2
        assert fingerprint(clone[1]) == fingerprint(wrapped[1])
        clone.set_epoch(3)  # a plain pickle makes an independent counter
        assert wrapped.epoch == 2

    # ------------------------------------------------------------- threads
    def test_threads_at_once_get_each_keys_own_albumentations_draws(self) -> None:
        meeting = Meeting()  # every thread hands its state over before any draws
        wrapped = RandomAugmentWrapper(Indexed(32), meeting_pipeline(meeting), seed=0,
                                       keying="sample")  # fmt: skip
        alone = [fingerprint(wrapped[i]) for i in range(32)]
        assert meeting.run(lambda i: fingerprint(wrapped[i]), range(32)) == alone

    def test_threads_at_once_get_each_keys_own_torch_draws(self) -> None:
        def torch_noise(sample: dict[str, Any]) -> dict[str, Any]:
            first = torch.randint(0, 256, (4,))
            time.sleep(0.002)  # another thread runs here
            return {**sample, "image": torch.cat([first, torch.randint(0, 256, (4,))]).numpy()}

        wrapped = RandomAugmentWrapper(Dicts(32), torch_noise, seed=0, keying="sample")
        alone = [fingerprint(wrapped[i]) for i in range(32)]
        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(lambda i: fingerprint(wrapped[i]), range(32))) == alone

    def test_pickles_after_threads_used_it(self) -> None:
        wrapped = RandomAugmentWrapper(Dicts(), photometric(), seed=5, keying="sample")
        with ThreadPoolExecutor(2) as pool:
            threaded = list(pool.map(lambda i: fingerprint(wrapped[i]), range(8)))
        clone = pickle.loads(pickle.dumps(wrapped))
        assert [fingerprint(clone[i]) for i in range(8)] == threaded
