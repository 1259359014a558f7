from __future__ import annotations

import re
from typing import Any
from unittest import mock

import albumentations as A
import numpy as np
import pytest
import torch

from rankaug._albumentations import AlbumentationsDriver
from rankaug.keys import KeyedRandom, make_seed_sequence
from rankaug.samples import DefaultAdapter
from rankaug.transforms import make_driver
from tests.albu import bbox_params, keypoint_params


class Own(DefaultAdapter):
    """A subclass: its samples go through unpack and repack (no plain call)."""


def keyed(index: int) -> KeyedRandom:
    return KeyedRandom(make_seed_sequence(0, epoch=0, index=index))


def geometric(**params: Any) -> A.Compose:
    return A.Compose([A.Affine(rotate=(-30, 30), scale=(0.5, 1.5), p=1), A.HorizontalFlip()],
                     bbox_params=bbox_params("pascal_voc", ["labels"]), **params)  # fmt: skip


def driver(adapter: DefaultAdapter, **params: Any) -> AlbumentationsDriver:
    made = make_driver(geometric(**params), adapter)
    assert isinstance(made, AlbumentationsDriver)
    return made


def boxed(**more: Any) -> dict[str, Any]:
    ramp = np.arange(24 * 32 * 3).reshape(24, 32, 3) % 251
    boxes = np.array([[2, 3, 12, 15], [18, 1, 30, 9], [1, 1, 31, 23]], np.float32)
    return {"image": ramp.astype(np.uint8), "bboxes": boxes, "labels": np.arange(3), **more}


