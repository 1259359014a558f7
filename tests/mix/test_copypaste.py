from __future__ import annotations

import inspect
import re
from typing import Any
from unittest import mock

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.data import DataLoader

from rankaug import (
    EpochSampler,
    MixUpDataset,
    MosaicAffine,
    MosaicDataset,
    SampleError,
    Targets,
)
from rankaug.adapters import KeyMap
from rankaug.datasets import write_yolo_folder
from rankaug.datasets.yolo import YoloFolder
from rankaug.mix import CopyPasteDataset, _masks
from rankaug.mix._masks import FEW_PAIRS, apart, bounds, cover, overlap, overlap_bounds
from rankaug.mix.base import PairPlan
from rankaug.mix.copypaste import tight_box
from rankaug.polygons import fill, outline, resample
from tests.mix.painted import colour_of, instance_datasets, instance_sample


class Fixed(CopyPasteDataset[Any]):
    """Copy-paste whose partner is always the next sample."""

    def plan(self, index: int, rng: np.random.Generator, epoch: int) -> PairPlan:
        return PairPlan(True, (index, (index + 1) % len(self)), (), ())


def assert_replayed(paste: CopyPasteDataset[Any], out: dict[str, Any]) -> None:
    """``paste.replay`` of ``out``'s record gives ``out`` again, record included."""
    again = paste.replay(out["copypaste"])
    assert again["copypaste"] == out["copypaste"]
    for key in ("image", "bboxes", "labels", "mask", "masks"):
        np.testing.assert_array_equal(again[key], out[key])


class TestTightBox:
    def test_box_around_the_pixels(self) -> None:
        mask = np.zeros((5, 6), bool)
        mask[1:3, 2] = True
        mask[4, 5] = True
        assert tight_box(mask) == [2.0, 1.0, 6.0, 5.0]


class TestApart:
    @given(data=st.data(), many=st.booleans())
    def test_covers_rule_bit_for_bit_one_pair_at_a_time_or_through_cover(
        self, data: st.DataObject, many: bool
    ) -> None:
        # up to FEW_PAIRS pairs in Python, more through cover(): the same rows kept, and
        # cover() called only for many pairs
        coordinate = st.sampled_from([0.0, 1.0, 2.5, 10.0]) | st.floats(0.0, 10.0)

        def boxes(count: int) -> np.ndarray:
            corners = data.draw(st.lists(st.tuples(*[coordinate] * 4), min_size=count,
                                         max_size=count))  # fmt: skip
            return np.array(
                [[min(a, c), min(b, d), max(a, c), max(b, d)] for a, b, c, d in corners],
                np.float64,
            ).reshape(-1, 4)

        rows, others = (
            (17, 16) if many else (data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8)))
        )
        assert (rows * others > FEW_PAIRS) == many
        mine, theirs = boxes(rows), boxes(others)
        chosen = data.draw(
            st.lists(st.integers(0, rows - 1), unique=True, min_size=rows if many else 0)
        )
        limit = data.draw(st.sampled_from([0.0, 0.25, 0.3, 1.0]) | st.floats(0.0, 1.5))
        expected = [k for k in chosen if (cover(mine[[k]], theirs) < limit).all()]
        with mock.patch.object(_masks, "cover", side_effect=cover) as spy:
            assert apart(mine, theirs, chosen, limit) == expected
        assert spy.called == many

    def test_a_box_of_no_area_is_covered_by_nothing(self) -> None:
        # cover() divides by max(area, 1e-12): a point box inside another is covered 0
        point, around = np.array([[1.0, 1.0, 1.0, 1.0]]), np.array([[0.0, 0.0, 2.0, 2.0]])
        assert apart(around, point, [0], 0.3) == [0]
        assert apart(point, around, [0], 0.0) == []


REGIONS = st.builds(  # (y0, y1, x0, x1), some of them empty
    lambda y, x: (*sorted(y), *sorted(x)), *[st.tuples(st.integers(0, 12), st.integers(0, 12))] * 2
)


class TestOverlapBounds:
    @given(region=REGIONS, regions=st.lists(REGIONS, max_size=6))
    def test_the_bounds_of_each_overlap_or_none(
        self, region: tuple[int, int, int, int], regions: list[tuple[int, int, int, int]]
    ) -> None:
        """Grown one overlap at a time: bounds() of the overlaps, None when none is left."""
        meets = [m for m in (overlap(region, r) for r in regions) if m is not None]
        assert overlap_bounds(region, regions) == (bounds(meets) if meets else None)

    def test_each_side_from_the_overlap_that_reaches_furthest(self) -> None:
        # the second overlap reaches furthest up and right, the first down and left
        regions = [(4, 9, 0, 5), (0, 6, 3, 10)]
        assert overlap_bounds((2, 8, 1, 8), regions) == (2, 8, 1, 8)
        assert overlap_bounds((2, 8, 1, 8), regions[:1]) == (4, 8, 1, 5)
        assert overlap_bounds((2, 8, 1, 8), [(9, 12, 0, 12)]) is None


