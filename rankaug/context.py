"""Where a sample stands: its index, rank, worker and epoch, and the guard around it.

* **rank**: the ``rank=`` argument, else ``torch.distributed`` when a process group is
  initialised (also inside forked DataLoader workers, which inherit it), else the rank
  captured when the dataset was pickled for a spawned worker, else the ``RANK``
  environment variable that torchrun sets, else 0. An explicit rank that disagrees
  with the process group (or with ``RANK``) is warned about: it is usually a local rank
  passed for the global one, which makes the processes of two nodes draw alike. A
  replay pins the rank its record was made on for the wrappers keyed per sample it
  loads from (:class:`pinning_rank`), whatever this process's.
* **worker id**: ``torch.utils.data.get_worker_info().id``; 0 in the main process
  (``num_workers=0``), so that ``num_workers=0`` and ``num_workers=1`` draw the same
  stream.
* **epoch**: see :mod:`rankaug.epoch`.

A :class:`SampleContext` carries the four numbers through one ``__getitem__``, and its
:meth:`~SampleContext.guard` turns any failure inside it into a
:class:`~rankaug.SampleError` that names them.
"""

from __future__ import annotations

import contextvars
import os
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final

import torch.distributed as dist
from torch.utils.data import get_worker_info

from rankaug import checks
from rankaug._fixed import check_set_before
from rankaug.epoch import carry_epoch, drop_epoch
from rankaug.errors import RankaugWarning, SampleError

__all__ = [
    "DISTRIBUTED",
    "ResolvedContext",
    "SampleContext",
    "check_rank",
    "current_worker",
    "pinned_rank",
    "pinning_rank",
    "process_group_rank",
    "resolve_rank",
]


DISTRIBUTED: Final = dist.is_available()
"""Whether this torch build has ``torch.distributed`` (fixed per process, asked once)."""


def process_group_rank() -> int | None:
    """The rank in the default process group, or ``None`` when there is none.

    >>> process_group_rank() is None  # no process group in the doctest
    True
    """
    if DISTRIBUTED and dist.is_initialized():
        return dist.get_rank()
    return None


def _environment_rank() -> int | None:
    text = os.environ.get("RANK")
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"the RANK environment variable must be an integer in [0, 2**32), got {text!r}"
        ) from None
    return checks.uint(value, "the RANK environment variable", 32)


_WARNED: Final[set[tuple[int, int, int]]] = set()
_U32: Final = 1 << 32


class RankSetting:
    """A wrapper's ``rank``: ``None`` (resolved) or a rank, checked when set.

    Set in ``__init__`` or afterwards alike: the value is checked (an integer in
    ``[0, 2**32)``), compared with the process's rank (:func:`check_rank`), and the
    wrapper's resolved rank forgotten; kept as ``_rank``, with ``_rank_checked`` and
    ``_rank_cache`` (:class:`~rankaug.KeyedDataset`). A subclass may set it before
    calling the constructor, to the rank it gives the constructor; another value (the
    constructor's ``rank=None``, say) would be replaced without a word, and is refused
    by ``FixedSettings``' rule (:func:`~rankaug._fixed.check_set_before`).
    """

    def __get__(self, owner: Any, kind: type | None = None) -> Any:
        if owner is None:
            return self
        rank: int | None = owner._rank
        return rank

    def __set__(self, owner: Any, rank: int | None) -> None:
        checked = None if rank is None else checks.uint(rank, "rank", 32)
        made_with = owner.made_with  # set by the constructor after the rank
        if made_with and made_with not in owner.__dict__ and "_rank" in owner.__dict__:
            check_set_before(owner, "rank", owner._rank, checked, assignable=True)
        owner._rank_cache = None
        # compared with the process group's once one exists: here, when a stream (or a
        # sample's key) is made after init_process_group, or when pickled for a worker
        owner._rank_checked = False
        if checked is not None:
            check_rank(checked)
            owner._rank_checked = DISTRIBUTED and dist.is_initialized()
        owner._rank = checked