class TestAlbumentationsDriver:
    @pytest.mark.parametrize(
        "sample",
        [
            boxed(),  # plain: the adapter's one call
            boxed(mask=np.eye(24, 32, dtype=np.uint8)),  # a mask to check: the steps
            boxed(masks=[np.eye(24, 32, dtype=np.uint8)] * 3),  # instance masks: the steps
            boxed(path="a.png"),  # a value kept aside: the steps
            boxed(labels=np.arange(3).reshape(3, 1)),  # (N, 1) classes: plain
            {
                "image": np.zeros((8, 8), np.uint8),
                "labels": np.zeros(0, np.int64),
                "bboxes": np.zeros((0, 4), np.float32),
            },
        ],
    )
    def test_plain_samples_give_what_the_steps_give(self, sample: dict[str, Any]) -> None:
        plain, steps = driver(DefaultAdapter()), driver(Own())
        assert plain.plain is not None
        assert steps.plain is None
        for index in range(6):
            got, want = plain(dict(sample), keyed(index)), steps(dict(sample), keyed(index))
            assert list(got) == list(want)
            for key, value in want.items():
                assert type(got[key]) is type(value)
                assert np.array_equal(np.asarray(got[key]), np.asarray(value))
                assert np.asarray(got[key]).dtype == np.asarray(value).dtype

    @pytest.mark.parametrize("adapter", [DefaultAdapter(), Own()])
    def test_a_sample_without_objects_is_flipped_and_keeps_its_keys(
        self, adapter: DefaultAdapter
    ) -> None:
        # torchvision's wrap_dataset_for_transforms_v2(CocoDetection) gives an image
        # without annotations the target {"image_id": ...}: no boxes, no labels
        image = np.zeros((4, 6, 3), np.uint8)
        image[:, :2] = (255, 0, 0)  # a red band on the left, black elsewhere
        flipped = np.zeros_like(image)
        flipped[:, 4:] = (255, 0, 0)
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        made = make_driver(flip, adapter)
        out = made({"image": image, "path": "a.png"}, keyed(0))
        assert list(out) == ["image", "path"]
        assert np.array_equal(out["image"], flipped)
        assert out["path"] == "a.png"
        pair = made((image, {"image_id": 7}), keyed(1))
        assert type(pair) is tuple
        assert np.array_equal(pair[0], flipped)
        assert pair[1] == {"image_id": 7}

    def test_boxes_under_a_key_not_read_are_no_image_without_objects(self) -> None:
        # boxes under a name the adapter does not read (and no labels) passed as an image
        # without objects: the image flipped, the boxes left where they were
        image = np.zeros((4, 6, 3), np.uint8)
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        made = make_driver(flip, DefaultAdapter())
        boxes = np.array([[0, 0, 2, 2]], np.float32)
        said = r"no boxes \('bboxes'\) nor label fields, but '{}' may hold its objects"
        for key, value in (("bbox_xyxy", boxes), ("target", torch.as_tensor(boxes))):
            with pytest.raises(ValueError, match=said.format(key)):
                made({"image": image, key: value}, keyed(0))
            with pytest.raises(ValueError, match=said.format(key)):
                made((image, {"image_id": 7, key: value}), keyed(0))
        rows = [[0.0, 0.0, 2.0, 2.0]]
        with pytest.raises(ValueError, match=said.format("rects")):
            made({"image": image, "rects": rows}, keyed(0))
        kept = {"image_id": 7, "size": [4, 6], "none": np.zeros((0, 4))}  # flat or empty
        target = made((image, kept), keyed(0))[1]
        assert target["image_id"] == 7
        assert target["size"] == [4, 6]
        assert target["none"] is kept["none"]

    @pytest.mark.parametrize("adapter", [DefaultAdapter(), Own()])
    def test_integer_boxes_flipped_stay_integer(self, adapter: DefaultAdapter) -> None:
        # flipped through albumentations' float32 normalised boxes: 45 came back 44.9999988
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc"))
        made = make_driver(flip, adapter)
        image = np.zeros((40, 50, 3), np.uint8)
        boxes = np.array([[5, 5, 25, 25], [0, 1, 7, 9]], np.int64)
        out = made({"image": image, "bboxes": boxes, "labels": np.arange(2)}, keyed(0))
        assert out["bboxes"].dtype == np.int64
        assert out["bboxes"].tolist() == [[25, 5, 45, 25], [43, 1, 50, 9]]
        wide = np.zeros((16, 640, 3), np.uint8)  # x_min 0.9999847 (round-off of the width)
        near_edge = np.array([[630, 0, 639, 2]], np.int64)
        out = made({"image": wide, "bboxes": near_edge, "labels": np.arange(1)}, keyed(0))
        assert out["bboxes"].dtype == np.int64
        assert out["bboxes"].tolist() == [[1, 0, 10, 2]]

    @pytest.mark.parametrize(
        ("box_format", "box"), [("pascal_voc", [5, 4, 5, 9]), ("coco", [5, 4, 3, 0])]
    )
    def test_a_zero_size_box_albumentations_refuses_is_named(
        self, box_format: str, box: list[int]
    ) -> None:
        # CocoDetection keeps zero-size boxes; albumentations refused one with its
        # normalised corners and the label's index appended, naming no fix
        made, sample = _flip_beside_a_good_box(box_format, box)
        said = rf"box 1, {box}, has zero width or height.*filter_invalid_bboxes=True"
        with pytest.raises(ValueError, match=said.replace("[", r"\[").replace("]", r"\]")):
            made(sample, keyed(0))

    @pytest.mark.parametrize(
        ("box_format", "box"), [("pascal_voc", [0.5, 0.5, 0.2, 0.3]), ("coco", [5, 4, -3, 2])]
    )
    def test_boxes_of_another_format_are_not_told_to_be_dropped(
        self, box_format: str, box: list[float]
    ) -> None:
        # YOLO boxes read as pascal_voc (x_max < x_min) were called "zero width or height"
        # and told filter_invalid_bboxes=True, which drops every one of them without a word
        made, sample = _flip_beside_a_good_box(box_format, box)
        with pytest.raises(ValueError, match=re.escape(
            f"box 1, {box}, has a negative width or height read as {box_format!r} ("
        )) as caught:  # fmt: skip
            made(sample, keyed(0))
        assert "are the boxes in another format?" in str(caught.value)
        assert "filter_invalid_bboxes" not in str(caught.value)

    def test_boxes_without_their_label_field_are_named(self) -> None:
        made = driver(DefaultAdapter())
        sample = boxed()
        del sample["labels"]
        with pytest.raises(
            ValueError, match=r"no 'labels', .*BboxParams\(label_fields=\['labels'\]"
        ):
            made(sample, keyed(0))
        two = make_driver(
            A.Compose(
                [A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc", ["labels", "ids"])
            ),
            DefaultAdapter(),
        )
        with pytest.raises(ValueError, match=r"no 'bboxes', 'ids', .*\['labels', 'ids'\]"):
            two({"image": sample["image"], "labels": np.arange(3)}, keyed(0))

    @pytest.mark.parametrize("key", ["labels", "class_labels"])
    def test_labels_no_label_field_carries_are_refused_when_boxes_drop(self, key: str) -> None:
        # it was: 'labels' (accepted by albumentations beside any BboxParams, not moved)
        # was handed to the pipeline, came back unchanged beside the boxes kept, stale
        crop = A.Compose([A.Crop(0, 0, 16, 16)], bbox_params=bbox_params("pascal_voc", ()))
        made = make_driver(crop, DefaultAdapter())
        sample = {**boxed(), key: np.array([7, 8, 9])}
        if key != "labels":
            del sample["labels"]
        said = rf"kept 2 of 3 boxes, but '{key}' \(one entry per box\) did not go with them"
        with pytest.raises(ValueError, match=said):
            made(sample, keyed(0))
        flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params("pascal_voc", ()))
        kept = make_driver(flip, DefaultAdapter())(sample, keyed(0))  # none dropped: as it was
        assert kept[key] is sample[key]
        assert kept["bboxes"][:, 0].tolist() == [20, 2, 1]

    def test_a_label_field_given_none_beside_boxes_is_named(self) -> None:
        made = driver(DefaultAdapter())
        with pytest.raises(ValueError, match=r"no 'labels', but .*; a None value is none\)"):
            made(boxed(labels=None), keyed(0))

    def test_the_plain_keys_leave_out_those_it_checks(self) -> None:
        moved = driver(DefaultAdapter())  # keypoints refused (no keypoint_params), a mask moved
        assert moved.refused == {"keypoints"}
        assert moved.moves_masks
        assert moved.plain == moved.targets - {"keypoints", "mask", "masks"}
        points = driver(DefaultAdapter(), keypoint_params=keypoint_params("xy"))
        assert points.points == ("keypoints",)
        assert points.plain == points.targets - {"keypoints", "mask", "masks"}
        pixels = make_driver(A.Compose([A.RandomBrightnessContrast()]), DefaultAdapter())
        assert isinstance(pixels, AlbumentationsDriver)
        assert not pixels.moves_masks
        assert pixels.plain == pixels.targets - {"masks"}
        assert {"image", "mask"} <= pixels.plain

    def test_a_mask_that_does_not_cover_its_image_is_refused_still(self) -> None:
        sample = boxed(mask=np.zeros((1, 24, 32), np.uint8))
        with pytest.raises(ValueError, match="the sample's mask"):
            driver(DefaultAdapter())(sample, keyed(0))

    def test_moved_masks_of_additional_targets_and_wide_labels_take_the_steps(self) -> None:
        # OpenCV warps no bool mask, albumentations hashes no (N, K) label: the steps
        # convert them, so the one call must not take them
        made = driver(DefaultAdapter(), additional_targets={"seg": "mask"})
        assert "seg" in made.targets
        assert "seg" not in made.plain  # type: ignore[operator]
        seg = np.zeros((24, 32), bool)
        seg[4:12, 6:20] = True
        as_bool = made(boxed(seg=seg), keyed(1))
        as_uint8 = made(boxed(seg=seg.view(np.uint8)), keyed(1))
        assert as_bool["seg"].dtype == np.bool_
        assert np.array_equal(as_bool["seg"], as_uint8["seg"].astype(bool))
        wide = made(boxed(labels=np.arange(6).reshape(3, 2)), keyed(1))
        narrow = made(boxed(), keyed(1))
        assert np.array_equal(wide["labels"], np.arange(6).reshape(3, 2)[narrow["labels"]])

    @pytest.mark.parametrize("step", ["unpack", "repack"])
    def test_a_step_patched_on_the_adapter_class_is_used(self, step: str) -> None:
        made = driver(DefaultAdapter())
        made(boxed(), keyed(0))
        original = getattr(DefaultAdapter, step)
        calls = []

        def spy(self: DefaultAdapter, *args: Any) -> Any:
            calls.append(step)
            return original(self, *args)

        # before: a plain sample took the one call, the patched step passed over
        with mock.patch.object(DefaultAdapter, step, spy):
            out = made(boxed(), keyed(1))
        assert calls == [step]
        want = driver(Own())(boxed(), keyed(1))
        assert all(np.array_equal(out[key], value) for key, value in want.items())

    def test_a_step_given_to_the_adapter_afterwards_is_used(self) -> None:
        adapter = DefaultAdapter()
        made = make_driver(A.Compose([A.RandomBrightnessContrast()]), adapter)
        assert isinstance(made, AlbumentationsDriver)
        assert made.adapter is adapter  # no box format to tell it: not copied
        sample = {"image": boxed()["image"]}
        made(dict(sample), keyed(0))

        def unpack(sample: Any, targets: Any) -> Any:
            raise RuntimeError("the adapter's own unpack")

        # before: the one call went on without it, as without the wrapper's other steps
        adapter.unpack = unpack  # type: ignore[method-assign]
        with pytest.raises(RuntimeError, match="the adapter's own unpack"):
            made(dict(sample), keyed(1))

    def test_one_value_rows_take_the_one_call(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # (N, 1) classes took the steps, as (N, K) label fields must (about 17 us a sample)
        calls: list[bool] = []
        original = DefaultAdapter._call_plain

        def spy(self: DefaultAdapter, sample: Any, targets: Any, call: Any) -> Any:
            out = original(self, sample, targets, call)
            calls.append(out is not None)
            return out

        monkeypatch.setattr(DefaultAdapter, "_call_plain", spy)
        made = driver(DefaultAdapter())
        out = made(boxed(labels=np.arange(3).reshape(3, 1)), keyed(1))
        assert calls == [True]
        assert out["labels"].shape[1:] == (1,)
        made(boxed(labels=np.arange(6).reshape(3, 2)), keyed(1))
        assert calls == [True]  # (N, 2): the steps, not the one call


class TestImageDtypesOpenCVCannotResample:
    # float16, int32, int8 images crashed deep in OpenCV under warps and resizes
    # ("(-215:Assertion failed) ifunc != 0 in function 'remap'"), naming no dtype
    @pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int8])
    @pytest.mark.parametrize("step", [A.Affine(rotate=10, p=1), A.Resize(12, 16)])
    def test_a_warp_or_resize_names_the_dtype(self, dtype: Any, step: Any) -> None:
        made = make_driver(A.Compose([step]), DefaultAdapter())
        sample = {"image": np.ones((24, 32, 3), dtype)}
        name = np.dtype(dtype).name
        with pytest.raises(
            TypeError, match=rf"^the sample's 'image' has dtype {name}, which"
        ) as caught:
            made(sample, keyed(0))
        assert "uint8, uint16, int16, float32, float64" in str(caught.value)
        assert type(caught.value.__cause__).__module__ == "cv2"  # what OpenCV said is kept

    def test_a_tensor_image_and_an_additional_image_are_named(self) -> None:
        torch = pytest.importorskip("torch")
        made = make_driver(A.Compose([A.Resize(12, 16)]), DefaultAdapter())
        with pytest.raises(TypeError, match=r"^the sample's 'image' has dtype float16"):
            made({"image": torch.ones(3, 24, 32, dtype=torch.float16)}, keyed(0))
        pair = make_driver(
            A.Compose([A.Resize(12, 16)], additional_targets={"image2": "image"}), DefaultAdapter()
        )
        sample = {"image": np.ones((24, 32, 3), np.uint8), "image2": np.ones((24, 32, 3), np.int32)}
        with pytest.raises(TypeError, match=r"^the sample's 'image2' has dtype int32"):
            pair(sample, keyed(0))

    @pytest.mark.parametrize("first", [A.ToFloat(max_value=1000), A.Normalize(mean=0, std=1)])
    def test_pipelines_that_choose_their_dtype_first_still_run(self, first: Any) -> None:
        # a cast of the input (and back) would clash with them: nothing is cast
        made = make_driver(A.Compose([first, A.Resize(12, 16)]), DefaultAdapter())
        out = made({"image": np.full((24, 32, 3), 100, np.int32)}, keyed(0))
        assert out["image"].dtype == np.float32
        assert out["image"].shape == (12, 16, 3)

    def test_a_flip_alone_keeps_an_int32_image_as_it_was(self) -> None:
        made = make_driver(A.Compose([A.HorizontalFlip(p=1)]), DefaultAdapter())
        image = np.arange(24 * 32 * 3, dtype=np.int32).reshape(24, 32, 3)
        out = made({"image": image}, keyed(0))
        assert out["image"].dtype == np.int32
        assert np.array_equal(out["image"], image[:, ::-1])


