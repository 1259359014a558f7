"""What a two-sample wrapper draws for a sample and what it combines (:mod:`rankaug.mix.base`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from rankaug._multi.pairs import Part

__all__ = ["Combined", "PairPlan"]


class PairPlan(NamedTuple):
    """One sample's draws.

    Attributes:
        applied: Whether the sample is mixed.
        indices: The main index and the partner's.
        uniforms: The wrapper's ``k`` uniforms from the block.
        draws: The wrapper's other draws (:meth:`~rankaug.mix.base.PairDataset.draw`).
    """

    applied: bool
    indices: tuple[int, int]
    uniforms: tuple[float, ...]
    draws: tuple[float, ...]


class Combined(NamedTuple):
    """What a wrapper's :meth:`~rankaug.mix.base.PairDataset.combine` makes.

    Attributes:
        part: The output's image and targets.
        share: The main sample's weight in the image, for soft class targets.
        details: The wrapper's fields of the record, in order.
        applied: Whether anything was combined; ``False`` gives the main sample as one
            that is not mixed (and records it so).
    """

    part: Part
    share: float
    details: dict[str, Any]
    applied: bool = True
