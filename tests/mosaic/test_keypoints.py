from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from rankaug import MosaicDataset, MosaicGrid, SampleError, Targets
from rankaug._multi.tiles import Tile
from rankaug.mosaic import MosaicAffine
from rankaug.mosaic.keypoints import map_keypoints
from rankaug.mosaic.layout import Window
from tests.mosaic.test_config import build


def tile(points: list[list[float]], index: int = 0) -> Tile:
    side = np.arange(len(points))
    return Tile(index, np.zeros((8, 10, 3), np.uint8), np.zeros((0, 4)), {}, None, None,
                np.array(points), {"side": side})  # fmt: skip


class TestMapKeypoints:
    def test_a_mirrored_output_mirrors_them_and_swaps_by_flip_index(self) -> None:
        affine = MosaicAffine(flip=1.0, flip_index=(1, 0))
        setting = build(output_size=(8, 10), affine=affine, keypoint_fields=("side",))
        window = Window((8, 10), 0, 0, 10, 8, 0, 0, 10, 8)  # the identity
        points = [[1.0, 2.0], [3.0, 2.0], [0.0, 5.0], [9.5, 5.0]]  # two pairs
        out = map_keypoints(setting, [window], None, [tile(points)], flipped=True)
        # each pair swapped, then x -> 10 - x; x = 0 is in the window, kept, at 10; the
        # fields stay with the rows (row j of a pair is joint j, before and after)
        np.testing.assert_array_equal(
            out["keypoints"], [[7.0, 2.0], [9.0, 2.0], [0.5, 5.0], [10.0, 5.0]]
        )
        np.testing.assert_array_equal(out["side"], [0, 1, 2, 3])
        plain = map_keypoints(setting, [window], None, [tile(points)], flipped=False)
        np.testing.assert_array_equal(plain["keypoints"], points)  # no flip: as they were

    @pytest.mark.parametrize("plain", [True, False])  # the grid's flip, the affine's
    def test_a_flip_keeps_the_keypoints_kept_unflipped_mirrored(self, plain: bool) -> None:
        # the half-open window [x0, x1) was mirrored into [W - x1, W - x0): a point on
        # the left edge was dropped and one on the right edge kept, only when flipped
        points = np.array([[0.0, 9.0], [0.25, 9.0], [63.5, 9.0], [64.0, 9.0], [30.0, 0.0],
                           [30.0, 48.0], [30.0, 47.75]])  # fmt: skip
        box = np.array([[0.0, 0.0, 64.0, 48.0]])
        sample = {"image": np.zeros((48, 64, 3), np.uint8), "keypoints": points,
                  "bboxes": box, "labels": np.array([1])}  # fmt: skip
        kept = []
        for flip in (0.0, 1.0):
            options: dict[str, Any]
            if plain:  # (one point per instance: nothing swaps)
                options = {"layout": MosaicGrid(flip=flip, flip_index=(0,))}
            else:  # translate and scale 0: the letterbox itself, flipped or not
                affine = MosaicAffine(translate=0.0, scale=0.0, flip=flip, flip_index=(0,))
                options = {"affine": affine}
            mosaic = MosaicDataset([sample], seed=0, output_size=(48, 64), p=0.0, **options)
            kept.append(np.asarray(mosaic[0]["keypoints"]))
        unflipped, flipped = kept
        np.testing.assert_array_equal(unflipped, points[[0, 1, 2, 4, 6]])
        np.testing.assert_array_equal(flipped, (64.0, 0.0) + unflipped * (-1.0, 1.0))

    @pytest.mark.parametrize("warped", [False, True])
    def test_a_joint_field_names_the_joint_each_row_holds_after_the_flip(
        self, warped: bool
    ) -> None:
        # a person, joint 0 the left eye, joint 1 the right one; the guide's advice:
        # regroup by the instance and joint fields. The field moved with the points and
        # named the point now on the left joint 1 (the swap undone)
        data = [{"image": np.zeros((64, 64, 3), np.uint8),
                 "bboxes": np.array([[10.0, 10.0, 50.0, 50.0]]), "labels": np.array([0]),
                 "keypoints": np.array([[20.5, 30.5, 1.0], [40.5, 30.5, 0.0]]),
                 "joint": np.array([0, 1]), "person": np.array([i, i])}
                for i in range(4)]  # fmt: skip
        affine = MosaicAffine(degrees=1.0 if warped else 0.0, scale=0.0, translate=0.0,
                              flip=1.0, flip_index=(1, 0))  # fmt: skip
        mosaic = MosaicDataset(data, seed=0, output_size=64, p=0.0, affine=affine,
                               targets=Targets(keypoint_fields=("joint", "person")))  # fmt: skip
        out = mosaic[0]
        assert out["mosaic"]["affine"]["flip"] is True
        points, joints = out["keypoints"], out["joint"]
        np.testing.assert_array_equal(joints, [0, 1])
        np.testing.assert_array_equal(out["person"], [0, 0])
        left, right = points[joints == 0][0], points[joints == 1][0]
        assert left[0] < right[0]  # joint 0 (left) is the point on the left again
        assert (left[2], right[2]) == (0.0, 1.0)  # the columns after x, y moved with them

    def test_fields_keep_the_main_dtype_or_are_refused(self) -> None:
        setting = build(output_size=(8, 20), keypoint_fields=("side",))
        windows = [
            Window((8, 10), 0, 0, 10, 8, 0, 0, 10, 8),
            Window((8, 10), 0, 0, 10, 8, 10, 0, 20, 8),
        ]
        main, partner = tile([[1.0, 2.0]], 0), tile([[3.0, 4.0]], 3)
        main.keypoint_fields["side"] = np.array([5], np.int8)
        partner.keypoint_fields["side"] = np.array([100])
        out = map_keypoints(setting, windows, None, [main, partner], flipped=False)
        assert (out["side"].dtype, out["side"].tolist()) == (np.dtype(np.int8), [5, 100])
        partner.keypoint_fields["side"] = np.array([300])  # came back 44 before
        with pytest.raises(ValueError, match=r"dataset\[3\] 'side' holds 300 \(int64\), which "
                           r"the main sample dataset\[0\]'s int8"):  # fmt: skip
            map_keypoints(setting, windows, None, [main, partner], flipped=False)

    @pytest.mark.parametrize("kind", ["grid", "affine", "warped"])
    def test_groups_that_are_not_one_per_box_are_refused(self, kind: str) -> None:
        # two people of two joints each, and a flip_index of four: it divided the four
        # points, so the flip swapped one person's joints with the other's, silently
        def sample(points: list[list[float]]) -> dict[str, Any]:
            return {"image": np.zeros((64, 64, 3), np.uint8), "labels": np.array([0, 0]),
                    "bboxes": np.array([[5.0, 5.0, 30.0, 30.0], [34.0, 34.0, 60.0, 60.0]]),
                    "keypoints": np.array(points), "person": np.array([0, 0, 1, 1])}  # fmt: skip

        def mosaic(flip_index: tuple[int, ...], flip: float = 1.0) -> Any:
            options: dict[str, Any] = {"layout": MosaicGrid(flip=flip, flip_index=flip_index)}
            if kind != "grid":
                options = {"affine": MosaicAffine(degrees=1.0 if kind == "warped" else 0.0,
                                                  scale=0.0, translate=0.0, flip=flip,
                                                  flip_index=flip_index)}  # fmt: skip
            targets = Targets(keypoint_fields=("person",))
            return MosaicDataset([sample(points)], seed=0, output_size=64, p=0.0,
                                 targets=targets, **options)  # fmt: skip

        points = [[10.5, 10.5], [20.5, 10.5], [40.5, 40.5], [50.5, 40.5]]
        with pytest.raises(SampleError, match=re.escape(
            "dataset[0] keypoints has 4 points for 2 boxes, not one group of "
            "len(flip_index) = 4 per box: a flip would swap joints across instances."
        )):  # fmt: skip
            mosaic((3, 2, 1, 0))[0]
        out = mosaic((1, 0))[0]  # two per box: each person's own eyes swap
        assert out["person"].tolist() == [0, 0, 1, 1]
        np.testing.assert_allclose(
            out["keypoints"], [[43.5, 10.5], [53.5, 10.5], [13.5, 40.5], [23.5, 40.5]], atol=0.2
        )
        assert len(mosaic((0,))[0]["keypoints"]) == 4  # no left and right: any count

    def test_groups_are_checked_on_unflipped_outputs_too(self) -> None:
        # before, only a flipped output checked them: the error came with the draw
        setting = build(affine=MosaicAffine(flip=0.5, flip_index=(1, 0, 2)))
        window = Window((8, 10), 0, 0, 10, 8, 0, 0, 10, 8)
        with pytest.raises(ValueError, match=r"dataset\[4\] keypoints has 2 points, not whole"):
            map_keypoints(setting, [window], None, [tile([[1, 1], [2, 2]], 4)], flipped=False)
        unflipping = build(affine=MosaicAffine(flip=0.0, flip_index=(1, 0, 2)))
        out = map_keypoints(unflipping, [window], None, [tile([[1, 1], [2, 2]], 4)], False)
        assert len(out["keypoints"]) == 2  # flip=0: flip_index is never used

    def test_keypoints_that_are_not_whole_groups_name_the_tile(self) -> None:
        setting = build(affine=MosaicAffine(flip=1.0, flip_index=(1, 0, 2)))
        window = Window((8, 10), 0, 0, 10, 8, 0, 0, 10, 8)
        with pytest.raises(ValueError, match=r"dataset\[4\] keypoints has 2 points"):
            map_keypoints(setting, [window], None, [tile([[1, 1], [2, 2]], 4)], flipped=True)
