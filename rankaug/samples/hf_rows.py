"""The typed empty values of a Hugging Face dataset's rows without objects.

A ``datasets.Dataset`` in the ``numpy`` format gives a row without objects its nested
per-object lists (``objects.bbox``, declared ``List(List(Value("float32"), length=4))``)
as ``array([], dtype=object)``, and the ``torch`` format as ``[]``, while every other row
holds a ``float32`` ``(N, 4)`` array or tensor. Such a value has no dtype to give an
output back in. :func:`empty_values` reads, from the dataset's declared features and
its format, what the other rows hold there, as an empty ``(0, 4)`` value of their dtype
and container (made by the dataset's own formatter); the adapters read a box-less row's
untyped value as that (:func:`typed`), so its output has the other rows' dtype.
"""

from __future__ import annotations

import copy
import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeVar

import numpy as np
import torch

from rankaug.samples.hf_arrays import declared_dtypes, in_declared_dtypes

__all__ = ["bound_to", "empty_values", "typed", "untyped_empty"]

_FORMATS: Final = ("numpy", "torch")  # the formats that give a box-less row no dtype
_DEPTH: Final = 16  # how many wrappers (``.dataset``) deep the Hugging Face dataset is looked for


A = TypeVar("A")


def bound_to(adapter: A, dataset: object) -> A:
    """``adapter``, or a copy of it holding ``dataset``'s typed empty values and dtypes.

    What :meth:`~rankaug.samples.DefaultAdapter.for_dataset` and
    :meth:`~rankaug.KeyMap.for_dataset` return: the copy's ``typed_empty`` (see
    :func:`empty_values`) and ``declared_dtypes`` (its array columns' declared dtypes,
    see :mod:`rankaug.samples.hf_arrays`); the adapter itself when the dataset declares
    neither.
    """
    empty = empty_values(dataset)
    declared = _declared(dataset)
    if not empty and not declared:
        return adapter
    bound = copy.copy(adapter)
    if empty:
        bound.typed_empty = empty  # type: ignore[attr-defined]
    if declared:
        bound.declared_dtypes = declared  # type: ignore[attr-defined]
    return bound


def empty_values(dataset: object) -> dict[str, Any]:
    """Per dotted path, the empty value of the other rows of a Hugging Face dataset.

    ``dataset`` is a ``datasets.Dataset`` or ``IterableDataset``, or wraps one under
    ``.dataset`` (a ``Subset``, a rankaug wrapper). Only per-row lists of numbers of a
    fixed shape, formatted ``numpy`` or ``torch``, have an entry: ``{"objects.bbox":
    array([], shape=(0, 4), dtype=float32)}``, per-object masks (``List(Array2D((H, W),
    "uint8"))``) a ``(0, H, W)`` one; a list of lists of numbers of no declared
    length (``List(List(Value("float32")))``, as ``Dataset.from_dict`` infers boxes) has
    a flat ``(0,)`` one of their dtype, the declared one (``int32`` labels, which the
    formats give other rows as ``int64``, read back so: :mod:`~rankaug.samples.hf_arrays`).
    A column of ``Dataset.flatten()`` is found under its own name (``"objects.bbox"``).

    Datasets side by side (a ``ConcatDataset``'s ``.datasets``, two splits, say) give
    their values when every one of them gives the same (paths, containers, dtypes and
    shapes); none when they differ, or one gives none.

    Args:
        dataset: The dataset a wrapper reads.

    Returns:
        The values by path; empty for any other dataset.
    """
    inner = _side_by_side(dataset)
    if inner is not None:
        values = [empty_values(each) for each in inner]
        described = _described(values[0])
        agree = all(_described(other) == described for other in values[1:])
        return values[0] if agree else {}
    found = _hugging_face(dataset)
    if found is None:
        return {}
    formats = sys.modules.get("datasets.formatting")
    if formats is None:  # pragma: no cover (loaded with every Hugging Face dataset)
        return {}
    features, format_type, kwargs, columns = found
    formatter = formats.get_formatter(format_type, features=features, **kwargs)
    out: dict[str, Any] = {}
    chosen = [c for c in features.arrow_schema if columns is None or c.name in columns]
    for path, shape, dtype in _lists(chosen, ""):  # a column's name may hold dots (flatten())
        out[path] = formatter.recursive_tensorize(np.zeros((0, *shape), dtype))
    declared = declared_dtypes(features, format_type, kwargs, columns)  # as the other rows
    named: dict[tuple[str, ...], Any] = {(".".join(p),): d for p, d in declared.items()}
    return in_declared_dtypes(out, named) if named else out


