"""The random state of one key: the numpy Generator, and a ``random.Random`` on demand.

:mod:`rankaug.keys` specifies the key and derives its ``SeedSequence``; this is what
the drivers draw from.
"""

from __future__ import annotations

import random

import numpy as np

from rankaug import checks

__all__ = ["KeyedRandom"]


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
        if type(seed_sequence) is not np.random.SeedSequence:  # the common case, kept cheap
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
            words = self.seed_sequence.generate_state(12)[8:].tolist()
            seed = words[0] | words[1] << 32 | words[2] << 64 | words[3] << 96
            py_random = random.Random(seed)
            self._py_random = py_random
        return py_random

    def torch_seed(self) -> int:
        """Draw a seed for ``torch.manual_seed`` from the generator (one draw)."""
        return int(self.generator.integers(0, 1 << 63))
