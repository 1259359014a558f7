"""What a mosaic applied, as recorded in each output, and reading a record back.

:class:`MosaicRecord` is what :class:`~rankaug.MosaicDataset` stores under ``record=``;
:func:`read_record` checks one given back to :meth:`~rankaug.MosaicDataset.replay`
and returns what the replay needs: the main index, the epoch and the Generator state.
"""

from __future__ import annotations

from typing import TypedDict

from typing_extensions import NotRequired  # typing's since Python 3.11

from rankaug._multi.replay import Replay, generator_text, read_replay, state_text
from rankaug.hsv import HSVRecord
from rankaug.mosaic.affine import AffineRecord

__all__ = ["MosaicRecord", "Replay", "generator_text", "read_record", "state_text"]


class MosaicRecord(TypedDict):
    """What a mosaic applied, stored under ``record`` in each output sample.

    ``indices`` holds the source indices, main first; ``cells``, ``scales``, ``src``
    and ``dst`` are aligned with it: the ``(row, col)`` cell, the scale applied, the
    source window ``(x0, y0, x1, y1)`` in the tile's pixels and the output window it
    was drawn into (empty windows for tiles that ended up invisible). ``splits_x`` and
    ``splits_y`` are the interior grid lines; ``center`` is the top-left corner of the
    middle cell, which for a 2x2 mosaic is YOLO's mosaic centre. ``state`` is the
    Generator state before the draws (PCG64 state and increment, hexadecimal, and a
    third word when the Generator held half a 32-bit word buffered), for
    :meth:`MosaicDataset.replay`; ``settings`` the mosaic's settings and dataset, one
    ``name=value`` line each, which the replay checks against its own
    (:mod:`rankaug._multi.settings`; records made before it have none). With
    ``affine=`` the windows are on the canvas the affine maps from (YOLO's ``2h x 2w``
    canvas for a mosaic, the letterboxed output otherwise), and ``affine`` holds the
    draws and the matrix (:class:`~rankaug.mosaic.affine.AffineRecord`); without it
    there is no ``affine`` key. With ``color=``, ``color`` holds the colour jitter's gains
    (:class:`~rankaug.hsv.HSVRecord`); ``flip``, with the plain mosaic's ``flip=``,
    whether the output was mirrored. ``rank``, where a rankaug wrapper inside is keyed
    ``"sample_rank"``, the rank the record was made on, which the replay pins for it.
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
    rank: NotRequired[int]
    state: str
    settings: NotRequired[str]
    affine: NotRequired[AffineRecord]
    flip: NotRequired[bool]
    color: NotRequired[HSVRecord]


def read_record(record: object, index: object, length: int) -> Replay:
    """Check a :class:`MosaicRecord` for replay (see :func:`rankaug._multi.replay.read_replay`).

    Args:
        record: A :class:`MosaicRecord` (a mapping with at least ``indices``, ``epoch``
            and ``state``).
        index: The sample's index; ``None`` takes the record's main index.
        length: The dataset's length.

    Returns:
        The index, the epoch and the Generator in the recorded state.

    >>> replay = read_record({"indices": [3, 1], "epoch": 2, "state": "ff:1"}, None, 4)
    >>> replay.main, replay.epoch
    (3, 2)
    >>> read_record({"indices": [9], "epoch": 0, "state": "ff:1"}, None, 4)
    Traceback (most recent call last):
    ...
    ValueError: record['indices'][0] must be an integer in [0, 3], got 9
    """
    return read_replay(record, index, length, kind="a MosaicRecord (the mapping under record=)")
