"""``WindowStream``: a multi-sample wrapper over a stream, partners from a window.

The base of :class:`~rankaug.stream.StreamingMosaic` and the streaming mix family. Each
worker keeps a window of the ``B + 1`` samples nearest in its stream (``B`` is
``buffer_size``): the main sample and ``B`` candidates, from which the key draws the
partners (by :class:`~rankaug.partners.PartnerSampler`'s rules: a sample is never its
own partner). The main sample is the oldest of the window, so a pass **waits to fill**:
its first output comes once ``B + 1`` samples are read, and every sample is the main
sample of exactly one output, in stream order. At the end of the pass the last ``B + 1``
samples stay the window of the last mains. A worker whose pass holds ``n <= B`` samples
draws from the ``n - 1`` others; a pass of one sample gives it alone for a mosaic
(letterboxed), and is refused by a mix that needs a partner (``needs_partner()``: all
but ``CopyPasteDataset(source="flip")``, which takes it as its map-style class does).

The record (``record=``) names the samples by their position in the worker's pass under
``indices`` and by id under ``ids`` (``None`` without ``sample_id=``); a
:class:`~rankaug.SampleError` names the main sample's position and id, and each sample
its text names (``dataset[i]``) by its position and id. There is no
``replay`` nor ``wrapper[i]`` (a stream has no random access: both are refused with a
``TypeError`` saying what to do instead, :mod:`rankaug.stream.access`); a resumed pass
re-reads its epoch's stream up to where it stood (see :mod:`rankaug.stream.state`).
"""

from __future__ import annotations

import copy
import re
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, TypeVar, cast

from rankaug import checks
from rankaug._fixed import own_count
from rankaug.context import ResolvedContext
from rankaug.errors import SampleError, failure_text, id_text
from rankaug.keys import Keying
from rankaug.params import take
from rankaug.samples import DefaultAdapter, SampleAdapter, check_adapter
from rankaug.stream.access import NoRandomAccess, NoReplay
from rankaug.stream.base import StreamDataset, default_stream
from rankaug.stream.state import Pass
from rankaug.stream.view import Window

__all__ = ["WindowStream"]

T_co = TypeVar("T_co", covariant=True)
_REFUSED = ("pool", "weights")
_SLOT = re.compile(r"dataset\[(\d+)\]")  # how the map-style wrappers name a sample


class _Current(threading.local):
    window: Window | None = None  # the window of this thread's output being made


class _Naming:
    """The user's adapter, whose ``attach`` also names a record's tiles in the stream.

    The window it names them from is the calling thread's (:attr:`window`).
    """

    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter
        self._current = _Current()
        self.unpack, self.repack = adapter.unpack, adapter.repack

    @property
    def window(self) -> Window | None:
        """The window of the output this thread is making (``None`` between outputs)."""
        return self._current.window

    @window.setter
    def window(self, window: Window | None) -> None:
        self._current.window = window

    def __getstate__(self) -> dict[str, Any]:
        return {"adapter": self._adapter}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["adapter"])  # type: ignore[misc]

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


class _InWindow(ResolvedContext):
    """The context of an output made from a window: the map-style wrapper's, in the pass.

    Its ``index`` is the main sample's place in the window, by which the map-style
    wrapper draws the partners; its failures name the main sample's position in the
    worker's pass and its id, and each ``dataset[i]`` of their text the window's sample
    ``i`` by its position and id.
    """

    __slots__ = ("_entries",)

    def __init__(self, entries: Any, main: int, live: Pass) -> None:
        super().__init__(main, rank=live.rank, worker_id=live.worker_id, epoch=live.epoch,
                         sample_id=entries[main][1])  # fmt: skip
        self._entries: Any = entries

    def _named(self, found: re.Match[str]) -> str:
        slot = int(found[1])
        if slot >= len(self._entries):
            return found[0]
        position, sample_id, _ = self._entries[slot]
        return f"dataset[{position}]" + ("" if sample_id is None else f" (id {id_text(sample_id)})")

    def failure(self, stage: str, error: BaseException) -> SampleError:
        """The :class:`~rankaug.SampleError` for ``error``, named in the pass."""
        stage = _SLOT.sub(self._named, stage)  # the stage and the error's text, once each
        detail = _SLOT.sub(self._named, f"{type(error).__name__}: {error}")
        index = self._entries[self.index][0]
        message = failure_text(stage, index=index, rank=self.rank, worker_id=self.worker_id,
                               epoch=self.epoch, detail=detail,
                               sample_id=self.sample_id)  # fmt: skip
        return SampleError(message, index=index, rank=self.rank, worker_id=self.worker_id,
                           epoch=self.epoch, stage=stage, sample_id=self.sample_id)  # fmt: skip


