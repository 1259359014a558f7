from __future__ import annotations

import collections
import itertools
import re
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch
from albumentations.pytorch import ToTensorV2
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from rankaug import (
    CopyPasteDataset,
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    RandomAugmentWrapper,
    Targets,
)
from rankaug.adapters import KeyMap
from rankaug.errors import SampleError
from rankaug.samples import DEFAULT_TARGETS, DefaultAdapter
from rankaug.samples.restore import restore_like
from tests.albu import bbox_params
from tests.samples import tv_standin

TARGETS = DEFAULT_TARGETS | {"labels"}


def roundtrip(sample: Any, edit: Any = None) -> Any:
    adapter = DefaultAdapter()
    data, state = adapter.unpack(sample, TARGETS)
    if edit is not None:
        edit(data)
    return adapter.repack(data, state)


def _wrapped(kind: Any, sample: dict[str, Any]) -> Any:
    """A 32-pixel mosaic of ``sample`` twice, or ``sample`` flipped by the wrapper."""
    if kind is MosaicDataset:
        return MosaicDataset([sample] * 2, seed=0, output_size=32)
    flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
    return RandomAugmentWrapper([sample], flip, seed=0)


def _tuple_sample() -> dict[str, Any]:
    boxes = ((0.0, 0.0, 4.0, 16.0), (20.0, 0.0, 24.0, 8.0))
    return {"image": np.zeros((16, 24, 3), np.uint8), "bboxes": boxes, "labels": (1, 2)}