def check_rank(explicit: int) -> None:
    """Warn when an explicit ``rank=`` disagrees with the process's global rank.

    The global rank is the process group's when one is initialised, else torchrun's
    ``RANK``. Each disagreement is reported once per process.

    Args:
        explicit: The ``rank=`` a wrapper was given.
    """
    actual = process_group_rank()
    source = "torch.distributed"
    if actual is None:
        actual, source = _environment_rank(), "the RANK environment variable"
    if actual is None or actual == explicit:
        return
    key = (os.getpid(), explicit, actual)
    if key in _WARNED:
        return
    _WARNED.add(key)
    local = os.environ.get("LOCAL_RANK")
    cause = (
        f"LOCAL_RANK is {local}: a local rank was passed for the global one"
        if local is not None and local == str(explicit)
        else "a local rank passed for the global one is the usual cause"
    )
    warnings.warn(
        f"rank={explicit} was given, but {source} says this process is rank {actual} "
        f"({cause}). Processes with the same rank= draw identical streams, e.g. the same "
        "local rank on two nodes. Pass rank=None to let rankaug find the global rank.",
        RankaugWarning,
        stacklevel=3,
    )


def resolve_rank(explicit: int | None = None, captured: int | None = None) -> int:
    """The rank of this process, by the order given in the module docstring.

    Args:
        explicit: A ``rank=`` argument, used when not ``None`` (checked, and compared
            with the process's global rank).
        captured: A rank recorded in the main process before the dataset travelled to a
            spawned worker.

    Returns:
        The rank.

    Raises:
        TypeError: If ``explicit`` is not an integer.
        ValueError: If ``explicit`` is out of range, or the ``RANK`` environment
            variable is set but not an integer in ``[0, 2**32)``.

    >>> resolve_rank(3)
    3
    >>> resolve_rank(None, captured=2)
    2
    >>> resolve_rank(-5)
    Traceback (most recent call last):
    ...
    ValueError: rank must be an integer in [0, 2**32), got -5
    """
    if explicit is not None:
        rank = checks.uint(explicit, "rank", 32)
        check_rank(rank)
        return rank
    group = process_group_rank()
    if group is not None:
        return group
    if captured is not None:
        return captured
    env = _environment_rank()
    return 0 if env is None else env


_PINNED: Final[contextvars.ContextVar[int | None]] = contextvars.ContextVar(
    "rankaug_replay_rank", default=None
)
pinned_rank: Final[Callable[[], int | None]] = _PINNED.get
"""The rank a replay pinned for the wrappers it loads from (:class:`pinning_rank`), or ``None``."""


class pinning_rank:
    """Pin ``rank`` for the rankaug wrappers keyed per sample called inside the block.

    A replay's: the wrappers it loads from key their samples with the rank the record
    was made on, not this process's (a ``keying="sample_rank"`` wrapper inside).

    >>> with pinning_rank(3):
    ...     pinned_rank()
    3
    >>> pinned_rank() is None
    True
    """

    __slots__ = ("_rank", "_token")

    def __init__(self, rank: int) -> None:
        self._rank = rank

    def __enter__(self) -> None:
        self._token = _PINNED.set(self._rank)

    def __exit__(self, *exc: object) -> None:
        _PINNED.reset(self._token)


def current_worker() -> tuple[int, int]:
    """``(worker_id, num_workers)`` of this DataLoader worker; ``(0, 0)`` in the main process.

    >>> current_worker()
    (0, 0)
    """
    info = get_worker_info()
    if info is None:
        return 0, 0
    return info.id, info.num_workers


