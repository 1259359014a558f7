from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from rankaug import MosaicDataset, MosaicGrid, Partners, SampleError, Targets
from rankaug._multi.tiles import Tile
from rankaug.adapters import KeyMap


def good(mask: Any = None) -> dict[str, Any]:
    sample = {"image": np.zeros((20, 20, 3), np.uint8),
              "bboxes": np.array([[2.0, 2.0, 8.0, 8.0]]), "labels": np.array([1])}  # fmt: skip
    if mask is not None:
        sample["mask"] = mask
    return sample


def first(data: list[Any], **layout: Any) -> Any:
    return MosaicDataset(data, seed=0, output_size=16, rank=2, layout=MosaicGrid(**layout))[0]


class TestTileReader:
    @pytest.mark.parametrize(
        ("bad", "message"),
        [
            ({"bboxes": np.array([[5.0, 5.0, 2.0, 9.0]])}, r"dataset\[1\] bboxes.* x_max < x_min"),
            ({"bboxes": np.array([[np.nan, 5.0, 8.0, 9.0]])}, r"dataset\[1\] bboxes.*NaN"),
            ({"bboxes": np.array([[40.0, 40.0, 50.0, 50.0]])}, r"dataset\[1\] bboxes.*entirely"),
            ({"labels": np.array([1, 2])}, r"dataset\[1\] 'labels' has 2 entries for 1 boxes"),
            ({"labels": None}, r"dataset\[1\] has 1 boxes but no 'labels' field"),
            ({"image": np.zeros((20, 20), np.uint8)}, r"dataset\[1\] image has shape \(20, 20\)"),
            ({"image": np.zeros((20, 20, 3), np.float32)}, "same channels and dtype"),
            ({"mask": np.zeros((5, 5), np.uint8)}, r"dataset\[1\] mask must be an HxW or HxWxC"),
            ({"iscrowd": np.zeros(1)}, r"'iscrowd' looks like a per-box field"),
        ],
    )  # fmt: skip
    def test_bad_samples_name_the_index_and_field(self, bad: dict[str, Any], message: str) -> None:
        broken = {**good(), **bad}
        if bad.get("labels", 0) is None:
            del broken["labels"]
        with pytest.raises(SampleError, match=message) as info:
            first([good(), broken])
        assert "mosaic failed at index 0 (rank 2, worker 0, epoch 0)" in str(info.value)

    @pytest.mark.parametrize(
        "stale",
        [[0], (0,), np.zeros(1), torch.zeros(1)],
        ids=["list", "tuple", "array", "tensor"],
    )
    def test_per_box_values_outside_label_fields_are_refused_in_any_container(
        self, stale: Any
    ) -> None:
        # a list was kept misaligned before (issue 9, item 2): 1 entry for 4 output boxes
        with pytest.raises(SampleError, match=r"dataset\[0\] 'iscrowd' looks like a per-box"):
            first([{**good(), "iscrowd": stale}] * 2)
        pair = (np.zeros((20, 20, 3), np.uint8),
                {"boxes": [[2, 2, 8, 8]], "labels": [1], "iscrowd": stale})  # fmt: skip
        with pytest.raises(SampleError, match=r"dataset\[0\] 'iscrowd' looks like a per-box"):
            first([pair] * 2)

    def test_other_values_pass(self) -> None:
        sample = {**good(), "path": "a", "size": 7, "meta": {"k": 1}}
        out = first([sample] * 2)
        assert out["path"] == "a"
        assert out["meta"] == {"k": 1}
        assert out["mosaic"]["indices"][0] == 0

    def test_the_record_never_replaces_a_key_of_the_sample(self) -> None:
        sample = {**good(), "mosaic": [1]}
        with pytest.raises(SampleError, match="record='mosaic' names a key the sample already"):
            first([sample] * 2)

    @pytest.mark.parametrize("kind", ["mask", "masks"])
    def test_mask_dtypes_must_agree(self, kind: str) -> None:
        # an int32 partner mask value 300 was written into the uint8 output as 44
        main, partner = good(), good()
        if kind == "mask":
            main["mask"] = np.zeros((20, 20), np.uint8)
            partner["mask"] = np.full((20, 20), 300, np.int32)
        else:
            main["masks"] = np.zeros((1, 20, 20), np.uint8)
            partner["masks"] = np.full((1, 20, 20), 300, np.int32)
        with pytest.raises(
            SampleError, match=rf"dataset\[1\] {kind} has dtype int32, but the main .*uint8"
        ):
            first([main, partner])

    @pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float16, np.bool_])
    def test_unsupported_image_dtypes_are_named_up_front(self, dtype: Any) -> None:
        data = [{"image": np.zeros((8, 8, 3), dtype)}] * 2  # no resize needed at 16 -> 16
        with pytest.raises(SampleError, match="must have a dtype among uint8, uint16, int16"):
            MosaicDataset(data, seed=0, output_size=8, layout=MosaicGrid(scale_mode="fit"))[0]

    def test_too_many_channels(self) -> None:
        with pytest.raises(SampleError, match="must have 1 to 511 channels"):
            first([{"image": np.zeros((4, 4, 600), np.uint8)}] * 2)

    def test_int16_images(self) -> None:
        image = first([{"image": np.full((10, 10, 3), -7, np.int16)}] * 2, fill=-1)["image"]
        assert image.dtype == np.int16
        assert set(np.unique(image).tolist()) <= {-7, -1}

    def test_an_adapter_that_gives_no_numpy_image_is_named(self) -> None:
        class Lists:
            def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], Any]:
                return {"image": sample.tolist()}, None

            def repack(self, data: Any, state: Any) -> Any:
                return data

        data = [np.zeros((4, 4), np.uint8)] * 2
        with pytest.raises(SampleError, match=r"dataset\[0\] image must be a numpy array .*list"):
            MosaicDataset(data, seed=0, output_size=8, adapter=Lists())[0]

    def test_a_failing_partner_is_named(self) -> None:
        class Holes:
            def __len__(self) -> int:
                return 8

            def __getitem__(self, index: int) -> Any:
                return None if index == 7 else good()

        mosaic = MosaicDataset(Holes(), seed=0, output_size=16, partners=Partners(pool=[7]))
        with pytest.raises(SampleError, match=r"dataset\[7\] failed at index 3 .*NoneType"):
            mosaic[3]

    def test_every_tile_has_polygons_when_the_main_one_has(self) -> None:
        with_polygons = {**good(), "segments": [np.array([[2, 2], [8, 2], [8, 8.0]])]}
        out = first([with_polygons] * 2)
        assert len(out["segments"]) == len(out["bboxes"]) >= 1
        with pytest.raises(SampleError, match=r"disagree on .*instance polygons"):
            first([with_polygons, good()])
        with pytest.raises(SampleError, match=r"dataset\[1\] segments has 2 polygons for 1"):
            first([with_polygons, {**with_polygons, "segments": [np.zeros((3, 2))] * 2}])

    def test_fill_out_of_range_is_a_value_error_at_the_first_sample(self) -> None:
        mosaic = MosaicDataset(
            [good()] * 2, seed=0, output_size=16, layout=MosaicGrid(fill=300)
        )  # dtype unknown
        with pytest.raises(ValueError, match=r"fill must be whole numbers in \[0, 255\]"):
            mosaic[0]
        masked = MosaicDataset([good(np.zeros((20, 20), np.uint8))] * 2, seed=0, output_size=16,
                               layout=MosaicGrid(fill_mask=256))  # fmt: skip
        with pytest.raises(ValueError, match=r"fill_mask must be whole numbers in \[0, 255\]"):
            masked[0]

    @pytest.mark.parametrize("pairs", [False, True])
    def test_a_main_sample_without_boxes_refuses_partners_with_boxes(self, pairs: bool) -> None:
        # the partners' boxes were dropped while their objects were painted in
        def sample(index: int, boxes: int) -> Any:
            image = np.full((20, 20, 3), 50 * index, np.uint8)
            box, label = np.array([[0.0, 0.0, 20.0, 20.0]] * boxes), np.array([index] * boxes)
            if pairs:
                chw = torch.from_numpy(image).permute(2, 0, 1).contiguous()
                return chw, {"boxes": torch.from_numpy(box), "labels": torch.from_numpy(label)}
            return {"image": image, "bboxes": box, "labels": label}

        bare = (sample(0, 0)[0], {}) if pairs else {"image": sample(0, 0)["image"]}
        data = [bare, sample(1, 1), sample(2, 1), sample(3, 1)]
        mosaic = MosaicDataset(data, seed=0, output_size=24, keying="sample")
        expected = (
            r"dataset\[[123]\] has 1 boxes, but the main image dataset\[0\] has no boxes: "
            r"tiles of a mosaic need the same targets"
        )
        with pytest.raises(SampleError, match=expected):
            mosaic[0]
        only_bare = Partners(pool=[0])  # a main sample with boxes, a partner without
        with pytest.raises(SampleError, match=r"dataset\[0\] has no boxes, but the main image "
                           r"dataset\[1\] has: .*unlabelled"):  # fmt: skip
            MosaicDataset(data, seed=0, output_size=24, keying="sample", partners=only_bare)[1]
        # a background image with empty boxes: the partners' boxes are kept
        data[0] = sample(0, 0)
        out = MosaicDataset(data, seed=0, output_size=24, keying="sample")[0]
        target = out[1] if pairs else out
        boxes = target["boxes"] if pairs else target["bboxes"]
        assert len(boxes) == len(target["labels"]) > 0
        # no boxes anywhere: nothing is lost, nothing refused
        plain = [bare, (sample(1, 0)[0], {}) if pairs else {"image": sample(1, 0)["image"]}]
        out = MosaicDataset(plain, seed=0, output_size=24, keying="sample")[0]
        keys = (out[1] if pairs else out).keys()
        assert not {"boxes", "bboxes", "labels"} & set(keys)

    def test_fill_mask_out_of_range_names_the_mask_and_the_sample(self) -> None:
        # a float32 image takes any given fill: the message blamed "the image's dtype is
        # uint8" and showed (300.0,)
        sample = good(np.zeros((20, 20), np.uint8))
        sample["image"] = sample["image"].astype(np.float32)
        mosaic = MosaicDataset([sample] * 2, seed=0, output_size=16,
                               layout=MosaicGrid(fill=0.5, fill_mask=300))  # fmt: skip
        expected = (
            r"fill_mask must be whole numbers in \[0, 255\] \(dataset\[0\] mask's dtype is "
            r"uint8\), got 300$"
        )
        with pytest.raises(ValueError, match=expected):
            mosaic[0]

    @pytest.mark.parametrize("copies", [1, 40])  # row by row, and vectorised (over 32)
    @pytest.mark.parametrize("box_format", ["pascal_voc", "yolo"])
    def test_float32_boxes_map_as_the_same_float64_ones(self, copies: int, box_format: str) -> None:
        # tiles keep float32 boxes as read (no copy): the numbers are the float64 ones
        rng = np.random.default_rng(5)
        data: dict[str, list[dict[str, Any]]] = {"float32": [], "float64": []}
        for index in range(6):
            h, w = 20 + 7 * index, 40 - 3 * index
            corners = np.sort(rng.random((5, 2, 2)), axis=1) * [w, h]
            boxes = corners.reshape(5, 4).astype(np.float32)
            if box_format == "yolo":  # centre and size, of the image
                size = boxes[:, 2:] - boxes[:, :2]
                boxes = (np.hstack([boxes[:, :2] + size / 2, size]) / [w, h, w, h]).astype(
                    np.float32
                )
            boxes = np.tile(boxes, (copies, 1))
            for name, dtype in (("float32", np.float32), ("float64", np.float64)):
                data[name].append({"image": np.zeros((h, w, 3), np.uint8),
                                   "bboxes": boxes.astype(dtype),
                                   "labels": np.arange(len(boxes))})  # fmt: skip
        made = {
            name: MosaicDataset(
                samples,
                seed=3,
                output_size=30,
                keying="sample",
                layout=MosaicGrid(scale_range=(0.4, 1.8), flip=0.5),
                targets=Targets(box_format=box_format),
            )
            for name, samples in data.items()
        }
        for index in range(6):
            out32, out64 = made["float32"][index], made["float64"][index]
            assert out32["bboxes"].dtype == np.float32
            np.testing.assert_array_equal(out32["bboxes"], out64["bboxes"].astype(np.float32))
            np.testing.assert_array_equal(out32["labels"], out64["labels"])
            assert len(out32["labels"]) > 0

    @pytest.mark.parametrize("container", [np.array, list, torch.tensor])
    @pytest.mark.parametrize("read_by", ["label_fields", "KeyMap"])
    def test_per_box_classes_named_label_are_no_class(self, container: Any, read_by: str) -> None:
        # They were refused as "the class vector array([1])" of a classification sample.
        boxes = "bboxes" if read_by == "label_fields" else "boxes"
        samples = [
            {"image": np.full((20, 20, 3), 50 * i, np.uint8),
             boxes: np.array([[2.0, 2.0, 18.0, 18.0]]), "label": container([i])}
            for i in range(4)
        ]  # fmt: skip
        setting: dict[str, Any] = (
            {"targets": Targets(label_fields=("label",))}
            if read_by == "label_fields"
            else {"adapter": KeyMap(image="image", bboxes="boxes", labels="label")}
        )
        out = MosaicDataset(samples, seed=0, output_size=16, rank=2, **setting)[0]
        assert type(out["label"]) is type(samples[0]["label"])
        assert len(out["label"]) == len(out[boxes])
        assert len(out["label"]) >= 1
        assert {int(c) for c in out["label"]} <= {0, 1, 2, 3}

    def test_an_image_level_label_beside_boxes_names_its_key(self) -> None:
        # The message named neither the key nor a way out for a detection sample.
        samples = [{**good(), "label": 2} for _ in range(4)]
        with pytest.raises(
            SampleError, match=r"dataset\[0\] has the class 2 .*'label'.*another key"
        ):
            first(samples)


