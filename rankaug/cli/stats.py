"""The audit's statistics: is a count of identical outputs more than chance explains?

For one comparison (ranks, workers or epochs) a :class:`Tally` counts identical outputs
of an index at the same position, and of the same index at *other* positions of the
same streams, the baseline: how often the same index gives the same output when the
random draws are not aligned. The comparison is flagged when the first is
significantly more frequent: a one-sided Fisher exact test on the two counts,
``P(X >= same) < ALPHA`` for ``X`` hypergeometric (of all the identical pairs, how
many fall at the same position by chance). The baseline is observed, never assumed:
with no baseline pair compared nothing is flagged, and a same-position count is only
significant against as many baseline pairs as it takes (16 of 16 identical against 0
of 16 is; 32 of 32 against 0 of 2 is not).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ALPHA", "Tally", "fisher_tail", "evidence_lines", "tally_summary"]

ALPHA = 1e-6


def fisher_tail(same: int, same_total: int, other: int, other_total: int) -> float:
    """One-sided Fisher exact p-value: ``same`` or more of the identical pairs at the same position.

    Of the ``same + other`` identical pairs among ``same_total + other_total``, ``X``
    fall among the same-position ones by chance (hypergeometric); returns
    ``P(X >= same)``.

    >>> math.isclose(fisher_tail(16, 16, 0, 16), 1 / math.comb(32, 16))
    True
    >>> fisher_tail(32, 32, 0, 0), fisher_tail(0, 10, 3, 10)
    (1.0, 1.0)
    """
    identical, total = same + other, same_total + other_total
    terms = [
        _log_comb(identical, k)
        + _log_comb(total - identical, same_total - k)
        - _log_comb(total, same_total)
        for k in range(max(same, 0), min(identical, same_total) + 1)
    ]
    if not terms:
        return 0.0
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


@dataclass
class Tally:
    """Identical outputs at the same position, against the same index at other positions.

    Attributes:
        same: Identical pairs at the same position.
        same_total: Pairs compared at the same position.
        other: Identical pairs of the same index at other positions (the baseline).
        other_total: Such pairs compared.
        examples: ``(epoch, position, index)`` of identical same-position pairs.

    >>> Tally(same=16, same_total=16, other=0, other_total=16).flagged
    True
    >>> Tally(same=32, same_total=32, other=0, other_total=0).decisive  # no baseline
    False
    """

    same: int = 0
    same_total: int = 0
    other: int = 0
    other_total: int = 0
    # (epoch, position, index); a stream's sample id in place of the index
    examples: list[tuple[int, int, Any]] = field(default_factory=list)

    def add(self, tally: Tally) -> None:
        """Add another tally's counts and examples to this one."""
        self.same += tally.same
        self.same_total += tally.same_total
        self.other += tally.other
        self.other_total += tally.other_total
        self.examples.extend(tally.examples)

    @property
    def p_value(self) -> float:
        """One-sided Fisher p-value of the same-position count against the baseline."""
        return fisher_tail(self.same, self.same_total, self.other, self.other_total)

    @property
    def flagged(self) -> bool:
        """Whether the same-position count is significantly above the baseline."""
        return self.p_value < ALPHA

    @property
    def decisive(self) -> bool:
        """Whether identical outputs at every same position (and no other) would be flagged."""
        return fisher_tail(self.same_total, self.same_total, 0, self.other_total) < ALPHA

    def text(self, item: str = "index") -> str:
        """The counts, for evidence lines (``item``: ``"index"``, or a stream's ``"sample"``)."""
        where = "at other positions" if item == "index" else "unaligned (baseline)"
        return (
            f"{self.same}/{self.same_total} identical at the same position; same {item} "
            f"{where}: {self.other}/{self.other_total} identical"
        )


def _example(tally: Tally, item: str) -> str:
    if not tally.examples:
        return ""
    epoch, position, index = tally.examples[0]
    return f" (e.g. {item} {index} at position {position}, epoch {epoch})"


def evidence_lines(
    by_key: dict[Any, Tally], name: Callable[[Any], str], limit: int = 4, item: str = "index"
) -> list[str]:
    """A verdict's evidence: the flagged tallies (else the closest), ``name(key): text``."""
    flagged = sorted(
        (key for key, tally in by_key.items() if tally.flagged),
        key=lambda key: (by_key[key].p_value, str(key)),
    )
    shown = flagged or sorted(by_key, key=lambda key: (-by_key[key].same, str(key)))
    lines = [
        f"{name(key)}: {by_key[key].text(item)}{_example(by_key[key], item)}"
        for key in shown[:limit]
    ]
    if len(shown) > limit:
        lines.append(f"... and {len(shown) - limit} more")
    return lines


def tally_summary(pooled: Tally, by_key: dict[Any, Tally]) -> dict[str, Any]:
    """A comparison's figures for the JSON report: the pooled tally and how many flagged."""
    return {
        "same_position_identical": pooled.same,
        "same_position_compared": pooled.same_total,
        "other_position_identical": pooled.other,
        "other_position_compared": pooled.other_total,
        "p_value": pooled.p_value,
        "flagged_pairs": sum(t.flagged for t in by_key.values()),
        "pairs": len(by_key),
    }
