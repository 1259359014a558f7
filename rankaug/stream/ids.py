"""Sample ids of a stream, and their stable 64-bit hash for ``keying="sample"``.

``sample_id=`` names where a streamed sample's id is: a key of dict samples
(webdataset's ``"__key__"``, a column such as ``"id"``) or a callable
``sample -> str | int | bytes``. The id enters the key (:data:`rankaug.keys.Domain`
``SAMPLE_ID``) as the first 8 bytes of its BLAKE2b digest, little-endian, after a
one-byte type tag (``s`` text, ``b`` bytes, ``i`` an integer in decimal): stable
across processes, machines and Python versions, unlike ``hash()``.

Two samples of one id draw the same augmentation: each pass (one worker's part of an
epoch) watches the ids of its last :data:`REPEAT_WINDOW` outputs and warns, once, of one
that repeats (:class:`Repeats`). Memory stays bounded on any epoch, so repeats farther
apart, or in another worker's or rank's pass, are not seen.
"""

from __future__ import annotations

import hashlib
import warnings
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
import torch

from rankaug.checks._messages import type_error
from rankaug.errors import RankaugWarning, id_text

__all__ = ["REPEAT_WINDOW", "Repeats", "SampleIds", "id_word"]

REPEAT_WINDOW: Final = 1 << 16
"""How many of a pass's latest outputs' ids :class:`Repeats` holds (a few MB at most)."""


def id_word(value: object) -> int:
    """The 64-bit word a sample id enters the key as.

    Args:
        value: A ``str``, ``bytes`` or integer id.

    Returns:
        An integer in ``[0, 2**64)``.

    Raises:
        TypeError: If ``value`` is none of these (a ``bool`` is not an id).

    >>> id_word("000017") == id_word("000017") != id_word(17)
    True
    >>> id_word("a")
    1410542633125930404
    """
    if isinstance(value, str):
        data = b"s" + value.encode("utf-8")
    elif isinstance(value, bytes):
        data = b"b" + value
    elif isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        data = b"i" + str(int(value)).encode("ascii")
    else:
        raise type_error("a sample id", "a str, bytes or int", value)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


class SampleIds:
    """Reads the id of each streamed sample, as ``sample_id=`` says.

    Args:
        sample_id: A key of dict samples, a callable ``sample -> id``, or ``None``
            (no ids).

    Raises:
        TypeError: If ``sample_id`` is none of these.
    """

    __slots__ = ("source",)

    def __init__(self, sample_id: str | Callable[[Any], Any] | None) -> None:
        if sample_id is not None and not isinstance(sample_id, str) and not callable(sample_id):
            raise type_error("sample_id", "a key of the samples or a callable", sample_id)
        self.source = sample_id

    @property
    def given(self) -> bool:
        """Whether ids were asked for."""
        return self.source is not None

    def __call__(self, sample: Any) -> Any:
        """The id of ``sample`` (``None`` without ``sample_id=``), checked.

        A 0-d integer tensor (``with_format("torch")``'s id column) is read as its
        ``int``.

        Raises:
            KeyError: If a dict sample lacks the key.
            TypeError: If the sample is not a dict (for a key) or the id is no str,
                bytes or int.
        """
        source = self.source
        if source is None:
            return None
        if callable(source):
            value = source(sample)
        elif isinstance(sample, Mapping):
            if source not in sample:
                raise KeyError(
                    f"sample_id={source!r}: the sample has no such key (it has "
                    f"{sorted(map(str, sample))}); pass the key of its id or a callable"
                )
            value = sample[source]
        else:
            raise type_error(
                f"a sample (sample_id={source!r} reads a key)", "a dict", sample, short=True
            )
        if isinstance(value, torch.Tensor) and value.ndim == 0 and _integral(value.dtype):
            value = int(value.item())
        id_word(value)  # checked here, with the sample at hand
        return value

    def __repr__(self) -> str:
        return f"SampleIds({self.source!r})"


def _integral(dtype: torch.dtype) -> bool:
    """Whether ``dtype`` holds integers (not ``bool``)."""
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)


class Repeats:
    """The ids of a pass's latest outputs under ``keying="sample"``: one repeated warns.

    Holds the 64-bit words of the last :data:`REPEAT_WINDOW` ids, and stops watching
    once it has warned (once per pass).

    Args:
        epoch: The pass's epoch.
        rank: Its rank.
        worker_id: Its worker.
    """

    __slots__ = ("epoch", "order", "rank", "seen", "warned", "worker_id")

    def __init__(self, epoch: int, rank: int, worker_id: int) -> None:
        self.epoch, self.rank, self.worker_id = epoch, rank, worker_id
        self.order: deque[int] = deque()
        self.seen: set[int] = set()
        self.warned = False

    def word(self, sample_id: Any, owner: object) -> int:
        """The key word of ``sample_id`` (:func:`id_word`), watched for repeats.

        Warns:
            RankaugWarning: If ``sample_id`` is one of the last :data:`REPEAT_WINDOW`
                ids of the pass (the first such in the pass only), naming ``owner``'s class.
        """
        word = id_word(sample_id)
        if self.warned:
            return word
        seen = self.seen
        if word in seen:
            self.warned = True
            seen.clear()
            self.order.clear()
            warnings.warn(self._message(sample_id, type(owner).__name__), RankaugWarning,
                          stacklevel=3)  # fmt: skip
            return word
        seen.add(word)
        order = self.order
        order.append(word)
        if len(order) > REPEAT_WINDOW:
            seen.discard(order.popleft())
        return word

    def _message(self, sample_id: Any, owner: str) -> str:
        return (
            f"{owner}: sample id {id_text(sample_id)} came twice in the pass of epoch {self.epoch} "
            f"(rank {self.rank}, worker {self.worker_id}): with keying='sample' both samples "
            "draw the same augmentation (one Generator per seed, epoch and id). Make the "
            "ids unique (a webdataset __key__ with its shard's name, say) or use "
            "keying='stream'. Warned once per pass; only repeats within "
            f"{REPEAT_WINDOW} outputs of one worker's pass are seen"
        )