class TestPaste:
    @pytest.mark.parametrize(
        ("dtype", "channels"),
        [("uint8", 3), ("uint8", 0), ("float32", 0), ("uint16", 5), ("float16", 3), ("int64", 0)],
    )
    def test_writes_where_the_mask_is_through_opencv_or_numpy(
        self, dtype: str, channels: int
    ) -> None:
        # OpenCV writes into a view of the image and gives it back; 5 channels or a
        # dtype it lacks go through numpy: only the masked pixels change, either way
        rng = np.random.default_rng(3)
        shape = (9, 11, channels) if channels else (9, 11)
        image = rng.integers(0, 50, shape).astype(dtype)
        source = rng.integers(50, 99, (4, 6, *shape[2:])).astype(dtype)
        where = (rng.random((4, 6)) < 0.5).astype(np.uint8)
        want = image.copy()
        want[2:6, 3:9][where != 0] = source[where != 0]
        _masks.paste(image[2:6, 3:9], source, where)
        assert np.array_equal(image, want)


class TestCopyPastePixels:
    @given(
        data=instance_datasets(),
        seed=st.integers(0, 2**64 - 1),
        min_visibility=st.sampled_from([0.0, 0.3, 0.9]),
        source=st.sampled_from(["partner", "flip"]),
        dtype=st.sampled_from([np.uint8, np.bool_, np.int64]),
        max_overlap=st.sampled_from([None, 0.3]),
    )
    def test_every_instance_shows_its_colour_and_boxes_are_tight(
        self, data: list[dict[str, Any]], seed: int, min_visibility: float, source: str,
        dtype: Any, max_overlap: float | None,
    ) -> None:  # fmt: skip
        for sample in data:
            sample["masks"] = sample["masks"].astype(dtype)
        paste = CopyPasteDataset(
            data, seed=seed, p=1.0, source=source, min_visibility=min_visibility,  # type: ignore[arg-type]
            max_overlap=max_overlap, keying="sample",
        )  # fmt: skip
        for index in range(len(data)):
            out = paste[index]
            record = out["copypaste"]
            main, *pasted_from = record["indices"]  # the source's index when pasted
            assert main == index
            assert record["applied"] == bool(record["pasted"])
            assert len(pasted_from) == int(record["applied"])
            assert (pasted_from == [index]) == (source == "flip" and record["applied"])
            partner = pasted_from[0] if pasted_from else index
            kept = [i for i in range(len(data[index]["labels"])) if i not in record["dropped"]]
            shown = [k for k in record["pasted"] if k not in record["hidden"]]
            expected = [*data[index]["labels"][kept], *data[partner]["labels"][shown]]
            assert out["labels"].tolist() == expected
            assert out["masks"].shape == (len(expected), 24, 32)
            assert out["masks"].dtype == np.dtype(dtype)
            covers = [0.0]  # with max_overlap, pasted boxes cover < 30% of every main box
            for k in record["pasted"]:
                box = data[partner]["bboxes"][k].astype(np.float64)
                if source == "flip":
                    box = np.array([32 - box[2], box[1], 32 - box[0], box[3]])
                for other in data[index]["bboxes"].astype(np.float64):
                    low, high = np.maximum(box[:2], other[:2]), np.minimum(box[2:], other[2:])
                    covers.append(
                        np.clip(high - low, 0, None).prod() / (other[2:] - other[:2]).prod()
                    )
            assert max(covers) < (np.inf if max_overlap is None else max_overlap)
            for label, mask, box in zip(out["labels"], out["masks"], out["bboxes"], strict=True):
                pixels = mask != 0
                assert pixels.any()
                # every instance's mask pixels carry its colour, pasted or not
                assert (out["image"][pixels] == colour_of(int(label))).all()
                assert out["mask"][pixels].tolist() == [label] * int(pixels.sum())
                assert box.tolist() == tight_box(pixels)
            # the pasted pixels: the painted instances of the source (mirrored for "flip")
            masks = data[partner]["masks"][record["pasted"]] != 0
            pasted = (masks[:, :, ::-1] if source == "flip" else masks).any(axis=0)
            for i, before in enumerate(data[index]["masks"] != 0):
                left = before & ~pasted
                if i in kept:  # trimmed to what still shows, and enough of it
                    np.testing.assert_array_equal(out["masks"][kept.index(i)] != 0, left)
                    assert left.sum() >= min_visibility * before.sum()
                else:
                    assert left.sum() < max(min_visibility * before.sum(), 1)