class TestDefaultAdapter:
    def test_dict_only_targets_are_handed_out_and_extras_kept_as_objects(self) -> None:
        extra = {"anything": [1, 2]}
        sample = {"image": np.zeros((4, 5, 3), np.uint8), "labels": [1], "meta": extra}
        data, _ = DefaultAdapter().unpack(sample, TARGETS)
        assert set(data) == {"image", "labels"}
        out = roundtrip(sample)
        assert out["meta"] is extra
        assert out is not sample

    def test_a_target_given_none_is_no_target_and_comes_back_none(self) -> None:
        # it was: handed out as None, so an albumentations pipeline with label fields failed
        # inside (AttributeError), and MosaicDataset and the mixes gave (0, 4) boxes for it
        image = np.zeros((20, 24, 3), np.uint8)
        image[:, :6] = 255
        sample = {"image": image, "bboxes": None, "labels": None, "keypoints": None}
        data, _ = DefaultAdapter().unpack(sample, TARGETS)
        assert set(data) == {"image"}
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], flip, seed=0)[0]
        assert (out["bboxes"], out["labels"], out["keypoints"]) == (None, None, None)
        assert (out["image"][:, -6:] == 255).all()
        assert (out["image"][:, :-6] == 0).all()
        boxes = Targets(box_format="pascal_voc")
        for made in (
            MosaicDataset([sample] * 4, output_size=(20, 24), seed=0, targets=boxes),
            MixUpDataset([sample] * 2, seed=0, targets=boxes),
            CutMixDataset([sample] * 2, seed=0, targets=boxes),
        ):
            mixed = made[0]
            assert (mixed["bboxes"], mixed["labels"]) == (None, None)

    def test_int8_boxes_short_of_the_output_are_refused_naming_the_key(self) -> None:
        # it was: a flip in a 300-wide image gave int8 boxes [39, 10, 44, 20], wrapped;
        # now refused on every draw, moved or not, as the multi-sample wrappers refuse them
        sample = {
            "image": np.zeros((30, 300, 3), np.uint8),
            "bboxes": np.array([[0, 10, 5, 20]], np.int8),
            "labels": np.array([1], np.int8),
        }
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        with pytest.raises(SampleError, match=r"bboxes are int8, which holds up to 127, .* 30x300"):
            RandomAugmentWrapper([sample], flip, seed=0)[0]
        within = {**sample, "image": np.zeros((30, 100, 3), np.uint8)}
        out = RandomAugmentWrapper([within], flip, seed=0)[0]
        assert out["bboxes"].dtype == np.int8
        assert out["bboxes"].tolist() == [[95, 10, 100, 20]]

    def test_tensor_image_goes_hwc_and_back_chw(self) -> None:
        chw = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 4)
        data, state = DefaultAdapter().unpack({"image": chw}, TARGETS)
        assert data["image"].shape == (3, 4, 2)
        assert data["image"].flags.c_contiguous
        out = DefaultAdapter().repack(data, state)
        assert torch.equal(out["image"], chw)

    def test_grayscale_tensor_and_pil(self) -> None:
        hw = torch.zeros(3, 4, dtype=torch.uint8)
        assert roundtrip((hw, 0))[0].shape == (3, 4)
        pil = Image.fromarray(np.zeros((3, 4), np.uint8))
        back = roundtrip((pil, 0))[0]
        assert isinstance(back, Image.Image)
        assert back.mode == "L"
        assert back.size == (4, 3)

    def test_pil_rgba(self) -> None:
        rgba = Image.fromarray(np.zeros((3, 4, 4), np.uint8), mode="RGBA")
        assert roundtrip([rgba, 1])[0].mode == "RGBA"

    def test_torchvision_target_names(self) -> None:
        boxes = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
        target = {"boxes": boxes, "labels": torch.tensor([2]), "iscrowd": torch.tensor([0])}
        data, state = DefaultAdapter().unpack((np.zeros((5, 5, 3), np.uint8), target), TARGETS)
        assert set(data) == {"image", "bboxes", "labels"}
        assert isinstance(data["bboxes"], np.ndarray)
        data["bboxes"] = data["bboxes"] + 1
        _, new_target = DefaultAdapter().repack(data, state)
        assert set(new_target) == {"boxes", "labels", "iscrowd"}
        assert new_target["iscrowd"] is target["iscrowd"]
        # assert_close's checks, without its first call's import of torch.distributed.tensor
        # (0.6 s): the dtype, the shape, and the values to its float32 tolerances
        assert (new_target["boxes"].dtype, new_target["boxes"].shape) == (boxes.dtype, (1, 4))
        assert torch.allclose(new_target["boxes"], boxes + 1, rtol=1.3e-6, atol=1e-5)

    def test_a_target_that_says_bboxes_gets_its_boxes_back_there(self) -> None:
        target = {"bboxes": np.array([[1.0, 2.0, 3.0, 4.0]]), "labels": np.array([2])}
        data, state = DefaultAdapter().unpack((np.zeros((5, 5, 3), np.uint8), target), TARGETS)
        data["bboxes"] = data["bboxes"] + 1
        _, new_target = DefaultAdapter().repack(data, state)
        assert set(new_target) == {"bboxes", "labels"}
        np.testing.assert_array_equal(new_target["bboxes"], [[2.0, 3.0, 4.0, 5.0]])

    def test_a_named_tuple_pair_comes_back_of_its_type(self) -> None:
        pair = collections.namedtuple("pair", "image target")
        sample = pair(np.zeros((3, 4, 3), np.uint8), {"boxes": np.zeros((1, 4)), "labels": [1]})
        out = roundtrip(sample)
        assert type(out) is pair
        assert out.target["labels"] == [1]
        relabelled = DefaultAdapter.with_class_target(pair(sample.image, 3), "label", [0.5])
        assert (type(relabelled), relabelled.target) == (pair, [0.5])

    @pytest.mark.parametrize("kind", [MosaicDataset, RandomAugmentWrapper])
    def test_boxes_as_a_tuple_of_tuples_stay_one(self, kind: Any) -> None:
        # they came back a tuple of lists
        out = _wrapped(kind, _tuple_sample())[0]
        assert type(out["bboxes"]) is tuple
        assert len(out["bboxes"]) > 0
        assert {type(box) for box in out["bboxes"]} == {tuple}
        assert type(out["labels"]) is tuple

    @pytest.mark.parametrize("kind", [MosaicDataset, RandomAugmentWrapper])
    def test_labels_as_a_list_of_numpy_scalars_stay_so(self, kind: Any) -> None:
        sample = {**_tuple_sample(), "labels": [np.int32(1), np.int32(2)]}
        labels = _wrapped(kind, sample)[0]["labels"]
        assert type(labels) is list
        assert len(labels) > 0
        assert {type(label) for label in labels} == {np.int32}

    @pytest.mark.parametrize("kind", ["mosaic", "mixup", "cutmix", "copypaste"])
    def test_polygons_as_lists_of_points_stay_lists(self, kind: str) -> None:
        # CutMix and CopyPaste gave them back a list of arrays (polygons they cut or
        # trimmed have other lengths)
        squares = [[[4, 4], [20, 4], [20, 20], [4, 20]], [[10, 12], [30, 12], [30, 36], [10, 36]]]
        samples = [{"image": np.full((40, 48, 3), 20 * i, np.uint8), "segments": squares,
                    "bboxes": np.array([[4, 4, 21, 21], [10, 12, 31, 37]], np.float32),
                    "labels": np.array([1, 2])} for i in range(4)]  # fmt: skip
        wrapper = {
            "mosaic": lambda: MosaicDataset(samples, seed=0, output_size=40),
            "mixup": lambda: MixUpDataset(samples, seed=0),
            "cutmix": lambda: CutMixDataset(samples, seed=0),
            "copypaste": lambda: CopyPasteDataset(samples, seed=0, p=1.0),
        }[kind]()
        outs = [wrapper[i] for i in range(4)]
        assert sum(len(out["segments"]) for out in outs) > 0
        for out in outs:
            assert type(out["segments"]) is list
            assert {type(polygon) for polygon in out["segments"]} <= {list}
            assert {type(point) for polygon in out["segments"] for point in polygon} <= {list}

    def test_a_flip_gives_the_tuples_their_mirrored_values(self) -> None:
        sample = _tuple_sample()
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], flip, seed=0)[0]
        expected = [[20.0, 0.0, 24.0, 16.0], [0.0, 0.0, 4.0, 8.0]]  # through float32
        np.testing.assert_allclose(np.array(out["bboxes"]), expected, atol=1e-5)
        assert out["labels"] == (1, 2)

    @pytest.mark.parametrize("kind", [tuple, list])
    def test_a_plain_pair_keeps_its_container(self, kind: type) -> None:
        out = roundtrip(kind((np.zeros((3, 4, 3), np.uint8), 5)))
        assert type(out) is kind

    def test_per_box_values_not_handed_out_go_stale_when_boxes_drop(self) -> None:
        target = {"boxes": np.zeros((2, 4)), "labels": np.array([1, 2]),
                  "iscrowd": torch.tensor([0, 1]), "area": [3.0, 4.0], "size": (5, 5),
                  "image_id": 7}  # fmt: skip
        sample = (np.zeros((5, 5, 3), np.uint8), target)

        def drop_one(data: dict[str, Any]) -> None:
            data["bboxes"], data["labels"] = data["bboxes"][:1], data["labels"][:1]

        with pytest.raises(ValueError, match=r"kept 1 of 2 boxes, but 'iscrowd', 'area' \("):
            roundtrip(sample, drop_one)
        kept = roundtrip(sample, lambda data: None)[1]  # none dropped: all still aligned
        assert kept["iscrowd"] is target["iscrowd"]

    def test_per_keypoint_values_not_handed_out_go_stale_when_keypoints_drop(self) -> None:
        # a visibility and joint names beside (K, 2) keypoints, outside the keypoints'
        # label fields, came back unchanged beside the 2 keypoints the transform kept
        sample = {"image": np.zeros((5, 5, 3), np.uint8), "keypoints": np.ones((3, 2)),
                  "visible": np.array([2, 1, 2]), "names": ["nose", "eye", "ear"],
                  "image_id": 7}  # fmt: skip

        def drop_one(data: dict[str, Any]) -> None:
            data["keypoints"] = data["keypoints"][:2]

        with pytest.raises(ValueError, match=r"kept 2 of 3 keypoints, but 'visible', 'names'"):
            roundtrip(sample, drop_one)
        kept = roundtrip(sample, lambda data: None)  # none dropped: all still aligned
        assert kept["visible"] is sample["visible"]

    def test_a_crop_that_drops_keypoints_refuses_a_per_keypoint_value_it_was_not_given(
        self,
    ) -> None:
        points = np.array([[1.0, 1.0], [45.0, 35.0], [25.0, 20.0]], np.float32)
        sample = {"image": np.zeros((40, 50, 3), np.uint8), "keypoints": points,
                  "visible": np.array([2, 1, 2])}  # fmt: skip
        crop = A.Compose([A.Crop(0, 0, 20, 20)], keypoint_params=A.KeypointParams("xy"))
        with pytest.raises(SampleError, match=r"kept 1 of 3 keypoints, but 'visible' \("):
            RandomAugmentWrapper([sample], crop, seed=0)[0]
        carried = A.Compose(
            [A.Crop(0, 0, 20, 20)], keypoint_params=A.KeypointParams("xy", label_fields=["visible"])
        )
        out = RandomAugmentWrapper([sample], carried, seed=0)[0]
        assert out["keypoints"].tolist() == [[1.0, 1.0]]
        assert out["visible"].tolist() == [2]

    def test_image_level_metadata_is_never_per_box(self) -> None:
        target = {"boxes": np.zeros((2, 4)), "labels": np.array([1, 2]),
                  "orig_size": torch.tensor([480, 640]), "size": [480, 640],
                  "image_id": torch.tensor([7])}  # fmt: skip

        def drop(data: dict[str, Any]) -> None:
            data["bboxes"], data["labels"] = data["bboxes"][:0], data["labels"][:0]

        out = roundtrip((np.zeros((5, 5, 3), np.uint8), target), drop)[1]
        assert out["orig_size"] is target["orig_size"]
        assert out["image_id"] is target["image_id"]

    def test_instance_masks_that_stay_with_the_boxes_count_are_refused(self) -> None:
        sample = {"image": np.zeros((5, 5, 3), np.uint8), "bboxes": np.zeros((2, 4)),
                  "masks": np.zeros((2, 5, 5), np.uint8)}  # fmt: skip

        def drop_box(data: dict[str, Any]) -> None:
            data["bboxes"] = data["bboxes"][:1]

        with pytest.raises(ValueError, match="kept 1 of 2 boxes, but 'masks'"):
            roundtrip(sample, drop_box)

    @pytest.mark.parametrize(
        "target", [{"image": 1}, {"boxes": np.zeros((0, 4)), "bboxes": np.zeros((0, 4))}]
    )
    def test_a_target_with_image_or_two_box_keys_is_refused(self, target: Any) -> None:
        with pytest.raises(ValueError, match=r"not have an 'image' key, nor both 'boxes' and"):
            DefaultAdapter().unpack((np.zeros((2, 2)), target), TARGETS)

    def test_float_output_cannot_go_back_into_pil(self) -> None:
        def to_float(data: dict[str, Any]) -> None:
            data["image"] = data["image"].astype(np.float32)

        with pytest.raises(TypeError, match="returned a float32 image, which cannot go back"):
            roundtrip((Image.fromarray(np.zeros((3, 4, 3), np.uint8)), 0), to_float)

    @pytest.mark.parametrize("kind", [np.array, torch.tensor])
    @pytest.mark.parametrize("crop", [False, True])
    def test_n_by_1_labels_keep_their_shape_through_a_bbox_pipeline(
        self, kind: Any, crop: bool
    ) -> None:
        # albumentations flattens a label field: (2, 1) labels came back (2,)
        sample = {"image": np.zeros((32, 32, 3), np.uint8), "labels": kind([[1], [2]]),
                  "bboxes": np.array([[2, 2, 8, 8], [20, 20, 30, 30]], np.float32)}  # fmt: skip
        step = A.Crop(0, 0, 12, 12) if crop else A.HorizontalFlip(p=1)
        pipe = A.Compose([step], bbox_params=bbox_params("pascal_voc"))
        labels = RandomAugmentWrapper([sample], pipe, seed=0)[0]["labels"]
        assert type(labels) is type(sample["labels"])
        assert tuple(labels.shape) == ((1, 1) if crop else (2, 1))
        assert labels.tolist() == ([[1]] if crop else [[1], [2]])

    @settings(max_examples=60, deadline=None)
    @given(
        old_dtype=st.sampled_from(["int64", "int32", "float32", "float64", "uint8"]),
        new_dtype=st.sampled_from(["int64", "float32", "float64"]),
        old_shape=st.sampled_from([(3,), (3, 4), (0, 4), (0,), (3, 1)]),
        new_shape=st.sampled_from([(2,), (2, 4), (0, 4), (0,)]),
        halves=st.booleans(),
    )
    def test_repack_gives_each_value_back_as_restore_like_does(
        self, old_dtype: str, new_dtype: str, old_shape: tuple[int, ...],
        new_shape: tuple[int, ...], halves: bool,
    ) -> None:  # fmt: skip
        # repack keeps arrays of the right dtype without calling restore_like: the same
        old = np.ones(old_shape, old_dtype)
        new = np.full(new_shape, 1.5 if halves else 2.0).astype(new_dtype)
        data, state = DefaultAdapter().unpack({"image": np.zeros((2, 2), np.uint8), "labels": old},
                                              TARGETS)  # fmt: skip
        data["labels"] = new
        got = DefaultAdapter().repack(data, state)["labels"]
        want = restore_like(new, old)
        assert type(got) is type(want)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        assert np.array_equal(got, want)

    @pytest.mark.parametrize("drop", [False, True])
    def test_call_plain_gives_what_unpack_call_and_repack_give(self, drop: bool) -> None:
        def call(**data: Any) -> dict[str, Any]:  # new dtypes, a list, an added key
            kept = slice(0, 1 if drop else None)
            return {"labels": list(data["labels"][kept]), "image": data["image"][:, ::-1],
                    "bboxes": data["bboxes"][kept].astype(np.float64), "added": 1}  # fmt: skip

        sample = {"bboxes": np.ones((2, 4), np.float32), "image": np.eye(3, dtype=np.uint8),
                  "labels": np.array([3, 4])}  # fmt: skip
        adapter = DefaultAdapter()
        data, state = adapter.unpack(sample, TARGETS)
        want = adapter.repack(call(**data), state)
        got = adapter._call_plain(sample, TARGETS, call)
        assert list(got) == list(want) == ["bboxes", "image", "labels", "added"]
        for key, value in want.items():
            assert type(got[key]) is type(value)
            assert np.array_equal(got[key], value)
            assert np.asarray(got[key]).dtype == np.asarray(value).dtype

    def test_call_plain_gives_each_value_back_as_the_steps_do(self) -> None:
        # the one call reads each attribute once and passes a sample that has its image
        # first as it is: the same call, the same values (or the same refusal) as the
        # steps, for every dtype and shape (every combination: a few hundred ms)
        image = np.zeros((300, 2), np.uint8)  # wider than uint8 boxes may reach
        adapter = DefaultAdapter()
        adapter.reads_box_format = "pascal_voc"  # integer boxes made whole, or refused
        given: list[list[str]] = []

        def outcome(run: Any) -> Any:
            try:
                out = run()
            except ValueError as error:
                return str(error)
            return [(k, type(v), v.dtype, v.shape, v.tolist()) for k, v in out.items()]

        grid = itertools.product(
            ["labels", "bboxes", "keypoints"],
            ["int64", "int16", "float32", "float64", "uint8"],
            ["int64", "float32", "float64"],
            [(3,), (3, 4), (0, 4), (0,), (3, 1)],
            [(2,), (2, 4), (0, 4), (0,)],
            [False, True],  # halves (and the transform's image in float32)
            [False, True],  # the image first
        )
        for key, old_dtype, new_dtype, old_shape, new_shape, halves, image_first in grid:
            old = np.ones(old_shape, old_dtype)
            new = np.full(new_shape, 1.5 if halves else 2.0).astype(new_dtype)
            sample = {"image": image, key: old} if image_first else {key: old, "image": image}

            def call(**data: Any) -> dict[str, Any]:  # (called in this iteration)
                given.append(list(data))
                moved = data["image"].astype(np.float32) if halves else data["image"]  # noqa: B023
                return {**data, key: new, "image": moved}  # noqa: B023  # its image as it is

            data, state = adapter.unpack(sample, TARGETS)
            want = outcome(lambda: adapter.repack(call(**data), state))  # noqa: B023
            got = outcome(lambda: adapter._call_plain(sample, TARGETS, call))  # noqa: B023
            assert got == want, (key, old_dtype, new_dtype, old_shape, new_shape, halves)
            assert given[-2] == given[-1] == ["image", key]

    def test_call_plain_refuses_stale_instance_masks_as_repack_does(self) -> None:
        def call(**data: Any) -> dict[str, Any]:  # one box dropped, both masks kept
            return {**data, "bboxes": data["bboxes"][:1], "masks": np.zeros((2, 3, 3))}

        sample = {"image": np.eye(3, dtype=np.uint8), "bboxes": np.ones((2, 4), np.float32)}
        data, state = DefaultAdapter().unpack(sample, TARGETS)
        with pytest.raises(ValueError, match="kept 1 of 2 boxes, but 'masks'") as want:
            DefaultAdapter().repack(call(**data), state)
        with pytest.raises(ValueError, match="kept 1 of 2 boxes, but 'masks'") as got:
            DefaultAdapter()._call_plain(sample, TARGETS, call)
        assert str(got.value) == str(want.value)

    @pytest.mark.parametrize(
        "sample",
        [
            {"image": np.zeros((2, 2)), "labels": [1]},  # a value not an array
            {"image": torch.zeros(3, 2, 2)},  # a tensor image
            {"image": np.zeros((1, 2, 2, 3))},  # an image of another shape
            {"image": np.zeros((2, 2)), "path": np.array("a.png")},  # a key not a target
            (np.zeros((2, 2)), {"labels": np.array([1])}),  # a pair
            {"bboxes": np.zeros((0, 4))},  # no image
        ],
    )  # fmt: skip
    def test_call_plain_leaves_other_samples_to_the_steps(self, sample: Any) -> None:
        def call(**data: Any) -> dict[str, Any]:
            raise AssertionError("called")

        assert DefaultAdapter()._call_plain(sample, TARGETS, call) is None
        bound = DefaultAdapter()
        bound.typed_empty = {"bboxes": np.zeros((0, 4), np.float32)}  # a Hugging Face dataset's
        assert bound._call_plain({"image": np.zeros((2, 2))}, TARGETS, call) is None

    @pytest.mark.parametrize(
        ("sample", "error", "message"),
        [
            (7, TypeError, "cannot handle a sample of type int"),
            ((1, 2, 3), TypeError, "cannot handle a sample of type tuple"),
            ({"img": np.zeros((2, 2))}, ValueError, r"needs an 'image' key; .* \['img'\]"),
            ({"image": "x.jpg"}, TypeError, "image must be a numpy array, .* got str"),
            ({"image": np.zeros((2, 2, 2, 2))}, ValueError, r"shape \(2, 2, 2, 2\)"),
            ((torch.zeros(1, 1, 2, 2), 0), ValueError, r"CxHxW or HxW tensor, .* \(1, 1, 2, 2\)"),
            ((Image.new("P", (2, 2)), 0), ValueError, "PIL image of mode 'P'"),
        ],
    )  # fmt: skip
    def test_unhandled_shapes_are_explained(
        self, sample: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            DefaultAdapter().unpack(sample, TARGETS)


def _tensor_sample() -> dict[str, Any]:
    image = torch.zeros(3, 16, 24, dtype=torch.uint8)
    mask = torch.zeros(1, 16, 24, dtype=torch.uint8)
    mask[..., :4] = 1
    mask[:, :2, :] += 2
    return {"image": image, "mask": mask}


class TestTensorMasks:
    """A tensor image's ``(1, H, W)`` tensor mask was read ``H = 1``: scrambled, or left."""

    @pytest.mark.parametrize(
        ("transform", "expected"),
        [
            (A.HorizontalFlip(p=1.0), lambda m: m.flip(-1)),
            (A.VerticalFlip(p=1.0), lambda m: m.flip(-2)),
            (A.Resize(8, 12, interpolation=0), lambda m: m[:, ::2, ::2]),
        ],
    )
    def test_it_moves_channels_first_with_its_image(self, transform: Any, expected: Any) -> None:
        sample = _tensor_sample()
        out = RandomAugmentWrapper([sample], transform, seed=0)[0]
        assert type(out["mask"]) is torch.Tensor
        assert out["mask"].dtype == torch.uint8
        assert torch.equal(out["mask"], expected(sample["mask"]))

    def test_several_channels_and_the_adapter_s_data(self) -> None:
        sample = _tensor_sample()
        sample["mask"] = sample["mask"].repeat(2, 1, 1)
        data, state = DefaultAdapter().unpack(sample, TARGETS)
        assert data["mask"].shape == (16, 24, 2)
        data["mask"] = data["mask"][:, ::-1]
        assert torch.equal(DefaultAdapter().repack(data, state)["mask"], sample["mask"].flip(-1))

    @pytest.mark.parametrize("transpose_mask", [False, True])
    @pytest.mark.parametrize("keymap", [False, True])
    def test_a_pipeline_ending_in_to_tensor_keeps_it_channels_first(
        self, transpose_mask: bool, keymap: bool
    ) -> None:
        # ToTensorV2(transpose_mask=True) made it CxHxW: put channels first again, it
        # came back (W, C, H)
        sample = _tensor_sample()
        transform = A.Compose([A.HorizontalFlip(p=1.0), ToTensorV2(transpose_mask=transpose_mask)])
        adapter = KeyMap(image="image", mask="mask") if keymap else None
        out = RandomAugmentWrapper([sample], transform, seed=0, adapter=adapter)[0]
        assert torch.equal(out["image"], sample["image"].flip(-1))
        assert torch.equal(out["mask"], sample["mask"].flip(-1))

    @pytest.mark.parametrize("kind", ["mosaic", "mixup", "cutmix"])
    def test_the_multi_sample_wrappers_read_it(self, kind: str) -> None:
        samples = [_tensor_sample() for _ in range(3)]
        if kind == "mosaic":
            out = MosaicDataset(samples, seed=0, output_size=32)[0]
        else:
            out = (MixUpDataset if kind == "mixup" else CutMixDataset)(samples, seed=0)[0]
        assert out["mask"].shape == (1, *out["image"].shape[1:])
        assert set(out["mask"].unique().tolist()) <= {0, 1, 2, 3}
        assert (out["mask"] == 1).any()


def _pil_mask() -> Image.Image:
    mask = Image.new("P", (24, 16), 0)
    mask.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0])
    mask.paste(1, (0, 0, 4, 16))
    mask.paste(2, (0, 0, 24, 2))
    return mask


