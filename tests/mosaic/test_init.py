from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import albumentations as A
import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from torch.utils.data import DataLoader

from rankaug import (
    HSVJitter,
    MosaicDataset,
    MosaicGrid,
    Partners,
    RandomAugmentWrapper,
    RankaugWarning,
    SampleError,
    Targets,
)
from rankaug.boxes import from_xyxy, to_xyxy
from rankaug.datasets import SyntheticDetection, YoloFolder, write_yolo_folder
from rankaug.mosaic import MosaicAffine
from tests.albu import bbox_params
from tests.mosaic.painted import (
    GEOMETRY,
    colour_of,
    grouped,
    landed_boxes,
    painted_datasets,
    painted_sample,
)


class TestMosaicGeometryProperties:
    @given(data=painted_datasets(), geometry=GEOMETRY, seed=st.integers(0, 2**64 - 1))
    def test_boxes_stay_inside_with_positive_area_and_show_their_own_pixels(
        self, data: list[dict[str, Any]], geometry: dict[str, Any], seed: int
    ) -> None:
        mosaic = MosaicDataset(
            data,
            seed=seed,
            keying="sample",
            **grouped(geometry, interpolation=cv2.INTER_NEAREST_EXACT),
        )
        for index in range(len(data)):
            out = mosaic[index]
            image, boxes, labels = out["image"], out["bboxes"], out["labels"]
            h, w = image.shape[:2]
            factor = 2 if geometry["canvas"] == "yolo" else 1
            assert (h, w) == (
                geometry["output_size"][0] * factor,
                geometry["output_size"][1] * factor,
            )
            assert boxes.shape == (len(labels), 4)
            assert (boxes[:, :2] >= 0).all()
            assert (boxes[:, 2] <= w).all()
            assert (boxes[:, 3] <= h).all()
            assert (boxes[:, 2:] > boxes[:, :2]).all()
            sources = {code for i in out["mosaic"]["indices"] for code in data[i]["labels"]}
            assert set(labels.tolist()) <= sources
            for box, label in zip(boxes, labels, strict=True):
                x0, y0, x1, y1 = box
                # every output pixel fully inside the box shows the box's colour
                inner = image[int(np.ceil(y0)) : int(y1), int(np.ceil(x0)) : int(x1)]
                assert (inner == colour_of(int(label))).all()  # (vacuous for none)
                # the semantic mask moved with the pixels
                assert (
                    out["mask"][int(np.ceil(y0)) : int(y1), int(np.ceil(x0)) : int(x1)] == label
                ).all()
            # instance masks stay aligned with their boxes
            assert out["masks"].shape == (len(labels), h, w)
            for box, instance in zip(boxes, out["masks"], strict=True):
                ys, xs = np.nonzero(instance)
                assert (xs >= np.floor(box[0])).all()
                assert (xs < np.ceil(box[2])).all()
                assert (ys >= np.floor(box[1])).all()
                assert (ys < np.ceil(box[3])).all()

    @given(data=painted_datasets(), geometry=GEOMETRY, seed=st.integers(0, 2**32 - 1))
    def test_keypoints_land_on_their_own_pixels(
        self, data: list[dict[str, Any]], geometry: dict[str, Any], seed: int
    ) -> None:
        with_points = []
        for sample in data:
            boxes = sample["bboxes"].astype(np.float64)
            centres = (boxes[:, :2] + boxes[:, 2:]) / 2
            with_points.append({**sample, "keypoints": centres, "kp_labels": sample["labels"]})
        mosaic = MosaicDataset(
            with_points, seed=seed, targets=Targets(keypoint_fields=("kp_labels",)),
            **grouped(geometry, interpolation=cv2.INTER_NEAREST_EXACT),
        )  # fmt: skip
        for index in range(len(data)):
            out = mosaic[index]
            points, labels = out["keypoints"], out["kp_labels"]
            assert points.shape == (len(labels), 2)
            h, w = out["image"].shape[:2]
            # a source image can appear in several cells, so a label can have several boxes
            boxes: dict[int, list[list[float]]] = {}
            for box, label in zip(out["bboxes"].tolist(), out["labels"].tolist(), strict=True):
                boxes.setdefault(label, []).append(box)
            for x, y in points.tolist():
                assert 0 <= x < w
                assert 0 <= y < h
            # each keypoint moved exactly as its box did: it is inside where such a box
            # lands (kept, or not where it holds no pixel centre: its keypoint is) ...
            landed = landed_boxes(out["mosaic"], with_points)
            for (x, y), label in zip(points.tolist(), labels.tolist(), strict=True):
                assert any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in landed[label])
            # ... and where the pixel under it lies wholly inside that box, it shows the
            # box's colour (a box shrunk below a pixel has no such pixel)
            inner = [
                (int(x), int(y), label)
                for (x, y), label in zip(points.tolist(), labels.tolist(), strict=True)
                if any(b[0] <= int(x) and int(x) + 1 <= b[2] and b[1] <= int(y)
                       and int(y) + 1 <= b[3] for b in boxes.get(label, []))
            ]  # fmt: skip
            assert all(tuple(out["image"][y, x]) == colour_of(c) for x, y, c in inner)

    @given(data=painted_datasets(), geometry=GEOMETRY)
    def test_record_describes_what_was_drawn(
        self, data: list[dict[str, Any]], geometry: dict[str, Any]
    ) -> None:
        mosaic = MosaicDataset(data, seed=0, **grouped(geometry))
        record = mosaic[len(data) - 1]["mosaic"]
        rows, cols = geometry["grid"] if record["applied"] else (1, 1)
        assert record["indices"][0] == len(data) - 1
        assert len(record["indices"]) == rows * cols
        assert sorted(record["cells"]) == [(r, c) for r in range(rows) for c in range(cols)]
        assert len(record["src"]) == len(record["dst"]) == len(record["scales"]) == rows * cols
        out_h, out_w = mosaic[0]["image"].shape[:2]
        for x0, y0, x1, y1 in record["dst"]:
            assert 0 <= x0 <= x1 <= out_w
            assert 0 <= y0 <= y1 <= out_h
        # partners are other samples; a lone sample can only be its own partner
        alone = record["applied"] and len(data) == 1 and rows * cols > 1
        assert (record["indices"][0] in record["indices"][1:]) == alone


