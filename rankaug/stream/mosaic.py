"""``StreamingMosaic``: :class:`~rankaug.MosaicDataset` over a stream, partners from a window.

``MosaicDataset(stream, buffer_size=B, ...)`` makes one. The window, the first and last
samples of a pass and the record's ``indices`` and ``ids``: see
:mod:`rankaug.stream.window`. A pass of a single sample gives it alone, letterboxed
(``applied`` is false).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from rankaug.stream.window import WindowStream

__all__ = ["StreamingMosaic"]

T_co = TypeVar("T_co", covariant=True)


class StreamingMosaic(WindowStream[T_co]):
    """YOLO-style mosaics over an iterable dataset, partners from a window of the stream.

    The arguments of :class:`~rankaug.MosaicDataset` (but ``pool`` and ``weights``,
    which name indices), plus ``buffer_size`` and ``sample_id``; see
    :mod:`rankaug.stream.window` for the window, and
    :class:`~rankaug.stream.window.WindowStream` for those arguments.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value (``pool=`` or ``weights=``).

    Example:
        >>> from rankaug import MosaicDataset
        >>> from rankaug.datasets import SyntheticDetection
        >>> data = SyntheticDetection(6, image_size=32)
        >>> stream = ({**data[i], "id": i} for i in range(6))  # one-shot: refused
        >>> MosaicDataset(stream, seed=0)
        Traceback (most recent call last):
        ...
        TypeError: dataset must be re-iterable, got the one-shot iterator generator ...
        >>> from torch.utils.data import IterableDataset
        >>> class Stream(IterableDataset):
        ...     def __iter__(self):
        ...         return ({**data[i], "id": i} for i in range(6))
        >>> mosaics = list(MosaicDataset(Stream(), seed=0, output_size=48, buffer_size=3,
        ...                              sample_id="id"))
        >>> [m["mosaic"]["ids"][0] for m in mosaics]
        [0, 1, 2, 3, 4, 5]
        >>> 0 in mosaics[0]["mosaic"]["ids"][1:]
        False
    """

    alone: ClassVar[dict[str, Any]] = {"p": 0.0, "close_mosaic": 0}

    def map_class(self) -> Callable[..., Any]:
        """:class:`~rankaug.MosaicDataset`."""
        from rankaug.mosaic import MosaicDataset  # it imports this package

        return MosaicDataset
