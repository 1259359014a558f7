"""Never a stale target: samples whose targets rankaug would not read are refused by
every consumer that moves boxes (a geometric pipeline, the mosaic, the mixes), with the
keys seen and the ``adapter=`` line that reads them; pixel-level pipelines pass them."""

from __future__ import annotations

import re
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch
from PIL import Image

from rankaug import (
    CopyPasteDataset,
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    RandomAugmentWrapper,
    SampleError,
)
from rankaug.adapters import HuggingFace, KeyMap
from rankaug.samples import DEFAULT_TARGETS, DefaultAdapter
from rankaug.samples.pair_mask import refuse_pair_target
from rankaug.samples.unread import (
    covers,
    per_box_fields,
    refuse_object_list,
    refuse_unread,
    suggest_adapter,
    unread_fields,
)
from tests.albu import bbox_params, keypoint_params


def image() -> np.ndarray:
    return np.arange(16 * 24 * 3, dtype=np.uint8).reshape(16, 24, 3)


def hf_sample() -> dict[str, Any]:
    return {"image": image(), "image_id": 3,
            "objects": {"bbox": [[1.0, 2.0, 5.0, 6.0]], "category": [2], "id": [9]}}  # fmt: skip


VOC_OBJECT = {"name": "cat", "bndbox": {"xmin": 1, "ymin": 2, "xmax": 5, "ymax": 6}}
"""An object of VOC's annotation, as ``torchvision.datasets.VOCDetection`` parses it."""

LABELME_SHAPE = {"label": "cat", "shape_type": "polygon", "points": [[1.0, 2.0], [5.0, 6.0]]}
"""An object of LabelMe's JSON (its ``shapes``)."""

