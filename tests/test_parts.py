from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from rankaug import (
    CopyPasteDataset,
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    SampleError,
    Targets,
)
from rankaug._multi.parts import Part, PartReader
from rankaug.context import SampleContext
from rankaug.samples import DEFAULT_TARGETS, DefaultAdapter


def reader(**change: Any) -> PartReader:
    options: dict[str, Any] = {
        "targets": DEFAULT_TARGETS | {"labels"},
        "label_fields": ("labels",),
        "keypoint_fields": (),
        "skip": ("record",),
        "group": "the samples of a Thing",
        "actor": "Thing",
        **change,
    }
    return PartReader(DefaultAdapter(), **options)


def sample(boxes: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "image": np.zeros((6, 8, 3), np.uint8),
        "bboxes": np.array([[0.0, 0.0, 2.0, 2.0]] * boxes),
        "labels": np.arange(boxes),
        **extra,
    }


def read(parts: PartReader, *samples: dict[str, Any]) -> list[Part]:
    indices = list(range(len(samples)))
    _, _, views = parts.unpack(SampleContext(0, rank=0, worker_id=0, epoch=0), indices, samples)
    return [parts.read(i, view, s) for i, view, s in zip(indices, views, samples, strict=True)]


def _person(index: int) -> dict[str, Any]:
    masks = np.zeros((2, 32, 32), np.bool_)
    masks[0, 2:12, 3:12] = masks[1, 16:30, 15:31] = True
    return {"image": np.full((32, 32, 3), 40 + 50 * index, np.uint8),
            "bboxes": np.array([[3, 2, 12, 12], [15, 16, 31, 30]], np.float32),
            "labels": np.array([1, 2]), "masks": masks,
            "keypoints": np.array([[5.0, 5.0], [20.0, 20.0]], np.float32)}  # fmt: skip


def _background(listed: bool) -> dict[str, Any]:
    if listed:  # albumentations' way
        return {"image": np.zeros((32, 32, 3), np.uint8), "bboxes": [], "labels": [],
                "masks": [], "keypoints": []}  # fmt: skip
    return {"image": np.zeros((32, 32, 3), np.uint8), "bboxes": np.zeros((0, 4), np.float32),
            "labels": np.zeros(0, np.int64), "masks": np.zeros((0, 32, 32), np.bool_),
            "keypoints": np.zeros((0, 2))}  # float64, as a list's  # fmt: skip


_WRAPPERS = [
    (MosaicDataset, {"output_size": 48}),
    (MixUpDataset, {}),
    (CutMixDataset, {}),
    (CopyPasteDataset, {}),
]


