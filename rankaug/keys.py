"""The key specification: every random draw in rankaug starts here.

A key is a tuple of integers — ``(base_seed, stream, rank, worker_id, epoch)`` for a
stream, or ``(base_seed, stream, epoch, index)`` (optionally with the rank) for one
sample — encoded as a fixed list of 32-bit words that begins with a domain tag and
feeds :class:`numpy.random.SeedSequence`. The layout (version 1) is::

    word  0      1             2..3        4       5..
    all   MAGIC  DOMAIN        seed lo,hi  stream  <fields of the domain>
    STREAM       0x0001_0001   ...                 rank, worker_id, epoch
    SAMPLE       0x0001_0002   ...                 epoch, index lo, index hi
    SAMPLE_RANK  0x0001_0003   ...                 epoch, index lo, index hi, rank
    WORKER_INIT  0x0001_0004   ...                 rank, worker_id, loader seed lo, hi

``MAGIC`` is ``0x726B6167`` ("rkag"). Every field has a fixed width (64-bit values take
two words, low word first), every domain has a fixed length, and the domain tag names
the layout, so two different keys can never produce the same word list. This avoids
the traps of feeding numpy raw integers: ``SeedSequence`` splits an integer of 2**32 or
more into words (``[7, 2**32]`` equals ``[7, 0, 1]``) and pads the entropy to four words
(``[s, 0, 0, 0]`` equals ``s``, the stream albumentations' ``Compose(seed=s)`` uses), and
``seed + rank`` makes run ``s`` rank 1 equal run ``s + 1`` rank 0.

From one key's ``SeedSequence`` rankaug builds a ``Generator(PCG64(seed_sequence))``
(which reads state words 0..7) and, when a transform needs Python's ``random``, a
``random.Random`` seeded with state words 8..11 (as one 128-bit integer, little-endian).
A torch seed, when one is needed, is one ``integers(0, 2**63)`` draw from the generator.

Changing any of this changes every user's augmentations: the golden-value tests in
``tests/test_keys.py`` pin it.
"""

from __future__ import annotations

import hashlib
import random
from enum import IntEnum
from typing import Final, Literal

import numpy as np

__all__ = [
    "MAGIC",
    "Domain",
    "KeyedRandom",
    "Keying",
    "check_keying",
    "check_uint",
    "key_words",
    "make_rng",
    "make_seed_sequence",
    "stream_id",
]

MAGIC: Final = 0x726B6167
_MASK32: Final = 0xFFFF_FFFF

Keying = Literal["stream", "sample", "sample_rank"]
_KEYINGS: Final[tuple[Keying, ...]] = ("stream", "sample", "sample_rank")


class Domain(IntEnum):
    """Domain tags: word 1 of every key, naming the layout of the words after it."""

    STREAM = 0x0001_0001
    SAMPLE = 0x0001_0002
    SAMPLE_RANK = 0x0001_0003
    WORKER_INIT = 0x0001_0004


