"""Which epoch each pass of an :class:`~rankaug.EpochSampler` gets.

Loaders draw ahead of their reader: workers prefetch, ultralytics' ``InfiniteDataLoader``
begins the next pass before its trainer calls ``set_epoch``, Lightning builds the
iterator before it calls ``set_epoch``, a loader may be reset and its drawn indices
thrown away. :class:`Epochs` keeps what the sampler needs to give every pass the epoch
its reader means, whatever came first:

* the first pass has the sampler's ``epoch``; each pass after has the previous one's
  epoch plus one;
* ``set_epoch(e)`` names the epoch read next. When that pass has begun (the running
  pass, or a pass of epoch ``e`` begun after the one the previous call named: a pass
  the loader drew ahead), the call changes nothing. Otherwise the next pass has ``e``;
* a pass that begins after the pass ``set_epoch(e)`` named was thrown away unread
  (nothing drawn since the call, the latest pass unfinished) has ``e`` again;
* a pass the loader's workers drew whole while its iterator was built (a pass of at
  most ``num_workers * prefetch_factor`` batches) is unread still: while it is the latest
  pass, ``set_epoch`` naming its epoch changes nothing, and its epoch counts as run only
  once a later pass begins;
* two calls cannot be made right, and warn: ``set_epoch(e)`` while a pass of another
  epoch, begun since the previous call, runs (its indices are drawn already), and
  ``set_epoch(e)`` back to an epoch that already ran (it replays that epoch);
* but PyTorch Lightning's evaluation replays on purpose: before each validation run of a
  fit it calls ``set_epoch(e)``, ``e`` the training epoch, and builds the loader's
  iterator after; each ``validate``/``test``/``predict`` call does so too, with the
  epochs its trainer fitted (:func:`lightning_validation` finds these calls among the
  callers). The next pass has ``e``, however many runs there are (``val_check_interval``
  below 1, the sanity check, ``validate`` again): each reads the same order with the same
  keys, and none warns.

A restored state (the sampler's ``load_state_dict``) starts the record afresh.
"""

from __future__ import annotations

import warnings
from types import FrameType
from typing import Final

from rankaug.errors import RankaugWarning
from rankaug.sampler_pass import Pass

__all__ = ["Epochs", "lightning_validation"]

_AHEAD: Final = 64  # passes begun since the named one, kept to be named next
_LIGHTNING: Final = ("pytorch_lightning", "lightning")  # its packages (lightning.pytorch)


def lightning_validation(frame: FrameType | None) -> bool:
    """Whether ``frame``, who called ``set_epoch``, is Lightning's evaluation or calls for it.

    Lightning (``pytorch_lightning`` or ``lightning.pytorch``, found by name) sets the epoch
    of an evaluation loader's sampler, through a helper, before it builds the loader's
    iterator: in a fit, its ``_EvaluationLoop.reset()`` before each validation run; in
    ``validate``, ``test`` and ``predict``, ``_process_dataloader`` (its data connector's)
    as it sets the loader up. Either is a few calls up from the sampler's ``set_epoch``.
    """
    for _ in range(4):
        if frame is None:
            return False
        name = frame.f_code.co_name
        if name == "reset":
            kinds = type(frame.f_locals.get("self")).__mro__
            if any(
                kind.__name__ == "_EvaluationLoop" and _lightning(kind.__module__) for kind in kinds
            ):
                return True
        if name == "_process_dataloader":
            module = str(frame.f_globals.get("__name__"))
            if _lightning(module) and module.endswith(".trainer.connectors.data_connector"):
                return True
        frame = frame.f_back
    return False


def _lightning(module: str) -> bool:
    """Whether ``module`` is of Lightning's packages."""
    return module.partition(".")[0] in _LIGHTNING


