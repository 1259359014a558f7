"""Scalar helpers for the per-sample paths: comparisons in place of ``min`` and ``max``.

In CPython 3.11 the builtins ``min`` and ``max`` take the generic calling convention
(their arguments packed into a tuple, keywords parsed; vectorcall came later,
python/cpython gh-90350): about 0.2 µs a call here, ten times a comparison. A mosaic's
layout clamps and compares some sixty numbers per sample, so its per-sample paths
compare instead, by :func:`clamp` or written out. The values are the builtins' (of two
equal numbers, the first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

__all__ = ["clamp", "round_float"]

N = TypeVar("N", int, float)


def clamp(value: N, low: N, high: N) -> N:
    """``min(max(value, low), high)`` for ``low <= high``, by comparisons.

    >>> clamp(-3, 0, 9), clamp(12, 0, 9), clamp(4, 0, 9)
    (0, 9, 4)
    """
    return low if value < low else high if value > high else value


round_float: Final[Callable[[float], int]] = float.__round__
"""``round(x)`` of a float ``x`` (an int is refused: ``TypeError``), the same int.

The method itself, without the builtin's lookup of ``__round__`` on the argument's
type: about 25 ns a call here against 57. A mosaic's layout rounds some 25 to 50
floats per sample.

>>> round_float(2.5), round_float(3.5), round_float(-0.5)
(2, 4, 0)
"""