def check_uint(value: object, name: str, bits: int) -> int:
    """Return ``value`` as a Python int after checking ``0 <= value < 2**bits``.

    Python and numpy integers are accepted; ``bool``, floats and everything else are
    refused, since a float seed silently truncates and ``True`` is rarely meant as 1.

    Args:
        value: The value to check.
        name: The argument's name, used in the error message.
        bits: The width of the field: 32 or 64.

    Returns:
        The value as a Python ``int``.

    Raises:
        TypeError: If ``value`` is not an integer.
        ValueError: If ``value`` is out of range.

    >>> check_uint(np.uint16(7), "rank", 32)
    7
    >>> check_uint(2**32, "rank", 32)
    Traceback (most recent call last):
    ...
    ValueError: rank must be an integer in [0, 2**32), got 4294967296
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(
            f"{name} must be an integer in [0, 2**{bits}), got {value!r} "
            f"of type {type(value).__name__}"
        )
    ivalue = int(value)
    if not 0 <= ivalue < (1 << bits):
        raise ValueError(f"{name} must be an integer in [0, 2**{bits}), got {ivalue}")
    return ivalue


def check_keying(value: object) -> Keying:
    """Check a ``keying=`` argument.

    Args:
        value: ``"stream"``, ``"sample"`` or ``"sample_rank"``.

    Returns:
        The keying.

    Raises:
        TypeError: If ``value`` is not a string.
        ValueError: If it is not one of the three keyings.

    >>> check_keying("sample")
    'sample'
    """
    if not isinstance(value, str):
        raise TypeError(
            f"keying must be one of {_KEYINGS}, got {value!r} of type {type(value).__name__}"
        )
    for keying in _KEYINGS:
        if value == keying:
            return keying
    raise ValueError(f"keying must be one of {_KEYINGS}, got {value!r}")


def stream_id(name: str | int) -> int:
    """Turn a stream name into the 32-bit stream word of a key.

    Integers in ``[0, 2**32)`` are used as they are. Strings are hashed with BLAKE2b
    (4-byte digest, little-endian), which is stable across processes and Python
    versions, unlike ``hash()``.

    Args:
        name: A stream name or number.

    Returns:
        The stream word.

    >>> stream_id(5)
    5
    >>> stream_id("rankaug.RandomAugmentWrapper/0") == stream_id("rankaug.MosaicDataset/0")
    False
    """
    if isinstance(name, str):
        digest = hashlib.blake2b(name.encode("utf-8"), digest_size=4).digest()
        return int.from_bytes(digest, "little")
    return check_uint(name, "stream", 32)


def _split64(value: int) -> tuple[int, int]:
    return value & _MASK32, value >> 32


def key_words(
    base_seed: int,
    *,
    rank: int | None = None,
    worker_id: int | None = None,
    epoch: int = 0,
    index: int | None = None,
    stream: int | str = 0,
) -> np.ndarray:
    """Encode a key as its fixed-width 32-bit words (see the module docstring).

    With ``index=None`` the key names a stream: ``rank`` and ``worker_id`` are
    required. With an ``index`` it names one sample: ``worker_id`` must be ``None``
    (a per-sample key must not depend on which worker loads the sample) and ``rank`` is
    optional.

    Args:
        base_seed: The run's seed, ``0 <= base_seed < 2**64``.
        rank: The process rank, below ``2**32``. Defaults to ``None``.
        worker_id: The DataLoader worker id, below ``2**32``. Defaults to ``None``.
        epoch: The epoch, below ``2**32``. Defaults to ``0``.
        index: The sample index, below ``2**64``; ``None`` for a stream key. Defaults to
            ``None``.
        stream: The stream word or name (see :func:`stream_id`). Defaults to ``0``.

    Returns:
        A ``uint32`` array of 8 or 9 words.

    Raises:
        TypeError: If an argument is not an integer or a needed one is missing.
        ValueError: If an argument is out of range or an argument does not belong to
            the kind of key asked for.

    >>> key_words(7, rank=1, worker_id=0, epoch=2).tolist()
    [1919639911, 65537, 7, 0, 0, 1, 0, 2]
    >>> key_words(2**32 + 7, epoch=0, index=2**32).tolist()
    [1919639911, 65538, 7, 1, 0, 0, 0, 1]
    """
    seed_lo, seed_hi = _split64(check_uint(base_seed, "base_seed", 64))
    stream_word = stream_id(stream)
    epoch_word = check_uint(epoch, "epoch", 32)
    if index is None:
        if rank is None or worker_id is None:
            raise TypeError("a stream key (index=None) needs both rank= and worker_id=")
        fields = [
            Domain.STREAM,
            seed_lo,
            seed_hi,
            stream_word,
            check_uint(rank, "rank", 32),
            check_uint(worker_id, "worker_id", 32),
            epoch_word,
        ]
    else:
        if worker_id is not None:
            raise ValueError(
                f"worker_id={worker_id!r} cannot enter a per-sample key "
                "(index given): the same index must give the same sample "
                "whichever worker loads it; pass worker_id=None"
            )
        index_lo, index_hi = _split64(check_uint(index, "index", 64))
        if rank is None:
            fields = [Domain.SAMPLE, seed_lo, seed_hi, stream_word, epoch_word, index_lo, index_hi]
        else:
            fields = [
                Domain.SAMPLE_RANK,
                seed_lo,
                seed_hi,
                stream_word,
                epoch_word,
                index_lo,
                index_hi,
                check_uint(rank, "rank", 32),
            ]
    return np.array([MAGIC, *fields], dtype=np.uint32)


def make_seed_sequence(
    base_seed: int,
    *,
    rank: int | None = None,
    worker_id: int | None = None,
    epoch: int = 0,
    index: int | None = None,
    stream: int | str = 0,
) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` of a key; arguments as :func:`key_words`.

    The words go in as a ``uint32`` array, which numpy takes word for word, exactly as
    the equivalent list of small Python integers:

    >>> ss = make_seed_sequence(0, rank=0, worker_id=0)
    >>> ss.entropy.tolist() == [MAGIC, Domain.STREAM, 0, 0, 0, 0, 0, 0]
    True
    >>> same = np.random.SeedSequence([MAGIC, Domain.STREAM, 0, 0, 0, 0, 0, 0])
    >>> bool((ss.generate_state(4) == same.generate_state(4)).all())
    True
    """
    return np.random.SeedSequence(
        key_words(
            base_seed, rank=rank, worker_id=worker_id, epoch=epoch, index=index, stream=stream
        )
    )


