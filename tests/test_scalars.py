from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug._scalars import clamp, round_float

numbers = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)


class TestClamp:
    @given(numbers, numbers, numbers)
    def test_is_min_of_max_value_and_type(self, value: float, a: float, b: float) -> None:
        low, high = (a, b) if a <= b else (b, a)
        got, want = clamp(value, low, high), min(max(value, low), high)
        assert got == want
        assert type(got) is type(want)  # of equal numbers, the same one as the builtins
        assert math.copysign(1.0, got) == math.copysign(1.0, want)  # -0.0 stays -0.0

    def test_at_the_bounds(self) -> None:
        assert (clamp(-1, 0, 5), clamp(0, 0, 5), clamp(5, 0, 5), clamp(6, 0, 5)) == (0, 0, 5, 5)


class TestRoundFloat:
    @given(st.floats(allow_nan=False, allow_infinity=False, width=64))
    def test_is_round(self, value: float) -> None:
        got, want = round_float(value), round(value)
        assert got == want  # half to even, as round()
        assert type(got) is int

    def test_refuses_an_int(self) -> None:  # floats only: an int would be a caller's slip
        with pytest.raises(TypeError):
            round_float(3)  # type: ignore[arg-type]
