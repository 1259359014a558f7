"""What a mosaic applied, as recorded in each output, and reading a record back.

:class:`MosaicRecord` is what :class:`~rankaug.MosaicDataset` stores under ``record=``;
:func:`read_record` checks one given back to :meth:`~rankaug.MosaicDataset.replay`
and returns what the replay needs: the main index, the epoch and the Generator state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypedDict

import numpy as np

from rankaug import checks

__all__ = ["MosaicRecord", "Replay", "read_record", "state_text"]


class MosaicRecord(TypedDict):
    """What a mosaic applied, stored under ``record`` in each output sample.

    ``indices`` holds the source indices, main first; ``cells``, ``scales``, ``src``
    and ``dst`` are aligned with it: the ``(row, col)`` cell, the scale applied, the
    source window ``(x0, y0, x1, y1)`` in the tile's pixels and the output window it
    was drawn into (empty windows for tiles that ended up invisible). ``splits_x`` and
    ``splits_y`` are the interior grid lines; ``center`` is the top-left corner of the
    middle cell, which for a 2x2 mosaic is YOLO's mosaic centre. ``state`` is the
    Generator state before the draws (PCG64 state and increment, hexadecimal), for
    :meth:`MosaicDataset.replay`.
    """

    applied: bool
    indices: list[int]
    cells: list[tuple[int, int]]
    center: tuple[int, int]
    splits_x: list[int]
    splits_y: list[int]
    scales: list[float]
    src: list[tuple[int, int, int, int]]
    dst: list[tuple[int, int, int, int]]
    epoch: int
    state: str


class Replay(NamedTuple):
    """What :meth:`~rankaug.MosaicDataset.replay` needs of a record."""

    main: int
    epoch: int
    generator: np.random.Generator


def state_text(state: Mapping[str, int]) -> str:
    """A PCG64 ``state`` dict (``state`` and ``inc``) as the record's ``"state:inc"`` text.

    >>> state_text({"state": 255, "inc": 1})
    'ff:1'
    """
    return f"{state['state']:x}:{state['inc']:x}"


def read_record(record: object, index: object, length: int) -> Replay:
    """Check a record for replay and rebuild the Generator it started from.

    Args:
        record: A :class:`MosaicRecord` (a mapping with at least ``indices``, ``epoch``
            and ``state``).
        index: The sample's index; ``None`` takes the record's main index.
        length: The dataset's length.

    Returns:
        The index, the epoch and the Generator in the recorded state.

    Raises:
        TypeError: If ``record`` is not a mapping or a field has the wrong type.
        ValueError: If a field is missing or has a wrong value (an index out of range, a
            negative epoch, a state that is not ``"state:inc"`` in hexadecimal).

    >>> replay = read_record({"indices": [3, 1], "epoch": 2, "state": "ff:1"}, None, 4)
    >>> replay.main, replay.epoch
    (3, 2)
    >>> read_record({"indices": [9], "epoch": 0, "state": "ff:1"}, None, 4)
    Traceback (most recent call last):
    ...
    ValueError: record['indices'][0] must be an integer in [0, 3], got 9
    """
    if not isinstance(record, Mapping):
        raise TypeError(
            "record must be a MosaicRecord (the mapping under record= in an output), got "
            f"{record!r:.80} of type {type(record).__name__}"
        )
    missing = sorted({"indices", "epoch", "state"} - record.keys())
    if missing:
        raise ValueError(
            f"record must be a MosaicRecord with 'indices', 'epoch' and 'state', got one "
            f"without {', '.join(repr(m) for m in missing)}"
        )
    if index is None:
        indices = record["indices"]
        if isinstance(indices, str) or not isinstance(indices, Sequence) or not indices:
            raise TypeError(
                "record['indices'] must be a non-empty sequence of indices, got "
                f"{indices!r:.80} of type {type(indices).__name__}"
            )
        index, name = indices[0], "record['indices'][0]"
    else:
        name = "index"
    main = checks.integer(index, name, low=0, high=length - 1)
    epoch = checks.uint(record["epoch"], "record['epoch']", 32)
    return Replay(main, epoch, _generator(record["state"]))


def _generator(text: Any) -> np.random.Generator:
    expected = "a 'state:inc' pair of hexadecimal PCG64 words"
    if not isinstance(text, str):
        raise TypeError(
            f"record['state'] must be {expected}, got {text!r:.80} of type {type(text).__name__}"
        )
    parts = text.split(":")
    try:
        state, inc = (int(part, 16) for part in parts)
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": state, "inc": inc},
            "has_uint32": 0,
            "uinteger": 0,
        }
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"record['state'] must be {expected}, got {text!r:.80}") from None
    return np.random.Generator(bit_generator)
