"""Per-box and per-keypoint fields of several samples, joined into one output's.

A multi-sample wrapper (``MosaicDataset``, MixUp, CutMix, copy-paste) gives its output
the main sample's containers and dtypes, and nothing of a partner's may be silently
converted on the way. :func:`join` is the one rule for every such field:

* The output has the **main sample's dtype** when every partner's value fits it
  exactly (an ``int64`` 3 into ``int8``; ``float64`` into ``float32`` rounds as a box
  does, but a finite value must stay finite). A value that does not fit (300 into
  ``int8``, 1.5 or ``nan`` into an integer, 2 into ``bool``, a string into numbers) is
  refused with a ``ValueError`` naming the field, the sample and both dtypes.
* **Strings** keep the main sample's kind (``str`` or ``bytes``) and widen to the
  longest: ``'elephant'`` is never cut to the main sample's ``<U3``.
* An **empty field** takes the others' rows (``[]`` beside ``(N, 1)`` classes reads
  ``(0, 1)``); rows of two shapes are refused, naming the field and both samples.
* An **empty field without a dtype** (``[]``, as albumentations and torchvision
  annotate a background image; or no field at all on a sample without boxes, see
  :func:`read_field`) decides nothing: the samples with entries do (their common
  dtype), and ``int64`` when none has one. An empty *array* keeps its dtype, as any
  array does.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any, Final, Protocol

import numpy as np

__all__ = ["UNTYPED", "Source", "join", "join_kept", "read_field", "untyped"]

UNTYPED: Final = np.zeros((0,), dtype=object)
"""An empty field given without a dtype (an empty list, or no field on a box-less sample).