def make_rng(
    base_seed: int,
    *,
    rank: int | None = None,
    worker_id: int | None = None,
    epoch: int = 0,
    index: int | None = None,
    stream: int | str = 0,
) -> np.random.Generator:
    """A numpy Generator derived from a key; arguments as :func:`key_words`.

    The same key always gives the same Generator, on every machine and numpy version
    that keeps ``PCG64`` and ``SeedSequence`` stable (numpy promises both).

    Returns:
        ``Generator(PCG64(make_seed_sequence(...)))``.

    >>> a = make_rng(0, rank=0, worker_id=0, epoch=0)
    >>> b = make_rng(0, rank=1, worker_id=0, epoch=0)
    >>> bool(a.integers(2**62) != b.integers(2**62))
    True
    >>> int(make_rng(0, epoch=3, index=41).integers(1000)) == int(
    ...     make_rng(0, epoch=3, index=41).integers(1000))
    True
    """
    return KeyedRandom(
        make_seed_sequence(
            base_seed, rank=rank, worker_id=worker_id, epoch=epoch, index=index, stream=stream
        )
    ).generator


class KeyedRandom:
    """The random state of one key: a numpy Generator, and a ``random.Random`` on demand.

    Attributes:
        seed_sequence: The key's ``SeedSequence``.
        generator: ``Generator(PCG64(seed_sequence))``.

    >>> r = KeyedRandom(make_seed_sequence(0, epoch=0, index=3))
    >>> 0 <= r.py_random.random() < 1 and 0 <= r.torch_seed() < 2**63
    True
    """

    __slots__ = ("_py_random", "generator", "seed_sequence")

    def __init__(self, seed_sequence: np.random.SeedSequence) -> None:
        self.seed_sequence = seed_sequence
        self.generator = np.random.Generator(np.random.PCG64(seed_sequence))
        self._py_random: random.Random | None = None

    @property
    def py_random(self) -> random.Random:
        """A ``random.Random`` seeded from state words 8..11 of the key (made once)."""
        py_random = self._py_random
        if py_random is None:
            words = self.seed_sequence.generate_state(12)[8:].tolist()
            seed = words[0] | words[1] << 32 | words[2] << 64 | words[3] << 96
            py_random = random.Random(seed)
            self._py_random = py_random
        return py_random

    def torch_seed(self) -> int:
        """Draw a seed for ``torch.manual_seed`` from the generator (one draw)."""
        return int(self.generator.integers(0, 1 << 63))
