"""The declared dtypes of a Hugging Face dataset's numeric columns, given back.

A ``datasets`` dataset in the ``numpy`` or ``torch`` format gives an ``Array2D`` ...
``Array5D`` column of integers as ``int64`` and one of floats as ``float32``, whatever
its declared dtype (a ``bool`` one as ``bool``): an image declared
``Array3D(shape=(H, W, 3), dtype="uint8")`` comes out ``int64`` (map-style and streamed
alike), and so does a ``List`` of them (masks), a ``List`` (``Sequence``) of numbers,
nested or not (an image stored as lists of lists of ``Value("uint8")``, ``int32``
labels), and, in the ``torch`` format, a scalar ``Value`` (the ``numpy`` format gives
those as declared). A column declared in the dtype it comes in is not recorded, so the
adapters keep their fast path, and nor is one declared ``float64``: the format rounded
it to ``float32``, which is what it holds (``float64`` would not give its digits back).
:func:`declared_dtypes` reads each such column's declared dtype from the dataset's
features; the adapters read a row's value there back in it (:func:`in_declared_dtypes`),
so an albumentations or rankaug transform gets, and the output holds, the dtype the user
declared (a callable transform gets the row as the dataset gave it). A value that the
declared dtype cannot hold exactly (a transform of the dataset's own changed it) is
refused, never wrapped around.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import numpy as np
import torch

__all__ = ["NONE_DECLARED", "Declared", "declared_dtypes", "in_declared_dtypes"]

#: The ``datasets`` features of a fixed-shape array (their ``dtype`` is the declared one).
_ARRAYS: Final = frozenset({"Array2D", "Array3D", "Array4D", "Array5D"})
_LISTS: Final = frozenset({"List", "LargeList", "Sequence"})  # a list of them: ``.feature``


class Declared(NamedTuple):
    """A numeric column's declared dtype, in the container its format gives."""

    dtype: np.dtype[Any]  # the declared dtype
    tensor: torch.dtype | None  # the same in torch (the ``torch`` format), else ``None``
    feature: str  # the feature, for messages: "Array3D(shape=(4, 5, 3), dtype='uint8')"


#: No array column to restore (the adapters' default).
NONE_DECLARED: Final[Mapping[tuple[str, ...], Declared]] = MappingProxyType({})


def declared_dtypes(
    features: Mapping[str, Any], format_type: str, options: Mapping[str, Any], columns: Any
) -> dict[tuple[str, ...], Declared]:
    """The numeric columns of a formatted Hugging Face dataset, by path, with their dtypes.

    Args:
        features: The dataset's ``features``.
        format_type: Its format, ``"numpy"`` or ``"torch"``.
        options: Its format options: one that sets a ``dtype`` is the user's choice, kept.
        columns: The formatted columns, or ``None`` for all.

    Returns:
        ``{("image",): Declared(dtype("uint8"), ...)}``; empty when nothing is to restore.
        A column declared in the dtype its format gives (``int64``, ``float32``, ``bool``;
        any for a scalar ``Value`` in the ``numpy`` format) is left out: it comes as
        declared. So is one of floats wider than the format gives (``float64``, as
        ``Dataset.from_dict`` infers Python floats): the format rounded its values to
        ``float32``, and ``float64`` would only claim the digits it lost.
    """
    if "dtype" in options:
        return {}
    out: dict[tuple[str, ...], Declared] = {}
    chosen = {k: v for k, v in features.items() if columns is None or k in columns}
    for path, feature, leaf in _arrays(chosen, ()):
        try:
            dtype = np.dtype(leaf.dtype)
        except TypeError:  # "string", "timestamp[s]"...: not numbers, as they come
            continue
        if dtype.kind not in "biuf":
            continue
        scalar = feature is leaf and type(leaf).__name__ == "Value"
        given = dtype if scalar and format_type == "numpy" else _given(dtype)
        if dtype == given:
            continue  # int64, float32, bool, a numpy scalar: as they come (the fast path)
        if dtype.kind == "f" and dtype.itemsize > given.itemsize:
            continue  # float64: rounded to float32 already, which float64 would not undo
        tensor = None
        if format_type == "torch":
            try:
                tensor = torch.from_numpy(np.zeros(0, dtype)).dtype
            except TypeError:  # no torch dtype for it (uint32 in an old torch): as it comes
                continue
        out[path] = Declared(dtype, tensor, repr(feature))
    return out


