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
    WORKER_INIT  0x0001_0004   seed lo,hi          rank, worker_id, loader seed lo, hi
    BATCH_SAMPLE 0x0001_0005   ...                 epoch, index lo, index hi
    BATCH_STEP   0x0001_0006   ...                 rank, epoch, step lo, hi, position
    SAMPLE_ID    0x0001_0007   ...                 epoch, sample id lo, sample id hi

``WORKER_INIT`` (:class:`~rankaug.WorkerSeeder`) has no stream word: its fields start
at word 4. The two ``BATCH_`` domains (:class:`~rankaug.BatchAugment`, whose stream
word tells two augmentations with the same seed apart) are hashed on the batch's
device (MurmurHash3, :mod:`rankaug.batch._keys`), not fed to ``SeedSequence``.

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
The ``SeedSequence`` is a :class:`~rankaug.keyed_random.KeySeedSequence`, numpy's with
its state words computed faster, the same words bit for bit.

Changing any of this changes every user's augmentations: the golden-value tests in
``tests/test_keys.py`` pin it.
"""

from __future__ import annotations

import hashlib
from enum import IntEnum
from typing import Final, Literal

import numpy as np

from rankaug import checks
from rankaug.keyed_random import KeyedRandom, KeySeedSequence

__all__ = [
    "MAGIC",
    "Domain",
    "KeyBuilder",
    "KeyTemplate",
    "KeyedRandom",
    "Keying",
    "check_keying",
    "key_words",
    "make_rng",
    "make_seed_sequence",
    "stream_id",
]

MAGIC: Final = 0x726B6167
MASK32: Final = 0xFFFF_FFFF
"""The low 32 bits of an integer: the one mask every word of a key goes through."""

Keying = Literal["stream", "sample", "sample_rank"]
"""What a wrapper's Generator is keyed by: ``"stream"``, one per ``(seed, stream, rank,
worker_id, epoch)``; ``"sample"``, one per ``(seed, stream, epoch, index)``;
``"sample_rank"``, that and the rank (see :mod:`rankaug.keyed`)."""

KEYINGS: Final[tuple[Keying, ...]] = ("stream", "sample", "sample_rank")


class Domain(IntEnum):
    """Domain tags: word 1 of every key, naming the layout of the words after it."""

    STREAM = 0x0001_0001
    SAMPLE = 0x0001_0002
    SAMPLE_RANK = 0x0001_0003
    WORKER_INIT = 0x0001_0004
    BATCH_SAMPLE = 0x0001_0005
    BATCH_STEP = 0x0001_0006
    SAMPLE_ID = 0x0001_0007
    """A streamed sample, by the 64-bit stable hash of its id (:mod:`rankaug.stream.ids`)."""


#: The word layout of each domain after the two header words: (field, bits), in order.
#: This table is the specification; every key in rankaug is built from it.
LAYOUTS: Final[dict[Domain, tuple[tuple[str, int], ...]]] = {
    Domain.STREAM: (("seed", 64), ("stream", 32), ("rank", 32), ("worker_id", 32), ("epoch", 32)),
    Domain.SAMPLE: (("seed", 64), ("stream", 32), ("epoch", 32), ("index", 64)),
    Domain.SAMPLE_RANK: (("seed", 64), ("stream", 32), ("epoch", 32), ("index", 64), ("rank", 32)),
    Domain.WORKER_INIT: (("seed", 64), ("rank", 32), ("worker_id", 32), ("loader_seed", 64)),
    Domain.BATCH_SAMPLE: (("seed", 64), ("stream", 32), ("epoch", 32), ("index", 64)),
    Domain.BATCH_STEP: (
        ("seed", 64),
        ("stream", 32),
        ("rank", 32),
        ("epoch", 32),
        ("step", 64),
        ("position", 32),
    ),
    Domain.SAMPLE_ID: (("seed", 64), ("stream", 32), ("epoch", 32), ("sample_id", 64)),
}


class KeyTemplate:
    """The word layout of one domain, with some fields fixed: the one home of key words.

    Every key rankaug derives (the wrappers', :class:`~rankaug.WorkerSeeder`'s, the
    public :func:`key_words`) is built by a template, so the layout of :data:`LAYOUTS`
    is written down once. Fixed fields are range-checked when the template is made;
    :meth:`words` checks the others; :meth:`builder` makes a fast, unchecked filler for
    hot paths whose values are already known to be in range.

    Args:
        domain: The key's domain.
        **fixed: Values for some of the domain's fields (the seed and stream, say).

    Raises:
        TypeError: If a field is unknown to the domain or not an integer.
        ValueError: If a value is out of its field's range.

    >>> template = KeyTemplate(Domain.SAMPLE, seed=7, stream=0)
    >>> template.words(epoch=1, index=2**32 + 3).tolist()
    [1919639911, 65538, 7, 0, 0, 1, 3, 1]
    >>> build = template.builder("epoch", "index")
    >>> bool((build(1, 2**32 + 3).entropy == template.words(epoch=1, index=2**32 + 3)).all())
    True
    """

    __slots__ = ("_fixed", "_positions", "_words", "domain")

    def __init__(self, domain: Domain, **fixed: int) -> None:
        self.domain = domain
        self._positions: dict[str, tuple[int, int]] = {}
        position = 2
        for name, bits in LAYOUTS[domain]:
            self._positions[name] = (position, bits)
            position += bits // 32
        self._words = np.zeros(position, dtype=np.uint32)
        self._words[0], self._words[1] = MAGIC, domain
        self._fixed = frozenset(fixed)
        self._set(self._words, fixed)

    def _set(self, words: np.ndarray, values: dict[str, int]) -> None:
        for name, value in values.items():
            slot = self._positions.get(name)
            if slot is None:
                raise TypeError(
                    f"{self.domain.name} keys have the fields "
                    f"{[field for field, _ in LAYOUTS[self.domain]]}, not {name!r}"
                )
            position, bits = slot
            number = checks.uint(value, name, bits)
            words[position] = number & MASK32
            if bits == 64:
                words[position + 1] = number >> 32

    def words(self, **values: int) -> np.ndarray:
        """The key's words: the fixed fields and ``values``, which must cover the rest.

        Raises:
            TypeError: If a field is missing, unknown or not an integer.
            ValueError: If a value is out of range.
        """
        missing = [name for name in self._positions if name not in self._fixed | values.keys()]
        if missing:
            raise TypeError(f"a {self.domain.name} key needs {', '.join(missing)}")
        words = self._words.copy()
        self._set(words, values)
        return words

    def builder(self, *names: str) -> KeyBuilder:
        """A fast ``(*values) -> SeedSequence`` for the fields ``names``, in that order.

        The values are not range-checked: use it where they are known to fit (an index
        below ``len(dataset)``, an epoch checked when it was set). It pickles, so a
        wrapper holding one can travel to spawned DataLoader workers.

        Raises:
            TypeError: If ``names`` and the fixed fields do not cover the layout.
        """
        missing = set(self._positions) - self._fixed - set(names)
        if missing:
            raise TypeError(f"a {self.domain.name} key needs {', '.join(sorted(missing))}")
        return KeyBuilder(self._words, [self._positions[name] for name in names])


class KeyBuilder:
    """Fills the varying fields of a :class:`KeyTemplate` (made by its ``builder``)."""

    __slots__ = ("_base", "_slots", "_words", "_wrap")

    def __init__(self, base: np.ndarray, slots: list[tuple[int, int]]) -> None:
        self._base = base
        self._slots = slots
        self._words: list[int] = base.tolist()  # filled per key as Python ints: cheaper
        # a 32-bit field keeps its low word beside a 64-bit one; where all are 32-bit,
        # one out of range is refused by numpy
        self._wrap = any(bits == 64 for _, bits in slots)

    def __call__(self, *values: int) -> KeySeedSequence:
        """The key's ``SeedSequence`` for ``values`` (in the builder's field order)."""
        words = self._words.copy()
        wrap = self._wrap
        for (position, bits), value in zip(self._slots, values, strict=True):
            if bits == 64:
                words[position] = value & MASK32
                words[position + 1] = value >> 32
            else:
                words[position] = value & MASK32 if wrap else value
        return KeySeedSequence(np.fromiter(words, np.uint32, len(words)))

    def __getstate__(self) -> tuple[np.ndarray, list[tuple[int, int]]]:
        return self._base, self._slots

    def __setstate__(self, state: tuple[np.ndarray, list[tuple[int, int]]]) -> None:
        self.__init__(*state)  # type: ignore[misc]


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
    return checks.choice(value, "keying", KEYINGS)


def stream_id(name: str | int) -> int:
    """Turn a stream name into the 32-bit stream word of a key.

    Integers in ``[0, 2**32)`` are used as they are. Strings are hashed with BLAKE2b
    (4-byte digest, little-endian), which is stable across processes and Python
    versions, unlike ``hash()``.

    Args:
        name: A stream name or number.

    Returns:
        The stream word.

    Raises:
        TypeError: If ``name`` is neither a string nor an integer.
        ValueError: If an integer is out of range.

    >>> stream_id(5)
    5
    >>> stream_id("rankaug.RandomAugmentWrapper/0") == stream_id("rankaug.MosaicDataset/0")
    False
    """
    checked = checks.stream(name)
    if isinstance(checked, str):
        digest = hashlib.blake2b(checked.encode("utf-8"), digest_size=4).digest()
        return int.from_bytes(digest, "little")
    return checked


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
        rank: The process rank, below ``2**32``.
        worker_id: The DataLoader worker id, below ``2**32``.
        epoch: The epoch, below ``2**32``.
        index: The sample index, below ``2**64``; ``None`` for a stream key.
        stream: The stream word or name (see :func:`stream_id`).

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
    stream_word = stream_id(stream)
    seed = checks.uint(base_seed, "base_seed", 64)
    if index is None:
        if rank is None or worker_id is None:
            raise TypeError("a stream key (index=None) needs both rank= and worker_id=")
        template = KeyTemplate(Domain.STREAM, seed=seed, stream=stream_word)
        return template.words(rank=rank, worker_id=worker_id, epoch=epoch)
    if worker_id is not None:
        raise ValueError(
            f"worker_id={worker_id!r} cannot enter a per-sample key "
            "(index given): the same index must give the same sample "
            "whichever worker loads it; pass worker_id=None"
        )
    if rank is None:
        return KeyTemplate(Domain.SAMPLE, seed=seed, stream=stream_word).words(
            epoch=epoch, index=index
        )
    return KeyTemplate(Domain.SAMPLE_RANK, seed=seed, stream=stream_word).words(
        epoch=epoch, index=index, rank=rank
    )


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
    return KeySeedSequence(
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
