"""Which datasets the wrappers stream: the dispatch rule of their constructors.

A dataset is streamed when it is a ``torch.utils.data.IterableDataset`` (also one
with ``__getitem__`` and ``__len__``, as litdata's and mosaicml-streaming's are), or
when it is iterable but lacks ``__getitem__`` or ``__len__`` (a Hugging Face
``datasets.IterableDataset``, any re-iterable of samples). Everything else, lists
included, is map-style and keeps the map-style wrappers.

A stream of batches (webdataset's ``.batched(n)`` as its last word on batching) is taken,
with a warning: each batch would be one sample to the wrapper, its samples sharing one
draw. So is a webdataset pipeline that shuffles by a fixed seed (``WebDataset(urls,
shardshuffle=n)`` without ``detshuffle=True``, a ``.shuffle(n, seed=s)``): it reads one
order every epoch, which the wrapper's epoch cannot reach.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator
from typing import Any, Final

from torch.utils.data import IterableDataset

from rankaug.errors import RankaugWarning, outside_level

__all__ = ["Streamable", "batch_size", "check_stream", "fixed_shuffles", "is_stream"]

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
    size = batch_size(dataset)
    if size is not None:
        warnings.warn(
            f"dataset yields batches (webdataset's .batched({size}) is its last batching "
            "stage), and a rankaug wrapper augments each item it reads as one sample: the "
            "samples of a batch would share one draw (one flip, one crop), and "
            "keying='sample' would find a list of ids. Batch after the wrapper "
            f"(DataLoader(wrapper, batch_size={size})), or add .unbatched() after .batched()",
            RankaugWarning,
            stacklevel=outside_level(),
        )
    seeds = fixed_shuffles(dataset)
    if seeds:
        warnings.warn(
            f"dataset shuffles by a fixed seed (webdataset's shuffle stage, seed={seeds[0]!r}: "
            "WebDataset(urls, shardshuffle=n) without detshuffle=True, or .shuffle(n, "
            "seed=...)), so it reads the same order every epoch, which the wrapper's epoch "
            "cannot change; pass detshuffle=True to WebDataset (the wrapper hands its "
            "detshuffle the epoch), or shuffle without a seed",
            RankaugWarning,
            stacklevel=outside_level(),
        )
    return dataset


def fixed_shuffles(dataset: object) -> list[Any]:
    """The seeds of webdataset's ``shuffle`` stages with one in ``dataset``'s pipeline.

    Such a stage makes its generator from its seed at every pass: one order every epoch
    (``detshuffle``, which the wrapper hands its epoch, is not one; nor is
    ``shardshuffle=False``'s, whose buffer of none shuffles nothing). None counts in a
    pipeline that draws its shards with ``ResampledShards`` (``resampled=True``).
    """
    stages = getattr(dataset, "pipeline", None)
    found: list[Any] = []
    for stage in stages if isinstance(stages, list) else ():
        if type(stage).__name__ == "ResampledShards":
            return []  # it draws its shards anew each epoch: the order changes
        if getattr(getattr(stage, "f", None), "__name__", None) != "_shuffle":
            continue
        size = next(iter(getattr(stage, "args", None) or ()), 1000)  # its buffer
        seed = (getattr(stage, "kw", None) or {}).get("seed")
        if seed is not None and not isinstance(size, bool) and size > 1:
            found.append(seed)
    return found


def batch_size(dataset: object) -> Any:
    """The ``n`` of webdataset's ``.batched(n)`` ending ``dataset``'s pipeline, else ``None``.

    The last of its ``.batched`` and ``.unbatched`` stages (by function name: webdataset
    is never imported here) says whether it yields batches.
    """
    stages = getattr(dataset, "pipeline", None)
    size = None
    for stage in stages if isinstance(stages, list) else ():
        name = getattr(getattr(stage, "f", None), "__name__", None)
        if name == "_batched":
            size = next(iter(getattr(stage, "args", None) or ()), "n")
        elif name == "_unbatched":
            size = None
    return size


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
