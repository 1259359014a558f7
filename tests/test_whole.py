from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug import (
    CopyPasteDataset,
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    Partners,
    Targets,
)
from rankaug.boxes.whole import check_whole, int_box_dtype, whole_boxes
from rankaug.collate import collate_detection
from rankaug.errors import SampleError
from rankaug.mosaic import MosaicAffine
from rankaug.stream import StreamingMosaic

INTEGERS = [np.uint8, np.int16, np.int32, np.int64]


def _tiles(dtype: Any, count: int = 12) -> list[dict[str, Any]]:
    """40x40 tiles, each an object (``mask`` ``i + 1``, on 0) in its box, label ``i``.

    The mask, resampled nearest neighbour at pixel centres, shows the pixels of each box.
    """
    samples = []
    for i in range(count):
        mask = np.zeros((40, 40), np.uint8)
        mask[5:35, 8:31] = i + 1
        boxes = np.array([[8, 5, 31, 35]], dtype)
        samples.append({"image": np.full((40, 40), 10 * i, np.uint8), "mask": mask,
                        "bboxes": boxes, "labels": np.array([i])})  # fmt: skip
    return samples


def _pixel_box(image: np.ndarray, colour: int) -> list[int]:
    """The box of the pixels of ``colour``: ``[x0, y0, x1, y1]``."""
    rows, cols = np.nonzero(image == colour)
    return [int(cols.min()), int(rows.min()), int(cols.max()) + 1, int(rows.max()) + 1]


