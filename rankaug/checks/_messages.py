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
    shown = f"{value!r:.80}" if short else repr(value)
    return TypeError(f"{name} must be {expected}, got {shown} of type {type(value).__name__}")


def value_error(name: str, expected: str, value: object) -> ValueError:
    return ValueError(f"{name} must be {expected}, got {value!r}")


def is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
