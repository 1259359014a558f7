from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rankaug import SampleError
from rankaug.mix import CopyPasteDataset
from rankaug.mix.base import PairPlan
from rankaug.mix.copypaste import tight_box
from tests.mix.painted import colour_of, instance_datasets, instance_sample


class Fixed(CopyPasteDataset[Any]):
    """Copy-paste whose partner is always the next sample."""

    def plan(self, index: int, rng: np.random.Generator, epoch: int) -> PairPlan:
        return PairPlan(True, (index, (index + 1) % len(self)), (), ())


class TestTightBox:
    def test_box_around_the_pixels(self) -> None:
        mask = np.zeros((5, 6), bool)
        mask[1:3, 2] = True
        mask[4, 5] = True
        assert tight_box(mask) == [2.0, 1.0, 6.0, 5.0]


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
            main, partner = record["indices"]
            assert main == index
            assert (partner == index) == (source == "flip")
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

    def test_fraction_zero_pastes_nothing(self) -> None:
        data = [instance_sample(i, (8, 8), [(1, 1, 5, 5)]) for i in range(2)]
        out = CopyPasteDataset(data, seed=0, p=1.0, fraction=0.0)[0]
        assert out["copypaste"]["applied"]
        assert out["copypaste"]["pasted"] == []
        np.testing.assert_array_equal(out["image"], data[0]["image"])
        assert out["image"] is not data[0]["image"]

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
        with pytest.raises(SampleError, match=r"index 1 .*dataset\[1\] has no instance masks"):
            CopyPasteDataset(data, seed=0, p=0.0)[1]

    def test_arguments_are_checked(self) -> None:
        data = [instance_sample(0, (4, 4), [])]
        with pytest.raises(ValueError, match="source must be one of 'partner', 'flip'"):
            CopyPasteDataset(data, seed=0, source="mixup")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"fraction must be a finite number >= 0\.0"):
            CopyPasteDataset(data, seed=0, fraction=1.5)
        with pytest.raises(TypeError, match="min_visibility must be a finite number"):
            CopyPasteDataset(data, seed=0, min_visibility="0.3")  # type: ignore[arg-type]