def _declared(dataset: object) -> dict[tuple[str, ...], Any]:
    """The array columns' declared dtypes (:func:`~rankaug.samples.hf_arrays.declared_dtypes`).

    Through a ``ConcatDataset`` as :func:`empty_values` reads it: when every dataset in it
    declares the same; none when they differ, or one declares none.
    """
    inner = _side_by_side(dataset)
    if inner is not None:
        each = [_declared(part) for part in inner]
        return each[0] if all(other == each[0] for other in each[1:]) else {}
    found = _hugging_face(dataset)
    return {} if found is None else declared_dtypes(*found)


def _side_by_side(dataset: object) -> list[Any] | None:
    """The datasets of the ``ConcatDataset`` ``dataset`` is or wraps (under ``.dataset``)."""
    for _ in range(_DEPTH):
        if dataset is None or type(dataset).__module__.startswith("datasets."):
            return None
        many = getattr(dataset, "datasets", None)
        if isinstance(many, list | tuple) and many:
            return list(many)
        dataset = getattr(dataset, "dataset", None)
    return None


def _described(values: dict[str, Any]) -> dict[str, tuple[type, str, tuple[int, ...]]]:
    """Each value's container, dtype and shape: what typed empty values agree on."""
    return {key: (type(v), str(v.dtype), tuple(v.shape)) for key, v in values.items()}


def untyped_empty(value: object) -> bool:
    """Whether ``value`` is empty without a dtype: ``array([], dtype=object)`` or ``[]``."""
    if type(value) is np.ndarray:
        return value.dtype.kind == "O" and not value.size
    return type(value) is list and not value


def typed(value: Any, model: Any) -> Any:
    """``value``, or a new copy of ``model`` when ``value`` is :func:`untyped_empty`."""
    if model is None or not untyped_empty(value):
        return value
    return model.clone() if isinstance(model, torch.Tensor) else np.array(model, copy=True)


def _hugging_face(dataset: object) -> tuple[Any, str, dict[str, Any], Any] | None:
    """The features, format type, format options and columns of the dataset, if known."""
    for _ in range(_DEPTH):
        if dataset is None:
            return None
        if type(dataset).__module__.startswith("datasets."):
            break
        dataset = getattr(dataset, "dataset", None)
    else:
        return None
    features = getattr(dataset, "features", None)
    if features is None or not hasattr(features, "arrow_schema"):
        return None  # an IterableDataset whose features are not known
    given = getattr(dataset, "format", None)
    if isinstance(given, Mapping):  # a Dataset
        format_type, kwargs = given.get("type"), dict(given.get("format_kwargs") or {})
        columns = given.get("columns")
    else:  # an IterableDataset (no format options)
        format_type = getattr(getattr(dataset, "_formatting", None), "format_type", None)
        kwargs, columns = {}, None
    if format_type not in _FORMATS:
        return None  # Python lists (no format), pandas, a transform...: nothing to type
    return features, format_type, kwargs, columns


def _lists(fields: Any, prefix: str) -> Iterator[tuple[str, tuple[int, ...], np.dtype[Any]]]:
    """The per-row lists of numbers of a fixed shape among ``fields``, nested in structs."""
    pa: Any = importlib.import_module("pyarrow")  # datasets' dependency, loaded with it
    for field in fields:
        path, kind = f"{prefix}{field.name}", field.type
        if pa.types.is_struct(kind):
            yield from _lists(kind, f"{path}.")
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            shape: list[int] = []
            item = kind.value_type
            array = _array_item(item)
            if array is not None:  # List(Array2D(...)): per-object masks, (0, H, W)
                yield path, *array
                continue
            while pa.types.is_fixed_size_list(item):  # List(Value, length=4): (4,)
                shape.append(item.list_size)
                item = item.value_type
            if not shape and (pa.types.is_list(item) or pa.types.is_large_list(item)):
                item = item.value_type  # List(List(Value)): rows of any length, flat (0,)
            if pa.types.is_integer(item) or pa.types.is_floating(item) or pa.types.is_boolean(item):
                yield path, tuple(shape), np.dtype(item.to_pandas_dtype())


def _array_item(item: Any) -> tuple[tuple[int, ...], np.dtype[Any]] | None:
    """The shape and dtype of an ``Array2D`` ... ``Array5D`` of numbers of a fixed shape."""
    shape, dtype = getattr(item, "shape", None), getattr(item, "value_type", None)
    if not (isinstance(shape, tuple) and isinstance(dtype, str)):
        return None  # not a datasets array (pyarrow's own types have no str value_type)
    if not all(type(n) is int for n in shape):
        return None  # a first dimension of no fixed length: no empty value to give
    try:
        numbers = np.dtype(dtype)
    except TypeError:  # "string", a time...
        return None
    return (tuple(shape), numbers) if numbers.kind in "biuf" else None
