"""Sample ids of a stream, and their stable 64-bit hash for ``keying="sample"``.

``sample_id=`` names where a streamed sample's id is: a key of dict samples
(webdataset's ``"__key__"``, a column such as ``"id"``) or a callable
``sample -> str | int | bytes``. The id enters the key (:data:`rankaug.keys.Domain`
``SAMPLE_ID``) as the first 8 bytes of its BLAKE2b digest, little-endian, after a
one-byte type tag (``s`` text, ``b`` bytes, ``i`` an integer in decimal): stable
across processes, machines and Python versions, unlike ``hash()``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from rankaug.checks._messages import type_error

__all__ = ["SampleIds", "id_word"]


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
