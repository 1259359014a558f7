"""The audit's statistics: is a count of identical outputs more than chance explains?

For one comparison (ranks, workers or epochs) a :class:`Tally` counts identical outputs
of an index at the same position, and of the same index at *other* positions of the
same streams, the baseline: how often the same index gives the same output when the
random draws are not aligned. The comparison is flagged when the first is
significantly more frequent, a one-sided binomial test
``P(X >= same | n, p0) < ALPHA`` with ``p0 = (equal + 1) / (compared + 2)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ALPHA", "Tally", "binomial_tail", "evidence_lines", "tally_summary"]

ALPHA = 1e-6


def binomial_tail(successes: int, trials: int, p: float) -> float:
    """``P(X >= successes)`` for ``X ~ Binomial(trials, p)``, computed in log space.

    >>> math.isclose(binomial_tail(16, 16, 0.5), 0.5**16)
    True
    >>> binomial_tail(0, 10, 0.3)
    1.0
    """
    if successes <= 0:
        return 1.0
    if successes > trials:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(trials + 1)
        - math.lgamma(k + 1)
        - math.lgamma(trials - k + 1)
        + k * log_p
        + (trials - k) * log_q
        for k in range(successes, trials + 1)
    ]
    top = max(terms)
    if trials == successes:
        return math.exp(top)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


@dataclass
class Tally:
    """Identical outputs at the same position, against the same index at other positions.

    Attributes:
        same: Identical pairs at the same position.
        same_total: Pairs compared at the same position.
        other: Identical pairs of the same index at other positions (the baseline).
        other_total: Such pairs compared.
        examples: ``(epoch, position, index)`` of identical same-position pairs.

    >>> tally = Tally(same=16, same_total=16, other=0, other_total=16)
    >>> tally.flagged, round(tally.baseline, 4)
    (True, 0.0556)
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
    def baseline(self) -> float:
        """The chance of identical outputs when the draws are not aligned (smoothed)."""
        return (self.other + 1) / (self.other_total + 2)

    @property
    def p_value(self) -> float:
        """One-sided binomial p-value of the same-position count against the baseline."""
        if self.same_total == 0 or self.same / self.same_total <= self.baseline:
            return 1.0
        return binomial_tail(self.same, self.same_total, self.baseline)

    @property
    def flagged(self) -> bool:
        """Whether the same-position count is significantly above the baseline."""
        return self.p_value < ALPHA

    @property
    def decisive(self) -> bool:
        """Whether identical outputs everywhere (and nowhere else) would be flagged."""
        return binomial_tail(self.same_total, self.same_total, 1 / (self.other_total + 2)) < ALPHA

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
