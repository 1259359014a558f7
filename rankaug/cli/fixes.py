"""What to do about a failed audit: the fix, named for the pipeline that failed.

:func:`describe_pipeline` looks at the dataset a TARGET gave (in the main process, before
any worker starts): its type, the dataset inside it, a transform attribute, random
generators kept as attributes, ``set_epoch``. :func:`fix_lines` turns the failed verdicts
and that description into the lines a FAIL ends with: the rankaug wrapper that keys the
draws, or :class:`rankaug.WorkerSeeder` where the pipeline draws from global state.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rankaug.keyed import KeyedDataset, inner_datasets

__all__ = ["Pipeline", "describe_batch", "describe_pipeline", "fix_lines"]

_TRANSFORM_ATTRIBUTES = ("transform", "transforms", "augment", "augmentation")
_GENERATORS = (np.random.Generator, np.random.RandomState, random.Random, torch.Generator)


@dataclass(frozen=True)
class Pipeline:
    """What the fix needs to know of a dataset.

    Attributes:
        name: Its type's name.
        inner: The type name of the dataset it wraps (``.dataset``), or ``None``.
        transform: The attribute that holds its transform, or ``None``.
        generators: ``attribute (type)`` of random generators it keeps, made once.
        keyed: Whether it is a rankaug wrapper (a :class:`rankaug.KeyedDataset`).
        has_set_epoch: Whether it has a ``set_epoch`` method.
        batch: For a batch transform (:func:`describe_batch`), its kind:
            ``"kornia"``, ``"torchvision"``, ``"BatchAugment"`` or ``"callable"``;
            ``""`` for a dataset.
        refused: For a kornia transform, why :class:`rankaug.BatchAugment` refuses it
            (``""`` when it keys it).
    """

    name: str
    inner: str | None = None
    transform: str | None = None
    generators: tuple[str, ...] = ()
    keyed: bool = False
    has_set_epoch: bool = False
    batch: str = ""
    refused: str = ""

    @property
    def kind(self) -> str:
        """``"mosaic"``, ``"mixup"``, ``"cutmix"`` or ``""``, from the type's name."""
        lowered = self.name.lower()
        return next((k for k in ("mosaic", "mixup", "cutmix") if k in lowered), "")


def describe_pipeline(dataset: object) -> Pipeline:
    """Describe ``dataset`` for :func:`fix_lines`.

    >>> class Jitter:
    ...     def __init__(self):
    ...         self.rng = np.random.default_rng(0)
    ...         self.dataset = [1, 2]
    >>> describe_pipeline(Jitter())
    Pipeline(name='Jitter', inner='list', transform=None, generators=('rng (Generator)',), \
keyed=False, has_set_epoch=False, batch='', refused='')
    """
    fields = getattr(dataset, "__dict__", {})
    generators = tuple(
        f"{name} ({type(value).__name__})"
        for name, value in fields.items()
        if isinstance(value, _GENERATORS)
    )
    transform = next((name for name in _TRANSFORM_ATTRIBUTES if fields.get(name) is not None), None)
    inner = next(iter(inner_datasets(dataset)), None)
    return Pipeline(
        name=type(dataset).__name__,
        inner=None if inner is None else type(inner).__name__,
        transform=transform,
        generators=generators,
        keyed=isinstance(dataset, KeyedDataset),
        has_set_epoch=callable(getattr(dataset, "set_epoch", None)),
    )


def describe_batch(transform: object, size: int = 32) -> Pipeline:
    """Describe a batch transform for :func:`fix_lines` (the audit's batch mode).

    A kornia transform is tried in :class:`rankaug.BatchAugment` on ``size`` images
    (:func:`~rankaug.cli.batch_probe.keying_refusal`), so the fix does not advise a
    wrapper that refuses it.

    >>> describe_batch(lambda images: images).batch
    'callable'
    """
    from rankaug.cli.batch_probe import batch_kind, keying_refusal

    return Pipeline(
        name=type(transform).__name__,
        batch=batch_kind(transform) or "callable",
        refused=keying_refusal(transform, size),
    )


def _batch_lines(pipeline: Pipeline, failed: Sequence[str], seed: int) -> list[str]:
    name = pipeline.name
    wrap = (
        f"wrap it, rankaug.BatchAugment(transform, seed={seed}), and call it with index= "
        "the batch's dataset indices and epoch= the epoch: each sample's parameters are "
        "then keyed by (seed, epoch, index)"
    )
    if pipeline.batch == "BatchAugment":
        wrap = "pass it the batch's dataset indices (index=) and the epoch (epoch=) on every call"
    elif pipeline.batch == "callable":
        wrap = "make it a kornia augmentation or torchvision v2 transform and " + wrap
    elif pipeline.refused:
        wrap = (
            f"rankaug.BatchAugment refuses it as it is ({pipeline.refused}); change or drop "
            "what that names (the BatchAugment guide lists what it keys), then " + wrap
        )
    lines: list[str] = []
    if "ranks" in failed:
        lines.append(
            f"fix: {name} draws its parameters from torch's global generator, seeded alike "
            f"on every rank (torch.manual_seed), so every GPU applies the same ones: {wrap}"
        )
    if "epochs" in failed and not lines:
        lines.append(f"fix: {name} repeats its draws every epoch: {wrap}")
    if "reproducible" in failed:
        lines.append(f"fix: {name} draws from an unseeded source: {wrap}")
    return lines


