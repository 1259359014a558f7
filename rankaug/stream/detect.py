"""Which datasets the wrappers stream: the dispatch rule of their constructors.

A dataset is streamed when it is a ``torch.utils.data.IterableDataset`` (also one
with ``__getitem__`` and ``__len__``, as litdata's and mosaicml-streaming's are), or
when it is iterable but lacks ``__getitem__`` or ``__len__`` (a Hugging Face
``datasets.IterableDataset``, any re-iterable of samples). Everything else, lists
included, is map-style and keeps the map-style wrappers.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any, Final

from torch.utils.data import IterableDataset

__all__ = ["Streamable", "check_stream", "is_stream"]

#: The keywords of the streaming wrappers that name no map-style argument.
_STREAM_ONLY: Final = ("buffer_size", "sample_id")


def is_stream(dataset: object) -> bool:
    """Whether the wrappers stream ``dataset`` (see the module docstring).

    >>> is_stream([1, 2, 3]), is_stream({"a": 1}.keys()), is_stream("abc")
    (False, True, False)
    """
    if isinstance(dataset, IterableDataset):
        return True
    if hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__"):
        return False
    return hasattr(dataset, "__iter__") and not isinstance(dataset, str | bytes)


def check_stream(dataset: object) -> Any:
    """``dataset``, checked to be a re-iterable stream of samples.

    Raises:
        TypeError: If it is map-style, not iterable, or a one-shot iterator (every
            pass is a new ``iter(dataset)``: a generator would be empty from the second
            epoch on).
    """
    if not is_stream(dataset):
        raise TypeError(
            "dataset must be an IterableDataset or another iterable of samples without "
            f"__getitem__/__len__, got {type(dataset).__name__}"
        )
    if isinstance(dataset, Iterator) and not isinstance(dataset, IterableDataset):
        raise TypeError(
            f"dataset must be re-iterable, got the one-shot iterator {type(dataset).__name__} "
            "(each pass calls iter(dataset) again): pass the iterable it comes from, or an "
            "IterableDataset whose __iter__ makes it"
        )
    return dataset


class Streamable:
    """Mixin of the map-style wrappers: their constructor gives a stream its streaming class.

    A class that names ``_streaming`` (the streaming class's name in
    :mod:`rankaug.stream`) in its own body dispatches; its subclasses do not, and stay
    map-style. Being a base class, it leaves ``inspect.signature`` the ``__init__``'s.
    """

    def __new__(cls, dataset: Any = None, *args: Any, **kwargs: Any) -> Any:
        """The streaming class's instance when ``dataset`` is a stream, else ``cls``'s."""
        name = cls.__dict__.get("_streaming")
        if name is not None:
            import rankaug.stream

            streaming = getattr(rankaug.stream, name)
            if is_stream(dataset):
                return streaming(dataset, *args, **kwargs)
            if kwargs.keys() & set(_STREAM_ONLY):  # copies and unpickling pass none
                _refuse_stream_only(cls, streaming, dataset, kwargs)
        return super().__new__(cls)


def _refuse_stream_only(cls: type[Any], streaming: type[Any], dataset: object,
                        kwargs: dict[str, Any]) -> None:  # fmt: skip
    """Refuse a keyword only the streaming class takes (``buffer_size=``, ``sample_id=``).

    Raises:
        ValueError: Naming it, rather than Python's ``unexpected keyword argument``.
    """
    own = inspect.signature(cls.__init__).parameters
    taken = inspect.signature(streaming.__init__).parameters
    for name in _STREAM_ONLY:
        if name in kwargs and name in taken and name not in own:
            raise ValueError(
                f"{name}={kwargs[name]!r} is for streams (an IterableDataset): "
                f"{cls.__name__} over a map-style dataset ({type(dataset).__name__}) draws "
                "its samples by index; drop it, or pass a stream"
            )
