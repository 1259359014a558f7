"""The mix family over a stream: MixUp, CutMix and CopyPaste with partners from a window.

``MixUpDataset(stream, buffer_size=B, ...)`` (likewise ``CutMixDataset`` and
``CopyPasteDataset``) makes one. The window, the first and last samples of a pass and
the record's ``indices`` and ``ids``: see :mod:`rankaug.stream.window`. A worker's pass
of a single sample is refused with a ``ValueError``, as a map-style dataset of one is;
``CopyPasteDataset(source="flip")``, which needs no partner, takes both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rankaug.stream.window import WindowStream

__all__ = ["StreamingCopyPaste", "StreamingCutMix", "StreamingMixUp"]

T_co = TypeVar("T_co", covariant=True)


class StreamingMixUp(WindowStream[T_co]):
    """:class:`~rankaug.MixUpDataset` over an iterable dataset.

    Arguments as :class:`~rankaug.stream.window.WindowStream`'s, ``**options`` the
    MixUp's.

    Example:
        >>> import numpy as np
        >>> from torch.utils.data import IterableDataset
        >>> from rankaug import MixUpDataset
        >>> class Stream(IterableDataset):
        ...     def __iter__(self):
        ...         for k in range(4):
        ...             yield {"image": np.full((8, 8, 3), 40 * k, np.uint8), "label": k, "id": k}
        >>> mixed = MixUpDataset(Stream(), seed=0, buffer_size=2, sample_id="id", num_classes=4)
        >>> [m["mixup"]["ids"][0] for m in mixed]
        [0, 1, 2, 3]
    """

    def map_class(self) -> Callable[..., Any]:
        """:class:`~rankaug.MixUpDataset`."""
        from rankaug.mix import MixUpDataset  # it imports this package

        return MixUpDataset


class StreamingCutMix(WindowStream[T_co]):
    """:class:`~rankaug.CutMixDataset` over an iterable dataset.

    Arguments as :class:`~rankaug.stream.window.WindowStream`'s, ``**options`` the
    CutMix's.
    """

    def map_class(self) -> Callable[..., Any]:
        """:class:`~rankaug.CutMixDataset`."""
        from rankaug.mix import CutMixDataset

        return CutMixDataset


class StreamingCopyPaste(WindowStream[T_co]):
    """:class:`~rankaug.CopyPasteDataset` over an iterable dataset.

    Arguments as :class:`~rankaug.stream.window.WindowStream`'s, ``**options`` the
    CopyPaste's.
    """

    def map_class(self) -> Callable[..., Any]:
        """:class:`~rankaug.CopyPasteDataset`."""
        from rankaug.mix import CopyPasteDataset

        return CopyPasteDataset