class TestPartReader:
    def test_reads_boxes_as_given_and_fields_aligned(self) -> None:
        (part,) = read(reader(), sample(boxes=2))
        assert part.boxes.shape == (2, 4)
        assert part.fields["labels"].tolist() == [0, 1]

    @pytest.mark.parametrize(
        "dtype", [np.float32, np.float64, np.int32, np.float16, ">f4", ">f8"]
    )  # (the native floats are known by identity, the others by their dtype's equality)
    def test_boxes_are_float64_unless_float32_ones_are_kept(self, dtype: Any) -> None:
        given = np.array([[1, 0, 3, 2]], dtype)
        (cast,) = read(reader(), {**sample(), "bboxes": given})
        (kept,) = read(reader(float32=True), {**sample(), "bboxes": given})
        assert cast.boxes.dtype == np.float64
        assert cast.boxes.tolist() == kept.boxes.tolist() == [[1.0, 0.0, 3.0, 2.0]]
        if dtype in (np.float32, np.float64):  # as read: no copy
            assert kept.boxes is given
        else:
            assert kept.boxes.dtype == np.float64

    def test_a_stale_per_box_field_is_refused_unless_skipped(self) -> None:
        with pytest.raises(ValueError, match=r"'iscrowd' looks like a per-box field .* Thing"):
            read(reader(), sample(boxes=2, iscrowd=[0, 1]))
        read(reader(), sample(boxes=2, record=[0, 1]))  # the wrapper's own key

    def test_a_stale_per_keypoint_field_is_refused_unless_a_keypoint_field(self) -> None:
        # a visibility beside (K, 2) keypoints came back as it was beside the keypoints a
        # mosaic or mix kept or added
        points = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
        with pytest.raises(
            ValueError, match=r"'visible' looks like a per-keypoint field \(3 entries, one per "
            r"keypoint\) that is not in keypoint_fields=\(\): Thing"
        ):  # fmt: skip
            read(reader(), sample(boxes=0, keypoints=points, visible=[2, 1, 2]))
        fielded = reader(targets=DEFAULT_TARGETS | {"labels", "visible"},
                         keypoint_fields=("visible",))  # fmt: skip
        (part,) = read(fielded, sample(keypoints=points, visible=[2, 1, 2]))
        assert part.keypoint_fields["visible"].tolist() == [2, 1, 2]
        read(reader(), sample(keypoints=points, record=[0, 1, 2]))  # the wrapper's own key

    def test_a_value_of_the_image_with_as_many_entries_is_told_how_to_pass(self) -> None:
        # a 3-value mean beside 3 keypoints was refused with only "add it to
        # keypoint_fields or drop it": no way to keep a value of the image was told
        points = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
        with pytest.raises(ValueError, match=re.escape(
            "add it to keypoint_fields or drop it; a value of the image that has as many "
            "entries by chance (a 3-value mean) is not taken for one inside a dict: "
            "{'norm': {'mean': ...}}"
        )):  # fmt: skip
            read(reader(), sample(boxes=0, keypoints=points, mean=[0.5, 0.4, 0.3]))
        with pytest.raises(ValueError, match=r"add it to label_fields or drop it; a value of"):
            read(reader(), sample(boxes=3, mean=[0.5, 0.4, 0.3]))
        norm = {"mean": [0.5, 0.4, 0.3], "std": [0.2, 0.2, 0.2]}
        read(reader(), sample(boxes=3, keypoints=points, norm=norm))  # raises if refused

    def test_polygons_are_read_or_refused(self) -> None:
        polygon = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0]], np.float32)
        with_polygon = sample(segments=[polygon])
        with pytest.raises(ValueError, match=r"dataset\[0\] has instance polygons \('segments'\)"):
            read(reader(targets=DEFAULT_TARGETS | {"labels", "segments"}), with_polygon)
        parts = reader(targets=DEFAULT_TARGETS | {"labels", "segments"}, polygons=True)
        (part,) = read(parts, with_polygon)
        assert part.segments is not None
        assert part.segments.points[0] is polygon  # read, not copied
        with pytest.raises(ValueError, match=r"dataset\[0\] segments has 1 polygons for 2 boxes"):
            read(parts, sample(boxes=2, segments=[polygon]))
        with pytest.raises(ValueError, match=r"disagree on having .* instance polygons"):
            parts.check(read(parts, with_polygon, sample()))

    def test_disagreeing_samples_are_named_with_the_group(self) -> None:
        parts = reader()
        other = sample()
        other["image"] = np.zeros((6, 8), np.uint8)
        with pytest.raises(ValueError, match="the samples of a Thing need the same channels"):
            parts.check(read(parts, sample(), other))

    def test_samples_that_disagree_on_having_boxes_are_refused(self) -> None:
        # a main sample without boxes dropped its partners' boxes while their objects
        # were painted in
        parts = reader()
        bare = {"image": np.zeros((6, 8, 3), np.uint8)}
        expected = (
            r"^dataset\[1\] has 2 boxes, but the main image dataset\[0\] has no boxes: the "
            r"samples of a Thing need the same targets .*give a background image empty boxes "
            r"\(np\.zeros\(\(0, 4\)\), with empty label fields\); torchvision's .*'labels'$"
        )
        with pytest.raises(ValueError, match=expected):
            parts.check(read(parts, bare, sample(boxes=2)))
        with pytest.raises(ValueError, match=r"^dataset\[1\] has no boxes, but the main image "
                           r"dataset\[0\] has: .*unlabelled"):  # fmt: skip
            parts.check(read(parts, sample(), bare))
        parts.check(read(parts, bare, sample(boxes=0), bare))  # no boxes anywhere: agreed
        parts.check(read(parts, sample(boxes=0), sample()))  # empty boxes: a background
        with pytest.raises(ValueError, match="disagree on having a mask"):  # the other targets
            parts.check(read(parts, bare, {**bare, "mask": np.zeros((6, 8), np.uint8)}))

    def test_unsupported_main_images_are_refused(self) -> None:
        bad = sample()
        bad["image"] = np.zeros((6, 8), np.float16)
        with pytest.raises(TypeError, match=r"dataset\[0\] image must have a dtype among"):
            reader().check(read(reader(), bad))

    def test_wrong_shapes_name_the_sample_and_field(self) -> None:
        with pytest.raises(
            ValueError,
            match=r"dataset\[0\] mask must be an HxW or HxWxC array .* got shape \(2, 2\)",
        ):
            read(reader(), sample(mask=np.zeros((2, 2), np.uint8)))
        with pytest.raises(ValueError, match=r"dataset\[0\] 'labels' has 2 entries for 1 boxes"):
            read(reader(), {**sample(), "labels": np.arange(2)})
        with pytest.raises(
            ValueError, match=r"dataset\[0\] 'keypoints' must be keypoints of shape \(K, 2\+\)"
        ):
            read(reader(), sample(keypoints=np.zeros((3,))))

    @pytest.mark.parametrize("shape", [(0,), (0, 1)])
    def test_empty_keypoints_of_any_columns_read_as_none(self, shape: tuple[int, ...]) -> None:
        (part,) = read(reader(), sample(boxes=0, keypoints=np.zeros(shape)))
        assert part.keypoints is not None
        assert part.keypoints.shape == (0, 2)

    def test_rows_without_x_and_y_are_refused(self) -> None:
        with pytest.raises(
            ValueError, match=r"got shape \(2, 0\): each row needs at least x and y"
        ):
            read(reader(), sample(keypoints=np.zeros((2, 0))))

    @pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
    def test_non_finite_keypoints_are_refused_as_boxes_are(self, bad: float) -> None:
        points = np.array([[1.0, 2.0], [bad, 5.0], [8.0, bad]], np.float32)
        with pytest.raises(
            ValueError,
            match=rf"^dataset\[0\] keypoints\[1\] = \[{bad}, 5.0\] contains NaN or infinity; "
            r"keypoints are \(x, y, \.\.\.\) in pixels \(1 more such rows\)$",
        ):
            read(reader(), sample(keypoints=points))

    def test_only_keypoint_coordinates_must_be_finite(self) -> None:
        points = np.array([[1.0, 2.0, np.nan]])  # a third column is the data's own
        (part,) = read(reader(), sample(keypoints=points))
        assert part.keypoints is not None
        np.testing.assert_array_equal(part.keypoints, points)

    def test_an_empty_keypoints_list_reads_as_no_keypoints(self) -> None:
        (part,) = read(reader(), sample(boxes=0, keypoints=[]))
        assert part.keypoints is not None
        assert part.keypoints.shape == (0, 2)

    def test_an_empty_masks_list_takes_the_others_dtype(self) -> None:
        parts = reader()
        background = sample(boxes=0, masks=[])
        main, partner = read(parts, background, sample(masks=np.ones((1, 6, 8), np.bool_)))
        parts.check([main, partner])  # [] decides no dtype: the partner's masks do
        assert main.masks is not None
        assert (main.masks.shape, main.masks.dtype) == ((0, 6, 8), np.dtype(np.bool_))
        (alone,) = read(parts, background)
        parts.check([alone])
        assert alone.masks is not None
        assert alone.masks.dtype == np.uint8  # no dtype anywhere

    def test_keypoints_of_other_columns_are_refused_naming_both(self) -> None:
        # numpy's concatenate error came from deep inside the wrapper
        parts = reader()
        main, partner = sample(keypoints=np.zeros((2, 2))), sample(keypoints=np.zeros((1, 3)))
        with pytest.raises(
            ValueError,
            match=r"^dataset\[1\] keypoints has shape \(1, 3\), but the main image dataset\[0\]'s "
            r"has \(2, 2\): the samples of a Thing need keypoints of the same columns",
        ):
            parts.check(read(parts, main, partner))

    @pytest.mark.parametrize("empty", [[], np.zeros((0, 2)), np.zeros((0, 5))])
    def test_empty_keypoints_take_the_others_columns(self, empty: Any) -> None:
        parts = reader()
        points = np.array([[1.0, 2.0, 2.0]])  # x, y, visibility
        pointed = sample(keypoints=points)
        background = sample(boxes=0, keypoints=empty)
        for order in ([background, pointed], [pointed, background, background]):
            read_parts = read(parts, *order)
            parts.check(read_parts)  # no points: nothing to disagree on
            assert [p.keypoints.shape[1] for p in read_parts if p.keypoints is not None] == [
                3
            ] * len(order)

    @pytest.mark.parametrize(
        ("wrapper", "options"), _WRAPPERS, ids=lambda w: getattr(w, "__name__", "")
    )
    def test_every_wrapper_passes_a_value_of_the_image_inside_a_dict(
        self, wrapper: Any, options: dict[str, Any]
    ) -> None:
        people = [_person(1), _person(2)]  # 2 boxes and 2 keypoints each
        for person in people:
            person["norm"] = {"center": [16.0, 16.0]}
        out = wrapper(people, seed=0, p=1.0, **options)[0]
        assert out["norm"] == {"center": [16.0, 16.0]}

    @pytest.mark.parametrize(
        ("wrapper", "options"), _WRAPPERS, ids=lambda w: getattr(w, "__name__", "")
    )
    def test_every_wrapper_refuses_pose_arrays_in_the_words_of_the_transform_wrapper(
        self, wrapper: Any, options: dict[str, Any]
    ) -> None:
        # before: "dataset[0] keypoints must have shape (K, 2+), got (1, 17, 3)", without
        # the rows to give (RandomAugmentWrapper's, checks.point_rows, says how)
        people = [_person(1), _person(2)]
        for person in people:
            person["keypoints"] = np.ones((1, 17, 3), np.float32)
        with pytest.raises(
            SampleError,
            match=r"dataset\[0\] 'keypoints' must be keypoints of shape \(K, 2\+\), one row "
            r"\(x, y, \.\.\.\) per keypoint, got shape \(1, 17, 3\): per-instance pose arrays "
            r"\(N, K, 2\|3\) go as N\*K rows, points\.reshape\(-1, points\.shape\[-1\]\), with "
            r"each keypoint's instance \(and joint\) in a per-keypoint field of "
            r"rankaug\.Targets\(keypoint_fields=\[\.\.\.\]\)",
        ):
            wrapper(people, seed=0, p=1.0, **options)[0]

    @pytest.mark.parametrize(
        ("wrapper", "options"), _WRAPPERS, ids=lambda w: getattr(w, "__name__", "")
    )
    def test_every_wrapper_refuses_a_per_keypoint_value_outside_keypoint_fields(
        self, wrapper: Any, options: dict[str, Any]
    ) -> None:
        people = [_person(1), _person(2)]
        for person in people:  # 3 keypoints beside 2 boxes
            person["keypoints"] = np.r_[person["keypoints"], [[8.0, 8.0]]]
            person["visible"] = np.array([2, 1, 2])
        with pytest.raises(SampleError, match=r"'visible' looks like a per-keypoint field"):
            wrapper(people, seed=0, p=1.0, **options)[0]
        targets = Targets(keypoint_fields=("visible",))
        out = wrapper(people, seed=0, p=1.0, targets=targets, **options)[0]
        assert len(out["visible"]) == len(out["keypoints"])

    @pytest.mark.parametrize(
        ("wrapper", "options"), _WRAPPERS, ids=lambda w: getattr(w, "__name__", "")
    )
    def test_a_background_beside_keypoints_with_a_visibility(
        self, wrapper: Any, options: dict[str, Any]
    ) -> None:
        # pose data (x, y, visibility) with a background image's "keypoints": [] failed
        # in numpy's concatenate
        people = [_person(1), _person(2)]
        for person in people:
            person["keypoints"] = np.c_[person["keypoints"], [2.0, 1.0]]
        rows = []
        for background in (_background(True), _background(False)):
            for seed in range(3):
                made = wrapper([background, *people], seed=seed, p=1.0, **options)
                for index in range(3):
                    rows += [list(row) for row in made[index]["keypoints"]]
                for index in (1, 2):  # a person's: an array, with its visibility
                    assert made[index]["keypoints"].shape[1] == 3
        assert rows
        assert {len(row) for row in rows} == {3}
        assert {row[2] for row in rows} <= {1.0, 2.0}

    @pytest.mark.parametrize(
        ("wrapper", "options"), _WRAPPERS, ids=lambda w: getattr(w, "__name__", "")
    )
    def test_a_background_of_empty_lists_is_read_and_given_back_in_lists(
        self, wrapper: Any, options: dict[str, Any]
    ) -> None:
        kept = []
        for seed in range(3):
            arrays = wrapper([_background(False), _person(1), _person(2)], seed=seed, **options)[0]
            listed = wrapper([_background(True), _person(1), _person(2)], seed=seed, **options)[0]
            np.testing.assert_array_equal(listed["image"], arrays["image"])
            assert type(listed["masks"]) is list
            got = [(type(m), m.dtype, m.shape) for m in listed["masks"]]
            assert got == [(np.ndarray, np.dtype(np.bool_), arrays["image"].shape[:2])] * len(
                arrays["masks"]
            )
            for mask, expected in zip(listed["masks"], arrays["masks"], strict=True):
                np.testing.assert_array_equal(mask, expected)
            assert listed["keypoints"] == arrays["keypoints"].tolist()
            assert listed["labels"] == arrays["labels"].tolist()
            kept.append(len(arrays["masks"]))
        assert max(kept) > 0  # the partners brought masks
        alone = wrapper([_background(True)] * 2, seed=0, **options)[0]
        assert (alone["masks"], alone["keypoints"], alone["bboxes"]) == ([], [], [])