class ObjectAdapter:
    """Samples that are objects with ``image``, ``boxes`` and ``labels`` attributes."""

    def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], None]:
        return {"image": sample.image, "bboxes": sample.boxes, "labels": sample.labels}, None

    def repack(self, data: Mapping[str, Any], state: None) -> SimpleNamespace:
        return SimpleNamespace(image=data["image"], boxes=data["bboxes"], labels=data["labels"])


def objects(count: int) -> list[SimpleNamespace]:
    box = np.array([[2.0, 2.0, 10.0, 10.0]])
    return [SimpleNamespace(image=np.full((16, 16, 3), 40 * i, np.uint8), boxes=box,
                            labels=np.array([i])) for i in range(count)]  # fmt: skip


class _ObjectMosaic(MosaicDataset[Any]):
    """A subclass that sets its adapter and dataset before calling the constructor."""

    def __init__(self, dataset: Any) -> None:
        self.dataset, self.adapter = dataset, ObjectAdapter()
        super().__init__(dataset, seed=0, output_size=16, record=None, adapter=self.adapter)
        self.note = "mine"


class _PartnersMosaic(MosaicDataset[Any]):
    """A subclass that sets its partners (and maybe its config) before the constructor."""

    def __init__(self, dataset: Any, partners: Partners, config: Any = None) -> None:
        self.partners = partners  # type: ignore[assignment]
        if config is not None:
            self.config = config
        self.adapter = None  # after the config: still left for the constructor to check
        super().__init__(dataset, seed=0, output_size=16, partners=Partners(pool=[0, 1, 2]))


