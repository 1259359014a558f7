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
  ``transform(sample, rng=generator)`` on the sample as the dataset gave it.
* **torch-global callables** (torchvision v2 transforms, anything else): called as
  ``transform(sample)`` with torch's default CPU generator seeded from the key, and
  the caller's generator state restored afterwards, exactly, under a process-wide lock
  (:func:`rankaug._threads.torch_cpu`: such calls run one at a time). Only that
  generator is touched: ``torch.manual_seed`` would also seed (or, before CUDA starts,
  queue a seed for) every CUDA, MPS and XPU generator, reseeding the training
  process's GPU generator on every sample with ``num_workers=0``.
"""

from __future__ import annotations

import copy
import inspect
import random
from collections.abc import Callable, Collection
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from rankaug import checks
from rankaug._compact_copy import compact_deepcopy
from rankaug._instances import (
    empty_like,
    follow,
    none_of,
    numbered,
    rows_kept,
    warpable,
    wide_fields,
)
from rankaug._own_random import warn_own_random
from rankaug._threads import PerThread, torch_cpu
from rankaug.keys import KeyedRandom
from rankaug.polygons import POLYGONS
from rankaug.samples import (
    DEFAULT_TARGETS,
    DefaultAdapter,
    SampleAdapter,
    attach,
    check_adapter,
    passthrough_hook,
)

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


def albumentations_targets(transform: Any) -> frozenset[str]:
    """The data keys an albumentations transform reads: images, masks, boxes, labels...

    Args:
        transform: An albumentations ``Compose`` or transform.

    Returns:
        The keys, including label fields and additional targets.
    """
    keys = set(DEFAULT_TARGETS)
    available = getattr(transform, "_available_keys", None)
    if isinstance(available, Collection):
        keys.update(str(k) for k in available)
    for processor in getattr(transform, "processors", {}).values():
        keys.update(getattr(getattr(processor, "params", None), "label_fields", None) or ())
    keys.update(getattr(transform, "additional_targets", None) or {})
    return frozenset(keys)


def _additional(transform: Any, kinds: Collection[str] = ("bboxes", "keypoints")) -> dict[str, str]:
    """The ``additional_targets`` of ``transform`` of these kinds (boxes, keypoints).

    A ``Compose`` has them as ``additional_targets``, a single transform given them by
    ``add_targets`` as ``_additional_targets`` only (albumentations 2.0.8).
    """
    targets = (
        getattr(transform, "additional_targets", None)
        or getattr(transform, "_additional_targets", None)
        or {}
    )
    return {str(key): kind for key, kind in targets.items() if kind in kinds}


def _moves(transform: Any, key: str) -> bool:
    """Whether any transform in the tree acts on ``key`` (bboxes, keypoints)."""
    children = getattr(transform, "transforms", None)
    if children is not None:
        return any(_moves(child, key) for child in children)
    return key in (getattr(transform, "targets", None) or {})


class _AlbumentationsDriver:
    """Boxes and keypoints need their processor (``bbox_params``, ``keypoint_params``).

    Without one, albumentations 2.0.8 silently drops the boxes of a geometric transform
    and AlbumentationsX raises deep inside it. So a sample's boxes or keypoints go to the
    transform only when it has the processor; when it has none they pass through
    untouched if no transform in it moves them (pixel-level pipelines), and otherwise
    the call is refused with an error that says what to add. Instance polygons
    (``segments``) no processor moves: a pipeline that moves boxes refuses them.
    """

    def __init__(self, transform: Any, adapter: SampleAdapter) -> None:
        # never called itself: each thread calls its own compact copy of it
        self.transforms = PerThread(copy.deepcopy(transform), compact_deepcopy)
        handed = (np.random.default_rng(0), random.Random(0))  # each call hands the key's
        self.transforms.original.set_random_state(*handed)
        warn_own_random(self.transforms.original, handed)  # what it keeps beside them
        processors = getattr(transform, "processors", None) or {}
        params = getattr(processors.get("bboxes"), "params", None)
        given = getattr(params, "format", None) or getattr(params, "coord_format", None)
        self.label_fields = tuple(getattr(params, "label_fields", None) or ())
        # the adapter reads the boxes in this format: a torchvision BoundingBoxes in another
        # is refused (a copy of a DefaultAdapter or KeyMap, told the format)
        self.adapter = check_adapter(adapter, box_format=given, name="A.BboxParams format")
        # boxes and keypoints, also under the names additional_targets gives them
        self.kinds = {**_additional(transform), "bboxes": "bboxes", "keypoints": "keypoints"}
        unmanaged = {key for key, kind in self.kinds.items() if kind not in processors}
        self.refused = {key for key in unmanaged if _moves(transform, self.kinds[key])}
        # albumentations drops a NaN keypoint silently (it refuses NaN boxes): checked here
        # (under each name additional_targets gives keypoints)
        points = [key for key, kind in self.kinds.items() if kind == "keypoints"]
        self.points = tuple(points) if "keypoints" in processors else ()
        self.targets = albumentations_targets(transform) - (unmanaged - self.refused)
        # polygons are no albumentations target: a pipeline that moves boxes would leave them
        self.geometric = POLYGONS not in self.targets and _moves(transform, "bboxes")
        self.moves_masks = _moves(transform, "mask")  # a mask must then cover its image
        # OpenCV warps no bool or float16 mask (remap asserts): uint8 and float32 go
        self.mask_keys = ("mask", "masks", *_additional(transform, ("mask", "masks")))
        # the values a sample keeps (where polygons would be), asked only when geometric
        self._others = passthrough_hook(adapter) if self.geometric else None
        self._default = self._others is DefaultAdapter.passthrough  # not a subclass's own

    def __call__(self, sample: Any, keyed: KeyedRandom) -> Any:
        others = self._others
        if (
            others is not None
            # DefaultAdapter's first rule, without the call: a dict of targets alone has none
            and not (self._default and type(sample) is dict and sample.keys() <= self.targets)
            and POLYGONS in others(sample, self.targets)
        ):
            raise ValueError(
                f"the sample has instance polygons ({POLYGONS!r}), which albumentations "
                "does not move: this transform's geometric transforms would leave them "
                "where they were; apply only pixel-level transforms (colour, blur, noise) "
                "to samples with polygons, or give instance masks ('masks') instead"
            )
        data, state = self.adapter.unpack(sample, self.targets)
        mask = data.get("mask") if self.moves_masks else None
        if mask is not None:  # one resampled as another size would scramble it
            checks.mask_covers(mask, data["image"], "the sample's mask")
        refused = self.refused
        if refused and not refused.isdisjoint(data):  # no set made for every sample
            key = min(refused.intersection(data))
            target = self.kinds[key]
            params = "bbox_params" if target == "bboxes" else "keypoint_params"
            kind = "" if key == target else f" (an additional {target!r} target)"
            raise ValueError(
                f"the sample has {key!r}{kind} but the albumentations transform has no "
                f"{params}, so its geometric transforms would not move them: give "
                f"A.Compose {params}=... (with the format and label fields of your data)"
            )
        for key in self.points:
            points = data.get(key)
            if points is not None:
                _check_points(points, key)
        for key in self.mask_keys:  # the adapter gives them back in their dtype
            if key in data:
                data[key] = warpable(data[key])
        held = self.transforms.slot()  # [this thread's copy, the state it was handed]
        transform = held[0]
        if keyed is not held[1]:  # a stream keeps its state between samples
            transform.set_random_state(keyed.generator, keyed.py_random)
            held[1] = keyed
        wide = wide_fields(data, self.label_fields) if self.label_fields else None
        if wide:  # (N, K) label fields: each box's position goes, and the rows follow it
            data.update((key, np.arange(len(rows), dtype=np.float64)) for key, rows in wide.items())
            out = self._call(transform, data)
            out.update((key, rows_kept(out[key], rows)) for key, rows in wide.items())
            return self.adapter.repack(out, state)
        return self.adapter.repack(self._call(transform, data), state)

    @staticmethod
    def _call(transform: Any, data: dict[str, Any]) -> dict[str, Any]:
        """The transform's output for ``data``, its instance masks following the boxes kept."""
        masks = data.get("masks")
        if masks is not None and none_of(masks):
            # no instance: albumentations 2.0.8 cannot stack (0, H, W) masks, AlbumentationsX
            # refuses [] and keeps (0, H, W) at the input's size; put back empty, resized
            del data["masks"]
            out: dict[str, Any] = transform(**data)
            out["masks"] = empty_like(masks, out.get("image"))
            return out
        if isinstance(masks, list | tuple):  # AlbumentationsX takes no list: one array,
            data["masks"] = masks = np.stack(masks)  # a list again in repack
        if masks is None or "bboxes" not in data or not len(masks) == len(data["bboxes"]) > 0:
            return transform(**data)  # type: ignore[no-any-return]
        # instance masks, one per box: albumentations keeps every mask when it drops a
        # box, so each box carries its position in an extra column, and the masks follow
        data["bboxes"] = positioned = numbered(data["bboxes"])
        out = transform(**data)
        width = positioned.shape[1] - 1
        out["bboxes"], out["masks"] = follow(out["bboxes"], out["masks"], len(masks), width)
        return out


