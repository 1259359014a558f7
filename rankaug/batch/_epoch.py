"""The epoch of a batch whose indices came plain, with no ``epoch=``.

torch's ``default_collate`` turns a batch's :class:`~rankaug.EpochIndex` values into a
plain int tensor, so ``aug(images, index=batch["index"])`` receives no epoch. In order:

1. inside a DataLoader fetch (a ``collate_fn`` or a dataset's ``__getitems__`` that
   augments, in a worker or not, or a thread pool the fetch waits on), the epoch that
   the batch's indices carried there (:mod:`rankaug.batch._fetch`): theirs exactly,
   whenever the batch is fetched; for a batch of several epochs, each index's own,
   where the indices given are the batch's;
2. the epoch of ``set_epoch`` (or an assignment to ``epoch``), once it was called;
3. the epoch of the :class:`~rankaug.EpochSampler` pass that the calling thread's
   DataLoader is reading (:func:`rankaug.sampler_read.read_epoch`), when that is known;
4. else the fallback, 0, which keys every epoch alike: a warning, once, when passes are
   read but which one cannot be told, once when an index comes again under the
   fallback (indices on the CPU only: a device tensor is not read back, and warns once
   at its first call instead), and once when it is used in DataLoader workers (its
   loader's passes are read in the main process; the workers of each epoch, when not
   persistent, see no index again): the first worker to meet it says it, not the others
   nor later epochs' (a bit in shared memory). At most :data:`TRACKED` indices are
   remembered; any of them seen again is caught.

Inside a fetch, the ``set_epoch`` value (rules 2 and 4) is watched: a value that
changes between two batches of one pass (``set_epoch`` after ``iter(loader)``, while
workers had fetched batches of the pass already) warns, once. A worker says it once it
fetches a batch it was sent after the change: those it was sent before may belong to a
pass left unfinished (a ``break``, Lightning's ``limit_train_batches``), which it still
fetches, with the next pass's value, for nobody to read.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any, Final, NamedTuple

import torch
from torch.utils.data import get_worker_info

from rankaug._process import current_pid
from rankaug.batch._fetch import Fetch, current_fetch
from rankaug.errors import RankaugWarning
from rankaug.passes import MIXED
from rankaug.sampler_read import LastBatch, Unknown, read_epoch
from rankaug.shared_epoch import SharedEpoch

__all__ = ["TRACKED", "PlainEpoch"]

TRACKED: Final = 1 << 16

#: The warnings given in DataLoader workers, each a bit of a shared word: said by the
#: first worker that meets it, not again by the others nor by each epoch's new workers.
_IN_WORKERS: Final = {"worker": 1, "steps": 2, "late": 4, "mixed": 8}

_FIX: Final = (
    "Give the epoch: pass epoch= (the 'epoch' column that rankaug.BatchCollator and "
    "collate_detection add, which also keep the EpochIndex values in 'index'), call "
    "aug.set_epoch(epoch) before each epoch, or collate the indices with a collate_fn that "
    "keeps EpochIndex values (a list, not a tensor)."
)


class _Held(NamedTuple):
    """A change of the ``set_epoch`` value that a worker met, not yet known to be read."""

    pid: int
    fetcher: weakref.ref[Any]
    before: int  # the value before the change
    left: int  # fetches to come that may be of batches sent before the change
    batch: object  # the batch of the last fetch counted


class PlainEpoch:
    """A :class:`~rankaug.BatchAugment`'s epoch for plain indices given without one.

    The ``set_epoch`` value and whether it was given live in shared memory
    (:class:`~rankaug.shared_epoch.SharedEpoch`), so a ``set_epoch`` in the main
    process reaches the DataLoader workers that call the augmentation (a ``collate_fn``
    that augments), persistent ones too. A copy (``copy.copy``, ``copy.deepcopy``, a
    plain ``pickle``) sets its own.

    Attributes:
        value: The ``set_epoch`` value (0 until it is called).
        named: Whether ``set_epoch`` was called: its value then takes precedence.
    """

    def __init__(self, value: int = 0, named: bool = False) -> None:
        self._value = SharedEpoch(value)
        self._named = SharedEpoch(int(named))
        self._shown = SharedEpoch(0)  # the _IN_WORKERS warnings already given
        self._start()

    def _start(self) -> None:
        self._seen: set[int] = set()
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        # the set_epoch value the last call inside a fetch used: (pid, fetcher, value)
        self._fetched: tuple[int, weakref.ref[Any], int] | None = None
        self._held: _Held | None = None

    @property
    def value(self) -> int:
        """The ``set_epoch`` value (0 until it is called)."""
        return self._value.get()

    @property
    def named(self) -> bool:
        """Whether ``set_epoch`` was called."""
        return self._named.get() != 0

    def set(self, value: int) -> None:
        """The epoch of every later call that gives none (``set_epoch``)."""
        self._value.set(value)
        self._named.set(1)

    def __copy__(self) -> PlainEpoch:
        return PlainEpoch(self.value, self.named)  # its own epoch, watching afresh

    def __getstate__(self) -> dict[str, Any]:
        # the shared values: torch's pickler (a spawned worker's) shares them, a plain
        # pickle or deepcopy copies them; the watch starts afresh
        return {"value": self._value, "named": self._named, "shown": self._shown}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._value, self._named, self._shown = state["value"], state["named"], state["shown"]
        self._start()

    def of(self, indices: torch.Tensor) -> int | torch.Tensor:
        """The epoch of a batch of plain ``indices`` given without an epoch.

        A 0-D tensor on the indices' device where the batch may be the last of a pass read
        to its end: its epoch if the batch ends with that pass's last index, else the
        fallback (compared there, not read back).
        """
        fetch = current_fetch()
        if fetch is not None and fetch.epoch >= 0:
            return fetch.epoch  # the fetched batch's EpochIndex values carried it
        if fetch is not None and fetch.epoch == MIXED:
            each = fetch.each(indices)
            if each is not None:
                return each  # a batch of two passes: each index carried its own
            if not self.named:
                self._warn(
                    "mixed",
                    "BatchAugment got plain indices and no epoch (no epoch=, no EpochIndex "
                    "values, no set_epoch call) inside a DataLoader fetch whose batch holds "
                    "indices of several epochs, or some without one, and the indices given "
                    "are not that batch's own, in its order, each carrying its epoch: they "
                    f"are keyed with epoch {self.value}, which repeats the same augmentations "
                    "every epoch. Pass epoch= one per sample, or hand the batch's EpochIndex "
                    "values on as a list (rankaug.BatchCollator and collate_detection keep "
                    "them in 'index').",
                )
                return self.value
        if self.named:
            return self._late(fetch, self.value)
        found = read_epoch(indices)
        if isinstance(found, LastBatch):
            last = torch.tensor(found.last, dtype=torch.int64, device=indices.device)
            ends = indices[-1] == last if indices.numel() else torch.zeros((), dtype=torch.bool)
            return torch.where(ends.to(indices.device), found.epoch, self.value)
        if isinstance(found, int):
            return found
        if isinstance(found, Unknown):
            self._warn(
                "unknown",
                "BatchAugment got plain indices and no epoch (no epoch=, no EpochIndex "
                "values, no set_epoch call), and cannot tell which EpochSampler pass they "
                f"come from: {found}. They are keyed with epoch {self.value}, which repeats "
                f"the same augmentations every epoch. {_FIX}",
            )
        if get_worker_info() is not None:  # no pass is read here: the loader's is elsewhere
            self._warn(
                "worker",
                "BatchAugment got plain indices and no epoch (no epoch=, no EpochIndex "
                "values, no set_epoch call) in a DataLoader worker (a collate_fn or a "
                "dataset that augments batches), and the batch being fetched carries none "
                "either (its sampler is no EpochSampler, or the call comes from outside "
                f"the fetch), so they are keyed with epoch {self.value}, which repeats the "
                "same augmentations every epoch (unseen where workers are not persistent: "
                "each epoch's are new processes). Give the epoch: wrap the loader's "
                "sampler in rankaug.EpochSampler (its EpochIndex values key the batch "
                "they fetch), pass epoch=, call aug.set_epoch(epoch) before each epoch's "
                "iter(loader), or collate with rankaug.BatchCollator or "
                "collate_detection, which keep the EpochIndex values in 'index' (and add "
                "an 'epoch' column), or augment in the main process, after the DataLoader.",
            )
        elif indices.device.type != "cpu" and not isinstance(found, Unknown):  # not read back
            self._warn(
                "device",
                f"BatchAugment got plain indices on {indices.device} and no epoch (no "
                "epoch=, no EpochIndex values, no set_epoch call, no EpochSampler pass "
                f"read): they are keyed with epoch {self.value}, and indices on a device "
                "are not read back to see one come again, so each epoch would repeat the "
                f"previous one's augmentations without another word. {_FIX}",
            )
        self._watch(indices)
        return self._late(fetch, self.value)

    def step_epoch(self) -> int:
        """The epoch of a call without indices nor ``epoch=``: the ``set_epoch`` value."""
        return self._late(current_fetch(), self.value)

    def steps_in_worker(self) -> None:
        """Warn, once for all the workers, when a call without indices comes in one."""
        if get_worker_info() is None:
            return
        self._warn(
            "steps",
            "BatchAugment was called without index= in a DataLoader worker: its keys are "
            "(seed, stream, rank, epoch, step, position), and each worker's copy counts "
            "its own steps from 0, so the workers' batches are keyed alike (the first "
            "batch of each worker gets the same parameters), and workers that are not "
            "persistent begin again every epoch. Pass index= the samples' dataset "
            "indices (and their epoch), or augment in the main process, after the "
            "DataLoader.",
        )

    def _late(self, fetch: Fetch | None, value: int) -> int:
        """``value``; warn, once, if it changed since a batch of the same pass was fetched.

        In a worker, a change is held until the worker fetches a batch it was sent after
        it (beyond those its index queue held then): until then its fetches may be of a
        pass left unfinished, which nobody reads; a new fetcher (the next pass) drops it.
        """
        if fetch is None:
            return value
        try:
            fetcher = weakref.ref(fetch.fetcher)
        except TypeError:  # not the fetcher PyTorch makes: nothing to tell its passes by
            return value
        pid = current_pid()
        with self._lock:
            last, self._fetched = self._fetched, (pid, fetcher, value)
            held = self._held
            if held is not None and (held.pid != pid or held.fetcher() is not fetch.fetcher):
                held = self._held = None  # that pass ended, or was left unread
            if held is not None:
                if fetch.batch is held.batch:  # another call in the same fetch
                    return value
                if held.left > 0:
                    self._held = held._replace(left=held.left - 1, batch=fetch.batch)
                    return value
                self._held, before = None, held.before  # sent after the change: read
            elif (
                last is None or last[0] != pid or last[1]() is not fetch.fetcher or last[2] == value
            ):
                return value  # unchanged, or the first batch of this pass fetched here
            elif (left := fetch.queued()) >= 0:  # a worker: the batches sent before it wait
                self._held = _Held(pid, fetcher, last[2], left, fetch.batch)
                return value
            else:
                before = last[2]
        if before != value:
            self._warn("late", _late_message(before, value, get_worker_info() is not None))
        return value

    def _watch(self, indices: torch.Tensor) -> None:
        """Warn, once, when an index comes again under the fallback epoch."""
        if "again" in self._warned or indices.device.type != "cpu":
            return
        values = indices.tolist()
        with self._lock:
            again = self._seen.intersection(values)
            if not again:
                room = TRACKED - len(self._seen)
                if room > 0:
                    self._seen.update(values[:room])
                return
            self._seen = set()
        self._warn(
            "again",
            f"BatchAugment augmented index {min(again)} again with epoch {self.value}: its "
            "indices carry no epoch (torch's default_collate turns EpochIndex values into a "
            "plain int tensor), and no epoch=, set_epoch call or EpochSampler pass read by "
            "this thread's DataLoader gave one, so each epoch repeats the previous one's "
            f"augmentations. {_FIX}",
        )

    def _warn(self, kind: str, message: str) -> None:
        with self._lock:
            if kind in self._warned:
                return
            self._warned.add(kind)
            bit = _IN_WORKERS.get(kind, 0)
            if bit:  # given by another worker, or by one of an earlier epoch: not again
                shown = self._shown.get()
                if shown & bit:
                    return
                self._shown.set(shown | bit)
        # _warn, of (or _watch or _late, then of or step_epoch), resolve,
        # BatchAugment.__call__: the caller is above
        deeper = kind in ("again", "late")
        warnings.warn(message, RankaugWarning, stacklevel=6 if deeper else 5)


def _late_message(before: int, value: int, in_worker: bool) -> str:
    """The warning for a ``set_epoch`` value that changed in the middle of a pass."""
    if in_worker:
        cause = (
            "that a DataLoader worker fetched: set_epoch came after iter(loader) began the "
            "pass (Lightning builds the iterator first, and workers fetch prefetch_factor "
            f"batches each at once), so the batches augmented before it were keyed with epoch "
            f"{before} and this pass mixes two epochs, depending on timing."
        )
    else:
        cause = (
            "of one loader iterator, without workers: those fetched before the call were "
            f"keyed with epoch {before}, the rest with {value}, so the pass mixes two epochs "
            "(or an infinite loader's iterator runs on into the next epoch, which is right "
            "here, but with workers, which fetch prefetch_factor batches each ahead, the "
            "first batches of each epoch would keep the epoch before it, depending on timing)."
        )
    return (
        f"BatchAugment's epoch changed from {before} to {value} (set_epoch) between two "
        f"batches of one pass {cause} Call aug.set_epoch(epoch) before iter(loader), or let "
        "the epoch travel with the indices: DataLoader(..., "
        "sampler=rankaug.EpochSampler(sampler)), whose batches key themselves inside the "
        "fetch whatever set_epoch says, or pass epoch=."
    )
