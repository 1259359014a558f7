from __future__ import annotations

from collections import Counter
from typing import Any
from unittest import mock

import cv2
import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rankaug import MosaicDataset, MosaicGrid, Targets
from rankaug.boxes import BOX_FORMATS, BoxFormat, from_xyxy, to_xyxy
from rankaug.errors import SampleError
from rankaug.mosaic import MosaicAffine, few_boxes
from rankaug.mosaic import outlines as outlines_module
from rankaug.mosaic import targets as targets_module
from rankaug.mosaic.targets import TOLERANCE
from rankaug.polygons import fill, outline
from tests.boxes.polygons import clip_polygon
from tests.mosaic.painted import GEOMETRY, colour_of, grouped, mapped_boxes, painted_datasets
from tests.mosaic.warped import AFFINES, apply, box_shows

ODD = st.integers(4, 30).map(lambda n: 2 * n + 1)


def in_format(sample: dict[str, Any], fmt: BoxFormat, dtype: Any) -> dict[str, Any]:
    hw = sample["image"].shape[:2]
    boxes = from_xyxy(sample["bboxes"].astype(np.float64), fmt, hw).astype(dtype)
    return {"image": sample["image"], "bboxes": boxes, "labels": sample["labels"]}


def expected_labels(
    record: dict[str, Any], data: list[dict[str, Any]], fmt: BoxFormat
) -> tuple[Counter[int], Counter[int]]:
    """The boxes a mosaic must keep, and those it may, worked out from its record alone:
    each source box mapped from its tile's source window onto its output window, clipped
    to it, kept where it holds a pixel centre (surely, or possibly: see box_shows)."""
    must: Counter[int] = Counter()
    may: Counter[int] = Counter()

    def pixels(sample: dict[str, Any]) -> np.ndarray:
        return to_xyxy(sample["bboxes"].astype(np.float64), fmt, sample["image"].shape[:2])

    for label, box in mapped_boxes(record, data, pixels):
        sure, maybe = box_shows(box)
        must[label] += sure
        may[label] += maybe
    return +must, +may


def pixels_box(polygon: np.ndarray, size: int) -> list[float]:
    """The box of the pixels a polygon draws over a ``size x size`` image (from its fill)."""
    ys, xs = np.nonzero(fill(np.asarray(polygon), (0, size, 0, size)))
    return [float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)]


def named(labels: list[Any], names: list[str] | None = None) -> list[dict[str, Any]]:
    """Tiles with one whole-image box each, labelled ``labels[i]`` (and ``names[i]``)."""
    samples = []
    for i, label in enumerate(labels):
        box = np.array([[0.0, 0.0, 20.0, 20.0]], np.float32)
        sample = {"image": np.full((20, 20, 3), 10 * i, np.uint8), "bboxes": box, "labels": label}
        if names is not None:
            sample["names"] = np.array([names[i]])
        samples.append(sample)
    return samples


def _corner_square() -> dict[str, Any]:
    """A 12x12 painted sample whose one object is the 4x4 square in its corner."""
    image = np.zeros((12, 12, 3), np.uint8)
    image[:4, :4] = (70, 40, 40)
    mask = np.zeros((12, 12), np.uint8)
    mask[:4, :4] = 1
    return {"image": image, "bboxes": np.array([[0.0, 0.0, 4.0, 4.0]], np.float32),
            "labels": np.array([1]), "mask": mask, "masks": mask[None]}  # fmt: skip


