"""``HuggingFace``: a real ``datasets.Dataset`` (``Image()`` decoded to PIL) through the
mosaic, an affine and a flip, on constant-colour objects whose boxes must keep their
objects: every output box's centre shows its own object's colour."""

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
    MosaicAffine,
    MosaicDataset,
    RandomAugmentWrapper,
    SampleError,
    Targets,
)
from rankaug.adapters import HuggingFace
from rankaug.samples import check_adapter
from tests.albu import bbox_params

datasets = pytest.importorskip("datasets", reason="the Hugging Face tests need `datasets`")

COLOURS = np.array(
    [[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200], [245, 130, 48], [145, 30, 180]],
    np.uint8,
)
BACKGROUND = (40, 40, 40)
FIELDS = ("labels", "objects.id", "objects.area")


def scene(index: int) -> dict[str, Any]:
    """A 64x80 image with two or three rectangles apart, COCO boxes, ids by colour."""
    rng = np.random.default_rng(index)
    image = np.full((64, 80, 3), BACKGROUND, np.uint8)
    bboxes, categories, ids, areas = [], [], [], []
    for k in range(2 + index % 2):
        colour = int(rng.integers(len(COLOURS)))
        w, h = int(rng.integers(12, 25)), int(rng.integers(14, 40))  # in column k: apart
        x, y = 26 * k + int(rng.integers(0, 26 - w)), int(rng.integers(0, 64 - h))
        image[y : y + h, x : x + w] = COLOURS[colour]
        bboxes.append([float(x), float(y), float(w), float(h)])
        categories.append(colour)
        ids.append(colour * 1000 + index * 10 + k)
        areas.append(float(w * h))
    objects = {"bbox": bboxes, "category": categories, "id": ids, "area": areas}
    return {"image": Image.fromarray(image), "image_id": index, "objects": objects}


def hf_dataset(count: int = 8) -> Any:
    rows = [scene(i) for i in range(count)]
    columns = {key: [row[key] for row in rows] for key in rows[0]}
    return datasets.Dataset.from_dict(columns).cast_column("image", datasets.Image())


def background_rows(length: int = 4) -> Any:
    """Four rows, the first without objects; boxes declared ``float64``, ``length`` long.

    ``length=-1``: lists of any length, as ``Dataset.from_dict`` infers them.
    """
    features = datasets.Features({"image": datasets.Image(), "objects": datasets.Sequence({
        "bbox": datasets.Sequence(datasets.Value("float64"), length=length),
        "category": datasets.ClassLabel(names=["a", "b"]),
    })})  # fmt: skip
    box = {"bbox": [[4.0, 4.0, 20.0, 16.0]], "category": [1]}
    columns = {
        "image": [Image.new("RGB", (64, 48), (40 * i, 0, 0)) for i in range(4)],
        "objects": [{"bbox": [], "category": []}] + [box] * 3,
    }
    return datasets.Dataset.from_dict(columns, features=features)


def pipeline(dataset: Any) -> RandomAugmentWrapper[Any]:
    adapter = HuggingFace()
    mosaic = MosaicDataset(
        dataset, seed=0, output_size=128, targets=Targets(label_fields=FIELDS),
        affine=MosaicAffine(degrees=0.0, translate=0.1, scale=0.3), adapter=adapter,
    )  # fmt: skip
    transform = A.Compose(
        [A.Affine(scale=(0.8, 1.2), translate_percent=(-0.1, 0.1), p=1.0),
         A.HorizontalFlip(p=1.0)],
        bbox_params=bbox_params("coco", FIELDS),
    )  # fmt: skip
    return RandomAugmentWrapper(mosaic, transform, seed=1, adapter=adapter)


def check_boxes_on_their_objects(sample: dict[str, Any]) -> int:
    image = np.asarray(sample["image"])
    objects = sample["objects"]
    assert sorted(objects) == ["area", "bbox", "category", "id"]
    counts = {len(objects[key]) for key in objects}
    assert len(counts) == 1  # every per-object list aligned
    checked = 0
    for (x, y, w, h), category, id_ in zip(
        objects["bbox"], objects["category"], objects["id"], strict=True
    ):
        assert id_ // 1000 == category  # the id came with its own box
        if w < 6 or h < 6:
            continue  # a sliver: its centre is on an interpolated edge
        centre = image[int(y + h / 2), int(x + w / 2)]
        np.testing.assert_array_equal(centre, COLOURS[category])
        checked += 1
    return checked