class TestMosaicDataset:
    def test_a_subclass_may_set_partners_or_config_before_the_constructor(self) -> None:
        # before: refused as an assignment after construction, whatever the value (the
        # constructor sets them after the base's, which counted as made)
        data = SyntheticDetection(4, image_size=16)
        config = MosaicDataset(data, seed=1, output_size=16).config  # built again: equal
        mosaic = _PartnersMosaic(data, Partners(pool=(0, 1, 2)), config)
        assert mosaic.partners.pool is not None
        assert mosaic.partners.pool.tolist() == [0, 1, 2]
        assert mosaic.config == config
        assert mosaic[0]["image"].shape == (16, 16, 3)
        with pytest.raises(AttributeError, match=r"^_PartnersMosaic\.partners cannot be assigned"):
            mosaic.partners = Partners(pool=(0, 1, 2))  # type: ignore[assignment]  # made: refused

    @pytest.mark.parametrize("name", ["partners", "config"])
    def test_another_value_set_before_the_constructor_is_refused(self, name: str) -> None:
        data = SyntheticDetection(4, image_size=16)
        given: dict[str, Any] = {"partners": Partners(pool=(0, 1, 2))}
        given[name] = Partners(pool=(0, 1)) if name == "partners" else {"lr": 0.1}
        with pytest.raises(
            AttributeError,
            match=rf"^_PartnersMosaic\.{name} cannot be assigned: it was set before the "
            rf"constructor, which sets {name} itself, to another value",
        ):
            _PartnersMosaic(data, **given)

    def test_a_subclass_may_set_its_settings_before_the_constructor(self) -> None:
        # before: the adapter's setter read a config not made yet (AttributeError), and
        # the constructor's own dataset was refused as an assignment after construction
        data = objects(4)
        mosaic = _ObjectMosaic(data)
        assert (mosaic.dataset, mosaic.note) == (data, "mine")
        assert isinstance(mosaic.adapter, ObjectAdapter)
        assert type(mosaic[0]) is SimpleNamespace

    def test_an_adapter_set_afterwards_reads_the_tiles(self) -> None:
        # before: the output was repacked by the new adapter, the tiles still unpacked by
        # the old one, which refused the samples ("for any other shape, pass adapter=")
        mosaic = MosaicDataset(objects(4), seed=0, output_size=16, record=None)
        mosaic.adapter = ObjectAdapter()
        assert isinstance(mosaic.adapter, ObjectAdapter)
        out = mosaic[0]
        assert type(out) is SimpleNamespace
        assert out.image.shape == (16, 16, 3)
        assert len(out.boxes) == len(out.labels) > 0
        mosaic.adapter = None  # the default again: it refuses these samples
        with pytest.raises(SampleError, match="cannot handle a sample of type SimpleNamespace"):
            mosaic[0]

    @pytest.mark.parametrize("name", ["p", "close_mosaic", "output_size", "record", "affine"])
    def test_an_argument_kept_in_the_config_cannot_be_assigned(self, name: str) -> None:
        # before: mosaic.p = 0.0 made an attribute nothing read: every sample stayed a mosaic
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16)
        with pytest.raises(
            AttributeError,
            match=rf"^MosaicDataset\.{name} cannot be assigned: "
            rf"{name} is an argument of MosaicDataset, checked into its config",
        ):
            setattr(mosaic, name, 0.0)
        assert mosaic.config.p == 1.0
        assert not hasattr(mosaic, name)

    @pytest.mark.parametrize(
        ("keyword", "name"),
        [(keyword, field.name) for keyword, kind in MosaicDataset.parameter_objects.items()
         for field in fields(kind)],
    )  # fmt: skip
    def test_a_deprecated_flat_keyword_cannot_be_assigned(self, keyword: str, name: str) -> None:
        # before: mosaic.fill = 0 made an attribute nothing read (the config kept its fill)
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16)
        kind = MosaicDataset.parameter_objects[keyword].__name__
        with pytest.raises(
            AttributeError,
            match=rf"^MosaicDataset\.{name} cannot be assigned: {name}= is a deprecated "
            rf"spelling of {keyword}=rankaug\.{kind}\({name}=\.\.\.\)",
        ):
            setattr(mosaic, name, 0)
        assert not hasattr(mosaic, name)
        default = next(f.default for f in fields(MosaicDataset.parameter_objects[keyword])
                       if f.name == name)  # fmt: skip
        with pytest.warns(DeprecationWarning, match=rf"use {keyword}=rankaug\.{kind}\("):
            MosaicDataset(
                SyntheticDetection(4, image_size=16), seed=0, output_size=16, **{name: default}
            )  # the list is the constructor's: it takes each

    @pytest.mark.parametrize("name", ["config", "partners", "seed", "dataset"])
    def test_a_setting_fixed_when_made_cannot_be_assigned(self, name: str) -> None:
        # before: config, partners or seed assigned were silently not used (the reader, the
        # records' settings and the key kept the old ones)
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16)
        other = MosaicDataset(SyntheticDetection(5, image_size=16), seed=1, output_size=32)
        with pytest.raises(AttributeError, match=rf"^MosaicDataset\.{name} cannot be assigned"):
            setattr(mosaic, name, getattr(other, name))
        assert mosaic[0]["image"].shape == (16, 16, 3)

    def test_float_images_take_a_given_fill_and_refuse_the_default(self) -> None:
        # the default fill=114 was painted into float images in [0, 1]
        data = SyntheticDetection(4, image_size=32, dtype="float32")
        with pytest.raises(ValueError, match=r"^fill must be given for float images"):
            MosaicDataset(data, seed=0, output_size=48)[0]
        out = MosaicDataset(data, seed=0, output_size=48, layout=MosaicGrid(fill=114 / 255))[0]
        assert out["image"].min() >= 0.0
        assert out["image"].max() <= 1.0
        assert np.isclose(out["image"], 114 / 255).any()  # the fill is painted somewhere

    @pytest.mark.parametrize("affine", [None, MosaicAffine(degrees=10.0)])
    @pytest.mark.parametrize("bad", [np.nan, np.inf])
    def test_non_finite_keypoints_are_refused_not_dropped(
        self, affine: MosaicAffine | None, bad: float
    ) -> None:
        points = np.array([[bad, 5.0], [16.0, 16.0]], np.float32)
        data = [{"image": np.zeros((32, 32, 3), np.uint8), "bboxes": np.zeros((0, 4)),
                 "labels": np.zeros(0, np.int64), "keypoints": points}] * 2  # fmt: skip
        for p in (0.0, 1.0):  # letterboxed or a mosaic: refused either way, as a NaN box is
            mosaic = MosaicDataset(data, seed=0, output_size=32, p=p, affine=affine)
            with pytest.raises(SampleError, match=r"dataset\[\d\] keypoints\[0\] = \[(nan|inf), 5"):
                mosaic[0]

    @pytest.mark.parametrize("tensors", [False, True])
    def test_instance_masks_as_a_list_come_back_a_list_of_the_same(self, tensors: bool) -> None:
        arrays = [painted_sample(i, (32, 40), [(2, 3, 12, 10), (20, 15, 38, 30)]) for i in range(4)]
        listed = [{**s, "masks": [torch.from_numpy(m) if tensors else m for m in s["masks"]]}
                  for s in arrays]  # fmt: skip
        kind, dtype = (torch.Tensor, torch.uint8) if tensors else (np.ndarray, np.uint8)
        for index in range(4):
            want = MosaicDataset(arrays, seed=0, output_size=64)[index]["masks"]
            got = MosaicDataset(listed, seed=0, output_size=64)[index]["masks"]
            assert type(got) is list
            assert [(type(m), m.dtype) for m in got] == [(kind, dtype)] * len(want)
            for mask, expected in zip(got, want, strict=True):
                np.testing.assert_array_equal(np.asarray(mask), expected)

    def test_keys_give_repeatable_and_distinct_mosaics(self) -> None:
        src = SyntheticDetection(12, image_size=48)

        def indices(**kwargs: Any) -> list[list[int]]:
            epoch = kwargs.pop("epoch", 0)
            mosaic = MosaicDataset(src, seed=kwargs.pop("seed", 0), output_size=64, **kwargs)
            mosaic.set_epoch(epoch)
            return [mosaic[i]["mosaic"]["indices"] for i in range(12)]

        base = indices()
        assert indices() == base
        for other in (indices(seed=1), indices(rank=1), indices(epoch=1)):
            assert other != base

    @given(seed=st.integers(0, 2**64 - 1), index=st.integers(0, 9), epoch=st.integers(0, 99))
    def test_same_key_gives_the_same_mosaic(self, seed: int, index: int, epoch: int) -> None:
        src = [painted_sample(i, (20 + i, 30), [(2, 2, 9, 9)]) for i in range(10)]
        a = MosaicDataset(src, seed=seed, output_size=32, keying="sample")
        b = MosaicDataset(src, seed=seed, output_size=32, keying="sample")
        a.set_epoch(epoch)
        b.set_epoch(epoch)
        first, second = a[index], b[index]
        assert first["mosaic"] == second["mosaic"]
        assert np.array_equal(first["image"], second["image"])
        assert np.array_equal(first["bboxes"], second["bboxes"])

    def test_replay_rebuilds_a_stream_sample(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=40), seed=3, output_size=48)
        outputs = [mosaic[i % 8] for i in range(10)]
        again = mosaic.replay(outputs[9]["mosaic"])
        assert np.array_equal(again["image"], outputs[9]["image"])
        assert np.array_equal(again["bboxes"], outputs[9]["bboxes"])
        assert again["mosaic"] == outputs[9]["mosaic"]

    @pytest.mark.parametrize("keying", ["stream", "sample", "sample_rank"])
    @pytest.mark.parametrize(
        "partners",
        [
            Partners(replace=False),
            Partners(replace=False, weights=[1.0 + k % 3 for k in range(12)]),
            Partners(weights=[1.0 + k % 3 for k in range(12)]),
            Partners(),
        ],
    )
    def test_replay_is_exact_for_every_partner_rule(self, keying: str, partners: Partners) -> None:
        # replace=False draws 32-bit words: the stream's Generator can be left holding half
        # of one, which the record keeps (it was dropped: replays drew other partners)
        data = SyntheticDetection(12, image_size=40)
        mosaic = MosaicDataset(data, seed=123, output_size=48, keying=keying, partners=partners)
        outputs = [mosaic[i % 3] for i in range(14)]
        for out in outputs:
            again = mosaic.replay(out["mosaic"])
            assert again["mosaic"] == out["mosaic"]
            assert again["image"].tobytes() == out["image"].tobytes()
            assert again["bboxes"].tobytes() == out["bboxes"].tobytes()
            assert again["labels"].tolist() == out["labels"].tolist()

    @pytest.mark.parametrize("channels", [5, 7, 16])
    @pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16])
    def test_area_interpolation_paints_many_channels_exactly(
        self, channels: int, dtype: Any
    ) -> None:
        # cv2.resize's INTER_AREA takes at most 4 channels: this crashed
        colours = [np.arange(channels) + 1 + 20 * i for i in range(4)]
        data = [{"image": np.full((40 + 3 * i, 50 - 2 * i, channels), colours[i], dtype),
                 "bboxes": np.zeros((0, 4), np.float32), "labels": np.zeros(0, np.int64)}
                for i in range(4)]  # fmt: skip
        layout = MosaicGrid(interpolation=cv2.INTER_AREA, fill=0, scale_range=(0.5, 1.5))
        mosaic = MosaicDataset(data, seed=1, output_size=(33, 41), keying="sample", layout=layout)
        for index in range(4):
            out = mosaic[index]
            image, record = out["image"], out["mosaic"]
            expected = np.zeros_like(image)
            for tile, (x0, y0, x1, y1) in zip(record["indices"], record["dst"], strict=True):
                expected[y0:y1, x0:x1] = colours[tile]
            assert image.dtype == dtype
            assert image.tobytes() == expected.tobytes()

    @pytest.mark.parametrize("affine", [None, MosaicAffine(degrees=30.0, scale=0.3)])
    def test_replay_rebuilds_polygons_bit_for_bit(
        self, affine: MosaicAffine | None, tmp_path: Path
    ) -> None:
        # the YOLO-seg pipeline: YoloFolder(segments=True) into the mosaic
        samples = []
        for k in range(4):
            polygon = np.array([[2.0 + k, 3.0], [30.0, 5.0 + k], [20.0, 28.0]], np.float32)
            samples.append({"image": np.full((32, 32, 3), 40 * k, np.uint8),
                            "bboxes": np.array([[2.0 + k, 3.0, 30.0, 28.0]]),
                            "labels": np.array([k]), "segments": [polygon]})  # fmt: skip
        folder = YoloFolder(write_yolo_folder(samples, tmp_path), segments=True)
        mosaic = MosaicDataset(folder, seed=5, output_size=40, affine=affine)
        outputs = [mosaic[i % 4] for i in range(7)]
        for out in outputs:
            again = mosaic.replay(out["mosaic"])
            assert len(again["segments"]) == len(out["segments"]) == len(out["bboxes"])
            for a, b in zip(again["segments"], out["segments"], strict=True):
                assert a.dtype == b.dtype == np.float32
                assert a.tobytes() == b.tobytes()
        assert sum(len(out["segments"]) for out in outputs) >= 7

    def test_partners_never_the_main_image_and_main_cell_varies(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(5, image_size=32), seed=0, output_size=32)
        cells = Counter()
        for i in range(200):
            record = mosaic[i % 5]["mosaic"]
            assert record["indices"][0] == i % 5
            assert i % 5 not in record["indices"][1:]
            cells[record["cells"][0]] += 1
        assert set(cells) == {(0, 0), (0, 1), (1, 0), (1, 1)}

    def test_one_item_dataset_is_its_own_partner(self) -> None:
        record = MosaicDataset([painted_sample(0, (20, 20), [])], seed=0, output_size=16)[0][
            "mosaic"
        ]
        assert record["indices"] == [0, 0, 0, 0]

    def test_without_replacement_partners_are_distinct(self) -> None:
        mosaic = MosaicDataset(
            SyntheticDetection(10, image_size=24),
            seed=0,
            output_size=24,
            layout=MosaicGrid(grid=(3, 3)),
            partners=Partners(replace=False),
        )
        for i in range(30):
            indices = mosaic[i % 10]["mosaic"]["indices"]
            assert len(set(indices)) == 9

    def test_pool_and_weights_restrict_partners(self) -> None:
        src = SyntheticDetection(20, image_size=24)
        pooled = MosaicDataset(src, seed=0, output_size=24, partners=Partners(pool=[3, 4, 5, 6]))
        for i in range(20):
            assert set(pooled[i]["mosaic"]["indices"][1:]) <= {3, 4, 5, 6}
        weights = np.zeros(20)
        weights[[7, 11]] = 1.0
        weighted = MosaicDataset(src, seed=0, output_size=24, partners=Partners(weights=weights))
        seen = Counter(p for i in range(40) for p in weighted[i % 20]["mosaic"]["indices"][1:])
        assert set(seen) == {7, 11}
        # the main image is excluded even when weighted: index 7 draws only 11
        assert set(weighted[7]["mosaic"]["indices"][1:]) == {11}

    def test_probability_epoch_schedule_and_close_mosaic(self) -> None:
        src = SyntheticDetection(8, image_size=(20, 40))
        never = MosaicDataset(src, seed=0, output_size=64, p=0.0)
        out = never[2]
        assert out["mosaic"]["applied"] is False
        assert out["mosaic"]["indices"] == [2]
        assert out["image"].shape == (64, 64, 3)
        # 20x40 letterboxed into 64x64: scaled to 32x64, 16 rows of fill above and below
        assert (out["image"][:16] == 114).all()
        assert (out["image"][48:] == 114).all()
        assert not (out["image"][16:48] == 114).all()
        closing = MosaicDataset(src, seed=0, output_size=32, epochs=10, close_mosaic=3)
        closing.set_epoch(6)
        assert closing[0]["mosaic"]["applied"] is True
        closing.set_epoch(7)
        assert closing[0]["mosaic"]["applied"] is False
        by_epoch = MosaicDataset(src, seed=0, output_size=32, p=_half_after_two)
        applied = []
        for epoch in (0, 3):
            by_epoch.set_epoch(epoch)
            applied.append(sum(by_epoch[i]["mosaic"]["applied"] for i in range(8)))
        assert applied[0] == 8
        assert 0 < applied[1] < 8

    def test_letterbox_keeps_boxes_on_their_pixels(self) -> None:
        sample = painted_sample(0, (40, 80), [(10, 5, 30, 25)])
        out = MosaicDataset([sample], seed=0, output_size=40, p=0.0)[0]
        # 80x40 scaled by 0.5 to 40x20, centred vertically at y = 10
        np.testing.assert_allclose(out["bboxes"], [[5, 12.5, 15, 22.5]])

    def test_min_visibility_measures_against_the_full_box(self) -> None:
        # One 100x100 image whose box covers its centre [25, 75]^2; with the centre
        # fixed at (50, 50) every cell shows one quarter of the image, so every copy
        # of the box is exactly 25% visible. albumentations 2.0.8 measures visibility
        # after its per-cell crop and keeps such boxes at min_visibility=0.9.
        sample = painted_sample(0, (100, 100), [(25, 25, 75, 75)])

        def boxes(min_visibility: float) -> np.ndarray:
            mosaic = MosaicDataset(
                [sample], seed=0, output_size=100, layout=MosaicGrid(center_range=(0.5, 0.5)),
                targets=Targets(min_visibility=min_visibility),
            )  # fmt: skip
            return mosaic[0]["bboxes"]

        assert len(boxes(0.9)) == 0
        kept = boxes(0.2)
        assert len(kept) == 4
        np.testing.assert_allclose(kept[:, 2] - kept[:, 0], 25)
        np.testing.assert_allclose(kept[:, 3] - kept[:, 1], 25)

    def test_min_size_and_area_filters(self) -> None:
        sample = painted_sample(0, (100, 100), [(25, 25, 75, 75)])
        common = {"seed": 0, "output_size": 100, "layout": MosaicGrid(center_range=(0.5, 0.5))}

        def kept(**filters: float) -> int:
            return len(MosaicDataset([sample], targets=Targets(**filters), **common)[0]["bboxes"])

        assert kept(min_area=626) == 0
        assert kept(min_area=625) == 4
        assert kept(min_width=26) == 0
        assert kept(min_height=25) == 4

    @pytest.mark.parametrize("box_format", ["pascal_voc", "coco", "yolo", "albumentations"])
    def test_box_formats_round_trip(self, box_format: str) -> None:
        base = painted_sample(0, (50, 60), [(10, 10, 30, 40)])
        converted = dict(base)
        converted["bboxes"] = from_xyxy(base["bboxes"], box_format, (50, 60)).astype(np.float32)  # type: ignore[arg-type]
        kwargs = {"seed": 0, "output_size": 64, "keying": "sample"}
        reference = MosaicDataset([base], **kwargs)[0]["bboxes"]  # type: ignore[arg-type]
        out = MosaicDataset([converted], targets=Targets(box_format=box_format), **kwargs)[0][
            "bboxes"
        ]  # type: ignore[arg-type]
        np.testing.assert_allclose(to_xyxy(out, box_format, (64, 64)), reference, atol=1e-3)  # type: ignore[arg-type]

    def test_empty_targets_and_samples_without_boxes(self) -> None:
        out = MosaicDataset([painted_sample(i, (30, 30), []) for i in range(3)], seed=0,
                            output_size=32)[1]  # fmt: skip
        assert out["bboxes"].shape == (0, 4)
        assert out["labels"].shape == (0,)
        assert out["masks"].shape == (0, 32, 32)
        image_only = MosaicDataset([{"image": np.zeros((8, 8, 3), np.uint8)}] * 3, seed=0,
                                   output_size=16)[0]  # fmt: skip
        assert set(image_only) == {"image", "mosaic"}

    @pytest.mark.parametrize(
        ("shape", "dtype"),
        [((30, 40), np.uint8), ((30, 40, 1), np.uint8), ((30, 40, 5), np.uint8),
         ((30, 40, 3), np.float32), ((30, 40, 4), np.uint16)],
    )  # fmt: skip
    def test_grayscale_multichannel_and_float_images(
        self, shape: tuple[int, ...], dtype: Any
    ) -> None:
        src = [{"image": np.full(shape, 7, dtype)} for _ in range(4)]
        out = MosaicDataset(
            src, seed=0, output_size=24, layout=MosaicGrid(scale_mode="fit", fill=3)
        )[0]["image"]
        expected = (24, 24) if len(shape) == 2 else (24, 24, shape[2])
        assert out.shape == expected
        assert out.dtype == dtype
        assert set(np.unique(out).tolist()) <= {3, 7}

    def test_fill_per_channel(self) -> None:
        src = [{"image": np.zeros((10, 10, 3), np.uint8)} for _ in range(4)]
        out = MosaicDataset(
            src,
            seed=0,
            output_size=40,
            layout=MosaicGrid(scale_mode="fit", fill=(1, 2, 3), center_range=(0.5, 0.5)),
        )[0]["image"]
        # 10x10 tiles fit 20x20 cells: scaled to 20x20, nothing to fill
        assert (out == 0).all()
        small = MosaicDataset(
            src,
            seed=0,
            output_size=40,
            layout=MosaicGrid(
                scale_mode="fit", fill=(1, 2, 3), scale_range=(0.5, 0.5), center_range=(0.5, 0.5)
            ),
        )[0]["image"]
        assert (small[0, 0] == (1, 2, 3)).all()
        assert (small[19, 19] == 0).all()  # tiles anchored at the centre

    def test_yolo_canvas_has_twice_the_size_and_tiles_scaled_for_output(self) -> None:
        src = [painted_sample(i, (32, 32), [(4, 4, 12, 12)]) for i in range(4)]
        out = MosaicDataset(
            src, seed=0, output_size=32, layout=MosaicGrid(canvas="yolo", center_range=(0.5, 0.5))
        )[0]
        assert out["image"].shape == (64, 64, 3)
        assert sorted(out["mosaic"]["dst"]) == sorted(
            [(0, 0, 32, 32), (32, 0, 64, 32), (0, 32, 32, 64), (32, 32, 64, 64)]
        )

    def test_torchvision_tuple_with_tensor_image(self) -> None:
        def tv(i: int) -> tuple[torch.Tensor, dict[str, Any]]:
            sample = painted_sample(i, (30, 40), [(2, 3, 20, 25)])
            image = torch.from_numpy(sample["image"]).permute(2, 0, 1).contiguous()
            return image, {"boxes": torch.from_numpy(sample["bboxes"]),
                           "labels": torch.from_numpy(sample["labels"]), "image_id": i}  # fmt: skip

        out = MosaicDataset([tv(i) for i in range(4)], seed=0, output_size=48)[2]
        image, target = out
        assert isinstance(image, torch.Tensor)
        assert image.shape == (3, 48, 48)
        assert target["boxes"].dtype == torch.float32
        assert target["labels"].dtype == torch.int64
        assert len(target["boxes"]) == len(target["labels"])
        assert target["image_id"] == 2
        assert target["mosaic"]["indices"][0] == 2

    def test_pil_tuple(self) -> None:
        src = [(Image.fromarray(np.full((20, 30, 3), i * 40, np.uint8)), {"boxes": [[1, 1, 9, 9]],
                "labels": [i]}) for i in range(4)]  # fmt: skip
        image, target = MosaicDataset(src, seed=0, output_size=32)[0]
        assert isinstance(image, Image.Image)
        assert image.size == (32, 32)
        assert isinstance(target["boxes"], list)
        assert isinstance(target["labels"], list)

    def test_composes_with_albumentations_after_the_mosaic(self) -> None:
        src = [painted_sample(i, (60, 60), [(5, 5, 25, 25), (35, 35, 55, 55)]) for i in range(6)]
        mosaic = MosaicDataset(
            src, seed=0, output_size=64, layout=MosaicGrid(interpolation=cv2.INTER_NEAREST_EXACT)
        )
        pipeline = A.Compose(
            [A.HorizontalFlip(p=1.0)],
            bbox_params=bbox_params("pascal_voc", ["labels"]),
        )
        train = RandomAugmentWrapper(mosaic, pipeline, seed=0)
        out = train[4]
        assert out["mosaic"]["indices"][0] == 4
        assert len(out["bboxes"]) == len(out["labels"]) > 0
        for (x0, y0, x1, y1), label in zip(out["bboxes"], out["labels"], strict=True):
            inner = out["image"][int(np.ceil(y0)) : int(y1), int(np.ceil(x0)) : int(x1)]
            assert (inner == colour_of(int(label))).all()

    def test_stacked_under_a_wrapper_draws_independently_and_gets_the_epoch(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=32), seed=0, output_size=32)
        train = RandomAugmentWrapper(mosaic, _identity_rng, seed=0)
        assert mosaic.stream != train.stream
        train.set_epoch(4)
        assert mosaic.epoch == 4

    def test_persistent_workers_see_the_epoch_and_sample_keying_ignores_workers(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=32), seed=0, output_size=32,
                               keying="sample")  # fmt: skip
        loader = DataLoader(mosaic, batch_size=None, num_workers=2, persistent_workers=True,
                            collate_fn=_indices)  # fmt: skip
        for epoch in (0, 5):
            mosaic.set_epoch(epoch)
            assert list(loader) == [mosaic[i]["mosaic"]["indices"] for i in range(8)]

    def test_pickles(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=32), seed=0, output_size=32,
                               keying="sample", p=_half_after_two)  # fmt: skip
        clone = pickle.loads(pickle.dumps(mosaic))
        assert clone[1]["mosaic"] == mosaic[1]["mosaic"]

    # -------------------------------------------------------------- errors
    def test_integer_tensor_targets_keep_their_dtype(self) -> None:
        # integer tensor boxes came back float64 (issue 9, item 1), also with no box left
        def tv(i: int) -> tuple[torch.Tensor, dict[str, Any]]:
            return torch.zeros(3, 20, 20, dtype=torch.uint8), {
                "boxes": torch.tensor([[2, 2, 10, 12]], dtype=torch.int32),
                "labels": torch.tensor([i], dtype=torch.int64),
            }

        data = [tv(i) for i in range(4)]
        _, target = MosaicDataset(data, seed=0, output_size=20, p=0.0)[1]
        assert target["boxes"].dtype == torch.int32
        assert target["boxes"].tolist() == [[2, 2, 10, 12]]
        assert target["labels"].dtype == torch.int64
        _, empty = MosaicDataset(
            data, seed=0, output_size=20, p=0.0, targets=Targets(min_area=1e6)
        )[1]
        assert empty["boxes"].dtype == torch.int32
        assert empty["boxes"].shape == (0, 4)
        assert empty["labels"].dtype == torch.int64
        _, scaled = MosaicDataset(data, seed=0, output_size=25, p=0.0)[1]
        # [2.5, 2.5, 12.5, 15.0]: the pixels whose centres it holds, int32 on every draw
        assert scaled["boxes"].dtype == torch.int32
        assert scaled["boxes"].tolist() == [[2, 2, 12, 15]]

    def test_a_target_without_boxes_gets_no_boxes(self) -> None:
        data = [(np.zeros((8, 8, 3), np.uint8), {"image_id": i}) for i in range(3)]
        _, target = MosaicDataset(data, seed=0, output_size=8)[2]
        assert set(target) == {"image_id", "mosaic"}

    def test_adapters_without_the_optional_hooks(self) -> None:
        class Wrapped:
            """Samples as {"pixels": HxWx3} dicts."""

            def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], Any]:
                return {"image": sample["pixels"]}, sample

            def repack(self, data: Any, state: Any) -> Any:
                return {**state, "pixels": data["image"]}

        data = [{"pixels": np.full((8, 8, 3), i, np.uint8), "id": i} for i in range(3)]
        out = MosaicDataset(data, seed=0, output_size=16, adapter=Wrapped())[1]
        assert out["pixels"].shape == (16, 16, 3)
        assert out["id"] == 1
        assert out["mosaic"]["indices"][0] == 1

    def test_not_a_dataset(self) -> None:
        with pytest.raises(TypeError, match="dataset must be a map-style dataset"):
            MosaicDataset("abc", seed=0)

    def test_empty_dataset(self) -> None:
        with pytest.raises(ValueError, match="dataset is empty"):
            MosaicDataset([], seed=0)

    def test_boxes_reaching_outside_are_clipped_or_refused(self) -> None:
        sample = {
            "image": np.zeros((20, 20, 3), np.uint8),
            "bboxes": np.array([[-3.0, 2.0, 8.0, 24.0]]),
            "labels": np.array([1]),
        }
        out = MosaicDataset([sample], seed=0, output_size=20, p=0.0)[0]
        np.testing.assert_allclose(out["bboxes"], [[0, 2, 8, 20]])
        strict = MosaicDataset([sample], seed=0, output_size=20, p=0.0, targets=Targets(clip=False))
        with pytest.raises(SampleError, match="partly outside"):
            strict[0]

    def test_dataset_failures_name_the_partner(self) -> None:
        class Broken(SyntheticDetection):
            def __getitem__(self, index: int) -> Any:
                if index == 3:
                    raise OSError("corrupt file")
                return super().__getitem__(index)

        mosaic = MosaicDataset(
            Broken(4, image_size=16), seed=0, output_size=16, partners=Partners(pool=[3])
        )
        with pytest.raises(SampleError, match=r"dataset\[3\] failed at index 0 .*corrupt file"):
            mosaic[0]

    def test_bad_epoch_probability(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16,
                               p=_broken_schedule)  # fmt: skip
        # the wording is rankaug.checks' since issue 9 made messages uniform
        with pytest.raises(SampleError, match=r"p\(0\) must be a finite number .* got 2.0"):
            mosaic[0]


