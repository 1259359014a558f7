"""Counter-based uniforms: MurmurHash3 (x86, 32-bit) over key words, in torch int64 ops.

Every value lives in an ``int64`` tensor masked to 32 bits; every product is of a word
and a constant below ``2**31`` in size, so it never overflows int64, which makes the
words identical on every device. A hash state absorbs words one at a time, so the
words shared by a whole batch are absorbed once, in Python (:func:`absorb_int`), and
only the per-sample words as tensors (:func:`absorb`).

>>> state = absorb_int(0, 7)
>>> words = finish(absorb(torch.tensor([state, state]), torch.tensor([1, 2])))
>>> words.tolist() == [finish_int(absorb_int(state, 1)), finish_int(absorb_int(state, 2))]
True
"""

from __future__ import annotations

import math
from typing import Final

import torch

M32: Final = 0xFFFF_FFFF
_C1: Final = 0xCC9E_2D51
_C2: Final = 0x1B87_3593
_F1: Final = 0x85EB_CA6B
_F2: Final = 0xC2B2_AE35


def _mul(h: torch.Tensor, constant: int) -> torch.Tensor:
    """``(h * constant) mod 2**32`` for ``h < 2**32``, without overflowing int64.

    A constant of ``2**31`` or more is used as ``constant - 2**32`` (the same modulo
    ``2**32``), so the product stays below ``2**63`` in size and the mask reads its exact
    low 32 bits (two's complement).
    """
    return (h * (constant - (1 << 32) if constant >> 31 else constant)) & M32


def _rotl(h: torch.Tensor, bits: int) -> torch.Tensor:
    return ((h << bits) & M32) | (h >> (32 - bits))


def absorb(state: torch.Tensor, word: torch.Tensor | int) -> torch.Tensor:
    """One MurmurHash3 block: the state after absorbing ``word`` (both below ``2**32``).

    A Python ``word`` is mixed in Python and enters as a scalar (no device copy).
    """
    k = block(word) if isinstance(word, torch.Tensor) else _block_int(word)
    return _step(state ^ k)


def absorb_block(state: torch.Tensor, block: torch.Tensor) -> torch.Tensor:
    """:func:`absorb` of words already through :func:`block` (cached by the caller)."""
    return _step(state ^ block)


def block(words: torch.Tensor) -> torch.Tensor:
    """A word's MurmurHash3 block value ``k`` (what :func:`absorb` mixes into the state)."""
    return _mul(_rotl(_mul(words, _C1), 15), _C2)


def _step(h: torch.Tensor) -> torch.Tensor:
    h = _rotl(h, 13)
    return ((h << 2) + h + 0xE654_6B64) & M32  # h * 5 + c, mod 2**32


def finish(state: torch.Tensor) -> torch.Tensor:
    """MurmurHash3's finaliser (``fmix32``): a well-mixed 32-bit word per state."""
    h = state ^ (state >> 16)
    h = _mul(h, _F1)
    h = h ^ (h >> 13)
    h = _mul(h, _F2)
    return h ^ (h >> 16)


def _block_int(word: int) -> int:
    k = (word * _C1) & M32
    k = ((k << 15) | (k >> 17)) & M32
    return (k * _C2) & M32


def absorb_int(state: int, word: int) -> int:
    """:func:`absorb` on Python integers (for the words a whole batch shares)."""
    h = state ^ _block_int(word)
    h = ((h << 13) | (h >> 19)) & M32
    return (h * 5 + 0xE654_6B64) & M32


def finish_int(state: int) -> int:
    """:func:`finish` on a Python integer."""
    h = state ^ (state >> 16)
    h = (h * _F1) & M32
    h ^= h >> 13
    h = (h * _F2) & M32
    return h ^ (h >> 16)


def absorb_words(words: list[int], state: int = 0) -> int:
    """The state after absorbing ``words`` in order (Python integers)."""
    for word in words:
        state = absorb_int(state, word & M32)
    return state


def uniform(words: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Floats in ``[0, 1)`` from hashed words, as many bits as ``dtype`` holds exactly.

    24 bits for float32, 11 for float16, 8 for bfloat16 (so none rounds up to 1); float64
    takes 53 bits, 27 of them from a second word (the first one hashed again).
    """
    if dtype == torch.float64:
        second = finish(absorb(words, 0x5EC0_4D00))
        value = (words >> 6).to(torch.float64) * 2.0**27 + (second >> 5).to(torch.float64)
        return value * 2.0**-53
    bits = round(-math.log2(torch.finfo(dtype).eps)) + 1  # the significand's bits
    return ((words >> (32 - bits)).to(torch.float32) * 2.0**-bits).to(dtype)
