"""The error a failing sample is re-raised as, with where it failed attached."""

from __future__ import annotations

import ast
import operator
import os
import re
import sys
from typing import Final

from rankaug import checks

__all__ = ["RankaugWarning", "SampleError", "outside_level"]

#: rankaug's folder: its frames are passed over by the warnings (:func:`outside_level`).
_PACKAGE: Final = os.path.join(os.path.dirname(__file__), "")


class RankaugWarning(UserWarning):
    """A setting that silently weakens rankaug's guarantees (a wrong rank, a late epoch)."""


def outside_level() -> int:
    """The ``stacklevel`` of its caller's first caller outside rankaug, for its caller's warning.

    A wrapper reaches the checks of its construction through one constructor or more
    (``RandomAugmentWrapper(stream)`` and ``StreamingAugment(stream)`` do not count alike),
    so their warnings name the line that made the wrapper.
    """
    frame = sys._getframe(2)  # the warning function's caller: stacklevel 2 there
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


class SampleError(RuntimeError):
    """A user's dataset or transform failed on one sample.

    The original exception is the ``__cause__``; the message and the attributes say
    where it happened, so a failure deep inside a DataLoader worker on one rank can be
    replayed: load the same index with the same rank, worker and epoch.

    Through a DataLoader worker only the text survives: PyTorch re-raises a worker's
    error as ``SampleError(text)``, the text holding the worker's traceback (the
    original exception's included). So the message carries every field too, and an
    error made from such a text reads its fields back from it; its ``__cause__`` is
    gone, the original's traceback is in the text. The fields are read from the
    traceback's last line that starts with ``SampleError:``, the raised error's own: the
    message's further lines (a multi-line error's text) are indented, the id is a
    literal (``repr``), and so is a stage that could be misread (several lines, a quote
    first, ``" failed at index "`` in it), so no text of a sample, a stage or an error
    can pass for the fields.

    Attributes:
        index: The index passed to ``__getitem__``.
        rank: The rank the key used.
        worker_id: The DataLoader worker id (0 in the main process).
        epoch: The epoch.
        stage: What failed, e.g. ``"dataset[12]"`` or ``"transform"``.
        sample_id: A streamed sample's id (``sample_id=``), or ``None``; read back from
            a worker's text it is the ``str``, ``bytes`` or ``int`` it was (another id
            comes back as its ``repr``, a ``str``).

    >>> err = SampleError.at("transform", index=3, rank=1, worker_id=0, epoch=2,
    ...                      error=KeyError("labels"))
    >>> str(err)
    "transform failed at index 3 (rank 1, worker 0, epoch 2): KeyError: 'labels'"
    >>> str(SampleError.at("transform", index=5, rank=0, worker_id=1, epoch=0,
    ...                    error=KeyError("labels"), sample_id="s0013"))
    "transform failed at index 5 (id 's0013', rank 0, worker 1, epoch 0): KeyError: 'labels'"
    """

    index: int | None
    rank: int | None
    worker_id: int | None
    epoch: int | None
    stage: str | None
    sample_id: object

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        rank: int | None = None,
        worker_id: int | None = None,
        epoch: int | None = None,
        stage: str | None = None,
        sample_id: object = None,
    ) -> None:
        checks.instance(message, "message", str, what="a str", optional=False)
        index, rank, worker_id, epoch = (
            None if value is None else checks.integer(value, name)
            for name, value in (("index", index), ("rank", rank), ("worker_id", worker_id),
                                ("epoch", epoch))
        )  # fmt: skip
        checks.instance(stage, "stage", str, what="a str")
        super().__init__(message)
        if index is None and rank is None and worker_id is None and stage is None:
            found = _last_fields(message)  # re-raised from a DataLoader worker's text
            if found is not None:
                stage, index, rank, worker_id, epoch, sample_id = found
        self.index = index
        self.rank = rank
        self.worker_id = worker_id
        self.epoch = epoch
        self.stage = stage
        self.sample_id = sample_id

    @classmethod
    def at(
        cls,
        stage: str,
        *,
        index: int,
        rank: int,
        worker_id: int,
        epoch: int | None,
        error: BaseException,
        where: str = "",
        sample_id: object = None,
    ) -> SampleError:
        """Build the error for ``error`` raised by ``stage`` on one sample.

        Args:
            stage: What failed, e.g. ``"dataset[12]"`` or ``"transform"``.
            index: The index passed to ``__getitem__``.
            rank: The rank.
            worker_id: The worker id.
            epoch: The epoch; ``None`` where none is known (left out of the message).
            error: The original exception (set it as the cause with ``raise ... from``).
            where: Said after the fields (``"in CachedDataset of /cache/..."``).
            sample_id: A streamed sample's id, or ``None`` (left out of the message).

        Returns:
            The new error.
        """
        message = failure_text(stage, index=index, rank=rank, worker_id=worker_id, epoch=epoch,
                               detail=f"{type(error).__name__}: {error}", where=where,
                               sample_id=sample_id)  # fmt: skip
        return cls(message, index=index, rank=rank, worker_id=worker_id, epoch=epoch,
                   stage=stage, sample_id=sample_id)  # fmt: skip

    def __reduce__(self) -> tuple[object, ...]:
        kwargs = {
            "index": self.index,
            "rank": self.rank,
            "worker_id": self.worker_id,
            "epoch": self.epoch,
            "stage": self.stage,
            "sample_id": self.sample_id,
        }
        return (_rebuild, (type(self), str(self), kwargs))