def _identity_rng(sample: Any, rng: np.random.Generator) -> Any:
    return sample


def _half_after_two(epoch: int) -> float:
    return 1.0 if epoch < 2 else 0.5


def _broken_schedule(epoch: int) -> float:
    return 2.0


def _indices(sample: dict[str, Any]) -> list[int]:
    return list(sample["mosaic"]["indices"])


class TestPlainFlip:
    def _data(self) -> list[dict[str, Any]]:
        out = []
        for i in range(4):
            sample = painted_sample(i, (30 + 5 * i, 40), [(4, 4, 20, 20), (24, 10, 38, 26)])
            boxes = sample["bboxes"].astype(np.float64)
            sample["segments"] = [np.array([[x0, y0], [x1, y0], [x0, y1]])
                                  for x0, y0, x1, y1 in boxes.tolist()]  # fmt: skip
            sample["keypoints"] = np.array([[6.0, 8.0], [16.0, 8.0], [30.0, 14.0], [34.0, 20.0]])
            sample["kp"] = np.array([0, 1, 0, 1])
            out.append(sample)
        return out

    @pytest.mark.parametrize("p", [1.0, 0.0])  # a mosaic, a letterbox
    def test_a_flipped_output_is_the_unflipped_one_mirrored(self, p: float) -> None:
        data = self._data()
        kwargs: dict[str, Any] = {"seed": 3, "output_size": (48, 56), "p": p, "keying": "sample",
                                  "targets": Targets(keypoint_fields=("kp",))}  # fmt: skip
        nearest = MosaicGrid(interpolation=cv2.INTER_NEAREST_EXACT)
        flipped = MosaicDataset(
            data, layout=replace(nearest, flip=1.0, flip_index=(1, 0)), **kwargs
        )
        plain = MosaicDataset(data, layout=nearest, **kwargs)
        for index in range(4):
            out, ref = flipped[index], plain[index]
            assert out["mosaic"]["flip"] is True
            assert "flip" not in ref["mosaic"]
            for key in ("image", "mask", "masks"):  # pixel for pixel
                np.testing.assert_array_equal(out[key], ref[key][..., ::-1, :] if key == "image"
                                              else ref[key][..., ::-1])  # fmt: skip
            w = 56
            np.testing.assert_array_equal(out["labels"], ref["labels"])
            mirrored = np.stack([w - ref["bboxes"][:, 2], ref["bboxes"][:, 1],
                                 w - ref["bboxes"][:, 0], ref["bboxes"][:, 3]], 1)  # fmt: skip
            np.testing.assert_allclose(out["bboxes"], mirrored, atol=1e-4)
            for a, b in zip(out["segments"], ref["segments"], strict=True):  # the fill's grid
                np.testing.assert_allclose(a, b * (-1, 1) + (w - 1 / 16, 0), atol=1e-4)
            # keypoints: each pair swapped, then mirrored; the fields stay with the rows,
            # so the joint field (kp) of each point is the other joint's
            found = Counter(zip(map(tuple, np.round(out["keypoints"], 6).tolist()),
                                out["kp"].tolist(), strict=True))  # fmt: skip
            moved = np.round(ref["keypoints"] * (-1, 1) + (w, 0), 6).tolist()
            swapped = [1 - kp for kp in ref["kp"].tolist()]
            assert found == Counter(zip(map(tuple, moved), swapped, strict=True))
            assert sum(found.values()) >= 1

    def test_flip_index_swaps_each_group(self) -> None:
        data = self._data()
        kwargs: dict[str, Any] = {"seed": 0, "output_size": (48, 56), "p": 0.0,
                                  "targets": Targets(keypoint_fields=("kp",))}  # fmt: skip
        out = MosaicDataset(data, layout=MosaicGrid(flip=1.0, flip_index=(1, 0)), **kwargs)[2]
        ref = MosaicDataset(data, **kwargs)[2]  # a letterbox shows them all
        swapped = ref["keypoints"][[1, 0, 3, 2]] * (-1, 1) + (56, 0)
        np.testing.assert_allclose(out["keypoints"], swapped, atol=1e-6)
        np.testing.assert_array_equal(out["kp"], [0, 1, 0, 1])  # the rows' joints

    def test_half_the_samples_flip_keyed_recorded_and_replayed(self) -> None:
        data = self._data()
        layout = MosaicGrid(flip=0.5, flip_index=(1, 0))
        kp = Targets(keypoint_fields=("kp",))
        mosaic = MosaicDataset(data, seed=1, output_size=48, layout=layout, p=0.7, targets=kp)
        outputs = [mosaic[i % 4] for i in range(24)]
        flips = [out["mosaic"]["flip"] for out in outputs]
        assert 0 < sum(flips) < len(flips)
        for out in outputs:
            again = mosaic.replay(out["mosaic"])
            for key in ("image", "bboxes", "labels", "masks", "keypoints"):
                assert np.array_equal(again[key], out[key]), key
            assert again["mosaic"] == out["mosaic"]

    @pytest.mark.parametrize("warped", [False, True])
    def test_a_flip_of_keypoints_without_flip_index_warns_once(self, warped: bool) -> None:
        # left and right joints traded places without a word (ultralytics turns its
        # flip off, with a warning, where pose data has no flip_idx)
        options: dict[str, Any] = (
            {"affine": MosaicAffine(degrees=10.0, flip=0.5)} if warped
            else {"layout": MosaicGrid(flip=0.5)}
        )  # fmt: skip
        bare = [{k: v for k, v in s.items() if k not in ("keypoints", "kp")} for s in self._data()]
        quiet = MosaicDataset(bare, seed=0, output_size=48, **options)
        quiet[0]  # no keypoints: no warning (warnings are errors here)
        kp = Targets(keypoint_fields=("kp",))
        mosaic = MosaicDataset(self._data(), seed=0, output_size=48, targets=kp, **options)
        with pytest.warns(RankaugWarning, match=r"mirrors keypoints without flip_index") as seen:
            [mosaic[i] for i in range(3)]
        assert len(seen) == 1
        assert "flip_index=(0,)" in str(seen[0].message)
        indexed = {k: replace(v, flip_index=(1, 0)) for k, v in options.items()}
        MosaicDataset(self._data(), seed=0, output_size=48, targets=kp, **indexed)[0]  # no warning

    def test_the_flip_belongs_to_the_affine_with_one(self) -> None:
        with pytest.raises(ValueError, match=r"with affine= the flip is the affine's"):
            MosaicDataset(self._data(), seed=0, layout=MosaicGrid(flip=0.5), affine=MosaicAffine())
        with pytest.raises(ValueError, match=r"flip must be a finite number >= 0.0 and <= 1.0"):
            MosaicDataset(self._data(), seed=0, layout=MosaicGrid(flip=2.0))
        with pytest.raises(ValueError, match=r"flip_index must be a permutation"):
            MosaicDataset(self._data(), seed=0, layout=MosaicGrid(flip=0.5, flip_index=(0, 2)))


