from __future__ import annotations

import dataclasses
import hashlib
import math
import pickle
from typing import Any

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.data import DataLoader

from rankaug import MosaicGrid, Targets
from rankaug.datasets import SyntheticDetection
from rankaug.errors import SampleError
from rankaug.mosaic import MosaicAffine, MosaicDataset, paint
from rankaug.mosaic.affine import AffineDraw, affine_matrix, draw_affine, is_axis_aligned
from rankaug.polygons import fill
from tests.mosaic.painted import grouped, painted_sample

AFFINE = st.builds(
    MosaicAffine,
    degrees=st.floats(0.0, 180.0),
    translate=st.floats(0.0, 0.5),
    scale=st.floats(0.0, 0.99),
    shear=st.floats(0.0, 44.0),
)


class TestMosaicAffine:
    def test_defaults_are_ultralytics_hyperparameters(self) -> None:
        # ultralytics 8.x default.yaml: degrees 0.0, translate 0.1, scale 0.5, shear 0.0
        # (and no flip: rankaug's flip is opt-in, unlike ultralytics' fliplr 0.5)
        assert dataclasses.astuple(MosaicAffine()) == (0.0, 0.1, 0.5, 0.0, 0.0, None)

    def test_numbers_are_kept_as_floats_and_frozen(self) -> None:
        affine = MosaicAffine(degrees=10, translate=np.float32(0.25), scale=0, shear=2, flip=1,
                              flip_index=np.array([1, 0, 2]))  # fmt: skip
        assert dataclasses.astuple(affine) == (10.0, 0.25, 0.0, 2.0, 1.0, (1, 0, 2))
        assert all(type(v) is float for v in dataclasses.astuple(affine)[:5])
        assert all(type(v) is int for v in affine.flip_index or ())
        with pytest.raises(dataclasses.FrozenInstanceError):
            affine.degrees = 5.0  # type: ignore[misc]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"degrees": -1}, ValueError, r"degrees must be a finite number >= 0.0 and <= 180.0"),
            ({"degrees": 181}, ValueError, r"degrees must be .* <= 180.0, got 181"),
            ({"degrees": True}, TypeError, "degrees must be a finite number .* of type bool"),
            ({"degrees": "10"}, TypeError, "degrees must be a finite number .* of type str"),
            ({"translate": 0.6}, ValueError, r"translate must be .* <= 0.5, got 0.6"),
            ({"translate": float("nan")}, ValueError, "translate must be a finite number"),
            ({"scale": 1.0}, ValueError, r"scale must be a finite number >= 0.0 and < 1.0"),
            ({"scale": -0.1}, ValueError, "scale must be a finite number >= 0.0"),
            ({"shear": 45.0}, ValueError, r"shear must be a finite number >= 0.0 and < 45.0"),
            ({"shear": None}, TypeError, "shear must be a finite number"),
            ({"flip": 1.5}, ValueError, r"flip must be a finite number >= 0.0 and <= 1.0"),
            ({"flip": "yes"}, TypeError, "flip must be a finite number .* of type str"),
            ({"flip_index": (0, 0)}, ValueError, r"flip_index must be a permutation of 0 \.\. 1"),
            ({"flip_index": (1, 2)}, ValueError, r"flip_index must be a permutation"),
            ({"flip_index": ()}, ValueError, r"flip_index must be a non-empty sequence"),
            ({"flip_index": "01"}, TypeError, r"flip_index must be a non-empty sequence of ints"),
            ({"flip_index": (0, 1.0)}, TypeError, r"flip_index\[1\] must be an int"),
        ],
    )
    def test_bad_values_are_named(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            MosaicAffine(**kwargs)


class TestDrawAffine:
    @given(affine=AFFINE, seed=st.integers(0, 2**32 - 1))
    def test_one_block_of_six_uniforms_in_ultralytics_order(
        self, affine: MosaicAffine, seed: int
    ) -> None:
        rng = np.random.default_rng(seed)
        draw = draw_affine(affine, rng)
        reference = np.random.default_rng(seed)
        v = reference.random(6).tolist()
        d, t, s, h = affine.degrees, affine.translate, affine.scale, affine.shear
        assert draw == AffineDraw(
            -d + 2 * d * v[0], 1 - s + 2 * s * v[1], -h + 2 * h * v[2], -h + 2 * h * v[3],
            0.5 - t + 2 * t * v[4], 0.5 - t + 2 * t * v[5],
        )  # fmt: skip
        assert rng.random() == reference.random()  # nothing more was drawn
        assert -d <= draw.angle <= d
        assert 1 - s <= draw.scale <= 1 + s
        assert 0.5 - t <= draw.translate_x <= 0.5 + t

    @given(flip=st.floats(0.01, 1.0), seed=st.integers(0, 2**32 - 1))
    def test_with_a_flip_a_seventh_uniform_decides_it(self, flip: float, seed: int) -> None:
        rng = np.random.default_rng(seed)
        draw = draw_affine(MosaicAffine(degrees=5.0, flip=flip), rng)
        reference = np.random.default_rng(seed)
        v = reference.random(7).tolist()
        without = draw_affine(MosaicAffine(degrees=5.0), np.random.default_rng(seed))
        assert draw == without._replace(flip=v[6] < flip)  # the six draws unchanged
        assert rng.random() == reference.random()  # nothing more was drawn

    def test_no_rotation_and_no_shear_are_exact_zeros(self) -> None:
        draw = draw_affine(MosaicAffine(), np.random.default_rng(3))
        assert (draw.angle, draw.shear_x, draw.shear_y) == (0.0, 0.0, 0.0)
        assert math.copysign(1.0, draw.angle) == 1.0  # not -0.0


class TestAffineMatrix:
    @given(draw=st.builds(AffineDraw, st.floats(-180, 180), st.floats(0.01, 2.0),
                          st.floats(-44, 44), st.floats(-44, 44), st.floats(0, 1),
                          st.floats(0, 1), flip=st.just(False)),
           canvas=st.tuples(st.integers(1, 2000), st.integers(1, 2000)),
           output=st.tuples(st.integers(1, 1000), st.integers(1, 1000)))  # fmt: skip
    def test_is_ultralytics_t_s_r_c(
        self, draw: AffineDraw, canvas: tuple[int, int], output: tuple[int, int]
    ) -> None:
        """ultralytics' RandomPerspective._compute_affine_matrix (perspective 0), in float64."""
        c = np.eye(3)
        c[0, 2], c[1, 2] = -canvas[1] / 2, -canvas[0] / 2
        r = np.eye(3)
        r[:2] = cv2.getRotationMatrix2D(angle=draw.angle, center=(0, 0), scale=draw.scale)
        s = np.eye(3)
        s[0, 1] = math.tan(draw.shear_x * math.pi / 180)
        s[1, 0] = math.tan(draw.shear_y * math.pi / 180)
        t = np.eye(3)
        t[0, 2], t[1, 2] = draw.translate_x * output[1], draw.translate_y * output[0]
        expected = (t @ s @ r @ c)[:2]
        got = np.array(affine_matrix(draw, canvas, output))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)

    @given(draw=st.builds(AffineDraw, st.floats(-180, 180), st.floats(0.01, 2.0),
                          st.floats(-44, 44), st.floats(-44, 44), st.floats(0, 1),
                          st.floats(0, 1), flip=st.just(False)),
           output=st.tuples(st.integers(1, 1000), st.integers(1, 1000)))  # fmt: skip
    def test_a_flip_is_f_after_m(self, draw: AffineDraw, output: tuple[int, int]) -> None:
        m = np.vstack((affine_matrix(draw, (300, 200), output), (0, 0, 1)))
        f = np.array([[-1.0, 0.0, output[1]], [0.0, 1.0, 0.0], [0, 0, 1]])  # x -> w - x
        flipped = affine_matrix(draw._replace(flip=True), (300, 200), output)
        np.testing.assert_allclose(flipped, (f @ m)[:2], rtol=1e-12, atol=1e-9)
        assert not is_axis_aligned(flipped)

    def test_axis_aligned_maps_the_canvas_centre_to_the_drawn_point(self) -> None:
        draw = AffineDraw(0.0, 0.75, 0.0, 0.0, 0.4, 0.55)
        matrix = affine_matrix(draw, (200, 160), (100, 80))
        assert is_axis_aligned(matrix)
        (a, b, c), (d, e, f) = matrix
        assert (a, b, d, e) == (0.75, 0.0, 0.0, 0.75)
        assert (a * 80 + c, e * 100 + f) == pytest.approx((0.4 * 80, 0.55 * 100))
        assert not is_axis_aligned(affine_matrix(draw._replace(angle=5.0), (200, 160), (100, 80)))
        assert not is_axis_aligned(affine_matrix(draw._replace(shear_y=1.0), (200, 160), (100, 80)))
        # half a turn has exact zeros nowhere off the diagonal, and flips: a warp
        assert not is_axis_aligned(affine_matrix(draw._replace(angle=180.0), (20, 16), (10, 8)))


