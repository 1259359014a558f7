from __future__ import annotations

import concurrent.futures
import dataclasses
import pickle
from typing import Any

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import rankaug._hsv_planes as planes_module
import rankaug.hsv as hsv_module
from rankaug import HSVJitter, RandomAugmentWrapper, SampleError
from rankaug.hsv import HSVDraw, hsv_tables

GAIN = st.floats(0.0, 1.0)


def ultralytics_random_hsv(
    bgr: np.ndarray, r: np.ndarray, gains: tuple[float, float, float] = (1.0, 1.0, 1.0)
) -> np.ndarray:
    """ultralytics 8.4.190 ``RandomHSV.apply_image`` with drawn gains ``r``, re-implemented.

    (ultralytics is not installed in the project's venv.) Statement for statement: the
    all-zero guard, the tables on float64 ``x``, the single 3-channel ``cv2.LUT``, BGR.
    """
    img = bgr.copy()
    if not any(gains):
        return img
    dtype = img.dtype
    x = np.arange(0, 256, dtype=r.dtype)
    lut_hue = ((x + r[0] * 180) % 180).astype(dtype)
    lut_sat = np.clip(x * (r[1] + 1), 0, 255).astype(dtype)
    lut_val = np.clip(x * (r[2] + 1), 0, 255).astype(dtype)
    lut_sat[0] = 0
    im_hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    lut = np.stack((lut_hue, lut_sat, lut_val), -1).reshape(1, 256, 3)
    cv2.cvtColor(cv2.LUT(im_hsv, lut), cv2.COLOR_HSV2BGR, dst=img)
    return img


def photo(seed: int, h: int = 37, w: int = 53) -> np.ndarray:
    """A smooth random picture with noise: every hue, saturation and value range."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    smooth = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC).astype(np.int64)
    return np.clip(smooth + rng.integers(-20, 21, smooth.shape), 0, 255).astype(np.uint8)


def ultralytics_draw(gains: tuple[float, float, float], seed: int) -> np.ndarray:
    """ultralytics' gain draw, ``np.random.uniform(-1, 1, 3) * gains``, from a Generator."""
    return np.random.default_rng(seed).uniform(-1, 1, 3) * list(gains)


