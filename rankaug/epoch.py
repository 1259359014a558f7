"""Where a sample's epoch comes from: the index, the enclosing wrapper, the batch, ``set_epoch``.

The epoch of a pass is decided once, in the main process, when the pass begins, and
travels with every index of the pass (:class:`EpochIndex`, made by
:class:`~rankaug.EpochSampler`). A rankaug wrapper that receives such an index keys its
draws with that epoch and hands it down to the rankaug wrappers inside it for the
duration of the call (:func:`carrying`). Index arithmetic with ``+`` and ``-`` keeps the
epoch, so it reaches the parts of a ``ConcatDataset`` and a wrapper's ``d[i + 1]``.

Order, first match wins:

1. the index's epoch;
2. the epoch handed down by an enclosing rankaug wrapper;
3. the epoch of the DataLoader batch being fetched, when an index map (``Subset``'s
   ``indices[i]``, ``i * 2``) handed on a plain ``int`` (:mod:`rankaug.passes`);
4. the wrapper's :class:`SharedEpoch`, the value of its last ``set_epoch``: the fallback
   for code that calls ``set_epoch`` itself. While an ``EpochSampler`` pass of another
   epoch runs in the process, a wrapper falling back here warns, once.
"""

from __future__ import annotations

import array
import contextvars
import copyreg
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast

from rankaug import checks
from rankaug.shared_epoch import SharedEpoch, warn_if_late

__all__ = [
    "EpochBatch",
    "EpochIndex",
    "SharedEpoch",
    "carried_epoch",
    "carry_epoch",
    "carrying",
    "drop_epoch",
    "epoch_class",
    "index_epoch",
    "warn_if_late",
]

_CARRIED: Final[contextvars.ContextVar[int | None]] = contextvars.ContextVar(
    "rankaug_epoch", default=None
)


class _EpochIndexType(type):
    """The type of :class:`EpochIndex`: ``EpochIndex(index, epoch)`` checks both."""

    def __call__(cls, index: int, epoch: int) -> EpochIndex:
        make = epoch_class(checks.uint(epoch, "epoch", 32))
        return make(checks.integer(index, "index"))

    __call__.__qualname__ = "EpochIndex"  # what Python's own argument errors name


class _EpochClassType(_EpochIndexType):
    """The type of one epoch's subclass: ``kind(i)`` is int's own constructor, in C.

    Neither type defines ``__new__`` in Python, so making an index (in the sampler, and
    again when a worker unpickles it) costs what making any int subclass costs.
    """

    __call__ = type.__call__


class EpochIndex(int, metaclass=_EpochIndexType):
    """A dataset index that carries the epoch of its pass.

    It *is* the index (an ``int`` subclass), so any dataset indexes with it as before;
    rankaug's wrappers read :attr:`epoch` from it. It pickles to DataLoader workers
    (forked or spawned) with its epoch.

    ``+`` and ``-`` with a plain ``int`` (or an index of the same epoch), in either
    order, keep the epoch: ``ConcatDataset``'s ``idx - offset`` and ``len + idx``, a
    wrapper's ``d[i + 1]``. Everything else (``*``, ``//``, ``%``, unary minus, bools,
    numpy integers, an index of another epoch) gives a plain ``int``, as does ``int(i)``.

    Each epoch has its own subclass, which holds the epoch as a class attribute: an
    instance is then a bare int with nothing of its own to store, which makes it cheap
    to make and to pickle (the DataLoader pickles every index it sends to a worker).

    Args:
        index: The index.
        epoch: The epoch of the pass, an integer in ``[0, 2**32)``.

    Raises:
        TypeError: If ``index`` or ``epoch`` is not an integer.
        ValueError: If ``epoch`` is out of range.

    >>> i = EpochIndex(7, epoch=3)
    >>> i, i.epoch, [10, 11, 12, 13, 14, 15, 16, 17][i], f"{i}.jpg"
    (EpochIndex(7, epoch=3), 3, 17, '7.jpg')
    >>> i - 5, 10 + i, i * 2, isinstance(i, EpochIndex)
    (EpochIndex(2, epoch=3), EpochIndex(17, epoch=3), 14, True)
    """

    __slots__ = ()
    epoch: int

    if TYPE_CHECKING:

        def __new__(cls, index: int, epoch: int = ...) -> EpochIndex:
            """The metaclasses' calls, for type checkers (an epoch's class: the index)."""

    def __add__(self, other: int) -> int:
        if type(other) is int or (isinstance(other, EpochIndex) and other.epoch == self.epoch):
            return type(self)(int.__add__(self, other))
        return int.__add__(self, other)

    __radd__ = __add__

    def __sub__(self, other: int) -> int:
        if type(other) is int or (isinstance(other, EpochIndex) and other.epoch == self.epoch):
            return type(self)(int.__sub__(self, other))
        return int.__sub__(self, other)

    def __rsub__(self, other: int) -> int:
        if type(other) is int:
            return type(self)(int.__rsub__(self, other))
        return int.__rsub__(self, other)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.real,))  # int's real part: the plain int, without a call

    def __repr__(self) -> str:
        return f"EpochIndex({int(self)}, epoch={self.epoch})"

    __str__ = int.__repr__  # str(), f"{i}" and paths built from it stay plain numbers


def _reducer(kind: type[EpochIndex]) -> Callable[[EpochIndex], tuple[Any, ...]]:
    """``__reduce__`` of one epoch's class, for :mod:`copyreg` (it runs for every index)."""

    def reduce(index: EpochIndex) -> tuple[Any, ...]:
        return (kind, (index.real,))

    return reduce