class TestMosaicDatasetWithAffine:
    """``MosaicDataset(..., affine=MosaicAffine(...))`` end to end."""

    # Digests of outputs made before the affine existed (commit 2965ee0): affine=None
    # must keep every output, bit for bit. They are cv2.resize's pixels: from OpenCV 5.1
    # linear uint8 windows are warped instead (paint.resize_into; test_paint compares
    # the two), so the test paints by resize on every version.
    GOLDEN: Any = (
        ({}, ["428655f4bb8844cc", "ffb1c70237890459", "6cade33d817c68e6", "fabef0cc33271162",
              "be07535802151e7c", "d17364cfe02a5ee1"]),
        ({"grid": (3, 2), "scale_range": (0.5, 1.5), "p": 0.5},
         ["e1a8b0c8a984dd4a", "72c0058b266ead26", "64be69794852d40e", "5b64cd74b77059f7",
          "ffac95fd6fc78aa2", "dee98bf32bb48170"]),
        ({"canvas": "yolo"}, ["15da45c2f6e7a603", "557baed72054522b", "11afd0ded5c04f01",
                              "adce504e91d18d02", "c64f5d405c2248b1", "4d8101039cf58778"]),
    )  # fmt: skip

    @pytest.mark.parametrize(("kwargs", "digests"), GOLDEN)
    def test_without_an_affine_outputs_are_unchanged(
        self, kwargs: dict[str, Any], digests: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(paint, "_RESIZE_BY_WARP", False)
        data = [painted_sample(i, (30 + 7 * i, 50 - 3 * i), [(2, 3, 15, 20), (18, 22, 27, 28)])
                for i in range(6)]  # fmt: skip
        mosaic = MosaicDataset(
            data, seed=7, output_size=(48, 40), keying="sample", **grouped(kwargs)
        )
        outputs = [mosaic[i] for i in range(6)]
        assert [_digest(out) for out in outputs] == digests
        assert all("affine" not in out["mosaic"] for out in outputs)

    def test_the_draws_follow_the_documented_order(self) -> None:
        """Golden values: a change in the order (or the number) of the draws moves them."""
        mosaic = MosaicDataset(
            SyntheticDetection(8, image_size=40), seed=11, output_size=48, keying="sample",
            affine=MosaicAffine(degrees=10.0, translate=0.2, scale=0.3, shear=2.0),
        )  # fmt: skip
        record = mosaic[3]["mosaic"]
        plain = MosaicDataset(
            SyntheticDetection(8, image_size=40),
            seed=11,
            output_size=48,
            keying="sample",
            layout=MosaicGrid(canvas="yolo"),
        )[3]["mosaic"]
        for key in ("indices", "cells", "center", "splits_x", "splits_y", "scales", "src", "dst"):
            assert record[key] == plain[key]  # the mosaic's own draws come first, unchanged
        affine = record["affine"]
        assert record["indices"] == [3, 1, 1, 6]
        assert affine["angle"] == pytest.approx(5.829414471220179, abs=1e-12)
        assert affine["scale"] == pytest.approx(1.0627898629086867, abs=1e-12)
        assert affine["shear"] == pytest.approx((0.4981408492824455, -0.970702430138485))
        assert affine["translate"] == pytest.approx((0.347940733173897, 0.550475023576348))
        np.testing.assert_allclose(
            affine["matrix"],
            [[1.0563553412801738, 0.11713696898013612, -39.62647570014782],
             [-0.12585875258834858, 1.0554648907896778, -18.198293501999096]],
            rtol=1e-12,
        )  # fmt: skip
        assert len(affine["maps"]) == 4

    @pytest.mark.parametrize(
        "affine",
        [MosaicAffine(), MosaicAffine(degrees=15.0, shear=3.0, scale=0.3),
         MosaicAffine(flip=0.5, flip_index=(0,)),
         MosaicAffine(degrees=15.0, flip=0.5, flip_index=(0,))],
    )  # fmt: skip
    def test_replay_rebuilds_every_target_bit_for_bit(self, affine: MosaicAffine) -> None:
        data = [
            {**painted_sample(i, (40 + 3 * i, 50), [(4, 4, 20, 20), (25, 22, 45, 38)]),
             "keypoints": np.array([[10.0, 10.0], [30.0, 30.0]])}
            for i in range(6)
        ]  # fmt: skip
        mosaic = MosaicDataset(data, seed=3, output_size=56, affine=affine, p=0.6)
        outputs = [mosaic[i % 6] for i in range(14)]  # stream keying: the stream moves on
        assert {out["mosaic"]["applied"] for out in outputs} == {True, False}
        for out in outputs:
            again = mosaic.replay(out["mosaic"])
            assert again["mosaic"] == out["mosaic"]
            for key in ("image", "bboxes", "labels", "mask", "masks", "keypoints"):
                assert again[key].dtype == out[key].dtype
                assert np.array_equal(again[key], out[key]), key

    def test_a_letterbox_with_the_identity_affine_is_the_plain_letterbox(self) -> None:
        data = [painted_sample(i, (30, 50), [(4, 4, 20, 20)]) for i in range(3)]
        identity = MosaicAffine(degrees=0.0, translate=0.0, scale=0.0, shear=0.0)
        fused = MosaicDataset(data, seed=0, output_size=(40, 64), p=0.0, affine=identity)[1]
        plain = MosaicDataset(data, seed=0, output_size=(40, 64), p=0.0)[1]
        for key in ("image", "bboxes", "labels", "mask", "masks"):
            assert np.array_equal(fused[key], plain[key]), key
        assert fused["mosaic"]["affine"]["matrix"] == ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))

    def test_a_letterbox_turns_about_the_output_centre(self) -> None:
        data = [painted_sample(i, (30, 50), [(4, 4, 20, 20)]) for i in range(3)]
        affine = MosaicAffine(degrees=30.0, translate=0.2, scale=0.4, shear=5.0)
        out = MosaicDataset(data, seed=0, output_size=(40, 64), p=0.0, affine=affine)[1]
        record = out["mosaic"]
        (a, b, c), (d, e, f) = record["affine"]["matrix"]
        fx, fy = record["affine"]["translate"]
        # C takes the letterboxed output's centre to the origin, T takes it to (fx, fy)
        assert (a * 32 + b * 20 + c, d * 32 + e * 20 + f) == pytest.approx((fx * 64, fy * 40))
        assert record["dst"] == [(0, 1, 64, 39)]  # letterboxed on the output, not the canvas

    @pytest.mark.parametrize(
        ("shape", "dtype", "interpolation"),
        [((30, 40), np.uint8, cv2.INTER_LINEAR), ((30, 40, 1), np.uint8, cv2.INTER_CUBIC),
         ((30, 40, 5), np.uint8, cv2.INTER_CUBIC), ((30, 40, 7), np.uint16, cv2.INTER_LANCZOS4),
         ((30, 40, 3), np.float32, cv2.INTER_LINEAR), ((30, 40, 2), np.int16, cv2.INTER_AREA),
         ((30, 40, 3), np.float64, cv2.INTER_NEAREST)],
    )  # fmt: skip
    def test_grayscale_multichannel_and_float_images_turn(
        self, shape: tuple[int, ...], dtype: Any, interpolation: int
    ) -> None:
        src = [{"image": np.full(shape, 7, dtype)} for _ in range(4)]
        mosaic = MosaicDataset(
            src,
            seed=0,
            output_size=24,
            layout=MosaicGrid(fill=3, interpolation=interpolation),
            affine=MosaicAffine(degrees=20.0, shear=4.0),
        )
        out = mosaic[0]["image"]
        assert out.shape == ((24, 24) if len(shape) == 2 else (24, 24, shape[2]))
        assert out.dtype == dtype
        assert set(np.unique(out).tolist()) == {3, 7}

    @pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.float16])
    def test_masks_of_any_dtype_turn_with_their_pixels(self, dtype: Any) -> None:
        data = []
        for i in range(4):
            sample = painted_sample(i, (30, 30), [(5, 5, 25, 25)])
            data.append({**sample, "mask": sample["mask"].astype(dtype),
                         "masks": sample["masks"].astype(bool)})  # fmt: skip
        mosaic = MosaicDataset(data, seed=1, output_size=32, layout=MosaicGrid(fill_mask=0),
                               affine=MosaicAffine(degrees=25.0), keying="sample")  # fmt: skip
        out = mosaic[2]
        assert out["mask"].dtype == dtype
        assert out["masks"].dtype == bool
        labels = set(out["labels"].tolist())
        assert set(np.unique(out["mask"]).astype(int).tolist()) <= labels | {0}
        for label, instance in zip(out["labels"].tolist(), out["masks"], strict=True):
            assert (out["mask"][instance] == label).all()

    def test_workers_and_pickles_give_the_main_process_samples(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=32), seed=0, output_size=32,
                               keying="sample", affine=MosaicAffine(degrees=10.0))  # fmt: skip
        clone = pickle.loads(pickle.dumps(mosaic))
        assert np.array_equal(clone[1]["image"], mosaic[1]["image"])
        loader = DataLoader(mosaic, batch_size=None, num_workers=2, collate_fn=_image)
        assert all(np.array_equal(a, mosaic[i]["image"]) for i, a in enumerate(loader))

    def test_torchvision_tuple(self) -> None:
        def tv(i: int) -> tuple[torch.Tensor, dict[str, Any]]:
            sample = painted_sample(i, (30, 40), [(2, 3, 20, 25)])
            image = torch.from_numpy(sample["image"]).permute(2, 0, 1).contiguous()
            return image, {"boxes": torch.from_numpy(sample["bboxes"]),
                           "labels": torch.from_numpy(sample["labels"])}  # fmt: skip

        image, target = MosaicDataset([tv(i) for i in range(4)], seed=0, output_size=48,
                                      affine=MosaicAffine(degrees=10.0))[2]  # fmt: skip
        assert image.shape == (3, 48, 48)
        assert target["boxes"].dtype == torch.float32
        assert len(target["boxes"]) == len(target["labels"])
        assert "affine" in target["mosaic"]

    def test_a_flip_mirrors_everything_and_swaps_keypoints_by_flip_index(self) -> None:
        # one 40x20 sample letterboxed onto 40x20 (scale 1, no move): only the flip acts
        image = np.zeros((20, 40, 3), np.uint8)
        image[:, :10] = (200, 0, 0)  # a red band on the left
        mask = np.zeros((20, 40), np.uint8)
        mask[:, :10] = 1
        triangle = np.array([[2.0, 2.0], [12.0, 2.0], [2.0, 12.0]])
        sample = {
            "image": image,
            "bboxes": np.array([[2.0, 2.0, 12.0, 12.0]]),
            "labels": np.array([5]),
            "mask": mask,
            "masks": mask[None],
            "segments": [triangle],
            "keypoints": np.array([[4.0, 6.0], [8.0, 6.0], [6.0, 9.0]]),
            "side": np.array([0, 1, 2]),
        }  # left eye, right eye, nose: the box's
        affine = MosaicAffine(translate=0.0, scale=0.0, flip=1.0, flip_index=(1, 0, 2))
        out = MosaicDataset(
            [sample],
            seed=0,
            output_size=(20, 40),
            p=0.0,
            affine=affine,
            targets=Targets(keypoint_fields=("side",)),
            layout=MosaicGrid(interpolation=cv2.INTER_NEAREST_EXACT),
        )[0]
        assert out["mosaic"]["affine"]["flip"] is True
        np.testing.assert_array_equal(out["image"], image[:, ::-1])  # pixel for pixel
        np.testing.assert_array_equal(out["mask"], mask[:, ::-1])
        np.testing.assert_array_equal(out["masks"], mask[None, :, ::-1])
        # the triangle's pixels are x and y 2 to 12 (rankaug.polygons.fill): its box
        # [2, 2, 13, 13], mirrored
        np.testing.assert_allclose(out["bboxes"], [[27.0, 2.0, 38.0, 13.0]], atol=1e-9)
        # the triangle mirrored on the fill's grid (x -> 40 - 1/16 - x): its pixels are
        # the mirrored pixels, its box the box (x -> 40 - x drew the columns 28 to 38)
        (polygon,) = out["segments"]
        np.testing.assert_allclose(polygon, [[37.9375, 2], [27.9375, 2], [37.9375, 12]], atol=1e-9)
        whole = (0, 20, 0, 40)
        np.testing.assert_array_equal(fill(polygon, whole), fill(triangle, whole)[:, ::-1])
        # the group of three: the one that was the right eye is the left eye now
        expected = [[32.0, 6.0], [36.0, 6.0], [34.0, 9.0]]
        np.testing.assert_allclose(out["keypoints"], expected, atol=1e-9)
        # the fields stay with the rows: row 0 is the left eye again
        np.testing.assert_array_equal(out["side"], [0, 1, 2])

    def test_keypoints_that_are_not_whole_groups_are_refused(self) -> None:
        sample = {"image": np.zeros((20, 40, 3), np.uint8), "bboxes": np.zeros((0, 4)),
                  "labels": np.zeros(0, np.int64), "keypoints": np.ones((4, 2))}  # fmt: skip
        affine = MosaicAffine(flip=1.0, flip_index=(1, 0, 2))
        mosaic = MosaicDataset([sample], seed=0, output_size=32, p=0.0, affine=affine)
        with pytest.raises(SampleError, match=r"dataset\[0\] keypoints has 4 points, not whole"):
            mosaic[0]

    def test_a_flip_half_the_time_is_keyed_and_recorded(self) -> None:
        data = [painted_sample(i, (30, 40), [(4, 4, 20, 20)]) for i in range(4)]
        mosaic = MosaicDataset(data, seed=5, output_size=32, keying="sample",
                               affine=MosaicAffine(degrees=5.0, flip=0.5))  # fmt: skip
        records = [mosaic[i % 4]["mosaic"] for i in range(40)]
        flips = [r["affine"]["flip"] for r in records]
        assert 0 < sum(flips) < len(flips)
        for record, flip in zip(records, flips, strict=True):
            (a, _, _), _ = record["affine"]["matrix"]  # a flip turns the x axis round
            angle = math.radians(record["affine"]["angle"])
            assert (a < 0) == flip
            assert a == pytest.approx(
                (-1 if flip else 1) * math.cos(angle) * record["affine"]["scale"]
            )
        again = [mosaic[i % 4]["mosaic"]["affine"]["flip"] for i in range(40)]
        assert again == flips  # sample keying: the same flips


def _digest(out: dict[str, Any]) -> str:
    digest = hashlib.sha256()
    for key in sorted(out):
        value = out[key]
        if isinstance(value, np.ndarray):
            digest.update(key.encode())
            digest.update(value.tobytes())
            digest.update(str(value.dtype).encode())
        elif key == "mosaic":
            # the draws and windows; the settings (new since the goldens) are no draw
            drawn = [item for item in sorted(value.items()) if item[0] != "settings"]
            digest.update(repr(drawn).encode())
    return digest.hexdigest()[:16]


def _image(sample: dict[str, Any]) -> np.ndarray:
    image: np.ndarray = sample["image"]
    return image
