"""Sample shapes in and out: what a wrapper unpacks, and how it puts the result back.

rankaug hands transforms (albumentations, the mosaic) a dict in albumentations'
convention — ``image`` as a numpy ``HxW`` or ``HxWxC`` array, ``mask``, ``masks``,
``bboxes``, label fields, ``keypoints`` — and returns the result in the shape the
dataset gave it:

* **dict samples** with albumentations' keys; keys that are not transform targets
  (``"path"``, ``"image_id"``, ...) come back untouched, as the same objects.
* **(image, target) tuples or lists**, torchvision style. A dict target's ``boxes``
  becomes ``bboxes``, and its ``labels``, ``masks``, ``mask`` and ``keypoints`` are
  targets under their own names (give an albumentations ``Compose`` the label field
  ``"labels"``). A target that is a mask of the image (an array or tensor of its height
  and width, ``HxW``, ``HxWxC`` or ``CxHxW``, or a single-channel PIL image of its size:
  ``VOCSegmentation``'s) is the ``mask`` target, and comes back in its own type and
  layout (:mod:`rankaug.samples.pair_mask`); a class (a number, a string, a 0-D or 1-D
  array) passes through, and any other target that looks spatial (``(N, 4)`` boxes, a
  list of rows) is refused by a consumer that moves boxes
  (:func:`~rankaug.samples.pair_mask.refuse_pair_target`).
* **images** as numpy ``HxW``/``HxWxC`` arrays, PIL images (modes L, RGB, RGBA) or
  torch ``CHW``/``HW`` tensors; each comes back as the same type (a ``CHW`` tensor
  left one channel is ``1HW``), unless the transform made it a tensor itself
  (``ToTensorV2``): that tensor comes back as it is. A 3-D tensor ``mask`` beside a
  tensor image is ``CHW`` like it, handed out ``HWC`` and put back ``CHW``; so are an
  albumentations pipeline's additional images (any tensor ``CHW``) and 3-D tensor
  additional masks (``check_adapter(additional_targets=)``). Target
  values given as tensors, arrays or lists come back as tensors, arrays or lists of
  the same dtype and shape, and masks given as PIL images as PIL images of their mode
  (palette kept), except a mask the transform made a tensor (``ToTensorV2``),
  which comes back as it is (integer boxes that a transform made fractional stay
  floating point rather than being truncated; float32 round-off is rounded away).

Any other shape: pass an object with ``unpack`` and ``repack`` (the
:class:`SampleAdapter` protocol) as ``adapter=``. Multi-sample wrappers (the mosaic)
use three more hooks when an adapter has them, and a fallback otherwise (see
:func:`view`, :func:`passthrough` and :func:`attach`): reading a partner that is not
rebuilt, the values a transform does not get, and adding a key to an output. The mixing
wrappers (MixUp, CutMix) also read and replace a classification sample's class
(:func:`class_target`, :func:`with_class_target`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, cast

from rankaug.samples.default import DefaultAdapter
from rankaug.samples.protocol import DEFAULT_TARGETS, SampleAdapter, SampleDict
from rankaug.samples.restore import restore_like

__all__ = [
    "DEFAULT_TARGETS",
    "DefaultAdapter",
    "check_adapter",
    "check_box_format",
    "SampleAdapter",
    "SampleDict",
    "attach",
    "class_target",
    "passthrough",
    "passthrough_hook",
    "restore_like",
    "view",
    "with_class_target",
]


def view(adapter: SampleAdapter, sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
    """The transform data of a sample that is read but not rebuilt (a mosaic's partner).

    ``adapter.view(sample, targets)`` when the adapter has that hook, else the data of
    ``adapter.unpack``. The result is read, never written, and may hold other keys too
    (:class:`DefaultAdapter` gives a plain dict with a numpy image as it is, without a
    copy).

    Args:
        adapter: The wrapper's adapter.
        sample: The sample as the dataset gave it.
        targets: The keys the wrapper reads.

    Returns:
        A mapping with at least the keys in ``targets`` that the sample has.

    >>> import numpy as np
    >>> sample = {"image": np.zeros((2, 2), np.uint8), "path": "a.png"}
    >>> view(DefaultAdapter(), sample, DEFAULT_TARGETS) is sample
    True
    """
    hook = getattr(adapter, "view", None)
    if hook is not None:
        return hook(sample, targets)  # type: ignore[no-any-return]
    return adapter.unpack(sample, targets)[0]


def passthrough(adapter: SampleAdapter, sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
    """The named values of a sample that a transform does not get (they pass through).

    ``adapter.passthrough(sample, targets)`` when the adapter has that hook, else an
    empty mapping (nothing is known of other shapes). A wrapper that changes the
    number of boxes checks them: a per-box value among them would go stale.

    Args:
        adapter: The wrapper's adapter.
        sample: The sample as the dataset gave it.
        targets: The keys the wrapper hands to its transform.

    Returns:
        The other keys of a dict sample, or of a pair's dict target, with their values.

    >>> import numpy as np
    >>> sample = {"image": np.zeros((2, 2), np.uint8), "labels": [1], "iscrowd": [0]}
    >>> dict(passthrough(DefaultAdapter(), sample, DEFAULT_TARGETS | {"labels"}))
    {'iscrowd': [0]}
    """
    return passthrough_hook(adapter)(sample, targets)


def passthrough_hook(adapter: SampleAdapter) -> Callable[[Any, Collection[str]], Mapping[str, Any]]:
    """What :func:`passthrough` calls: the adapter's hook, or one that finds nothing.

    Resolved once by a wrapper that asks for every sample.

    >>> passthrough_hook(object())({"image": 0, "iscrowd": [0]}, {"image"})
    {}
    """
    hook = getattr(adapter, "passthrough", None)
    if hook is not None:
        return cast(Callable[[Any, Collection[str]], Mapping[str, Any]], hook)
    return _nothing


def _nothing(sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
    return _NOTHING


def attach(
    adapter: SampleAdapter, sample: Any, key: str, value: Any, *, spelled: str = "record={}"
) -> Any:
    """Add ``key: value`` to a sample that ``adapter.repack`` made.

    ``adapter.attach(sample, key, value)`` when the adapter has that hook, else
    :meth:`DefaultAdapter.attach`'s rule: into a dict sample, or into a pair's dict
    target, never over a key it already has; other shapes come back unchanged.

    Args:
        adapter: The wrapper's adapter.
        sample: A sample from ``adapter.repack`` (it may be changed in place).
        key: The key.
        value: The value.
        spelled: The argument that gave ``key``, ``{}`` where the key goes: the
            error's advice names it (``"record={}"``, a wrapper's ``record=``;
            ``"HSVJitter(record_key={})"``).

    Returns:
        The sample.

    Raises:
        ValueError: By the default rule, if the dict already has ``key`` (the dataset's
            own value, or an inner wrapper's record): ``record=`` must name a new key.

    >>> attach(DefaultAdapter(), ("image", {"labels": []}), "mosaic", 1)[1]
    {'labels': [], 'mosaic': 1}
    >>> attach(DefaultAdapter(), {"image": "a.png", "mosaic": 0}, "mosaic", 1)
    Traceback (most recent call last):
    ...
    ValueError: record='mosaic' names a key the sample already has (...
    """
    hook = getattr(adapter, "attach", None)
    if hook is not None and hook is not _DEFAULT_ATTACH:  # (the default rule: advised)
        return hook(sample, key, value)
    return _DEFAULT_ATTACH(sample, key, value, spelled=spelled)


_DEFAULT_ATTACH: Final = DefaultAdapter.attach


def class_target(adapter: SampleAdapter, sample: Any, key: str) -> Any:
    """The class of a classification sample, or ``None`` when it has none.

    ``adapter.class_target(sample, key)`` when the adapter has that hook, else
    :meth:`DefaultAdapter.class_target`'s rule: ``sample[key]`` of a dict, ``target[key]``
    of a pair's dict target, or the target itself of an ``(image, target)`` pair whose
    target is not a mapping (torchvision's ``(image, class_index)``).

    Args:
        adapter: The wrapper's adapter.
        sample: The sample as the dataset gave it.
        key: The class's key in dict samples and dict targets.

    Returns:
        The class as the sample holds it (an int, a tensor, a vector), or ``None``.

    >>> class_target(DefaultAdapter(), ("image", 3), "label"), class_target(
    ...     DefaultAdapter(), {"image": 0, "label": 5}, "label")
    (3, 5)
    """
    hook = getattr(adapter, "class_target", None)
    if hook is not None:
        return hook(sample, key)
    return DefaultAdapter.class_target(sample, key)


def with_class_target(adapter: SampleAdapter, sample: Any, key: str, value: Any) -> Any:
    """A sample that ``adapter.repack`` made, with its class replaced by ``value``.

    ``adapter.with_class_target(sample, key, value)`` when the adapter has that hook,
    else :meth:`DefaultAdapter.with_class_target`'s rule, the inverse of
    :func:`class_target`'s: dicts and dict targets get ``key`` set (in place), a pair with
    another target becomes a new pair of the same type; other shapes come back unchanged.

    Args:
        adapter: The wrapper's adapter.
        sample: A sample from ``adapter.repack`` (it may be changed in place).
        key: The class's key in dict samples and dict targets.
        value: The new class (for example a soft target vector).

    Returns:
        The sample.

    >>> with_class_target(DefaultAdapter(), ("image", 3), "label", [0.5, 0.5])
    ('image', [0.5, 0.5])
    """
    hook = getattr(adapter, "with_class_target", None)
    if hook is not None:
        return hook(sample, key, value)
    return DefaultAdapter.with_class_target(sample, key, value)


_NOTHING: Mapping[str, Any] = {}


def check_adapter(
    adapter: object,
    *,
    box_format: str | None = None,
    name: str = "box_format",
    dataset: object = None,
    additional_targets: Mapping[str, str] | None = None,
) -> SampleAdapter:
    """The adapter a wrapper uses: ``adapter`` itself, or a :class:`DefaultAdapter`.

    Given a ``box_format``, an adapter whose class reads it (``reads_box_format``:
    :class:`DefaultAdapter`, :class:`~rankaug.adapters.KeyMap`) is copied and told it, so
    that it refuses a torchvision ``BoundingBoxes`` in another format. Given a
    ``dataset``, an adapter whose class has the optional hook ``for_dataset(dataset)``
    is replaced by what it returns (those two read a Hugging Face dataset's rows
    without objects in the other rows' dtype).

    Args:
        adapter: ``None``, or an object with ``unpack`` and ``repack`` methods.
        box_format: The wrapper's (or its transform's) box format, checked against the
            adapter's ``box_format`` when it has one (the format its layout fixes).
            Defaults to ``None`` (not checked).
        name: Where ``box_format`` was given, for the message. Defaults to
            ``"box_format"``.
        dataset: The dataset the wrapper reads. Defaults to ``None`` (not known).
        additional_targets: An albumentations transform's additional image and mask
            targets, ``{key: "image" or "mask"}``: an adapter whose class reads them
            (``additional_targets``: :class:`DefaultAdapter`) is copied and told them, so
            that it reads them in the sample image's layout. Defaults to ``None``.

    Returns:
        The adapter.

    Raises:
        TypeError: If ``adapter`` is a class, or lacks one of the methods.
        ValueError: If the adapter's layout fixes another box format.

    >>> type(check_adapter(None)).__name__
    'DefaultAdapter'
    """
    if adapter is None:
        adapter = DefaultAdapter()
    if isinstance(adapter, type):
        raise TypeError(
            f"adapter must be an adapter instance, got the class {adapter.__name__}: pass "
            f"{adapter.__name__}(...)"
        )
    if not (
        callable(getattr(adapter, "unpack", None)) and callable(getattr(adapter, "repack", None))
    ):
        raise TypeError(
            "adapter must have unpack(sample, targets) and repack(data, state) methods, "
            f"got {type(adapter).__name__}"
        )
    check_box_format(adapter, box_format, name)
    hook = getattr(type(adapter), "for_dataset", None)
    if dataset is not None and callable(hook):
        # a class's hook only: a stream's naming adapter, which forwards attributes, is not
        # bound to its window (the stream binds the adapter it names to the stream)
        adapter = hook(adapter, dataset)
    told: dict[str, Any] = {}
    if box_format is not None and hasattr(type(adapter), "reads_box_format"):
        # one adapter may serve wrappers of several formats: each its copy (an adapter
        # that only forwards the attribute, a stream's naming one, is not copied)
        told["reads_box_format"] = box_format  # a torchvision BoundingBoxes is checked
        told["box_format_given_as"] = name  # (its message names where it was given)
    if additional_targets and hasattr(type(adapter), "additional_targets"):
        told["additional_targets"] = dict(additional_targets)  # read in the image's layout
    if told:
        copied: Any = copy.copy(adapter)
        for attribute, value in told.items():
            setattr(copied, attribute, value)
        adapter = copied
    return adapter  # type: ignore[return-value]


def check_box_format(adapter: object, box_format: str | None, name: str) -> None:
    """Refuse a box format other than the one ``adapter``'s layout fixes.

    Args:
        adapter: The adapter; its ``box_format`` attribute, when not ``None``, is the
            format of the boxes it reads.
        box_format: The wrapper's (or transform's) box format, or ``None``.
        name: Where ``box_format`` was given, for the message.

    Raises:
        ValueError: If they differ.

    >>> from rankaug.adapters import HuggingFace
    >>> check_box_format(HuggingFace(), "pascal_voc", "box_format")
    Traceback (most recent call last):
    ...
    ValueError: box_format='pascal_voc', but adapter=HuggingFace(...) reads 'coco' boxes: ...
    """
    declared = getattr(adapter, "box_format", None)
    if declared is not None and box_format is not None and declared != box_format:
        raise ValueError(
            f"{name}={box_format!r}, but adapter={adapter!r} reads {declared!r} boxes: "
            f"give {name}={declared!r} (the adapter's box_format)"
        )