_CLASSES = {
    "an (image, class) pair": lambda i: (np.full((20, 20, 3), i, np.uint8), i % 3),
    "a 0-d tensor class": lambda i: (np.full((20, 20, 3), i, np.uint8), torch.tensor(i % 3)),
    "a one-hot vector": lambda i: (np.full((20, 20, 3), i, np.uint8), np.eye(3)[i % 3]),
    "a dict's label": lambda i: {**good(), "label": i % 3},
}


@pytest.mark.parametrize("kind", list(_CLASSES))
class TestClassificationClasses:
    """A mosaic of ``(image, class)`` samples kept the main sample's class for all of them
    (the mixes refuse a class without ``num_classes=``)."""

    def test_a_class_is_refused(self, kind: str) -> None:
        samples = [_CLASSES[kind](i) for i in range(4)]
        with pytest.raises(SampleError, match=r"dataset\[0\] has the class.* but "
                           r"MosaicDataset has no soft targets"):  # fmt: skip
            first(samples)

    def test_an_unapplied_mosaic_refuses_it_too(self, kind: str) -> None:
        samples = [_CLASSES[kind](i) for i in range(4)]
        mosaic = MosaicDataset(samples, seed=0, output_size=16, p=0.0)
        with pytest.raises(SampleError, match="MosaicDataset has no soft targets"):
            mosaic[1]


@pytest.mark.parametrize(
    "target", [None, "a.png", {"image_id": 3}, np.zeros((20, 20), np.uint8)]
)  # fmt: skip
def test_targets_that_are_no_class_pass(target: Any) -> None:
    samples = [(np.full((20, 20, 3), i, np.uint8), target) for i in range(4)]
    out = first(samples)
    assert out[0].shape == (16, 16, 3)


class TestTile:
    def test_signature_tells_what_must_agree(self) -> None:
        def tile(image: np.ndarray, mask: np.ndarray | None = None) -> Tile:
            return Tile(0, image, np.zeros((0, 4)), {}, mask, None, None, {})

        base = tile(np.zeros((4, 4, 3), np.uint8))
        assert base.signature() == tile(np.zeros((9, 2, 3), np.uint8)).signature()
        assert base.signature() != tile(np.zeros((4, 4), np.uint8)).signature()
        assert base.signature() != tile(np.zeros((4, 4, 3), np.uint16)).signature()
        with_mask = tile(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8))
        assert with_mask.signature() != base.signature()
        other_mask = tile(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.int32))
        assert with_mask.signature() != other_mask.signature()
