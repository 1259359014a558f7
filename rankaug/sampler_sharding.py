"""An :class:`~rankaug.EpochSampler` sharded again: one rank's shard split across ranks.

Lightning (``use_distributed_sampler=True``) and Fabric wrap a loader's sampler in their
``DistributedSamplerWrapper`` unless it is a ``DistributedSampler``; that wrapper
iterates the EpochSampler and keeps every ``num_replicas``-th index of it. Over a
sampler that already shards (a ``DistributedSampler``, or a batch sampler over one),
each rank then sees a fraction of its shard: :func:`warn_sharded` says so.
"""

from __future__ import annotations

import warnings
from typing import Any

from torch.utils.data import DistributedSampler

from rankaug.errors import RankaugWarning

__all__ = ["warn_sharded"]


def warn_sharded(sampler: object, inner: object, frame: Any) -> bool:
    """Warn when a DistributedSampler shards ``sampler``'s shard again; whether it did.

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
            break
        frame = frame.f_back
    else:
        return False
    if outer.num_replicas <= 1:
        return False
    warnings.warn(
        f"{type(outer).__name__} (num_replicas={outer.num_replicas}) shards the indices "
        f"of EpochSampler({type(inner).__name__}), which are already one rank's shard: "
        f"each rank sees 1/{outer.num_replicas} of its shard. Lightning does this with "
        "Trainer(use_distributed_sampler=True), its default, around a sampler that is not "
        "a DistributedSampler: pass Trainer(use_distributed_sampler=False) (Fabric: "
        "setup_dataloaders(..., use_distributed_sampler=False)), or give the "
        "EpochSampler the DistributedSampler itself (EpochSampler(DistributedSampler(...)) "
        "is one, and is left alone).",
        RankaugWarning,
        stacklevel=2,  # where the EpochSampler began the pass, as before
    )
    return True