LAYOUTS = {
    "huggingface": (hf_sample, "adapter=rankaug.adapters.HuggingFace()"),
    "coco annotations": (
        lambda: {"image": image(), "annotations": [{"bbox": [1, 2, 5, 6], "category_id": 1}]},
        "the dataset giving 'annotations' as per-object lists (a dict of lists, not a list of "
        "dicts), then adapter=rankaug.adapters.KeyMap(image='image', "
        "bboxes='annotations.bbox', labels='annotations.category_id')",
    ),
    "nested target": (
        lambda: {"image": image(), "target": {"boxes": torch.zeros(1, 4), "labels": [1]}},
        "adapter=rankaug.adapters.KeyMap(image='image', bboxes='target.boxes', "
        "labels='target.labels')",
    ),
    "bbox key": (
        lambda: {"image": image(), "bbox": [[1, 2, 5, 6]], "category": [1]},
        "adapter=rankaug.adapters.KeyMap(image='image', bboxes='bbox', labels='category')",
    ),
    "polygons": (
        lambda: {"image": image(), "segmentation": [[1.0, 1.0, 5.0, 1.0, 5.0, 5.0]]},
        "adapter=rankaug.adapters.KeyMap(image='image', segments='segmentation')",
    ),
    "voc object list": (
        lambda: {"image": image(), "filename": "a.jpg", "object": [VOC_OBJECT]},
        "the dataset giving 'object' as per-object lists (a dict of lists, not a list of "
        "dicts) and 'object.bndbox' as [x_min, y_min, x_max, y_max] rows (not dicts of 'xmin', "
        "'ymin', 'xmax', 'ymax'), then adapter=rankaug.adapters.KeyMap(image='image', "
        "bboxes='object.bndbox')",
    ),
    "flattened huggingface": (  # Dataset.flatten()'s columns: the mosaic left them stale
        lambda: {"image": image(), "objects.bbox": [[1.0, 2.0, 5.0, 6.0]], "objects.id": [9]},
        "adapter=rankaug.adapters.HuggingFace()",
    ),
    "labelme shapes": (  # LabelMe's per-object dicts with their polygon's "points"
        lambda: {"image": image(), "shapes": [LABELME_SHAPE]},
        "the dataset giving 'shapes' as per-object lists",
    ),
    "pair with a bbox target": (
        lambda: (image(), {"bbox": [[1, 2, 5, 6]], "labels": [1]}),
        "adapter=rankaug.adapters.KeyMap(image='image', bboxes='bbox', labels='labels')",
    ),
}
GEOMETRIC = {
    "affine without bbox_params": lambda: A.Compose([A.Affine(rotate=(10, 20), p=1.0)]),
    "flip with bbox_params": lambda: A.Compose(
        [A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco")
    ),
}


class TestUnreadFields:
    def test_finds_target_like_fields_nested_or_not(self) -> None:
        sample = {"image": 0, "objects": {"bbox": [[0, 0, 1, 1]], "area": [1]}, "cls": [[0.0]],
                  "meta": {"deep": {"keypoints": np.zeros((2, 2))}}, "mask": None}  # fmt: skip
        assert unread_fields(sample) == ["objects.bbox", "cls", "meta.deep.keypoints"]

    def test_lists_of_per_object_dicts_under_any_name(self) -> None:
        # VOC's object list (by a name rankaug did not know) went stale
        sample = {"image": 0, "object": [VOC_OBJECT], "regions": ({"bbox": [0, 0, 1, 1]},),
                  "captions": [{"text": "a", "id": 3}], "tags": ["cat"], "none": []}  # fmt: skip
        assert unread_fields(sample) == ["object", "regions"]

    def test_scalars_and_skipped_keys_are_not_targets(self) -> None:
        sample = {"image": 0, "cls": 3, "boxes": np.float64(2.0), "bbox": "none", "masks": [1]}
        assert unread_fields(sample, skip={"masks"}) == []


class TestSuggestAdapter:
    def test_the_layouts_it_knows(self) -> None:
        assert suggest_adapter({"img": 0, "cls": []}) == "adapter=rankaug.adapters.Ultralytics()"
        assert suggest_adapter(hf_sample()).startswith("adapter=rankaug.adapters.HuggingFace()")
        assert suggest_adapter({"pic": 0}, ["a.box", "a.cls", "b.masks"]) == (
            "adapter=rankaug.adapters.KeyMap(image='KEY', bboxes='a.box', labels='a.cls', "
            "masks='b.masks')"
        )


class TestSuggestAdapterRoles:
    def test_a_top_level_mask_is_semantic_and_labels_beside_boxes_come_along(self) -> None:
        sample = {"image": 0, "boxes": [[0, 0, 1, 1]], "labels": [2], "mask": np.zeros((2, 2))}
        assert suggest_adapter(sample, ["boxes", "mask"]) == (
            "adapter=rankaug.adapters.KeyMap(image='image', bboxes='boxes', labels='labels', "
            "mask='mask')"
        )

    def test_a_mask_among_objects_is_an_instance_mask(self) -> None:
        sample = {"image": 0, "objects": [{"bbox": [0, 0, 1, 1], "mask": 0, "category_id": 1}]}
        assert "masks='objects.mask'" in suggest_adapter(sample, ["objects"])

    def test_the_image_key_the_reader_knows(self) -> None:
        sample = {"pixels": 0, "boxes": [[0, 0, 1, 1]]}
        assert suggest_adapter(sample, ["boxes"], image="pixels") == (
            "adapter=rankaug.adapters.KeyMap(image='pixels', bboxes='boxes')"
        )
        assert "image='KEY'" in suggest_adapter(sample, ["boxes"])


class TestRefuseUnread:
    def test_names_the_keys_and_the_adapter(self) -> None:
        with pytest.raises(ValueError, match="the sample has no target") as caught:
            refuse_unread(hf_sample(), {"image"}, "the default adapter")
        message = str(caught.value)
        assert "but 'objects.bbox' look like boxes, masks, polygons or keypoints" in message
        assert "adapter=rankaug.adapters.HuggingFace()" in message
        assert message.endswith("the sample has keys ['image', 'image_id', 'objects']")

    def test_beside_targets_it_reads_it_names_them(self) -> None:
        sample = {"image": image(), "mask": np.zeros((16, 24), np.uint8), "boxes": [[1, 2, 3, 4]]}
        with pytest.raises(ValueError, match="does not read") as caught:
            refuse_unread(sample, {"image", "mask"}, "it", read={"image", "mask"})
        assert str(caught.value).startswith(
            "the sample has 'boxes', which look like boxes, masks, polygons or keypoints but "
            "it does not read (it reads 'mask'): a geometric transform"
        )

    @pytest.mark.parametrize("key", ["heatmaps", "obb"])
    def test_fields_no_keymap_line_reads_get_no_such_line(self, key: str) -> None:
        # It advised "Read them with adapter=rankaug.adapters.KeyMap(image='image')",
        # a map that reads nothing of them.
        sample = {"image": image(), key: np.zeros((2, 4, 6), np.float32)}
        with pytest.raises(ValueError, match=f"but '{key}' look like boxes") as caught:
            refuse_unread(sample, {"image"}, "it")
        message = str(caught.value)
        assert "KeyMap(image='image')" not in message
        assert "bboxes=, mask=, masks=, keypoints= or segments=" in message
        assert "make them after the wrapper" in message

    def test_the_image_key_error_suggests_an_adapter(self) -> None:
        sample = {"img": image(), "cls": np.zeros((1, 1)), "bboxes": np.zeros((1, 4))}
        with pytest.raises(ValueError, match=re.escape("adapter=rankaug.adapters.Ultralytics()")):
            DefaultAdapter().unpack(sample, DEFAULT_TARGETS)


@pytest.mark.parametrize("layout", list(LAYOUTS))
class TestConsumersThatMoveBoxes:
    @pytest.mark.parametrize("pipeline", list(GEOMETRIC))
    def test_a_geometric_pipeline_refuses(self, layout: str, pipeline: str) -> None:
        make, suggestion = LAYOUTS[layout]
        wrapper = RandomAugmentWrapper([make()], GEOMETRIC[pipeline](), seed=0)
        with pytest.raises(SampleError, match=re.escape(suggestion)):
            wrapper[0]

    @pytest.mark.parametrize("kind", [MosaicDataset, MixUpDataset, CutMixDataset,
                                      CopyPasteDataset])  # fmt: skip
    def test_the_multi_sample_wrappers_refuse(self, layout: str, kind: Any) -> None:
        make, suggestion = LAYOUTS[layout]
        wrapper = kind([make(), make()], seed=0, **({"output_size": 32} if kind is
                                                     MosaicDataset else {}))  # fmt: skip
        with pytest.raises(SampleError, match=re.escape(suggestion)):
            wrapper[0]

    def test_a_pixel_level_pipeline_passes_them_untouched(self, layout: str) -> None:
        make, _ = LAYOUTS[layout]
        sample = make()
        transform = A.Compose([A.InvertImg(p=1.0)])
        out = RandomAugmentWrapper([sample], transform, seed=0)[0]
        target = out[1] if isinstance(out, tuple) else out
        original = sample[1] if isinstance(sample, tuple) else sample
        assert target.keys() == original.keys()  # type: ignore[union-attr]
        assert all(target[k] is original[k] for k in original if k != "image")  # type: ignore[index]


def test_read_with_the_suggested_adapter_it_moves() -> None:
    transform = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco"))
    out = RandomAugmentWrapper([hf_sample()], transform, seed=0, adapter=HuggingFace())[0]
    np.testing.assert_allclose(out["objects"]["bbox"], [[24.0 - 6.0, 2.0, 5.0, 6.0]], atol=1e-5)
    assert type(out["objects"]["bbox"]) is list
    assert out["objects"]["id"] == [9]  # no box dropped: the uncarried id is still right


BOX = np.array([[1.0, 2.0, 5.0, 6.0]], np.float32)
POLYGON = np.array([[1.0, 2.0], [5.0, 2.0], [5.0, 6.0]])
BESIDE = {
    "dict: a mask and 'boxes'": (
        lambda: {"image": image(), "mask": np.zeros((16, 24), np.uint8), "boxes": BOX},
        "'boxes', which look like",
        "(it reads 'mask')",
    ),
    "dict: keypoints and 'boxes'": (
        lambda: {"image": image(), "keypoints": np.array([[1.0, 1.0]]), "boxes": BOX},
        "'boxes', which look like",
        "(it reads 'keypoints')",
    ),
    "dict: a mask and Hugging Face's objects": (
        lambda: {**hf_sample(), "mask": np.zeros((16, 24), np.uint8)},
        "'objects.bbox', which look like",
        "adapter=rankaug.adapters.HuggingFace()",
    ),
    "dict: boxes and polygons under another name": (
        lambda: {"image": image(), "bboxes": BOX, "labels": [1], "polygons": [POLYGON]},
        "'polygons', which look like",
        "(it reads 'bboxes')",
    ),
    "pair: a mask and 'bbox' in the target": (
        lambda: (image(), {"mask": np.zeros((16, 24), np.uint8), "bbox": BOX}),
        "'bbox', which look like",
        "(it reads 'mask')",
    ),
}


def flip_all() -> A.Compose:
    """A flip that moves boxes (no label fields) and keypoints."""
    return A.Compose(
        [A.HorizontalFlip(p=1.0)],
        bbox_params=bbox_params("pascal_voc", ()),
        keypoint_params=keypoint_params("xy"),
    )


@pytest.mark.parametrize("layout", list(BESIDE))
class TestBesideTargetsItReads:
    """A target it reads does not make the unread ones safe: they would go stale too."""

    def test_a_geometric_pipeline_refuses(self, layout: str) -> None:
        make, what, detail = BESIDE[layout]
        wrapper = RandomAugmentWrapper([make()], flip_all(), seed=0)
        with pytest.raises(SampleError, match=re.escape(what)) as caught:
            wrapper[0]
        assert detail in str(caught.value)

    def test_a_pixel_level_pipeline_passes_them(self, layout: str) -> None:
        make, _, _ = BESIDE[layout]
        out = RandomAugmentWrapper([make()], A.Compose([A.InvertImg(p=1.0)]), seed=0)[0]
        image_out = out[0] if isinstance(out, tuple) else out["image"]
        np.testing.assert_array_equal(image_out, 255 - image())


def test_keymap_refuses_unread_boxes_beside_a_mask_it_reads() -> None:
    sample = {"pixels": image(), "seg": np.zeros((16, 24), np.uint8), "boxes": BOX}
    adapter = KeyMap(image="pixels", mask="seg")
    wrapper = RandomAugmentWrapper([sample], flip_all(), seed=0, adapter=adapter)
    with pytest.raises(SampleError, match=re.escape("'boxes', which look like")) as caught:
        wrapper[0]
    # the map's own targets kept in the line (it gave mask='seg')
    assert "KeyMap(image='pixels', bboxes='boxes', mask='seg')" in str(caught.value)


def test_extra_keys_that_are_no_targets_pass_a_geometric_pipeline() -> None:
    sample = {"image": image(), "bboxes": BOX, "labels": [1], "path": "a.jpg", "id": 7}
    out = RandomAugmentWrapper([sample], GEOMETRIC["flip with bbox_params"](), seed=0)[0]
    assert (out["path"], out["id"]) == ("a.jpg", 7)
    np.testing.assert_allclose(out["bboxes"], [[24.0 - 1.0 - 5.0, 2.0, 5.0, 6.0]])  # coco, flipped


COCO_PAIR = [{"bbox": [1, 2, 4, 4], "category_id": 1, "iscrowd": 0}]


class TestRefuseObjectList:
    """torchvision's CocoDetection: ``(image, [annotation dicts])``."""

    def test_refused(self) -> None:
        with pytest.raises(ValueError, match="per-object dicts") as caught:
            refuse_object_list(COCO_PAIR, "the default adapter")
        message = str(caught.value)
        assert message.startswith("the sample's target is a list of per-object dicts with 'bbox'")
        assert "wrap_dataset_for_transforms_v2" in message

    @pytest.mark.parametrize("target", [[], [1, 2], [{"category_id": 1}], 3, "a"])
    def test_other_targets_pass(self, target: Any) -> None:
        refuse_object_list(target, "it")

    def test_a_geometric_pipeline_refuses_it(self) -> None:
        wrapper = RandomAugmentWrapper([(image(), COCO_PAIR)], flip_all(), seed=0)
        with pytest.raises(SampleError, match="list of per-object dicts"):
            wrapper[0]

    def test_a_pixel_level_pipeline_passes_it(self) -> None:
        transform = A.Compose([A.InvertImg(p=1.0)])
        out = RandomAugmentWrapper([(image(), COCO_PAIR)], transform, seed=0)[0]
        assert out[1] is COCO_PAIR


class TestPerBoxFields:
    def test_arrays_tensors_and_lists_by_their_length(self) -> None:
        values = {
            "iscrowd": torch.tensor([0, 1]),
            "area": np.array([3.0, 4.0]),
            "names": ["a", "b"],
            "extents": (640, 480, 3),
            "size": (640, 480),
            "orig_size": torch.tensor([640, 480]),
            "path": "ab",
            "image_id": 7,
            "scalar": np.float64(2.0),
        }
        assert per_box_fields(values, 2) == ["iscrowd", "area", "names"]
        assert per_box_fields(values, 3) == ["extents"]  # image-level names are never per box
        assert per_box_fields(values, 2, skip={"area"}) == ["iscrowd", "names"]


MULTI = {
    "MosaicDataset": lambda samples: MosaicDataset(samples, seed=0, output_size=32),
    "MixUpDataset": lambda samples: MixUpDataset(samples, seed=0),
    "CutMixDataset": lambda samples: CutMixDataset(samples, seed=0),
    "CopyPasteDataset": lambda samples: CopyPasteDataset(samples, seed=0),
}
PAIR_TARGETS = {
    "(N, 4) boxes": lambda: np.array([[0.0, 0.0, 4.0, 16.0]]),
    "YOLO (N, 5) rows": lambda: np.array([[0.0, 0.1, 0.5, 0.2, 1.0]]),
    "(N, 4) tensor": lambda: torch.tensor([[0.0, 0.0, 4.0, 16.0]]),
    "a list of box lists": lambda: [[0, 0, 4, 16]],
    "(K, 2) keypoints": lambda: np.array([[1.0, 2.0], [3.0, 4.0]]),
    "a mask of another size": lambda: np.zeros((8, 12, 1), np.uint8),
    "a class and a PIL mask": lambda: (1, Image.new("L", (12, 8))),
}


class TestRefusePairTarget:
    """``(image, boxes)`` pairs passed every geometric wrapper, their boxes unmoved."""

    @pytest.mark.parametrize("name", list(PAIR_TARGETS))
    def test_spatial_targets_are_refused(self, name: str) -> None:
        with pytest.raises(
            ValueError, match=r"^the \(image, target\) sample's target is "
        ) as caught:
            refuse_pair_target(PAIR_TARGETS[name](), "the default adapter")
        assert "a dict of named targets" in str(caught.value)
        assert "rankaug.adapters.KeyMap" in str(caught.value)

    @pytest.mark.parametrize(
        "target",
        [3, "cat", np.int64(2), torch.tensor(2), np.eye(3)[1], torch.tensor([0.2, 0.8]), [1, 2],
         (3, 4), None],
    )  # fmt: skip
    def test_classes_pass(self, target: Any) -> None:
        try:
            refuse_pair_target(target, "the default adapter")
        except (TypeError, ValueError) as error:
            pytest.fail(f"a class was refused: {error}")
        assert target is not NotImplemented  # it reached here: not refused

    @pytest.mark.parametrize("name", list(PAIR_TARGETS))
    def test_a_geometric_pipeline_refuses_them(self, name: str) -> None:
        wrapper = RandomAugmentWrapper([(image(), PAIR_TARGETS[name]())], A.HorizontalFlip(p=1.0),
                                       seed=0)  # fmt: skip
        with pytest.raises(SampleError, match=r"the \(image, target\) sample's target is "):
            wrapper[0]

    @pytest.mark.parametrize("kind", list(MULTI))
    @pytest.mark.parametrize("name", ["(N, 4) boxes", "(K, 2) keypoints"])
    def test_the_multi_sample_wrappers_refuse_them(self, kind: str, name: str) -> None:
        wrapper = MULTI[kind]([(image(), PAIR_TARGETS[name]())] * 3)
        with pytest.raises(SampleError, match=r"the \(image, target\) sample's target is "):
            wrapper[0]

    @pytest.mark.parametrize("name", list(PAIR_TARGETS))
    def test_a_pixel_level_pipeline_passes_them_untouched(self, name: str) -> None:
        target = PAIR_TARGETS[name]()
        out = RandomAugmentWrapper([(image(), target)], A.InvertImg(p=1.0), seed=0)[0]
        assert out[1] is target

    @pytest.mark.parametrize("target", [3, "cat", np.eye(3)[1], torch.tensor(2)])
    def test_classes_pass_a_geometric_pipeline(self, target: Any) -> None:
        out = RandomAugmentWrapper([(image(), target)], A.HorizontalFlip(p=1.0), seed=0)[0]
        assert out[1] is target


class TestCovers:
    def test_arrays_tensors_and_lists_of_the_image_s_size(self) -> None:
        assert covers(np.zeros((16, 24)), (16, 24))
        assert covers(torch.zeros(3, 16, 24), (16, 24))
        assert covers(np.zeros((16, 24, 2)), (16, 24))
        assert covers([torch.zeros(16, 24)], (16, 24))
        assert not covers(np.zeros((24, 16)), (16, 24))
        assert not covers(np.array([16, 24]), (16, 24))
        assert not covers((16, 24), (16, 24))
        assert not covers(np.zeros((2, 2, 16, 24)), (16, 24))

    def test_pil_images_of_the_image_s_size(self) -> None:
        assert covers(Image.new("L", (24, 16)), (16, 24))
        assert covers(Image.new("P", (24, 16)), (16, 24))
        assert covers(Image.new("RGB", (24, 16)), (16, 24))
        assert covers([Image.new("1", (24, 16))], (16, 24))
        assert not covers(Image.new("L", (16, 24)), (16, 24))
        assert not covers([Image.new("RGB", (24, 16))], (16, 24))


class TestUnreadFieldsByShape:
    def test_a_field_of_any_name_of_the_image_s_size_is_a_mask(self) -> None:
        sample = {"image": image(), "seg": np.zeros((16, 24)), "depth_map": torch.zeros(1, 16, 24),
                  "orig_size": np.zeros((16, 24)), "id": 3, "size": (16, 24),
                  "embedding": np.zeros((1, 16))}  # fmt: skip
        assert unread_fields(sample, {"image"}, (16, 24)) == ["seg", "depth_map"]
        assert unread_fields(sample, {"image"}) == []  # by shape only given the image's size


STALE_BESIDE_BOXES = {
    "seg": np.zeros((16, 24), np.uint8),
    "semantic": np.zeros((16, 24), np.uint8),
    "depth": np.zeros((16, 24), np.float32),
    "heatmap": np.zeros((16, 24, 1), np.float32),
    "label_image": Image.new("P", (24, 16)),
    "heatmaps": np.zeros((2, 4, 6), np.float32),  # at a quarter of the image's size
    "instance_masks": np.zeros((1, 16, 24), np.uint8),
    "gt_boxes": np.array([[1.0, 2.0, 5.0, 6.0]]),
    "gt_bboxes": torch.tensor([[1.0, 2.0, 5.0, 6.0]]),
    "obb": np.array([[1.0, 1.0, 4.0, 4.0, 0.3]]),
    "landmarks": np.array([[1.0, 2.0], [3.0, 4.0]]),
    "kpts": np.array([[1.0, 2.0]]),
    "joints": [[1.0, 2.0]],
    "targets": np.array([[0.0, 1.0, 0.5, 0.5, 0.2, 0.2]]),
    # names a flip, a mosaic or a mix left stale (their entries not one per box):
    "points": np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
    "pts": np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
    "keypoint": [[1.0, 2.0], [3.0, 4.0]],
    "polys": [np.ones((5, 2)), np.ones((7, 2))],
    "contours": (np.ones((4, 1, 2), np.int32), np.ones((6, 1, 2), np.int32)),  # OpenCV's
    "corners": np.ones((2, 4, 2), np.float32),
    "quad": np.ones((3, 8), np.float32),
    "gt_keypoints": torch.ones(2, 17, 3),
    "gt_masks": np.zeros((2, 8, 12), np.uint8),  # at half the image's size
}


def with_boxes(key: str) -> dict[str, Any]:
    return {"image": image(), "bboxes": BOX, "labels": np.array([1]), key: STALE_BESIDE_BOXES[key]}


@pytest.mark.parametrize("key", list(STALE_BESIDE_BOXES))
class TestUnknownFieldsBesideBoxes:
    """A ``seg`` (or ``gt_boxes``, ``landmarks``...) beside ``bboxes`` stayed where it was."""

    def test_a_geometric_pipeline_refuses_naming_the_field(self, key: str) -> None:
        transform = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
        wrapper = RandomAugmentWrapper([with_boxes(key)], transform, seed=0)
        with pytest.raises(SampleError, match=re.escape(f"the sample has {key!r}, which look")):
            wrapper[0]

    @pytest.mark.parametrize("kind", list(MULTI))
    def test_the_multi_sample_wrappers_refuse(self, key: str, kind: str) -> None:
        with pytest.raises(SampleError, match=re.escape(f"the sample has {key!r}, which look")):
            MULTI[kind]([with_boxes(key)] * 3)[0]

    def test_a_pixel_level_pipeline_passes_it_untouched(self, key: str) -> None:
        sample = with_boxes(key)
        out = RandomAugmentWrapper([sample], A.Compose([A.InvertImg(p=1.0)]), seed=0)[0]
        assert out[key] is sample[key]
        assert out["bboxes"] is sample["bboxes"]


@pytest.mark.parametrize("kind", ["flip", *MULTI])
def test_a_pil_mask_in_a_pair_s_target_is_refused(kind: str) -> None:
    """A PIL mask under another name in a torchvision-style target stayed where it was."""
    pair = (Image.new("RGB", (24, 16)), {"boxes": torch.tensor(BOX), "labels": torch.tensor([1]),
                                         "seg": Image.new("L", (24, 16))})  # fmt: skip
    flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
    wrapper = (RandomAugmentWrapper([pair], flip, seed=0) if kind == "flip"
               else MULTI[kind]([pair] * 3))  # fmt: skip
    with pytest.raises(SampleError, match=re.escape("the sample has 'seg', which look")):
        wrapper[0]


def test_a_mask_by_its_shape_is_told_how_to_read_it() -> None:
    transform = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
    with pytest.raises(SampleError) as caught:
        RandomAugmentWrapper([with_boxes("seg")], transform, seed=0)[0]
    message = str(caught.value)
    assert "('seg' of the image's height and width (16, 24): a mask, by its shape)" in message
    assert ("KeyMap(image='image', mask='seg', bboxes='bboxes', labels='labels')"
            in message)  # fmt: skip
    assert "additional_targets={'seg': 'mask'}" in message


def test_an_image_by_its_shape_is_told_it_may_be_an_additional_image() -> None:
    # the advice was a mask only (an image beside the image goes to 'image')
    transform = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
    sample = {**with_boxes("seg"), "seg": np.zeros((16, 24, 3), np.uint8)}
    with pytest.raises(SampleError) as caught:
        RandomAugmentWrapper([sample], transform, seed=0)[0]
    assert (
        "A.Compose(..., additional_targets={'seg': 'image'} for an image beside the image, "
        "{'seg': 'mask'} for a mask)" in str(caught.value)
    )


def test_read_as_an_additional_target_it_moves() -> None:
    transform = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"),
                          additional_targets={"seg": "mask"})  # fmt: skip
    sample = with_boxes("seg")
    sample["seg"] = np.zeros((16, 24), np.uint8)
    sample["seg"][:, :4] = 1
    out = RandomAugmentWrapper([sample], transform, seed=0)[0]
    np.testing.assert_array_equal(out["seg"], sample["seg"][:, ::-1])


@pytest.mark.parametrize("kind", ["flip", *MULTI])
def test_extras_that_are_not_spatial_pass_every_wrapper(kind: str) -> None:
    extras = {"id": 7, "file_name": "a.jpg", "scale": 0.5,
              "orig_size": torch.tensor([16, 24]), "embedding": np.zeros(16),
              "targets": np.array([0.0, 1.0]), "caption": ["a", "cat"]}  # fmt: skip
    # (the current "size" is not an extra that passes: it follows the image, test_sizes)
    sample = {"image": image(), "bboxes": BOX, "labels": np.array([1]),
              "masks": np.ones((1, 16, 24), np.uint8), **extras}  # fmt: skip
    if kind == "flip":
        transform = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], transform, seed=0)[0]
    else:
        out = MULTI[kind]([sample] * 3)[0]
    assert all(out[key] is value for key, value in extras.items())
