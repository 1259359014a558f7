from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rankaug.mix.config import PairConfig
from rankaug.params import Targets, pop_fields


def build(**changes: Any) -> PairConfig:
    """The config of ``MixUpDataset(..., **changes)`` (the objects' fields flat)."""
    kwargs: dict[str, Any] = {"record": "mixup", **changes}
    return PairConfig.build(targets=Targets(**pop_fields(Targets, kwargs)), **kwargs)


class TestPairConfig:
    def test_builds_the_target_keys(self) -> None:
        config = build(keypoint_fields=("kp",))
        assert {"image", "bboxes", "labels", "kp"} <= config.target_keys
        assert config.constant_p

    @pytest.mark.parametrize(
        ("change", "error", "message"),
        [
            ({"box_format": "xyxy"}, ValueError, "box_format must be one of"),
            ({"label_fields": "labels"}, TypeError, "label_fields must be a sequence"),
            ({"num_classes": 2.0}, TypeError, "num_classes must be an integer >= 1"),
            ({"num_classes": True}, TypeError, "num_classes must be an integer >= 1"),
            # None is refused: the message said "must be None or a key name"
            ({"class_field": "masks"}, ValueError, "class_field must be a key name other than"),
            ({"class_field": None}, TypeError, "class_field must be a key name other than"),
            ({"p": "0.5"}, TypeError, "p must be a finite number"),
            ({"partner_fit": 1}, TypeError, "partner_fit must be one of 'error', 'letterbox'"),
            ({"fill": "grey"}, TypeError, "fill must be a number or a sequence of numbers"),
            ({"fill_mask": 0.5}, TypeError, "fill_mask must be an integer"),
            ({"record": "label"}, ValueError, "record must be None or a key name other than"),
        ],
    )
    def test_refuses_bad_arguments(
        self, change: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            build(**change)

    def test_probability_of_a_schedule_is_checked(self) -> None:
        config = build(p=lambda epoch: epoch / 2)
        assert not config.constant_p
        assert config.probability(1) == 0.5
        with pytest.raises(ValueError, match=r"p\(4\) must be a finite number >= 0.0 and <= 1.0"):
            config.probability(4)

    def test_the_default_fill_is_refused_for_float_images(self) -> None:
        # it painted 114 into float images in [0, 1]
        default = build()
        assert (default.fill, default.fill_default) == ((114.0,), True)
        default.check_fill(np.zeros((2, 2, 3), np.int16), None, "dataset[3]")
        with pytest.raises(ValueError, match=r"^fill must be given for float images: .*\[3\]"):
            default.check_fill(np.zeros((2, 2, 3), np.float64), None, "dataset[3]")
        given = build(fill=0.5)
        assert not given.fill_default
        given.check_fill(np.zeros((2, 2, 3), np.float64), None, "dataset[3]")

    def test_check_fill_against_the_image(self) -> None:
        config = build(fill=(1, 2))
        with pytest.raises(ValueError, match=r"fill has 2 values, dataset\[3\] image has 3"):
            config.check_fill(np.zeros((2, 2, 3), np.uint8), None, "dataset[3]")
        config = build(fill_mask=300)
        with pytest.raises(ValueError, match="fill_mask must be whole numbers in"):
            config.check_fill(np.zeros((2, 2), np.uint8), np.zeros((2, 2), np.uint8), "x")
