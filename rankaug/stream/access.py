"""What a streaming wrapper answers to ``wrapper[i]``, ``len(wrapper)`` and ``replay(record)``.

A stream has no random access: a streaming wrapper (``MosaicDataset(stream, ...)``,
``RandomAugmentWrapper(stream, ...)``...) is iterated, never indexed, and its records
name samples by their position in a worker's pass, which no index reads again. Both are
refused with a ``TypeError`` saying what to do instead, rather than torch's
``NotImplementedError`` ("Subclasses of Dataset should implement __getitem__") and
Python's ``AttributeError``.

``len(wrapper)`` is the stream's own length where it has one (litdata's and
mosaicml-streaming's, for the rank that reads them; webdataset's ``.with_length(n)``): a
streaming wrapper gives one output per sample it reads, so a pass holds as many outputs
as the stream's pass holds samples. A stream without one (a Hugging Face
``IterableDataset``, a plain ``IterableDataset``) gives a ``TypeError`` naming the wrapper
and the stream, as a DataLoader's ``len()`` over it expects. Truth is never refused:
``bool(wrapper)`` is true unless the stream's length is 0 (``if dataset:`` as over the
stream, not the ``TypeError``).
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["NoRandomAccess", "NoReplay"]


def _names(wrapper: Any) -> tuple[str, str, str]:
    """The map-style class the user built, the streaming class, the stream's type."""
    find = getattr(wrapper, "map_class", None)
    built = find().__name__ if callable(find) else "RandomAugmentWrapper"
    return built, type(wrapper).__name__, type(getattr(wrapper, "dataset", None)).__name__


class NoRandomAccess:
    """Mixin of the streaming wrappers: ``wrapper[i]`` refused, saying to iterate."""

    def __getitem__(self, index: Any) -> NoReturn:
        """Refuse indexing.

        Raises:
            TypeError: Always: a stream has no random access.
        """
        built, streaming, stream = _names(self)
        raise TypeError(
            f"{built} over a stream ({stream}) is a {streaming}, which has no random access: "
            f"[{index!r}] cannot be read; iterate over it (for sample in wrapper, or a "
            "DataLoader), or build it over a map-style dataset (a Dataset with __getitem__ "
            "and __len__, not an IterableDataset) to index it"
        )

    def __len__(self) -> int:
        """The stream's length: one output per sample read (see the module docstring).

        Raises:
            TypeError: If the stream has no length.
        """
        built, streaming, stream = _names(self)
        dataset = getattr(self, "dataset", None)
        if getattr(type(dataset), "__len__", None) is None:
            raise TypeError(
                f"{built} over a stream ({stream}) is a {streaming}, which has the length of "
                f"its stream, and {stream} has no len(): count its samples by iterating, or "
                "give the stream a length (webdataset's .with_length(n), a __len__ of the "
                "samples each rank reads)"
            )
        return len(dataset)  # type: ignore[arg-type]

    def __bool__(self) -> bool:
        """True, unless the stream's length is 0: ``if wrapper:`` never raises as ``len()`` does."""
        return (
            getattr(type(getattr(self, "dataset", None)), "__len__", None) is None or len(self) > 0
        )


class NoReplay:
    """Mixin of the streamed mosaic and mixes: ``replay(record)`` refused, saying why."""

    def replay(self, record: Any, index: int | None = None) -> NoReturn:
        """Refuse a replay.

        Raises:
            TypeError: Always: the record names samples by their position in a pass.
        """
        built, streaming, stream = _names(self)
        raise TypeError(
            f"{built} over a stream ({stream}) is a {streaming}, which cannot replay a record: "
            "its record names the samples by their position in a worker's pass (and their "
            "ids), and a stream has no random access to read them again; to replay, build "
            f"{built} with the same arguments over a map-style dataset of the samples, and "
            "replay records made by that one"
        )