def _check_points(points: Any, key: str) -> None:
    """Refuse keypoints with a NaN or infinite ``x`` or ``y`` (numeric ``(K, 2+)`` only).

    Keypoints of another shape or type are left to albumentations' own checks.
    """
    array = np.asarray(points)
    if array.ndim == 2 and array.shape[1] >= 2 and array.dtype.kind == "f":
        checks.finite_points(array, key)


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


class _TorchGlobalDriver:
    def __init__(self, transform: Callable[..., Any]) -> None:
        self.transform = transform

    def __call__(self, sample: Any, keyed: KeyedRandom) -> Any:
        generator = torch.default_generator  # the CPU one only (see the module docstring)
        with torch_cpu():  # one thread at a time between seeding and putting back
            state = generator.get_state()
            try:
                generator.manual_seed(keyed.torch_seed())
                return self.transform(sample)
            finally:
                generator.set_state(state)


def _takes_rng(transform: Callable[..., Any]) -> bool:
    target = transform
    if isinstance(transform, torch.nn.Module):
        target = transform.forward
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    parameter = parameters.get("rng")
    return parameter is not None and parameter.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def make_driver(transform: object, adapter: SampleAdapter) -> TransformDriver:
    """Pick the driver for ``transform`` (see the module docstring).

    Args:
        transform: A rankaug image transform, an albumentations transform, an rng
            callable or any callable.
        adapter: How samples become albumentations data and back.

    Returns:
        A driver.

    Raises:
        TypeError: If ``transform`` is not callable, or is a class rather than an
            instance (``A.Compose`` instead of ``A.Compose([...])``).

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
        return _AlbumentationsDriver(transform, adapter)
    if isinstance(transform, ImageTransform):
        return _ImageDriver(transform, adapter)
    if not callable(transform):
        raise TypeError(
            "transform must be an albumentations transform or Compose, a callable taking "
            f"rng=, or a callable using torch's global generator; got {transform!r} of type "
            f"{type(transform).__name__}"
        )
    warn_own_random(transform)
    if _takes_rng(transform):
        return _RngDriver(transform)
    return _TorchGlobalDriver(transform)