class TestHuggingFace:
    def test_a_real_dataset_through_mosaic_affine_and_flip(self) -> None:
        dataset = hf_dataset()
        assert isinstance(dataset[0]["image"], Image.Image)  # decoded to PIL
        augmented = pipeline(dataset)
        checked = 0
        for index in range(len(dataset)):
            sample = augmented[index]
            assert isinstance(sample["image"], Image.Image)  # PIL stays PIL
            assert sample["image_id"] == index  # other keys untouched
            assert all(type(v) is list for v in sample["objects"].values())  # lists stay lists
            assert all(type(i) is int for i in sample["objects"]["id"])
            checked += check_boxes_on_their_objects(sample)
        assert checked >= 2 * len(dataset)  # boxes from the main sample and its partners

    def test_the_rows_of_an_iterable_dataset(self) -> None:
        rows = list(hf_dataset(4).to_iterable_dataset())
        assert isinstance(rows[0]["image"], Image.Image)
        augmented = pipeline(rows)
        assert sum(check_boxes_on_their_objects(augmented[i]) for i in range(4)) >= 8

    def test_a_flattened_dataset_carries_its_per_object_columns(self) -> None:
        # "objects.id" in label_fields was not found in a flattened row (and, uncarried,
        # refused as stale): a flattened dataset could not go through a mosaic at all
        dataset = hf_dataset(4).flatten()  # "objects.bbox", "objects.id"... columns
        augmented = pipeline(dataset)
        checked = 0
        for index in range(len(dataset)):
            sample = augmented[index]
            assert "objects" not in sample  # written back where they were read
            nested = {**sample, "objects": {k.split(".")[1]: v for k, v in sample.items()
                                            if k.startswith("objects.")}}  # fmt: skip
            checked += check_boxes_on_their_objects(nested)
        assert checked >= 2 * len(dataset)

    def test_the_input_is_not_changed(self) -> None:
        rows = [scene(i) for i in range(4)]
        before = [{**r, "objects": {k: list(v) for k, v in r["objects"].items()}} for r in rows]
        augmented = pipeline(rows)
        for index in range(4):
            augmented[index]
        for row, old in zip(rows, before, strict=True):
            assert row["objects"] == old["objects"]

    def test_an_uncarried_per_object_field_is_refused(self) -> None:
        rows = [scene(i) for i in range(4)]
        mosaic = MosaicDataset(rows, seed=0, output_size=64, adapter=HuggingFace())
        with pytest.raises(SampleError, match=re.escape("'objects.id' looks like a per-box field")):
            mosaic[0]

    def test_the_box_format_is_the_adapters(self) -> None:
        rows = [scene(i) for i in range(6)]
        for row in rows:  # only what the default label_fields carry
            row["objects"] = {key: row["objects"][key] for key in ("bbox", "category")}
        for wrapper in (MosaicDataset, MixUpDataset, CutMixDataset):
            plain = wrapper(rows, seed=0, adapter=HuggingFace())
            assert plain.config.box_format == "coco"
            told = wrapper(rows, seed=0, adapter=HuggingFace(), targets=Targets(box_format="coco"))
            for index in range(3):
                ours, theirs = plain[index], told[index]
                assert ours["objects"] == theirs["objects"]
                np.testing.assert_array_equal(
                    np.asarray(ours["image"]), np.asarray(theirs["image"])
                )

    @pytest.mark.parametrize("kind", [MosaicDataset, MixUpDataset, CutMixDataset])
    def test_a_background_row_in_numpy_format(self, kind: Any) -> None:
        # with_format("numpy") gives a row without objects bbox=array([], dtype=object)
        features = datasets.Features({"image": datasets.Image(), "objects": datasets.Sequence({
            "bbox": datasets.Sequence(datasets.Value("float32"), length=4),
            "category": datasets.ClassLabel(names=["a", "b"]), "name": datasets.Value("string"),
        })})  # fmt: skip
        box = {"bbox": [[4.0, 4.0, 20.0, 16.0]], "category": [1], "name": ["b"]}
        columns = {
            "image": [Image.new("RGB", (64, 48), (40 * i, 0, 0)) for i in range(4)],
            "objects": [{"bbox": [], "category": [], "name": []}] + [box] * 3,
        }
        rows = datasets.Dataset.from_dict(columns, features=features).with_format("numpy")
        assert rows[0]["objects"]["bbox"].dtype == object
        wrapper = kind(rows, seed=0, adapter=HuggingFace(), p=1.0,
                       targets=Targets(label_fields=("labels", "objects.name")))  # fmt: skip
        outputs = [wrapper[index]["objects"] for index in range(4)]
        assert len(outputs[0]["bbox"]) > 0  # the background row's: a partner's objects
        for objects in outputs:
            assert objects["bbox"].dtype == np.float32  # the other rows' dtype, never float64
            assert objects["bbox"].shape == (len(objects["category"]), 4)
            assert objects["category"].dtype == np.int64  # the other rows' dtype
            assert objects["name"].dtype == object
            assert objects["name"].tolist() == ["b"] * len(objects["category"])

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    @pytest.mark.parametrize(
        "make",
        [
            lambda rows: MosaicDataset(rows, seed=0, p=1.0, output_size=48,
                                       adapter=HuggingFace()),
            lambda rows: MixUpDataset(rows, seed=0, p=1.0, adapter=HuggingFace()),
            lambda rows: RandomAugmentWrapper(rows, A.Compose(
                [A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco")), seed=0,
                adapter=HuggingFace()),
        ],
        ids=["mosaic", "mixup", "augment"],
    )  # fmt: skip
    @pytest.mark.parametrize("length", [4, -1], ids=["length-4", "any-length"])
    def test_a_background_row_gives_the_other_rows_type(
        self, form: str, make: Any, length: int
    ) -> None:
        rows = background_rows(length).with_format(form)
        other = rows[1]["objects"]["bbox"]  # float32 in both formats (declared float64)
        assert len(rows[0]["objects"]["bbox"]) == 0
        wrapper = make(rows)
        for index in range(4):
            boxes = wrapper[index]["objects"]["bbox"]
            assert (type(boxes), boxes.dtype) == (type(other), other.dtype)
            assert tuple(boxes.shape[1:]) == (4,)

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_a_background_row_of_a_flattened_dataset_gives_the_other_rows_type(
        self, form: str
    ) -> None:
        rows = background_rows(-1).flatten().with_format(form)  # "objects.bbox" columns
        other = rows[1]["objects.bbox"]
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco"))
        for wrapper in (
            MosaicDataset(rows, seed=0, p=1.0, output_size=48, adapter=HuggingFace()),
            RandomAugmentWrapper(rows, flip, seed=0, adapter=HuggingFace()),
        ):
            for index in range(4):
                boxes = wrapper[index]["objects.bbox"]
                assert (type(boxes), boxes.dtype) == (type(other), other.dtype)
                assert tuple(boxes.shape[1:]) == (4,)

    def test_a_background_row_of_a_stream_gives_the_other_rows_type(self) -> None:
        stream = background_rows().to_iterable_dataset().with_format("numpy")
        streamed: Any = MosaicDataset(stream, seed=0, output_size=48, buffer_size=2,
                                      adapter=HuggingFace())  # fmt: skip
        mosaics = list(streamed)
        assert [m["objects"]["bbox"].dtype for m in mosaics] == [np.dtype(np.float32)] * 4
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco"))
        streamed = RandomAugmentWrapper(stream, flip, seed=0, adapter=HuggingFace())
        flipped = list(streamed)
        assert flipped[0]["objects"]["bbox"].shape == (0, 4)
        assert [f["objects"]["bbox"].dtype for f in flipped] == [np.dtype(np.float32)] * 4

    def test_a_list_of_object_dicts_is_explained(self) -> None:
        features = datasets.Features({"image": datasets.Image(), "objects": datasets.List({
            "bbox": datasets.List(datasets.Value("float32"), length=4),
            "category": datasets.Value("int64"),
        })})  # fmt: skip
        columns = {"image": [Image.new("RGB", (16, 16))] * 2,
                   "objects": [[{"bbox": [1.0, 1.0, 4.0, 4.0], "category": 1}], []]}  # fmt: skip
        rows = datasets.Dataset.from_dict(columns, features=features)
        transform = A.Compose([A.HorizontalFlip()], bbox_params=bbox_params("coco"))
        wrapper = RandomAugmentWrapper(rows, transform, seed=0, adapter=HuggingFace())
        for index in range(2):  # with objects, and a background row's []
            with pytest.raises(SampleError, match=re.escape(
                "'objects' is a list (of per-object dicts), and the map reads per-object "
                "lists (a dict of lists, not a list of dicts)"
            )) as info:  # fmt: skip
                wrapper[index]
            assert "datasets.Sequence({...})" in str(info.value)

    def test_another_box_format_is_refused(self) -> None:
        with pytest.raises(ValueError, match="box_format='pascal_voc', but adapter=HuggingFace"):
            MosaicDataset(
                [scene(0)], seed=0, adapter=HuggingFace(), targets=Targets(box_format="pascal_voc")
            )
        transform = A.Compose([A.HorizontalFlip()], bbox_params=bbox_params("pascal_voc"))
        with pytest.raises(
            ValueError, match=re.escape("A.BboxParams format='pascal_voc', but adapter=")
        ):
            RandomAugmentWrapper([scene(0)], transform, seed=0, adapter=HuggingFace())


class TestGeometryLeftInObjects:
    """``objects.segmentation`` beside the boxes, not read: moving the boxes would leave it."""

    def sample(self) -> dict[str, Any]:
        found = scene(1)
        found["objects"]["segmentation"] = [[[1.0, 1.0, 9.0, 1.0, 9.0, 9.0]]] * len(
            found["objects"]["bbox"]
        )
        return found

    def test_a_geometric_pipeline_refuses_it(self) -> None:
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco", ()))
        wrapper = RandomAugmentWrapper([self.sample()], flip, seed=0, adapter=HuggingFace())
        with pytest.raises(SampleError, match=r"'objects.segmentation' looks like boxes, masks"):
            wrapper[0]

    @pytest.mark.parametrize(
        ("key", "told"),
        [("segmentation", "segments='objects.segmentation'"), ("mask", "masks='objects.mask'"),
         ("points", "masks=, keypoints= or segments='objects.points'")],
    )  # fmt: skip
    def test_it_is_told_the_name_that_reads_it(self, key: str, told: str) -> None:
        # an instance mask was told "read it (segments='objects.mask', ...)"
        sample = scene(1)
        sample["objects"][key] = [np.zeros((64, 80), np.uint8)] * len(sample["objects"]["bbox"])
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco", ()))
        wrapper = RandomAugmentWrapper([sample], flip, seed=0, adapter=HuggingFace())
        with pytest.raises(SampleError, match=re.escape(f"read it ({told}) or drop it")):
            wrapper[0]

    def test_a_pixel_level_pipeline_passes_it(self) -> None:
        sample = self.sample()
        invert = A.Compose([A.InvertImg(p=1.0)])
        out = RandomAugmentWrapper([sample], invert, seed=0, adapter=HuggingFace())[0]
        assert out["objects"]["segmentation"] == sample["objects"]["segmentation"]


class TestAdditionalImages:
    """A second ``Image()`` column under an albumentations additional image target.

    The sample was refused, with the advice to read the image as ``masks``.
    """

    @staticmethod
    def rows(count: int = 3) -> Any:
        rows = [scene(i) for i in range(count)]
        for row in rows:  # its negative, beside it
            row["image2"] = Image.fromarray(255 - np.asarray(row["image"]))
        columns = {key: [row[key] for row in rows] for key in rows[0]}
        dataset = datasets.Dataset.from_dict(columns)
        return dataset.cast_column("image", datasets.Image()).cast_column(
            "image2", datasets.Image()
        )

    def test_it_follows_the_image_and_comes_back_a_pil_image(self) -> None:
        dataset = self.rows()
        transform = A.Compose(
            [A.Affine(rotate=(-20, 20), p=1.0, interpolation=0), A.HorizontalFlip(p=1.0)],
            bbox_params=bbox_params("coco", FIELDS),
            additional_targets={"image2": "image"},
        )
        augmented = RandomAugmentWrapper(dataset, transform, seed=0, adapter=HuggingFace())
        for index in range(len(dataset)):
            out = augmented[index]
            assert isinstance(out["image2"], Image.Image)
            assert out["image2"].mode == "RGB"
            # moved as the image was: still its negative where the image has pixels
            image, image2 = np.asarray(out["image"]), np.asarray(out["image2"])
            inside = image.any(axis=-1) & (image2 != 255).any(axis=-1)
            assert inside.mean() > 0.5
            np.testing.assert_array_equal(image2[inside], 255 - image[inside])
            assert check_boxes_on_their_objects(out) > 0

    def test_in_a_pipeline_without_it_the_advice_is_additional_targets(self) -> None:
        dataset = self.rows(1)
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("coco", FIELDS))
        wrapper = RandomAugmentWrapper(dataset, flip, seed=0, adapter=HuggingFace())
        advice = "A.Compose(..., additional_targets={'image2': 'image'} for an image beside"
        with pytest.raises(SampleError, match=re.escape(advice)):
            wrapper[0]


def array_rows() -> Any:
    """Four rows: ``Array3D`` uint8 images, ``Array2D`` uint8 masks, one box each."""
    features = datasets.Features({
        "image": datasets.Array3D(shape=(32, 40, 3), dtype="uint8"),
        "mask": datasets.Array2D(shape=(32, 40), dtype="uint8"),
        "objects": {"bbox": datasets.List(datasets.List(datasets.Value("float32"), length=4)),
                    "category": datasets.List(datasets.Value("int64"))},
    })  # fmt: skip
    columns = {
        "image": [np.full((32, 40, 3), 60 * i, np.uint8) for i in range(4)],
        "mask": [np.full((32, 40), i, np.uint8) for i in range(4)],
        "objects": [{"bbox": [[2.0, 2.0, 10.0, 10.0]], "category": [1]}] * 4,
    }
    return datasets.Dataset.from_dict(columns, features=features)


class TestDeclaredArrayDtypes:
    def test_numpy_format_gives_int64(self) -> None:
        row = array_rows().with_format("numpy")[0]
        assert (row["image"].dtype, row["mask"].dtype) == (np.int64, np.int64)  # the fix's cause

    @pytest.mark.parametrize("streamed", [False, True], ids=["map-style", "streamed"])
    def test_the_mosaic_reads_the_declared_uint8(self, streamed: bool) -> None:
        rows = array_rows()
        data = rows.to_iterable_dataset() if streamed else rows
        stream = {"buffer_size": 2} if streamed else {}
        mosaic: Any = MosaicDataset(data.with_format("numpy"), seed=0, output_size=32,
                                    adapter=HuggingFace(mask="mask"), **stream)  # fmt: skip
        outputs = list(mosaic) if streamed else [mosaic[i] for i in range(4)]
        assert len(outputs) == 4
        for out in outputs:
            assert type(out["image"]) is np.ndarray
            assert out["image"].dtype == np.uint8
            assert type(out["mask"]) is np.ndarray
            assert out["mask"].dtype == np.uint8
            assert set(np.unique(out["image"])) <= {0, 60, 120, 180}  # tiles of the rows' own
            assert out["objects"]["bbox"].dtype == np.float32

    @pytest.mark.parametrize("adapter", [HuggingFace(mask="mask"), None], ids=["hf", "default"])
    @pytest.mark.parametrize("streamed", [False, True], ids=["map-style", "streamed"])
    def test_albumentations_gets_the_declared_uint8(self, adapter: Any, streamed: bool) -> None:
        rows = array_rows() if adapter is not None else array_rows().remove_columns("objects")
        data = rows.to_iterable_dataset() if streamed else rows
        seen: list[Any] = []  # (the wrapper copies the transform, not its class)

        class Seen(A.ImageOnlyTransform):  # type: ignore[misc]
            def apply(self, img: np.ndarray, **params: Any) -> np.ndarray:
                seen.append(img.dtype)
                return img

        params = bbox_params("coco") if adapter is not None else None
        transform = A.Compose([Seen(p=1.0), A.HorizontalFlip(p=1.0)], bbox_params=params)
        wrapper: Any = RandomAugmentWrapper(data.with_format("numpy"), transform, seed=0,
                                            adapter=adapter)  # fmt: skip
        outputs = list(wrapper) if streamed else [wrapper[i] for i in range(4)]
        assert seen == [np.dtype(np.uint8)] * 4
        for index, out in enumerate(outputs):
            assert out["image"].dtype == np.uint8
            assert out["mask"].dtype == np.uint8
            assert out["image"].tolist() == [[[60 * index] * 3] * 40] * 32
            assert out["mask"].tolist() == [[index] * 40] * 32

    def test_the_torch_format_keeps_its_tensors(self) -> None:
        features = datasets.Features({"image": datasets.Array3D(shape=(3, 8, 8), dtype="uint8")})
        rows = datasets.Dataset.from_dict(
            {"image": [np.full((3, 8, 8), 200, np.uint8)] * 2}, features=features
        ).with_format("torch")
        wrapper = RandomAugmentWrapper(rows, A.Compose([A.HorizontalFlip(p=1.0)]), seed=0)
        out = wrapper[0]
        assert type(out["image"]) is torch.Tensor
        assert out["image"].dtype == torch.uint8
        assert out["image"].tolist() == [[[200] * 8] * 8] * 3

    def test_a_value_the_declared_dtype_cannot_hold_is_refused(self) -> None:
        rows = array_rows().remove_columns("objects").with_format("numpy")
        sample = {"image": np.full((32, 40, 3), 999, np.int64), "mask": np.zeros((32, 40))}
        adapter = check_adapter(None, dataset=rows)  # as a wrapper binds it to the dataset
        with pytest.raises(ValueError, match=re.escape("column 'image' is declared Array3D")):
            adapter.unpack(sample, {"image", "mask"})