class TestPilMasks:
    """A dict sample's PIL ``mask`` crashed albumentations, or came back a numpy array."""

    def test_a_flip_moves_it_and_it_comes_back_in_its_mode_and_palette(self) -> None:
        mask = _pil_mask()
        sample = {"image": np.zeros((16, 24, 3), np.uint8), "mask": mask}
        out = RandomAugmentWrapper([sample], A.HorizontalFlip(p=1.0), seed=0)[0]
        assert isinstance(out["mask"], Image.Image)
        assert (out["mask"].mode, out["mask"].getpalette()) == ("P", mask.getpalette())
        np.testing.assert_array_equal(np.asarray(out["mask"]), np.asarray(mask)[:, ::-1])

    def test_instance_masks_as_a_list_of_pil_images(self) -> None:
        masks = [Image.new("L", (24, 16), 0), Image.new("L", (24, 16), 0)]
        masks[0].paste(1, (0, 0, 4, 16))
        masks[1].paste(1, (20, 0, 24, 16))
        sample = {"image": np.zeros((16, 24, 3), np.uint8), "masks": masks}
        out = RandomAugmentWrapper([sample], A.HorizontalFlip(p=1.0), seed=0)[0]
        assert type(out["masks"]) is list
        assert [(type(m), m.mode) for m in out["masks"]] == [(Image.Image, "L")] * 2
        assert [np.asarray(m).tolist() for m in out["masks"]] == [
            np.asarray(m)[:, ::-1].tolist() for m in masks
        ]

    @pytest.mark.parametrize("kind", ["mosaic", "mixup", "cutmix"])
    def test_the_multi_sample_wrappers_give_it_back_pil(self, kind: str) -> None:
        samples = [
            {"image": np.zeros((16, 24, 3), np.uint8), "mask": _pil_mask()} for _ in range(3)
        ]
        wrappers = {"mosaic": lambda: MosaicDataset(samples, seed=0, output_size=32),
                    "mixup": lambda: MixUpDataset(samples, seed=0),
                    "cutmix": lambda: CutMixDataset(samples, seed=0)}  # fmt: skip
        out = wrappers[kind]()[0]
        assert isinstance(out["mask"], Image.Image)
        assert out["mask"].mode == "P"
        assert out["mask"].getpalette() == _pil_mask().getpalette()
        assert out["mask"].size == (out["image"].shape[1], out["image"].shape[0])
        assert set(np.unique(np.asarray(out["mask"])).tolist()) == {0, 1, 2}


