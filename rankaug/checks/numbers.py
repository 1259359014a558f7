"""Numbers: integers, key fields (unsigned, streams), bools, reals, probabilities, ranges."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from rankaug.checks._messages import is_int, is_real, type_error, value_error

__all__ = [
    "boolean",
    "int_choice",
    "int_pair",
    "integer",
    "probability",
    "real",
    "real_range",
    "stream",
    "uint",
]


def integer(value: object, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer in ``[low, high]`` (either bound may be open-ended).

    Args:
        value: The candidate.
        name: The argument's name, for the message.
        low: The smallest allowed value; ``None`` for no bound.
        high: The largest allowed value; ``None`` for no bound.

    Returns:
        The value as a Python ``int``.

    Raises:
        TypeError: If ``value`` is not an integer (floats and bools are refused).
        ValueError: If it is out of range.

    >>> integer(np.int64(3), "epochs", low=1)
    3
    >>> integer(0, "epochs", low=1)
    Traceback (most recent call last):
    ...
    ValueError: epochs must be an integer >= 1, got 0
    """
    expected = "an integer"
    if low is not None and high is not None:
        expected = f"an integer in [{low}, {high}]"
    elif low is not None:
        expected = f"an integer >= {low}"
    elif high is not None:
        expected = f"an integer <= {high}"
    if not is_int(value):
        raise type_error(name, expected, value)
    number: int = int(value)  # type: ignore[call-overload]
    if (low is not None and number < low) or (high is not None and number > high):
        raise value_error(name, expected, number)
    return number


def uint(value: object, name: str, bits: int) -> int:
    """An unsigned integer of ``bits`` bits: ``0 <= value < 2**bits``.

    Args:
        value: The candidate.
        name: The argument's name.
        bits: The field's width (32 or 64 in a key).

    Returns:
        The value as a Python ``int``.

    Raises:
        TypeError: If ``value`` is not an integer.
        ValueError: If it is out of range.

    >>> uint(2**32, "rank", 32)
    Traceback (most recent call last):
    ...
    ValueError: rank must be an integer in [0, 2**32), got 4294967296
    """
    expected = f"an integer in [0, 2**{bits})"
    if not is_int(value):
        raise type_error(name, expected, value)
    number: int = int(value)  # type: ignore[call-overload]
    if not 0 <= number < (1 << bits):
        raise value_error(name, expected, number)
    return number


def stream(value: object, name: str = "stream") -> int | str:
    """A key's stream: a name (any string) or a 32-bit word, ``0 <= value < 2**32``.

    Args:
        value: The candidate.
        name: The argument's name.

    Returns:
        The name, or the word as a Python ``int``.

    Raises:
        TypeError: If ``value`` is neither a string nor an integer.
        ValueError: If an integer is out of range.

    >>> stream("view-2"), stream(np.uint32(7))
    ('view-2', 7)
    >>> stream(1.5)
    Traceback (most recent call last):
    ...
    TypeError: stream must be a name (a string) or an integer in [0, 2**32), got 1.5 of type float
    """
    if isinstance(value, str):
        return value
    expected = "a name (a string) or an integer in [0, 2**32)"
    if not is_int(value):
        raise type_error(name, expected, value)
    number: int = int(value)  # type: ignore[call-overload]
    if not 0 <= number < (1 << 32):
        raise value_error(name, expected, number)
    return number


def boolean(value: object, name: str) -> bool:
    """A ``bool`` (numpy's included); ``0`` and ``1`` are refused.

    >>> boolean(np.True_, "clip")
    True
    """
    if not isinstance(value, bool | np.bool_):
        raise type_error(name, "True or False", value)
    return bool(value)


def real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """A finite real number within the given bounds.

    Args:
        value: The candidate.
        name: The argument's name.
        low: The lower bound, or ``None``.
        high: The upper bound, or ``None``.
        low_open: Exclude ``low`` itself.
        high_open: Exclude ``high`` itself.

    Returns:
        The value as a Python ``float``.

    Raises:
        TypeError: If ``value`` is not a real number.
        ValueError: If it is NaN, infinite or out of bounds.

    >>> real(2, "alpha", low=0.0, low_open=True)
    2.0
    >>> real(float("nan"), "min_area", low=0.0)
    Traceback (most recent call last):
    ...
    ValueError: min_area must be a finite number >= 0.0, got nan
    """
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    expected = "a finite number" + (" " + " and ".join(parts) if parts else "")
    if not is_real(value):
        raise type_error(name, expected, value)
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise value_error(name, expected, number)
    if low is not None and (number < low or (low_open and number == low)):
        raise value_error(name, expected, value)
    if high is not None and (number > high or (high_open and number == high)):
        raise value_error(name, expected, value)
    return number


