"""Whether transformed numbers are integers, and fit the integer dtype they came in."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

__all__ = ["ROUND_OFF", "check_holds", "integral"]


def integral(array: np.ndarray, old: Any = None) -> bool:
    """Whether ``array`` holds integers, up to float32 round-off, stored so once rounded.

    albumentations moves boxes and keypoints as float32 fractions of the image: a flip
    of the integer box ``[5, 5, 25, 25]`` in a 50-wide image gives ``x_max``
    ``44.999998807907104``, which is 45 (a few float32 steps off), not a fraction to
    keep in floats, nor 44 as a cast would truncate it. The round-off is a fraction of
    the image's size, not of each value (a box flipped to ``x_min`` 1 in a 640-wide
    image comes back 0.99998): it is measured against the largest value of ``array``
    and of ``old``, the values it replaces.
    """
    if array.dtype.kind != "f":
        return True
    if not array.size:
        return True
    if not np.isfinite(array).all():
        return False
    off = float(np.abs(array - np.round(array)).max())
    if off == 0.0:
        return True
    scale = max(float(np.abs(array).max()), _magnitude(old), 1.0)
    return off <= ROUND_OFF * scale


def _magnitude(values: Any) -> float:
    """The largest absolute value among ``values`` (numbers), else 0."""
    if values is None:
        return 0.0
    try:
        array = np.asarray(values)
    except (TypeError, ValueError, RuntimeError):  # ragged lists, tensors on a device...
        return 0.0
    if array.dtype.kind not in "biuf" or not array.size:
        return 0.0
    return float(np.abs(array.astype(np.float64, copy=False)).max())


#: float32 round-off, relative: 8 of its steps (2**-23 each)
ROUND_OFF: Final = 2.0**-20


def check_holds(array: np.ndarray, dtype: np.dtype[Any], name: str | None) -> None:
    """Refuse integral ``array`` values that the integer ``dtype`` cannot hold.

    An array of a dtype ``dtype`` holds every value of (``uint8`` masks back as ``uint8``)
    is not read.
    """
    if not array.size or array.dtype.kind not in "iuf" or np.can_cast(array.dtype, dtype):
        return
    info = np.iinfo(dtype)
    low, high = array.min(), array.max()
    if info.min <= low and high <= info.max:
        return
    shown = "a value" if name is None else repr(name)
    raise ValueError(
        f"{shown} came in as {dtype}, which holds {info.min} to {info.max}, but the "
        f"transform gave values from {float(low):g} to {float(high):g}, which it would "
        "wrap around: give it in a wider dtype (int32, float32), or keep it in range "
        "(clip it, or drop what leaves it)"
    )