class TestTensorsTheTransformMade:
    """A mask ``ToTensorV2`` made a tensor came back numpy, or PIL for a pair (no collate)."""

    @staticmethod
    def _sample() -> dict[str, Any]:
        mask = np.zeros((16, 24), np.uint8)
        mask[:, :4] = 1
        image = np.zeros((16, 24, 3), np.uint8)
        return {"image": image, "mask": mask, "masks": [mask, 1 - mask]}

    @pytest.mark.parametrize("keymap", [False, True])
    def test_a_numpy_mask_and_masks_come_back_as_its_tensors(self, keymap: bool) -> None:
        sample = self._sample()
        transform = A.Compose([A.HorizontalFlip(p=1.0), ToTensorV2()])
        adapter = KeyMap(image="image", mask="mask", masks="masks") if keymap else None
        out = RandomAugmentWrapper([sample], transform, seed=0, adapter=adapter)[0]
        direct = transform(image=sample["image"], mask=sample["mask"], masks=sample["masks"])
        assert type(out["mask"]) is torch.Tensor
        assert torch.equal(out["mask"], direct["mask"])
        assert torch.equal(out["mask"], torch.from_numpy(sample["mask"][:, ::-1].copy()))
        assert type(out["masks"]) is torch.Tensor
        assert out["masks"].shape == (2, 16, 24)
        assert torch.equal(out["masks"][1], 1 - out["mask"])

    def test_a_pil_pair_mask_comes_back_a_tensor_that_collates(self) -> None:
        mask = np.zeros((16, 24), np.uint8)
        mask[:, :4] = 5
        palette = Image.fromarray(mask, mode="L").convert("P")
        image = Image.fromarray(np.zeros((16, 24, 3), np.uint8))
        transform = A.Compose([A.HorizontalFlip(p=1.0), ToTensorV2()])
        wrapped = RandomAugmentWrapper([(image, palette)] * 2, transform, seed=0)
        _, out = wrapped[0]
        assert type(out) is torch.Tensor
        assert torch.equal(out, torch.from_numpy(mask[:, ::-1].copy()))
        images, masks = next(iter(torch.utils.data.DataLoader(wrapped, batch_size=2)))
        assert images.shape == (2, 3, 16, 24)
        assert masks.shape == (2, 16, 24)

    def test_masks_given_as_tensors_keep_their_list(self) -> None:
        sample = _tensor_sample()
        sample["masks"] = [sample["mask"][0], 1 - sample["mask"][0]]
        transform = A.Compose([A.HorizontalFlip(p=1.0), ToTensorV2()])
        out = RandomAugmentWrapper([sample], transform, seed=0)[0]
        assert type(out["masks"]) is list
        assert [tuple(m.shape) for m in out["masks"]] == [(16, 24), (16, 24)]
        assert torch.equal(out["masks"][0], sample["masks"][0].flip(-1))


