from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from rankaug import SampleError, Targets
from rankaug.adapters import KeyMap
from rankaug.mix import MixUpDataset
from rankaug.mix.mixup import blend
from tests.mix.painted import KINDS, flat_sample


def flat_dataset(
    count: int,
    hw: tuple[int, int] = (12, 16),
    dtype: Any = np.uint8,
    channels: int | None = 3,
    top: float = 255,
) -> list[dict[str, Any]]:
    values = np.linspace(0, top, count)
    if np.dtype(dtype).kind in "iu":
        values = np.round(values)
    return [flat_sample(i, hw, values[i], dtype=dtype, channels=channels) for i in range(count)]


class TestBlend:
    def test_rounds_to_nearest_and_keeps_the_shape(self) -> None:
        out = blend(np.full((2, 3, 1), 1, np.uint8), np.full((2, 3, 1), 2, np.uint8), 0.7)
        assert out.shape == (2, 3, 1)
        assert (out == 1).all()  # 1.3 rounds down
        assert (
            blend(np.full((2, 2), 0, np.uint8), np.full((2, 2), 255, np.uint8), 0.3) == 178
        ).all()


class TestMixUpPixels:
    @given(kind=KINDS, seed=st.integers(0, 2**64 - 1), alpha=st.sampled_from([0.5, 32.0]))
    def test_every_pixel_is_the_weighted_sum_to_rounding(
        self, kind: tuple[Any, int | None, float], seed: int, alpha: float
    ) -> None:
        dtype, channels, top = kind
        data = flat_dataset(5, dtype=dtype, channels=channels, top=top)
        mixup = MixUpDataset(data, seed=seed, alpha=alpha, keying="sample")
        for index in range(len(data)):
            out = mixup[index]
            main, partner = out["mixup"]["indices"]
            ratio = out["mixup"]["ratio"]
            assert main == index
            assert partner != index
            assert out["image"].dtype == np.dtype(dtype)
            assert out["image"].shape == data[index]["image"].shape
            a = float(data[main]["image"].flat[0])
            b = float(data[partner]["image"].flat[0])
            exact = ratio * a + (1 - ratio) * b
            tolerance = 0.5 + 1e-3 if np.dtype(dtype).kind in "iu" else 1e-5
            assert np.abs(out["image"].astype(np.float64) - exact).max() <= tolerance