class WindowStream(NoRandomAccess, NoReplay, StreamDataset[T_co]):
    """A multi-sample wrapper over a stream (see the module docstring).

    Args:
        dataset: An ``IterableDataset`` or another re-iterable of samples.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        buffer_size: How many candidates each main sample's partners are drawn from,
            ``1 <= buffer_size < sys.maxsize``. Defaults to ``16``.
        keying: ``"stream"`` or ``"sample"`` (the draws keyed by the main sample's id;
            which samples the partners are still depends on the stream's order).
            Defaults to ``"stream"``.
        rank: The rank; ``None`` resolves it. Defaults to ``None``.
        stream: The key's stream word or name; ``None`` derives the map-style
            wrapper's, distinct for stacked wrappers. Defaults to ``None``.
        adapter: Converts samples. Defaults to ``None``.
        sample_id: A key of the samples holding their id, or a callable; needed by
            ``keying="sample"``. Defaults to ``None``.
        **options: The map-style wrapper's other arguments (but ``pool`` and
            ``weights``, which name indices).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value (``pool=`` or ``weights=``).
    """

    reads_ahead = True
    alone: ClassVar[dict[str, Any] | None] = None
    """Options for a window of one sample (nothing to draw partners from); ``None``
    keeps the options where the map-style wrapper's ``needs_partner()`` is false, and
    refuses the window otherwise."""

    def map_class(self) -> Callable[..., Any]:
        """The map-style wrapper doing the per-sample work.

        Raises:
            NotImplementedError: In the base class.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement map_class()")

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
        partners = options.get("partners")
        given = {name: options[name] for name in _REFUSED if name in options}
        given.update(
            {f"partners.{name}": getattr(partners, name) for name in _REFUSED
             if getattr(partners, name, None) is not None}
        )  # fmt: skip
        if given:
            name, value = next(iter(given.items()))
            raise ValueError(
                f"{name}={value!r} has no meaning over a stream (it names dataset indices): "
                "partners come from the window of buffer_size recent samples"
            )
        wrapper: Any = self.map_class()
        for name, kind in wrapper.parameter_objects.items():  # the deprecated flat keywords, once
            options[name] = take(kind, options.get(name), options, wrapper.__name__)
        # the window of B + 1 samples is a Python length: at most sys.maxsize
        self.buffer_size = checks.integer(buffer_size, "buffer_size", low=1, high=sys.maxsize - 1)
        # the wrappers' box format (Targets.resolve's rule): the user's adapter, not the naming
        # one, is told it, so that it refuses a torchvision BoundingBoxes in another format
        box_format = options["targets"].resolve(adapter).box_format
        self._naming = _Naming(check_adapter(adapter, box_format=box_format, dataset=dataset))
        if stream is None:
            stream = default_stream(wrapper, dataset)
        self._options = {"seed": seed, "rank": rank, "stream": stream, **options}
        self._inner: dict[int, Any] = {}
        full = self.window_wrapper(self.buffer_size + 1)  # every option checked here
        self.config = full.config  # before the base's made_with: a subclass may have set it
        super().__init__(dataset, full, keying=keying, sample_id=sample_id)

    fixed_settings = StreamDataset.fixed_settings | {"config", "buffer_size"}
    """The attributes fixed when the wrapper is made (assigning one is refused)."""
    arguments_only = StreamDataset.arguments_only | {
        "output_size", "layout", "targets", "affine", "color", "p", "epochs", "close_mosaic",
        "record", "num_classes", "class_field", "partner_fit", "fill", "fill_mask", "partners",
        "alpha", "source", "fraction", "max_overlap", "min_visibility",
    }  # fmt: skip

    def _rank_assigned(self, rank: int | None) -> None:
        """Each window's wrapper takes the rank assigned, and those made later."""
        for inner in self._inner.values():
            inner.rank = rank
        self._options = {**self._options, "rank": rank}  # a copy's own

    def _keywords_of(self) -> type:
        """The map-style class: its deprecated flat keywords are this one's too."""
        return cast(type, self.map_class())

    @property
    def adapter(self) -> SampleAdapter:
        """The sample adapter; setting another (``None``: the default) puts it to use."""
        adapter: SampleAdapter = self._naming._adapter
        return adapter

    @adapter.setter
    def adapter(self, adapter: SampleAdapter | None) -> None:
        checked = check_adapter(adapter, box_format=self.config.box_format, dataset=self.dataset)
        self._naming = naming = _Naming(checked)
        for inner in self._inner.values():  # each window's wrapper reads through it
            inner.adapter = naming

    def __copy__(self) -> Any:
        """A shallow copy whose window wrappers are its own (its adapter is assigned there)."""
        copied = own_count(self)
        copied._inner = {size: copy.copy(inner) for size, inner in self._inner.items()}
        copied._keyed = copied._inner[self.buffer_size + 1]
        return copied

    def window_wrapper(self, size: int) -> Any:
        """The map-style wrapper over a window of ``size`` samples (made once)."""
        inner = self._inner.get(size)
        if inner is None:
            options = dict(self._options)
            if size == 1 and self.alone is not None:
                options.update(self.alone)
            elif size == 1 and self.window_wrapper(self.buffer_size + 1).needs_partner():
                raise ValueError(
                    f"{type(self).__name__}: this worker's pass holds a single sample, and "
                    f"{self.map_class().__name__} needs a partner other than the sample "
                    "itself: give every DataLoader worker at least 2 samples of each pass"
                )
            inner = self.map_class()(Window(size), keying="sample", adapter=self._naming, **options)
            self._inner[size] = inner
        return inner

    def outputs(self, live: Pass, samples: Iterator[Any], skip: int) -> Iterator[T_co]:
        """One output per sample, main first in the window (see the module docstring)."""
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
        inner = self.window_wrapper(len(window))
        view = inner.dataset
        view.entries = window
        self._naming.window = view
        try:
            keyed = self.key_random(live, window[main][1])
            out: T_co = inner.augment(_InWindow(window, main, live), keyed)
        finally:
            view.entries, self._naming.window = (), None
        return (out,)