class TestMapTargets:
    def test_label_fields_keep_the_main_dtype_or_are_refused(self) -> None:
        # cast to the main sample's int8 unchecked before: a partner's 300 came back 44
        fits = named([np.array([5], np.int8), np.array([100], np.int64)])
        out = MosaicDataset(fits, seed=0, output_size=40, keying="sample")[0]
        assert out["labels"].dtype == np.int8
        assert out["labels"].tolist() == [5, 100, 100, 100]
        wraps = named([np.array([5], np.int8), np.array([300], np.int64)])
        mosaic = MosaicDataset(wraps, seed=0, output_size=40, keying="sample")
        with pytest.raises(SampleError, match=r"dataset\[1\] 'labels' holds 300 \(int64\), which "
                           r"the main sample dataset\[0\]'s int8 cannot hold exactly: give every "
                           r"sample's 'labels' one dtype"):  # fmt: skip
            mosaic[0]

    def test_string_fields_widen_to_the_longest(self) -> None:
        # cut to the main sample's <U3 before: 'elephant' came back 'ele'
        data = named([np.array([0]), np.array([1])], ["cat", "elephant"])
        targets = Targets(label_fields=("labels", "names"))
        out = MosaicDataset(data, seed=0, output_size=40, keying="sample", targets=targets)[0]
        assert out["names"].dtype == np.dtype("<U8")
        assert out["names"].tolist() == ["cat", "elephant", "elephant", "elephant"]

    def test_empty_lists_of_a_background_image_decide_no_dtype(self) -> None:
        # albumentations' empty lists: np.asarray([]) is float64, and the int labels of
        # the partners came back floats
        data = named([[], [1], [2], [3]])
        data[0]["bboxes"] = []
        out = MosaicDataset(data, seed=0, output_size=40, keying="sample")[0]
        assert len(out["labels"]) == len(out["bboxes"]) > 0
        assert {type(label) for label in out["labels"]} == {int}
        assert set(out["labels"]) <= {1, 2, 3}

    def test_empty_lists_of_a_torchvision_target_decide_no_dtype(self) -> None:
        data: list[tuple[torch.Tensor, dict[str, Any]]] = [
            (torch.full((3, 20, 20), 10 * i, dtype=torch.uint8),
             {"boxes": torch.tensor([[0.0, 0.0, 20.0, 20.0]]), "labels": torch.tensor([i])})
            for i in range(4)
        ]  # fmt: skip
        data[0] = (data[0][0], {"boxes": [], "labels": []})
        _, target = MosaicDataset(data, seed=0, output_size=40, keying="sample")[0]
        assert isinstance(target["labels"], list)
        assert len(target["labels"]) == len(target["boxes"]) > 0
        assert {type(label) for label in target["labels"]} == {int}

    # One-image datasets where float error at a window's edge gave boxes 1e-15 px high
    # (or, after float32, 0 px): issue 9, item 5.
    @pytest.mark.parametrize(
        ("fmt", "dtype", "seed", "hw", "box", "output_size"),
        [
            ("yolo", np.float64, 214, (7, 9), (2, 2, 3, 3), (33, 55)),
            ("yolo", np.float64, 56, (19, 31), (11, 0, 31, 19), (41, 47)),
            ("albumentations", np.float64, 519, (29, 11), (2, 0, 6, 15), (47, 33)),
            ("albumentations", np.float32, 128, (31, 29), (19, 13, 28, 21), (17, 31)),
        ],
    )  # fmt: skip
    def test_no_slivers_where_boxes_meet_a_window_edge(
        self, fmt: BoxFormat, dtype: Any, seed: int, hw: tuple[int, int],
        box: tuple[int, int, int, int], output_size: tuple[int, int],
    ) -> None:  # fmt: skip
        boxes = from_xyxy(np.array([box], np.float64), fmt, hw).astype(dtype)
        sample = {"image": np.zeros((*hw, 3), np.uint8), "labels": np.array([1]), "bboxes": boxes}
        mosaic = MosaicDataset(
            [sample],
            seed=seed,
            output_size=output_size,
            targets=Targets(box_format=fmt),
            layout=MosaicGrid(scale_range=(0.37, 1.9)),
            keying="sample",
        )
        out = mosaic[0]
        pixels = to_xyxy(out["bboxes"].astype(np.float64), fmt, out["image"].shape[:2])
        assert (pixels[:, 2:] - pixels[:, :2] > TOLERANCE / 2).all()
        must, may = expected_labels(out["mosaic"], [sample], fmt)
        assert sum(must.values()) <= len(pixels) <= sum(may.values())

    @given(data=painted_datasets(sides=ODD), fmt=st.sampled_from(BOX_FORMATS),
           dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**32 - 1),
           output_size=st.tuples(ODD, ODD),
           scale_mode=st.sampled_from(["keep", "fit", "fill"]))  # fmt: skip
    def test_kept_boxes_have_pixels_show_them_and_none_is_missing(
        self, data: list[dict[str, Any]], fmt: BoxFormat, dtype: Any, seed: int,
        output_size: tuple[int, int], scale_mode: str,
    ) -> None:  # fmt: skip
        source = [in_format(sample, fmt, dtype) for sample in data]
        mosaic = MosaicDataset(
            source,
            seed=seed,
            output_size=output_size,
            targets=Targets(box_format=fmt),
            layout=MosaicGrid(
                scale_mode=scale_mode,
                scale_range=(0.37, 1.9),
                interpolation=cv2.INTER_NEAREST_EXACT,
            ),
            keying="sample",
        )
        for index in range(len(data)):
            out = mosaic[index]
            image = out["image"]
            boxes = to_xyxy(out["bboxes"].astype(np.float64), fmt, image.shape[:2])
            assert (boxes[:, 2:] - boxes[:, :2] > 0).all()
            for (x0, y0, x1, y1), label in zip(boxes, out["labels"], strict=True):
                inner = image[int(np.ceil(y0)) : int(y1), int(np.ceil(x0)) : int(x1)]
                assert (inner == colour_of(int(label))).all()
            must, may = expected_labels(out["mosaic"], source, fmt)
            assert must <= Counter(out["labels"].tolist()) <= may

    @settings(max_examples=60)
    @given(
        data=st.data(),
        seed=st.integers(0, 2**32 - 1),
        many=st.booleans(),
        dtype=st.sampled_from([np.float64, np.float32]),
    )
    def test_a_few_boxes_go_row_by_row_bit_for_bit(
        self, data: st.DataObject, seed: int, many: bool, dtype: Any
    ) -> None:
        # up to 32 pixel boxes without filters are mapped in Python (few_boxes.row_by_row),
        # more with numpy: the same floats, the same boxes kept, for any float boxes (the
        # Python pass makes float32 boxes float32 at once, numpy's are cast)
        edges = st.floats(0.0, 1.0) | st.sampled_from([0.0, 1.0])
        samples = []
        for index in range(data.draw(st.integers(1, 5))):
            h, w = data.draw(st.integers(3, 70)), data.draw(st.integers(3, 70))
            rows = data.draw(st.lists(st.tuples(edges, edges, edges, edges), max_size=6))
            unit = np.array(rows, np.float64).reshape(-1, 4)
            xs, ys = np.sort(unit[:, [0, 2]], axis=1) * w, np.sort(unit[:, [1, 3]], axis=1) * h
            boxes = np.stack([xs[:, 0], ys[:, 0], xs[:, 1], ys[:, 1]], axis=1).astype(dtype)
            inside = (boxes[:, 2] > 0) & (boxes[:, 3] > 0) & (boxes[:, 0] < w) & (boxes[:, 1] < h)
            boxes = np.concatenate([[[0.0, 0.0, w, h]], boxes[inside]])
            if many:  # 40 copies: over 32 boxes in every mosaic, the vectorised path
                boxes = np.tile(boxes, (40, 1))
            samples.append({"image": np.zeros((h, w, 3), np.uint8), "bboxes": boxes.astype(dtype),
                            "labels": np.arange(len(boxes)) + 100 * index})  # fmt: skip
        size = (data.draw(st.integers(8, 90)), data.draw(st.integers(8, 90)))
        flip = data.draw(st.sampled_from([0.0, 1.0]))  # mirrored: in Python, or by numpy
        mosaic = MosaicDataset(samples, seed=seed, output_size=size, keying="sample",
                               layout=MosaicGrid(scale_range=(0.3, 2.1), flip=flip))  # fmt: skip
        rows_taken = []
        real = few_boxes.row_by_row

        def spy(*args: Any) -> Any:
            found = real(*args)
            rows_taken.append(found is not None)
            return found

        for index in range(len(samples)):
            with mock.patch.object(targets_module, "row_by_row", spy):
                row_by_row = mosaic[index]
            with mock.patch.object(targets_module, "row_by_row", return_value=None):
                vectorised = mosaic[index]
            for key in ("bboxes", "labels"):
                assert row_by_row[key].dtype == vectorised[key].dtype
                np.testing.assert_array_equal(row_by_row[key], vectorised[key])
            assert row_by_row["bboxes"].dtype == dtype
        assert rows_taken == [True] * (0 if many else len(samples))

    def test_labels_stay_int64_when_every_box_is_cut_off(self) -> None:
        # tiles at 3x in a 64x64 output show at most a quarter of their width and height:
        # a box in the middle of each is outside every source window, dropped unmapped
        sample = {"image": np.zeros((64, 64, 3), np.uint8), "labels": np.array([5]),
                  "bboxes": np.array([[28.0, 28.0, 36.0, 36.0]], np.float32)}  # fmt: skip
        mosaic = MosaicDataset([sample] * 3, seed=0, output_size=64, keying="sample",
                               layout=MosaicGrid(scale_range=(3.0, 3.0)))  # fmt: skip
        for index in range(3):
            out = mosaic[index]
            with mock.patch.object(targets_module, "row_by_row", return_value=None):
                vectorised = mosaic[index]  # the same draws ("sample" keying)
            for got in (out, vectorised):
                assert got["bboxes"].shape == (0, 4)
                assert got["bboxes"].dtype == np.float32
                assert got["labels"].shape == (0,)
                assert got["labels"].dtype == np.int64
            np.testing.assert_array_equal(out["image"], vectorised["image"])

    def test_semantic_and_instance_masks_follow_their_pixels(self) -> None:
        image = np.zeros((10, 10, 3), np.uint8)
        image[2:6, 2:6] = 200
        mask = (image[:, :, 0] > 0).astype(np.uint8) * 3
        sample = {"image": image, "bboxes": np.array([[2.0, 2.0, 6.0, 6.0]]),
                  "labels": np.array([1]), "mask": mask, "masks": (mask > 0)[None]}  # fmt: skip
        out = MosaicDataset(
            [sample],
            seed=0,
            output_size=20,
            p=0.0,
            layout=MosaicGrid(fill_mask=9, interpolation=cv2.INTER_NEAREST_EXACT),
        )[0]
        # 10x10 letterboxed at 2x into 20x20: the square lands on [4, 12)^2
        assert (out["mask"][4:12, 4:12] == 3).all()
        assert out["mask"].sum() == 3 * 64
        assert out["masks"].shape == (1, 20, 20)
        assert np.array_equal(out["masks"][0], out["mask"] == 3)
        np.testing.assert_array_equal(out["bboxes"], [[4.0, 4.0, 12.0, 12.0]])
        with_fill = MosaicDataset(
            [sample], seed=0, output_size=(20, 40), p=0.0, layout=MosaicGrid(fill_mask=9)
        )[0]
        assert (with_fill["mask"][:, :10] == 9).all()

    @pytest.mark.parametrize("affine", [None, MosaicAffine(), MosaicAffine(degrees=20.0)])
    def test_eight_byte_masks_keep_their_values(self, affine: MosaicAffine | None) -> None:
        # OpenCV's resize and warpAffine turn int64 into int32: 2**40 came back as 0
        image = np.zeros((10, 10, 3), np.uint8)
        mask = np.zeros((10, 10), np.int64)
        mask[2:8, 2:8] = 2**40 + 3
        sample = {"image": image, "mask": mask, "bboxes": np.array([[2.0, 2.0, 8.0, 8.0]]),
                  "labels": np.array([1])}  # fmt: skip
        out = MosaicDataset([sample], seed=0, output_size=23, p=0.0, affine=affine)[0]
        assert out["mask"].dtype == np.int64
        assert set(np.unique(out["mask"]).tolist()) == {0, 2**40 + 3}

    @pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float64", "uint32"])
    def test_a_warped_mask_of_any_dtype_picks_the_uint8_masks_pixels(self, dtype: str) -> None:
        # a rotating, shearing affine warps nearest: int32, int64 and float64 masks
        # disagreed with a uint8 one (and with the image) at a few pixels
        cells = np.arange(64)[:, None] // 8 * 8 + np.arange(64)[None, :] // 8  # 64 classes

        def outputs(mask_dtype: str) -> list[np.ndarray]:
            data = [{"image": np.zeros((64, 64, 3), np.uint8), "bboxes": np.zeros((0, 4)),
                     "labels": np.zeros(0, np.int64),
                     "mask": ((cells + 16 * i) % 100).astype(mask_dtype)}
                    for i in range(4)]  # fmt: skip
            mosaic = MosaicDataset(data, seed=0, output_size=96, keying="sample",
                                   affine=MosaicAffine(degrees=30.0, shear=5.0))  # fmt: skip
            return [mosaic[i]["mask"] for i in range(4)]

        for mask, expected in zip(outputs(dtype), outputs("uint8"), strict=True):
            assert mask.dtype == dtype
            np.testing.assert_array_equal(mask.astype(np.int64), expected)

    @pytest.mark.parametrize(
        ("fmt", "min_area"), [("pascal_voc", 0.0), ("coco", 0.0), ("pascal_voc", 0.01)]
    )  # row by row, vectorised, filtered
    def test_a_box_between_pixel_centres_is_dropped(self, fmt: BoxFormat, min_area: float) -> None:
        # a 40x40 image letterboxed to 10x10 (1/4): the 1x4 box lands on [0, 0.25] x
        # [0, 1], where no pixel centre is (column 0 reads the image's column 2): it was
        # kept, with an empty mask; the 3x4 box at the right edge holds column 9's centre
        boxes = [(0, 0, 1, 4), (10, 10, 30, 30), (37, 8, 40, 12)]
        image, masks = np.zeros((40, 40, 3), np.uint8), np.zeros((3, 40, 40), np.uint8)
        for k, (x0, y0, x1, y1) in enumerate(boxes):
            image[y0:y1, x0:x1] = colour_of(k + 1)
            masks[k, y0:y1, x0:x1] = 1
        pixels = np.array(boxes, np.float64)
        sample = {"image": image, "labels": np.array([1, 2, 3]), "masks": masks,
                  "bboxes": from_xyxy(pixels, fmt, (40, 40))}  # fmt: skip
        layout = MosaicGrid(interpolation=cv2.INTER_NEAREST_EXACT)
        targets = Targets(box_format=fmt, min_area=min_area)
        out = MosaicDataset([sample], seed=0, output_size=10, p=0.0, layout=layout,
                            targets=targets)[0]  # fmt: skip
        np.testing.assert_array_equal(out["labels"], [2, 3])
        expected = from_xyxy(np.array([[2.5, 2.5, 7.5, 7.5], [9.25, 2.0, 10.0, 3.0]]),
                             fmt, (10, 10))  # fmt: skip
        np.testing.assert_allclose(out["bboxes"], expected)
        assert [int(m.sum()) for m in out["masks"]] == [25, 1]

    @pytest.mark.parametrize(("seed", "label"), [(7, 2), (21, 3), (30, 0)])
    def test_a_rotated_sliver_that_holds_no_pixel_centre_is_dropped(
        self, seed: int, label: int
    ) -> None:
        # a rotating affine kept boxes that the output's edge cut to slivers between two
        # pixel centres (0.04 to 0.4 px): their objects showed no pixel, masks empty
        boxes = [(2, 2, 18, 18), (22, 2, 38, 18), (2, 22, 18, 38), (22, 22, 38, 38)]
        image, masks = np.zeros((40, 40, 3), np.uint8), np.zeros((4, 40, 40), np.uint8)
        for k, (x0, y0, x1, y1) in enumerate(boxes):
            image[y0:y1, x0:x1] = colour_of(k + 1)
            masks[k, y0:y1, x0:x1] = 1
        sample = {"image": image, "bboxes": np.array(boxes, np.float64),
                  "labels": np.arange(4), "masks": masks}  # fmt: skip
        affine = MosaicAffine(degrees=10.0, translate=0.5, scale=0.0)
        mosaic = MosaicDataset([sample], seed=seed, output_size=40, p=0.0, affine=affine,
                               keying="sample")  # fmt: skip
        out = mosaic[0]
        assert label not in out["labels"].tolist()
        assert all(mask.any() for mask in out["masks"])

    def test_a_kept_box_whose_polygon_does_not_show_goes_with_its_fields_and_mask(
        self,
    ) -> None:
        # one 1x1 cell, 20x20, a 40x20 tile covering it: its x in [10, 30] shows at [0, 20]
        hidden = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])  # left of x = 10
        across = np.array([[6.0, 2.0], [14.0, 2.0], [14.0, 8.0], [6.0, 8.0]])
        whole = np.array([[0.0, 0.0], [40.0, 0.0], [40.0, 20.0], [0.0, 20.0]])
        masks = np.zeros((3, 20, 40), np.uint8)
        masks[0, :6, :6] = masks[1, 2:8, 6:14] = masks[2] = 1
        sample = {"image": np.zeros((20, 40, 3), np.uint8), "labels": np.array([1, 2, 3]),
                  "bboxes": np.array([[0, 0, 12, 12], [6, 2, 14, 8], [0, 0, 40, 20.0]]),
                  "masks": masks, "segments": [hidden, across, whole]}  # fmt: skip
        out = MosaicDataset(
            [sample],
            seed=0,
            output_size=20,
            layout=MosaicGrid(grid=(1, 1), scale_mode="fill"),
            targets=Targets(label_fields=("labels",)),
        )[0]
        # the first box shows [10, 12] x [0, 12] of the tile, its polygon nothing; the
        # second's pixels are x 6 to 14 and y 2 to 8 (its edges' too), 10 to 14 showing
        np.testing.assert_array_equal(out["labels"], [2, 3])
        np.testing.assert_array_equal(out["bboxes"], [[0, 2, 5, 9], [0, 0, 20, 20]])
        assert out["masks"].shape == (2, 20, 20)
        assert out["masks"][0].sum() == 4 * 6
        assert out["masks"][1].all()
        across_out, whole_out = out["segments"]
        np.testing.assert_array_equal(across_out, [[0, 2], [4, 2], [4, 8], [0, 8]])
        # cut at the centres of the last column and row (rankaug.polygons.pixel_clip)
        np.testing.assert_array_equal(whole_out, [[0, 19.5], [0, 0], [19.5, 0], [19.5, 19.5]])

    @pytest.mark.parametrize("size", [40, 160])  # the same size (nothing moves), 4x
    @pytest.mark.parametrize("form", ["list", "array"])
    def test_a_polygons_box_is_the_box_of_its_objects_pixels(self, size: int, form: str) -> None:
        # the polygon through the centres of its boundary pixels, as CutMix and
        # CopyPaste make them (rankaug.polygons.outline): the box was its bounds, half a
        # pixel inside the object's pixels, so that a mosaic that moves nothing moved it
        mask = np.zeros((40, 40), np.uint8)
        mask[10:20, 5:25] = 1
        mask[20:30, 5:8] = 1  # an L
        image = np.zeros((40, 40, 3), np.uint8)
        image[mask == 1] = 200
        polygon = outline(mask).astype(np.float32)
        sample = {"image": image, "bboxes": np.array([[5.0, 10.0, 25.0, 30.0]], np.float32),
                  "labels": np.array([1]),
                  "segments": [polygon] if form == "list" else polygon[None]}  # fmt: skip
        layout = MosaicGrid(interpolation=cv2.INTER_NEAREST_EXACT)
        out = MosaicDataset([sample], seed=0, output_size=size, p=0.0, layout=layout)[0]
        ys, xs = np.nonzero(out["image"][:, :, 0] == 200)
        pixels = [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
        np.testing.assert_array_equal(out["bboxes"], [pixels])
        scale = size / 40  # an identity moves nothing; 4x scales boxes and points alike
        np.testing.assert_array_equal(
            out["bboxes"], [[5.0 * scale, 10.0 * scale, 25.0 * scale, 30.0 * scale]]
        )
        np.testing.assert_allclose(out["segments"][0], polygon * scale, atol=1e-5)

    @pytest.mark.parametrize("warped", [False, True])
    def test_an_array_polygon_cut_to_more_points_keeps_its_objects_box(self, warped: bool) -> None:
        # a (1, 4, 2) diamond cut to 5 or 6 points was resampled to 4 taken evenly by
        # index (corners cut off) and its box taken from those: boxes missed their
        # objects' pixels by up to 46 px; the box is that of the cut polygon's pixels,
        # as for a list, and the 4 points keep the cut polygon's extremes
        outputs = []
        if warped:  # letterboxed, rotated and moved half out of the output
            diamond = np.array([[20.0, 2.0], [38.0, 20.0], [20.0, 38.0], [2.0, 20.0]], np.float32)
            hw, box = (40, 40), [2.0, 2.0, 38.0, 38.0]
            affine = MosaicAffine(degrees=20.0, translate=0.5, scale=0.0)
            options: dict[str, Any] = {"seed": 1, "output_size": 40, "p": 0.0, "affine": affine}
        else:  # one 1x1 cell, 20x20, the tile covering it: x in [10, 30] shows at [0, 20]
            diamond = np.array([[12.0, 4.0], [18.0, 10.0], [12.0, 16.0], [6.0, 10.0]], np.float32)
            hw, box = (20, 40), [6.0, 4.0, 18.0, 16.0]
            options = {"seed": 0, "output_size": 20,
                       "layout": MosaicGrid(grid=(1, 1), scale_mode="fill")}  # fmt: skip
        for segments in (diamond[None], [diamond]):
            sample = {"image": np.zeros((*hw, 3), np.uint8), "labels": np.array([1]),
                      "segments": segments, "bboxes": np.array([box])}  # fmt: skip
            outputs.append(MosaicDataset([sample], keying="sample", **options)[0])
        array, listed = outputs
        (polygon,), (cut,) = array["segments"], listed["segments"]
        assert len(polygon) == 4 < len(cut)
        np.testing.assert_array_equal(array["bboxes"], listed["bboxes"])
        np.testing.assert_array_equal(polygon.min(axis=0), cut.min(axis=0))
        np.testing.assert_array_equal(polygon.max(axis=0), cut.max(axis=0))
        assert all(point in cut.tolist() for point in polygon.tolist())

    def test_an_array_polygons_box_is_its_objects_pixels_box(self) -> None:
        diamond = np.array([[12.0, 4.0], [18.0, 10.0], [12.0, 16.0], [6.0, 10.0]], np.float32)
        image = np.zeros((20, 40, 3), np.uint8)
        image[fill(diamond, (0, 20, 0, 40)) == 1] = 200
        sample = {"image": image, "labels": np.array([1]), "segments": diamond[None],
                  "bboxes": np.array([[6.0, 4.0, 18.0, 16.0]])}  # fmt: skip
        layout = MosaicGrid(grid=(1, 1), scale_mode="fill", interpolation=cv2.INTER_NEAREST_EXACT)
        out = MosaicDataset([sample], seed=0, output_size=20, layout=layout)[0]
        ys, xs = np.nonzero(out["image"][:, :, 0] == 200)
        np.testing.assert_array_equal(out["bboxes"], [[0, ys.min(), xs.max() + 1, ys.max() + 1]])
        np.testing.assert_array_equal(out["bboxes"], [pixels_box(out["segments"][0], 20)])

    def test_a_polygon_along_its_images_edges_shows_whole(self) -> None:
        # its fill would draw a column and a row past the image: the object's pixels are
        # the image's, its box the letterbox's window, its visibility 1
        polygon = np.array([[0.0, 0.0], [30.0, 0.0], [30.0, 20.0], [0.0, 20.0]])
        sample = {"image": np.zeros((20, 30, 3), np.uint8), "labels": np.array([1]),
                  "bboxes": np.array([[0.0, 0.0, 30.0, 20.0]]), "segments": [polygon]}  # fmt: skip
        targets = Targets(min_visibility=0.999)
        out = MosaicDataset([sample], seed=0, output_size=60, p=0.0, targets=targets)[0]
        np.testing.assert_array_equal(out["bboxes"], [[0.0, 10.0, 60.0, 50.0]])

    def test_a_kept_box_is_the_box_of_its_clipped_polygons_pixels(self) -> None:
        triangle = np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 20.0]], np.float32)
        sample = {"image": np.zeros((20, 40, 3), np.uint8), "labels": np.array([1]),
                  "bboxes": np.array([[0.0, 0.0, 20.0, 20.0]]), "segments": [triangle]}  # fmt: skip
        out = MosaicDataset(
            [sample], seed=0, output_size=20, layout=MosaicGrid(grid=(1, 1), scale_mode="fill")
        )[0]
        # x in [10, 20] of the triangle: y up to 10 only (the box clipped: y up to 20),
        # and its pixels up to 10 (rankaug.polygons.fill draws its edges' pixels)
        np.testing.assert_array_equal(out["bboxes"], [[0, 0, 11, 11]])
        (polygon,) = out["segments"]
        assert polygon.dtype == np.float32
        np.testing.assert_array_equal(polygon.max(axis=0), [10, 10])

    def test_a_triangle_under_a_rotation_gets_its_polygons_pixels_box(self) -> None:
        # issue 19: its box was the rotated box's enclosing box (x_max 63.4 where the
        # polygon ends at 56.9)
        triangle = np.array([[8.0, 8.0], [56.0, 8.0], [8.0, 56.0]], np.float32)
        sample = {"image": np.zeros((64, 64, 3), np.uint8), "labels": np.array([1]),
                  "bboxes": np.array([[8.0, 8.0, 56.0, 56.0]]), "segments": [triangle]}  # fmt: skip
        affine = MosaicAffine(degrees=45.0, translate=0.0, scale=0.0)
        mosaic = MosaicDataset([sample], seed=0, output_size=64, p=0.0, affine=affine)
        angles = []
        for _ in range(6):  # stream keying: a new angle each time
            out = mosaic[0]
            record = out["mosaic"]["affine"]
            angles.append(abs(record["angle"]))
            moved = [apply(record["maps"][0], x, y) for x, y in triangle.tolist()]
            shown = np.array(clip_polygon(moved, (0, 0, 63.5, 63.5)))
            np.testing.assert_array_equal(out["bboxes"], [pixels_box(out["segments"][0], 64)])
            np.testing.assert_allclose(out["segments"][0], shown, atol=1e-4)
        assert max(angles) > 20

    def test_the_filters_measure_the_box_of_the_polygons_pixels(self) -> None:
        # one 1x1 cell, 20x20, a 40x20 tile covering it: its x in [10, 30] shows at [0, 20];
        # the triangle's pixels (its edges' included) land on [-10, 11] x [0, 20] (420
        # px^2), those that show on [0, 11] x [0, 11] (121 px^2: 0.29); its box showed
        # half (200 px^2)
        triangle = np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 20.0]])
        sample = {"image": np.zeros((20, 40, 3), np.uint8), "labels": np.array([1]),
                  "bboxes": np.array([[0.0, 0.0, 20.0, 20.0]]), "segments": [triangle]}  # fmt: skip

        def labels(**filters: float) -> list[int]:
            mosaic = MosaicDataset(
                [sample],
                seed=0,
                output_size=20,
                layout=MosaicGrid(grid=(1, 1), scale_mode="fill"),
                targets=Targets(**filters),
            )
            out = mosaic[0]
            assert len(out["segments"]) == len(out["bboxes"])
            result: list[int] = out["labels"].tolist()
            return result

        assert labels(min_visibility=0.28) == [1]
        assert labels(min_visibility=0.29) == []
        assert labels(min_area=120.0) == [1]
        assert labels(min_area=122.0) == []
        assert labels(min_height=10.5) == labels(min_width=10.5) == [1]
        assert labels(min_height=11.5) == labels(min_width=11.5) == []

    def test_a_float32_edge_past_the_image_by_rounding_is_its_edge(self) -> None:
        # before: a float32 box ending at 20.000002 (float32(20) after a scale) was
        # clipped on every read, and refused with clip=False
        edge = np.nextafter(np.float32(20), np.float32(21))
        sample = {"image": np.zeros((20, 20, 3), np.uint8), "labels": np.array([1]),
                  "bboxes": np.array([[0.0, 0.0, edge, 20.0]], np.float32)}  # fmt: skip
        exact = {**sample, "bboxes": np.array([[0.0, 0.0, 20.0, 20.0]], np.float32)}
        for clip in (True, False):
            layout = MosaicGrid(grid=(1, 1), scale_mode="fill")
            made = [MosaicDataset([s], seed=0, output_size=20, layout=layout,
                                  targets=Targets(clip=clip)) for s in (sample, exact)]  # fmt: skip
            assert made[0][0]["bboxes"].tolist() == made[1][0]["bboxes"].tolist()

    def test_boxes_are_still_checked_with_polygons(self) -> None:
        triangle = np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 20.0]])
        sample = {"image": np.zeros((20, 20, 3), np.uint8), "labels": np.array([1]),
                  "bboxes": np.array([[0.0, 0.0, 25.0, 20.0]]), "segments": [triangle]}  # fmt: skip
        mosaic = MosaicDataset([sample], seed=0, output_size=20, targets=Targets(clip=False))
        with pytest.raises(SampleError, match=r"dataset\[0\] bboxes .* partly outside"):
            mosaic[0]

    @settings(max_examples=60, deadline=None)
    @given(data=painted_datasets(), geometry=GEOMETRY, affine=st.none() | AFFINES,
           form=st.sampled_from(["list", "array"]), seed=st.integers(0, 2**32 - 1))  # fmt: skip
    @example(  # CI's: 4 source rows onto 54 output rows, 13.5 each where the affine drew 11.8
        data=[_corner_square()], form="list", seed=240,
        geometry={"output_size": (54, 59), "grid": (1, 1), "scale_mode": "fit",
                  "scale_range": (1.0, 1.0), "center_range": (0.25, 0.75), "p": 1.0},
        affine=MosaicAffine(degrees=0.0, translate=0.0, scale=0.5, shear=0.0),
    )  # fmt: skip
    def test_every_box_is_the_box_of_its_objects_pixels(
        self, data: list[dict[str, Any]], geometry: dict[str, Any], affine: MosaicAffine | None,
        form: str, seed: int,
    ) -> None:  # fmt: skip
        for sample in data:  # a diamond in each box, grown so that some cross a window
            diamonds = [[((x0 + x1) / 2, y0 - 2), (x1 + 2, (y0 + y1) / 2),
                         ((x0 + x1) / 2, y1 + 2), (x0 - 2, (y0 + y1) / 2)]
                        for x0, y0, x1, y1 in sample["bboxes"].tolist()]  # fmt: skip
            points = np.array(diamonds, np.float32).reshape(-1, 4, 2)
            sample["segments"] = list(points) if form == "list" else points
            del sample["masks"], sample["mask"]
        if affine is not None:
            geometry = {**geometry, "canvas": "output"}
        mosaic = MosaicDataset(data, seed=seed, keying="sample", affine=affine, **grouped(geometry))
        boxed = outlines_module.pixel_boxes
        for index in range(len(data)):
            with mock.patch.object(targets_module, "pixel_boxes", wraps=boxed) as spied:
                out = mosaic[index]
            boxes, segments = out["bboxes"], out["segments"]
            height, width = out["image"].shape[:2]
            assert len(boxes) == len(segments) == len(out["labels"])
            matrix = out["mosaic"].get("affine", {}).get("matrix", ((1, 0), (0, 1)))
            warped = abs(matrix[0][1]) > 1e-12 or abs(matrix[1][0]) > 1e-12
            for box, polygon in zip(boxes.tolist(), segments, strict=True):
                ys, xs = np.nonzero(fill(np.asarray(polygon), (0, height, 0, width)))
                drawn = [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
                if warped:  # the box of the pixels its output polygon draws
                    assert box == drawn
                else:  # those of its pixels in its tile, resized: within a tile pixel (in
                    # output pixels, each axis's scale of the window the tile went
                    # through: whole source pixels onto whole output pixels, so an
                    # affine's may exceed its drawn scale) and a pixel of the polygon's
                    places = spied.call_args.args[0]
                    scale = max(max(place.kx, place.ky) for place in places if place.kx)
                    np.testing.assert_allclose(box, drawn, atol=scale + 1.0 + 1e-6)
                    assert 0 <= box[0] < box[2] <= width
                    assert 0 <= box[1] < box[3] <= height