class TestMixUpTargets:
    def test_targets_are_the_union_main_first(self) -> None:
        data = [
            flat_sample(0, (12, 16), 10, boxes=[(1, 1, 5, 5), (2, 2, 9, 9)]),
            flat_sample(1, (12, 16), 200, boxes=[(3, 4, 15, 11)]),
        ]
        data[1]["keypoints"] = np.array([[2.0, 3.0]])
        data[0]["keypoints"] = np.array([[1.0, 1.0], [4.0, 4.0]], np.float32)
        out = MixUpDataset(data, seed=0)[0]
        np.testing.assert_array_equal(
            out["bboxes"], np.concatenate((data[0]["bboxes"], data[1]["bboxes"]))
        )
        assert out["bboxes"].dtype == np.float32
        assert out["labels"].tolist() == [0, 0, 1]
        assert out["labels"].dtype == np.int64
        np.testing.assert_array_equal(
            out["masks"], np.concatenate((data[0]["masks"], data[1]["masks"]))
        )
        assert out["keypoints"].tolist() == [[1.0, 1.0], [4.0, 4.0], [2.0, 3.0]]
        assert out["keypoints"].dtype == np.float32
        assert out["path"] == "0.png"
        heavier = 0 if out["mixup"]["ratio"] >= 0.5 else 1
        np.testing.assert_array_equal(out["mask"], data[heavier]["mask"])

    @pytest.mark.parametrize("columns", [2, 3])
    def test_keypoints_off_the_image_are_dropped_mixed_or_not(self, columns: int) -> None:
        # as the mosaic drops those off its output: x in [0, 16), y in [0, 12), half-open
        points = [[-1.0, 2.0], [2.0, 12.0], [16.0, 2.0], [3.0, 4.0], [15.5, 11.5], [2.0, -0.5]]
        data = [flat_sample(k, (12, 16), 10 + 190 * k) for k in (0, 1)]
        for k, sample in enumerate(data):
            extra = [float(k)] if columns == 3 else []
            sample["keypoints"] = np.array([[*p, *extra] for p in points])
            sample["kp_owner"] = np.arange(len(points)) + 10 * k
        targets = Targets(keypoint_fields=("kp_owner",))
        mixed = MixUpDataset(data, seed=0, targets=targets)[0]
        alone = MixUpDataset(data, seed=0, p=0.0, targets=targets)[0]
        assert mixed["mixup"]["applied"] is True
        assert alone["mixup"]["applied"] is False
        kept = [[[3.0, 4.0, float(k)][:columns], [15.5, 11.5, float(k)][:columns]] for k in (0, 1)]
        assert mixed["keypoints"].tolist() == kept[0] + kept[1]  # a visibility moves along
        assert mixed["kp_owner"].tolist() == [3, 4, 13, 14]
        assert alone["keypoints"].tolist() == kept[0]
        assert alone["kp_owner"].tolist() == [3, 4]
        np.testing.assert_array_equal(alone["image"], data[0]["image"])

    def test_a_letterboxed_partners_keypoints_off_its_image_are_dropped(self) -> None:
        # a 6x16 partner fits the 12x16 image at rows 3 to 9: its keypoint at y = -2
        # would land on row 1, in the fill, where it never showed
        main = flat_sample(0, (12, 16), 10)
        partner = flat_sample(1, (6, 16), 200)
        main["keypoints"] = np.array([[2.0, 2.0]])
        partner["keypoints"] = np.array([[5.0, -2.0], [5.0, 2.0]])
        out = MixUpDataset([main, partner], seed=0, partner_fit="letterbox", fill=0)[0]
        assert out["mixup"]["indices"] == [0, 1]
        assert out["keypoints"].tolist() == [[2.0, 2.0], [5.0, 5.0]]

    def test_polygons_are_the_union_main_first_in_the_main_form(self) -> None:
        data = [
            flat_sample(0, (12, 16), 10, boxes=[(1, 1, 5, 5), (2, 2, 9, 9)]),
            flat_sample(1, (12, 16), 200, boxes=[(3, 4, 15, 11)]),
        ]
        for sample in data:
            del sample["masks"], sample["mask"]
            corners = sample["bboxes"][:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)
            sample["segments"] = corners
        out = MixUpDataset(data, seed=0)[0]
        assert out["segments"].dtype == np.float32
        np.testing.assert_array_equal(
            out["segments"], np.concatenate((data[0]["segments"], data[1]["segments"]))
        )
        data[1]["segments"] = [np.asarray(p, np.float64) for p in data[1]["segments"]]
        assert isinstance(MixUpDataset(data, seed=0)[1]["segments"], list)  # the main's form
        letterboxed = MixUpDataset(
            [data[0], {**data[1], "image": np.zeros((24, 32, 3), np.uint8),
                       "bboxes": data[1]["bboxes"] * 2,
                       "segments": [data[1]["segments"][0] * 2]}],
            seed=0, partner_fit="letterbox",
        )[0]  # fmt: skip
        np.testing.assert_allclose(letterboxed["segments"][2], data[1]["segments"][0])

    @pytest.mark.parametrize("ratio_alpha", [0.05])
    def test_the_semantic_mask_is_the_heavier_images(self, ratio_alpha: float) -> None:
        data = flat_dataset(4)
        mixup = MixUpDataset(data, seed=3, alpha=ratio_alpha, keying="sample")
        heavier = set()
        for index in range(4):
            out = mixup[index]
            main, partner = out["mixup"]["indices"]
            ratio = out["mixup"]["ratio"]
            expected = main if ratio >= 0.5 else partner
            heavier.add(expected == main)
            assert (out["mask"] == expected + 1).all()
        assert heavier == {True, False}  # both cases seen (alpha 0.05: r near 0 or 1)

    def test_an_int64_label_stays_int64_without_boxes(self) -> None:
        data = [
            {"image": np.zeros((4, 4), np.uint8), "bboxes": np.zeros((0, 4), np.float32),
             "labels": np.zeros(0, np.int64)}
            for _ in range(3)
        ]  # fmt: skip
        out = MixUpDataset(data, seed=0)[1]
        assert out["labels"].dtype == np.int64
        assert out["bboxes"].shape == (0, 4)

    @pytest.mark.parametrize("fmt", ["coco", "yolo", "albumentations"])
    def test_box_formats_come_back_in_their_format(self, fmt: str) -> None:
        data = flat_dataset(3)
        pixel = [s["bboxes"].astype(np.float64) for s in data]
        for sample, boxes in zip(data, pixel, strict=True):
            x0, y0, x1, y1 = boxes.T
            converted = {
                "coco": np.stack((x0, y0, x1 - x0, y1 - y0), 1),
                "yolo": np.stack(
                    ((x0 + x1) / 32, (y0 + y1) / 24, (x1 - x0) / 16, (y1 - y0) / 12), 1
                ),
                "albumentations": boxes / [16, 12, 16, 12],
            }[fmt]
            sample["bboxes"] = converted.astype(np.float32)
        out = MixUpDataset(data, seed=0, targets=Targets(box_format=fmt))[0]  # type: ignore[arg-type]
        partner = out["mixup"]["indices"][1]
        expected = np.concatenate((data[0]["bboxes"], data[partner]["bboxes"]))
        np.testing.assert_allclose(out["bboxes"], expected, rtol=1e-6, atol=1e-6)