def probability(value: object, name: str) -> float:
    """A probability: a real number in ``[0, 1]``.

    >>> probability(0.5, "p")
    0.5
    """
    return real(value, name, low=0.0, high=1.0)


def int_choice(value: object, name: str, choices: Mapping[int, str]) -> int:
    """One of the integer constants in ``choices`` (named by its values in the message).

    >>> int_choice(1, "interpolation", {0: "INTER_NEAREST", 1: "INTER_LINEAR"})
    1
    >>> int_choice(True, "interpolation", {0: "INTER_NEAREST", 1: "INTER_LINEAR"})
    Traceback (most recent call last):
    ...
    TypeError: interpolation must be one of INTER_NEAREST, INTER_LINEAR, got True of type bool
    """
    expected = "one of " + ", ".join(choices.values())
    if not is_int(value):
        raise type_error(name, expected, value)
    number: int = int(value)  # type: ignore[call-overload]
    if number not in choices:
        raise value_error(name, expected, value)
    return number


def int_pair(value: object, name: str, *, low: int = 1) -> tuple[int, int]:
    """An int or a ``(height, width)``-style pair of ints, each ``>= low``.

    Args:
        value: An integer (used for both) or a pair of integers.
        name: The argument's name.
        low: The smallest allowed entry.

    Returns:
        The pair.

    Raises:
        TypeError: If ``value`` is neither an integer nor a pair of integers.
        ValueError: If an entry is below ``low``.

    >>> int_pair(640, "output_size")
    (640, 640)
    >>> int_pair((3, 4.0), "grid")
    Traceback (most recent call last):
    ...
    TypeError: grid must be an integer or a pair of integers >= 1, got (3, 4.0) of type tuple
    """
    expected = f"an integer or a pair of integers >= {low}"
    if is_int(value):
        pair: tuple[Any, ...] = (value, value)
    elif isinstance(value, tuple | list) and len(value) == 2 and all(map(is_int, value)):
        pair = tuple(value)
    else:
        raise type_error(name, expected, value)
    first, second = int(pair[0]), int(pair[1])
    if first < low or second < low:
        raise value_error(name, expected, value)
    return first, second


def real_range(value: object, name: str, *, low: float, high: float) -> tuple[float, float]:
    """A ``(low, high)`` pair of finite numbers with ``low <= first <= second <= high``.

    >>> real_range([0.25, 0.75], "center_range", low=0.0, high=1.0)
    (0.25, 0.75)
    """
    expected = f"a (low, high) pair with {low} <= low <= high <= {high}"
    if not (isinstance(value, tuple | list) and len(value) == 2 and all(map(is_real, value))):
        raise type_error(name, expected, value)
    first, second = float(value[0]), float(value[1])
    if not (low <= first <= second <= high):  # NaN fails every comparison
        raise value_error(name, expected, value)
    return first, second


def schedule(value: object, name: str) -> float | Callable[[int], float]:
    """A probability, or a function of the epoch returning one (checked when called).

    >>> schedule(0.5, "p"), schedule(lambda epoch: 1.0, "p")(3)
    (0.5, 1.0)
    >>> schedule("half", "p")
    Traceback (most recent call last):
    ...
    TypeError: p must be a finite number >= 0.0 and <= 1.0, got 'half' of type str
    """
    if callable(value):
        return value
    return probability(value, name)


def scheduled(value: float | Callable[[int], float], name: str, epoch: int) -> float:
    """The probability ``value`` gives for ``epoch`` (a function's result checked, named).

    >>> scheduled(lambda epoch: epoch / 10, "p", 3)
    0.3
    >>> scheduled(lambda epoch: 2.0, "p", 3)
    Traceback (most recent call last):
    ...
    ValueError: p(3) must be a finite number >= 0.0 and <= 1.0, got 2.0
    """
    if callable(value):
        return probability(value(epoch), f"{name}({epoch})")
    return value