class TestHSVJitter:
    def test_defaults_are_ultralytics_hyperparameters(self) -> None:
        # ultralytics default.yaml: hsv_h 0.015, hsv_s 0.7, hsv_v 0.4
        assert dataclasses.astuple(HSVJitter()) == (0.015, 0.7, 0.4, "rgb", "hsv")
        jitter = HSVJitter(np.float32(0.5), 1, 0)
        assert all(type(v) is float for v in dataclasses.astuple(jitter)[:3])
        with pytest.raises(dataclasses.FrozenInstanceError):
            jitter.hgain = 0.1  # type: ignore[misc]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"hgain": -0.1}, ValueError, r"hgain must be a finite number >= 0.0 and <= 1.0"),
            ({"sgain": 1.5}, ValueError, r"sgain must be .* <= 1.0, got 1.5"),
            ({"vgain": float("nan")}, ValueError, "vgain must be a finite number"),
            ({"vgain": True}, TypeError, "vgain must be a finite number .* of type bool"),
            ({"hgain": "0.1"}, TypeError, "hgain must be a finite number .* of type str"),
            ({"channel_order": "hsv"}, ValueError, r"channel_order must be one of 'rgb', 'bgr'"),
            ({"channel_order": 1}, TypeError, r"channel_order must be one of .* of type int"),
            ({"record_key": "image"}, ValueError, r"record_key must be None or a key name other"),
            ({"record_key": ""}, ValueError, r"record_key must be None or a key name .*, got ''"),
            ({"record_key": 1}, TypeError, r"record_key must be None or a key name .* type int"),
        ],
    )
    def test_arguments_are_checked(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            HSVJitter(**kwargs)

    def test_record_key_is_a_field(self) -> None:
        jitter = HSVJitter(record_key="hsv_2")
        assert jitter.record_key == "hsv_2"
        assert HSVJitter().record_key == "hsv"
        assert jitter == HSVJitter(record_key="hsv_2") != HSVJitter()
        assert hash(jitter) == hash(HSVJitter(record_key="hsv_2"))
        assert pickle.loads(pickle.dumps(jitter)) == jitter
        assert HSVJitter(record_key=None).record_key is None
        assert "record_key='hsv_2'" in repr(jitter)

    @settings(max_examples=60, deadline=None)
    @given(h=GAIN, s=GAIN, v=GAIN, seed=st.integers(0, 2**32 - 1))
    def test_draw_is_ultralytics_uniform_gains_from_the_generator(
        self, h: float, s: float, v: float, seed: int
    ) -> None:
        draw = HSVJitter(h, s, v).draw(np.random.default_rng(seed))
        np.testing.assert_array_equal(np.array(draw), ultralytics_draw((h, s, v), seed))
        assert all(abs(r) <= g for r, g in zip(draw, (h, s, v), strict=True))

    def test_draws_one_block_of_three_uniforms(self) -> None:
        rng, ref = np.random.default_rng(5), np.random.default_rng(5)
        HSVJitter(0.0, 0.0, 0.0).draw(rng)  # whatever the gains
        ref.random(3)
        assert rng.random() == ref.random()

    @settings(max_examples=80, deadline=None)
    @given(h=GAIN, s=GAIN, v=GAIN, seed=st.integers(0, 2**32 - 1))
    def test_same_pixels_as_ultralytics_for_the_same_gains(
        self, h: float, s: float, v: float, seed: int
    ) -> None:
        r = ultralytics_draw((h, s, v), seed)
        bgr = photo(seed % 1000)
        expected = ultralytics_random_hsv(bgr, r, (h, s, v))
        draw = HSVDraw(*r.tolist())
        # max pixel difference 0: BGR images as they are, RGB ones channel for channel
        np.testing.assert_array_equal(HSVJitter(h, s, v, "bgr").apply(bgr, draw), expected)
        rgb = np.ascontiguousarray(bgr[..., ::-1])
        np.testing.assert_array_equal(HSVJitter(h, s, v).apply(rgb, draw), expected[..., ::-1])

    @pytest.mark.parametrize("seed", range(40))
    def test_the_table_path_gives_the_same_pixels(
        self, seed: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # the fallbacks when no exact shift or scale exists for a draw: each plane's LUT
        r = ultralytics_draw((0.5, 0.7, 0.4), seed)
        bgr = photo(seed)
        monkeypatch.setattr(planes_module, "offset_for", lambda *args: None)
        monkeypatch.setattr(planes_module, "hue_shift", lambda *args: None)
        monkeypatch.setattr(hsv_module, "_hue_step", hsv_module._hue_table)  # no known shift
        looked_up: list[int] = []
        lut = cv2.LUT

        def counted(*args: Any, **kwargs: Any) -> Any:
            looked_up.append(1)
            return lut(*args, **kwargs)

        monkeypatch.setattr(cv2, "LUT", counted)
        out = HSVJitter(0.5, 0.7, 0.4, "bgr").apply(bgr, HSVDraw(*r.tolist()))
        monkeypatch.undo()
        assert len(looked_up) == 3  # every plane through its table
        np.testing.assert_array_equal(out, ultralytics_random_hsv(bgr, r))

    def test_images_of_changing_sizes_and_threads_get_their_own_pixels(self) -> None:
        # the hue's plane is kept per thread and per size: never another image's
        jitter = HSVJitter(0.5, 0.7, 0.4, "bgr")
        cases = [(seed, photo(seed, 37 + seed % 3, 53 - seed % 4)) for seed in range(24)]

        def run(case: tuple[int, np.ndarray]) -> np.ndarray:
            seed, bgr = case
            return jitter.apply(bgr, HSVDraw(*ultralytics_draw((0.5, 0.7, 0.4), seed).tolist()))

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            outputs = list(pool.map(run, cases * 4))
        for (seed, bgr), out in zip(cases * 4, outputs, strict=True):
            expected = ultralytics_random_hsv(bgr, ultralytics_draw((0.5, 0.7, 0.4), seed))
            np.testing.assert_array_equal(out, expected)

    @pytest.mark.parametrize("exact", [True, False])
    def test_no_step_writes_into_its_source(
        self, exact: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # OpenCV's LUT in place takes a temporary of its own (fresh pages per sample in a
        # pipeline): every step writes into one of the thread's kept planes instead (but
        # the hue's masked step, which corrects its own output plane where the mask says)
        in_place: list[str] = []

        # where each takes dst and mask by position, after its source (args)
        places = {"LUT": (1, None), "convertScaleAbs": (0, None), "add": (1, 2),
                  "subtract": (1, 2), "compare": (2, None)}  # fmt: skip

        def watched(name: str, real: Any) -> Any:
            at, mask_at = places[name]

            def call(src: np.ndarray, *args: Any, **kwargs: Any) -> Any:
                dst = kwargs.get("dst", args[at] if len(args) > at else None)
                mask = args[mask_at] if mask_at is not None and len(args) > mask_at else None
                masked = kwargs.get("mask", mask) is not None
                if dst is not None and np.shares_memory(src, dst) and not masked:
                    in_place.append(name)
                return real(src, *args, **kwargs)

            return call

        for name in ("LUT", "convertScaleAbs", "add", "subtract", "compare"):
            monkeypatch.setattr(cv2, name, watched(name, getattr(cv2, name)))
        if not exact:  # the tables' path
            monkeypatch.setattr(planes_module, "offset_for", lambda *args: None)
            monkeypatch.setattr(planes_module, "hue_shift", lambda *args: None)
            monkeypatch.setattr(hsv_module, "_hue_step", hsv_module._hue_table)
        image = photo(5)
        out = HSVJitter(0.5, 0.7, 0.4).apply(image, HSVDraw(0.1, 0.3, -0.2), out=image)
        assert out is image
        assert in_place == []

    def test_the_exact_steps_are_taken_for_almost_every_draw(self) -> None:
        rng, jitter = np.random.default_rng(0), HSVJitter()
        draws = [jitter.draw(rng) for _ in range(500)]
        tables = [hsv_tables(d) for d in draws]
        scaled = sum(
            planes_module.offset_for(gain + 1.0, table) is not None
            for d, (_, sat, val) in zip(draws, tables, strict=True)
            for gain, table in ((d.saturation, sat), (d.value, val))
        )
        shifted = sum(planes_module.hue_shift(hue) is not None for hue, _, _ in tables)
        assert scaled >= 980  # the rest take their tables: same pixels, slower
        assert shifted >= 495

    @pytest.mark.parametrize("gain", [0.37, -0.21, 0.7, -0.7, 0.123456])
    def test_the_scale_is_the_same_at_every_position(self, gain: float) -> None:
        # convertScaleAbs' per-value map, probed on 256 values, holds across a large
        # plane of odd width (its vectorised loop and its scalar tail on every row)
        table = hsv_tables(HSVDraw(0.0, gain, 0.0))[1]
        offset = planes_module.offset_for(gain + 1.0, table)
        assert offset is not None
        rng = np.random.default_rng(1)
        for shape in [(480, 641), (3, 5), (1, 1000)]:
            plane = rng.integers(0, 256, shape, dtype=np.uint8)
            out = cv2.convertScaleAbs(plane, alpha=gain + 1.0, beta=offset)
            np.testing.assert_array_equal(out, table[plane])

    def test_the_offset_moves_where_rounding_down_misses(self) -> None:
        # k * x within float32's error of a whole number: -0.5 + 2**-14 rounds it wrong
        gains = np.random.default_rng(2).uniform(-0.7, 0.7, 3000)
        ramp = np.arange(256, dtype=np.uint8)[None, :]
        moved = 0
        for gain in gains.tolist():
            table = hsv_tables(HSVDraw(0.0, gain, 0.0))[1]
            offset = planes_module.offset_for(gain + 1.0, table)
            assert offset is not None
            out = cv2.convertScaleAbs(ramp, None, gain + 1.0, offset)
            np.testing.assert_array_equal(out[0], table)
            moved += offset != planes_module.DOWN
        assert 5 <= moved <= 100

    def test_the_hue_shift_is_its_table_for_every_shift_and_hue(self) -> None:
        hues = np.tile(np.arange(180, dtype=np.uint8), 3)[None, :].repeat(5, axis=0)
        seen = set()
        for step in np.linspace(-1.0, 1.0, 1441):  # every shift, and fractions of a step
            hue = hsv_tables(HSVDraw(float(step), 0.0, 0.0))[0]
            shift = planes_module.hue_shift(hue)
            if shift is None:  # the float sum x + d rounded up somewhere: not a shift
                shifts = (np.arange(180)[None, :] + np.arange(180)[:, None]) % 180
                assert not (shifts == hue[:180]).all(axis=1).any()
                continue
            seen.add(shift)
            out = planes_module.shift_hue(hues, shift, hue)
            np.testing.assert_array_equal(out, hue[hues])
        assert seen == set(range(180))

    def test_a_known_hue_shift_is_the_tables_and_near_a_step_the_table_decides(self) -> None:
        # _hue_step's shift without the table: where given, the table's own shift
        steps = [k / 180 for k in range(-180, 181)]
        near = [s + e for s in steps for e in (0.0, 1e-17, -1e-17, 1e-15, -1e-15, 2.0**-21 / 180,
                                               -(2.0**-21) / 180, 1e-9, -1e-9)]  # fmt: skip
        draws = [float(v) for v in np.random.default_rng(0).uniform(-1, 1, 5000)]
        draws += [float(np.nextafter(s, t)) for s in steps for t in (-2.0, 2.0)]
        given = fallen = 0
        for hue in [v for v in near + draws if -1.0 <= v <= 1.0]:
            draw = HSVDraw(hue, 0.0, 0.0)
            step, table = hsv_module._hue_step(draw), hsv_tables(draw)[0]
            if isinstance(step, int):
                given += 1
                assert step == planes_module.hue_shift(table)
            else:
                fallen += 1
                np.testing.assert_array_equal(step, table)
        assert given > 5000
        assert fallen > 100  # the draws near a step: the table

    def test_opencv_8bit_hue_is_below_180_for_every_colour(self) -> None:
        # why a hue table is the identity when its first 180 entries are
        levels = np.arange(256, dtype=np.uint8)
        rgb = np.empty((256, 256, 256, 3), np.uint8)  # rgb[r, g, b] == (r, g, b): 2**24 colours
        rgb[..., 0], rgb[..., 1], rgb[..., 2] = np.ix_(levels, levels, levels)
        assert int(cv2.cvtColor(rgb.reshape(4096, 4096, 3), cv2.COLOR_RGB2HSV)[..., 0].max()) == 179

    @given(value=st.integers(0, 255), h=GAIN, s=GAIN, v=GAIN, seed=st.integers(0, 2**16))
    def test_grey_stays_grey_and_only_its_value_moves(
        self, value: int, h: float, s: float, v: float, seed: int
    ) -> None:
        jitter = HSVJitter(h, s, v)
        draw = jitter.draw(np.random.default_rng(seed))
        out = jitter.apply(np.full((5, 7, 3), value, np.uint8), draw)
        expected = min(255, int(value * (draw.value + 1))) if (h or s or v) else value
        assert (out == expected).all()

    @given(
        value=st.integers(0, 255),
        gains=st.tuples(GAIN, GAIN, GAIN),
        seed=st.integers(0, 2**16),
        order=st.sampled_from(["rgb", "bgr"]),
    )
    def test_grey_is_what_apply_gives_a_grey(
        self, value: int, gains: tuple[float, float, float], seed: int, order: Any
    ) -> None:
        jitter = HSVJitter(*gains, channel_order=order)
        draw = jitter.draw(np.random.default_rng(seed))
        # rows of 70: both of OpenCV's loops (vectorised, then the scalar tail)
        out = jitter.apply(np.full((3, 70, 3), value, np.uint8), draw)
        assert (out == jitter.grey(value, draw)).all()

    def test_grey_is_none_where_opencv_keeps_no_grey_and_checks_its_value(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        draw = HSVDraw(0.1, 0.2, 0.3)
        assert planes_module.greys_stay_grey((cv2.COLOR_RGB2HSV, cv2.COLOR_HSV2RGB))
        assert planes_module.greys_stay_grey((cv2.COLOR_BGR2HSV, cv2.COLOR_HSV2BGR))
        monkeypatch.setattr(hsv_module, "greys_stay_grey", lambda codes: False)
        assert HSVJitter().grey(114, draw) is None
        assert HSVJitter(0, 0, 0).grey(114, draw) == 114  # no conversion at all
        for value, error in ((-1, ValueError), (256, ValueError), (114.0, TypeError),
                             (True, TypeError)):  # fmt: skip
            with pytest.raises(error, match=r"value must be an integer in \[0, 255\], got"):
                HSVJitter().grey(value, draw)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("order", "colour", "shifted"),
        [("rgb", (255, 0, 0), (0, 255, 0)), ("bgr", (0, 0, 255), (0, 255, 0))],
    )
    def test_a_third_of_a_turn_takes_red_to_green(
        self, order: str, colour: tuple[int, int, int], shifted: tuple[int, int, int]
    ) -> None:
        jitter = HSVJitter(1.0, 0.0, 0.0, order)  # type: ignore[arg-type]
        red = np.zeros((3, 4, 3), np.uint8) + np.array(colour, np.uint8)
        out = jitter.apply(red, HSVDraw(1 / 3 + 1e-9, 0.0, 0.0))  # hue 0 -> 60 (of 180)
        assert (out == np.array(shifted, np.uint8)).all()

    def test_zero_gains_leave_the_image_as_it_is(self) -> None:
        # no HSV round trip (which would move some pixels by one), as ultralytics
        image = photo(0)
        draw = HSVDraw(0.0, 0.0, 0.0)
        assert not np.array_equal(HSVJitter(0.01, 0, 0).apply(image, draw), image)  # round trip
        np.testing.assert_array_equal(HSVJitter(0, 0, 0).apply(image, draw), image)

    def test_in_place_into_out_and_a_copy_otherwise(self) -> None:
        image, jitter = photo(3), HSVJitter()
        draw = jitter.draw(np.random.default_rng(2))
        before = image.copy()
        copy = jitter.apply(image, draw)
        np.testing.assert_array_equal(image, before)
        assert jitter.apply(image, draw, out=image) is image
        np.testing.assert_array_equal(image, copy)
        out = np.empty_like(image)
        assert jitter.apply(before, draw, out=out) is out
        np.testing.assert_array_equal(out, copy)

    def test_call_draws_from_the_rng(self) -> None:
        image, jitter = photo(4), HSVJitter()
        out = jitter(image, rng=np.random.default_rng(9))
        again = jitter.apply(image, jitter.draw(np.random.default_rng(9)))
        np.testing.assert_array_equal(out, again)
        assert not np.array_equal(out, jitter(image, rng=np.random.default_rng(10)))

    @pytest.mark.parametrize("rng", [None, 0, np.random])
    def test_rng_must_be_a_generator(self, rng: Any) -> None:
        # None or a seed failed on a missing attribute (rng.random)
        with pytest.raises(TypeError, match=r"^rng must be a numpy Generator .* of type"):
            HSVJitter()(photo(0), rng=rng)
        with pytest.raises(TypeError, match=r"^rng must be a numpy Generator"):
            HSVJitter().draw(rng)

    @pytest.mark.parametrize(
        ("image", "error", "message"),
        [
            (np.zeros((4, 4, 3), np.float32), TypeError, r"image must have dtype uint8 .* float32"),
            (np.zeros((4, 4, 3), np.uint16), TypeError, r"image must have dtype uint8 .* uint16"),
            (np.zeros((4, 4), np.uint8), ValueError, r"HxWx3 RGB image, got shape \(4, 4\)"),
            (np.zeros((4, 4, 4), np.uint8), ValueError, r"HxWx3 RGB image, got shape \(4, 4, 4\)"),
            (np.zeros((0, 4, 3), np.uint8), ValueError, r"got shape \(0, 4, 3\)"),
            ([[1, 2, 3]], TypeError, r"image must be an HxWx3 uint8 RGB numpy array"),
            (  # its repr, over lines, was the message
                torch.zeros(3, 6, 8, dtype=torch.uint8),
                TypeError,
                r"array, got a value of shape \(3, 6, 8\) and dtype torch\.uint8 of type Tensor$",
            ),
        ],
    )
    def test_images_are_checked(self, image: Any, error: type[Exception], message: str) -> None:
        with pytest.raises(error, match=message):
            HSVJitter().apply(image, HSVDraw(0.0, 0.1, 0.1))

    @pytest.mark.parametrize(
        ("out", "wrong"),
        [
            (np.zeros((4, 5, 3), np.uint8), r"of shape \(4, 5, 3\)"),
            (np.zeros((4, 3, 3), np.uint16), r"of dtype uint16"),
            (np.zeros((4, 6, 3), np.uint8)[:, ::2], r"not C-contiguous"),
            (np.broadcast_to(np.zeros(3, np.uint8), (4, 3, 3)), r"not C-contiguous, read-only"),
        ],
    )
    def test_out_is_checked_naming_what_is_wrong(self, out: Any, wrong: str) -> None:
        expected = r"out must be a writeable C-contiguous uint8 array of shape \(4, 3, 3\)"
        with pytest.raises(ValueError, match=rf"^{expected}, got one that is {wrong}$"):
            HSVJitter().apply(np.zeros((4, 3, 3), np.uint8), HSVDraw(0.0, 0.1, 0.1), out=out)

    def test_out_that_is_no_array_is_a_type_error(self) -> None:
        with pytest.raises(TypeError, match=r"out must be a writeable .*, got 'x' of type str"):
            HSVJitter().apply(np.zeros((4, 3, 3), np.uint8), HSVDraw(0.0, 0.1, 0.1), out="x")

    @pytest.mark.parametrize("gains", [(0.0, -1.5, 0.0), (0.0, 0.0, -2.0), (1.5, 0.0, 0.0)])
    def test_gains_outside_minus_one_to_one_are_refused(
        self, gains: tuple[float, float, float]
    ) -> None:
        # below -1 a saturation or value table would go negative and wrap round in uint8
        field = HSVDraw._fields[int(np.flatnonzero(gains)[0])]
        with pytest.raises(ValueError, match=rf"^draw\.{field} must be .* >= -1\.0 and <= 1\.0"):
            HSVJitter().apply(photo(0), HSVDraw(*gains))
        with pytest.raises(ValueError, match=rf"^draw\.{field} must be"):
            hsv_tables(HSVDraw(*gains))
        with pytest.raises(ValueError, match=rf"^draw\.{field} must be"):
            HSVJitter().grey(114, HSVDraw(*gains))

    def test_a_draw_must_be_an_hsv_draw(self) -> None:
        with pytest.raises(TypeError, match=r"draw must be an HSVDraw, got \(0\.0, 0\.1, 0\.1\)"):
            HSVJitter().apply(photo(0), (0.0, 0.1, 0.1))  # type: ignore[arg-type]

    def test_gains_of_minus_one_and_one_are_taken(self) -> None:
        sat = hsv_tables(HSVDraw(-1.0, -1.0, 1.0))[1]
        assert sat.tolist() == [0] * 256
        np.testing.assert_array_equal(
            HSVJitter().replay(photo(1), {"gains": (1.0, -1.0, 1.0)}),
            HSVJitter().apply(photo(1), HSVDraw(1.0, -1.0, 1.0)),
        )

    def test_record_and_replay_bit_for_bit(self) -> None:
        image, jitter = photo(5), HSVJitter(0.5, 0.9, 0.9)
        draw = jitter.draw(np.random.default_rng(11))
        record = jitter.record(draw)
        assert record == {"gains": (draw.hue, draw.saturation, draw.value)}
        np.testing.assert_array_equal(jitter.replay(image, record), jitter.apply(image, draw))
        assert pickle.loads(pickle.dumps(jitter)) == jitter

    @pytest.mark.parametrize(
        ("record", "error", "message"),
        [
            ({}, ValueError, r"gains"),
            ({"gains": (0.1, 0.2)}, ValueError, r"record\['gains'\] must be three numbers"),
            ({"gains": (0.1, 0.2, "x")}, TypeError, r"record\['gains'\]\[2\] must be a finite"),
            ({"gains": (0.0, -1.5, 0.0)}, ValueError, r"\['gains'\]\[1\] .* <= 1\.0, got -1\.5"),
            ({"gains": (0.0, 0.0, -2.0)}, ValueError, r"\['gains'\]\[2\] .* <= 1\.0, got -2\.0"),
            ({"gains": (3.0, 0.0, 0.0)}, ValueError, r"\['gains'\]\[0\] .* <= 1\.0, got 3\.0"),
            ("gains", TypeError, r"record must be an HSVRecord"),
        ],
    )
    def test_replay_checks_the_record(
        self, record: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            HSVJitter().replay(photo(0), record)


class _Images(torch.utils.data.Dataset[Any]):
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __len__(self) -> int:
        return 6

    def __getitem__(self, index: int) -> Any:
        image = photo(index, 20, 24)
        if self.kind == "dict":
            return {"image": image, "labels": np.array([index]), "path": f"{index}.png"}
        if self.kind == "pil":
            return Image.fromarray(image), {"labels": [index]}
        return torch.from_numpy(image).permute(2, 0, 1), {"labels": torch.tensor([index])}


class TestHSVJitterInRandomAugmentWrapper:
    def test_keyed_recorded_and_replayed(self) -> None:
        data, jitter = _Images("dict"), HSVJitter(0.1, 0.7, 0.4)
        wrapper = RandomAugmentWrapper(data, jitter, seed=0, keying="sample")
        again = RandomAugmentWrapper(data, jitter, seed=0, keying="sample")
        other = RandomAugmentWrapper(data, jitter, seed=1, keying="sample")
        outputs = [wrapper[i] for i in range(6)]
        gains = {out["hsv"]["gains"] for out in outputs}
        assert len(gains) == 6  # differs across keys
        for i, out in enumerate(outputs):
            assert sorted(out) == ["hsv", "image", "labels", "path"]
            np.testing.assert_array_equal(out["image"], again[i]["image"])
            assert out["hsv"] == again[i]["hsv"] != other[i]["hsv"]
            np.testing.assert_array_equal(out["image"], jitter.replay(data[i]["image"], out["hsv"]))
            np.testing.assert_array_equal(data[i]["image"], photo(i, 20, 24))  # left unchanged

    def test_two_jitters_record_under_their_keys(self) -> None:
        data = _Images("dict")
        inner = RandomAugmentWrapper(data, HSVJitter(), seed=0, keying="sample")
        outer = RandomAugmentWrapper(inner, HSVJitter(record_key="hsv_2"), seed=1, keying="sample")
        out = outer[1]
        assert out["hsv"] == inner[1]["hsv"] != out["hsv_2"]
        unrecorded = RandomAugmentWrapper(inner, HSVJitter(record_key=None), seed=1)[1]
        assert sorted(unrecorded) == ["hsv", "image", "labels", "path"]

    def test_a_taken_key_is_refused_naming_record_key(self) -> None:
        # the advice named record=, which neither the wrapper nor the jitter takes
        inner = RandomAugmentWrapper(_Images("dict"), HSVJitter(), seed=0)
        with pytest.raises(SampleError) as caught:
            RandomAugmentWrapper(inner, HSVJitter(), seed=1)[0]
        assert isinstance(caught.value.__cause__, ValueError)
        assert str(caught.value.__cause__).startswith(
            "HSVJitter(record_key='hsv') names a key the sample already has"
        )
        assert str(caught.value.__cause__).endswith("such as HSVJitter(record_key='hsv_2')")

    @pytest.mark.parametrize("shape", [(20, 24), (20, 24, 4)])
    def test_grey_or_rgba_images_are_refused_naming_the_jitter(
        self, shape: tuple[int, ...]
    ) -> None:
        # the message said only "image must be an HxWx3 RGB image": which transform?
        data = [{"image": np.zeros(shape, np.uint8)}]
        with pytest.raises(SampleError) as caught:
            RandomAugmentWrapper(data, HSVJitter(), seed=0)[0]
        assert isinstance(caught.value.__cause__, ValueError)
        assert str(caught.value.__cause__).startswith(
            f"HSVJitter's image must be an HxWx3 RGB image, got shape {shape}: convert grey"
        )

    @pytest.mark.parametrize("kind", ["pil", "tensor"])
    def test_pairs_keep_their_image_type_and_record_in_the_target(self, kind: str) -> None:
        data, jitter = _Images(kind), HSVJitter()
        image, target = RandomAugmentWrapper(data, jitter, seed=0, keying="sample")[2]
        assert type(image) is type(data[2][0])
        array = np.asarray(image) if kind == "pil" else image.permute(1, 2, 0).numpy()
        source = photo(2, 20, 24)
        np.testing.assert_array_equal(array, jitter.replay(source, target["hsv"]))
        assert not np.array_equal(array, source)


class TestTimesOne:
    @given(st.floats(0.0, 2.0) | st.sampled_from([0.0, 1.0, 2.0, 255 / 254, 1.0 - 2**-53]))
    def test_is_the_tables_entry(self, k: float) -> None:
        # the grey's value (HSVJitter.grey) is its entry in the value table, for every x
        table = hsv_module._times(hsv_module._X, k)
        assert [hsv_module._times_one(x, k) for x in range(256)] == table.tolist()