COLOR_CASES = [  # the plain mosaic (flipped or not), a letterbox, the fused affine
    {"p": 1.0},
    {"p": 1.0, "layout": MosaicGrid(flip=1.0)},
    {"p": 0.0},
    {"p": 1.0, "affine": MosaicAffine(degrees=10, flip=0.5)},
    {"p": 0.0, "affine": MosaicAffine(scale=0.3)},
]


class TestMosaicColor:
    """``color=HSVJitter(...)``: applied to each output last, drawn last, recorded."""

    @pytest.mark.parametrize("kwargs", COLOR_CASES)
    def test_the_output_is_the_uncoloured_one_jittered(self, kwargs: dict[str, Any]) -> None:
        data = SyntheticDetection(8, image_size=48)
        jitter = HSVJitter(0.5, 0.7, 0.4)
        coloured = MosaicDataset(data, seed=2, output_size=56, keying="sample",
                                 color=jitter, **kwargs)  # fmt: skip
        plain = MosaicDataset(data, seed=2, output_size=56, keying="sample", **kwargs)
        for index in range(8):
            out, ref = coloured[index], plain[index]
            record = out["mosaic"].pop("color")
            assert "color=HSVJitter(" in out["mosaic"].pop("settings")
            assert "color=None" in ref["mosaic"].pop("settings")
            assert out["mosaic"] == ref["mosaic"]  # the same draws before the colour's
            gains = record["gains"]
            assert all(abs(r) <= g for r, g in zip(gains, (0.5, 0.7, 0.4), strict=True))
            np.testing.assert_array_equal(out["image"], jitter.replay(ref["image"], record))
            for key in ("bboxes", "labels", "mask"):
                np.testing.assert_array_equal(out[key], ref[key])

    @pytest.mark.parametrize("kwargs", COLOR_CASES[::3])
    def test_keyed_differs_across_keys_and_replays_bit_for_bit(
        self, kwargs: dict[str, Any]
    ) -> None:
        data = SyntheticDetection(8, image_size=48)
        mosaic = MosaicDataset(data, seed=0, output_size=48, color=HSVJitter(), **kwargs)
        outputs = [mosaic[i % 8] for i in range(12)]  # stream keying: never the same key
        assert len({tuple(out["mosaic"]["color"]["gains"]) for out in outputs}) == 12
        for out in outputs:
            again = mosaic.replay(out["mosaic"])
            np.testing.assert_array_equal(again["image"], out["image"])
            assert again["mosaic"] == out["mosaic"]

    def test_grey_fill_becomes_the_value_table_of_its_draw(self) -> None:
        # a constant-colour check: the uncovered fill (114, grey) stays grey, value moved
        data = [painted_sample(0, (10, 20), [])]  # black, letterboxed to 30 x 60
        mosaic = MosaicDataset(data, seed=0, output_size=60, p=0.0, color=HSVJitter())
        out = mosaic[0]
        value = out["mosaic"]["color"]["gains"][2]
        expected = min(255, int(114 * (value + 1)))
        assert expected != 114
        assert (out["image"][:15] == expected).all()  # above the tile
        assert (out["image"][15:45] == 0).all()  # black stays black
        assert (out["image"][45:] == expected).all()

    def test_streams_take_color(self) -> None:
        data = SyntheticDetection(6, image_size=32)

        class Stream(torch.utils.data.IterableDataset[dict[str, Any]]):
            def __iter__(self) -> Any:
                return ({**data[i], "id": i} for i in range(6))

        streamed: Any = MosaicDataset(Stream(), seed=0, output_size=40, buffer_size=3,
                                      sample_id="id", color=HSVJitter())  # fmt: skip
        outputs = list(streamed)
        assert len(outputs) == 6
        assert len({tuple(out["mosaic"]["color"]["gains"]) for out in outputs}) == 6

    def test_color_and_its_images_are_checked(self) -> None:
        data = SyntheticDetection(4, image_size=32)
        with pytest.raises(TypeError, match=r"color must be None or a rankaug.HSVJitter, got 0.5"):
            MosaicDataset(data, seed=0, color=0.5)  # type: ignore[arg-type]
        floats = [{**data[i], "image": data[i]["image"].astype(np.float32)} for i in range(4)]
        layout = MosaicGrid(fill=114)  # floats in [0, 255]: the default fill is refused
        mosaic = MosaicDataset(floats, seed=0, output_size=32, color=HSVJitter(), layout=layout)
        with pytest.raises(TypeError, match=r"^dataset\[0\] image, which color= jitters, must "
                           r"have dtype uint8"):  # fmt: skip
            mosaic[0]  # the main image, before the mosaic is built
