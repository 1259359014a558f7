"""The presets' own rules, on samples in ultralytics' layout (``tests.cli_targets``);
the round trip against real ultralytics is ``tests/collate/test_ultralytics.py``."""

from __future__ import annotations

import re
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch
from albumentations.pytorch import ToTensorV2

from rankaug import (
    CutMixDataset,
    MosaicDataset,
    RandomAugmentWrapper,
    SampleError,
    Targets,
    collate_ultralytics,
)
from rankaug.adapters import HuggingFace, KeyMap, Ultralytics
from rankaug.samples import DEFAULT_TARGETS, DefaultAdapter
from tests.albu import bbox_params
from tests.cli_targets import UltralyticsStyle


def two_boxes() -> list[dict[str, Any]]:
    """Samples with two boxes each: as many as ``ori_shape`` has entries."""
    samples = []
    for index in range(4):
        sample = UltralyticsStyle()[index]
        keep = slice(0, 2)
        sample.update(cls=sample["cls"][keep], bboxes=sample["bboxes"][keep],
                      batch_idx=sample["batch_idx"][keep])  # fmt: skip
        assert len(sample["bboxes"]) == len(sample["ori_shape"]) == 2
        samples.append(sample)
    return samples


class TestUltralytics:
    def test_the_mosaic_rebuilds_batch_idx_and_resized_shape(self) -> None:
        mosaic = MosaicDataset(
            two_boxes(),
            seed=0,
            output_size=96,
            targets=Targets(box_format="yolo"),
            adapter=Ultralytics(),
            record=None,
        )
        outputs = [mosaic[i] for i in range(4)]
        for out in outputs:
            assert sorted(out) == sorted(UltralyticsStyle()[0])
            assert out["img"].shape == (3, 96, 96)
            assert out["cls"].shape == (len(out["bboxes"]), 1)
            assert out["batch_idx"].tolist() == [0.0] * len(out["bboxes"])  # never stale
            assert out["resized_shape"] == (96, 96)
            assert out["ori_shape"] == UltralyticsStyle()[0]["ori_shape"]
        assert sum(len(o["bboxes"]) for o in outputs) > 8  # partners' boxes came in
        batch = collate_ultralytics(outputs)
        assert len(batch["batch_idx"]) == len(batch["cls"]) == len(batch["bboxes"])

    def test_a_pipeline_ending_in_to_tensor_gives_its_chw_img(self) -> None:
        # img, CxHxW, came back (32, 3, 32) after ToTensorV2, and resized_shape (3, 24)
        sample = two_boxes()[0]
        pipe = A.Compose([A.Resize(24, 40), ToTensorV2()], bbox_params=bbox_params("yolo"))
        out = RandomAugmentWrapper([sample], pipe, seed=0, adapter=Ultralytics())[0]
        assert tuple(out["img"].shape) == (3, 24, 40)
        assert tuple(out["resized_shape"]) == (24, 40)
        assert tuple(out["cls"].shape) == (2, 1)

    def test_the_mixes_too(self) -> None:
        mixed = CutMixDataset(two_boxes(), seed=0, p=1.0, targets=Targets(box_format="yolo"),
                              adapter=Ultralytics())  # fmt: skip
        out = mixed[0]
        assert len(out["batch_idx"]) == len(out["cls"]) == len(out["bboxes"])

    def test_other_box_formats_are_refused(self) -> None:
        with pytest.raises(
            ValueError, match=re.escape("box_format='coco', but adapter=Ultralytics()")
        ):
            MosaicDataset(
                two_boxes(), seed=0, targets=Targets(box_format="coco"), adapter=Ultralytics()
            )

    @pytest.mark.parametrize("key", ["masks", "keypoints", "segments"])
    def test_segment_and_pose_samples_are_refused(self, key: str) -> None:
        sample = {**UltralyticsStyle()[0], key: torch.zeros(1, 4, 4)}
        with pytest.raises(ValueError, match=re.escape(f"but this one has {key!r}")):
            Ultralytics().unpack(sample, DEFAULT_TARGETS)

    def test_without_it_the_error_says_which_adapter(self) -> None:
        mosaic = MosaicDataset(two_boxes(), seed=0, targets=Targets(box_format="yolo"))
        with pytest.raises(SampleError, match=re.escape(
            "needs an 'image' key; this one has keys ['batch_idx', 'bboxes', 'cls', "
            "'im_file', 'img', 'ori_shape', 'ratio_pad', 'resized_shape']: for another "
            "layout pass adapter=rankaug.adapters.Ultralytics()"
        )):  # fmt: skip
            mosaic[0]


class TestHuggingFacePreset:
    @pytest.mark.parametrize("name", ["image", "objects", "bbox", "category"])
    def test_an_argument_kept_in_its_keys_cannot_be_assigned(self, name: str) -> None:
        # before: adapter.objects = "annotations" made an attribute nothing read
        adapter = HuggingFace()
        with pytest.raises(
            AttributeError,
            match=rf"^HuggingFace\.{name} cannot be assigned: {name} is an argument of "
            r"HuggingFace, checked into its keys",
        ):
            setattr(adapter, name, "annotations")
        assert adapter.keys == HuggingFace().keys

    def test_is_a_key_map_of_objects(self) -> None:
        adapter = HuggingFace(objects="annotations", category="label", area="annotations.area")
        assert isinstance(adapter, KeyMap)
        assert adapter.keys == {
            "image": "image", "bboxes": "annotations.bbox", "labels": "annotations.label",
            "area": "annotations.area",
        }  # fmt: skip
        assert adapter.box_format == "coco"

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"objects": None}, TypeError, "objects must be a key or a dotted path .* NoneType"),
            ({"objects": 1.5}, TypeError, "objects must be .*, got 1.5 of type float"),
            ({"bbox": 0}, TypeError, "bbox must be a key or a dotted path"),
            ({"category": ["a", "b"]}, TypeError, r"category must be .*, got \['a', 'b'\]"),
            ({"category": ""}, ValueError, "^category must be a key or a dotted path"),
            ({"objects": "a."}, ValueError, "^objects must be a key or a dotted path"),
        ],
    )
    def test_each_name_is_checked_under_its_own(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        # None or 1.5 were pasted into a path ('None.bbox'): a KeyError on the first sample
        with pytest.raises(error, match=message):
            HuggingFace(**kwargs)

    def test_unpacks_what_the_default_adapter_refuses(self) -> None:
        sample = {"image": np.zeros((4, 4, 3), np.uint8),
                  "objects": {"bbox": [[0.0, 0.0, 2.0, 2.0]], "category": [1]}}  # fmt: skip
        with pytest.raises(ValueError, match=re.escape("HuggingFace()")):
            DefaultAdapter().unpack(sample, DEFAULT_TARGETS)
        data, _ = HuggingFace().unpack(sample, DEFAULT_TARGETS | {"labels"})
        assert data["bboxes"] == [[0.0, 0.0, 2.0, 2.0]]
        assert data["labels"] == [1]
