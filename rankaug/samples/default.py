"""``DefaultAdapter``: dict samples and ``(image, target)`` pairs (see :mod:`rankaug.samples`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final, NamedTuple

import numpy as np

from rankaug.samples.hf_arrays import NONE_DECLARED, Declared, in_declared_dtypes
from rankaug.samples.hf_rows import bound_to, typed
from rankaug.samples.images import (
    image_from_numpy,
    image_hw,
    image_kind,
    image_to_numpy,
    value_to_numpy,
)
from rankaug.samples.pair_mask import (
    CHANNELS_FIRST,
    channels_first,
    channels_last,
    height_width,
    mask_like,
    pair_layout,
    pair_like,
    pair_mask,
    reads_first,
    refuse_pair_target,
)
from rankaug.samples.restore import (
    check_tv_boxes,
    holds_wrapped,
    is_wrapped,
    rewrap_values,
)
from rankaug.samples.sizes import SIZE_KEYS, resized_sizes
from rankaug.samples.stale import refuse_changed
from rankaug.samples.unread import (
    known,
    refuse_object_list,
    refuse_unread,
    suggest_adapter,
    unread_fields,
)
from rankaug.samples.whole import restore_whole

__all__ = ["DefaultAdapter"]

_NOTHING: Mapping[str, Any] = {}
# numpy's module __getattr__ keeps CPython 3.11 from specialising np.ndarray: read per value
_NDARRAY: Final = np.ndarray
_ARRAYS: Final = frozenset({np.ndarray})  # the values of a plain sample (see _call_plain)


class _State(NamedTuple):
    sample: Any  # the original sample
    originals: dict[str, Any]  # the original values of the keys handed out
    image_kind: str  # "numpy", "pil", "tensor" or "tensor_hw" (image_to_numpy's)
    pil_mode: str | None
    target: Any  # the original target of a tuple sample (None for dicts)
    wrapped: bool = False  # torchvision tv_tensors among the values: wrapped again
    others: bool = False  # values not handed out (one per box would go stale)
    first: tuple[str, ...] = ()  # masks that were CxHxW (a tensor image's, a pair's): so again


# _State(...) without the Python-level __new__ NamedTuple generates: made per sample
_new_state: Final[Callable[[tuple[Any, ...]], _State]] = functools.partial(tuple.__new__, _State)


class DefaultAdapter:
    """Handles dict samples and ``(image, target)`` tuples (see the module docstring).

    >>> from rankaug.samples import DEFAULT_TARGETS
    >>> adapter = DefaultAdapter()
    >>> sample = {"image": np.zeros((4, 6, 3), np.uint8), "path": "a.jpg"}
    >>> data, state = adapter.unpack(sample, DEFAULT_TARGETS)
    >>> sorted(data)
    ['image']
    >>> data["image"] = data["image"][:, ::-1]
    >>> out = adapter.repack(data, state)
    >>> sorted(out), out["path"]
    (['image', 'path'], 'a.jpg')
    """

    #: The box format of the wrapper using it, and where it was given (both set by
    #: ``check_adapter``): a torchvision ``BoundingBoxes`` in another format is refused.
    reads_box_format: str | None = None
    box_format_given_as: str = "box_format"
    #: A Hugging Face dataset's typed empty values by column (set by :meth:`for_dataset`).
    typed_empty: Mapping[str, Any] = _NOTHING
    #: Its array columns' declared dtypes, read back in them (likewise; see ``hf_arrays``).
    declared_dtypes: Mapping[tuple[str, ...], Declared] = NONE_DECLARED
    #: The transform's additional targets, ``{key: "image" or "mask"}`` (set by
    #: ``check_adapter``): such images, and 3-D tensor masks beside a tensor image, are
    #: read channels-first like the sample's image, handed out ``HxWxC`` and put back.
    additional_targets: Mapping[str, str] = _NOTHING

    def for_dataset(self, dataset: object) -> DefaultAdapter:
        """This adapter, or a copy that reads a Hugging Face dataset's rows in their types.

        A row without objects's untyped empty lists are read as the other rows' values
        (:mod:`~rankaug.samples.hf_rows`), array columns in their declared dtypes (an
        ``Array3D`` ``uint8`` image, given ``int64``: :mod:`~rankaug.samples.hf_arrays`).
        """
        return bound_to(self, dataset)

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        """Split ``sample`` into transform data and a state (see :class:`SampleAdapter`).

        A target given ``None`` is no target (as to ``KeyMap``): not handed out, kept.

        Raises:
            TypeError: If the sample is not a dict or an (image, target) pair, or its image
                is of an unsupported type.
            ValueError: If the dict has no ``image`` or the image has an unsupported
                shape.
        """
        mapping: Mapping[str, Any]
        first: tuple[str, ...] = ()
        if type(sample) is dict or isinstance(sample, Mapping):
            if self.declared_dtypes:  # a Hugging Face dataset's int64 "uint8" image, say
                sample = in_declared_dtypes(sample, self.declared_dtypes)
            if "image" not in sample:
                raise ValueError(
                    f"a dict sample needs an 'image' key; this one has keys {sorted(sample)}: "
                    f"for another layout pass {suggest_adapter(sample, unread_fields(sample))}"
                )
            mapping, target = sample, None
        elif isinstance(sample, tuple | list) and len(sample) == 2:
            image, target = sample
            if isinstance(target, Mapping):
                if "image" in target or ("boxes" in target and "bboxes" in target):
                    raise ValueError(
                        "an (image, target) sample's target must not have an 'image' key, "
                        f"nor both 'boxes' and 'bboxes'; it has keys {sorted(map(str, target))}"
                    )
                renamed = {("bboxes" if k == "boxes" else k): v for k, v in target.items()}
                renamed["image"] = image
                mapping = renamed
            elif "mask" in targets and (layout := pair_layout(image, target)) is not None:
                mapping = {"image": image, "mask": pair_mask(target, layout)}  # VOCSegmentation's
                first = ("mask",) if layout == CHANNELS_FIRST else ()
            else:
                if "bboxes" in targets:  # COCO's annotation dicts, boxes... would go stale
                    refuse_object_list(target, "the default adapter")
                    refuse_pair_target(target, "the default adapter")
                mapping = {"image": image}
        else:
            raise TypeError(
                f"rankaug cannot handle a sample of type {type(sample).__name__}: expected a "
                "dict with an 'image' key or an (image, target) pair; for any other shape "
                "pass adapter= (see rankaug.types.SampleAdapter)"
            )
        # the mapping (a dict sample, or a pair's target with its image) into data
        original = mapping["image"]
        if type(original) is np.ndarray and original.ndim in (2, 3):  # image_to_numpy's
            image, kind, mode = original, "numpy", None  # first rule, without the call
        else:
            image, kind, mode = image_to_numpy(original)
        data: dict[str, Any] = {"image": image}
        originals: dict[str, Any] = {}
        wrapped = kind != "numpy" and is_wrapped(original)
        empty, additional = self.typed_empty, self.additional_targets
        for key, value in mapping.items():
            if key != "image" and key in targets and value is not None:  # None: no target
                if empty and key in empty:  # a Hugging Face row without objects
                    value = typed(value, empty[key])
                originals[key] = value
                if type(value) is np.ndarray:  # as it is: no call per value
                    data[key] = value
                    continue
                role = "mask" if key == "mask" else additional.get(key) if additional else None
                if role == "image":  # an additional image: in the image's layout (CxHxW)
                    data[key] = image_to_numpy(value, key)[0]
                else:
                    data[key] = value_to_numpy(value)
                if role == "mask" and reads_first(value, kind, image.shape[:2]):
                    data[key], first = channels_last(data[key]), (*first, key)
                if is_wrapped(value):
                    reads = self.reads_box_format if key == "bboxes" else None
                    check_tv_boxes(value, reads, key, self.box_format_given_as, image.shape[:2])
                    wrapped = True
                elif isinstance(value, list | tuple) and holds_wrapped(value):
                    wrapped = True  # instance Masks, one per object: each wrapped again
        others = not mapping.keys() <= data.keys()
        if others and "bboxes" in targets:  # targets unread?
            refuse_unread(mapping, known(targets, data), "the default adapter", data.keys(),
                          hw=image.shape[:2])  # fmt: skip
        return data, _new_state((sample, originals, kind, mode, target, wrapped, others, first))

    def _call_plain(
        self, sample: Any, targets: frozenset[str], call: Callable[..., Mapping[str, Any]]
    ) -> Any:
        """``repack(call(**data), state)`` of ``unpack(sample, targets)``, for plain samples.

        A plain sample is a dict of numpy arrays alone, its image 2-D or 3-D, every key a
        target: then unpacking hands out every value as it is, and this does the three
        steps in one call, with no state made (a wrapper's common case, which runs right
        after the pixel work has taken the processor's caches: each call and object
        less counts there). The output is the one the three steps give.

        Args:
            sample: The sample.
            targets: The keys the transform takes.
            call: The transform, called as ``call(**data)``.

        Returns:
            The output sample, or ``None`` (nothing called) when ``sample`` is not plain
            or this adapter reads typed empty values or declared dtypes.
        """
        plain = type(sample) is dict and targets.issuperset(sample)
        if not plain or self.typed_empty or self.declared_dtypes:
            return None
        image = sample.get("image")
        if type(image) is not _NDARRAY or image.ndim not in (2, 3):
            return None
        if not _ARRAYS.issuperset(map(type, sample.values())):  # a loop in C, no frame
            return None
        # the image first, as unpack hands it out (a sample that has it first, as it is)
        out = (
            call(**sample) if next(iter(sample)) == "image" else call(**{"image": image, **sample})
        )
        if "masks" in out:  # per-box values that could go stale: repack's own checks
            state = (sample, sample, "numpy", None, None, False, False, ())
            return self.repack(out, _new_state(state))
        restored = {**sample, **out}  # the image, and keys the transform added, as they are
        for key, value in out.items():
            old = sample.get(key)
            if old is None or key == "image":
                continue
            # repack's rule for an array: as it is, or cast into the floats it was (each
            # attribute read once: a numpy one costs a lookup)
            if type(value) is _NDARRAY and (value.ndim != 1 or old.ndim <= 1):
                dtype = old.dtype
                if value.dtype == dtype:
                    continue
                if dtype.kind == "f":
                    restored[key] = value.astype(dtype)
                    continue
            # integer boxes and keypoints whole, every draw (rankaug.samples.whole)
            restored[key] = restore_whole(key, value, old, out, self.reads_box_format, key)
        return restored

    def view(self, sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
        """The data of a sample that is not rebuilt (see :func:`view`).

        A plain dict with a numpy image is its own view; other samples are unpacked.
        """
        plain = type(sample) is dict and type(sample.get("image")) is np.ndarray
        return sample if plain and not self.declared_dtypes else self.unpack(sample, targets)[0]

    @staticmethod
    def passthrough(sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
        """The values of a dict sample, or a pair's dict target, not in ``targets``.

        A target's ``boxes`` is its ``bboxes`` target (see :func:`passthrough`).
        """
        if type(sample) is dict or isinstance(sample, Mapping):
            mapping, renamed = sample, False
        elif isinstance(sample, tuple | list) and len(sample) == 2:
            mapping, renamed = sample[1], True
            if not isinstance(mapping, Mapping):
                return _NOTHING
        else:
            return _NOTHING
        if type(targets) is not frozenset and not isinstance(targets, AbstractSet):
            targets = frozenset(targets)
        if mapping.keys() <= targets:  # the usual case, kept cheap
            return _NOTHING
        return {
            key: value
            for key, value in mapping.items()
            if key not in targets and key != "image" and not (renamed and key == "boxes")
        }

    @staticmethod
    def attach(sample: Any, key: str, value: Any, *, spelled: str = "record={}") -> Any:
        """Add ``key: value`` to a dict sample or a pair's dict target (see :func:`attach`).

        Args:
            sample: The sample.
            key: The key.
            value: The value.
            spelled: The argument that gave ``key``, ``{}`` where the key goes
                (``"record={}"``, ``"HSVJitter(record_key={})"``): the error's advice.

        Raises:
            ValueError: If the dict already has ``key`` (the dataset's own value, or an
                inner wrapper's record), which the record would silently replace.
        """
        if isinstance(sample, dict):
            target = sample
        elif isinstance(sample, tuple | list) and len(sample) == 2 and isinstance(sample[1], dict):
            target = sample[1]
        else:
            return sample
        if key in target:
            raise ValueError(
                f"{spelled.format(repr(key))} names a key the sample already has (the "
                f"dataset's own {key!r}, or an inner wrapper's record), which the record "
                f"would replace: give it another name, such as {spelled.format(repr(key + '_2'))}"
            )
        target[key] = value
        return sample

    @staticmethod
    def class_target(sample: Any, key: str) -> Any:
        """A classification sample's class (see :func:`rankaug.samples.class_target`)."""
        if type(sample) is dict or isinstance(sample, Mapping):  # a dict: no ABC check
            return sample.get(key)
        if isinstance(sample, tuple | list) and len(sample) == 2:
            target = sample[1]
            return target.get(key) if isinstance(target, Mapping) else target
        return None

    @staticmethod
    def with_class_target(sample: Any, key: str, value: Any) -> Any:
        """Replace a sample's class (see :func:`rankaug.samples.with_class_target`)."""
        if isinstance(sample, dict):
            sample[key] = value
        elif isinstance(sample, tuple | list) and len(sample) == 2:
            if isinstance(sample[1], dict):
                sample[1][key] = value
            elif not isinstance(sample[1], Mapping):
                return pair_like(sample, sample[0], value)
        return sample

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        """Build a sample of the original shape (see :class:`SampleAdapter`).

        Raises:
            ValueError: If the boxes (keypoints) were dropped or added but a per-box
                (per-keypoint) value did not go with them (instance masks, or a value the
                transform was not given).
        """
        assert isinstance(state, _State)
        if state.others or "masks" in data:  # per-box or per-keypoint values could go stale
            sample = state.sample
            source = sample if isinstance(sample, Mapping) else state.target
            refuse_changed(data, source, state.originals)
        updates: dict[str, Any] = {}
        for key, value in data.items():
            if key == "image":
                updates[key] = (
                    value
                    if state.image_kind == "numpy"  # image_from_numpy's first rule
                    else image_from_numpy(value, state.image_kind, state.pil_mode)
                )
            elif key in state.originals:
                old = state.originals[key]
                if state.first and key in state.first:  # channels first again
                    value = channels_first(value, image_hw(data["image"]))
                if type(old) is not np.ndarray and self.additional_targets.get(key) == "image":
                    updates[key] = image_from_numpy(value, *image_kind(old))  # its layout back
                elif (  # restore_like's first rule, without the call: arrays as they are,
                    type(value) is np.ndarray  # or cast into the floats they were
                    and type(old) is np.ndarray
                    and (value.ndim != 1 or old.ndim <= 1)  # no shape to give back
                    and (value.dtype == old.dtype or old.dtype.kind == "f")
                ):
                    updates[key] = value if value.dtype == old.dtype else value.astype(old.dtype)
                else:  # integer boxes and keypoints whole, every draw
                    fmt = self.reads_box_format
                    updates[key] = restore_whole(key, value, old, data, fmt, key)
            else:
                updates[key] = value
        sample = state.sample
        if state.wrapped:  # torchvision's tv_tensors: their class back
            image = sample["image"] if isinstance(sample, Mapping) else sample[0]
            rewrap_values(updates, {**state.originals, "image": image}, data)
        if state.others:  # image-size metadata beside the image (not handed out): current
            source = sample if isinstance(sample, Mapping) else state.target
            if isinstance(source, Mapping) and not SIZE_KEYS.isdisjoint(source):
                image = sample["image"] if isinstance(sample, Mapping) else sample[0]
                before, after = height_width(image), image_hw(data["image"])
                assert before is not None  # an image unpacked: numpy, tensor or PIL
                sizes = resized_sizes(source, before, after, "the sample")
                updates.update((key, value) for key, value in sizes.items() if key not in data)
        if type(sample) is dict or isinstance(sample, Mapping):
            out = dict(sample)
            out.update(updates)
            return out
        image = updates.pop("image")
        target = state.target
        if "mask" in updates and not isinstance(target, Mapping):  # a pair's mask
            return pair_like(sample, image, mask_like(updates["mask"], target))
        if isinstance(target, Mapping):
            new_target = dict(target)
            box_key = "bboxes" if "bboxes" in target else "boxes"  # the target's own name
            for key, value in updates.items():
                new_target[box_key if key == "bboxes" else key] = value
            target = new_target
        return pair_like(sample, image, target)