def _rebuild(cls: type[SampleError], message: str, kwargs: dict[str, object]) -> SampleError:
    return cls(message, **kwargs)  # type: ignore[arg-type]


_INDENT: Final = "\n    "  # the message's further lines (a multi-line error's text)
_LINE: Final = re.compile(r"(?:\w+\.)*SampleError: ")  # a traceback's final line
# An id as id_text writes it: a str or bytes literal as repr() writes one, or an int.
_ESCAPE: Final = r"""\\(?:[\\'"tnr]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})"""
_ID: Final = rf"""b?'(?:[^'\\\n]|{_ESCAPE})*'|b?"(?:[^"\\\n]|{_ESCAPE})*"|-?\d+"""
# A stage as _stage_text writes it: a str literal, or text that starts with no quote.
_STAGE: Final = rf"""'(?:[^'\\\n]|{_ESCAPE})*'|"(?:[^"\\\n]|{_ESCAPE})*"|[^\n'"][^\n]*?"""
_FIELDS: Final = re.compile(
    rf"(?:(?:\w+\.)*SampleError: )?(?P<stage>{_STAGE}) failed at index (?P<index>-?\d+) "
    rf"\((?:id (?P<id>{_ID}), )?rank (?P<rank>\d+), worker (?P<worker>\d+)"
    r"(?:, epoch (?P<epoch>\d+))?\)(?=[: ]|$)",
    re.MULTILINE,
)


def failure_text(
    stage: str,
    *,
    index: int,
    rank: int,
    worker_id: int,
    epoch: int | None,
    detail: str,
    where: str = "",
    sample_id: object = None,
) -> str:
    r"""The message of a :class:`SampleError`, from which its fields are read back.

    Args:
        stage: What failed (written as :func:`_stage_text` says).
        index: The index.
        rank: The rank.
        worker_id: The worker id.
        epoch: The epoch, or ``None`` (left out).
        detail: What went wrong, ``"Type: message"``.
        where: Said after the fields, or ``""``.
        sample_id: The sample's id, or ``None`` (left out).

    Returns:
        The message; its further lines are indented.

    >>> failure_text("a\nb", index=1, rank=0, worker_id=2, epoch=None, detail="E: x")
    "'a\\nb' failed at index 1 (rank 0, worker 2): E: x"
    """
    when = "" if epoch is None else f", epoch {epoch}"
    place = f" {where}" if where else ""
    named = "" if sample_id is None else f"id {id_text(sample_id)}, "
    return (
        f"{_stage_text(stage)} failed at index {index} ({named}rank {rank}, worker {worker_id}"
        f"{when}){place}: {detail}"
    ).replace("\n", _INDENT)  # only the first line starts where a traceback's last does


def _stage_text(stage: str) -> str:
    """How a message names a stage: as it is, or its ``repr`` where that could misread.

    As it is when it is one printable line that starts with no quote, does not start
    like a traceback's final line (``SampleError: ``) and holds no ``" failed at index "``:
    then the first such text of the message is the fields'. Else the ``repr``, a literal
    that :func:`_read_stage` reads back.
    """
    plain = (
        stage.isprintable()
        and stage[:1] not in ("", "'", '"')
        and _LINE.match(stage) is None
        and " failed at index " not in stage
    )
    return stage if plain else repr(stage)


def id_text(sample_id: object) -> str:
    """How a message names a sample id: a literal that :class:`SampleError` reads back.

    A ``str`` or ``bytes`` id (NumPy's too) is its plain ``repr``, an integer (NumPy's, a
    0-d tensor's) its ``int``'s, and anything else the ``repr`` of its ``repr`` (read back
    as that text).
    Shared by every message that names an id (a window's ``dataset[i] (id ...)`` too).

    Args:
        sample_id: The id.

    Returns:
        The literal.

    >>> id_text("s0013"), id_text(7), id_text(2.5)
    ("'s0013'", '7', "'2.5'")
    """
    if isinstance(sample_id, str):  # NumPy's np.str_ too (Hugging Face's numpy format)
        return repr(str(sample_id))
    if isinstance(sample_id, bytes):
        return repr(bytes(sample_id))
    if not isinstance(sample_id, bool) and hasattr(type(sample_id), "__index__"):
        try:
            return repr(operator.index(sample_id))  # type: ignore[arg-type]
        except TypeError:  # an __index__ that refuses (a float tensor's)
            pass
    return repr(repr(sample_id))


def _last_fields(text: str) -> tuple[str, int, int, int, int | None, object] | None:
    """The fields of the last ``SampleError: ...`` line of a worker's traceback text.

    That line starts the raised error's own message (its further lines are indented, so
    an error's text that holds such a line never starts one), and its fields come first;
    the id is a literal of a strict grammar, so one holding ``", rank 3"`` is read whole.
    """
    lines = [line for line in text.split("\n") if _LINE.match(line)]
    found = _FIELDS.match(lines[-1]) if lines else None  # the raised error's own line
    if found is None:
        found = _FIELDS.match(text)  # a message of our own: its fields first
    if found is None:
        return None
    epoch = found["epoch"]
    return (_read_stage(found["stage"]), int(found["index"]), int(found["rank"]),
            int(found["worker"]), None if epoch is None else int(epoch),
            _read_id(found["id"]))  # fmt: skip


def _read_id(text: str | None) -> object:
    """A sample id from its literal in a message (the text itself if it reads as none)."""
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _read_stage(text: str) -> str:
    """A stage from its text in a message (a quoted one is the literal's ``str``)."""
    if text[:1] not in ("'", '"'):
        return text
    try:
        stage = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return stage if isinstance(stage, str) else text
