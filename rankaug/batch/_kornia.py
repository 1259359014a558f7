"""Kornia's parameter drawing, keyed: its samplers swapped for keyed ones while it draws.

Kornia draws most parameters through ``torch.distributions`` objects that its
parameter generators make in ``make_samplers`` (kept as attributes, or in a dict:
``PlainUniformGenerator.sampler_dict``), a few augmentations keep one of their own
(``RandomThinPlateSpline.dist``), and each augmentation has an apply-probability gate
(``__batch_prob_generator__``, ``torch.rand`` in kornia 0.9). :func:`keyed_drawing`
replaces them, on the instances and only while kornia's own ``forward_parameters`` runs,
by :class:`_KeyedSampler` objects whose values come from the batch's
:class:`~rankaug.batch._keys.DrawKeys`. A draw that is not keyed per sample
(``same_on_batch``, ``p_batch``, a container's ``random_apply``, a batch-level shape)
is refused, and any augmentation that still reaches a global generator is caught by
comparing the generators' states around its draw. ``ColorJitter``'s order is keyed per
sample (:mod:`rankaug.batch._jitter`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import itertools
import re
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, Final

import torch
from torch import distributions

from rankaug._threads import torch_cpu
from rankaug.batch import _jitter
from rankaug.batch._keys import DrawKeys, unkeyed_draw

#: The sampler number of an augmentation's apply-probability gate.
GATE: Final = 0xFF


#: The oldest kornia whose augmentations draw their parameters for every sample of a
#: batch: before 0.9 an augmentation with ``p < 1`` drew them only for the samples its
#: gate applied, which no per-sample key can follow (0.9 needs Python 3.11 or newer).
MIN_KORNIA: Final = (0, 9)


def load_kornia() -> ModuleType:
    """Import ``kornia.augmentation`` (kornia is optional for rankaug), 0.9 or newer.

    Raises:
        ImportError: If kornia is not installed, or older than :data:`MIN_KORNIA`.
    """
    wanted = ".".join(map(str, MIN_KORNIA))
    try:
        module = importlib.import_module("kornia.augmentation")
    except ImportError as error:
        raise ImportError(
            f"rankaug.BatchAugment needs kornia: pip install 'kornia>={wanted}'"
        ) from error
    version = str(getattr(sys.modules.get("kornia"), "__version__", "0"))
    found = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if found < MIN_KORNIA:
        raise ImportError(
            f"rankaug.BatchAugment needs kornia>={wanted}, found kornia {version}: before "
            f"{wanted} an augmentation with p < 1 draws its parameters only for the samples "
            "its gate applies, which cannot be keyed per sample; pip install "
            f"'kornia>={wanted}' (it needs Python 3.11 or newer)"
        )
    return module


def call_keywords(transform: object) -> frozenset[str]:
    """The keyword arguments ``transform``'s call takes, beside the ``params`` rankaug gives.

    A container's named ones (``data_keys``, ``extra_args``). A single augmentation takes
    any keyword (kornia's ``**kwargs``) as an override of its drawn parameters and flags,
    which would replace the keyed draws, and ignores a name it does not know (a misspelt
    ``epoch=``): it is given none.
    """
    forward = getattr(transform, "forward", None)
    try:
        parameters = inspect.signature(forward).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):  # no signature to read: none is passed on
        return frozenset()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(
        p.name for p in parameters if p.kind in named and p.name not in ("input", "params")
    )


def augmentations(transform: object) -> list[Any]:
    """The kornia augmentations of ``transform``, in module order, checked for keying.

    Raises:
        TypeError: If ``transform`` is not a kornia augmentation or container.
        ValueError: If one of its draws cannot be keyed per sample.
    """
    kaug = load_kornia()
    base = kaug.base._BasicAugmentationBase
    policy = _policy_class()
    modules = transform.modules() if isinstance(transform, torch.nn.Module) else [transform]
    for module in modules:
        if policy is not None and isinstance(module, policy):
            raise ValueError(
                f"transform has a {type(module).__name__}, a policy that picks its "
                "operations once per batch from torch's global generator: BatchAugment "
                "keys every draw per sample (apply the policy per sample in the dataset, "
                "or list the augmentations it would pick)"
            )
    if isinstance(transform, base):
        found = [transform]
    elif isinstance(transform, kaug.container.ImageSequential):
        found = [module for module in transform.modules() if isinstance(module, base)]
        for module in transform.modules():
            if getattr(module, "random_apply", False) is not False:
                raise ValueError(
                    f"transform has a {type(module).__name__} with random_apply="
                    f"{module.random_apply!r}: it picks its children once per batch; "
                    "BatchAugment keys every draw per sample (use random_apply=False)"
                )
    else:
        raise TypeError(
            "transform must be a kornia augmentation, AugmentationSequential or torchvision v2 "
            f"transform, got {transform!r:.120} of type {type(transform).__name__}"
        )
    for aug in found:
        _check(aug, kaug)
    return found


def _policy_class() -> type | None:
    """Kornia's ``PolicyAugmentBase`` (RandAugment, TrivialAugment...), where it has one."""
    try:
        from kornia.augmentation.auto.base import PolicyAugmentBase
    except ImportError:  # a kornia without policies
        return None
    found: type = PolicyAugmentBase
    return found


def _check(aug: Any, kaug: ModuleType) -> None:
    name = type(aug).__name__
    if isinstance(aug, kaug._2d.mix.base.MixAugmentationBaseV2):
        raise ValueError(f"{name} mixes samples of a batch: BatchAugment keys each sample alone")
    samplers = _samplers(aug)
    if aug.same_on_batch and (aug.p not in (0, 1) or samplers):
        raise ValueError(
            f"{name} has same_on_batch=True: one draw for the whole batch; BatchAugment "
            "keys every draw per sample (use same_on_batch=False)"
        )
    if len(samplers) > 0xFD:  # 0xFE and 0xFF: the order and gate draws
        raise ValueError(f"{name} has over 253 samplers: BatchAugment numbers 253 at most")
    if aug.p_batch not in (0, 1):
        raise ValueError(
            f"{name} has p_batch={aug.p_batch!r}: applied or not for the whole batch at once "
            "(kornia turns p into p_batch for augmentations that change the output size); "
            "BatchAugment keys every draw per sample: use p=1.0"
        )


#: Where a sampler is kept: ``(owner, attribute, ())``, or ``(owner, attribute, (key,))``
#: for one held in a dict attribute.
Place = tuple[Any, str, tuple[Any, ...]]


def _samplers(aug: Any) -> list[tuple[Place, distributions.Distribution]]:
    """The ``torch.distributions`` samplers of ``aug``; a sampler's number is its place here.

    Those of its parameter generator, then its own; of each, the attributes by name,
    then the values of dict attributes (``PlainUniformGenerator.sampler_dict``) by
    attribute and key. The order keeps the numbers of the attribute samplers of
    earlier releases, which looked at nothing else.
    """
    found: list[tuple[Place, distributions.Distribution]] = []
    for owner in (aug._param_generator, aug):
        if owner is None:
            continue
        fields = sorted(vars(owner).items())
        found += [((owner, n, ()), v) for n, v in fields if _is_dist(v)]
        for name, held in fields:
            if isinstance(held, dict):
                entries = sorted(
                    (((k,), v) for k, v in held.items() if _is_dist(v)), key=lambda e: repr(e[0])
                )
                found += [((owner, name, key), value) for key, value in entries]
    return found


def _is_dist(value: object) -> bool:
    return isinstance(value, distributions.Distribution)


class _KeyedSampler:
    """A stand-in for one ``torch.distributions`` sampler: keyed values, same shapes.

    ``where`` is ``(augmentation number, sampler number)``; ``label`` names both in errors.
    """

    def __init__(
        self, dist: distributions.Distribution, keys: DrawKeys, where: tuple[int, int], label: str
    ) -> None:
        self._dist = dist
        self._keys = keys
        self._where = where
        self._label = label
        self._count = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dist, name)

    def rsample(self, sample_shape: torch.Size | tuple[int, ...] = ()) -> torch.Tensor:
        """Keyed values of the wrapped distribution (Uniform and Bernoulli only)."""
        dist = self._dist
        shape = torch.Size(sample_shape) + dist.batch_shape + dist.event_shape
        if isinstance(dist, distributions.Uniform):
            low, high = dist.low, dist.high
            u = self._draw(shape, low.device, low.dtype)
            return low + (high - low) * u
        if isinstance(dist, distributions.Bernoulli):
            probs = dist.probs
            u = self._draw(shape, probs.device, probs.dtype)
            return (u < probs).to(probs.dtype)
        raise ValueError(
            f"BatchAugment cannot key a {type(dist).__name__} sampler "
            f"({self._label}): only Uniform and Bernoulli samplers are keyed"
        )

    sample = rsample

    def _draw(self, shape: torch.Size, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
        if len(shape) == 0 or shape[0] != len(self._keys):
            raise ValueError(unkeyed_draw(self._label, tuple(shape), len(self._keys)))
        count = self._count
        self._count += 1
        return self._keys.uniform(shape, (*self._where, count), device, dtype)


def _gate(
    aug: Any,
    keys: DrawKeys,
    number: int,
    calls: Iterator[int],
    batch_shape: tuple[int, ...],
    p: float,
    *_: Any,
) -> torch.Tensor:
    """The keyed stand-in for kornia's ``__batch_prob_generator__``: one gate per sample.

    ``calls`` counts the augmentation's gates within one drawing: an instance used twice
    in a container (in two sub-containers, say) gets a gate of its own for each use, as
    in kornia; the first use's draw is ``(number, GATE, 0)``. ``p_batch`` is 0 or 1, and
    ``same_on_batch`` comes only with ``p`` 0 or 1 (checked).
    """
    count = next(calls)
    size = (batch_shape[0],)
    if aug.p_batch == 0 or p == 0:
        return torch.zeros(size, device=aug.device, dtype=aug.dtype)
    if p == 1:
        return torch.ones(size, device=aug.device, dtype=aug.dtype)
    if size[0] != len(keys):
        label = f"augmentation {number} ({type(aug).__name__}), its apply gate (p={p})"
        raise ValueError(unkeyed_draw(label, size, len(keys)))
    u = keys.uniform(torch.Size(size), (number, GATE, count), aug.device, torch.float32)
    return (u < p).to(aug.dtype)


def _guarded(aug: Any, number: int, draw: Callable[..., Any]) -> Callable[..., Any]:
    """``draw`` (the augmentation's ``forward_parameters``), refused if it used global state."""

    def forward_parameters(batch_shape: tuple[int, ...]) -> Any:
        cpu = torch.random.get_rng_state()
        cuda = cuda_states()
        params = draw(batch_shape)
        if not torch.equal(cpu, torch.random.get_rng_state()) or cuda_changed(cuda):
            torch.random.set_rng_state(cpu)
            restore_cuda(cuda)
            raise RuntimeError(
                f"augmentation {number} ({type(aug).__name__}) drew from torch's global "
                "generator (restored): BatchAugment cannot key it (the draw is made outside "
                "the torch.distributions samplers it swaps for keyed ones: torch.rand, "
                "torch.randn or torch.randint in kornia's code, or a sampler made on the fly)"
            )
        return params

    return forward_parameters


def cuda_states() -> dict[int, torch.Tensor]:
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        return {}
    return {device: torch.cuda.get_rng_state(device) for device in range(torch.cuda.device_count())}


def cuda_changed(states: dict[int, torch.Tensor]) -> bool:
    return any(not torch.equal(s, torch.cuda.get_rng_state(d)) for d, s in states.items())


def restore_cuda(states: dict[int, torch.Tensor]) -> None:
    """Put back the CUDA generators' states :func:`cuda_states` took."""
    for device, state in states.items():
        torch.cuda.set_rng_state(state, device)


class Swaps:
    """Instance attributes set for a block and put back (or removed) after it."""

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        self._saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
        object.__setattr__(owner, name, value)

    def undo(self) -> None:
        for owner, name, value in reversed(self._saved):
            if value is _MISSING:
                del owner.__dict__[name]
            else:
                object.__setattr__(owner, name, value)
        self._saved.clear()


@contextlib.contextmanager
def keyed_drawing(augs: list[Any], keys: DrawKeys) -> Iterator[None]:
    """Within the block, ``augs`` draw their parameters from ``keys``.

    The keyed stand-ins are set as instance attributes and removed (the originals put
    back) on exit, so the transform is plain kornia outside the block. The block holds
    :func:`~rankaug._threads.torch_cpu`: one thread at a time swaps and draws (the guard
    compares torch's CPU generator before and after each draw).
    """
    swaps = Swaps()
    with torch_cpu():
        try:
            _swap_in(swaps, augs, keys)
            yield
        finally:
            swaps.undo()


def _swap_in(swaps: Swaps, augs: list[Any], keys: DrawKeys) -> None:
    """Set the keyed stand-ins of ``augs`` (see :func:`keyed_drawing`) in ``swaps``."""
    for number, aug in enumerate(augs):
        generator = aug._param_generator
        copies: dict[tuple[int, str], dict[Any, Any]] = {}
        for slot, ((owner, name, key), dist) in enumerate(_samplers(aug)):
            held = "".join(f"[{k!r}]" for k in key)  # sampler_dict['degrees']
            label = f"augmentation {number} ({type(aug).__name__}), sampler {name}{held}"
            keyed = _KeyedSampler(dist, keys, (number, slot), label)
            if not key:
                swaps.set(owner, name, keyed)
                continue
            copy = copies.get((id(owner), name))
            if copy is None:  # a copy of the dict, in its order, set in its place
                copy = copies[id(owner), name] = dict(vars(owner)[name])
                swaps.set(owner, name, copy)
            copy[key[0]] = keyed
        if _jitter.is_jitter(aug):
            swaps.set(
                generator,
                "forward",
                functools.partial(_jitter.forward, generator, keys, number, itertools.count()),
            )
        gate = functools.partial(_gate, aug, keys, number, itertools.count())
        swaps.set(aug, "__batch_prob_generator__", gate)
        swaps.set(aug, "forward_parameters", _guarded(aug, number, aug.forward_parameters))


@contextlib.contextmanager
def keyed_applying(augs: list[Any]) -> Iterator[None]:
    """Within the block, a ColorJitter without a fixed order applies each sample's order.

    Only such a block holds :func:`~rankaug._threads.torch_cpu` (its swaps are on the
    shared transform); other applications run in parallel.
    """
    ordered = [aug for aug in augs if _jitter.random_order(aug)]
    if not ordered:
        yield
        return
    swaps = Swaps()
    with torch_cpu():
        try:
            for aug in ordered:
                apply = functools.partial(_jitter.grouped_apply, aug, aug.apply_transform)
                swaps.set(aug, "apply_transform", apply)
            yield
        finally:
            swaps.undo()


_MISSING: Final = object()
