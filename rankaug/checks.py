"""Argument checks: one home for every rule, one wording, one choice of error type.

Every public constructor and function in rankaug checks its arguments here. A value of
the wrong *type* raises :class:`TypeError`, a value of the right type but out of range
raises :class:`ValueError`, and both messages read the same way::

    <name> must be <what was expected>, got <the value> [of type <its type>]

Booleans are never taken for numbers (``True`` is rarely meant as 1), numpy scalars
are taken as the Python numbers they hold, and nothing is silently converted: a float
where an integer is expected is refused rather than truncated.

>>> uint(7, "rank", 32)
7
>>> integer(True, "grid")
Traceback (most recent call last):
...
TypeError: grid must be an integer, got True of type bool
>>> real_range((0.5, 0.25), "center_range", low=0.0, high=1.0)
Traceback (most recent call last):
...
ValueError: center_range must be a (low, high) pair with 0.0 <= low <= high <= 1.0, got (0.5, 0.25)
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final, TypeVar

import numpy as np

__all__ = [
    "IMAGE_DTYPES",
    "MAX_CHANNELS",
    "boolean",
    "choice",
    "fill_fits",
    "fill_values",
    "function",
    "image_layout",
    "index",
    "index_array",
    "int_pair",
    "int_choice",
    "integer",
    "key_name",
    "map_dataset",
    "mapping",
    "names",
    "probability",
    "real",
    "real_range",
    "sequence",
    "uint",
    "weights",
]

S = TypeVar("S", bound=str)

#: Image dtypes every resampling path in rankaug handles (what OpenCV's resize and
#: warpAffine accept for every interpolation).
IMAGE_DTYPES: Final[tuple[str, ...]] = ("uint8", "uint16", "int16", "float32", "float64")
#: OpenCV handles at most this many channels.
MAX_CHANNELS: Final = 511


class _Said(str):
    """A description of a value, shown as it is in a message (not quoted)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def _type_error(name: str, expected: str, value: object, *, short: bool = False) -> TypeError:
    shown = f"{value!r:.80}" if short else repr(value)
    return TypeError(f"{name} must be {expected}, got {shown} of type {type(value).__name__}")


