"""Section 1, key cost: µs per sample to derive the key's Generator, both keyings.

Against building a numpy Generator directly (``np.random.default_rng(i)``, and the
8-word ``SeedSequence`` rankaug uses, its words filled from rankaug's own key template:
numpy's own ``SeedSequence``, not rankaug's :class:`~rankaug.keyed_random.KeySeedSequence`,
which computes the same state words faster).
Contenders interleaved in blocks per round.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from benchmarks._bench import Bench, identity
from benchmarks._catalogue import section
from benchmarks._report import print_rows
from benchmarks._timing import Op, counted, interleave
from rankaug import RandomAugmentWrapper, SampleContext
from rankaug.keys import Domain, KeyTemplate

__all__ = ["SECTION", "key_contenders", "measure", "prepare"]

SECTION = section("keys")


def key_contenders(seed: int) -> dict[str, Op]:
    """The key-cost contenders: one operation derives one sample's Generator.

    Args:
        seed: The run's seed.

    Returns:
        Row id -> operation.
    """
    n = 4096
    items = list(range(n))
    by_sample: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        items, identity, seed=seed, keying="sample"
    )
    by_stream: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        items, identity, seed=seed, keying="stream"
    )
    fresh: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
        items, identity, seed=seed, keying="stream"
    )
    epochs = itertools.count()
    # the key's words, laid out by the one template (keys.py), then numpy alone: the
    # index's two words are where the template puts index 1 and index 2**32
    template = KeyTemplate(Domain.SAMPLE, seed=seed, stream=0)
    base = template.words(epoch=0, index=0)
    (low,) = np.flatnonzero(template.words(epoch=0, index=1) != base)
    (high,) = np.flatnonzero(template.words(epoch=0, index=1 << 32) != base)

    def numpy_seedsequence(i: int) -> None:
        words = base.copy()
        words[low], words[high] = i & 0xFFFF_FFFF, i >> 32
        np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))

    return {
        "key/numpy_default_rng": counted(np.random.default_rng),
        "key/numpy_seedsequence": counted(numpy_seedsequence),
        "key/sample_derive": counted(
            lambda i: by_sample.key_random(SampleContext(i % n, rank=0, worker_id=0, epoch=0))
        ),
        "key/sample_item": counted(lambda i: by_sample[i % n]),
        # A new epoch every call, never one seen before (a wrapper of its own, so the
        # other's epoch-0 stream is never dropped): the stream is derived anew each time.
        "key/stream_new": counted(
            lambda i: fresh.key_random(
                SampleContext(i % n, rank=0, worker_id=0, epoch=next(epochs))
            )
        ),
        "key/stream_item": counted(lambda i: by_stream[i % n]),
    }


def prepare(bench: Bench) -> None:
    """Nothing to build before the timing starts."""


def measure(bench: Bench, prepared: None) -> None:
    """The key's cost per sample, both keyings, against numpy alone."""
    settings = bench.settings
    seconds = interleave(
        key_contenders(bench.seed),
        per_round=settings.key_calls,
        repeats=settings.repeats,
        warmup=settings.key_calls // 4,
        progress=bench.progress,
        label="1 key cost",
    )
    bench.rows(SECTION, seconds)
    bench.out(
        f"{SECTION.number}. "
        f"Key cost: µs per sample, lower is better ({settings.key_calls} calls per round)"
    )
    print_rows(bench.out, bench.report, list(SECTION.rows), baseline="key/numpy_default_rng")
    bench.out()