class TestCopyPasteTargets:
    def test_covered_instances_are_trimmed_or_dropped(self) -> None:
        main = instance_sample(0, (10, 10), [(0, 0, 4, 10), (6, 0, 10, 2)])
        partner = instance_sample(1, (10, 10), [(2, 0, 10, 5)])
        out = Fixed([main, partner], seed=0, p=1.0, min_visibility=0.5)[0]
        # the first loses a 2x5 corner of 40 px (75% left): trimmed; the second: covered
        assert out["copypaste"]["dropped"] == [1]
        assert out["copypaste"]["pasted"] == [0]
        assert out["labels"].tolist() == [1, 17]
        assert out["bboxes"].tolist() == [[0.0, 0.0, 4.0, 10.0], [2.0, 0.0, 10.0, 5.0]]
        assert out["masks"][0].sum() == 30
        assert not out["masks"][0][:5, 2:].any()
        assert out["masks"][0].dtype == np.uint8

    def test_the_box_shrinks_to_what_is_left(self) -> None:
        main = instance_sample(0, (10, 10), [(0, 0, 10, 4)])
        partner = instance_sample(1, (10, 10), [(5, 0, 10, 10)])
        out = Fixed([main, partner], seed=0, p=1.0)[0]
        assert out["bboxes"].tolist() == [[0.0, 0.0, 5.0, 4.0], [5.0, 0.0, 10.0, 10.0]]

    def test_later_pasted_instances_hide_earlier_ones(self) -> None:
        main = instance_sample(0, (10, 10), [])
        partner = {
            **instance_sample(1, (10, 10), [(0, 0, 4, 4)]),
        }
        masks = np.zeros((2, 10, 10), np.uint8)
        masks[0, 0:4, 0:4] = 1
        masks[1, 0:5, 0:5] = 1  # annotated on top of the first
        partner.update(
            masks=masks, bboxes=np.array([[0, 0, 4, 4], [0, 0, 5, 5]], np.float32),
            labels=np.array([7, 8]),
        )  # fmt: skip
        out = Fixed([main, partner], seed=0, p=1.0)[0]
        assert out["copypaste"]["pasted"] == [0, 1]
        assert out["copypaste"]["hidden"] == [0]
        assert out["labels"].tolist() == [8]

    @pytest.mark.parametrize("polygons", [False, True])
    @pytest.mark.parametrize("source", ["partner", "flip"])
    def test_keypoints_under_pasted_pixels_are_dropped_with_their_fields(
        self, polygons: bool, source: str
    ) -> None:
        # they were kept, on the pasted instance's pixels (a covered person's joints)
        # pasted over columns 2 to 6 (the partner's) or 6 to 10 (the main's mirrored), rows
        # 0 to 5; keypoints on each side of their edges, and outside the image
        main = instance_sample(
            0, (10, 10), [(0, 0, 4, 10) if source == "partner" else (0, 0, 4, 5)]
        )
        partner = instance_sample(1, (10, 10), [(2, 0, 6, 5)])
        points = np.array([[1.9, 1.0], [2.0, 1.0], [5.99, 4.99], [6.0, 4.0], [3.0, 5.0],
                           [9.99, 0.0], [-1.0, 1.0], [3.0, 20.0], [6.5, 4.0]])  # fmt: skip
        main.update(keypoints=np.c_[points, np.arange(9)], joint=np.arange(9) * 10)
        for sample in (main, partner):
            if polygons:
                sample["segments"] = [outline(m.astype(bool)) for m in sample.pop("masks")]
            sample.setdefault("keypoints", np.zeros((0, 3)))
            sample.setdefault("joint", np.zeros(0, np.int64))
        targets = Targets(keypoint_fields=("joint",))
        wrapper = Fixed if source == "partner" else CopyPasteDataset
        paste = wrapper([main, partner], seed=0, p=1.0, source=source, targets=targets)
        out = paste[0]
        assert out["copypaste"]["applied"] is True
        pasted = [2, 3, 4, 5] if source == "partner" else [6, 7, 8, 9]  # its columns
        under = [k for k, (x, y) in enumerate(points) if 0 <= y < 5 and int(x) in pasted]
        left = [k for k in range(9) if k not in under]
        assert under  # the paste covers some
        assert out["keypoints"][:, 2].tolist() == left  # the visibility column with them
        assert out["joint"].tolist() == [10 * k for k in left]
        np.testing.assert_array_equal(out["keypoints"][:, :2], points[left])
        again = paste.replay(out["copypaste"])
        np.testing.assert_array_equal(again["keypoints"], out["keypoints"])

    def test_fraction_zero_pastes_nothing(self) -> None:
        data = [instance_sample(i, (8, 8), [(1, 1, 5, 5)]) for i in range(2)]
        paste = CopyPasteDataset(data, seed=0, p=1.0, fraction=0.0)
        out = paste[0]
        # nothing pasted: the main sample's own arrays, recorded as a sample not pasted
        assert out["copypaste"] == {
            **out["copypaste"], "applied": False, "indices": [0], "pasted": [],
            "dropped": [], "hidden": [],
        }  # fmt: skip
        assert out["image"] is data[0]["image"]
        assert out["masks"] is data[0]["masks"]
        assert out["bboxes"] is data[0]["bboxes"]
        assert_replayed(paste, out)

    def test_instances_all_refused_by_max_overlap_paste_nothing(self) -> None:
        main = instance_sample(0, (8, 8), [(0, 0, 8, 8)])
        partner = instance_sample(1, (8, 8), [(1, 1, 5, 5)])  # a quarter of main's box
        paste = Fixed([main, partner], seed=0, p=1.0, max_overlap=0.1)
        out = paste[0]
        assert out["copypaste"]["applied"] is False
        assert out["copypaste"]["indices"] == [0]
        assert out["image"] is main["image"]
        assert out["bboxes"] is main["bboxes"]
        assert_replayed(paste, out)
        pasted = Fixed([main, partner], seed=0, p=1.0, max_overlap=0.3)[0]
        assert pasted["copypaste"]["applied"] is True
        assert pasted["copypaste"]["indices"] == [0, 1]

    def test_flip_pastes_the_mirrored_instances(self) -> None:
        data = [instance_sample(0, (6, 10), [(0, 1, 3, 4)])]
        out = CopyPasteDataset(data, seed=0, p=1.0, source="flip")[0]
        assert out["copypaste"]["indices"] == [0, 0]
        assert out["bboxes"].tolist() == [[0.0, 1.0, 3.0, 4.0], [7.0, 1.0, 10.0, 4.0]]
        np.testing.assert_array_equal(out["masks"][1], data[0]["masks"][0][:, ::-1])