_CLASSES: Final[dict[int, Callable[[int], EpochIndex]]] = {}
_REGISTERED: Final[list[type]] = []
_REGISTER_AT_MOST: Final = 8
_CLASSES_LOCK: Final = threading.Lock()


def epoch_class(epoch: int) -> Callable[[int], EpochIndex]:
    """The :class:`EpochIndex` subclass of one epoch: ``epoch_class(e)(i)`` is ``EpochIndex(i, e)``.

    ``epoch`` is not checked (the sampler checked it once for its pass). The class is
    made on first use in each process, stored in this module under its name
    (``_EpochIndex_<epoch>``, where pickle looks it up) and found by name when an index
    is unpickled, so spawned workers rebuild it too.

    The classes of the latest few epochs are also registered with :mod:`copyreg`, which
    lets pickle reduce their instances straight from its dispatch table; older ones
    pickle through ``__reduce__``, the same bytes a little slower. (Every
    multiprocessing pickler copies that table, so it must not grow with every epoch.)
    """
    kind = _CLASSES.get(epoch)
    if kind is None:
        with _CLASSES_LOCK:
            kind = _CLASSES.get(epoch)
            if kind is None:
                kind = _make_class(epoch)
    return kind


def _make_class(epoch: int) -> Callable[[int], EpochIndex]:
    name = f"_EpochIndex_{epoch}"
    made = cast("type[EpochIndex]", _EpochClassType(name, (EpochIndex,), {
        "__slots__": (), "epoch": epoch, "__module__": __name__, "__qualname__": name,
    }))  # fmt: skip
    globals()[name] = made
    copyreg.pickle(made, _reducer(made))
    _REGISTERED.append(made)
    if len(_REGISTERED) > _REGISTER_AT_MOST:
        copyreg.dispatch_table.pop(_REGISTERED.pop(0), None)
    kind: Callable[[int], EpochIndex] = made
    _CLASSES[epoch] = kind
    return kind


def __getattr__(name: str) -> Any:
    """Unpickling finds an epoch's class by name (``_EpochIndex_<epoch>``) here."""
    prefix = "_EpochIndex_"
    if name.startswith(prefix) and name[len(prefix) :].isdigit():
        return epoch_class(int(name[len(prefix) :]))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class EpochBatch(list[EpochIndex]):
    """A batch of one pass's :class:`EpochIndex` values that pickles as one block.

    :class:`~rankaug.EpochSampler` yields these when it wraps a batch sampler
    (``batch_sampler=EpochSampler(BatchSampler(...))``). The DataLoader pickles every
    batch it sends to a worker; a list of int subclasses costs a reduce call per index,
    while this pickles as the epoch and the indices packed as 64-bit integers, and comes
    back as EpochIndex values (indices beyond 64 bits pickle one by one, exactly). It is
    a list, so anything that slices or extends a batch still holds indices that carry
    their epoch.

    >>> import pickle
    >>> batch = EpochBatch([EpochIndex(4, epoch=2), EpochIndex(1, epoch=2)])
    >>> again = pickle.loads(pickle.dumps(batch))
    >>> again, type(again).__name__
    ([EpochIndex(4, epoch=2), EpochIndex(1, epoch=2)], 'EpochBatch')
    """

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        kinds = {type(index) for index in self}
        kind = kinds.pop() if len(kinds) == 1 else None
        if kind is None or not issubclass(kind, EpochIndex):  # mixed: each keeps its own
            return (EpochBatch, (list(self),))
        try:
            packed = array.array("q", self).tobytes()
        except OverflowError:  # an index beyond 64 bits: each keeps its own, exactly
            return (EpochBatch, (list(self),))
        return (_epoch_batch, (kind.epoch, packed))


def _epoch_batch(epoch: int, packed: bytes) -> EpochBatch:
    """Unpickle an :class:`EpochBatch` packed by its ``__reduce__``."""
    return EpochBatch(map(epoch_class(epoch), array.array("q", packed)))


def index_epoch(index: object) -> int | None:
    """The epoch an index carries, or ``None`` for a plain index.

    >>> index_epoch(EpochIndex(3, epoch=2)), index_epoch(3)
    (2, None)
    """
    return index.epoch if isinstance(index, EpochIndex) else None


# The context variable's own methods, not functions calling them: they run for every
# sample (and every tile a mosaic loads), where a Python call costs a microsecond or
# more once the augmentation has taken the processor's caches.
carried_epoch: Final[Callable[[], int | None]] = _CARRIED.get
"""The epoch an enclosing rankaug wrapper handed down for this call, or ``None``."""

carry_epoch: Final[Callable[[int], contextvars.Token[int | None]]] = _CARRIED.set
"""Hand an epoch down to the rankaug wrappers called from here on; returns a token.

The primitive that :class:`carrying` and :meth:`~rankaug.SampleContext.loading` use;
give the token back to :func:`drop_epoch`.
"""

drop_epoch: Final[Callable[[contextvars.Token[int | None]], None]] = _CARRIED.reset
"""Undo the :func:`carry_epoch` that returned the token."""


class carrying:
    """Hand ``epoch`` down to the rankaug wrappers called inside the ``with`` block.

    >>> with carrying(4):
    ...     carried_epoch()
    4
    >>> carried_epoch() is None
    True
    """

    __slots__ = ("_epoch", "_token")

    def __init__(self, epoch: int) -> None:
        self._epoch = epoch

    def __enter__(self) -> None:
        self._token = _CARRIED.set(self._epoch)

    def __exit__(self, *exc: object) -> None:
        _CARRIED.reset(self._token)