class TestMixUpSampleShapes:
    def test_pil_images_and_tuple_samples(self) -> None:
        data = [
            (Image.fromarray(np.full((6, 8, 3), 20 * i, np.uint8)),
             {"boxes": [[0, 0, 2, 2]], "labels": [i]})
            for i in range(3)
        ]  # fmt: skip
        image, target = MixUpDataset(data, seed=0)[0]
        assert isinstance(image, Image.Image)
        assert image.size == (8, 6)
        assert isinstance(target["boxes"], list)
        assert target["labels"][0] == 0
        assert len(target["labels"]) == 2
        assert target["mixup"]["indices"][0] == 0

    def test_tensor_images_stay_chw_tensors(self) -> None:
        data = [
            [torch.full((3, 6, 8), 10 * i, dtype=torch.uint8),
             {"boxes": torch.tensor([[0.0, 0.0, 2.0, 2.0]]), "labels": torch.tensor([i])}]
            for i in range(3)
        ]  # fmt: skip
        out = MixUpDataset(data, seed=0)[2]
        assert isinstance(out, list)
        image, target = out
        assert image.shape == (3, 6, 8)
        assert image.dtype == torch.uint8
        assert target["labels"].dtype == torch.int64
        assert target["boxes"].shape == (2, 4)


class TestMixUpClasses:
    def test_pair_soft_targets_weigh_the_classes_as_the_pixels(self) -> None:
        data = [(np.full((4, 4, 3), 10 * i, np.uint8), i) for i in range(4)]
        mixup = MixUpDataset(data, seed=0, num_classes=5, keying="sample")
        for index in range(4):
            image, soft = mixup[index]
            assert soft.dtype == np.float32
            assert soft.shape == (5,)
            assert np.count_nonzero(soft) == 2
            assert soft[index] > 0.3
            assert abs(soft.sum() - 1.0) < 1e-6
            # the pixels are the same weighted sum of the classes' grey levels
            assert abs(float(image.flat[0]) - 10 * float(soft @ np.arange(5))) <= 0.5 + 1e-4

    def test_ratio_and_partner_from_the_record(self) -> None:
        data = [{"image": np.full((4, 4), 10 * i, np.uint8), "label": i} for i in range(4)]
        out = MixUpDataset(data, seed=1, num_classes=4)[2]
        (main, partner), ratio = out["mixup"]["indices"], out["mixup"]["ratio"]
        expected = np.zeros(4)
        expected[main] += ratio
        expected[partner] += 1 - ratio
        np.testing.assert_allclose(out["label"], expected, atol=1e-6)

    def test_unmixed_samples_get_one_hot_vectors_and_tensors_stay_tensors(self) -> None:
        data = [(torch.zeros(3, 4, 4, dtype=torch.uint8), torch.tensor(i)) for i in range(3)]
        _, soft = MixUpDataset(data, seed=0, num_classes=3, p=0.0)[1]
        assert isinstance(soft, torch.Tensor)
        assert soft.tolist() == [0.0, 1.0, 0.0]

    def test_a_class_without_num_classes_is_refused_naming_the_sample(self) -> None:
        data = [(np.zeros((4, 4), np.uint8), i) for i in range(3)]
        with pytest.raises(SampleError, match=r"at index 1 .*dataset\[1\] has the class 1"):
            MixUpDataset(data, seed=0)[1]

    def test_a_class_out_of_range_names_the_sample(self) -> None:
        data = [(np.zeros((4, 4), np.uint8), i) for i in range(3)]
        with pytest.raises(SampleError, match=r"dataset\[2\] class must be an integer in \[0, 1\]"):
            MixUpDataset(data, seed=0, num_classes=2, p=0.0)[2]

    def test_per_box_classes_a_keymap_reads_from_label_are_no_class(self) -> None:
        data = [{"image": np.full((8, 8), 10 * i, np.uint8), "bboxes": [[1.0, 1.0, 3.0, 3.0]],
                 "label": np.array([i])} for i in range(3)]  # fmt: skip
        adapter = KeyMap(image="image", bboxes="bboxes", labels="label")
        out = MixUpDataset(data, seed=0, p=1.0, adapter=adapter)[0]
        main, partner = out["mixup"]["indices"]
        assert out["label"].tolist() == [main, partner]  # both samples' boxes, each its class


