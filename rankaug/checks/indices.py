"""Indices: one index, a pool of distinct indices, sampling weights, one per sample."""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankaug.checks._messages import Said, is_int, is_real, type_error, value_error

__all__ = ["index", "index_array", "index_tuple", "per_sample", "weight_tuple", "weights"]


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
            raise type_error("index", "an integer", value) from None
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
    >>> index_array([0, 2**64], "pool", length=4)
    Traceback (most recent call last):
    ...
    ValueError: pool must be indices in [0, 4), got values from 0 to 18446744073709551616
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise type_error(name, "a sequence of indices", value)
    entries = list(value)
    for entry in entries:
        if not is_int(entry):
            raise type_error(f"every entry of {name}", "an index (integer)", entry)
    if not entries:
        raise value_error(name, "a non-empty sequence of indices", value)
    numbers = list(map(int, entries))  # checked as Python ints: 2**64 fits no int64
    low, high = min(numbers), max(numbers)
    if low < 0 or high >= length:
        raise value_error(name, f"indices in [0, {length})", Said(f"values from {low} to {high}"))
    array = np.asarray(numbers, dtype=np.int64)
    unique, counts = np.unique(array, return_counts=True)
    if len(unique) != len(array):
        twice = unique[counts > 1][:5].tolist()
        raise value_error(name, "distinct indices", Said(f"repeated entries {twice}"))
    return array


def index_tuple(value: object, name: str) -> tuple[int, ...]:
    """A flat sequence (a 1-D array, a range) of integers as a tuple of Python ints.

    Only the types are checked; the values are the dataset's to check (see
    :func:`index_array`). Ints of any size are kept as they are.

    Raises:
        TypeError: If ``value`` is not a sequence or 1-D array, or an entry not an integer.
        ValueError: If it is an array of two dimensions or more.

    >>> index_tuple(np.arange(3), "pool")
    (0, 1, 2)
    >>> index_tuple([0, 1.0], "pool")
    Traceback (most recent call last):
    ...
    TypeError: every entry of pool must be an index (integer), got 1.0 of type float
    """
    entries = _flat(value, name, "a sequence of indices")
    for entry in entries:
        if not is_int(entry):
            raise type_error(f"every entry of {name}", "an index (integer)", entry)
    return tuple(map(int, entries))


def weight_tuple(value: object, name: str) -> tuple[float, ...]:
    """A flat sequence (a 1-D array, say) of real numbers as a tuple of Python floats.

    Only the types are checked (and that each fits a float); NaN, negative and
    infinite weights are :func:`weights`'s to refuse.

    Raises:
        TypeError: If ``value`` is not a sequence or 1-D array, or an entry not a real
            number.
        ValueError: If it is an array of two dimensions or more, or an entry is too
            large for a float.

    >>> weight_tuple(np.ones(2, np.float32), "weights")
    (1.0, 1.0)
    """
    entries = _flat(value, name, "a sequence of numbers")
    out = []
    for entry in entries:
        if not is_real(entry):
            raise type_error(f"every entry of {name}", "a real number", entry)
        try:
            out.append(float(entry))
        except OverflowError:  # an int beyond float's range
            raise value_error(f"every entry of {name}", "a finite number", entry) from None
    return tuple(out)


def _flat(value: object, name: str, expected: str) -> list[Any]:
    """The entries of a sequence or a 1-D numpy array (as Python numbers)."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            shown = Said(f"an array of shape {value.shape}")
            raise value_error(name, f"{expected} (one dimension)", shown)
        return value.tolist()  # type: ignore[no-any-return]
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise type_error(name, expected, value, short=True)
    return list(value)


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
        raise type_error(name, expected, value)
    entries = list(value)
    for entry in entries:
        if not is_real(entry):
            raise type_error(f"every entry of {name}", "a real number", entry)
    array = np.asarray(entries, dtype=np.float64)
    if array.shape != (count,):
        raise value_error(name, expected, Said(f"{len(entries)} weights"))
    if not np.isfinite(array).all() or (array < 0).any() or not array.any():
        raise value_error(name, expected, value)
    scaled = array / array.max()  # keeps the sum finite for weights near the float limit
    cumulative: np.ndarray = np.cumsum(scaled)
    cdf: np.ndarray = cumulative / cumulative[-1]
    cdf[-1] = 1.0
    return cdf


def per_sample(value: object, name: str, size: int, *, shared: bool = True) -> None:
    """Check the form of one integer per sample of a batch of ``size`` (``epoch=``, say).

    An integer (``shared``: the same for every sample), a flat sequence, or a numpy
    array or tensor of an integer dtype with one value per sample (shape ``(size,)``;
    0-D: one for all, where ``shared``). The entries' values and the sequence's length
    are the caller's to check. ``shared=False`` (``index=``): one integer is a batch's
    worth only for a batch of one, else every sample would get the same key.

    Raises:
        TypeError: If ``value`` is none of those, or an array or tensor of another dtype.
        ValueError: If it has two dimensions or more (a nested sequence included), or is
            one integer for a batch of more than one where not ``shared``.

    >>> per_sample(np.arange(4).reshape(2, 2), "index", 4)
    Traceback (most recent call last):
    ...
    ValueError: index must be one value per sample, shape (4,), got an array of shape (2, 2)
    """
    expected = f"one value per sample, shape ({size},)"
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is not None and shape is not None:  # a numpy array or scalar, or a tensor
        kind = "tensor" if str(dtype).startswith("torch.") else "array"
        if not re.fullmatch(r"u?int\d+", str(dtype).removeprefix("torch.")):
            raise TypeError(f"{name} must be an integer {kind}, got dtype {dtype}")
        if len(shape) > 1:
            shown = f"{'a' if kind == 'tensor' else 'an'} {kind} of shape {tuple(shape)}"
            raise value_error(name, expected, Said(shown))
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if any(_nested(entry) for entry in value):
            raise value_error(name, expected, Said(f"a nested sequence ({_shape(value)})"))
    elif not is_int(value):
        accepted = "an integer, a sequence of integers or a 1-D integer numpy array or tensor"
        raise type_error(name, f"{accepted} (one per sample)", value, short=True)
    one = len(shape) == 0 if shape is not None else not isinstance(value, Sequence)
    if one and not shared and size != 1:
        raise value_error(name, expected, Said(f"one integer, {value!r}, for {size} samples"))


def _nested(entry: object) -> bool:
    if isinstance(entry, str | bytes):
        return False
    return isinstance(entry, Sequence) or len(getattr(entry, "shape", ())) > 0


def _shape(value: Any) -> str:
    try:
        return f"shape {np.shape(value)}"
    except ValueError:  # ragged
        return "ragged"