class TestCopyPasteDataset:
    def test_replay_is_bit_for_bit(self) -> None:
        data = [
            instance_sample(i, (12, 12), [(i, i, i + 6, i + 6), (5, 5, 11, 9)]) for i in range(5)
        ]
        paste = CopyPasteDataset(data, seed=3, p=1.0, fraction=0.5)
        paste[2]
        second = paste[2]
        again = paste.replay(second["copypaste"])
        for key in ("image", "bboxes", "labels", "mask", "masks"):
            np.testing.assert_array_equal(again[key], second[key])
        assert again["copypaste"] == second["copypaste"]

    def test_tensor_pairs_keep_their_shape_and_dtypes(self) -> None:
        data = []
        for i in range(3):
            sample = instance_sample(i, (8, 10), [(0, 0, 3, 3) if i == 0 else (5, 4, 9, 8)])
            target = {
                "boxes": torch.from_numpy(sample["bboxes"]),
                "labels": torch.from_numpy(sample["labels"]),
                "masks": torch.from_numpy(sample["masks"].astype(bool)),
            }
            data.append((torch.from_numpy(sample["image"]).permute(2, 0, 1), target))
        image, target = CopyPasteDataset(data, seed=0, p=1.0, min_visibility=0.0)[0]
        assert image.shape == (3, 8, 10)
        assert image.dtype == torch.uint8
        assert target["masks"].dtype == torch.bool
        assert target["labels"].dtype == torch.int64
        assert target["boxes"].dtype == torch.float32
        partner = target["copypaste"]["indices"][1]
        assert target["labels"].tolist() == [1, partner * 16 + 1]
        assert target["boxes"].tolist() == [[0.0, 0.0, 3.0, 3.0], [5.0, 4.0, 9.0, 8.0]]
        assert target["masks"].shape == (2, 8, 10)
        assert target["copypaste"]["pasted"] == [0]

    def test_samples_without_instance_masks_are_refused(self) -> None:
        data = [{"image": np.zeros((4, 4), np.uint8), "bboxes": [[0, 0, 2, 2]], "labels": [1]}] * 2
        with pytest.raises(
            SampleError, match=r"index 1 .*dataset\[1\] has no instance masks \('masks'\) nor"
        ):
            CopyPasteDataset(data, seed=0, p=0.0)[1]

    def test_samples_with_masks_and_polygons_are_refused(self) -> None:
        data = [with_polygons(instance_sample(0, (4, 4), [(0, 0, 2, 2)]), keep_masks=True)] * 2
        with pytest.raises(SampleError, match=r"dataset\[0\] has both instance masks"):
            CopyPasteDataset(data, seed=0, p=0.0)[0]

    @pytest.mark.parametrize("label", [3, np.array([0.25, 0.75])])
    def test_a_class_is_refused_with_advice_that_names_its_arguments(self, label: Any) -> None:
        data = [{**instance_sample(i, (6, 6), [(0, 0, 2, 2)]), "label": label} for i in range(2)]
        with pytest.raises(SampleError, match=r"dataset\[0\] has the class ") as caught:
            CopyPasteDataset(data, seed=0, p=1.0)[0]
        advised = re.findall(r"(\w+)=", str(caught.value))
        parameters = inspect.signature(CopyPasteDataset).parameters
        assert [name for name in advised if name not in parameters] == []
        # the advice works: under another key, the class is kept as it is
        data = [
            {**instance_sample(i, (6, 6), [(0, 0, 2, 2)]), "image_class": label} for i in range(2)
        ]
        assert CopyPasteDataset(data, seed=0, p=1.0)[0]["image_class"] is label

    def test_per_box_classes_named_label_in_label_fields_are_pasted(self) -> None:
        data = [instance_sample(i, (8, 10), [(0, 0, 3, 3) if i == 0 else (5, 4, 9, 8)])
                for i in range(2)]  # fmt: skip
        data = [{**{k: v for k, v in d.items() if k != "labels"}, "label": d["labels"]}
                for d in data]  # fmt: skip
        paste = CopyPasteDataset(data, seed=0, p=1.0, targets=Targets(label_fields=("label",)))
        out = paste[0]
        assert out["label"].tolist() == [1, 17]  # the partner's class came with its box
        assert out["bboxes"].tolist() == [[0.0, 0.0, 3.0, 3.0], [5.0, 4.0, 9.0, 8.0]]
        assert out["copypaste"]["pasted"] == [0]
        assert "labels" not in out

    def test_per_box_classes_a_keymap_reads_from_label_are_pasted(self) -> None:
        data = [instance_sample(i, (8, 10), [(0, 0, 3, 3) if i == 0 else (5, 4, 9, 8)])
                for i in range(2)]  # fmt: skip
        data = [{**{k: v for k, v in d.items() if k != "labels"}, "label": d["labels"]}
                for d in data]  # fmt: skip
        adapter = KeyMap(image="image", bboxes="bboxes", masks="masks", mask="mask", labels="label")
        out = CopyPasteDataset(data, seed=0, p=1.0, adapter=adapter)[0]
        assert out["label"].tolist() == [1, 17]
        assert out["bboxes"].tolist() == [[0.0, 0.0, 3.0, 3.0], [5.0, 4.0, 9.0, 8.0]]

    def test_arguments_are_checked(self) -> None:
        data = [instance_sample(0, (4, 4), [])] * 2
        with pytest.raises(ValueError, match="source must be one of 'partner', 'flip'"):
            CopyPasteDataset(data, seed=0, source="mixup")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"fraction must be a finite number >= 0\.0"):
            CopyPasteDataset(data, seed=0, fraction=1.5)
        with pytest.raises(TypeError, match="min_visibility must be a finite number"):
            CopyPasteDataset(data, seed=0, min_visibility="0.3")  # type: ignore[arg-type]