class TestMixUpDataset:
    def test_a_mixup_of_p_zero_is_the_sample_itself(self) -> None:
        data = flat_dataset(3)
        out = MixUpDataset(data, seed=0, p=0.0)[1]
        assert out["image"] is data[1]["image"]
        assert out["mixup"] == {**out["mixup"], "applied": False, "indices": [1], "ratio": 1.0}

    def test_the_record_never_replaces_a_key_of_the_sample(self) -> None:
        # the user's image_id, or an inner MixUp's record, was silently replaced
        data = [{**sample, "image_id": 100 + i} for i, sample in enumerate(flat_dataset(3))]
        with pytest.raises(SampleError, match="record='image_id' names a key") as caught:
            MixUpDataset(data, seed=0, record="image_id")[0]
        assert isinstance(caught.value.__cause__, ValueError)
        with pytest.raises(SampleError, match=r"record='mixup' .* such as record='mixup_2'"):
            MixUpDataset(MixUpDataset(data, seed=0), seed=1)[0]
        out = MixUpDataset(MixUpDataset(data, seed=0), seed=1, record="mixup_2")[0]
        assert out["image_id"] == 100
        assert out["mixup"]["indices"][0] == out["mixup_2"]["indices"][0] == 0

    def test_p_as_a_function_of_the_epoch(self) -> None:
        data = flat_dataset(3)
        mixup = MixUpDataset(data, seed=0, p=lambda epoch: float(epoch >= 1))
        mixup.set_epoch(0)
        assert not mixup[0]["mixup"]["applied"]
        mixup.set_epoch(1)
        assert mixup[0]["mixup"]["applied"]
        assert mixup.probability(3) == 1.0

    def test_replay_is_bit_for_bit(self) -> None:
        data = flat_dataset(6)
        mixup = MixUpDataset(data, seed=5)
        first, second = mixup[2], mixup[2]  # the stream moves on
        assert first["mixup"]["state"] != second["mixup"]["state"]
        again = mixup.replay(second["mixup"])
        for key in ("image", "bboxes", "labels", "mask", "masks"):
            np.testing.assert_array_equal(again[key], second[key])
        assert again["mixup"] == second["mixup"]

    def test_sizes_that_differ_are_refused_or_letterboxed(self) -> None:
        data = [flat_sample(0, (8, 8), 10), flat_sample(1, (4, 8), 200, boxes=[(0, 0, 8, 4)])]
        with pytest.raises(SampleError, match=r"dataset\[1\] image is 4x8 .* dataset\[0\] is 8x8"):
            MixUpDataset(data, seed=0)[0]
        out = MixUpDataset(data, seed=0, partner_fit="letterbox", fill=0)[0]
        assert out["bboxes"][-1].tolist() == [0.0, 2.0, 8.0, 6.0]
        assert out["masks"][-1].sum() == 32
        assert out["mask"].shape == (8, 8)

    def test_arguments_are_checked(self) -> None:
        data = flat_dataset(2)
        with pytest.raises(ValueError, match=r"alpha must be a finite number > 0\.0, got 0"):
            MixUpDataset(data, seed=0, alpha=0)
        with pytest.raises(TypeError, match=r"alpha must be a finite number > 0\.0, got True"):
            MixUpDataset(data, seed=0, alpha=True)
        with pytest.raises(ValueError, match=r"p must be a finite number >= 0\.0 and <= 1\.0"):
            MixUpDataset(data, seed=0, p=1.5)
        with pytest.raises(ValueError, match="record must be None or a key name other than"):
            MixUpDataset(data, seed=0, record="image")
        with pytest.raises(ValueError, match="partner_fit must be one of 'error', 'letterbox'"):
            MixUpDataset(data, seed=0, partner_fit="crop")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="num_classes must be an integer >= 1, got 0"):
            MixUpDataset(data, seed=0, num_classes=0)
        with pytest.raises(ValueError, match="dataset is empty"):
            MixUpDataset([], seed=0)
