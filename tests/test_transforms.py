from __future__ import annotations

import functools
import inspect
import random
import re
import types
import warnings
from collections.abc import Callable
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch

from rankaug import (
    HSVJitter,
    MosaicDataset,
    RandomAugmentWrapper,
    RankaugWarning,
    SampleError,
    Targets,
)
from rankaug.keys import KeyedRandom, make_seed_sequence
from rankaug.samples import DefaultAdapter
from rankaug.transforms import (
    AlbumentationsLike,
    ImageTransform,
    albumentations_targets,
    make_driver,
)
from tests.albu import bbox_params, keypoint_params


def _image_sample() -> dict[str, Any]:
    return {"image": np.arange(8 * 8 * 3, dtype=np.uint8).reshape(8, 8, 3)}


def keyed(index: int = 0) -> KeyedRandom:
    return KeyedRandom(make_seed_sequence(0, epoch=0, index=index))


class Module(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.rand(())


class TestMakeDriver:
    def test_albumentations_draws_from_the_key(self) -> None:
        driver = make_driver(
            A.Compose([A.Affine(rotate=(-40, 40), p=1), A.RandomBrightnessContrast(p=1)]),
            DefaultAdapter(),
        )
        ramp = np.arange(16 * 16 * 3, dtype=np.int64).reshape(16, 16, 3)
        sample = {"image": (ramp * 7 % 251).astype(np.uint8)}
        outputs = []
        for index, global_seed in ((0, 1), (0, 2), (1, 1)):
            torch.manual_seed(global_seed)  # global state plays no part
            outputs.append(driver(sample, keyed(index))["image"])
        assert np.array_equal(outputs[0], outputs[1])
        assert not np.array_equal(outputs[0], outputs[2])

    def test_rankaug_image_transforms_draw_from_the_key_and_record(self) -> None:
        jitter = HSVJitter(0.5, 0.5, 0.5)
        driver = make_driver(jitter, DefaultAdapter())
        assert isinstance(jitter, ImageTransform)
        ramp = np.arange(8 * 8 * 3, dtype=np.int64).reshape(8, 8, 3)
        sample = {"image": (ramp * 7 % 251).astype(np.uint8), "path": "a.png"}
        first, again, other = (
            driver(sample, keyed(0)),
            driver(sample, keyed(0)),
            driver(sample, keyed(1)),
        )
        assert sorted(first) == ["hsv", "image", "path"]
        assert first["hsv"] == again["hsv"] != other["hsv"]
        draw = jitter.draw(keyed(0).generator)
        assert first["hsv"] == jitter.record(draw)
        np.testing.assert_array_equal(first["image"], jitter.apply(sample["image"], draw))

    def test_polygons_pass_pixel_pipelines_and_are_refused_by_geometric_ones(self) -> None:
        polygon = np.array([[1.0, 1.0], [5.0, 1.0], [5.0, 5.0]], np.float32)
        sample = {"image": np.full((8, 8, 3), 90, np.uint8), "bboxes": [[1.0, 1.0, 5.0, 5.0]],
                  "labels": [1], "segments": [polygon]}  # fmt: skip
        pixels = make_driver(A.Compose([A.RandomBrightnessContrast(p=1)]), DefaultAdapter())
        out = pixels(sample, keyed())
        assert out["segments"][0] is polygon  # not moved, and not to be
        flip = make_driver(
            A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc")),
            DefaultAdapter(),
        )
        with pytest.raises(ValueError, match=r"instance polygons \('segments'\), which alb"):
            flip(sample, keyed())
        without = {k: v for k, v in sample.items() if k != "segments"}
        assert flip(without, keyed())["bboxes"][0] == pytest.approx([3.0, 1.0, 7.0, 5.0])

    def test_polygons_an_adapter_passes_through_are_asked_of_it_for_every_sample(self) -> None:
        # the plain-dict shortcut is DefaultAdapter's own rule: a subclass's hook is asked,
        # and a mapping that is no dict goes to the hook too
        polygon = np.array([[1.0, 1.0], [5.0, 1.0], [5.0, 5.0]], np.float32)

        class Outlined(DefaultAdapter):
            @staticmethod
            def passthrough(sample: Any, targets: Any) -> Any:
                return {"segments": [polygon]}  # held elsewhere, say

        sample = {"image": np.full((8, 8, 3), 90, np.uint8), "bboxes": [[1.0, 1.0, 5.0, 5.0]],
                  "labels": [1]}  # fmt: skip
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        with pytest.raises(ValueError, match=r"instance polygons \('segments'\), which alb"):
            make_driver(flip, Outlined())(sample, keyed())
        mapping = types.MappingProxyType({**sample, "segments": [polygon]})
        with pytest.raises(ValueError, match=r"instance polygons \('segments'\), which alb"):
            make_driver(flip, DefaultAdapter())(mapping, keyed())
        assert make_driver(flip, DefaultAdapter())(sample, keyed())["bboxes"] == [
            [3.0, 1.0, 7.0, 5.0]
        ]

    def test_rng_callables_get_the_generator(self) -> None:
        k = keyed()
        driver = make_driver(lambda sample, *, rng: rng, DefaultAdapter())
        assert driver("anything", k) is k.generator

    def test_modules_with_rng_in_forward(self) -> None:
        class WithRng(torch.nn.Module):
            def forward(self, x: Any, rng: np.random.Generator) -> Any:
                return rng

        k = keyed()
        assert make_driver(WithRng(), DefaultAdapter())(0, k) is k.generator

    def test_torch_global_callables_run_under_a_keyed_generator(self) -> None:
        driver = make_driver(Module(), DefaultAdapter())
        state = torch.get_rng_state()
        a = driver(torch.zeros(()), keyed(1))
        b = driver(torch.zeros(()), keyed(1))
        c = driver(torch.zeros(()), keyed(2))
        assert torch.equal(a, b)
        assert not torch.equal(a, c)
        assert torch.equal(torch.get_rng_state(), state)

    def test_python_random_callables_are_keyed_and_the_callers_state_restored(self) -> None:
        # torchvision v1's RandomChoice and RandomOrder draw from the random module: it
        # repeated across ranks (each seeds random alike) and was not keyed
        driver = make_driver(lambda sample: [random.random() for _ in range(3)], DefaultAdapter())
        state = random.getstate()
        a = driver(None, keyed(1))
        b = driver(None, keyed(1))
        c = driver(None, keyed(2))
        assert a == b
        assert a != c
        assert random.getstate() == state

    def test_python_random_differs_across_ranks_seeded_alike(self) -> None:
        def pick(sample: int) -> float:
            return sample + random.random()

        state = random.getstate()
        ranks = [
            RandomAugmentWrapper(list(range(4)), pick, seed=0, keying="sample_rank", rank=r)
            for r in (0, 1)
        ]
        first = ranks[0][2]
        random.setstate(state)  # every rank's random module starts alike
        assert ranks[1][2] != first
        assert ranks[0][2] == first
        assert random.getstate() == state

    def test_python_random_is_restored_when_the_transform_raises(self) -> None:
        def boom(sample: Any) -> Any:
            random.random()
            raise RuntimeError("boom")

        state = random.getstate()
        functions = {name: getattr(random, name) for name in ("random", "choice", "shuffle")}
        with pytest.raises(RuntimeError, match="boom"):
            make_driver(boom, DefaultAdapter())(None, keyed())
        assert random.getstate() == state
        assert {name: getattr(random, name) for name in functions} == functions

    def test_python_random_goes_on_across_a_streams_samples(self) -> None:
        def draw(sample: Any) -> list[int]:
            order = list(range(8))
            random.shuffle(order)
            return [random.choice(range(100)), *order]

        driver, state = make_driver(draw, DefaultAdapter()), keyed(3)
        own = random.Random()
        own.setstate(state.py_random.getstate())
        first, second = driver(None, state), driver(None, state)
        expected = []
        for _ in range(2):
            order = list(range(8))
            own.shuffle(order)
            expected.append([own.choice(range(100)), *order])
        assert [first, second] == expected

    def test_torch_state_is_restored_when_the_transform_raises(self) -> None:
        def boom(sample: Any) -> Any:
            torch.rand(3)
            raise RuntimeError("boom")

        state = torch.get_rng_state()
        with pytest.raises(RuntimeError, match="boom"):
            make_driver(boom, DefaultAdapter())(None, keyed())
        assert torch.equal(torch.get_rng_state(), state)

    def test_torch_global_seeds_only_the_cpu_generator(self) -> None:
        # torch.manual_seed also seeds CUDA, MPS and XPU; before CUDA starts (always on a
        # CPU machine) it queues the CUDA seed in torch.cuda._lazy_seed_tracker, which
        # reseeded the training process's GPU generator on every sample (issue 9, item 7)
        trackers = [torch.cuda._lazy_seed_tracker]
        xpu_tracker = getattr(torch.xpu, "_lazy_seed_tracker", None)
        if xpu_tracker is not None:
            trackers.append(xpu_tracker)

        def queued() -> list[tuple[Any, ...]]:
            return [(t.manual_seed_all_cb, t.manual_seed_cb, list(t.call_order)) for t in trackers]

        before = queued()
        seen = []
        driver = make_driver(lambda sample: seen.append(torch.rand(2)), DefaultAdapter())
        driver(None, keyed(3))
        after = queued()
        assert all(a[0] is b[0] and a[1] is b[1] and a[2] == b[2]
                   for a, b in zip(before, after, strict=True))  # fmt: skip
        # the transform still ran under the key's seed
        expected = torch.Generator().manual_seed(keyed(3).torch_seed())
        assert torch.equal(seen[0], torch.rand(2, generator=expected))

    def test_the_callers_cpu_generator_is_restored_exactly(self) -> None:
        generator = torch.default_generator
        generator.manual_seed(1234)
        torch.rand(5)  # somewhere in the middle of a stream
        state, seed = generator.get_state(), generator.initial_seed()
        expected = torch.rand(3)
        generator.set_state(state)
        make_driver(Module(), DefaultAdapter())(torch.zeros(()), keyed(1))
        assert generator.initial_seed() == seed
        assert torch.equal(generator.get_state(), state)
        assert torch.equal(torch.rand(3), expected)

    @pytest.mark.parametrize("cls", [A.Compose, A.HorizontalFlip, Module])
    def test_classes_are_refused(self, cls: type) -> None:
        # A.Compose itself ended in "'property' object is not iterable" (issue 9, item 10)
        with pytest.raises(TypeError, match=rf"got the class .*{cls.__name__}; call it"):
            make_driver(cls, DefaultAdapter())

    def test_builtins_without_signature_are_torch_global(self) -> None:
        assert make_driver(abs, DefaultAdapter())(-3, keyed()) == 3

    def test_non_callables_are_refused(self) -> None:
        with pytest.raises(TypeError, match=r"transform must be .* got 3 of type int"):
            make_driver(3, DefaultAdapter())


class OwnNoise(A.ImageOnlyTransform):  # type: ignore[misc]
    """A custom transform drawing from a Generator it made itself (not the key's)."""

    def __init__(self) -> None:
        super().__init__(p=1.0)
        self.rng = np.random.default_rng(0)

    def get_params_dependent_on_data(self, params: Any, data: Any) -> dict[str, Any]:
        return {"value": int(self.rng.integers(0, 100))}

    def apply(self, img: np.ndarray, value: int, **params: Any) -> np.ndarray:
        return np.full_like(img, value)


class Shaker:
    def __init__(self) -> None:
        self.state = random.Random(0)

    def __call__(self, sample: Any) -> Any:
        return sample

    def shake(self, sample: Any, rng: np.random.Generator) -> Any:
        return sample


class TestOwnRandomState:
    """A transform's own generators escape the key: each worker's copy draws the same."""

    def test_a_custom_albumentations_transform_with_its_own_generator_warns(self) -> None:
        compose = A.Compose([A.HorizontalFlip(), OwnNoise()])
        with pytest.warns(RankaugWarning, match=r"\(OwnNoise.rng at Compose.transforms\[1\]\)"):
            RandomAugmentWrapper([{"image": np.zeros((4, 4, 3), np.uint8)}], compose, seed=0)

    @pytest.mark.parametrize("method", [False, True])
    def test_callables_with_their_own_generator_warn(self, method: bool) -> None:
        shaker = Shaker()
        transform = shaker.shake if method else shaker
        with pytest.warns(RankaugWarning, match=r"^the transform keeps random state of its own "
                                                r"\(Shaker.state\), which the key"):  # fmt: skip
            make_driver(transform, DefaultAdapter())

    def test_albumentations_own_generators_are_handed_the_key_and_pass(self) -> None:
        compose = A.Compose(
            [A.OneOf([A.HorizontalFlip(), A.Blur()]),
             A.SomeOf([A.RandomBrightnessContrast(), A.GaussNoise()], n=1),
             A.Sequential([A.Affine()]), A.ReplayCompose([A.VerticalFlip()])],
            seed=3,
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (pytest's setting too: made plain here)
            driver = make_driver(compose, DefaultAdapter())
        assert driver(_image_sample(), keyed())["image"].shape == (8, 8, 3)


class TestKeypoints:
    @pytest.mark.parametrize("p", [1.0, 0.0])
    def test_non_finite_keypoints_are_refused_not_dropped(self, p: float) -> None:
        # albumentations drops a NaN keypoint silently, flipped or not (it refuses NaN boxes)
        compose = A.Compose([A.HorizontalFlip(p=p)], keypoint_params=keypoint_params("xy"))
        driver = make_driver(compose, DefaultAdapter())
        sample = {"image": np.zeros((8, 8, 3), np.uint8),
                  "keypoints": np.array([[1.0, 1.0], [np.nan, 2.0]], np.float32)}  # fmt: skip
        with pytest.raises(ValueError, match=r"^keypoints\[1\] = \[nan, 2.0\] contains NaN or"):
            driver(sample, keyed())
        sample["keypoints"] = [(1.0, 1.0), (2.0, 3.0)]  # finite, as a list: transformed
        assert len(driver(sample, keyed())["keypoints"]) == 2

    def test_non_finite_additional_keypoints_are_refused_not_dropped(self) -> None:
        compose = A.Compose(
            [A.HorizontalFlip(p=1)],
            keypoint_params=keypoint_params("xy"),
            additional_targets={"hands": "keypoints"},
        )
        driver = make_driver(compose, DefaultAdapter())
        sample = {"image": np.zeros((8, 8, 3), np.uint8),
                  "hands": np.array([[1.0, 1.0], [np.nan, 2.0]], np.float32)}  # fmt: skip
        with pytest.raises(ValueError, match=r"^hands\[1\] = \[nan, 2.0\] contains NaN or"):
            driver(sample, keyed())


class TestAdditionalTargets:
    """Boxes and keypoints under the names ``additional_targets`` gives them."""

    boxes = np.array([[1, 2, 5, 6]], np.float32)

    @pytest.mark.parametrize(("name", "kind", "params"), [
        ("boxes2", "bboxes", "bbox_params"), ("hands", "keypoints", "keypoint_params"),
    ])  # fmt: skip
    def test_a_geometric_pipeline_without_params_refuses_them(
        self, name: str, kind: str, params: str
    ) -> None:
        # albumentations 2.0.8 flips such boxes as if normalised: [[-4, 2, 0, 6]] here
        compose = A.Compose([A.HorizontalFlip(p=1)], additional_targets={name: kind})
        driver = make_driver(compose, DefaultAdapter())
        sample = {"image": np.zeros((8, 8, 3), np.uint8), name: self.boxes[:, :2]}
        message = rf"^the sample has '{name}' \(an additional '{kind}' target\) but .* no {params}"
        with pytest.raises(ValueError, match=message):
            driver(sample, keyed())

    def test_a_single_transform_given_them_by_add_targets_refuses_them(self) -> None:
        flip = A.HorizontalFlip(p=1)
        flip.add_targets({"boxes2": "bboxes"})
        sample = {"image": np.zeros((8, 8, 3), np.uint8), "boxes2": self.boxes}
        with pytest.raises(ValueError, match=r"^the sample has 'boxes2' \(an additional"):
            make_driver(flip, DefaultAdapter())(sample, keyed())

    def test_a_pixel_level_pipeline_without_params_leaves_them_untouched(self) -> None:
        compose = A.Compose([A.RandomBrightnessContrast(p=1)], additional_targets={"b": "bboxes"})
        out = make_driver(compose, DefaultAdapter())(
            {"image": np.zeros((8, 8, 3), np.uint8), "b": self.boxes}, keyed()
        )
        np.testing.assert_array_equal(out["b"], self.boxes)

    def test_with_bbox_params_they_move_like_the_boxes(self) -> None:
        compose = A.Compose(
            [A.HorizontalFlip(p=1)],
            bbox_params=bbox_params("pascal_voc", []),
            additional_targets={"b": "bboxes"},
        )
        sample = {"image": np.zeros((8, 8, 3), np.uint8), "bboxes": self.boxes, "b": self.boxes}
        out = make_driver(compose, DefaultAdapter())(sample, keyed())
        np.testing.assert_allclose(out["b"], [[3, 2, 7, 6]], atol=1e-5)
        np.testing.assert_allclose(out["bboxes"], out["b"])


class TestAlbumentationsTargets:
    def test_label_fields_and_additional_targets(self) -> None:
        compose = A.Compose(
            [A.HorizontalFlip()],
            bbox_params=bbox_params("coco", ["cls", "track"]),
            keypoint_params=keypoint_params("xy"),
            additional_targets={"image2": "image"},
        )
        keys = albumentations_targets(compose)
        assert {"image", "mask", "bboxes", "keypoints", "cls", "track", "image2"} <= keys
        assert isinstance(compose, AlbumentationsLike)

    def test_labels_is_one_only_as_a_label_field(self) -> None:
        # albumentations accepts 'labels' beside any BboxParams, but moves it only as one
        boxes = A.Compose([A.HorizontalFlip()], bbox_params=bbox_params("coco", ()))
        assert "labels" not in albumentations_targets(boxes)
        assert "labels" in albumentations_targets(
            A.Compose([A.HorizontalFlip()], bbox_params=bbox_params("coco", ["labels"]))
        )


def _masked_sample(kind: type = np.ndarray) -> dict[str, Any]:
    """Three instances, each mask filling its box exactly, on a 16 x 20 image."""
    boxes = np.array([[0, 0, 5, 5], [12, 2, 18, 8], [14, 9, 19, 12]], np.float32)
    masks = np.zeros((3, 16, 20), np.uint8)
    for k, (x0, y0, x1, y1) in enumerate(boxes.astype(int).tolist()):
        masks[k, y0:y1, x0:x1] = 1
    given: Any = masks if kind is np.ndarray else list(masks)
    return {"image": np.zeros((16, 20, 3), np.uint8), "bboxes": boxes,
            "labels": np.array([1, 2, 3]), "masks": given}  # fmt: skip


def _bounds(mask: np.ndarray) -> list[int]:
    ys, xs = np.nonzero(mask)
    return [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]


class TestInstanceMasks:
    """albumentations keeps every instance mask when it drops a box: the driver makes
    the masks follow their boxes."""

    CROP = (10, 0, 20, 16)  # x0, y0, x1, y1: the first box falls outside

    def driver(self) -> Any:
        crop = A.Compose([A.Crop(*self.CROP)], bbox_params=bbox_params("pascal_voc"))
        return make_driver(crop, DefaultAdapter())

    @pytest.mark.parametrize("kind", [np.ndarray, list])
    def test_the_masks_of_the_dropped_boxes_go(self, kind: type) -> None:
        out: dict[str, Any] = self.driver()(_masked_sample(kind), keyed())
        assert out["labels"].tolist() == [2, 3]
        assert out["bboxes"].dtype == np.float32
        assert len(out["masks"]) == 2
        for box, mask in zip(out["bboxes"], out["masks"], strict=True):  # each its own
            assert _bounds(np.asarray(mask)) == np.round(box).astype(int).tolist()
        assert type(out["masks"]) is kind

    @pytest.mark.parametrize("tensors", [False, True])
    def test_a_list_of_masks_comes_back_a_list_of_the_same(self, tensors: bool) -> None:
        sample = _masked_sample(list)
        if tensors:
            sample["masks"] = [torch.from_numpy(m) for m in sample["masks"]]
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
        out = make_driver(flip, DefaultAdapter())(sample, keyed())
        assert type(out["masks"]) is list
        kind, dtype = (torch.Tensor, torch.uint8) if tensors else (np.ndarray, np.uint8)
        assert [(type(m), m.dtype) for m in out["masks"]] == [(kind, dtype)] * 3
        flipped = _masked_sample()["masks"][:, :, ::-1]
        np.testing.assert_array_equal(np.stack([np.asarray(m) for m in out["masks"]]), flipped)

    def test_every_box_dropped_leaves_no_mask(self) -> None:
        sample = _masked_sample()
        sample.update(bboxes=sample["bboxes"][:1], labels=sample["labels"][:1],
                      masks=sample["masks"][:1])  # fmt: skip
        out = self.driver()(sample, keyed())
        assert out["bboxes"].shape == (0, 4)
        assert out["bboxes"].dtype == np.float32
        assert out["masks"].shape == (0, 16, 10)
        assert out["masks"].dtype == np.uint8

    def test_the_same_draws_as_without_masks(self) -> None:
        flip = A.Compose([A.HorizontalFlip(p=0.5), A.Affine(scale=(0.5, 1.5), p=1.0)],
                         bbox_params=bbox_params("pascal_voc"))  # fmt: skip
        driver = make_driver(flip, DefaultAdapter())
        with_masks = driver(_masked_sample(), keyed(3))
        bare = {k: v for k, v in _masked_sample().items() if k != "masks"}
        without = driver(bare, keyed(3))
        np.testing.assert_array_equal(with_masks["image"], without["image"])
        np.testing.assert_allclose(with_masks["bboxes"], without["bboxes"], atol=1e-4)
        assert with_masks["labels"].tolist() == without["labels"].tolist()

    def test_masks_not_one_per_box_pass_as_they_are(self) -> None:
        sample = _masked_sample()
        sample["masks"] = sample["masks"][:2]  # not per box: not tracked, nothing dropped
        out = make_driver(A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params(
            "pascal_voc")), DefaultAdapter())(sample, keyed())  # fmt: skip
        assert len(out["masks"]) == 2
        assert len(out["bboxes"]) == 3


_ATTRIBUTES: dict[str, Callable[[], Any]] = {
    "array": lambda: np.array([[1, 2], [3, 4], [5, 6]], np.int32),
    "tensor": lambda: torch.tensor([[1.5, 2.0], [3.0, 4.0], [5.0, 6.0]]),
    "list of lists": lambda: [[1, 2], [3, 4], [5, 6]],
    "list of tuples": lambda: [(1, 2), (3, 4), (5, 6)],
    "ragged list": lambda: [[1, 2, 3], [4], [5, 6]],
    "list of one-value rows": lambda: [[1], [3], [5]],
    "list of dicts": lambda: [{"occluded": True}, {"occluded": False}, {"occluded": True}],
    "(N, 2, 2) array": lambda: np.arange(12, dtype=np.uint8).reshape(3, 2, 2),
}


def _rows(value: Any) -> list[Any]:
    return value.tolist() if isinstance(value, np.ndarray | torch.Tensor) else list(value)


@pytest.mark.parametrize("name", list(_ATTRIBUTES))
class TestWideLabelFields:
    """A label field of several values per box failed inside albumentations ("all the
    input array dimensions except for the concatenation axis must match exactly"), and
    one of rows of one value, ``[[c], ...]``, too ("unhashable type: 'list'")."""

    def driver(self) -> Any:
        crop = A.Compose([A.Crop(*TestInstanceMasks.CROP)],
                         bbox_params=bbox_params("pascal_voc", ("labels", "attrs")))  # fmt: skip
        return make_driver(crop, DefaultAdapter())

    def test_its_rows_follow_the_boxes_kept(self, name: str) -> None:
        given = _ATTRIBUTES[name]()
        sample = {**_masked_sample(), "attrs": given}
        del sample["masks"]
        out = self.driver()(sample, keyed())
        assert out["labels"].tolist() == [2, 3]
        assert type(out["attrs"]) is type(given)
        assert getattr(out["attrs"], "dtype", None) == getattr(given, "dtype", None)
        assert _rows(out["attrs"]) == _rows(given[1:])  # tuples stay tuples

    def test_with_instance_masks_both_follow(self, name: str) -> None:
        given = _ATTRIBUTES[name]()
        out = self.driver()({**_masked_sample(), "attrs": given}, keyed())
        assert len(out["masks"]) == len(out["attrs"]) == 2
        for box, mask in zip(out["bboxes"], out["masks"], strict=True):
            assert _bounds(np.asarray(mask)) == np.round(box).astype(int).tolist()

    def test_every_box_dropped_leaves_no_row(self, name: str) -> None:
        given = _ATTRIBUTES[name]()
        sample = {**_masked_sample(), "attrs": given[:1]}
        sample.update(bboxes=sample["bboxes"][:1], labels=sample["labels"][:1])
        del sample["masks"]
        out = self.driver()(sample, keyed())
        assert len(out["bboxes"]) == len(out["attrs"]) == 0
        assert type(out["attrs"]) is type(given)


def _rotated(sample: dict[str, Any], **targets: str) -> dict[str, Any]:
    """``sample`` through a keyed affine (rotated, sheared: ``cv2.remap``), key 0."""
    steps = [A.Affine(rotate=(20, 30), shear=(5, 10), p=1.0)]
    affine = A.Compose(steps, bbox_params=bbox_params("pascal_voc"), additional_targets=targets)
    out: dict[str, Any] = RandomAugmentWrapper([sample], affine, seed=0, keying="sample")[0]
    return out


def _blob() -> np.ndarray:
    mask = np.zeros((16, 20), np.uint8)
    mask[3:9, 4:15] = 1
    return mask


_MASK_DTYPES: dict[str, tuple[Callable[[np.ndarray], Any], Callable[[Any], np.ndarray]]] = {
    "bool": (lambda m: m.astype(bool), np.asarray),
    "float16": (lambda m: m.astype(np.float16), np.asarray),
    "bool tensor": (lambda m: torch.from_numpy(m.astype(bool)), lambda t: t.numpy()),
}


@pytest.mark.parametrize("kind", list(_MASK_DTYPES))
class TestMaskDtypesOpenCVDoesNotWarp:
    """A bool or float16 mask failed in an affine's ``cv2.remap`` ("nnfunc != 0")."""

    def test_a_mask_moves_as_its_uint8_twin_and_keeps_its_dtype(self, kind: str) -> None:
        make, read = _MASK_DTYPES[kind]
        base = {"image": np.zeros((16, 20, 3), np.uint8), "bboxes": np.zeros((0, 4)),
                "labels": np.zeros(0, np.int64)}  # fmt: skip
        twin = _rotated({**base, "mask": _blob(), "masks": _blob()[None]})
        given = make(_blob())
        out = _rotated({**base, "mask": given, "masks": [given], "seg": given}, seg="mask")
        assert twin["mask"].any()  # the rotation kept some of it
        for value in (out["mask"], out["masks"][0], out["seg"]):
            assert type(value) is type(given)
            assert value.dtype == given.dtype
            np.testing.assert_array_equal(read(value), twin["mask"].astype(read(given).dtype))
        np.testing.assert_array_equal(read(out["masks"][0]), read(out["mask"]))


_NO_MASKS = [
    np.zeros((0, 16, 20), np.uint8),
    np.zeros((0, 16, 20), np.bool_),
    np.zeros((0, 16, 20, 2), np.float32),
    torch.zeros(0, 16, 20, dtype=torch.bool),
]


def _no_instances(masks: Any, boxed: bool) -> tuple[Any, Any]:
    """A sample with ``masks`` and no instance, through a resize to 8 x 12, and without."""
    steps = [A.Resize(8, 12), A.HorizontalFlip(p=0.5), A.RandomBrightnessContrast(p=1.0)]
    compose = A.Compose(steps, bbox_params=bbox_params("pascal_voc")) if boxed else A.Compose(steps)
    driver = make_driver(compose, DefaultAdapter())
    ramp = np.arange(16 * 20 * 3, dtype=np.int64).reshape(16, 20, 3)
    bare: dict[str, Any] = {"image": (ramp * 7 % 251).astype(np.uint8)}
    if boxed:
        bare.update(bboxes=np.zeros((0, 4), np.float32), labels=np.zeros(0, np.int64))
    return driver({**bare, "masks": masks}, keyed(5)), driver(bare, keyed(5))


class TestNoInstanceMasks:
    """albumentations 2.0.8 cannot stack ``(0, H, W)`` masks: the driver takes empty
    masks out and gives them back empty, of the output image's size."""

    @pytest.mark.parametrize("boxed", [True, False])
    @pytest.mark.parametrize("masks", _NO_MASKS, ids=repr)
    def test_empty_masks_come_back_of_the_output_size(self, masks: Any, boxed: bool) -> None:
        out, without = _no_instances(masks, boxed)
        np.testing.assert_array_equal(out["image"], without["image"])  # the same draws
        assert type(out["masks"]) is type(masks)
        assert out["masks"].dtype == masks.dtype
        assert tuple(out["masks"].shape) == (0, 8, 12, *masks.shape[3:])

    @pytest.mark.parametrize("boxed", [True, False])
    @pytest.mark.parametrize("masks", [[], ()])
    def test_an_empty_list_stays_an_empty_list(self, masks: Any, boxed: bool) -> None:
        out, without = _no_instances(masks, boxed)
        np.testing.assert_array_equal(out["image"], without["image"])
        assert out["masks"] == masks
        assert type(out["masks"]) is type(masks)

    def test_a_mosaic_that_keeps_no_box_goes_through_albumentations(self) -> None:
        masks = np.zeros((1, 64, 64), np.uint8)
        masks[0, 10:14, 10:14] = 1
        data = [{"image": np.zeros((64, 64, 3), np.uint8), "bboxes": np.array([[10.0, 10, 14, 14]]),
                 "labels": np.array([1]), "masks": masks}] * 4  # fmt: skip
        mosaic = MosaicDataset(data, seed=0, output_size=64, targets=Targets(min_area=100.0))
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper(mosaic, flip, seed=0)[0]
        assert out["bboxes"].shape == (0, 4)
        assert out["masks"].shape == (0, 64, 64)
        assert out["masks"].dtype == np.uint8


@pytest.mark.parametrize("boxes", [[], np.zeros((0, 4), np.float32)])
def test_no_boxes_with_an_empty_masks_list_passes(boxes: Any) -> None:
    flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
    sample = {"image": np.zeros((8, 8, 3), np.uint8), "bboxes": boxes,
              "labels": np.zeros(0, np.int64), "masks": []}  # fmt: skip
    out = make_driver(flip, DefaultAdapter())(sample, keyed())
    assert len(out["bboxes"]) == len(out["masks"]) == 0


class TestMasksCoverTheirImage:
    """A mask of another shape was resampled as another size (or left), never refused."""

    @pytest.mark.parametrize("shape", [(8, 12), (24, 16), (1, 16, 24)])
    @pytest.mark.parametrize("flip", [A.HorizontalFlip(p=1.0), A.Resize(8, 12)])
    def test_a_geometric_transform_refuses_a_mask_of_another_shape(
        self, shape: tuple[int, ...], flip: Any
    ) -> None:
        sample = {"image": np.zeros((16, 24, 3), np.uint8), "mask": np.zeros(shape, np.uint8)}
        with pytest.raises(SampleError, match=r"the sample's mask must be an HxW or HxWxC array"):
            RandomAugmentWrapper([sample], flip, seed=0)[0]

    def test_a_pixel_level_transform_passes_it_untouched(self) -> None:
        mask = np.zeros((8, 12), np.uint8)
        sample = {"image": np.zeros((16, 24, 3), np.uint8), "mask": mask}
        out = RandomAugmentWrapper([sample], A.InvertImg(p=1.0), seed=0)[0]
        assert out["mask"] is mask


class TestTorchvisionV1:
    """torchvision v1 containers that draw from ``random`` (runs in ``.venv-tv``)."""

    @pytest.fixture
    def transforms(self) -> Any:
        return pytest.importorskip(
            "torchvision.transforms",
            reason="torchvision is not installed here: it lives in .venv-tv (constraints-tv.txt); "
            ".ci/run runs this class there",
        )

    def _order(self, transforms: Any) -> Any:
        steps = [transforms.Lambda(lambda x, k=k: x * 10 + k) for k in range(6)]
        return transforms.Compose([transforms.RandomChoice(steps), transforms.RandomOrder(steps)])

    def test_random_choice_and_order_are_keyed_per_rank(self, transforms: Any) -> None:
        chain = self._order(transforms)
        state = random.getstate()
        ranks = [
            RandomAugmentWrapper([torch.tensor(0)] * 8, chain, seed=0, keying="sample_rank", rank=r)
            for r in (0, 1)
        ]
        outputs = {}
        for r, wrapped in enumerate(ranks):
            random.setstate(state)  # every rank's random module starts alike
            outputs[r] = [int(wrapped[i]) for i in range(8)]
        assert outputs[0] != outputs[1]
        assert len(set(outputs[0])) > 1
        assert [int(ranks[0][i]) for i in range(8)] == outputs[0]
        assert random.getstate() == state


def _generator_named_otherwise(sample: Any, generator: np.random.Generator) -> Any:
    return sample + int(generator.integers(10))


class _GeneratorCalledG:
    def __call__(self, sample: Any, g: np.random.Generator) -> Any:
        return sample


def _supplies_the_generator(
    transform: Callable[[Any, np.random.Generator], Any],
) -> Callable[[Any], Any]:
    @functools.wraps(transform)  # its signature reads as the wrapped one's
    def supplied(sample: Any) -> Any:
        return transform(sample, np.random.default_rng(7))

    return supplied


@_supplies_the_generator
def _decorated(sample: Any, generator: np.random.Generator) -> Any:
    return sample + int(generator.integers(1, 10))


class _CallsItsForward(torch.nn.Module):
    def forward(self, x: Any, g: np.random.Generator) -> Any:
        return x + int(g.integers(1, 10))

    def __call__(self, sample: Any) -> Any:  # its own call, supplying forward's g
        return self.forward(sample, np.random.default_rng(7))


class _StaticCall:
    @staticmethod
    def __call__(sample: Any, rng: np.random.Generator) -> Any:
        return sample + int(rng.integers(1, 10))


class _StaticCallWithoutRng:
    @staticmethod
    def __call__(sample: Any) -> Any:
        return sample + int(torch.randint(1, 10, ()))


class TestTransformSignatures:
    @pytest.mark.parametrize(
        ("transform", "shown", "parameter"),
        [
            (_generator_named_otherwise, "_generator_named_otherwise", "generator"),
            (_GeneratorCalledG(), "a _GeneratorCalledG", "g"),
        ],
    )
    def test_a_generator_not_named_rng_is_refused_when_the_wrapper_is_built(
        self, transform: Any, shown: str, parameter: str
    ) -> None:
        expected = (
            f"transform must take (sample, rng=generator) or (sample), got {shown} with "
            f"signature {inspect.signature(transform)}: its parameter {parameter!r} would get "
            "no value; rankaug calls a transform as transform(sample, rng=generator) when it "
            "has a parameter named rng"
        )
        with pytest.raises(TypeError, match=re.escape(expected)):
            RandomAugmentWrapper([1, 2, 3], transform, seed=0)

    @pytest.mark.parametrize(
        "transform",
        [
            lambda sample, rng: sample + int(rng.integers(1, 10)),  # positional rng
            lambda sample, *, rng: sample + int(rng.integers(1, 10)),  # keyword-only rng
            lambda sample, **options: sample + int(torch.randint(1, 10, ())),  # **kwargs
            lambda sample, extra=5, *, rng: sample + int(rng.integers(1, 10)),  # defaults
        ],
        ids=["positional-rng", "keyword-rng", "kwargs", "defaults"],
    )
    def test_the_signatures_that_worked_still_work(self, transform: Any) -> None:
        wrapper = RandomAugmentWrapper([100, 200], transform, seed=0)
        assert 101 <= wrapper[0] <= 109
        assert 201 <= wrapper[1] <= 209

    def test_a_builtin_without_a_signature_is_called_with_the_sample(self) -> None:
        wrapper = RandomAugmentWrapper([[3, 9, 4], [1]], max, seed=0)  # no readable signature
        assert [wrapper[0], wrapper[1]] == [9, 1]

    def test_a_builtins_own_call_error_says_how_it_was_called(self) -> None:
        wrapper = RandomAugmentWrapper([3], max, seed=0)
        with pytest.raises(SampleError) as raised:
            wrapper[0]
        cause = raised.value.__cause__
        assert isinstance(cause, TypeError)
        assert str(cause) == (
            "calling max(sample) raised TypeError: 'int' object is not iterable; rankaug calls "
            "a transform as transform(sample, rng=generator) when it has a parameter named rng "
            "(the key's numpy Generator, passed by that name), else as transform(sample) (its "
            "signature could not be read, so it was called as transform(sample))"
        )

    def test_an_error_inside_a_transform_is_its_own(self) -> None:
        def broken(sample: Any) -> Any:
            return max(sample)

        wrapper = RandomAugmentWrapper([3], broken, seed=0)
        with pytest.raises(SampleError) as raised:
            wrapper[0]
        assert str(raised.value.__cause__) == "'int' object is not iterable"

    @pytest.mark.parametrize(
        "transform",
        [_decorated, _CallsItsForward(), _StaticCall(), _StaticCallWithoutRng()],
        ids=["wraps-decorator", "own-call", "static-call", "static-call-without-rng"],
    )
    def test_what_the_call_runs_is_what_is_checked(self, transform: Any) -> None:
        wrapper = RandomAugmentWrapper([100, 200], transform, seed=0)
        assert 101 <= wrapper[0] <= 109
        assert 201 <= wrapper[1] <= 209