def with_polygons(
    sample: dict[str, Any], *, keep_masks: bool = False, points: int | None = None
) -> dict[str, Any]:
    """The sample with each instance as a polygon (its mask's outline), boxes to match.

    The masks become what the polygons draw (the same as before for one-piece masks).
    With ``points``, the polygons are an ``(N, points, 2)`` array, each outline resampled.
    """
    polygons: Any = [outline(m) for m in sample["masks"]]
    if points is not None:
        polygons = np.array([resample(p, points) for p in polygons]).reshape(-1, points, 2)
    h, w = sample["image"].shape[:2]
    drawn = np.array([fill(p, (0, h, 0, w)) for p in polygons], np.uint8).reshape(-1, h, w)
    boxes = [tight_box(m) for m in drawn]
    out = {**sample, "segments": polygons, "bboxes": np.array(boxes, np.float32).reshape(-1, 4)}
    if keep_masks:
        out["masks"] = drawn
    else:
        del out["masks"]
    return out


def pieces(mask: np.ndarray) -> int:
    """How many outlines (parts and holes) the mask's pixels have."""
    found, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    return len(found)


class TestCopyPastePolygons:
    def test_a_polygon_of_no_area_is_pasted_and_kept(self) -> None:
        # the rule the mosaic shares: a line or a point draws pixels, kept where they show
        def sample(index: int, polygons: list[Any], boxes: list[Any]) -> dict[str, Any]:
            return {"image": np.full((20, 20, 3), 10 + 60 * index, np.uint8),
                    "bboxes": np.array(boxes, np.float64),
                    "labels": np.arange(len(boxes)) + 10 * index,
                    "segments": [np.array(p, np.float64) for p in polygons]}  # fmt: skip

        main = sample(0, [[(2.0, 5.0), (18.0, 5.0), (10.0, 5.0)], [(4.0, 14.0)] * 3],
                      [(2, 5, 19, 6), (4, 14, 5, 15)])  # fmt: skip
        partner = sample(1, [[(4.0, 3.0), (16.0, 3.0), (10.0, 3.0)]], [(4, 3, 17, 4)])
        out = CopyPasteDataset([main, partner], seed=0, p=1.0)[0]
        assert out["labels"].tolist() == [0, 1, 10]
        assert out["bboxes"].tolist() == [[2, 5, 19, 6], [4, 14, 5, 15], [4, 3, 17, 4]]
        assert [len(fill(p, (0, 20, 0, 20)).nonzero()[0]) for p in out["segments"]] == [17, 1, 13]

    @given(
        data=instance_datasets(),
        seed=st.integers(0, 2**64 - 1),
        min_visibility=st.sampled_from([0.0, 0.3, 0.9]),
        source=st.sampled_from(["partner", "flip"]),
        max_overlap=st.sampled_from([None, 0.3]),
        points=st.sampled_from([None, 1000]),
    )
    def test_polygons_paste_and_trim_as_the_masks_they_draw(
        self, data: list[dict[str, Any]], seed: int, min_visibility: float, source: str,
        max_overlap: float | None, points: int | None,
    ) -> None:  # fmt: skip
        # with points=1000 (ultralytics' arrays) the outlines of trimmed instances were
        # resampled along their edges, which moved their fill by a pixel here and there;
        # flipped, a copy pastes its mask's pixels mirrored, and its polygon draws them
        # (the outline of them where its own, mirrored, draws others)
        polygons = [with_polygons(s, points=points) for s in data]
        dense = [with_polygons(s, keep_masks=True, points=points) for s in data]
        for s in dense:
            del s["segments"]
        kwargs: dict[str, Any] = {
            "seed": seed,
            "p": 1.0,
            "source": source,
            "keying": "sample",
            "min_visibility": min_visibility,
            "max_overlap": max_overlap,
        }
        by_polygons, by_masks = (
            CopyPasteDataset(polygons, **kwargs),
            CopyPasteDataset(dense, **kwargs),
        )
        for index in range(len(data)):
            ours, theirs = by_polygons[index], by_masks[index]
            assert ours["copypaste"] == theirs["copypaste"]
            assert ours["labels"].tolist() == theirs["labels"].tolist()
            assert ours["bboxes"].tolist() == theirs["bboxes"].tolist()
            np.testing.assert_array_equal(ours["image"], theirs["image"])
            np.testing.assert_array_equal(ours["mask"], theirs["mask"])
            assert isinstance(ours["segments"], list if points is None else np.ndarray)
            assert len(ours["segments"]) == len(theirs["masks"])
            for polygon, mask in zip(ours["segments"], theirs["masks"], strict=True):
                drawn = fill(polygon, (0, 24, 0, 32))
                assert (drawn >= mask).all()  # every pixel, and more only on the bridges
                assert int(drawn.sum()) - int(mask.sum()) <= 64 * (pieces(mask) - 1)

    def test_a_trimmed_polygon_cut_in_two_keeps_its_pixels_and_gets_their_box(self) -> None:
        # a bar cut in two by the pasted one: a straight bridge joins the parts
        main = with_polygons(instance_sample(0, (12, 16), [(1, 5, 15, 7)]))
        partner = with_polygons(instance_sample(1, (12, 16), [(7, 2, 9, 10)]))
        out = Fixed([main, partner], seed=0, p=1.0)[0]
        assert out["copypaste"]["pasted"] == [0]
        assert out["labels"].tolist() == [1, 17]
        left = np.zeros((12, 16), np.uint8)
        left[5:7, 1:7] = left[5:7, 9:15] = 1
        drawn = fill(out["segments"][0], (0, 12, 0, 16))
        assert not (left & ~drawn).any()  # every pixel left
        assert out["bboxes"].tolist()[0] == [1.0, 5.0, 15.0, 7.0]  # the pixels', not the bridge's

    def test_an_array_of_polygons_gives_one_back_resampled_where_trimmed(self) -> None:
        main = instance_sample(0, (10, 10), [(0, 0, 4, 10), (6, 0, 10, 2)])
        partner = instance_sample(1, (10, 10), [(2, 0, 10, 5)])
        samples = []
        for sample in (main, partner):
            polygons = with_polygons(sample)
            # rectangles: each corner twice, 8 points
            polygons["segments"] = np.repeat(polygons["segments"], 2, axis=1).astype(np.float32)
            samples.append(polygons)
        out = Fixed(samples, seed=0, p=1.0, min_visibility=0.5)[0]
        assert out["copypaste"]["dropped"] == [1]
        segments = out["segments"]
        assert isinstance(segments, np.ndarray)
        assert segments.shape == (2, 8, 2)
        assert segments.dtype == np.float32
        np.testing.assert_array_equal(segments[1], samples[1]["segments"][0])  # pasted as it is
        # the trimmed instance: 8 points on the outline of what is left, an L
        left = np.zeros((10, 10), np.uint8)
        left[:, :2] = left[5:, :4] = 1
        np.testing.assert_array_equal(fill(segments[0], (0, 10, 0, 10)), left)
        assert out["bboxes"].tolist()[0] == [0.0, 0.0, 4.0, 10.0]

    def test_flip_pastes_the_mirrored_polygons(self) -> None:
        data = [with_polygons(instance_sample(0, (6, 10), [(0, 1, 3, 4)]))]
        out = CopyPasteDataset(data, seed=0, p=1.0, source="flip")[0]
        assert out["bboxes"].tolist() == [[0.0, 1.0, 3.0, 4.0], [7.0, 1.0, 10.0, 4.0]]
        mirrored = data[0]["segments"][0] * [-1.0, 1.0] + [10.0 - 1 / 16, 0.0]  # the fill's grid
        np.testing.assert_array_equal(out["segments"][1], mirrored)
        np.testing.assert_array_equal(out["segments"][0], data[0]["segments"][0])

    @given(
        # each rectangle at least one pixel inside the 24x32 image: an empty one has no box
        corners=st.lists(st.tuples(st.integers(0, 31), st.integers(0, 23), st.integers(1, 32),
                                   st.integers(1, 24)), min_size=1, max_size=3),
        seed=st.integers(0, 2**64 - 1),
    )  # fmt: skip
    def test_flip_pastes_polygons_on_pixel_edges_as_the_masks_they_draw(
        self, corners: list[tuple[int, int, int, int]], seed: int
    ) -> None:
        # rectangles along pixel edges (integer corners: the pixels x0 to x1, y0 to y1);
        # mirrored as x -> W - x, each drew one column right of its mirrored mask
        polygons = []
        for a, b, c, d in corners:
            (x0, x1), (y0, y1) = sorted((a, c)), sorted((b, d))
            x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
            polygons.append(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64))
        masks = np.array([fill(p, (0, 24, 0, 32)) for p in polygons])
        image = np.zeros((24, 32, 3), np.uint8)
        for k, mask in enumerate(masks):
            image[mask != 0] = colour_of(k + 1)
        common = {"image": image, "labels": np.arange(1, len(masks) + 1),
                  "bboxes": np.array([tight_box(m) for m in masks], np.float32)}  # fmt: skip
        kwargs: dict[str, Any] = {"seed": seed, "p": 1.0, "source": "flip"}
        ours = CopyPasteDataset([{**common, "segments": polygons}], **kwargs)[0]
        theirs = CopyPasteDataset([{**common, "masks": masks}], **kwargs)[0]
        assert ours["copypaste"] == theirs["copypaste"]
        assert ours["bboxes"].tolist() == theirs["bboxes"].tolist()
        np.testing.assert_array_equal(ours["image"], theirs["image"])
        for polygon, mask in zip(ours["segments"], theirs["masks"], strict=True):
            drawn = fill(polygon, (0, 24, 0, 32))
            assert (drawn >= mask).all()  # every pixel, and more only on the bridges
            assert int(drawn.sum()) - int(mask.sum()) <= 64 * (pieces(mask) - 1)

    @pytest.mark.parametrize("form", ["list", "array"])
    def test_flip_pastes_slanted_polygons_as_the_masks_they_draw(self, form: str) -> None:
        # OpenCV's slanted edges are not symmetric: these triangles, mirrored, draw 3 and 2
        # pixels other than the mirror images of their own, which the masks paste
        shapes = np.array([[(3.0, 2.0), (13.0, 5.0), (5.0, 14.0)],
                           [(1.0, 16.0), (14.0, 17.0), (9.0, 23.0)]])  # fmt: skip
        masks = np.array([fill(p, (0, 24, 0, 32)) for p in shapes])
        image = np.zeros((24, 32, 3), np.uint8)
        for k, mask in enumerate(masks):
            image[mask != 0] = colour_of(k + 1)
        # an array: each point 8 times (the same pixels), room for the outlines' 15 and 9
        segments = np.repeat(shapes, 8, axis=1) if form == "array" else list(shapes)
        common = {"image": image, "labels": np.array([1, 2]),
                  "bboxes": np.array([tight_box(m) for m in masks], np.float32)}  # fmt: skip
        kwargs: dict[str, Any] = {"seed": 0, "p": 1.0, "source": "flip"}
        ours = CopyPasteDataset([{**common, "segments": segments}], **kwargs)[0]
        theirs = CopyPasteDataset([{**common, "masks": masks}], **kwargs)[0]
        assert ours["copypaste"]["pasted"] == theirs["copypaste"]["pasted"] == [0, 1]
        assert ours["bboxes"].tolist() == theirs["bboxes"].tolist()
        np.testing.assert_array_equal(ours["image"], theirs["image"])
        assert isinstance(ours["segments"], np.ndarray if form == "array" else list)
        assert len(ours["segments"]) == len(theirs["masks"]) == 4
        for polygon, mask in zip(ours["segments"], theirs["masks"], strict=True):
            np.testing.assert_array_equal(fill(polygon, (0, 24, 0, 32)), mask)
        for k in (0, 1):  # each copy: its pixels mirrored, in its colour
            mirrored = masks[k][:, ::-1] != 0
            assert (ours["image"][mirrored] == colour_of(k + 1)).all()

    def test_flip_of_an_array_too_short_for_the_outline_pastes_what_its_polygon_draws(
        self,
    ) -> None:
        # 3 points cannot draw the mirrored pixels' outline: the mirrored polygon is kept,
        # and what is pasted is what it draws (the image's pixels there, mirrored)
        triangle = np.array([[[3.0, 2.0], [13.0, 5.0], [5.0, 14.0]]], np.float32)
        mask = fill(triangle[0], (0, 24, 0, 32))
        image = np.zeros((24, 32, 3), np.uint8)
        image[mask != 0] = colour_of(1)
        sample = {"image": image, "labels": np.array([1]), "segments": triangle,
                  "bboxes": np.array([tight_box(mask)], np.float32)}  # fmt: skip
        out = CopyPasteDataset([sample], seed=0, p=1.0, source="flip")[0]
        drawn = fill(out["segments"][1], (0, 24, 0, 32))
        assert int((drawn != mask[:, ::-1]).sum()) == 3  # OpenCV's asymmetry, as before
        changed = (out["image"] != image).any(axis=2)
        assert not (changed & (drawn == 0)).any()  # nothing pasted outside its polygon
        np.testing.assert_array_equal(out["image"][drawn != 0], image[:, ::-1][drawn != 0])

    def test_from_a_yolo_seg_folder(self, tmp_path: Any) -> None:
        samples = [with_polygons(instance_sample(i, (16, 16), [(1, 1, 7, 9), (9, 2, 15, 6)]))
                   for i in range(3)]  # fmt: skip
        for sample in samples:  # YOLO-seg: a box is its polygon's bounds
            sample["segments"] = [p.astype(np.float32) for p in sample["segments"]]
            sample["bboxes"] = np.array(
                [[*p.min(axis=0), *p.max(axis=0)] for p in sample["segments"]], np.float32
            )
            del sample["mask"]
        folder = YoloFolder(write_yolo_folder(samples, tmp_path), segments=True)
        paste = CopyPasteDataset(folder, seed=0, p=1.0)
        out = paste[0]
        record = out["copypaste"]
        again = paste.replay(record)
        for polygon, replayed in zip(out["segments"], again["segments"], strict=True):
            np.testing.assert_array_equal(polygon, replayed)
        assert len(out["segments"]) == len(out["labels"]) == len(out["bboxes"])
        assert all(p.dtype == np.float32 for p in out["segments"])
        assert len(record["pasted"]) - len(record["hidden"]) + 2 - len(record["dropped"]) == len(
            out["labels"]
        )

    def test_a_yolo_seg_pipeline_through_workers_repeats_bit_for_bit(self, tmp_path: Any) -> None:
        samples = []
        for i in range(6):
            triangle = np.array([[4.0 + i, 6.0], [40.0, 10.0 + i], [20.0, 44.0]], np.float32)
            square = np.array([[30.0, 30.0], [46.0, 30.0], [46.0, 46.0], [30.0, 46.0]], np.float32)
            polygons = [triangle, square]
            samples.append({
                "image": np.full((48, 48, 3), 20 * i, np.uint8),
                "labels": np.array([i, 9]),
                "bboxes": np.array([[*p.min(axis=0), *p.max(axis=0)] for p in polygons]),
                "segments": polygons,
            })  # fmt: skip
        folder = YoloFolder(write_yolo_folder(samples, tmp_path), segments=True)
        mosaic = MosaicDataset(folder, seed=1, output_size=64, affine=MosaicAffine(degrees=10))
        train = MixUpDataset(CopyPasteDataset(mosaic, seed=2, p=1.0), seed=3, p=0.5)

        def run() -> list[Any]:
            sampler = EpochSampler(torch.utils.data.SequentialSampler(train))
            loader = DataLoader(train, sampler=sampler, num_workers=2, collate_fn=list)
            return [out for batch in loader for out in batch]

        first, again = run(), run()
        for out, repeat in zip(first, again, strict=True):
            segments = out["segments"]
            assert len(segments) == len(out["bboxes"]) == len(out["labels"])
            for polygon, other in zip(segments, repeat["segments"], strict=True):
                assert polygon.dtype == np.float32
                assert (polygon >= 0).all()
                assert (polygon <= 64).all()
                np.testing.assert_array_equal(polygon, other)
            np.testing.assert_array_equal(out["image"], repeat["image"])
        assert sum(len(out["segments"]) for out in first) >= 12