def _expected(xyxy: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """The rule, written out: the pixels whose centres each float box holds."""
    out = []
    for x0, y0, x1, y1 in xyxy.tolist():
        near = [np.ceil(x0 - 0.5), np.ceil(y0 - 0.5)]
        far = [np.ceil(x1 - 0.5 - 1e-3), np.ceil(y1 - 0.5 - 1e-3)]
        far = [min(max(f, n + 1), s) for f, n, s in zip(far, near, hw[::-1], strict=True)]
        near = [min(n, f - 1) for n, f in zip(near, far, strict=True)]
        out.append(near + far)
    return np.array(out, np.float64).reshape(-1, 4)


class TestWholeBoxes:
    def test_each_edge_goes_to_the_nearest_pixel_edge_halves_down(self) -> None:
        xyxy = np.array([[2.5, 2.5, 12.5, 15.0], [3.0, 4.0, 5.0, 6.0], [0.4, 1.6, 7.6, 9.4]])
        out = whole_boxes(xyxy, np.dtype(np.int16), (20, 20), "pascal_voc", 0)
        assert out.tolist() == [[2, 2, 12, 15], [3, 4, 5, 6], [0, 2, 8, 9]]

    def test_a_box_keeps_a_pixel_also_a_sliver_at_the_far_edge(self) -> None:
        xyxy = np.array([[3.5, 0.0, 4.0, 2.0], [19.6, 19.7, 20.0, 20.0]])
        out = whole_boxes(xyxy, np.dtype(np.uint8), (20, 20), "coco", 0)
        assert out.tolist() == [[3, 0, 4, 2], [19, 19, 20, 20]]

    def test_whole_boxes_stay_as_they_are_also_with_no_pixel(self) -> None:
        # before: a whole box of zero width was given a pixel ([3, 4, 3, 30] came back
        # [3, 4, 4, 30] from a mix that had not moved it; floats stayed as they were)
        xyxy = np.array([[3.0, 4.0, 3.0, 30.0], [5.0, 6.0, 9.0, 6.0], [2.0, 2.0, 12.0, 15.0]])
        out = whole_boxes(xyxy, np.dtype(np.int16), (40, 40), "pascal_voc", 0)
        assert out.tolist() == xyxy.tolist()

    def test_float_boxes_are_left_as_they_are(self) -> None:
        xyxy = np.array([[2.5, 2.5, 12.5, 15.0]])
        assert whole_boxes(xyxy, None, (20, 20), "yolo", 0) is xyxy

    def test_empty_boxes_are_checked(self) -> None:
        with pytest.raises(ValueError, match=r"dataset\[3\] bboxes are uint8, which holds up "):
            whole_boxes(np.zeros((0, 4)), np.dtype(np.uint8), (256, 8), "pascal_voc", 3)


class TestCheckWhole:
    def test_the_dtype_must_hold_the_output_s_width_and_height(self) -> None:
        check_whole(np.dtype(np.uint8), (255, 255), "pascal_voc", 0)
        message = (r"dataset\[5\] bboxes are int8, which holds up to 127, but the output is "
                   r"100x128 \(height x width\), which they may reach: give them in a "
                   r"wider dtype \(int32, float32\)")  # fmt: skip
        with pytest.raises(ValueError, match=message):
            check_whole(np.dtype(np.int8), (100, 128), "coco", 5)

    def test_normalised_formats_are_refused(self) -> None:
        with pytest.raises(ValueError, match=r"box_format='yolo' gives fractions of the image"):
            check_whole(np.dtype(np.int64), (20, 20), "yolo", 0)

    def test_float_boxes_pass(self) -> None:
        check_whole(None, (100_000, 100_000), "yolo", 0)


class TestIntBoxDtype:
    def test_integers_of_every_container(self) -> None:
        assert int_box_dtype(torch.zeros(2, 4, dtype=torch.int16)) == np.dtype(np.int16)
        assert int_box_dtype(((1, 2, 3, 4),)) == np.dtype(np.int64)
        assert int_box_dtype(np.zeros((0, 4), np.uint8)) == np.dtype(np.uint8)

    def test_anything_else_is_none(self) -> None:
        assert int_box_dtype(torch.zeros(2, 4)) is None
        assert int_box_dtype(np.zeros((2, 4), np.float32)) is None
        assert int_box_dtype([[1, 2, 3, 4], [1, 2]]) is None  # ragged
        assert int_box_dtype(None) is None


class TestIntegerBoxesThroughWrappers:
    """Integer boxes come back in their dtype on every draw (they came back float64 on some)."""

    @pytest.mark.parametrize("dtype", INTEGERS)
    @pytest.mark.parametrize("affine", [False, True])
    def test_mosaic_boxes_are_the_pixels_their_tiles_show(self, dtype: Any, affine: bool) -> None:
        extra: dict[str, Any] = {"affine": MosaicAffine(degrees=0.0, scale=0.3)} if affine else {}
        mosaic = MosaicDataset(
            _tiles(dtype),
            seed=0,
            output_size=50,
            p=0.75,
            **extra,
            partners=Partners(replace=False),
        )  # one mask value per tile
        outs = [mosaic[i] for i in range(12)]
        for out in outs:
            assert out["bboxes"].dtype == dtype
            assert len(out["bboxes"]) == len(out["labels"]) > 0
            for box, label in zip(out["bboxes"].tolist(), out["labels"].tolist(), strict=True):
                assert box == _pixel_box(out["mask"], label + 1)  # pixel-exact
        assert (
            collate_detection(outs)["bboxes"][0].dtype == torch.from_numpy(np.zeros(0, dtype)).dtype
        )

    @pytest.mark.parametrize("dtype", INTEGERS)
    def test_rotated_mosaic_boxes_are_the_float_ones_made_whole(self, dtype: Any) -> None:
        affine = MosaicAffine(degrees=30.0, shear=5.0)
        ints = MosaicDataset(_tiles(dtype), seed=3, output_size=48, affine=affine,
                             keying="sample")  # fmt: skip
        floats = MosaicDataset(_tiles(np.float64), seed=3, output_size=48, affine=affine,
                               keying="sample")  # fmt: skip
        for i in range(12):
            got, reference = ints[i]["bboxes"], floats[i]["bboxes"]
            assert got.dtype == dtype
            assert got.tolist() == _expected(reference, (48, 48)).tolist()

    @pytest.mark.parametrize("dtype", INTEGERS)
    @pytest.mark.parametrize("kind", ["mixup", "cutmix", "copypaste"])
    def test_mixes_of_two_sizes_keep_the_dtype(self, dtype: Any, kind: str) -> None:
        def sample(i: int, dtype: Any) -> dict[str, Any]:
            side = 40 if i % 2 else 30  # letterboxed partners: scaled by 4 / 3 or 3 / 4
            masks = np.zeros((1, side, side), np.uint8)
            masks[0, 5:25, 3:20] = 1
            boxes = np.array([[3, 5, 20, 25]], dtype)
            return {"image": np.full((side, side, 3), 10 * i, np.uint8), "masks": masks,
                    "bboxes": boxes, "labels": np.array([i])}  # fmt: skip

        wrapper: Any = {"mixup": MixUpDataset, "cutmix": CutMixDataset,
                        "copypaste": CopyPasteDataset}[kind]  # fmt: skip
        ints = wrapper(
            [sample(i, dtype) for i in range(8)], seed=0, partner_fit="letterbox", keying="sample"
        )
        floats = wrapper([sample(i, np.float64) for i in range(8)], seed=0,
                         partner_fit="letterbox", keying="sample")  # fmt: skip
        fractional = 0
        for i in range(8):
            got, reference = ints[i]["bboxes"], floats[i]["bboxes"]
            assert got.dtype == dtype
            hw = ints[i]["image"].shape[:2]
            assert got.tolist() == _expected(reference, hw).tolist()
            fractional += int((reference != np.round(reference)).any())
        assert fractional  # some draws moved boxes by fractions of a pixel

    @pytest.mark.parametrize("wrapper", [MixUpDataset, CutMixDataset])
    def test_a_whole_box_of_zero_width_comes_back_as_it_came(self, wrapper: Any) -> None:
        # before: [3, 4, 3, 30] came back [3, 4, 4, 30] where floats came back as they came
        def samples(dtype: Any) -> list[dict[str, Any]]:
            boxes = np.array([[3, 4, 3, 30], [5, 5, 20, 20]], dtype)
            return [{"image": np.full((40, 40, 3), 10 * i, np.uint8), "bboxes": boxes,
                     "labels": np.array([i, i])} for i in range(8)]  # fmt: skip

        ints, floats = wrapper(samples(np.int64), seed=0), wrapper(samples(np.float64), seed=0)
        kept = 0
        for i in range(8):
            got, reference = ints[i]["bboxes"], floats[i]["bboxes"]
            assert got.dtype == np.int64
            assert got.tolist() == reference.tolist()
            kept += [3, 4, 3, 30] in got.tolist()
        assert kept  # the box of zero width came back, as it came

    def test_the_streaming_mosaic_keeps_the_dtype(self) -> None:
        class Stream(torch.utils.data.IterableDataset[dict[str, Any]]):
            def __iter__(self) -> Any:
                return iter(_tiles(np.int16))

        mosaic: Any = MosaicDataset(Stream(), seed=0, output_size=50, buffer_size=6,
                                    partners=Partners(replace=False))  # fmt: skip
        assert type(mosaic) is StreamingMosaic
        outs = list(mosaic)
        assert len(outs) == 12
        for out in outs:
            assert out["bboxes"].dtype == np.int16
            assert len(out["bboxes"]) == len(out["labels"]) > 0
            for box, label in zip(out["bboxes"].tolist(), out["labels"].tolist(), strict=True):
                assert box == _pixel_box(out["mask"], label + 1)

    def test_coco_tensor_boxes_are_the_pixels_of_their_masks(self) -> None:
        def tv(i: int) -> tuple[torch.Tensor, dict[str, Any]]:
            masks = torch.zeros((1, 40, 40), dtype=torch.uint8)
            masks[:, 5:35, 8:31] = 1
            return torch.full((1, 40, 40), 10 * i, dtype=torch.uint8), {
                "boxes": torch.tensor([[8, 5, 23, 30]], dtype=torch.int32),
                "labels": torch.tensor([i]),
                "masks": masks,
            }

        mosaic = MosaicDataset([tv(i) for i in range(6)], seed=1, output_size=50,
                               targets=Targets(box_format="coco"))  # fmt: skip
        for i in range(6):
            _, target = mosaic[i]
            assert target["boxes"].dtype == torch.int32
            assert len(target["boxes"]) == len(target["masks"]) > 0
            for (x, y, w, h), mask in zip(target["boxes"].tolist(), target["masks"], strict=True):
                assert [x, y, x + w, y + h] == _pixel_box(mask.numpy(), 1)

    @pytest.mark.parametrize("p", [0.0, 1.0])
    def test_a_dtype_short_of_the_output_is_refused_on_every_draw(self, p: float) -> None:
        mosaic = MosaicDataset(_tiles(np.uint8, 4), seed=0, output_size=256, p=p)
        for i in range(4):
            with pytest.raises(SampleError, match=r"bboxes are uint8, which holds up to 255") as e:
                mosaic[i]
            assert isinstance(e.value.__cause__, ValueError)
        mixup = MixUpDataset(_tiles(np.int8, 4), seed=0, p=p)  # 40 fits int8: no refusal
        assert all(mixup[i]["bboxes"].dtype == np.int8 for i in range(4))

    @settings(max_examples=20, deadline=None)
    @given(seed=st.integers(0, 2**32), output=st.integers(24, 80))
    def test_every_draw_gives_the_dtype(self, seed: int, output: int) -> None:
        mosaic = MosaicDataset(_tiles(np.int32, 4), seed=seed, output_size=output,
                               affine=MosaicAffine(degrees=10.0))  # fmt: skip
        for i in range(4):
            assert mosaic[i]["bboxes"].dtype == np.int32


class TestIntegerKeypointsThroughTheMosaic:
    @staticmethod
    def _points(dtype: Any) -> list[dict[str, Any]]:
        """40x40 tiles, every other one with keypoints (the others with none)."""
        points = np.array([[10, 10], [21, 23], [39, 0], [3, 37]], dtype)
        return [
            {"image": np.full((40, 40), 10 * i, np.uint8),
             "keypoints": points if i % 2 else np.zeros((0, 2), dtype)}
            for i in range(12)
        ]  # fmt: skip

    @pytest.mark.parametrize("dtype", [np.int16, np.int64])
    def test_every_draw_gives_the_dtype_rounded_to_the_nearest(self, dtype: Any) -> None:
        affine = MosaicAffine(degrees=0.0, scale=0.5, translate=0.1)
        ints = MosaicDataset(self._points(dtype), seed=1, output_size=50, affine=affine)
        floats = MosaicDataset(self._points(np.float64), seed=1, output_size=50, affine=affine)
        counts = set()
        for i in range(len(ints)):
            out, ref = ints[i]["keypoints"], floats[i]["keypoints"]
            assert out.dtype == dtype
            assert out.tolist() == np.ceil(ref - 0.5).tolist()  # the nearest, halves down
            counts.add(bool(len(out)) and bool((abs(ref - np.round(ref)) > 1e-9).any()))
        assert counts == {False, True}  # draws moved by fractions, and draws with none

    def test_a_dtype_short_of_the_output_is_refused_on_every_draw(self) -> None:
        samples = [{"image": np.zeros((40, 40), np.uint8), "keypoints": np.zeros((0, 2), np.int8)}]
        with pytest.raises(SampleError, match=r"dataset\[0\] keypoints are int8, which holds up"):
            MosaicDataset(samples * 4, seed=0, output_size=200)[0]