def _value_error(name: str, expected: str, value: object) -> ValueError:
    return ValueError(f"{name} must be {expected}, got {value!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def integer(value: object, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer in ``[low, high]`` (either bound may be open-ended).

    Args:
        value: The candidate.
        name: The argument's name, for the message.
        low: The smallest allowed value; ``None`` for no bound. Defaults to ``None``.
        high: The largest allowed value; ``None`` for no bound. Defaults to ``None``.

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
    if not _is_int(value):
        raise _type_error(name, expected, value)
    number: int = int(value)  # type: ignore[call-overload]
    if (low is not None and number < low) or (high is not None and number > high):
        raise _value_error(name, expected, number)
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
    if not _is_int(value):
        raise _type_error(name, expected, value)
    number: int = int(value)  # type: ignore[call-overload]
    if not 0 <= number < (1 << bits):
        raise _value_error(name, expected, number)
    return number


def boolean(value: object, name: str) -> bool:
    """A ``bool`` (numpy's included); ``0`` and ``1`` are refused.

    >>> boolean(np.True_, "clip")
    True
    """
    if not isinstance(value, bool | np.bool_):
        raise _type_error(name, "True or False", value)
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
        low: The lower bound, or ``None``. Defaults to ``None``.
        high: The upper bound, or ``None``. Defaults to ``None``.
        low_open: Exclude ``low`` itself. Defaults to ``False``.
        high_open: Exclude ``high`` itself. Defaults to ``False``.

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
    if not _is_real(value):
        raise _type_error(name, expected, value)
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise _value_error(name, expected, number)
    if low is not None and (number < low or (low_open and number == low)):
        raise _value_error(name, expected, value)
    if high is not None and (number > high or (high_open and number == high)):
        raise _value_error(name, expected, value)
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
    if not _is_int(value):
        raise _type_error(name, expected, value)
    number: int = int(value)  # type: ignore[call-overload]
    if number not in choices:
        raise _value_error(name, expected, value)
    return number


def mapping(value: object, name: str, *, required: Collection[str], what: str) -> Mapping[str, Any]:
    """A mapping holding at least the ``required`` keys (``what`` names what it should be).

    >>> mapping({"epoch": 1}, "record", required=("epoch", "state"), what="a MosaicRecord")
    Traceback (most recent call last):
    ...
    ValueError: record must be a MosaicRecord with 'epoch', 'state', got one without 'state'
    """
    if not isinstance(value, Mapping):
        raise _type_error(name, what, value, short=True)
    missing = [key for key in required if key not in value]
    if missing:
        keys = ", ".join(repr(key) for key in required)
        raise _value_error(
            name, f"{what} with {keys}", _Said("one without " + ", ".join(map(repr, missing)))
        )
    return value


def sequence(value: object, name: str, *, what: str = "a non-empty sequence") -> Sequence[Any]:
    """A non-empty sequence (not a string).

    >>> sequence([], "record['indices']")
    Traceback (most recent call last):
    ...
    ValueError: record['indices'] must be a non-empty sequence, got []
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise _type_error(name, what, value, short=True)
    if len(value) == 0:
        raise _value_error(name, what, value)
    return value  # type: ignore[return-value]


def int_pair(value: object, name: str, *, low: int = 1) -> tuple[int, int]:
    """An int or a ``(height, width)``-style pair of ints, each ``>= low``.

    Args:
        value: An integer (used for both) or a pair of integers.
        name: The argument's name.
        low: The smallest allowed entry. Defaults to ``1``.

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
    if _is_int(value):
        pair: tuple[Any, ...] = (value, value)
    elif isinstance(value, tuple | list) and len(value) == 2 and all(map(_is_int, value)):
        pair = tuple(value)
    else:
        raise _type_error(name, expected, value)
    first, second = int(pair[0]), int(pair[1])
    if first < low or second < low:
        raise _value_error(name, expected, value)
    return first, second


def real_range(value: object, name: str, *, low: float, high: float) -> tuple[float, float]:
    """A ``(low, high)`` pair of finite numbers with ``low <= first <= second <= high``.

    >>> real_range([0.25, 0.75], "center_range", low=0.0, high=1.0)
    (0.25, 0.75)
    """
    expected = f"a (low, high) pair with {low} <= low <= high <= {high}"
    if not (isinstance(value, tuple | list) and len(value) == 2 and all(map(_is_real, value))):
        raise _type_error(name, expected, value)
    first, second = float(value[0]), float(value[1])
    if not (low <= first <= second <= high):  # NaN fails every comparison
        raise _value_error(name, expected, value)
    return first, second


def choice(value: object, name: str, choices: Sequence[S]) -> S:
    """One of ``choices`` (strings).

    Raises:
        TypeError: If ``value`` is not a string.
        ValueError: If it is not one of the choices.

    >>> choice("fit", "scale_mode", ("keep", "fit", "fill"))
    'fit'
    >>> choice(3, "scale_mode", ("keep", "fit", "fill"))
    Traceback (most recent call last):
    ...
    TypeError: scale_mode must be one of 'keep', 'fit', 'fill', got 3 of type int
    """
    expected = "one of " + ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise _type_error(name, expected, value)
    for candidate in choices:
        if value == candidate:
            return candidate
    raise _value_error(name, expected, value)


def names(value: object, name: str, *, forbidden: Collection[str] = ()) -> tuple[str, ...]:
    """A sequence of distinct key names (not a single string), none of them ``forbidden``.

    >>> names(["labels", "iscrowd"], "label_fields")
    ('labels', 'iscrowd')
    >>> names("labels", "label_fields")
    Traceback (most recent call last):
    ...
    TypeError: label_fields must be a sequence of key names, got 'labels' of type str
    """
    expected = "a sequence of key names"
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise _type_error(name, expected, value)
    out = tuple(value)
    for item in out:
        if not isinstance(item, str):
            raise _type_error(f"every entry of {name}", "a key name (str)", item)
        if item in forbidden:
            raise _value_error(
                f"every entry of {name}", f"a key that is not one of {sorted(forbidden)}", item
            )
    if len(set(out)) != len(out):
        raise _value_error(name, "a sequence of distinct key names", value)
    return out


def key_name(
    value: object, name: str, *, forbidden: Collection[str], optional: bool = True
) -> str | None:
    """A key name (or ``None`` when ``optional``) that does not collide with ``forbidden`` keys.

    >>> key_name("mosaic", "record", forbidden={"image", "bboxes"}) + "!"
    'mosaic!'
    >>> key_name("image", "record", forbidden={"image", "bboxes"})
    Traceback (most recent call last):
    ...
    ValueError: record must be None or a key name other than 'bboxes', 'image', got 'image'
    """
    expected = "a key name other than " + ", ".join(repr(k) for k in sorted(forbidden))
    if optional:
        expected = "None or " + expected
        if value is None:
            return None
    if not isinstance(value, str):
        raise _type_error(name, expected, value)
    if value in forbidden or not value:
        raise _value_error(name, expected, value)
    return value


def function(value: object, name: str, expected: str) -> Callable[..., Any]:
    """A callable (``expected`` says what kind, for the message).

    >>> function(len, "p", "a number or a function of the epoch") is len
    True
    """
    if not callable(value):
        raise _type_error(name, expected, value)
    return value


def map_dataset(value: object, name: str = "dataset") -> Any:
    """A map-style dataset: ``__getitem__`` and ``__len__`` (a string is not one).

    >>> map_dataset("abc")
    Traceback (most recent call last):
    ...
    TypeError: dataset must be a map-style dataset with __getitem__ and __len__, got 'abc' ...
    """
    if isinstance(value, str | bytes) or not (
        hasattr(value, "__getitem__") and hasattr(value, "__len__")
    ):
        raise _type_error(name, "a map-style dataset with __getitem__ and __len__", value)
    return value


def index(value: object, length: int) -> int:
    """A dataset index as a position in ``[0, length)``; negatives count from the end.

    Python and numpy integers, and anything with ``__index__``, are taken; bools are not.

    Raises:
        TypeError: If ``value`` is not an integer.
        IndexError: If it is outside ``[-length, length)``.

    >>> index(-1, 5)
    4
    >>> index(5, 5)
    Traceback (most recent call last):
    ...
    IndexError: index 5 is out of range for a dataset of length 5
    """
    if type(value) is int:
        position = value  # the common case, kept cheap
    else:
        try:
            if isinstance(value, bool | np.bool_):
                raise TypeError
            position = operator.index(value)  # type: ignore[arg-type]
        except TypeError:  # also a float tensor, which has __index__ but refuses it
            raise _type_error("index", "an integer", value) from None
    if position < 0:
        position += length
    if not 0 <= position < length:
        raise IndexError(f"index {value} is out of range for a dataset of length {length}")
    return int(position)


def index_array(value: object, name: str, *, length: int) -> np.ndarray:
    """A non-empty sequence of distinct indices into a dataset of ``length`` items.

    Duplicates are refused: they would weight some items twice and, when one of them is
    the sample's own index, let a sample be its own partner.

    Returns:
        The indices as an ``int64`` array.

    Raises:
        TypeError: If an entry is not an integer.
        ValueError: If the sequence is empty, out of range or has duplicates.

    >>> index_array([3, 1], "pool", length=4).tolist()
    [3, 1]
    >>> index_array([1.5], "pool", length=4)
    Traceback (most recent call last):
    ...
    TypeError: every entry of pool must be an index (integer), got 1.5 of type float
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise _type_error(name, "a sequence of indices", value)
    entries = list(value)
    for entry in entries:
        if not _is_int(entry):
            raise _type_error(f"every entry of {name}", "an index (integer)", entry)
    if not entries:
        raise _value_error(name, "a non-empty sequence of indices", value)
    array = np.asarray(entries, dtype=np.int64)
    low, high = int(array.min()), int(array.max())
    if low < 0 or high >= length:
        raise _value_error(name, f"indices in [0, {length})", _Said(f"values from {low} to {high}"))
    unique, counts = np.unique(array, return_counts=True)
    if len(unique) != len(array):
        twice = unique[counts > 1][:5].tolist()
        raise _value_error(name, "distinct indices", _Said(f"repeated entries {twice}"))
    return array


def weights(value: object, name: str, *, count: int, what: str = "item") -> np.ndarray:
    """Sampling weights: ``count`` finite numbers ``>= 0``, not all 0.

    Returns:
        The cumulative distribution (float64, ending in exactly 1.0).

    Raises:
        TypeError: If ``value`` is not a sequence of real numbers.
        ValueError: If it has the wrong length, a negative, NaN or infinite weight,
            all zeros, or weights whose sum overflows.

    >>> weights([1, 1, 2], "weights", count=3).tolist()
    [0.25, 0.5, 1.0]
    >>> weights([1e308, 1e308], "weights", count=2).tolist()
    [0.5, 1.0]
    """
    expected = f"a sequence of {count} numbers >= 0 (one per {what}), not all 0"
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise _type_error(name, expected, value)
    entries = list(value)
    for entry in entries:
        if not _is_real(entry):
            raise _type_error(f"every entry of {name}", "a real number", entry)
    array = np.asarray(entries, dtype=np.float64)
    if array.shape != (count,):
        raise _value_error(name, expected, _Said(f"{len(entries)} weights"))
    if not np.isfinite(array).all() or (array < 0).any() or not array.any():
        raise _value_error(name, expected, value)
    scaled = array / array.max()  # keeps the sum finite for weights near the float limit
    cumulative: np.ndarray = np.cumsum(scaled)
    cdf: np.ndarray = cumulative / cumulative[-1]
    cdf[-1] = 1.0
    return cdf


def image_layout(image: np.ndarray, where: str) -> None:
    """Check that an image's dtype and channels are ones rankaug can resample.

    Args:
        image: An ``HxW`` or ``HxWxC`` array.
        where: Where it came from, e.g. ``"dataset[3] image"``.

    Raises:
        TypeError: If its dtype is not one of :data:`IMAGE_DTYPES`.
        ValueError: If it is empty, not 2-D or 3-D, or has more than
            :data:`MAX_CHANNELS` channels.

    >>> image_layout(np.zeros((2, 2), np.float16), "dataset[0] image")
    Traceback (most recent call last):
    ...
    TypeError: dataset[0] image must have a dtype among uint8, uint16, ..., got float16
    """
    if image.dtype.name not in IMAGE_DTYPES:
        raise TypeError(
            f"{where} must have a dtype among {', '.join(IMAGE_DTYPES)}, got {image.dtype}"
        )
    if image.ndim not in (2, 3):
        raise ValueError(f"{where} must be an HxW or HxWxC array, got shape {image.shape}")
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"{where} must not be empty, got shape {image.shape}")
    if image.ndim == 3 and not 1 <= image.shape[2] <= MAX_CHANNELS:
        raise ValueError(f"{where} must have 1 to {MAX_CHANNELS} channels, got shape {image.shape}")


def fill_values(value: object, name: str) -> tuple[float, ...]:
    """A fill value: one finite number, or one per channel.

    The range of the image's dtype is checked when the dtype is known (see
    :func:`fill_fits`).

    >>> fill_values(114, "fill")
    (114.0,)
    >>> fill_values([0, 0, "x"], "fill")
    Traceback (most recent call last):
    ...
    TypeError: fill must be a number or a sequence of numbers, got [0, 0, 'x'] of type list
    """
    expected = "a number or a sequence of numbers"
    values = (value,) if _is_real(value) else value
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise _type_error(name, expected, value)
    entries = list(values)
    if not entries or not all(map(_is_real, entries)):
        raise _type_error(name, expected, value)
    out = tuple(float(v) for v in entries)
    if not all(map(math.isfinite, out)):
        raise _value_error(name, "finite", value)
    return out


def fill_fits(values: Sequence[float], name: str, dtype: np.dtype[Any]) -> None:
    """Check that fill ``values`` can be stored in ``dtype`` without wrapping or rounding.

    Raises:
        ValueError: If a value is outside the dtype's range, or fractional for an
            integer dtype.

    >>> fill_fits((300.0,), "fill", np.dtype(np.uint8))
    Traceback (most recent call last):
    ...
    ValueError: fill must be whole numbers in [0, 255] (the image's dtype is uint8), got (300.0,)
    """
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if any(v != int(v) or not info.min <= v <= info.max for v in values):
            raise _value_error(
                name,
                f"whole numbers in [{info.min}, {info.max}] (the image's dtype is {dtype})",
                tuple(values),
            )
    elif dtype.kind == "b":
        if any(v not in (0.0, 1.0) for v in values):
            raise _value_error(name, f"0 or 1 (the image's dtype is {dtype})", tuple(values))
    elif dtype.kind == "f":
        limit = float(np.finfo(dtype).max)
        if any(abs(v) > limit for v in values):
            raise _value_error(
                name, f"within ±{limit:g} (the image's dtype is {dtype})", tuple(values)
            )
