"""Driving a transform from a key.

Four kinds of transform are told apart once, when a wrapper is built:

* **rankaug's keyed image transforms** (:class:`~rankaug.HSVJitter`; anything with
  ``draw(rng)``, ``apply(image, draw)``, ``record(draw)`` and ``record_key``): the
  sample's image goes through the wrapper's adapter (as a numpy array, back as the
  sample's image type), the draw comes from the key, and its record is attached under
  ``record_key`` (into a dict sample, or a pair's dict target, never over a key it
  already has; see :func:`rankaug.samples.attach`); ``record_key=None`` records
  nothing;
* **albumentations** (``Compose`` or a single transform; anything with
  ``set_random_state`` that is called as ``transform(image=..., ...)``): the wrapper
  works on private deep copies, one per thread (:class:`rankaug._threads.PerThread`),
  and before a call hands the calling thread's copy the key's numpy Generator and
  ``random.Random`` through ``set_random_state``, so every random draw in the pipeline
  comes from the key, also with several threads calling at once. A ``seed=`` given to
  the ``Compose`` is superseded: its own generators are never used. Samples go through
  the wrapper's adapter (see :mod:`rankaug.samples`). Boxes and keypoints (also under
  the names ``additional_targets`` gives them) go to the transform only with their
  ``bbox_params`` / ``keypoint_params``; without them they
  pass through untouched when nothing in the pipeline moves them, and are refused with
  a clear error otherwise (albumentations 2.0.8 would silently drop them). Instance
  masks with no instance (``(0, H, W)`` or ``[]``) are not handed to the transform and
  come back empty, sized to its output image, in their dtype and container. Instance
  polygons (``segments``, :mod:`rankaug.polygons`) albumentations cannot move at all:
  a sample that has them passes pixel-level pipelines untouched and is refused by one
  that moves its boxes.
* **rng callables**: any callable with an ``rng`` parameter is called as
  ``transform(sample, rng=generator)`` on the sample as the dataset gave it. A callable
  that the call would leave a parameter without a value (``def t(sample, generator)``)
  is refused when the wrapper is built (:func:`rankaug.checks.rng_call`); one whose
  signature cannot be read (a builtin) is called as ``transform(sample)``, and a
  ``TypeError`` of that call itself is re-raised saying how it was called.
* **torch-global callables** (torchvision v2 transforms, anything else): called as
  ``transform(sample)`` with torch's default CPU generator seeded from the key and
  the functions of Python's ``random`` module (``random.choice``, ``random.shuffle``:
  what torchvision v1's ``RandomChoice`` and ``RandomOrder`` call) drawing from the
  key's ``random.Random``, and the caller's generator and functions put back
  afterwards, exactly, under a process-wide lock
  (:func:`rankaug._threads.torch_cpu`: such calls run one at a time). Only that
  generator is touched: ``torch.manual_seed`` would also seed (or, before CUDA starts,
  queue a seed for) every CUDA, MPS and XPU generator, reseeding the training
  process's GPU generator on every sample with ``num_workers=0``. Functions imported
  from ``random`` by name (``from random import choice``) or kept from before the call
  (``self.draw = random.random``) and ``np.random``'s global state are not keyed, and
  a function kept from inside a call (cached on first use) goes on drawing from that
  call's key in every later one: a transform drawing from them is not supported.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Final, Protocol, runtime_checkable

import torch

from rankaug import checks
from rankaug._albumentations import AlbumentationsDriver, albumentations_targets
from rankaug._own_random import warn_own_random
from rankaug._threads import torch_cpu
from rankaug.keys import KeyedRandom
from rankaug.samples import SampleAdapter, attach

__all__ = [
    "AlbumentationsLike",
    "ImageTransform",
    "RngTransform",
    "TransformDriver",
    "albumentations_targets",
    "make_driver",
]


@runtime_checkable
class AlbumentationsLike(Protocol):
    """What rankaug needs of an albumentations transform (2.0.x or AlbumentationsX)."""

    def set_random_state(self, random_generator: Any, py_random: Any) -> None:
        """Replace the random state of the transform tree."""
        ...

    def __call__(self, *args: Any, **data: Any) -> Any:
        """Apply to keyword data, return a dict."""
        ...


@runtime_checkable
class ImageTransform(Protocol):
    """A rankaug transform of a sample's image, keyed and recorded (:class:`~rankaug.HSVJitter`)."""

    record_key: str | None

    def draw(self, rng: Any) -> Any:
        """Draw one sample's parameters from ``rng``."""
        ...

    def apply(self, image: Any, draw: Any) -> Any:
        """Return ``image`` (a numpy array) transformed with ``draw``, a new array."""
        ...

    def record(self, draw: Any) -> Any:
        """The record of ``draw``."""
        ...


class RngTransform(Protocol):
    """A callable that draws its randomness from the ``rng`` it is given."""

    def __call__(self, sample: Any, *, rng: Any) -> Any:
        """Return the transformed sample."""
        ...


