"""The random state of one key: the numpy Generator, and a ``random.Random`` on demand.

:mod:`rankaug.keys` specifies the key and derives its ``SeedSequence``; this is what
the drivers draw from.

Every key's ``SeedSequence`` is a :class:`KeySeedSequence`: a numpy ``SeedSequence``
(``isinstance`` holds; ``entropy``, ``pool``, ``spawn`` and pickling are numpy's) whose
``generate_state`` computes numpy's words from the pool with Python integers, for the two
requests rankaug makes per key (4 ``uint64`` words for ``PCG64``, words 8..11 for
``py_random``). numpy's own loop spends most of a key's cost there (it walks the pool
through ``itertools.cycle``, one numpy scalar at a time). The words are numpy's, bit for
bit (numpy/random/bit_generator.pyx, ``SeedSequence.generate_state``: each pool word,
cycled, is hashed with a running constant), as ``tests/test_keys.py`` checks against
numpy for any entropy, word count and dtype.
"""

from __future__ import annotations

import functools
import random
import struct
from typing import Any, Final

import numpy as np

from rankaug import checks

__all__ = ["KeySeedSequence", "KeyedRandom", "state_words"]

_INIT_B: Final = 0x8B51F9DD  # numpy's SeedSequence: the hash constant's start ...
_MULT_B: Final = 0x58F38DED  # ... and its multiplier, one step a state word
_XSHIFT: Final = 16  # half a 32-bit word
_MASK32: Final = 0xFFFF_FFFF
_MOST: Final = 64
"""The most state words computed here; a request for more goes to numpy's own loop."""
_LITTLE32: Final = np.dtype("<u4")  # numpy reads its uint32 words as little-endian ...
_LITTLE64: Final = np.dtype("<u8")  # ... uint64 words, two by two
_PACKS: Final = tuple(struct.Struct(f"<{count}I") for count in range(_MOST + 1))


def _hash_constants(count: int) -> tuple[tuple[int, int], ...]:
    """Each state word's ``(xor, multiplier)``: numpy's running hash constant."""
    constants = []
    hash_const = _INIT_B
    for _ in range(count):
        xor = hash_const
        hash_const = hash_const * _MULT_B & _MASK32
        constants.append((xor, hash_const))
    return tuple(constants)


_HASH: Final = _hash_constants(_MOST)


def state_words(pool: list[int], start: int, stop: int) -> list[int]:
    """State words ``start..stop-1`` of a ``SeedSequence`` with this ``pool``, as ints.

    numpy's ``generate_state`` (``uint32`` words), word for word, for ``stop <= 64``.

    Args:
        pool: The sequence's ``pool``, as a list of Python integers.
        start: The first word.
        stop: One past the last word, at most 64.

    Returns:
        The words.

    >>> ss = np.random.SeedSequence(7)
    >>> state_words(ss.pool.tolist(), 0, 6) == ss.generate_state(6).tolist()
    True
    """
    size = len(pool)
    words = []
    for position in range(start, stop):
        xor, multiplier = _HASH[position]
        value = (pool[position % size] ^ xor) * multiplier & _MASK32
        words.append(value ^ value >> _XSHIFT)
    return words


class KeySeedSequence(np.random.SeedSequence):
    """A numpy ``SeedSequence`` whose ``generate_state`` is computed in Python integers.

    The same words as numpy's (see the module docstring); a request it does not cover
    (another dtype, more than 64 32-bit words) goes to numpy. It pickles as a plain
    ``numpy.random.SeedSequence`` (equal entropy, spawn key, pool size and children
    spawned), so a pickle of a rankaug Generator needs only numpy to load.

    >>> words = [1, 2, 3]
    >>> fast, plain = KeySeedSequence(words), np.random.SeedSequence(words)
    >>> bool((fast.generate_state(4, np.uint64) == plain.generate_state(4, np.uint64)).all())
    True
    >>> isinstance(fast, np.random.SeedSequence)
    True
    """

    __slots__ = ()

    def generate_state(self, n_words: Any, dtype: Any = np.uint32) -> np.ndarray:
        """The words of numpy's ``SeedSequence.generate_state``: ``n_words`` of ``dtype``."""
        if type(n_words) is int and n_words >= 0:
            read_as: np.dtype[Any]
            if dtype is np.uint64 and n_words <= _MOST // 2:
                count, read_as = 2 * n_words, _LITTLE64
            elif dtype is np.uint32 and n_words <= _MOST:
                count, read_as = n_words, _LITTLE32
            else:
                return super().generate_state(n_words, dtype)
            words = state_words(self.pool.tolist(), 0, count)
            # numpy's own steps: its uint32 words, read as little-endian (uint64: in pairs)
            return np.frombuffer(_PACKS[count].pack(*words), read_as).astype(dtype)
        return super().generate_state(n_words, dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        rebuild = functools.partial(
            np.random.SeedSequence,
            spawn_key=self.spawn_key,
            pool_size=self.pool_size,
            n_children_spawned=self.n_children_spawned,
        )
        return rebuild, (self.entropy,)


class KeyedRandom:
    """The random state of one key: a numpy Generator, and a ``random.Random`` on demand.

    Args:
        seed_sequence: The key's ``SeedSequence`` (:func:`rankaug.keys.make_seed_sequence`).

    Attributes:
        seed_sequence: The key's ``SeedSequence``.
        generator: ``Generator(PCG64(seed_sequence))``.

    Raises:
        TypeError: If ``seed_sequence`` is not a ``SeedSequence`` (an int, say).

    >>> from rankaug.keys import make_seed_sequence
    >>> r = KeyedRandom(make_seed_sequence(0, epoch=0, index=3))
    >>> 0 <= r.py_random.random() < 1 and 0 <= r.torch_seed() < 2**63
    True
    """

    __slots__ = ("_py_random", "generator", "seed_sequence")

    def __init__(self, seed_sequence: np.random.SeedSequence) -> None:
        if type(seed_sequence) is not KeySeedSequence:  # the common case, kept cheap
            # an int would seed the generator off the key specification, and fail later
            checks.instance(
                seed_sequence,
                "seed_sequence",
                np.random.SeedSequence,
                what="a numpy SeedSequence (rankaug.keys.make_seed_sequence(...))",
                optional=False,
            )
        self.seed_sequence = seed_sequence
        self.generator = np.random.Generator(np.random.PCG64(seed_sequence))
        self._py_random: random.Random | None = None

    @property
    def py_random(self) -> random.Random:
        """A ``random.Random`` seeded from state words 8..11 of the key (made once)."""
        py_random = self._py_random
        if py_random is None:
            sequence = self.seed_sequence
            if type(sequence) is KeySeedSequence:
                words = state_words(sequence.pool.tolist(), 8, 12)
            else:  # a SeedSequence made elsewhere (a subclass may have its own words)
                words = sequence.generate_state(12)[8:].tolist()
            seed = words[0] | words[1] << 32 | words[2] << 64 | words[3] << 96
            py_random = random.Random(seed)
            self._py_random = py_random
        return py_random

    def torch_seed(self) -> int:
        """Draw a seed for ``torch.manual_seed`` from the generator (one draw)."""
        return int(self.generator.integers(0, 1 << 63))