class TestAdditionalTargetsInTheImagesLayout:
    # a CxHxW tensor under an additional image target went to albumentations as it was
    # ("Height and Width of image, mask or masks should be equal")
    @staticmethod
    def pipeline(*steps: Any) -> AlbumentationsDriver:
        made = make_driver(
            A.Compose(list(steps), additional_targets={"image2": "image", "mask2": "mask"}),
            DefaultAdapter(),
        )
        assert isinstance(made, AlbumentationsDriver)
        return made

    def test_tensor_images_and_masks_are_read_channels_first_and_come_back_so(self) -> None:
        torch = pytest.importorskip("torch")
        ramp = torch.arange(3 * 24 * 32, dtype=torch.int64).reshape(3, 24, 32) % 251
        image, image2 = ramp.to(torch.uint8), (250 - ramp).to(torch.uint8)
        mask2 = (ramp[:1] % 7).to(torch.uint8)  # (1, H, W), as ToTensor makes of a mask
        out = self.pipeline(A.HorizontalFlip(p=1))(
            {"image": image, "image2": image2, "mask2": mask2}, keyed(0)
        )
        for key, before in (("image", image), ("image2", image2), ("mask2", mask2)):
            assert type(out[key]) is torch.Tensor
            assert out[key].dtype == torch.uint8
            assert torch.equal(out[key], before.flip(-1))

    def test_a_resize_gives_each_the_output_size_in_its_layout(self) -> None:
        torch = pytest.importorskip("torch")
        sample = {
            "image": torch.full((3, 24, 32), 7, dtype=torch.uint8),
            "image2": torch.full((3, 24, 32), 9, dtype=torch.uint8),
            "mask2": torch.full((1, 24, 32), 2, dtype=torch.uint8),
        }
        out = self.pipeline(A.Resize(12, 16))(sample, keyed(0))
        assert torch.equal(out["image2"], torch.full((3, 12, 16), 9, dtype=torch.uint8))
        assert torch.equal(out["mask2"], torch.full((1, 12, 16), 2, dtype=torch.uint8))

    def test_pil_and_numpy_additional_images_keep_their_types(self) -> None:
        torch = pytest.importorskip("torch")
        from PIL import Image

        grey = np.arange(24 * 32, dtype=np.uint8).reshape(24, 32)
        sample = {
            "image": torch.zeros(3, 24, 32, dtype=torch.uint8),
            "image2": Image.fromarray(grey),
            "mask2": grey.copy(),
        }
        out = self.pipeline(A.HorizontalFlip(p=1))(sample, keyed(0))
        assert isinstance(out["image2"], Image.Image)
        assert out["image2"].mode == "L"
        assert np.array_equal(np.asarray(out["image2"]), grey[:, ::-1])
        assert type(out["mask2"]) is np.ndarray
        assert np.array_equal(out["mask2"], grey[:, ::-1])

    @pytest.mark.parametrize(
        ("shape", "message"),
        [
            ((24, 32, 3), r"^image2 must be a CxHxW tensor, .* give image2\.permute\(2, 0, 1\)"),
            ((2, 3, 24, 32), r"^image2 must be a CxHxW or HxW tensor, got a tensor of shape"),
        ],
    )
    def test_an_additional_image_refused_is_named(
        self, shape: tuple[int, ...], message: str
    ) -> None:
        torch = pytest.importorskip("torch")
        sample = {"image": torch.zeros(3, 24, 32), "image2": torch.zeros(shape)}
        with pytest.raises(ValueError, match=message):
            self.pipeline(A.HorizontalFlip(p=1))(sample, keyed(0))


