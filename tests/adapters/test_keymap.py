"""``KeyMap``: dotted paths in, the same nested structure and types out, per-object
fields aligned with the boxes or refused."""

from __future__ import annotations

import re
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch
from PIL import Image

from rankaug import (
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    RandomAugmentWrapper,
    SampleError,
    Targets,
)
from rankaug.adapters import KeyMap
from tests.albu import bbox_params
from tests.samples import tv_standin

TARGETS = frozenset({"image", "bboxes", "labels", "mask", "masks", "keypoints"})


def nested(boxes: int = 2) -> dict[str, Any]:
    return {
        "meta": {"path": "a.png", "size": [16, 24]},
        "pixels": {"rgb": np.arange(16 * 24 * 3, dtype=np.uint8).reshape(16, 24, 3)},
        "objects": {
            "bbox": torch.tensor([[1.0, 2.0, 5.0, 6.0], [14.0, 4.0, 20.0, 12.0]][:boxes]),
            "category": [4, 7][:boxes],
            "id": [11, 12][:boxes],
        },
    }


ADAPTER = KeyMap("pixels.rgb", bboxes="objects.bbox", labels="objects.category")


class TestKeyMap:
    @pytest.mark.parametrize(
        "name", ["image", "bboxes", "labels", "mask", "masks", "keypoints", "segments"]
    )
    def test_an_argument_kept_in_its_keys_cannot_be_assigned(self, name: str) -> None:
        # before: adapter.bboxes = "objects.bbox" made an attribute nothing read: the
        # samples were still read by the paths the adapter was made with
        adapter = KeyMap(bboxes="boxes", labels="cls")
        with pytest.raises(
            AttributeError,
            match=rf"^KeyMap\.{name} cannot be assigned: {name} is an argument of KeyMap, "
            rf"checked into its keys when it is made.*make a new KeyMap with the {name} you want",
        ):
            setattr(adapter, name, "objects.bbox")
        assert not hasattr(adapter, name)
        assert adapter.keys == {"image": "image", "bboxes": "boxes", "labels": "cls"}

    def test_its_paths_and_box_format_cannot_be_assigned(self) -> None:
        # the paths are read into the unpacking once: an assignment was silently ignored
        adapter = KeyMap(bboxes="objects.bbox", labels="objects.category")
        for name, value in (("keys", {"image": "img"}), ("box_format", "coco")):
            with pytest.raises(AttributeError, match=f"KeyMap.{name} cannot be assigned"):
                setattr(adapter, name, value)
        sample = {"image": np.zeros((2, 2, 3), np.uint8), "objects": {"bbox": [], "category": []}}
        assert sorted(adapter.unpack(sample, {"image", "bboxes", "labels"})[0]) == [
            "bboxes", "image", "labels"
        ]  # fmt: skip

    def test_a_setting_set_before_the_constructor_follows_the_fixed_settings_rule(self) -> None:
        # before: a subclass's self.box_format = "coco" before calling the constructor,
        # which is given "coco", was refused there as "fixed when the Coco is made"
        class Coco(KeyMap):
            def __init__(self, box_format: str, given: str) -> None:
                self.box_format = box_format  # type: ignore[assignment]
                super().__init__(bboxes="objects.bbox", box_format=given)  # type: ignore[arg-type]

        assert Coco("coco", "coco").box_format == "coco"
        with pytest.raises(
            AttributeError,
            match=r"^Coco\.box_format cannot be assigned: it was set before the constructor.*"
            r"\(set: 'coco'; the constructor's: 'yolo'\)",
        ):
            Coco("coco", "yolo")
        with pytest.raises(
            AttributeError, match=r"^Coco\.box_format cannot be assigned: it is fixed"
        ):
            Coco("coco", "coco").box_format = "coco"  # type: ignore[assignment]

    def test_reads_dotted_paths(self) -> None:
        sample = nested()
        data, _ = ADAPTER.unpack(sample, TARGETS)
        assert sorted(data) == ["bboxes", "image", "labels"]
        assert data["image"] is sample["pixels"]["rgb"]
        assert data["bboxes"].tolist() == sample["objects"]["bbox"].tolist()
        assert data["labels"] == [4, 7]

    def test_writes_back_into_copies_of_the_same_structure(self) -> None:
        sample = nested()
        data, state = ADAPTER.unpack(sample, TARGETS)
        data = {**data, "image": data["image"][:, ::-1], "bboxes": data["bboxes"] + 1.0}
        out = ADAPTER.repack(data, state)
        assert out.keys() == sample.keys()
        assert out["meta"] is sample["meta"]  # untouched keys are the same objects
        assert out["objects"] is not sample["objects"]  # copied, never changed in place
        assert out["objects"]["id"] is sample["objects"]["id"]
        assert isinstance(out["objects"]["bbox"], torch.Tensor)  # tensors stay tensors
        assert out["objects"]["bbox"].dtype == torch.float32
        assert out["objects"]["bbox"].tolist() == [[2, 3, 6, 7], [15, 5, 21, 13]]
        np.testing.assert_array_equal(out["pixels"]["rgb"], sample["pixels"]["rgb"][:, ::-1])
        assert sample["objects"]["bbox"].tolist()[0] == [1, 2, 5, 6]  # the input unchanged

    @pytest.mark.parametrize("crop", [False, True])
    def test_ultralytics_n_by_1_classes_keep_their_shape(self, crop: bool) -> None:
        # ultralytics' cls (N, 1) read as labels came back (N,) from albumentations
        boxes = np.array([[0.2, 0.2, 0.1, 0.1], [0.7, 0.7, 0.2, 0.2]], np.float32)
        cls = np.array([[1.0], [2.0]], np.float32)
        sample = {"img": np.zeros((32, 32, 3), np.uint8), "cls": cls, "bboxes": boxes}
        step = A.Crop(0, 0, 4, 4) if crop else A.HorizontalFlip(p=1)
        pipe = A.Compose([step], bbox_params=bbox_params("yolo"))
        adapter = KeyMap(image="img", bboxes="bboxes", labels="cls")
        out = RandomAugmentWrapper([sample], pipe, seed=0, adapter=adapter)[0]["cls"]
        assert (out.shape, out.dtype) == (((0, 1) if crop else (2, 1)), np.float32)

    def test_pil_stays_pil_and_a_key_with_dots_is_found(self) -> None:
        adapter = KeyMap("im.rgb", bboxes="box.list")
        sample = {"im.rgb": Image.new("RGB", (6, 4)), "box.list": [[0, 0, 2, 2]]}
        data, state = adapter.unpack(sample, TARGETS)
        out = adapter.repack(data, state)
        assert isinstance(out["im.rgb"], Image.Image)
        assert out["box.list"] == [[0, 0, 2, 2]]
        assert sorted(out) == ["box.list", "im.rgb"]

    def test_a_path_that_matches_nothing_names_the_keys(self) -> None:
        adapter = KeyMap("pixels.rgb", bboxes="objects.boxes")
        message = (
            "KeyMap(image='pixels.rgb', bboxes='objects.boxes'): bboxes='objects.boxes' "
            "matches nothing in the sample, which has keys [meta (path, size), "
            "objects (bbox, category, id), pixels (rgb)]"
        )
        with pytest.raises(ValueError, match=re.escape(message)):
            adapter.unpack(nested(), TARGETS)

    def test_a_list_of_object_dicts_is_named_as_such(self) -> None:
        sample = {"image": np.zeros((4, 4, 3), np.uint8),
                  "ann": {"objects": [{"bbox": [0, 0, 1, 1], "category": 2}]}}  # fmt: skip
        adapter = KeyMap(bboxes="ann.objects.bbox")
        with pytest.raises(ValueError, match=re.escape(
            "bboxes='ann.objects.bbox' matches nothing in the sample: 'ann.objects' is a "
            "list (of per-object dicts), and the map reads per-object lists (a dict of lists"
        )):  # fmt: skip
            adapter.unpack(sample, TARGETS)

    def test_bad_arguments(self) -> None:
        with pytest.raises(TypeError, match=r"^bboxes must be a key or a dotted path .* got 3 of"):
            KeyMap(bboxes=3)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=re.escape("bboxes must be a key or a dotted path (a")):
            KeyMap(bboxes="a..b")
        with pytest.raises(TypeError, match=r"^ids must be a key or a dotted path .* got 3 of"):
            KeyMap(ids=3)  # type: ignore[arg-type]
        # a wrong type: a TypeError (it was a ValueError that named no type)
        with pytest.raises(TypeError, match=r"^image must be a key or a dotted path .* got None"):
            KeyMap(image=None)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^image must be a key or a dotted path .* got ''"):
            KeyMap(image="")
        with pytest.raises(ValueError, match="KeyMap gives 'x' to both bboxes= and labels="):
            KeyMap(bboxes="x", labels="x")
        with pytest.raises(ValueError, match="box_format"):
            KeyMap(box_format="xyxy")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="reads dict samples, got a sample of type tuple"):
            ADAPTER.unpack((np.zeros((2, 2)), {}), TARGETS)

    def test_an_uncarried_per_object_field_is_refused_when_boxes_are_dropped(self) -> None:
        crop = A.Compose([A.Crop(0, 0, 10, 10)], bbox_params=bbox_params("pascal_voc"))
        wrapper = RandomAugmentWrapper([nested()], crop, seed=0, adapter=ADAPTER)
        with pytest.raises(SampleError, match=re.escape(
            "the transform kept 1 of 2 boxes, but 'objects.id' (one entry per box) did not go"
        )):  # fmt: skip
            wrapper[0]
        assert ADAPTER.passthrough(nested(), TARGETS)["objects.id"] == [11, 12]

    def test_an_uncarried_top_level_per_box_value_is_refused_when_boxes_are_dropped(
        self,
    ) -> None:
        # torchvision-style: the boxes at the top, and iscrowd, area beside them
        sample = {"image": np.zeros((100, 100, 3), np.uint8), "labels": np.array([1, 2]),
                  "boxes": np.array([[5, 5, 20, 20], [70, 70, 90, 90]], np.float32),
                  "iscrowd": np.array([0, 1]), "area": [225.0, 400.0], "image_id": [7, 8],
                  "size": np.array([100, 100])}  # fmt: skip
        crop = A.Compose([A.Crop(0, 0, 50, 50)], bbox_params=bbox_params("pascal_voc"))
        adapter = KeyMap(bboxes="boxes", labels="labels")
        with pytest.raises(SampleError, match=re.escape(
            "the transform kept 1 of 2 boxes, but 'iscrowd', 'area' (one entry per box) did"
        )):  # fmt: skip
            RandomAugmentWrapper([sample], crop, seed=0, adapter=adapter)[0]
        kept = A.Compose([A.Crop(0, 0, 100, 100)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], kept, seed=0, adapter=adapter)[0]
        assert out["iscrowd"].tolist() == [0, 1]  # the boxes all kept: nothing stale

    def test_a_top_level_value_under_a_name_the_map_reads_elsewhere_is_still_refused(
        self,
    ) -> None:
        # "labels" at the top beside labels="ann.cls": reading the flattened columns of a
        # Dataset.flatten() row passed over a top-level key named like a target handed out
        sample = {"image": np.zeros((48, 64, 3), np.uint8), "labels": np.array([7, 8]),
                  "ann": {"boxes": np.array([[1, 1, 10, 10], [40, 30, 60, 45]], np.float32),
                          "cls": np.array([1, 2])}}  # fmt: skip
        crop = A.Compose([A.Crop(0, 0, 20, 20)], bbox_params=bbox_params("pascal_voc"))
        adapter = KeyMap(bboxes="ann.boxes", labels="ann.cls")
        with pytest.raises(SampleError, match=re.escape(
            "the transform kept 1 of 2 boxes, but 'labels' (one entry per box) did not go"
        )):  # fmt: skip
            RandomAugmentWrapper([sample], crop, seed=0, adapter=adapter)[0]

    def test_an_uncarried_per_keypoint_value_is_refused_when_keypoints_are_dropped(
        self,
    ) -> None:
        # a visibility beside (K, 2) keypoints came back with its 3 entries beside the one
        # keypoint the crop kept
        sample = {"img": np.zeros((40, 50, 3), np.uint8), "visible": np.array([2, 1, 2]),
                  "pts": np.array([[1, 1], [45, 35], [25, 20]], np.float32)}  # fmt: skip
        adapter = KeyMap("img", keypoints="pts")
        crop = A.Compose([A.Crop(0, 0, 20, 20)], keypoint_params=A.KeypointParams("xy"))
        with pytest.raises(SampleError, match=re.escape(
            "the transform kept 1 of 3 keypoints, but 'visible' (one entry per keypoint) did"
        )):  # fmt: skip
            RandomAugmentWrapper([sample], crop, seed=0, adapter=adapter)[0]
        kept = A.Compose([A.Crop(0, 0, 50, 40)], keypoint_params=A.KeypointParams("xy"))
        out = RandomAugmentWrapper([sample], kept, seed=0, adapter=adapter)[0]
        assert out["visible"].tolist() == [2, 1, 2]  # the keypoints all kept: nothing stale

    def test_a_map_field_not_given_to_the_transform_is_refused_when_keypoints_are_dropped(
        self,
    ) -> None:
        # KeyMap(keypoints="pts", visible="vis") with KeypointParams without label_fields:
        # 'vis' came back with its 3 entries beside the one keypoint the crop kept
        sample = {"img": np.zeros((40, 50, 3), np.uint8), "vis": np.array([2, 1, 0]),
                  "pts": np.array([[1, 1], [45, 35], [25, 20]], np.float32)}  # fmt: skip
        adapter = KeyMap("img", keypoints="pts", visible="vis")
        crop = A.Compose([A.Crop(0, 0, 20, 20)], keypoint_params=A.KeypointParams("xy"))
        with pytest.raises(SampleError, match=re.escape(
            "the transform kept 1 of 3 keypoints, but 'visible' (one entry per keypoint) did"
        )):  # fmt: skip
            RandomAugmentWrapper([sample], crop, seed=0, adapter=adapter)[0]
        params = A.KeypointParams("xy", label_fields=["visible"])
        carried = A.Compose([A.Crop(0, 0, 20, 20)], keypoint_params=params)
        out = RandomAugmentWrapper([sample], carried, seed=0, adapter=adapter)[0]
        assert out["pts"].tolist() == [[1.0, 1.0]]
        assert out["vis"].tolist() == [2]

    def test_a_value_beside_nested_keypoints_is_refused_when_keypoints_are_dropped(
        self,
    ) -> None:
        # keypoints="pose.pts": 'pose.vis' came back with its 3 entries beside 1 keypoint
        pose = {"pts": np.array([[1, 1], [45, 35], [25, 20]], np.float32), "vis": [2, 1, 0],
                "name": "person", "box": [0, 0, 50, 40]}  # fmt: skip
        sample = {"img": np.zeros((40, 50, 3), np.uint8), "pose": pose}
        adapter = KeyMap("img", keypoints="pose.pts")
        crop = A.Compose([A.Crop(0, 0, 20, 20)], keypoint_params=A.KeypointParams("xy"))
        with pytest.raises(SampleError, match=re.escape(
            "the transform kept 1 of 3 keypoints, but 'pose.vis' (one entry per keypoint) did "
            "not go with them and would be stale: give each a name in the map, unless it has "
            "one (KeyMap(..., visible='path')), and add the names to the keypoints' label fields"
        )):  # fmt: skip
            RandomAugmentWrapper([sample], crop, seed=0, adapter=adapter)[0]
        kept = A.Compose([A.Crop(0, 0, 50, 40)], keypoint_params=A.KeypointParams("xy"))
        out = RandomAugmentWrapper([sample], kept, seed=0, adapter=adapter)[0]
        assert out["pose"]["vis"] == [2, 1, 0]  # the keypoints all kept: nothing stale
        assert out["pose"]["name"] == "person"

    def test_a_multi_sample_wrapper_refuses_a_value_beside_nested_keypoints(self) -> None:
        # MosaicDataset with keypoints="pose.pts" gave 'pose.vis' back as it was beside
        # the keypoints the mosaic kept: the map's passthrough did not hold it
        pose = {"pts": np.array([[1, 1], [45, 35], [25, 20]], np.float32), "vis": [2, 1, 0]}
        sample = {"img": np.zeros((40, 50, 3), np.uint8), "pose": pose}
        adapter = KeyMap("img", keypoints="pose.pts")
        assert adapter.passthrough(sample, {"image", "keypoints"}) == {"pose.vis": [2, 1, 0]}
        with pytest.raises(SampleError, match=re.escape(
            "dataset[0] 'pose.vis' looks like a per-keypoint field (3 entries, one per keypoint)"
        )):  # fmt: skip
            MosaicDataset([sample] * 4, seed=0, output_size=32, adapter=adapter)[0]
        named = KeyMap("img", keypoints="pose.pts", visible="pose.vis")
        targets = Targets(label_fields=(), keypoint_fields=("visible",))
        out = MosaicDataset([sample] * 4, seed=0, output_size=32, adapter=named, targets=targets)[0]
        assert len(out["pose"]["vis"]) == len(out["pose"]["pts"])

    def test_carried_it_stays_aligned(self) -> None:
        crop = A.Compose(
            [A.Crop(0, 0, 10, 10)], bbox_params=bbox_params("pascal_voc", ["labels", "objects.id"])
        )
        out = RandomAugmentWrapper([nested()], crop, seed=0, adapter=ADAPTER)[0]
        assert out["objects"]["bbox"].tolist() == [[1, 2, 5, 6]]
        assert out["objects"]["category"] == [4]
        assert out["objects"]["id"] == [11]
        assert out["meta"] == {"path": "a.png", "size": [16, 24]}

    def test_a_hugging_face_row_without_boxes_reads_as_the_other_rows(self) -> None:
        datasets = pytest.importorskip("datasets", reason="the Hugging Face tests need `datasets`")
        features = datasets.Features({"img": datasets.Image(), "ann": {
            "boxes": datasets.List(datasets.List(datasets.Value("float32"), length=4)),
            "extra": datasets.List(datasets.List(datasets.Value("int32"), length=2)),
        }})  # fmt: skip
        columns = {"img": [Image.new("RGB", (24, 16))] * 2,
                   "ann": [{"boxes": [], "extra": []},
                           {"boxes": [[1.0, 2.0, 5.0, 6.0]], "extra": [[1, 2]]}]}  # fmt: skip
        rows = datasets.Dataset.from_dict(columns, features=features).with_format("torch")
        assert rows[0]["ann"]["boxes"] == []  # Hugging Face's torch format: a list
        adapter = KeyMap("img", bboxes="ann.boxes", extra="ann.extra").for_dataset(rows)
        data, state = adapter.unpack(rows[0], {"image", "bboxes", "extra"})
        assert (data["bboxes"].dtype, data["bboxes"].shape) == (np.float32, (0, 4))
        assert (data["extra"].dtype, data["extra"].shape) == (np.int32, (0, 2))  # declared
        ann = adapter.repack(data, state)["ann"]
        assert (type(ann["boxes"]), ann["boxes"].dtype) == (torch.Tensor, torch.float32)
        assert (ann["extra"].dtype, tuple(ann["extra"].shape)) == (torch.int32, (0, 2))
        plain = KeyMap("img", bboxes="ann.boxes")
        assert plain.for_dataset([rows[0]]) is plain  # not a Hugging Face dataset: itself

    def test_tv_tensors_keep_their_class_and_get_the_output_canvas(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        tv = tv_standin.install(monkeypatch)  # tests/samples/test_tv_tensors.py: the real one
        image = tv_standin.make(tv.Image, torch.zeros(3, 16, 24, dtype=torch.uint8))
        boxes = tv_standin.make(
            tv.BoundingBoxes, [[1.0, 2.0, 5.0, 6.0]], format="XYXY", canvas_size=(16, 24)
        )
        sample = {"img": image, "ann": {"boxes": boxes, "labels": torch.tensor([3])}}
        adapter = KeyMap("img", bboxes="ann.boxes", labels="ann.labels")
        resize = A.Compose([A.Resize(32, 48)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], resize, seed=0, adapter=adapter)[0]
        assert type(out["img"]) is tv.Image
        assert type(out["ann"]["boxes"]) is tv.BoundingBoxes
        assert out["ann"]["boxes"].canvas_size == (32, 48)
        assert out["ann"]["boxes"].format == "XYXY"
        assert out["ann"]["boxes"].tolist() == [[2.0, 4.0, 10.0, 12.0]]
        assert type(out["ann"]["labels"]) is torch.Tensor

    def test_a_list_of_masks_keeps_each_items_class(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tv = tv_standin.install(monkeypatch)
        masks = [tv_standin.make(tv.Mask, torch.zeros(16, 24, dtype=torch.uint8)) for _ in range(2)]
        sample = {
            "img": torch.zeros(3, 16, 24, dtype=torch.uint8),  # a plain tensor image
            "ann": {"boxes": nested()["objects"]["bbox"], "labels": [1, 2], "masks": masks},
        }
        adapter = KeyMap("img", bboxes="ann.boxes", labels="ann.labels", masks="ann.masks")
        resize = A.Compose([A.Resize(8, 12)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], resize, seed=0, adapter=adapter)[0]["ann"]["masks"]
        assert type(out) is list
        assert [type(mask) for mask in out] == [tv.Mask, tv.Mask]
        assert [tuple(mask.shape) for mask in out] == [(8, 12), (8, 12)]

    @pytest.mark.parametrize("kind", [MixUpDataset, CutMixDataset])
    def test_the_mixes_add_partner_boxes_with_their_fields(self, kind: Any) -> None:
        second = nested(1)
        second["objects"]["category"], second["objects"]["id"] = [5], [21]
        mixed = kind([nested(), second], seed=0, p=1.0, adapter=ADAPTER,
                     targets=Targets(label_fields=("labels", "objects.id")))  # fmt: skip
        for index in range(2):
            objects = mixed[index]["objects"]
            assert len(objects["bbox"]) == len(objects["category"]) == len(objects["id"])
            assert [i // 10 for i in objects["id"]] == [
                {4: 1, 7: 1, 5: 2}[c] for c in objects["category"]
            ]

    @pytest.mark.parametrize("kind", [MixUpDataset, CutMixDataset])
    def test_keys_with_dots_go_through_the_mixes(self, kind: Any) -> None:
        # Hugging Face's Dataset.flatten() gives such keys: the map's own, never unread
        rows = [{"image": np.full((16, 24, 3), 60 * i, np.uint8), "objects.category": [i + 1],
                 "objects.bbox": np.array([[1.0, 2.0, 5.0, 6.0]], np.float32)}
                for i in range(2)]  # fmt: skip
        adapter = KeyMap(bboxes="objects.bbox", labels="objects.category")
        assert adapter.passthrough(rows[0], TARGETS) == {}
        mixed = kind(rows, seed=0, p=1.0, adapter=adapter)[0]
        assert mixed["objects.bbox"].shape == (2, 4)  # its own box and its partner's
        assert len(mixed["objects.category"]) == 2
        assert mixed["objects.category"][0] == 1
        rows[1]["objects.id"] = [7]  # a per-box key it does not read is still refused
        with pytest.raises(SampleError, match=re.escape("'objects.id' looks like a per-box")):
            kind(rows, seed=0, p=1.0, adapter=adapter)[1]


class TestKeyMapTensorMasks:
    """A tensor image's ``(1, H, W)`` tensor mask moves channels-first, as the default adapter's."""

    def test_a_flip_moves_it_and_it_comes_back_channels_first(self) -> None:
        mask = torch.zeros(1, 16, 24, dtype=torch.uint8)
        mask[..., :4] = 1
        sample = {"pixels": torch.zeros(3, 16, 24, dtype=torch.uint8), "seg": mask}
        adapter = KeyMap(image="pixels", mask="seg")
        out = RandomAugmentWrapper([sample], A.HorizontalFlip(p=1.0), seed=0, adapter=adapter)[0]
        assert type(out["seg"]) is torch.Tensor
        assert torch.equal(out["seg"], mask.flip(-1))


class TestKeyMapAdditionalTargets:
    """albumentations' additional images and masks, read as the default adapter reads them.

    A sample with one was refused (its advice: read it as ``masks``).
    """

    @staticmethod
    def flip() -> A.Compose:
        return A.Compose(
            [A.HorizontalFlip(p=1.0)], additional_targets={"image2": "image", "mask2": "mask"}
        )

    @staticmethod
    def ramp() -> torch.Tensor:
        return (torch.arange(3 * 16 * 24).reshape(3, 16, 24) % 251).to(torch.uint8)

    def test_unnamed_ones_are_read_under_their_keys_in_the_images_layout(self) -> None:
        ramp = self.ramp()
        images = {"pixels": ramp, "image2": 250 - ramp, "mask2": ramp[:1] % 7}
        sample: dict[str, Any] = {**images, "id": 3}
        adapter = KeyMap(image="pixels")
        out = RandomAugmentWrapper([sample], self.flip(), seed=0, adapter=adapter)[0]
        assert sorted(out) == ["id", "image2", "mask2", "pixels"]
        for key in ("pixels", "image2", "mask2"):
            assert type(out[key]) is torch.Tensor
            assert out[key].dtype == torch.uint8
            assert torch.equal(out[key], images[key].flip(-1))

    def test_as_the_default_adapter_reads_them(self) -> None:
        ramp = self.ramp()
        sample = {"image": ramp, "image2": 250 - ramp, "mask2": ramp[:1] % 7}
        transform = A.Compose(
            [A.Affine(rotate=(-30, 30), scale=(0.7, 1.3), p=1.0), A.HorizontalFlip()],
            additional_targets={"image2": "image", "mask2": "mask"},
        )
        ours = RandomAugmentWrapper([sample] * 4, transform, seed=5, adapter=KeyMap())
        default = RandomAugmentWrapper([sample] * 4, transform, seed=5)
        for index in range(4):
            mine, theirs = ours[index], default[index]
            for key in sample:
                assert torch.equal(mine[key], theirs[key])

    def test_a_named_one_is_read_at_its_path_and_comes_back_in_its_type(self) -> None:
        ramp = self.ramp()
        pair = {"left": ramp, "right": 250 - ramp}
        sample: dict[str, Any] = {"pair": pair, "name": "a"}
        adapter = KeyMap("pair.left", image2="pair.right")
        out = RandomAugmentWrapper([sample], self.flip(), seed=0, adapter=adapter)[0]
        assert sorted(out) == ["name", "pair"]
        assert type(out["pair"]["right"]) is torch.Tensor
        assert torch.equal(out["pair"]["right"], (250 - ramp).flip(-1))
        assert out["pair"] is not pair  # copied, never changed in place
        assert pair["right"] is sample["pair"]["right"]

    def test_a_pil_one_comes_back_a_pil_image_of_its_mode(self) -> None:
        grey = np.arange(16 * 24, dtype=np.uint8).reshape(16, 24)
        sample = {"image": self.ramp(), "image2": Image.fromarray(grey)}
        out = RandomAugmentWrapper([sample], self.flip(), seed=0, adapter=KeyMap())[0]
        assert isinstance(out["image2"], Image.Image)
        assert out["image2"].mode == "L"
        assert np.array_equal(np.asarray(out["image2"]), grey[:, ::-1])

    def test_a_resize_gives_each_the_output_size_in_its_layout(self) -> None:
        sample = {
            "image": torch.full((3, 16, 24), 7, dtype=torch.uint8),
            "image2": torch.full((3, 16, 24), 9, dtype=torch.uint8),
            "mask2": torch.full((1, 16, 24), 2, dtype=torch.uint8),
        }
        transform = A.Compose(
            [A.Resize(8, 12)], additional_targets={"image2": "image", "mask2": "mask"}
        )
        out = RandomAugmentWrapper([sample], transform, seed=0, adapter=KeyMap())[0]
        assert torch.equal(out["image2"], torch.full((3, 8, 12), 9, dtype=torch.uint8))
        assert torch.equal(out["mask2"], torch.full((1, 8, 12), 2, dtype=torch.uint8))

    def test_one_beside_boxes_is_no_per_box_value(self) -> None:
        # a 3-channel CxHxW image2 beside 3 boxes: not one entry per box, never 'stale'
        boxes = np.array([[0, 0, 4, 4], [10, 10, 14, 14], [20, 2, 23, 8]], np.float32)
        sample = {
            "img": torch.full((3, 16, 24), 7, dtype=torch.uint8),
            "image2": torch.full((3, 16, 24), 9, dtype=torch.uint8),
            "boxes": boxes,
            "cls": [1, 2, 3],
        }
        transform = A.Compose(
            [A.Crop(0, 0, 16, 16)],
            additional_targets={"image2": "image"},
            bbox_params=bbox_params("pascal_voc", ["labels"]),
        )
        adapter = KeyMap("img", bboxes="boxes", labels="cls")
        out = RandomAugmentWrapper([sample], transform, seed=0, adapter=adapter)[0]
        assert out["cls"] == [1, 2]
        assert torch.equal(out["image2"], torch.full((3, 16, 16), 9, dtype=torch.uint8))

    def test_one_that_cannot_be_read_is_refused_naming_its_path(self) -> None:
        sample = {"pair": {"left": self.ramp(), "right": torch.zeros(16, 24, 3)}}
        adapter = KeyMap("pair.left", image2="pair.right")
        wrapper = RandomAugmentWrapper([sample], self.flip(), seed=0, adapter=adapter)
        with pytest.raises(SampleError, match=r"pair\.right must be a CxHxW tensor, .* give pair"):
            wrapper[0]
