"""What to do about a failed audit: the fix, named for the pipeline that failed.

:func:`describe_pipeline` looks at the dataset a TARGET gave (in the main process, before
any worker starts): its type, the dataset inside it, a transform attribute, random
generators and albumentations transforms kept as attributes, ``set_epoch``.
:func:`fix_lines` turns the failed verdicts and that description into the lines a FAIL
ends with: the rankaug wrapper that keys the draws, or :class:`rankaug.WorkerSeeder`
where the pipeline draws from global state only. A generator or an albumentations
transform (its own Generator, ``Compose(seed=...)`` or not) is made once and copied
alike into every rank and worker, where no ``worker_init_fn`` reaches it: for those,
only the wrapper is offered. torchvision's and kornia's transforms draw from torch's
global generator, which :class:`rankaug.WorkerSeeder` does seed.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rankaug import nesting
from rankaug.cache._walk import foreign_library
from rankaug.keyed import KeyedDataset

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
        generators: ``attribute (type)`` of random generators it keeps, made once, also
            inside an object it holds (``transform.rng (Generator)``) or in a dataset
            inside it that rankaug does not key (``Folder.rng (Generator)``).
        keyed: Whether it is a rankaug wrapper (a :class:`rankaug.KeyedDataset`).
        has_set_epoch: Whether it has a ``set_epoch`` method.
        batch: For a batch transform (:func:`describe_batch`), its kind:
            ``"kornia"``, ``"torchvision"``, ``"BatchAugment"`` or ``"callable"``;
            ``""`` for a dataset.
        refused: For a kornia transform, why :class:`rankaug.BatchAugment` refuses it
            (``""`` when it keys it).
        own_state: ``attribute (type from albumentations)`` of the albumentations
            transforms it (or a dataset inside it that rankaug does not key) keeps: each
            draws from a Generator of its own, made once.
    """

    name: str
    inner: str | None = None
    transform: str | None = None
    generators: tuple[str, ...] = ()
    keyed: bool = False
    has_set_epoch: bool = False
    batch: str = ""
    refused: str = ""
    own_state: tuple[str, ...] = ()

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
keyed=False, has_set_epoch=False, batch='', refused='', own_state=())
    """
    fields = getattr(dataset, "__dict__", {})
    transform = next((name for name in _TRANSFORM_ATTRIBUTES if fields.get(name) is not None), None)
    inner = next(iter(nesting.walk(dataset, KeyedDataset)), None)
    keyed = isinstance(dataset, KeyedDataset)
    return Pipeline(
        name=type(dataset).__name__,
        inner=None if inner is None else type(inner).__name__,
        transform=transform,
        generators=_generators(dataset, keyed),
        keyed=keyed,
        has_set_epoch=callable(getattr(dataset, "set_epoch", None)),
        own_state=_own_state(dataset, keyed),
    )


def _levels(dataset: object, keyed: bool) -> list[tuple[str, object]]:
    """``(prefix, dataset)``: ``dataset`` unless rankaug keys it, and the unkeyed ones inside."""
    levels = [] if keyed else [("", dataset)]
    levels += [
        (f"{type(inner).__name__}.", inner)
        for inner in nesting.walk(dataset, KeyedDataset)
        if not isinstance(inner, KeyedDataset)
    ]
    return levels


def _generators(dataset: object, keyed: bool) -> tuple[str, ...]:
    """``attribute (type)`` of the random generators held, made once.

    Looks where :func:`_own_state` looks, and one level into the objects held there (a
    transform of the user's that keeps ``self.rng``), but not into other libraries'
    transforms: albumentations' are :func:`_own_state`'s, torchvision's and kornia's
    draw from torch's global generator.
    """
    found: list[str] = []
    for prefix, level in _levels(dataset, keyed):
        for name, value in getattr(level, "__dict__", {}).items():
            if isinstance(value, _GENERATORS):
                found.append(f"{prefix}{name} ({type(value).__name__})")
                continue
            items = value.values() if isinstance(value, dict) else value
            parts = items if isinstance(value, list | tuple | dict) else [value]
            for part in itertools.islice(parts, 64):
                if isinstance(part, KeyedDataset) or foreign_library(part) is not None:
                    continue
                found += [
                    f"{prefix}{name}.{field} ({type(held).__name__})"
                    for field, held in getattr(part, "__dict__", {}).items()
                    if isinstance(held, _GENERATORS)
                ]
    return tuple(found)


def _own_state(dataset: object, keyed: bool) -> tuple[str, ...]:
    """``attribute (type from albumentations)`` for the albumentations transforms held.

    Looks at the attributes of ``dataset`` (unless rankaug keys it: its transform is
    keyed) and of the datasets inside it that rankaug does not key, and one level into
    their lists, tuples and dicts (their first 64 items: a list of transforms, not of
    annotations).
    """
    found: list[str] = []
    for prefix, level in _levels(dataset, keyed):
        for name, value in getattr(level, "__dict__", {}).items():
            items = value.values() if isinstance(value, dict) else value
            parts = items if isinstance(value, list | tuple | dict) else [value]
            for part in itertools.islice(parts, 64):
                if foreign_library(part) == "albumentations":
                    found.append(f"{prefix}{name} ({type(part).__name__} from albumentations)")
                    break
    return tuple(found)


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


def _kept(pipeline: Pipeline, holder: str) -> str:
    """What ``holder`` keeps that no ``worker_init_fn`` reseeds, and why; ``""`` if nothing."""
    held = ", ".join(pipeline.generators + pipeline.own_state)
    if not held:
        return ""
    why = "no worker_init_fn reseeds it"
    if pipeline.own_state:
        why = (
            "an albumentations transform draws from a Generator of its own, which "
            "WorkerSeeder does not reseed: a Compose(seed=...) draws alike in every rank "
            "and worker"
        )
    return f"{holder} keeps {held}, made once and copied alike into every rank and worker ({why})"


def _duplicates(pipeline: Pipeline, seed: int) -> str:
    if pipeline.keyed and (pipeline.own_state or pipeline.generators):
        return (
            f"fix: {pipeline.name} keys its own draws, but "
            f"{_kept(pipeline, 'the dataset inside it')}: move that augmentation into the "
            "rankaug wrapper"
        )
    if pipeline.generators or pipeline.own_state:
        held = f"{pipeline.transform}." if pipeline.transform else None
        taking = (
            " (its call taking rng=, the Generator the wrapper passes for each sample, in "
            "place of its own)"
            if held and any(g.startswith(held) for g in pipeline.generators)
            else ""
        )
        return (
            f"fix: {_kept(pipeline, pipeline.name)}: draw from rankaug's keyed generators "
            f"instead, {_wrapper(pipeline, seed)}{taking}, keyed by (seed, rank, worker, epoch)"
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
    seeder = (
        f", or from the global generators seeded by worker_init_fn=rankaug.WorkerSeeder({seed})"
    )
    if pipeline.own_state:  # an albumentations transform's Generator is its own
        seeder = f" ({', '.join(pipeline.own_state)} draws from a Generator of its own)"
    return (
        f"fix: {pipeline.name} draws from an unseeded source (np.random.default_rng(), "
        "time, OS entropy): take its randomness from the seed, with "
        f"{_wrapper(pipeline, seed)}{seeder}"
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