class TestKeypointShapes:
    """Keypoints albumentations does not take are refused before it fails on them."""

    def run(self, points: Any, **more: Any) -> dict[str, Any]:
        compose = A.Compose(
            [A.HorizontalFlip(p=1.0)],
            keypoint_params=keypoint_params("xy", ["instance"]),
            additional_targets={"pose": "keypoints"},
        )
        sample = {"image": np.zeros((20, 30, 3), np.uint8), "keypoints": points,
                  "instance": np.zeros(len(points), np.int64), **more}  # fmt: skip
        out: dict[str, Any] = make_driver(compose, DefaultAdapter())(sample, keyed(0))
        return out

    def test_a_flat_coco_list_is_refused_with_the_reshape(self) -> None:
        # albumentations: "IndexError: too many indices for array"
        with pytest.raises(
            ValueError,
            match=r"^the sample's 'keypoints' must be keypoints of shape \(K, 2\+\), one row "
            r"\(x, y, \.\.\.\) per keypoint, got shape \(6,\): a flat list such as COCO's "
            r"\[x1, y1, v1, x2, y2, v2, \.\.\.\] is one row per keypoint once reshaped: "
            r"np\.reshape\(points, \(-1, 3\)\)",
        ):
            self.run([3, 4, 2, 10, 11, 1])

    @pytest.mark.parametrize("shape", [(2, 4, 3), (2, 4, 2), (1, 17, 3)])
    def test_per_instance_pose_arrays_are_refused_with_the_rows_to_give(
        self, shape: tuple[int, ...]
    ) -> None:
        # albumentations: "could not broadcast input array from shape (2,3) into shape (2,)"
        with pytest.raises(
            ValueError,
            match=rf"'keypoints' must be keypoints of shape \(K, 2\+\), one row \(x, y, \.\.\.\) "
            rf"per keypoint, got shape \({shape[0]}, {shape[1]}, {shape[2]}\): per-instance "
            r"pose arrays \(N, K, 2\|3\) go as N\*K rows, points\.reshape\(-1, "
            r"points\.shape\[-1\]\), with each keypoint's instance \(and joint\) in a "
            r"per-keypoint label field of A\.KeypointParams\(label_fields=\[\.\.\.\]\)",
        ):
            self.run(torch.ones(shape))

    def test_a_row_without_y_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"got shape \(3, 1\): each row needs at least x"):
            self.run(np.ones((3, 1)))

    def test_additional_keypoints_are_named_by_their_key(self) -> None:
        with pytest.raises(ValueError, match=r"^the sample's 'pose' must be keypoints of shape"):
            self.run(np.ones((2, 2)), pose=np.ones((1, 2, 3)))

    def test_the_advised_rows_go_through_and_reshape_back(self) -> None:
        pose = np.array([[[1.0, 2.0, 2.0], [5.0, 6.0, 1.0]], [[7.0, 8.0, 2.0], [9.0, 3.0, 0.0]]])
        rows = pose.reshape(-1, 3)
        out = self.run(rows, instance=np.repeat(np.arange(2), 2))
        assert out["keypoints"].shape == (4, 3)
        back = out["keypoints"].reshape(2, 2, 3)
        assert back[..., 1:].tolist() == pose[..., 1:].tolist()  # y and v of each instance
        assert (back[..., 0] + pose[..., 0] == back[0, 0, 0] + 1.0).all()  # x mirrored
        assert out["instance"].tolist() == [0, 0, 1, 1]

    @pytest.mark.parametrize("points", [[], np.zeros((0, 2)), np.zeros((0, 3), np.float32)])
    def test_empty_keypoints_pass(self, points: Any) -> None:
        assert len(self.run(points)["keypoints"]) == 0


def _flip_beside_a_good_box(box_format: str, box: list[Any]) -> tuple[Any, dict[str, Any]]:
    """A flip's driver, and a sample whose box 1 is ``box`` (``box_format``) after a good one."""
    flip = A.Compose([A.HorizontalFlip(p=1)], bbox_params=bbox_params(box_format))
    sample = {
        "image": np.zeros((24, 32, 3), np.uint8),
        "bboxes": np.array([[2, 3, 10, 12], box], np.float32),
        "labels": np.arange(2),
    }
    return make_driver(flip, DefaultAdapter()), sample