class TransformDriver(Protocol):
    """Applies one transform to one sample with the randomness of one key."""

    def __call__(self, sample: Any, keyed: KeyedRandom) -> Any:
        """Return the transformed sample."""
        ...


class _ImageDriver:
    """The image through the adapter, the draw from the key, the record attached."""

    def __init__(self, transform: ImageTransform, adapter: SampleAdapter) -> None:
        self.transform = transform
        self.adapter = adapter

    def __call__(self, sample: Any, keyed: KeyedRandom) -> Any:
        transform, adapter = self.transform, self.adapter
        data, state = adapter.unpack(sample, ("image",))
        draw = transform.draw(keyed.generator)
        data["image"] = transform.apply(data["image"], draw)
        out = adapter.repack(data, state)
        key = transform.record_key
        if key is None:
            return out
        spelled = f"{type(transform).__name__}(record_key={{}})"  # the error's advice
        return attach(adapter, out, key, transform.record(draw), spelled=spelled)


class _RngDriver:
    def __init__(self, transform: Callable[..., Any]) -> None:
        self.transform = transform

    def __call__(self, sample: Any, keyed: KeyedRandom) -> Any:
        return self.transform(sample, rng=keyed.generator)


# The functions of `random` that are methods of its hidden Random: rebound to the key's
# for a call (3 µs), not the hidden one's state saved, set and put back (35 µs a sample).
_RANDOM_FUNCTIONS: Final = tuple(
    name
    for name in dir(random)
    if getattr(getattr(random, name), "__self__", None) is random.random.__self__  # type: ignore[attr-defined]
)


class _TorchGlobalDriver:
    def __init__(self, transform: Callable[..., Any], *, read: bool = True) -> None:
        self.transform = transform
        self.read = read  # whether its signature was read (else a call's TypeError is explained)

    def __call__(self, sample: Any, keyed: KeyedRandom) -> Any:
        generator = torch.default_generator  # the CPU one only (see the module docstring)
        seed = keyed.torch_seed()
        own = keyed.py_random  # the key's random.Random: `random.choice` and co. draw there
        module = vars(random)
        with torch_cpu():  # one thread at a time between seeding and putting back
            state = generator.get_state()
            callers = [module[name] for name in _RANDOM_FUNCTIONS]
            try:
                generator.manual_seed(seed)
                for name in _RANDOM_FUNCTIONS:
                    module[name] = getattr(own, name)
                return self.transform(sample)
            except TypeError as error:
                if self.read or error.__traceback__ is None or error.__traceback__.tb_next:
                    raise  # raised inside the transform, or its signature was read
                raise TypeError(
                    f"calling {checks.named(self.transform)}(sample) raised TypeError: {error}; "
                    f"{checks.CALLS} (its signature could not be read, so it was called as "
                    "transform(sample))"
                ) from error
            finally:
                for name, function in zip(_RANDOM_FUNCTIONS, callers, strict=True):
                    module[name] = function
                generator.set_state(state)


def make_driver(transform: object, adapter: SampleAdapter) -> TransformDriver:
    """Pick the driver for ``transform`` (see the module docstring).

    Args:
        transform: A rankaug image transform, an albumentations transform, an rng
            callable or any callable.
        adapter: How samples become albumentations data and back.

    Returns:
        A driver.

    Raises:
        TypeError: If ``transform`` is not callable, is a class rather than an instance
            (``A.Compose`` instead of ``A.Compose([...])``), or has a parameter the call
            leaves without a value (``def t(sample, generator)``: see
            :func:`rankaug.checks.rng_call`).

    >>> import numpy as np
    >>> from rankaug.keys import KeyedRandom, make_seed_sequence
    >>> from rankaug.samples import DefaultAdapter
    >>> driver = make_driver(lambda x, rng: x + int(rng.integers(10)), DefaultAdapter())
    >>> keyed = KeyedRandom(make_seed_sequence(0, epoch=0, index=0))
    >>> 100 <= driver(100, keyed) < 110
    True
    """
    if isinstance(transform, type):
        raise TypeError(
            f"transform must be a transform (an instance), got the class "
            f"{transform.__module__}.{transform.__qualname__}; call it to make one, e.g. "
            f"{transform.__name__}(...)"
        )
    if isinstance(transform, AlbumentationsLike) and callable(transform):
        return AlbumentationsDriver(transform, adapter)
    if isinstance(transform, ImageTransform):
        return _ImageDriver(transform, adapter)
    if not callable(transform):
        raise TypeError(
            "transform must be an albumentations transform or Compose, a callable taking "
            f"rng=, or a callable using torch's global generator; got {transform!r} of type "
            f"{type(transform).__name__}"
        )
    warn_own_random(transform)
    takes = checks.rng_call(transform)  # a parameter without a value refused here
    if takes:
        return _RngDriver(transform)
    return _TorchGlobalDriver(transform, read=takes is not None)
