"""``StreamingMosaic``: :class:`~rankaug.MosaicDataset` over a stream, partners from a buffer.

``MosaicDataset(stream, buffer_size=B, ...)`` makes one. Each worker keeps a window of
the ``B + 1`` samples nearest in its stream: the main sample and ``B`` candidates, from
which the key draws the partners (by :class:`~rankaug.partners.PartnerSampler`'s rules:
a sample is never its own partner). The main sample is the oldest of the window, so a
pass **waits to fill**: its first output comes once ``B + 1`` samples are read, and
every sample is the main sample of exactly one output, in stream order. At the end of
the pass the last ``B + 1`` samples stay the window of the last mains. A worker whose
pass holds ``n <= B`` samples draws from the ``n - 1`` others; a pass of one sample
gives it alone, letterboxed (``applied`` is false).

The record (``record=``) names tiles by their position in the worker's pass under
``indices`` and by id under ``ids`` (``None`` without ``sample_id=``). A mosaic over a
stream is not replayed from its record (a stream has no random access); a resumed pass
re-reads its epoch's stream up to where it stood (see :mod:`rankaug.stream.base`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from rankaug import checks
from rankaug.keys import Keying
from rankaug.samples import DefaultAdapter, SampleAdapter, check_adapter
from rankaug.stream.base import Pass, StreamDataset, Window

if TYPE_CHECKING:
    from rankaug.mosaic import MosaicDataset

__all__ = ["StreamingMosaic"]

T_co = TypeVar("T_co", covariant=True)
_REFUSED = ("pool", "weights")


class _Naming:
    """The user's adapter, whose ``attach`` also names a record's tiles in the stream."""

    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter
        self.window: Window | None = None
        self.unpack, self.repack = adapter.unpack, adapter.repack

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "_adapter" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self._adapter, name)

    def attach(self, sample: Any, key: str, value: Any) -> Any:
        window = self.window
        if window is not None and isinstance(value, dict) and "indices" in value:
            entries = window.entries
            used = [entries[i] for i in value["indices"]]
            value["indices"] = [position for position, _, _ in used]
            value["ids"] = [sample_id for _, sample_id, _ in used]
        hook = getattr(self._adapter, "attach", None)
        if hook is not None:
            return hook(sample, key, value)
        return DefaultAdapter.attach(sample, key, value)

    def __repr__(self) -> str:
        return repr(self._adapter)


class StreamingMosaic(StreamDataset[T_co]):
    """YOLO-style mosaics over an iterable dataset, partners from a window of the stream.

    The arguments of :class:`~rankaug.MosaicDataset` (but ``pool`` and ``weights``,
    which name indices), plus ``buffer_size`` and ``sample_id``; see the module
    docstring for the window.

    Args:
        dataset: An ``IterableDataset`` or another re-iterable of detection samples.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        buffer_size: How many candidates each main sample's partners are drawn from.
            Defaults to ``16``.
        keying: ``"stream"`` or ``"sample"`` (the draws keyed by the main sample's id;
            which samples the partners are still depends on the stream's order).
            Defaults to ``"stream"``.
        rank: The rank; ``None`` resolves it. Defaults to ``None``.
        stream: The key's stream word or name. Defaults to ``None``.
        adapter: Converts samples. Defaults to ``None``.
        sample_id: A key of the samples holding their id, or a callable; needed by
            ``keying="sample"``. Defaults to ``None``.
        **options: :class:`~rankaug.MosaicDataset`'s other arguments.

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

    reads_ahead = True

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        buffer_size: int = 16,
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
        sample_id: str | Callable[[Any], Any] | None = None,
        **options: Any,
    ) -> None:
        for name in _REFUSED:
            if name in options:
                raise ValueError(
                    f"{name}={options[name]!r} has no meaning over a stream (it names dataset "
                    "indices): partners come from the window of buffer_size recent samples"
                )
        self.buffer_size = checks.integer(buffer_size, "buffer_size", low=1)
        self._naming = _Naming(check_adapter(adapter))
        self._options = {"seed": seed, "rank": rank, "stream": stream, **options}
        self._mosaics: dict[int, MosaicDataset[Any]] = {}
        full = self._mosaic(self.buffer_size + 1)  # every option checked here
        super().__init__(dataset, full, keying=keying, sample_id=sample_id)
        self.config, self.adapter = full.config, full.adapter

    def _mosaic(self, size: int) -> MosaicDataset[Any]:
        """The map-style mosaic over a window of ``size`` samples (made once)."""
        mosaic = self._mosaics.get(size)
        if mosaic is None:
            from rankaug.mosaic import MosaicDataset  # it imports this package

            options = dict(self._options)
            if size == 1:  # nothing to draw partners from: the sample alone
                options.update(p=0.0, close_mosaic=0)
            mosaic = MosaicDataset(Window(size), keying="sample", adapter=self._naming, **options)
            self._mosaics[size] = mosaic
        return mosaic

    def outputs(self, live: Pass, samples: Iterator[Any], skip: int) -> Iterator[T_co]:
        """One mosaic per sample, main first in the window (see the module docstring)."""
        window: deque[tuple[int, Any, Any]] = deque()
        main = 0  # the window position of the next main sample
        last = self.buffer_size + 1
        for read, sample in enumerate(samples):
            window.append((read, self.sample_id(live, read, sample), sample))
            if len(window) > last:
                window.popleft()
                main -= 1
            if len(window) - 1 - main >= self.buffer_size:
                out = self._output(live, window, main, skip)
                main += 1
                if out is not None:
                    yield out[0]
        while main < len(window):
            out = self._output(live, window, main, skip)
            main += 1
            if out is not None:
                yield out[0]

    def _output(self, live: Pass, window: deque[tuple[int, Any, Any]], main: int,
                skip: int) -> tuple[T_co] | None:  # fmt: skip
        position = live.position
        live.position = position + 1
        if position < skip:
            return None
        mosaic = self._mosaic(len(window))
        view = mosaic.dataset
        view.entries = window
        self._naming.window = view
        try:
            keyed = self.key_random(live, window[main][1])
            out: T_co = mosaic.augment(live.context(main), keyed)
        finally:
            view.entries, self._naming.window = (), None
        return (out,)
