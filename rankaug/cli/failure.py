"""A sample that fails inside a DataLoader worker, reported in one line.

A dataset that raises inside a worker reaches the rank as PyTorch's re-raised copy,
its message a whole worker traceback. The CLI's loaders catch the failure where it
happens instead and hand back a :class:`Failure` record; the rank then raises
:class:`SampleFailure`, which :func:`rankaug.cli.launch.launch` carries back as it is,
so the command exits 2 with one line naming the target, the index, the rank, the
worker and the epoch, the error and where it was raised::

    rankaug audit: error: tests.cli_targets:broken: dataset[4] failed at index 4
    (rank 0, worker 0, epoch 0): OSError: cannot read image 4 (at .../cli_targets.py:97)

A :class:`rankaug.SampleError` from a rankaug wrapper already names all of that (the
rank and epoch its key used); its message is kept as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch.utils.data import get_worker_info

from rankaug.cli.launch import LaunchError
from rankaug.cli.target import where
from rankaug.errors import SampleError

__all__ = ["Failure", "SampleFailure", "batch_failure", "load", "one_line"]


def one_line(text: str) -> str:
    r"""``text`` with its lines joined by ``" | "`` (blank lines dropped).

    >>> one_line("first\n\n  second ")
    'first | second'
    """
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


class SampleFailure(LaunchError):
    """A sample failed on a rank; the message is one line (see the module docstring)."""


@dataclass(frozen=True)
class Failure:
    """What a worker hands back instead of a sample that failed.

    Attributes:
        stage: What failed, e.g. ``"dataset[4]"``.
        index: The index being loaded.
        worker: The DataLoader worker id (0 in the rank process).
        detail: ``"Type: message (at file:line)"``, one line.
        located: Whether ``detail`` is a :class:`rankaug.SampleError`'s message, which
            names index, rank, worker and epoch itself.
        hint: What to do about it (appended to the message), or ``""``.
    """

    stage: str
    index: int
    worker: int
    detail: str
    located: bool = False
    hint: str = ""

    @classmethod
    def of(cls, stage: str, index: int, worker: int, error: Exception, hint: str = "") -> Failure:
        """The record of ``error``, raised while ``stage`` ran on ``index``.

        Args:
            stage: What failed, e.g. ``"dataset[3]"``.
            index: The index.
            worker: The worker id.
            error: The exception.
            hint: What to do about it.

        Returns:
            The record.

        >>> Failure.of("dataset[3]", 3, 1, KeyError("img")).detail
        "KeyError: 'img'"
        """
        if isinstance(error, SampleError):
            cause = error.__cause__ if error.__cause__ is not None else error
            detail = one_line(f"{error}{where(cause)}")
            return cls(stage, int(index), worker, detail, True, hint)
        detail = one_line(f"{type(error).__name__}: {error}{where(error)}")
        return cls(stage, int(index), worker, detail, False, hint)

    def error(self, target: str, *, rank: int, epoch: int) -> SampleFailure:
        """The one-line error for ``target``, loaded on ``rank`` in ``epoch``.

        >>> print(Failure("dataset[4]", 4, 0, "OSError: gone").error("m:f", rank=1, epoch=0))
        m:f: dataset[4] failed at index 4 (rank 1, worker 0, epoch 0): OSError: gone
        """
        if self.located:
            text = f"{target}: {self.detail}"
        else:
            text = (
                f"{target}: {self.stage} failed at index {self.index} (rank {rank}, worker "
                f"{self.worker}, epoch {epoch}): {self.detail}"
            )
        return SampleFailure(f"{text}; {self.hint}" if self.hint else text)


def batch_failure(
    target: str, fed: str, error: Exception, *, rank: int, epoch: int, hint: str = ""
) -> SampleFailure:
    """The one-line error for a batch transform that raised in the audit (no DataLoader).

    Args:
        target: The TARGET.
        fed: What it was called on, e.g. ``"the audit's batch of 8 synthetic images"``.
        error: The exception.
        rank: The rank.
        epoch: The epoch.
        hint: What to do about it (appended to the message), or ``""``.

    >>> print(batch_failure("m:f", "8 images", ValueError("no boxes"), rank=1, epoch=0))
    m:f: the batch transform failed on 8 images (rank 1, epoch 0): ValueError: no boxes
    """
    detail = Failure.of("", 0, 0, error).detail
    text = f"{target}: the batch transform failed on {fed} (rank {rank}, epoch {epoch}): {detail}"
    return SampleFailure(f"{text}; {hint}" if hint else text)


def load(dataset: Any, index: int) -> tuple[int, Any] | Failure:
    """``(worker id, dataset[index])`` in a DataLoader worker, or the failure's record."""
    info = get_worker_info()
    worker = 0 if info is None else info.id
    try:
        return worker, dataset[index]
    except Exception as error:
        return Failure.of(f"dataset[{index}]", index, worker, error)
