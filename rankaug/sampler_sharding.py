"""An :class:`~rankaug.EpochSampler` sharded again: one rank's shard split across ranks.

Lightning (``use_distributed_sampler=True``) and Fabric wrap a loader's sampler in their
``DistributedSamplerWrapper`` unless it is a ``DistributedSampler``; that wrapper
iterates the EpochSampler and keeps every ``num_replicas``-th index of it. Over a
sampler that already shards (a ``DistributedSampler``, or a batch sampler over one),
each rank then sees a fraction of its shard: :func:`warn_sharded` says so. accelerate's
``Accelerator.prepare`` shards the batches of every map-style loader (its
``BatchSamplerShard``), a sampler that already shards included: that too.

An EpochSampler over a ``DistributedSampler`` is one itself (so that those frameworks
leave it alone), whose ``DistributedSampler`` attributes are the wrapped sampler's
(:class:`Forwarded`).
"""

from __future__ import annotations

import warnings
from typing import Any, Final

from torch.utils.data import DistributedSampler

from rankaug.errors import RankaugWarning

__all__ = ["FORWARDED", "Forwarded", "warn_sharded"]

FORWARDED: Final = frozenset(
    {"dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last", "num_samples",
     "total_size"}
)  # fmt: skip
"""The ``DistributedSampler`` attributes read from, and assigned to, the sampler wrapped."""


class Forwarded:
    """The :data:`FORWARDED` attributes of the ``DistributedSampler`` wrapped, read there.

    And assigned there: ``sampler.shuffle = False`` made an attribute of the
    EpochSampler that nothing read, while the wrapped sampler, which shards, went on
    shuffling.
    """

    def __getattr__(self, name: str) -> Any:
        inner = vars(self).get("sampler")
        if name in FORWARDED and inner is not None:
            return getattr(inner, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in FORWARDED:
            setattr(vars(self)["sampler"], name, value)
        else:
            super().__setattr__(name, value)


def warn_sharded(sampler: object, inner: object, frame: Any) -> bool:
    """Warn when a DistributedSampler shards ``sampler``'s shard again; whether it did.

    Also accelerate's ``BatchSamplerShard``, which ``Accelerator.prepare`` puts around
    every map-style loader's batches, whatever its sampler.

    Args:
        sampler: The EpochSampler.
        inner: The sampler it wraps.
        frame: The frame that began the pass (a wrapper iterating ``sampler``, up to
            six frames out).
    """
    sharded = [inner, getattr(inner, "sampler", None)]  # a batch sampler's sampler
    if not any(getattr(s, "num_replicas", 1) > 1 for s in sharded if s is not None):
        return False
    for _ in range(6):
        if frame is None:
            return False
        outer: object = frame.f_locals.get("self")
        if outer is not sampler and isinstance(outer, DistributedSampler):
            replicas, fix = outer.num_replicas, _LIGHTNING
            break
        if type(outer).__name__ == "BatchSamplerShard":  # accelerate's, by name
            replicas, fix = getattr(outer, "num_processes", 1), _ACCELERATE
            break
        frame = frame.f_back
    else:
        return False
    if not isinstance(replicas, int) or replicas <= 1:
        return False
    name, count = type(outer).__name__, "num_replicas" if fix is _LIGHTNING else "num_processes"
    warnings.warn(
        f"{name} ({count}={replicas}) shards the indices of EpochSampler("
        f"{type(inner).__name__}), which are already one rank's shard: each rank sees "
        f"1/{replicas} of its shard. {fix}",
        RankaugWarning,
        stacklevel=2,  # where the EpochSampler began the pass, as before
    )
    return True


_LIGHTNING = (
    "Lightning does this with Trainer(use_distributed_sampler=True), its default, around a "
    "sampler that is not a DistributedSampler: pass Trainer(use_distributed_sampler=False) "
    "(Fabric: setup_dataloaders(..., use_distributed_sampler=False)), or give the "
    "EpochSampler the DistributedSampler itself (EpochSampler(DistributedSampler(...)) is "
    "one, and is left alone)."
)
_ACCELERATE = (
    "accelerate's Accelerator.prepare() shards every map-style loader's batches across its "
    "processes itself: give it a sampler over the whole dataset, "
    "EpochSampler(RandomSampler(dataset, generator=...)), not a DistributedSampler."
)