Any empty ``object`` array reads the same (a selection of it, say): it holds nothing to
decide a dtype with.
"""

_DEFAULT: Final = np.dtype(np.int64)
"""The dtype of a field that no sample gives entries or a dtype for (labels, usually)."""


class Source(Protocol):
    """A sample values come from (a :class:`~rankaug._multi.parts.Part`): its index."""

    @property
    def index(self) -> int:
        """Its dataset index, for messages."""
        ...


def read_field(value: Any) -> np.ndarray:
    """A sample's field as an array; :data:`UNTYPED` for an empty one without a dtype.

    >>> read_field([]) is UNTYPED, read_field(None) is UNTYPED
    (True, True)
    >>> read_field(np.zeros(0, np.int8)).dtype
    dtype('int8')
    """
    if value is None:
        return UNTYPED
    array = np.asarray(value)
    if not array.size and array.ndim == 1 and not hasattr(value, "dtype"):
        return UNTYPED
    return array


def join(field: str, values: Sequence[np.ndarray], sources: Sequence[Source]) -> np.ndarray:
    """The samples' values of ``field``, main first, as one array (see the module docstring).

    Args:
        field: The field's name, for messages.
        values: Each sample's values (what it contributes), the main sample's first.
        sources: The samples (their dataset indices, read for messages only), aligned
            with ``values``.

    Returns:
        The values, concatenated, in the output's dtype.

    Raises:
        ValueError: If a value does not fit the output's dtype (the message names the
            field, the sample as ``dataset[index]`` and the dtypes).

    >>> from types import SimpleNamespace
    >>> two = [SimpleNamespace(index=4), SimpleNamespace(index=7)]
    >>> join("labels", [np.array([1], np.int8), np.array([2])], two).dtype
    dtype('int8')
    >>> join("names", [np.array(["cat"]), np.array(["elephant"])], two).tolist()
    ['cat', 'elephant']
    >>> join("labels", [UNTYPED, np.array([3], np.int32)], two).dtype
    dtype('int32')
    >>> join("labels", [np.array([5], np.int8), np.array([300])], two)
    Traceback (most recent call last):
    ...
    ValueError: dataset[7] 'labels' holds 300 (int64), which the main sample dataset[4]'s \
int8 cannot hold exactly: give every sample's 'labels' one dtype
    """
    try:
        out = np.concatenate(values)
    except ValueError:  # rows of two shapes: an empty [] beside (N, 1), say
        values = _rows_alike(field, values, sources)
        out = np.concatenate(values)
    main = values[0]
    if out.dtype == main.dtype and main.dtype.kind in "biu":
        return out  # the usual case: every sample's dtype casts exactly into the main's
    target = _target(main, values)
    if untyped(main):
        origin = f"{target} of the other samples (dataset[{sources[0].index}]'s is empty)"
    else:
        origin = f"the main sample dataset[{sources[0].index}]'s {target}"
    if target.kind in "US":  # strings widen to the longest, of the main's kind
        chars = [v.dtype.itemsize // _width(v.dtype) for v in values if v.dtype.kind == target.kind]
        target = np.dtype((target.type, max(chars)))
    for value, source in zip(values, sources, strict=True):
        if len(value) and value.dtype != target:
            bad = _misfit(value, target)
            if bad is not None:
                raise ValueError(
                    f"dataset[{source.index}] {field!r} holds {bad!r} ({value.dtype}), which "
                    f"{origin} cannot hold exactly: give every sample's {field!r} one dtype"
                )
    return out if out.dtype == target else out.astype(target)


def join_kept(
    field: str, values: Sequence[np.ndarray], keep: list[bool], sources: Sequence[Source]
) -> np.ndarray:
    """``join(field, values, sources)[keep]``, ``keep`` a list of one bool per row.

    The usual field (1-D, every sample's of the main sample's native integer or bool
    dtype, which :func:`join` returns as it concatenates) is gathered in Python: its
    kept rows, then one array. After a mosaic's pixel work that costs less than the
    concatenation and the boolean index, numpy paths that run cold there.

    >>> from types import SimpleNamespace
    >>> two = [SimpleNamespace(index=4), SimpleNamespace(index=7)]
    >>> join_kept("labels", [np.array([1, 2], np.int8), np.array([3])], [True, False, True], two)
    array([1, 3], dtype=int8)
    """
    dtype = values[0].dtype
    if dtype.kind in "biu" and dtype.isnative:
        rows: list[Any] = []
        for value in values:
            kind = value.dtype  # the same dtype, known by identity first (no cast lookup)
            if (kind is not dtype and kind != dtype) or value.ndim != 1:
                break
            rows += value.tolist()
        else:  # exact: each integer (or bool) is one of the dtype, and goes back into it
            return np.array(list(compress(rows, keep)), dtype)
    joined: np.ndarray = join(field, values, sources)[np.array(keep, dtype=bool)]
    return joined


def _rows_alike(
    field: str, values: Sequence[np.ndarray], sources: Sequence[Source]
) -> Sequence[np.ndarray]:
    """The values with rows of one shape: an empty one takes the others'.

    ``[]`` beside ``(N, 1)`` classes reads ``(0, 1)``; rows of two shapes are refused,
    naming both samples.

    >>> from types import SimpleNamespace
    >>> two = [SimpleNamespace(index=4), SimpleNamespace(index=7)]
    >>> [v.shape for v in _rows_alike("cls", [UNTYPED, np.zeros((2, 1))], two)]
    [(0, 1), (2, 1)]
    >>> _rows_alike("cls", [np.zeros((1, 2)), np.zeros((2, 1))], two)
    Traceback (most recent call last):
    ...
    ValueError: dataset[7] 'cls' has rows of shape (1,), the main sample dataset[4]'s \
(2,): give every sample's 'cls' one shape
    """
    filled = [(v, s) for v, s in zip(values, sources, strict=True) if v.size]
    shaped = filled or [(v, s) for v, s in zip(values, sources, strict=True) if v.ndim > 1]
    if not shaped:
        return values
    rows = shaped[0][0].shape[1:]
    for value, source in filled[1:]:
        if value.shape[1:] != rows:
            first = filled[0][1]
            whose = "the main sample " if first is sources[0] else ""
            raise ValueError(
                f"dataset[{source.index}] {field!r} has rows of shape {value.shape[1:]}, "
                f"{whose}dataset[{first.index}]'s {rows}: give every sample's {field!r} one shape"
            )
    return [v if v.shape[1:] == rows or v.size else v.reshape((0, *rows)) for v in values]


def untyped(value: np.ndarray) -> bool:
    """Whether ``value`` is empty without a dtype (see :data:`UNTYPED`)."""
    return value.dtype.kind == "O" and not value.size


def _width(dtype: np.dtype[Any]) -> int:
    """Bytes per character of a string dtype."""
    return 4 if dtype.kind == "U" else 1


def _target(main: np.ndarray, values: Sequence[np.ndarray]) -> np.dtype[Any]:
    """The output's dtype before strings widen: the main's, or the filled samples'."""
    if not untyped(main):
        return main.dtype
    filled = [v for v in values if len(v)]
    if not filled:
        return _DEFAULT
    kinds = {v.dtype.kind for v in filled}
    if kinds <= set("biuf") or len(kinds) == 1:
        return np.result_type(*filled)
    return filled[0].dtype  # strings, numbers or objects mixed: the first decides


def _misfit(value: np.ndarray, target: np.dtype[Any]) -> Any:
    """The first entry of ``value`` a cast to ``target`` would change, else ``None``."""
    kind, theirs = target.kind, value.dtype.kind
    if kind == "O" or (kind == theirs and kind in "US"):
        return None
    if kind not in "biuf" or theirs not in "biuf":  # strings, objects, numbers: no mixing
        return _python(value[0])
    if np.can_cast(value.dtype, target) and not (kind == "f" and theirs in "iu"):
        return None  # safe (numpy calls int64 into float64 safe: it rounds above 2**53)
    with np.errstate(invalid="ignore", over="ignore"):
        cast = value.astype(target)
        if kind == "f" and theirs == "f":  # rounded, as boxes are; finite stays finite
            wrong = np.isfinite(value) & ~np.isfinite(cast)
        else:  # compared both ways: int8 -56 is uint8 200 again, float 2**53 int 2**53 + 1
            wrong = (cast != value) | (cast.astype(value.dtype) != value)
    return _python(value[wrong][0]) if wrong.any() else None


def _python(entry: Any) -> Any:
    """A numpy scalar as the Python value it holds, for messages."""
    return entry.item() if isinstance(entry, np.generic) else entry