def _given(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype the ``numpy`` and ``torch`` formats give an array column declared ``dtype``."""
    if dtype.kind in "iu":
        return np.dtype(np.int64)
    return np.dtype(np.float32) if dtype.kind == "f" else dtype


def in_declared_dtypes(sample: Any, declared: Mapping[tuple[str, ...], Declared]) -> Any:
    """``sample`` with its array columns in their declared dtypes.

    A dict holding such a value in another dtype is copied (and so are the dicts on its
    path); the containers are kept, and every other value is the sample's own.

    Raises:
        ValueError: If a value does not fit its declared dtype exactly (naming the column).
    """
    if not isinstance(sample, Mapping):
        return sample
    out = sample
    for path, want in declared.items():
        out = _restored_at(out, path, 0, want)
    return out


def _restored_at(mapping: Any, path: tuple[str, ...], depth: int, want: Declared) -> Any:
    key = path[depth]
    if not isinstance(mapping, Mapping) or key not in mapping:
        return mapping
    value = mapping[key]
    if depth + 1 < len(path):
        new = _restored_at(value, path, depth + 1, want)
    else:
        new = _cast(value, want, ".".join(path))
    return mapping if new is value else {**mapping, key: new}


def _cast(value: Any, want: Declared, column: str) -> Any:
    if isinstance(value, list | tuple) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "O" and value.ndim
    ):  # ragged lists of numbers: each row an array (numpy) or a tensor (torch)
        items = [_cast(item, want, column) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        if isinstance(value, np.ndarray):
            out = np.empty(value.shape, object)
            for k, item in enumerate(items):
                out[k] = item
            return out
        return type(value)(items)
    if isinstance(value, np.ndarray):
        if value.dtype == want.dtype or value.dtype.kind not in "biuf":
            return value
        _check_fits(value, want, column)
        return value.astype(want.dtype)
    if isinstance(value, torch.Tensor) and want.tensor is not None:
        if value.dtype == want.tensor or value.is_complex():
            return value
        _check_fits(value.numpy(force=True), want, column)
        return value.to(want.tensor)
    return value


def _check_fits(values: np.ndarray, want: Declared, column: str) -> None:
    if _fits(values, want.dtype):
        return
    low, high = values.min(), values.max()
    raise ValueError(
        f"the Hugging Face column {column!r} is declared {want.feature}, which its format "
        f"gives as {values.dtype}, and rankaug reads it back as {want.dtype}; but this row "
        f"holds values from {low} to {high}, which {want.dtype} cannot hold exactly: "
        f"declare the column's real dtype (dataset.cast_column({column!r}, ...))"
    )


def _fits(values: np.ndarray, dtype: np.dtype[Any]) -> bool:
    """Whether ``values`` are all exactly ``dtype`` values."""
    if not values.size:
        return True
    if dtype.kind == "b":
        return bool(((values == 0) | (values == 1)).all())
    if dtype.kind in "iu" and values.dtype.kind in "biu":
        info = np.iinfo(dtype)
        return bool(info.min <= values.min() and values.max() <= info.max)
    with np.errstate(over="ignore", invalid="ignore"):
        back = values.astype(dtype).astype(values.dtype)
    return bool(np.array_equal(back, values, equal_nan=values.dtype.kind == "f"))


def _arrays(
    features: Mapping[str, Any], prefix: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
    """The numeric features among ``features``, nested in dicts: path, feature and leaf.

    A list of arrays (``List(Array2D(...))``: per-object masks) is one, given stacked;
    so is a list of numbers (``List(Value(...))``, ``Sequence``), nested or not, whose
    leaf is the ``Value``; a scalar ``Value`` is its own leaf.
    """
    for name, feature in features.items():
        path = (*prefix, name)
        if isinstance(feature, Mapping):
            yield from _arrays(feature, path)
            continue
        leaf = feature
        while type(leaf).__name__ in _LISTS:
            leaf = getattr(leaf, "feature", None)
        if _is_array(leaf) or (
            type(leaf).__name__ == "Value" and isinstance(getattr(leaf, "dtype", 0), str)
        ):
            yield path, feature, leaf


def _is_array(feature: object) -> bool:
    return type(feature).__name__ in _ARRAYS and isinstance(getattr(feature, "dtype", 0), str)