class SampleContext:
    """Where one sample is being made: index, rank, worker and epoch.

    A keyed wrapper builds one per ``__getitem__`` and hands it to
    :meth:`~rankaug.KeyedDataset.augment`; :meth:`guard` turns failures into a
    :class:`~rankaug.SampleError` that names all four.

    Args:
        index: The index being produced (a position in the dataset), ``>= 0``.
        rank: The rank the key uses, ``0 <= rank < 2**32``.
        worker_id: The DataLoader worker id (0 in the main process), ``0 <= worker_id <
            2**32``.
        epoch: The epoch the key uses, ``0 <= epoch < 2**32``.
        sample_id: A streamed sample's id (``sample_id=``), named by its errors too;
            ``None`` for none.

    Raises:
        TypeError: If an argument is not an integer.
        ValueError: If one is out of range.

    >>> context = SampleContext(3, rank=1, worker_id=0, epoch=2)
    >>> with context.guard("transform"):
    ...     raise KeyError("labels")
    Traceback (most recent call last):
    ...
    rankaug.errors.SampleError: transform failed at index 3 (rank 1, worker 0, epoch 2): ...
    """

    __slots__ = ("epoch", "index", "rank", "sample_id", "worker_id")

    def __init__(
        self, index: int, *, rank: int, worker_id: int, epoch: int, sample_id: Any = None
    ) -> None:
        if not (  # built for every sample: Python ints in range pass on this line alone
            type(index) is int
            and type(rank) is int
            and type(worker_id) is int
            and type(epoch) is int
            and index >= 0
            and 0 <= rank < _U32
            and 0 <= worker_id < _U32
            and 0 <= epoch < _U32
        ):
            index = checks.integer(index, "index", low=0)
            rank = checks.uint(rank, "rank", 32)
            worker_id = checks.uint(worker_id, "worker_id", 32)
            epoch = checks.uint(epoch, "epoch", 32)
        self.index = index
        self.rank = rank
        self.worker_id = worker_id
        self.epoch = epoch
        self.sample_id = sample_id

    def failure(self, stage: str, error: BaseException) -> SampleError:
        """The :class:`~rankaug.SampleError` for ``error`` raised by ``stage``."""
        return SampleError.at(
            stage,
            index=self.index,
            rank=self.rank,
            worker_id=self.worker_id,
            epoch=self.epoch,
            error=error,
            sample_id=self.sample_id,
        )

    def loading(self, index: int) -> _Loading:
        """A ``with`` block loading ``dataset[index]`` for this sample.

        It hands this sample's epoch down to the rankaug wrappers called inside (see
        :func:`rankaug.epoch.carrying`) and re-raises a failure as a
        :class:`~rankaug.SampleError` naming ``dataset[index]``, like :meth:`guard`.

        Args:
            index: The position being loaded (a partner's, for multi-sample wrappers).
        """
        return _Loading(self, index)

    def guard(self, stage: str) -> _Guard:
        """A ``with`` block re-raising failures as :class:`~rankaug.SampleError`.

        A ``SampleError`` from a nested wrapper passes through unchanged (it already
        names the innermost failure); other exceptions become its ``__cause__``.

        Args:
            stage: What runs inside the block, e.g. ``"dataset[12]"`` or ``"transform"``.
        """
        return _Guard(self, stage)

    def __repr__(self) -> str:
        named = "" if self.sample_id is None else f", sample_id={self.sample_id!r}"
        return (
            f"SampleContext(index={self.index}, rank={self.rank}, "
            f"worker_id={self.worker_id}, epoch={self.epoch}{named})"
        )


class ResolvedContext(SampleContext):
    """A :class:`SampleContext` of fields a wrapper resolved, not checked again.

    Each was checked where it came from (the position by ``checks.index``, a given rank
    when the wrapper was made, an epoch when set or carried); it is made for every sample.
    """

    __slots__ = ()

    def __init__(
        self, index: int, *, rank: int, worker_id: int, epoch: int, sample_id: Any = None
    ) -> None:
        self.index, self.rank, self.worker_id, self.epoch = index, rank, worker_id, epoch
        self.sample_id = sample_id


class _Guard:
    __slots__ = ("_context", "_stage")

    def __init__(self, context: SampleContext, stage: str) -> None:
        self._context = context
        self._stage = stage

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if error is None or isinstance(error, SampleError) or not isinstance(error, Exception):
            return
        raise self._context.failure(self._stage, error) from error


class _Loading:
    __slots__ = ("_context", "_index", "_token")

    def __init__(self, context: SampleContext, index: int) -> None:
        self._context = context
        self._index = index

    def __enter__(self) -> None:
        self._token = carry_epoch(self._context.epoch)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        drop_epoch(self._token)
        if error is None or isinstance(error, SampleError) or not isinstance(error, Exception):
            return
        raise self._context.failure(f"dataset[{self._index}]", error) from error
