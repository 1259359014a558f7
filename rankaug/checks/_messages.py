"""How every check words its errors, and the type tests they share."""

from __future__ import annotations

import numbers

import numpy as np

__all__: list[str] = []


class Said(str):
    """A description of a value, shown as it is in a message (not quoted)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def type_error(name: str, expected: str, value: object, *, short: bool = False) -> TypeError:
    shown = repr(value)
    if len(shown) > 80 or "\n" in shown:
        shown = _shaped(value) or (f"{shown:.80}" if short else shown)
    return TypeError(f"{name} must be {expected}, got {shown} of type {type(value).__name__}")


def _shaped(value: object) -> str | None:
    """An array's or a tensor's shape and dtype, for one too long to print; else ``None``."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if dtype is None or not isinstance(shape, tuple) or not shape:
        return None
    return f"a value of shape {tuple(shape)} and dtype {dtype}"


def value_error(name: str, expected: str, value: object) -> ValueError:
    return ValueError(f"{name} must be {expected}, got {value!r}")


def is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
