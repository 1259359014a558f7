"""Partners: the other items a multi-sample augmentation combines with its sample.

A mosaic joins its main image with partner tiles; MixUp, CutMix and copy-paste join
it with one or more partners too. :class:`PartnerSampler` draws them, and only from
what the wrapper gives it: a block of uniforms the wrapper took from the key, and the
key's Generator for the draws that need more. The rules are part of the
specification (a change reorders everyone's augmentations):

* **Candidates** are the ``pool`` (for example this rank's shard; the whole dataset by
  default) less the entries of weight 0, never the main index itself unless it is the
  only candidate: a mosaic (:meth:`PartnerSampler.draw`) of a dataset of one item, of a
  ``pool`` of one, or with ``weights`` > 0 on one item only, tiles that item (the main
  index too, when it is that item). A mix (:meth:`PartnerSampler.draw_apart`) never
  pairs an index with itself: it gets no partner when no other candidate is left.
* **Uniform, with replacement**: partner ``k`` is candidate ``floor(u[k] * m)`` among
  the ``m`` candidates other than the main index, in pool order.
* **Weighted** (``weights=``, one per candidate): the inverse of the weights' CDF at
  ``u[k]``; a draw that hits the main index (or, without replacement, a partner drawn
  before) is drawn again with ``rng.random()``, up to 1000 times; when all 1000 hit it
  (weights with almost all their mass there), one more ``rng.random()`` draws by the
  inverse CDF of the weights less the main index's (and the partners drawn before):
  the same distribution as the redraws'.
* **Uniform, without replacement**: ``rng.choice(m, count, replace=False)`` over the
  other candidates, after the wrapper's block (the uniforms are not used).

>>> import numpy as np
>>> sampler = PartnerSampler(10, 3)
>>> sampler.draw(4, [0.0, 0.5, 0.99], np.random.default_rng(0))
[0, 5, 9]
>>> PartnerSampler(9, 1, pool=[4]).draw_apart(4, [0.5], np.random.default_rng(0)) is None
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from rankaug import checks
from rankaug._fixed import FixedSettings

__all__ = ["PartnerSampler"]

_MAX_REJECTIONS: Final = 1000


class PartnerSampler(FixedSettings):
    """Draws the partners of one sample from uniforms of its key (see the module docstring).

    Args:
        length: The dataset's length.
        count: How many partners each sample gets (``rows * cols - 1`` for a mosaic).
        pool: The candidates, distinct indices into the dataset; ``None`` means every
            index.
        weights: One sampling weight per candidate (per pool entry, or per item without
            a pool); ``None`` draws uniformly.
        replace: Draw with replacement.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If the pool is empty, out of range or has duplicates, the weights are
            not one finite number ``>= 0`` per candidate (not all 0), or
            ``replace=False`` asks for more distinct partners than there are candidates
            (of weight > 0; than there are others besides the sample, when every index
            is a candidate).

    Attributes:
        pool: The pool as a read-only ``int64`` array, or ``None``.
        cdf: The weights' cumulative distribution (read-only), or ``None``.

    Every setting is fixed when the sampler is made (:class:`~rankaug._fixed.FixedSettings`):
    it derives from them what its draws read (the positions in the pool, the candidates
    of weight > 0), the wrapper holding it checked them against its own settings then, and
    its DataLoader workers hold copies, so ``mosaic.partners.pool = [0, 2]`` is refused:
    make a new wrapper with ``partners=Partners(pool=[0, 2])``.

    >>> PartnerSampler(4, 3, pool=[0, 0, 1])
    Traceback (most recent call last):
    ...
    ValueError: pool must be distinct indices, got repeated entries [0]
    """

    fixed_settings = frozenset({"length", "count", "replace", "pool", "cdf"})
    """Fixed when made: the draws, and what is derived for them, follow them."""
    arguments_only = frozenset({"weights"})
    """Kept as their ``cdf``: an attribute ``weights`` would not be read."""
    arguments_kept_in = "cdf"

    def __init__(
        self,
        length: int,
        count: int,
        *,
        pool: Sequence[int] | np.ndarray | None = None,
        weights: Sequence[float] | np.ndarray | None = None,
        replace: bool = True,
    ) -> None:
        self.length = checks.integer(length, "length", low=1)
        self.count = checks.integer(count, "count", low=0)
        self.replace = checks.boolean(replace, "replace")
        self.pool = (
            None if pool is None else _read_only(checks.index_array(pool, "pool", length=length))
        )
        self._position: dict[int, int] = (
            {} if self.pool is None else {v: k for k, v in enumerate(self.pool.tolist())}
        )
        candidates = self.candidates
        what = "item" if self.pool is None else "pool entry"
        self.cdf = (
            None
            if weights is None
            else _read_only(checks.weights(weights, "weights", count=candidates, what=what))
        )
        # per candidate: weight > 0 (None: all)
        self._drawable = None if self.cdf is None else np.diff(self.cdf, prepend=0.0) > 0.0
        # how many candidates can be drawn at all
        self._total = candidates if self._drawable is None else int(self._drawable.sum())
        if not self.replace and 1 < self._total < self.count:
            raise ValueError(
                f"replace=False needs {self.count} distinct partners per sample, "
                f"{self._have(self._total, 'candidates')}"
            )
        if not self.replace and 1 < candidates == self.length and candidates - 1 < self.count:
            # every index is a candidate, so every sample has one candidate fewer: itself
            raise ValueError(
                f"replace=False needs {self.count} distinct partners per sample besides the "
                f"sample itself, the {'dataset' if self.pool is None else 'pool'} has "
                f"{candidates - 1} others ({candidates} items): use fewer cells, more "
                "items or replace=True"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _OWN:  # as when it had __slots__: a misspelt setting is no attribute
            raise AttributeError(f"'PartnerSampler' object has no attribute {name!r}")
        if not hasattr(self, "_total"):  # the constructor's, _total last: see __setstate__
            object.__setattr__(self, name, value)
            return
        try:
            super().__setattr__(name, value)
        except AttributeError as refused:  # a wrapper's sampler: from its Partners
            field = "weights" if name == "cdf" else name
            made = (
                f"partners=rankaug.Partners({field}=...)"
                if field in ("pool", "weights", "replace")
                else "another dataset or layout"  # length, count
            )
            raise AttributeError(
                f"{refused} (a wrapper's partners: make a new wrapper with {made})"
            ) from None

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _STATE}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Set the attributes one by one, never through ``__dict__`` (nor the constructor).

        An object whose ``__dict__`` was made reads its attributes slower
        (:mod:`rankaug._compact_copy`), and :meth:`draw` reads several per sample.
        """
        for name, value in state.items():
            read_only = isinstance(value, np.ndarray) and name in ("pool", "cdf")
            object.__setattr__(self, name, _read_only(value) if read_only else value)

    def made_from(self, partners: object) -> bool:
        """Whether this sampler is the one ``partners`` (a :class:`~rankaug.Partners`) makes.

        >>> from rankaug import Partners
        >>> sampler = Partners(pool=[0, 2]).sampler(4, 3)
        >>> sampler.made_from(Partners(pool=(0, 2))), sampler.made_from(Partners())
        (True, False)
        """
        sampler = getattr(partners, "sampler", None)
        if not callable(sampler):
            return False
        made = sampler(self.length, self.count)
        return (
            type(made) is PartnerSampler
            and made.replace == self.replace
            and _equal(made.pool, self.pool)
            and _equal(made.cdf, self.cdf)
        )

    @property
    def candidates(self) -> int:
        """How many items partners are drawn from (the pool's size, or the dataset's)."""
        return self.length if self.pool is None else len(self.pool)

    def others(self, index: int) -> int:
        """How many candidates besides ``index`` can be drawn (of weight > 0).

        >>> PartnerSampler(3, 1, weights=[1.0, 0.0, 2.0]).others(2)
        1
        """
        own = index if self.pool is None else self._position.get(index, -1)
        drawable = self._drawable
        if own < 0:
            return self._total
        return self._total - (drawable is None or bool(drawable[own]))

    def draw_apart(
        self, index: int, uniforms: Sequence[float], rng: np.random.Generator
    ) -> list[int] | None:
        """The partners of a mix: :meth:`draw`, or ``None`` when only ``index`` is left.

        The rule of every mix (MixUp, CutMix, copy-paste): an index is never its own
        partner. With no other candidate (a dataset of one item, a pool holding only
        ``index``, weights that leave only it), nothing is drawn from ``rng`` and the
        sample gets no partner.

        Args:
            index: The main sample's index.
            uniforms: ``count`` uniforms in ``[0, 1)`` from the key's block.
            rng: The key's Generator, for redraws and draws without replacement.

        Returns:
            ``count`` dataset indices, none of them ``index``, or ``None``.
        """
        if self._total < 2 and self.others(index) == 0:  # with 2, one is not index
            return None
        return self.draw(index, uniforms, rng)

    def draw(self, index: int, uniforms: Sequence[float], rng: np.random.Generator) -> list[int]:
        """The partners of the sample at ``index``.

        Args:
            index: The main sample's index (its own partner only when it is the only
                candidate, see the module docstring).
            uniforms: ``count`` uniforms in ``[0, 1)`` from the key's block.
            rng: The key's Generator, for redraws and draws without replacement.

        Returns:
            ``count`` dataset indices.

        Raises:
            ValueError: If ``replace=False`` and the candidates hold the main index and
                too few others.
        """
        pool = self.pool
        count = len(uniforms)
        if pool is None:
            size, own = self.length, index
        else:
            size, own = len(pool), self._position.get(index, -1)
        if self._total == 1:  # one candidate: it is every partner, as in a pool of one
            drawable = self._drawable
            positions = [0 if drawable is None else int(drawable.argmax())] * count
        elif not self.replace:
            if self.others(index) < count:
                raise ValueError(
                    f"replace=False needs {count} partners besides index {index}, "
                    f"{self._have(self.others(index), 'others')}"
                )
            if self.cdf is None:
                picks = rng.choice(size - (own >= 0), count, replace=False).tolist()
                positions = [p + (0 <= own <= p) for p in picks]
            else:
                positions = self._weighted(rng, uniforms, own)
        elif self.cdf is None:
            others = size - (own >= 0)
            last = others - 1  # min() by a comparison (rankaug._scalars)
            skip = own if own >= 0 else others  # positions from own on move up one
            positions = []
            for x in uniforms:  # (one loop, not a list display and a second for own)
                p = int(x * others)
                if p > last:
                    p = last
                positions.append(p + (p >= skip))
        else:
            positions = self._weighted(rng, uniforms, own)
        if pool is None:
            return positions
        return [int(pool[p]) for p in positions]

    def _have(self, number: int, what: str) -> str:
        """``number`` candidates, said as where they come from (for an error message)."""
        if self.cdf is not None:
            return f"partners.weights leave {number} {what} of weight > 0"
        return f"the {'dataset' if self.pool is None else 'pool'} has {number} {what}"

    def _weighted(self, rng: np.random.Generator, uniforms: Sequence[float], own: int) -> list[int]:
        """Inverse-CDF draws, with the redraw rule of the module docstring."""
        cdf = self.cdf
        assert cdf is not None
        last = len(cdf) - 1
        picks = np.searchsorted(cdf, uniforms, side="right").tolist()
        for slot, position in enumerate(picks):
            rejected = 0
            while (
                position > last
                or position == own
                or (not self.replace and position in picks[:slot])
            ):
                if position > last:
                    position = last
                    continue
                rejected += 1
                if rejected > _MAX_REJECTIONS:  # the others' mass is tiny: draw from it
                    position = self._apart(rng, own, picks[:slot])
                    break
                position = int(np.searchsorted(cdf, rng.random(), side="right"))
            picks[slot] = position
        return [int(p) for p in picks]

    def _apart(self, rng: np.random.Generator, own: int, before: list[int]) -> int:
        """One draw by the weights less ``own``'s (and, without replacement, ``before``'s)."""
        cdf = self.cdf
        assert cdf is not None
        mass = np.diff(cdf, prepend=0.0)
        if own >= 0:
            mass[own] = 0.0
        if not self.replace:
            mass[before] = 0.0
        left = np.flatnonzero(mass)
        assert len(left), "another candidate of weight > 0 (draw_apart, replace=False checks)"
        total = np.cumsum(mass)
        position = int(np.searchsorted(total, rng.random() * total[-1], side="right"))
        return min(position, int(left[-1]))  # u * total rounded up to the total: the last

    def __repr__(self) -> str:
        """The sampler, with what its draws read: the pool's entries and the weights' CDF.

        A record's settings hold this text (:mod:`rankaug._multi.settings`), so two
        samplers that draw differently never show the same: a pool of up to
        :data:`_SHOWN` entries shows them, a longer one its length and a digest of its
        entries in order, the weights their number and a digest of their cumulative
        distribution (weights ``w`` and ``2 * w`` draw the same).

        >>> PartnerSampler(9, 1, pool=[4, 2], weights=[1.0, 3.0])
        PartnerSampler(length=9, count=1, pool=[4, 2], weights=<2 weights, cdf sha256=...>, ...)
        """
        pool = "None" if self.pool is None else _listed(self.pool, "indices")
        weights = "None" if self.cdf is None else _listed(self.cdf, "weights", "cdf ")
        return (
            f"PartnerSampler(length={self.length}, count={self.count}, pool={pool}, "
            f"weights={weights}, replace={self.replace})"
        )


_STATE: Final = ("length", "count", "replace", "pool", "_position", "cdf", "_drawable", "_total")
"""What a PartnerSampler holds, in the order its constructor sets it."""
_OWN: Final = (
    PartnerSampler.fixed_settings
    | PartnerSampler.arguments_only
    | {"_drawable", "_position", "_total"}
)
"""The attributes a PartnerSampler has (its ``__slots__`` before it fixed its settings)."""

_SHOWN: Final = 8
"""The longest pool a sampler's ``repr`` lists entry by entry."""


def _listed(values: np.ndarray, what: str, of: str = "") -> str:
    """Short integer ``values`` as a list, others by their number and a digest of their bytes."""
    if values.dtype.kind == "i" and len(values) <= _SHOWN:
        return repr(values.tolist())
    digest = hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()[:8]
    return f"<{len(values)} {what}, {of}sha256={digest}...>"


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array`` (the sampler's own, made by the check) made read-only: its draws read it."""
    array.setflags(write=False)
    return array


def _equal(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether two optional arrays are both ``None`` or equal."""
    return a is b or (a is not None and b is not None and np.array_equal(a, b))