class TestForDataset:
    def test_a_hugging_face_row_without_boxes_reads_as_the_other_rows(self) -> None:
        datasets = pytest.importorskip("datasets", reason="the Hugging Face tests need `datasets`")
        features = datasets.Features({
            "image": datasets.Image(),
            "bboxes": datasets.List(datasets.List(datasets.Value("float32"), length=4)),
            "labels": datasets.List(datasets.Value("int64")),
        })  # fmt: skip
        columns = {
            "image": [Image.new("RGB", (32, 24), (50 * i, 0, 0)) for i in range(4)],
            "bboxes": [[]] + [[[4.0, 4.0, 20.0, 16.0]]] * 3,
            "labels": [[]] + [[1]] * 3,
        }
        rows = datasets.Dataset.from_dict(columns, features=features).with_format("numpy")
        assert rows[0]["bboxes"].dtype == object  # Hugging Face's: no dtype
        bound = DefaultAdapter().for_dataset(rows)
        data, state = bound.unpack(rows[0], TARGETS)
        assert (data["bboxes"].dtype, data["bboxes"].shape) == (np.float32, (0, 4))
        assert bound.repack(data, state)["bboxes"].dtype == np.float32
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
        outputs = [RandomAugmentWrapper(rows, flip, seed=0)[i]["bboxes"] for i in range(4)]
        assert [(b.dtype, b.shape[1:]) for b in outputs] == [(np.float32, (4,))] * 4

    def test_other_datasets_keep_the_adapter(self) -> None:
        adapter = DefaultAdapter()
        assert adapter.for_dataset([{"image": np.zeros((2, 2), np.uint8)}]) is adapter