def _wrapper(pipeline: Pipeline, seed: int) -> str:
    """The rankaug wrapper that replaces ``pipeline``'s own random draws."""
    source = f"{pipeline.inner}(...)" if pipeline.inner else "the un-augmented dataset"
    if pipeline.kind == "mosaic":
        return f"rankaug.MosaicDataset({source}, seed={seed}) in place of {pipeline.name}"
    if pipeline.kind in ("mixup", "cutmix"):
        name = "MixUpDataset" if pipeline.kind == "mixup" else "CutMixDataset"
        return f"rankaug.mix.{name}({source}, seed={seed}) in place of {pipeline.name}"
    if pipeline.transform:
        return (
            f"rankaug.RandomAugmentWrapper({pipeline.name} without its .{pipeline.transform}, "
            f"that transform, seed={seed})"
        )
    return (
        f"rankaug.RandomAugmentWrapper({source}, transform, seed={seed}) around the "
        f"augmentation {pipeline.name} draws itself"
    )


def _duplicates(pipeline: Pipeline, seed: int) -> str:
    if pipeline.generators:
        held = ", ".join(pipeline.generators)
        return (
            f"fix: {pipeline.name} keeps {held}, made once and copied alike into every rank "
            f"and worker (no worker_init_fn reseeds it): draw from rankaug's keyed "
            f"generators instead, {_wrapper(pipeline, seed)}, keyed by (seed, rank, worker, "
            "epoch)"
        )
    if pipeline.keyed:
        inside = pipeline.inner or "the dataset inside it"
        return (
            f"fix: {pipeline.name} keys its own draws, so {inside} draws from global random "
            f"state: pass worker_init_fn=rankaug.WorkerSeeder({seed}) to the DataLoader, or "
            f"move that augmentation into the rankaug wrapper"
        )
    return (
        f"fix: {pipeline.name} draws from global random state (random, np.random, torch), "
        f"seeded alike on every rank: use {_wrapper(pipeline, seed)}; or keep it and pass "
        f"worker_init_fn=rankaug.WorkerSeeder({seed}) to its DataLoader, which seeds random, "
        "numpy and torch apart per rank and worker"
    )


def _replay(pipeline: Pipeline, seed: int, epoch_from: str) -> str:
    if epoch_from == "sampler" and pipeline.has_set_epoch and not pipeline.keyed:
        return (
            f"fix: key {pipeline.name}'s draws by the epoch the index carries "
            f"(rankaug.EpochIndex.epoch), as {_wrapper(pipeline, seed)} does; or, if your "
            "training loop calls set_epoch, audit it with --epoch-from set_epoch"
        )
    return (
        f"fix: use {_wrapper(pipeline, seed)} and load it with "
        "DataLoader(..., sampler=rankaug.EpochSampler(sampler)): every draw is then keyed "
        "by the epoch its index carries"
    )


def _irreproducible(pipeline: Pipeline, seed: int) -> str:
    return (
        f"fix: {pipeline.name} draws from an unseeded source (np.random.default_rng(), "
        "time, OS entropy): take its randomness from the seed, with "
        f"{_wrapper(pipeline, seed)}, or from the global generators seeded by "
        f"worker_init_fn=rankaug.WorkerSeeder({seed})"
    )


def _stream_fix(pipeline: Pipeline, failed: Sequence[str], seed: int) -> str:
    """One fix for a stream: rankaug's wrapper in place of its augmentation stage."""
    if pipeline.keyed:
        return (
            f"fix: {pipeline.name} keys its own draws, so the stream inside it draws from "
            "random state of its own: move that augmentation into the rankaug wrapper"
        )
    why = "replays random draws" if set(failed) - {"reproducible"} else "draws unseeded"
    return (
        f"fix: the stream {pipeline.name} {why}: wrap the un-augmented stream, "
        f"rankaug.RandomAugmentWrapper(stream, transform, seed={seed}) in place of its "
        "augmentation stage (a webdataset .map(transform), a Hugging Face .map): keyed "
        "by (seed, rank, worker, pass), or with keying='sample' and sample_id= by the "
        "sample's id"
    )


def fix_lines(
    pipeline: Pipeline,
    failed: Sequence[str],
    *,
    seed: int,
    epoch_from: str,
    stream: bool = False,
) -> list[str]:
    """The fix for each failure, one line each, duplicates first.

    Args:
        pipeline: The failing dataset (:func:`describe_pipeline`).
        failed: The names of the failed verdicts.
        seed: The seed to put in the suggested calls.
        epoch_from: ``"sampler"`` or ``"set_epoch"``, the audited loop.
        stream: Whether the dataset is an iterable one (one fix: rankaug's streaming
            wrapper).

    Returns:
        The lines, each starting with ``"fix: "``; none when nothing failed.

    >>> fix_lines(Pipeline("Jitter"), ["ranks"], seed=0, epoch_from="sampler")[0][:60]
    'fix: Jitter draws from global random state (random, np.rando'
    """
    if pipeline.batch:
        return _batch_lines(pipeline, failed, seed)
    if stream:
        return [_stream_fix(pipeline, failed, seed)] if failed else []
    lines: list[str] = []
    if "ranks" in failed or "workers" in failed:
        lines.append(_duplicates(pipeline, seed))
    if "epochs" in failed and not lines:
        lines.append(_replay(pipeline, seed, epoch_from))
    if "reproducible" in failed:
        lines.append(_irreproducible(pipeline, seed))
    return lines
