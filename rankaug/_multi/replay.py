"""Records and replay, shared by every keyed wrapper that records what it applied.

A recording wrapper (``MosaicDataset``, and the multi-sample wrappers built like it)
stores in each output the Generator state it started from, as :func:`generator_text`,
beside the indices it used (main first) and the epoch. :func:`read_replay` checks such a record
given back by a user and rebuilds what a replay needs: the main index, the epoch and
the Generator in the recorded state. Drawing the same plan from that Generator and
applying it rebuilds the sample bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from rankaug import checks

__all__ = ["Replay", "generator_at", "generator_text", "read_replay", "state_text"]


class Replay(NamedTuple):
    """What a replay needs of a record: the main index, the epoch and the Generator."""

    main: int
    epoch: int
    generator: np.random.Generator


def state_text(state: Mapping[str, int], uinteger: int | None = None) -> str:
    """A PCG64 ``state`` dict (``state`` and ``inc``) as a record's ``"state:inc"`` text.

    Args:
        state: The PCG64 words, ``bit_generator.state["state"]``.
        uinteger: The buffered 32-bit half of the last 64-bit word, when the Generator
            holds one (``has_uint32``); it is appended as a third word.

    >>> state_text({"state": 255, "inc": 1})
    'ff:1'
    >>> state_text({"state": 255, "inc": 1}, 10)
    'ff:1:a'
    """
    text = f"{state['state']:x}:{state['inc']:x}"
    return text if uinteger is None else f"{text}:{uinteger:x}"


def generator_text(rng: np.random.Generator) -> str:
    """The whole state of a PCG64 Generator as a record's text (see :func:`state_text`).

    Draws of 32-bit integers (``rng.choice(..., replace=False)`` among them) leave half of
    a 64-bit word buffered; the text keeps it, so the Generator comes back exactly.

    >>> rng = np.random.Generator(np.random.PCG64(5))
    >>> _ = rng.integers(0, 10, dtype=np.uint32)  # leaves a 32-bit half buffered
    >>> again = generator_at(generator_text(rng))
    >>> bool(rng.integers(0, 2**32, 3, dtype=np.uint32).tolist()
    ...      == again.integers(0, 2**32, 3, dtype=np.uint32).tolist())
    True
    """
    full = rng.bit_generator.state
    words = full["state"]  # state_text's text, without its call: this runs every sample
    if full["has_uint32"]:
        return f"{words['state']:x}:{words['inc']:x}:{full['uinteger']:x}"
    return f"{words['state']:x}:{words['inc']:x}"


def generator_at(text: object, name: str = "record['state']") -> np.random.Generator:
    """The PCG64 Generator in the state ``text`` (from :func:`state_text`) describes.

    Records written before the buffered half was kept (``"state:inc"``) read as before:
    a Generator with nothing buffered.

    Raises:
        TypeError: If ``text`` is not a string.
        ValueError: If it is not ``"state:inc"`` or ``"state:inc:uinteger"`` in
            hexadecimal PCG64 words.

    >>> rng = np.random.Generator(np.random.PCG64(5))
    >>> again = generator_at(state_text(rng.bit_generator.state["state"]))
    >>> bool(rng.random() == again.random())
    True
    """
    expected = "a 'state:inc' pair of hexadecimal PCG64 words (and an optional ':uinteger')"
    if not isinstance(text, str):
        raise TypeError(
            f"{name} must be {expected}, got {text!r:.80} of type {type(text).__name__}"
        )
    try:
        words = [int(part, 16) for part in text.split(":")]
        if len(words) not in (2, 3) or any(word < 0 for word in words):
            raise ValueError(text)
        uinteger = words[2] if len(words) == 3 else 0
        if uinteger >= 2**32:
            raise ValueError(text)
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": words[0], "inc": words[1]},
            "has_uint32": int(len(words) == 3),
            "uinteger": uinteger,
        }
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be {expected}, got {text!r:.80}") from None
    return np.random.Generator(bit_generator)


def read_replay(record: object, index: object, length: int, *, kind: str) -> Replay:
    """Check a record for replay and rebuild the Generator it started from.

    Args:
        record: A mapping with at least ``indices`` (main first), ``epoch`` and ``state``.
        index: The sample's index; ``None`` takes the record's main index.
        length: The dataset's length.
        kind: What the record should be, for messages (e.g. ``"a MosaicRecord"``).

    Returns:
        The index, the epoch and the Generator in the recorded state.

    Raises:
        TypeError: If ``record`` is not a mapping or a field has the wrong type.
        ValueError: If a field is missing or has a wrong value (an index out of range, a
            negative epoch, a state that is not ``"state:inc"`` or
            ``"state:inc:uinteger"`` in hexadecimal).

    >>> replay = read_replay({"indices": [3, 1], "epoch": 2, "state": "ff:1"}, None, 4,
    ...                      kind="a MosaicRecord")
    >>> replay.main, replay.epoch
    (3, 2)
    """
    fields = checks.mapping(record, "record", required=("indices", "epoch", "state"), what=kind)
    if index is None:
        index = checks.sequence(fields["indices"], "record['indices']")[0]
        name = "record['indices'][0]"
    else:
        name = "index"
    main = checks.integer(index, name, low=0, high=length - 1)
    epoch = checks.uint(fields["epoch"], "record['epoch']", 32)
    return Replay(main, epoch, generator_at(fields["state"]))