class TestTorchvisionTensors:
    """Against the stand-in for ``torchvision.tv_tensors`` (``tests/samples/tv_standin.py``);
    ``tests/samples/test_tv_tensors.py`` runs against the real one in ``.venv-tv``."""

    def test_boxes_and_masks_keep_their_class_and_get_the_output_canvas(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        tv = tv_standin.install(monkeypatch)
        boxes = tv_standin.make(
            tv.BoundingBoxes, [[1.0, 2.0, 5.0, 6.0]], format="XYXY", canvas_size=(16, 24)
        )
        masks = tv_standin.make(tv.Mask, np.ones((1, 16, 24), np.uint8))
        image = tv_standin.make(tv.Image, torch.zeros(3, 16, 24, dtype=torch.uint8))
        sample = (image, {"boxes": boxes, "labels": torch.tensor([3]), "masks": masks})
        resize = A.Compose([A.Resize(32, 48)], bbox_params=bbox_params("pascal_voc"))
        out_image, target = RandomAugmentWrapper([sample], resize, seed=0)[0]
        assert type(out_image) is tv.Image
        assert tuple(out_image.shape) == (3, 32, 48)
        assert type(target["boxes"]) is tv.BoundingBoxes
        assert target["boxes"].canvas_size == (32, 48)  # the output's, not the input's
        assert target["boxes"].format == "XYXY"
        assert target["boxes"].tolist() == [[2.0, 4.0, 10.0, 12.0]]
        assert type(target["masks"]) is tv.Mask
        assert tuple(target["masks"].shape) == (1, 32, 48)
        assert type(target["labels"]) is torch.Tensor

    def test_a_dict_sample_keeps_its_classes_too(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tv = tv_standin.install(monkeypatch)
        boxes = tv_standin.make(
            tv.BoundingBoxes, [[1.0, 2.0, 5.0, 6.0]], format="XYXY", canvas_size=(16, 24)
        )
        image = tv_standin.make(tv.Image, torch.zeros(3, 16, 24, dtype=torch.uint8))
        sample = {"image": image, "bboxes": boxes, "labels": [3]}
        resize = A.Compose([A.Resize(8, 12)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], resize, seed=0)[0]
        assert type(out["image"]) is tv.Image
        assert type(out["bboxes"]) is tv.BoundingBoxes
        assert out["bboxes"].canvas_size == (8, 12)

    def test_a_list_of_masks_keeps_each_items_class(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tv = tv_standin.install(monkeypatch)
        masks = [tv_standin.make(tv.Mask, torch.zeros(16, 24, dtype=torch.uint8)) for _ in range(2)]
        boxes = torch.tensor([[1.0, 2.0, 5.0, 6.0], [8.0, 2.0, 12.0, 6.0]])
        sample = (torch.zeros(3, 16, 24, dtype=torch.uint8),
                  {"boxes": boxes, "labels": torch.tensor([3, 4]), "masks": masks})  # fmt: skip
        resize = A.Compose([A.Resize(8, 12)], bbox_params=bbox_params("pascal_voc"))
        target = RandomAugmentWrapper([sample], resize, seed=0)[0][1]
        assert type(target["masks"]) is list
        assert [type(mask) for mask in target["masks"]] == [tv.Mask, tv.Mask]
        assert [tuple(mask.shape) for mask in target["masks"]] == [(8, 12), (8, 12)]

    @pytest.mark.parametrize("kind", ["BoundingBoxes", "KeyPoints"])
    def test_a_canvas_that_is_not_the_image_is_refused(
        self, monkeypatch: pytest.MonkeyPatch, kind: str
    ) -> None:
        # Boxes of a 100x100 original beside the image resized to 16x24 (canvas_size says
        # so) were moved as the image's pixels, and came back with the image's canvas.
        tv = tv_standin.install(monkeypatch)
        boxes = tv_standin.make(
            tv.BoundingBoxes, [[1.0, 2.0, 5.0, 6.0]], format="XYXY",
            canvas_size=(100, 100) if kind == "BoundingBoxes" else (16, 24),
        )  # fmt: skip
        points = tv_standin.make(tv.KeyPoints, [[1.0, 2.0]], canvas_size=(100, 100))
        image = tv_standin.make(tv.Image, torch.zeros(3, 16, 24, dtype=torch.uint8))
        target = {"boxes": boxes, "labels": torch.tensor([3])}
        if kind == "KeyPoints":
            target["keypoints"] = points
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"),
                         keypoint_params=A.KeypointParams("xy"))  # fmt: skip
        said = re.escape(f"is a torchvision {kind} with canvas_size=(100, 100), but the image "
                         "is (16, 24) (height, width)")  # fmt: skip
        for wrapper in (RandomAugmentWrapper([(image, target)], flip, seed=0),
                        MosaicDataset([(image, target)] * 2, seed=0, output_size=32),
                        RandomAugmentWrapper([{"image": image, "bboxes": boxes, "labels": [3],
                                               "keypoints": points if kind == "KeyPoints"
                                               else [[1.0, 2.0]]}], flip, seed=0,
                                             adapter=KeyMap(bboxes="bboxes", labels="labels",
                                                            keypoints="keypoints"))):  # fmt: skip
            with pytest.raises(SampleError, match=said):
                wrapper[0]
