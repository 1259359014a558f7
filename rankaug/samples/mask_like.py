"""Whether a value looks like a mask of an image: by its height and width.

A field of any name that covers the image (an ``HxW`` array, ``NxHxW`` instance masks, a
PIL image of its size) is a mask to :mod:`rankaug.samples.unread`, which refuses it
unread, and to :mod:`rankaug.samples.suggest`, which names it in the ``adapter=`` line.
"""

from __future__ import annotations

from rankaug.samples.images import _is_pil

__all__ = ["covers", "shape_of"]


def covers(value: object, hw: tuple[int, int]) -> bool:
    """Whether ``value`` looks like a mask of an image of height and width ``hw``.

    An array or tensor ``HxW``, ``HxWxC`` or ``CxHxW`` (``NxHxW``) of its size, a PIL
    image of its size, or a list or tuple of ``HxW`` ones (instance masks, one per
    object).

    >>> import numpy as np
    >>> covers(np.zeros((2, 4, 6)), (4, 6)), covers([np.zeros((4, 6))], (4, 6))
    (True, True)
    >>> covers(np.zeros((4, 6)), (6, 4)), covers((4, 6), (4, 6)), covers(np.zeros(4), (4, 6))
    (False, False, False)
    """
    if isinstance(value, list | tuple) and value:
        shape = shape_of(value[0])
        return shape is not None and shape == hw
    shape = shape_of(value)
    if shape is None or len(shape) not in (2, 3):
        return False
    return shape[:2] == hw or shape[-2:] == hw


def shape_of(value: object) -> tuple[int, ...] | None:
    """An array's or tensor's shape; a PIL image's ``(H, W)`` (``(H, W, C)``), else ``None``."""
    if _is_pil(value):
        width, height = value.size  # type: ignore[attr-defined]
        bands = len(value.getbands())  # type: ignore[attr-defined]
        return (height, width) if bands == 1 else (height, width, bands)
    shape = getattr(value, "shape", None)
    return None if shape is None else tuple(shape)