class Epochs:
    """An EpochSampler's record of its passes and of the ``set_epoch`` calls.

    Args:
        first: The epoch of the first pass (epochs before it ran already).
    """

    def __init__(self, first: int) -> None:
        self.next = first  # the next pass's epoch, unless one was thrown away
        self.ran = first - 1  # epochs up to this one ran (here, or before `first`)
        self.forget()

    def forget(self) -> None:
        """Drop what the ``set_epoch`` calls named (a new sampler, a restored state)."""
        self.named: Pass | None = None  # the begun pass the last set_epoch named
        self.pending = False  # the last set_epoch named the next pass to begin
        self.ahead: list[Pass] = []  # passes begun since the named one (or the start)
        self.mark: tuple[int, int] | None = None  # how far they had got when named
        self.last_call: tuple[int, int] | None = None  # (epoch, passes begun) at the call
        self.begun = 0
        self.latest: Pass | None = None  # the pass begun last

    def travelling(self) -> Epochs:
        """A copy for a pickled sampler: the passes themselves stay behind."""
        copy = Epochs(0)
        copy.next, copy.ran = self.upcoming(), self.ran
        return copy

    def set_epoch(self, epoch: int, *, rerun: bool = False) -> bool:
        """Record ``set_epoch(epoch)``.

        Args:
            epoch: The epoch named.
            rerun: The caller begins a pass of ``epoch`` next and may read that epoch
                again on purpose (Lightning's validation runs): the next pass has it,
                and nothing warns.

        Returns:
            ``True`` when it sets the next pass's epoch (to forward to the wrapped
            sampler), ``False`` when it names a pass that has begun.
        """
        if self.last_call == (epoch, self.begun):
            return False  # the same call again (accelerate makes it twice): nothing since
        self.last_call = (epoch, self.begun)
        if not rerun and self._names_begun(epoch):
            return False
        if not rerun:
            self._warn(epoch)
        self.next = epoch
        self.named, self.pending, self.ahead, self.mark = None, True, [], None
        return True

    def _names_begun(self, epoch: int) -> bool:
        """Whether ``set_epoch(epoch)`` names a begun pass (then named: nothing else changes)."""
        named = self.named
        if named is not None and named.epoch == epoch and self._unread(named, not self.ahead):
            return True
        for at, run in enumerate(self.ahead):
            # after a named pass, every pass begun is unread yet: the next one named
            latest = at == len(self.ahead) - 1
            if run.epoch == epoch and (named is not None or self._unread(run, latest)):
                self.named, self.ahead = run, self.ahead[at + 1 :]
                self.mark = self._drawn()
                return True
        return False

    @staticmethod
    def _unread(run: Pass, latest: bool) -> bool:
        """Whether ``run`` may be unread: running, or the latest pass, prefetched whole."""
        return not run.done or (latest and run.prefetched)

    def _warn(self, epoch: int) -> None:
        if epoch <= self.ran:
            message = (
                f"EpochSampler.set_epoch({epoch}) goes back: epoch {self.ran} already ran (in "
                "this sampler, or before the epoch it was built or restored at), so epoch "
                f"{epoch} replays an earlier epoch's order and augmentations. After a resume, "
                "give the sampler the epoch to continue from: EpochSampler(..., epoch=...) or "
                "load_state_dict(); with accelerate, call loader.set_epoch(epoch) every epoch "
                "(its prepared loader calls set_epoch with a count of its own, which starts "
                "at 0 again in a new process)."
            )
        else:
            running = [run.epoch for run in self.ahead if not run.ended]
            if not running:
                return
            message = (
                f"EpochSampler.set_epoch({epoch}) came while the pass of epoch {running[-1]} "
                "was already running (the loader drew its indices before the call): that pass "
                f"stays epoch {running[-1]}, and epoch {epoch} begins with the next pass. A "
                "loader whose iterator is built before set_epoch is called (PyTorch Lightning, "
                "on the first epoch of a run or of a resumed run) needs the epoch when the "
                "sampler is built: EpochSampler(..., epoch=...)."
            )
        warnings.warn(message, RankaugWarning, stacklevel=4)

    def _drawn(self) -> tuple[int, int]:
        """How far the named pass and those begun after it have got."""
        named = 0 if self.named is None else self.named.position
        return len(self.ahead), named + sum(run.position for run in self.ahead)

    def thrown_away(self) -> Pass | None:
        """The pass set_epoch named, if it was thrown away unread since the call."""
        named = self.named
        if named is None or self.mark is None or self.mark != self._drawn():
            return None
        latest = self.ahead[-1] if self.ahead else named
        return None if latest.done else named

    def upcoming(self) -> int:
        """The epoch of the next pass (a restored pass aside)."""
        again = self.thrown_away()
        return self.next if again is None else again.epoch

    def began(self, run: Pass, *, restored: bool) -> None:
        """Record a pass that began (``restored``: where a saved state left off)."""
        self.begun += 1
        latest, self.latest = self.latest, run
        if latest is not None and latest.done:  # a prefetched pass: read, or thrown away
            self.ran = max(self.ran, latest.epoch)
        if not restored and (self.pending or self.thrown_away() is not None):
            self.named, self.pending, self.ahead, self.mark = run, False, [], None
            return
        self.ahead.append(run)
        if len(self.ahead) > _AHEAD:  # nobody calls set_epoch once per pass
            self.named, self.ahead = None, self.ahead[-_AHEAD:]

    def restored(self, epoch: int) -> None:
        """Start afresh from a restored state whose pass has ``epoch``."""
        self.ran = epoch - 1
        self.forget()
