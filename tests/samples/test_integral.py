from __future__ import annotations

import numpy as np
import pytest

from rankaug.samples.integral import check_holds, integral


class TestIntegral:
    def test_float32_round_off_is_no_fraction(self) -> None:
        assert integral(np.array([44.999998807907104, 5.0]))
        assert not integral(np.array([44.5]))
        assert not integral(np.array([np.nan]))


class TestCheckHolds:
    def test_values_in_range_pass(self) -> None:
        check_holds(np.array([-128.0, 127.0]), np.dtype(np.int8), "bboxes")
        check_holds(np.zeros(0), np.dtype(np.uint8), "bboxes")

    def test_values_out_of_range_are_refused_naming_the_key(self) -> None:
        said = "'bboxes' came in as uint16, which holds 0 to 65535, but .* from 0 to 70000"
        with pytest.raises(ValueError, match=said):
            check_holds(np.array([0, 70000]), np.dtype(np.uint16), "bboxes")

    def test_values_whose_dtype_it_holds_are_not_read(self) -> None:
        # it was: every value read (min and max), 50 uint8 tensor masks of 640x640 too
        class Unread(np.ndarray):  # type: ignore[type-arg]
            def min(self, *args: object, **kwargs: object) -> None:  # type: ignore[override]
                raise AssertionError("read")

            def max(self, *args: object, **kwargs: object) -> None:  # type: ignore[override]
                raise AssertionError("read")

        for dtype in (np.uint8, np.int16, np.uint32):
            check_holds(np.zeros(3, np.uint8).view(Unread), np.dtype(dtype), "masks")
        with pytest.raises(AssertionError, match="read"):  # it may not hold int64's values
            check_holds(np.zeros(3, np.int64).view(Unread), np.dtype(np.uint8), "masks")
