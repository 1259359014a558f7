"""Kornia's parameter drawing, keyed: its samplers swapped for keyed ones while it draws.

Kornia draws every parameter through ``torch.distributions`` objects that its
parameter generators make in ``make_samplers`` and through each augmentation's
apply-probability gate (``__batch_prob_generator__``, ``torch.rand`` in kornia 0.9).
:func:`keyed_drawing` replaces both, on the instances and only while kornia's own
``forward_parameters`` runs, by :class:`_KeyedSampler` objects whose values come from
the batch's :class:`~rankaug.batch._keys.DrawKeys`. A draw that is not keyed per sample
(``same_on_batch``, ``p_batch``, a container's ``random_apply``, a batch-level shape)
is refused, and any augmentation that still reaches a global generator is caught by
comparing the generators' states around its draw. ``ColorJitter``'s order is keyed per
sample (:mod:`rankaug.batch._jitter`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, Final

import torch
from torch import distributions

from rankaug.batch import _jitter
from rankaug.batch._keys import DrawKeys

#: The sampler number of an augmentation's apply-probability gate.
GATE: Final = 0xFF


def load_kornia() -> ModuleType:
    """Import ``kornia.augmentation`` (kornia is optional for rankaug).

    Raises:
        ImportError: If kornia is not installed.
    """
    try:
        return importlib.import_module("kornia.augmentation")
    except ImportError as error:
        raise ImportError("rankaug.BatchAugment needs kornia: pip install 'kornia>=0.7'") from error


def augmentations(transform: object) -> list[Any]:
    """The kornia augmentations of ``transform``, in module order, checked for keying.

    Raises:
        TypeError: If ``transform`` is not a kornia augmentation or container.
        ValueError: If one of its draws cannot be keyed per sample.
    """
    kaug = load_kornia()
    base = kaug.base._BasicAugmentationBase
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
            "transform, got "
            f"{transform!r} of type {type(transform).__name__}"
        )
    for aug in found:
        _check(aug, kaug)
    return found


def _check(aug: Any, kaug: ModuleType) -> None:
    name = type(aug).__name__
    if isinstance(aug, kaug._2d.mix.base.MixAugmentationBaseV2):
        raise ValueError(f"{name} mixes samples of a batch: BatchAugment keys each sample alone")
    generator = aug._param_generator
    if aug.same_on_batch and (aug.p not in (0, 1) or _samplers(generator)):
        raise ValueError(
            f"{name} has same_on_batch=True: one draw for the whole batch; BatchAugment "
            "keys every draw per sample (use same_on_batch=False)"
        )
    if len(_samplers(generator)) > 0xFD:  # 0xFE and 0xFF: the order and gate draws
        raise ValueError(f"{name} has over 253 samplers: BatchAugment numbers 253 at most")
    if aug.p_batch not in (0, 1):
        raise ValueError(
            f"{name} has p_batch={aug.p_batch!r}: applied or not for the whole batch at once "
            "(kornia turns p into p_batch for augmentations that change the output size); "
            "BatchAugment keys every draw per sample: use p=1.0"
        )


def _samplers(generator: Any) -> list[tuple[str, distributions.Distribution]]:
    """The ``torch.distributions`` samplers of a parameter generator, by attribute name."""
    if generator is None:
        return []
    return sorted(
        (name, value)
        for name, value in vars(generator).items()
        if isinstance(value, distributions.Distribution)
    )


class _KeyedSampler:
    """A stand-in for one ``torch.distributions`` sampler: keyed values, same shapes."""

    def __init__(self, dist: distributions.Distribution, keys: DrawKeys, where: tuple[int, int]):
        self._dist = dist
        self._keys = keys
        self._where = where
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
            f"(augmentation {self._where[0]}): only Uniform and Bernoulli samplers are keyed"
        )

    sample = rsample

    def _draw(self, shape: torch.Size, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
        count = self._count
        self._count += 1
        return self._keys.uniform(shape, (*self._where, count), device, dtype)


def _gate(
    aug: Any, keys: DrawKeys, number: int, batch_shape: tuple[int, ...], p: float, *_: Any
) -> torch.Tensor:
    """The keyed stand-in for kornia's ``__batch_prob_generator__``: one gate per sample.

    ``p_batch`` is 0 or 1, and ``same_on_batch`` comes only with ``p`` 0 or 1 (checked).
    """
    size = (batch_shape[0],)
    if aug.p_batch == 0 or p == 0:
        return torch.zeros(size, device=aug.device, dtype=aug.dtype)
    if p == 1:
        return torch.ones(size, device=aug.device, dtype=aug.dtype)
    u = keys.uniform(torch.Size(size), (number, GATE, 0), aug.device, torch.float32)
    return (u < p).to(aug.dtype)


def _guarded(aug: Any, number: int, draw: Callable[..., Any]) -> Callable[..., Any]:
    """``draw`` (the augmentation's ``forward_parameters``), refused if it used global state."""

    def forward_parameters(batch_shape: tuple[int, ...]) -> Any:
        cpu = torch.random.get_rng_state()
        cuda = cuda_states()
        params = draw(batch_shape)
        if not torch.equal(cpu, torch.random.get_rng_state()) or cuda_changed(cuda):
            torch.random.set_rng_state(cpu)
            for device, state in cuda.items():
                torch.cuda.set_rng_state(state, device)
            raise RuntimeError(
                f"augmentation {number} ({type(aug).__name__}) drew from torch's global "
                "generator (restored): BatchAugment cannot key it"
            )
        return params

    return forward_parameters


def cuda_states() -> dict[int, torch.Tensor]:
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        return {}
    return {device: torch.cuda.get_rng_state(device) for device in range(torch.cuda.device_count())}


def cuda_changed(states: dict[int, torch.Tensor]) -> bool:
    return any(not torch.equal(s, torch.cuda.get_rng_state(d)) for d, s in states.items())


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
    back) on exit, so the transform is plain kornia outside the block. Not thread-safe:
    one call at a time per transform.
    """
    swaps = Swaps()
    try:
        for number, aug in enumerate(augs):
            generator = aug._param_generator
            for slot, (name, dist) in enumerate(_samplers(generator)):
                swaps.set(generator, name, _KeyedSampler(dist, keys, (number, slot)))
            if _jitter.is_jitter(aug):
                swaps.set(
                    generator,
                    "forward",
                    functools.partial(_jitter.forward, generator, keys, number),
                )
            swaps.set(aug, "__batch_prob_generator__", functools.partial(_gate, aug, keys, number))
            swaps.set(aug, "forward_parameters", _guarded(aug, number, aug.forward_parameters))
        yield
    finally:
        swaps.undo()


@contextlib.contextmanager
def keyed_applying(augs: list[Any]) -> Iterator[None]:
    """Within the block, a ColorJitter without a fixed order applies each sample's order."""
    swaps = Swaps()
    try:
        for aug in augs:
            if _jitter.random_order(aug):
                apply = functools.partial(_jitter.grouped_apply, aug, aug.apply_transform)
                swaps.set(aug, "apply_transform", apply)
        yield
    finally:
        swaps.undo()


_MISSING: Final = object()
