"""The two samples of a mix, read and checked as numpy arrays, and the result given back.

:class:`PartReader` hands the samples to the adapter (the main one to be rebuilt, the
partner only read, see :mod:`rankaug.samples`), turns each into a :class:`Part` —
pixel ``xyxy`` boxes, label fields, masks, keypoints and the classification class —
and checks it, naming the sample and the field of anything wrong: an image no resize
handles, boxes that are not ``(N, 4)`` or lie outside the image, a per-box field of the
wrong length (or one outside ``label_fields``, which would go stale), masks and
keypoints of the wrong shape, and a partner that disagrees with the main sample on
channels, dtypes, targets or size. A partner of another size is refused, or with
``partner_fit="letterbox"`` scaled to fit the main image and centred on it.
:meth:`PartReader.emit` turns the resulting part back into the main sample's data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np

from rankaug import checks
from rankaug.boxes import as_box_array, from_xyxy, to_xyxy, validate_xyxy
from rankaug.context import SampleContext
from rankaug.mix.config import PairConfig
from rankaug.mix.letterbox import letterbox
from rankaug.samples import SampleAdapter, class_target, passthrough, view

__all__ = ["Part", "PartReader"]

_NO_BOXES: Final = np.zeros((0, 4))
_NO_FIELD: Final = np.zeros((0,), dtype=np.int64)


@dataclass(slots=True)
class Part:
    """One sample of a mix (or the mix itself), as numpy arrays.

    Arrays read from a sample are the sample's own and are never written: a wrapper
    builds new arrays for its output.

    Attributes:
        index: Its dataset index.
        image: ``HxW`` or ``HxWxC``.
        boxes: ``(N, 4)`` float64 pixel ``xyxy``, inside the image.
        fields: Each label field, ``N`` entries.
        mask: The semantic mask, or ``None``.
        masks: The ``(N, H, W)`` instance masks, or ``None``.
        keypoints: ``(K, 2+)`` float64 keypoints, or ``None``.
        keypoint_fields: Each keypoint field, ``K`` entries.
        label: The classification class as the sample holds it, or ``None``.
    """

    index: int
    image: np.ndarray
    boxes: np.ndarray
    fields: dict[str, np.ndarray]
    mask: np.ndarray | None
    masks: np.ndarray | None
    keypoints: np.ndarray | None
    keypoint_fields: dict[str, np.ndarray]
    label: Any

    @property
    def hw(self) -> tuple[int, int]:
        """The image's ``(height, width)``."""
        return self.image.shape[0], self.image.shape[1]

    def signature(self) -> tuple[object, ...]:
        """What the two samples of a mix must share: channels, dtypes, kinds of target."""
        mask, masks = self.mask, self.masks
        return (
            self.image.shape[2:],
            self.image.dtype,
            None if mask is None else (mask.shape[2:], mask.dtype),
            None if masks is None else masks.dtype,
            self.keypoints is None,
        )

    def flipped(self) -> Part:
        """The part mirrored left to right (image, boxes, masks and keypoints)."""
        width = self.image.shape[1]
        boxes = self.boxes[:, [2, 1, 0, 3]] * [-1.0, 1.0, -1.0, 1.0] + [width, 0.0, width, 0.0]
        points = self.keypoints
        if points is not None:
            points = points.copy()
            points[:, 0] = width - points[:, 0]
        return replace(
            self,
            image=self.image[:, ::-1],
            boxes=boxes,
            mask=None if self.mask is None else self.mask[:, ::-1],
            masks=None if self.masks is None else self.masks[:, :, ::-1],
            keypoints=points,
        )


class PartReader:
    """Reads, checks and fits the two samples of a mix (see the module docstring).

    Args:
        config: The wrapper's shared configuration.
        adapter: The adapter the samples are unpacked with.
        what: The wrapper's name for messages, e.g. ``"MixUp"``.
    """

    def __init__(self, config: PairConfig, adapter: SampleAdapter, what: str) -> None:
        self.config = config
        self.adapter = adapter
        self.what = what
        # the adapter's hooks, resolved once: they run for every sample
        hook = getattr(adapter, "view", None)
        self._view: Callable[[Any, Collection[str]], Mapping[str, Any]] = (
            hook if callable(hook) else functools.partial(view, adapter)
        )
        hook = getattr(adapter, "passthrough", None)
        self._passthrough: Callable[[Any, Collection[str]], Mapping[str, Any]] = (
            hook if callable(hook) else functools.partial(passthrough, adapter)
        )
        self._checked: set[tuple[object, ...]] = set()  # main samples' kinds already checked
        self._fits: set[tuple[object, ...]] = set()  # letterboxed kinds whose fill fits

    def unpack(
        self, context: SampleContext, indices: Sequence[int], samples: Sequence[Any]
    ) -> tuple[dict[str, Any], Any, list[Mapping[str, Any]]]:
        """Hand the samples to the adapter: the main one to rebuild, a partner to read.

        Returns:
            The main sample's data and state, and every sample's data (main first).

        Raises:
            SampleError: If the adapter cannot handle a sample; it names that sample.
        """
        adapter, targets, read = self.adapter, self.config.targets, self._view
        try:
            data, state = adapter.unpack(samples[0], targets)
            views = [data, *[read(sample, targets) for sample in samples[1:]]]
        except Exception:
            for position, (index, sample) in enumerate(zip(indices, samples, strict=True)):
                with context.guard(f"dataset[{index}]"):
                    if position:
                        read(sample, targets)
                    else:
                        adapter.unpack(sample, targets)
            raise
        return data, state, views

    def parts(
        self, indices: Sequence[int], views: Sequence[Mapping[str, Any]], samples: Sequence[Any]
    ) -> list[Part]:
        """Read every sample (:meth:`read`), check the partner against the main one, fit it.

        Raises:
            ValueError: If the samples disagree, or differ in size with
                ``partner_fit="error"``.
        """
        parts = [self.read(*item) for item in zip(indices, views, samples, strict=True)]
        main = parts[0]
        expected = main.signature()
        if expected not in self._checked:
            checks.image_layout(main.image, f"dataset[{main.index}] image")
            self._checked.add(expected)
        for position in range(1, len(parts)):
            partner = parts[position]
            if partner.signature() != expected:
                _disagree(partner, main, self.what)
            if partner.hw != main.hw:
                parts[position] = self._fit(partner, main)
        return parts

    def read(self, index: int, data: Mapping[str, Any], sample: Any) -> Part:
        """Check one sample's data and make its part.

        Args:
            index: Its dataset index.
            data: Its data from the adapter (``unpack``, or ``view`` for a partner).
            sample: The sample itself, for the adapter's ``passthrough`` and
                ``class_target`` hooks.

        Returns:
            The part.

        Raises:
            TypeError: If the image is not a numpy array once unpacked.
            ValueError: If anything is wrong with it (the message names
                ``dataset[index]`` and the field).
        """
        config = self.config
        where = f"dataset[{index}]"
        image = data.get("image")
        if not isinstance(image, np.ndarray):
            raise TypeError(
                f"{where} image must be a numpy array once unpacked by the adapter, got "
                f"{type(image).__name__}"
            )
        if image.ndim not in (2, 3) or image.shape[0] == 0 or image.shape[1] == 0:
            raise ValueError(f"{where} image must be a non-empty HxW or HxWxC array, got "
                             f"shape {image.shape}")  # fmt: skip
        hw = image.shape[0], image.shape[1]
        raw = data.get("bboxes")
        boxes = _NO_BOXES if raw is None else as_box_array(raw, name=f"{where} bboxes")
        if len(boxes):
            if config.box_format != "pascal_voc":
                boxes = to_xyxy(boxes, config.box_format, hw)
            boxes = validate_xyxy(
                boxes, hw, name=f"{where} bboxes (as pixel x_min, y_min, x_max, y_max)"
            )
        count = len(boxes)
        fields = {}
        for field in config.label_fields:
            value = data.get(field)
            if value is None:
                if count:
                    raise ValueError(
                        f"{where} has {count} boxes but no {field!r} field (label_fields="
                        f"{config.label_fields}); pass label_fields=() for boxes without labels"
                    )
                fields[field] = _NO_FIELD
                continue
            array = np.asarray(value)
            if array.ndim == 0 or len(array) != count:
                raise ValueError(
                    f"{where} {field!r} has {array.size if array.ndim else 'a scalar'} "
                    f"entries for {count} boxes"
                )
            fields[field] = array
        if count:
            others = self._passthrough(sample, config.targets)
            if others:
                self._check_stale(where, others, count)
        mask = data.get("mask")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape[:2] != hw:
                raise ValueError(f"{where} mask has shape {mask.shape}, its image {hw}")
        masks = data.get("masks")
        if masks is not None:
            masks = np.asarray(masks)
            if masks.ndim != 3 or masks.shape[0] != count or masks.shape[1:] != hw:
                raise ValueError(
                    f"{where} masks must have shape ({count}, {hw[0]}, {hw[1]}) (one per "
                    f"box), got {masks.shape}"
                )
        keypoints = data.get("keypoints")
        point_fields = {}
        if keypoints is not None:
            keypoints = np.asarray(keypoints, dtype=np.float64)
            if keypoints.ndim != 2 or keypoints.shape[1] < 2:
                raise ValueError(
                    f"{where} keypoints must have shape (K, 2+), got {keypoints.shape}"
                )
            for field in config.keypoint_fields:
                array = np.asarray(data.get(field, np.zeros((0,))))
                if array.ndim == 0 or len(array) != len(keypoints):
                    raise ValueError(
                        f"{where} {field!r} must have one entry per keypoint ({len(keypoints)})"
                    )
                point_fields[field] = array
        label = class_target(self.adapter, sample, config.class_field)
        return Part(index, image, boxes, fields, mask, masks, keypoints, point_fields, label)

    def emit(self, part: Part, present: Collection[str]) -> dict[str, Any]:
        """The output's data for the adapter: the targets the main sample has.

        Args:
            part: The output.
            present: The main sample's data keys: ``bboxes`` brings every label field
                along; without it only the label fields it has are given.

        Returns:
            The data, boxes back in ``box_format``.
        """
        config = self.config
        data: dict[str, Any] = {"image": part.image}
        with_boxes = "bboxes" in present
        if with_boxes:
            boxes = part.boxes
            if config.box_format != "pascal_voc":
                boxes = from_xyxy(boxes, config.box_format, part.hw)
            data["bboxes"] = boxes
        for field in config.label_fields:
            if with_boxes or field in present:
                data[field] = part.fields[field]
        if part.mask is not None:
            data["mask"] = part.mask
        if part.masks is not None:
            data["masks"] = part.masks
        if part.keypoints is not None:
            data["keypoints"] = part.keypoints
            data.update(part.keypoint_fields)
        return data

    def _fit(self, partner: Part, main: Part) -> Part:
        """A partner of another size: letterboxed into the main image's, or refused."""
        if self.config.partner_fit == "error":
            (ph, pw), (mh, mw) = partner.hw, main.hw
            raise ValueError(
                f"dataset[{partner.index}] image is {ph}x{pw} (height x width), the main "
                f"image dataset[{main.index}] is {mh}x{mw}: {self.what} needs both of one "
                "size; pass partner_fit='letterbox' to fit the partner into the main image"
            )
        kind = (partner.image.dtype, partner.image.shape[2:], getattr(partner.mask, "dtype", None))
        if kind not in self._fits:
            self.config.check_fill(partner.image, partner.mask, f"dataset[{partner.index}]")
            self._fits.add(kind)
        return letterbox(partner, main.hw, self.config)

    def _check_stale(self, where: str, others: Mapping[str, Any], count: int) -> None:
        """Refuse per-box values that are not in label_fields: they would go stale."""
        config = self.config
        for key, value in others.items():
            if key in (config.record, config.class_field) or isinstance(value, str | bytes):
                continue
            shape = getattr(value, "shape", None)
            if shape is not None:
                entries = shape[0] if len(shape) >= 1 else None
            elif isinstance(value, list | tuple):
                entries = len(value)
            else:
                continue
            if entries == count:
                raise ValueError(
                    f"{where} {key!r} looks like a per-box field ({entries} entries for "
                    f"{count} boxes) that is not in label_fields={config.label_fields}: "
                    f"{self.what} would leave it misaligned; add it to label_fields or drop it"
                )


def _disagree(partner: Part, main: Part, what: str) -> None:
    name, main_name = f"dataset[{partner.index}]", f"the main image dataset[{main.index}]"
    image, reference = partner.image, main.image
    if image.shape[2:] != reference.shape[2:] or image.dtype != reference.dtype:
        raise ValueError(
            f"{name} image has shape {image.shape} and dtype {image.dtype}, but {main_name} "
            f"has {reference.shape} and {reference.dtype}: the samples of a {what} need the "
            "same channels and dtype"
        )
    for kind in ("mask", "masks"):
        ours, theirs = getattr(partner, kind), getattr(main, kind)
        if ours is not None and theirs is not None and ours.dtype != theirs.dtype:
            raise ValueError(
                f"{name} {kind} has dtype {ours.dtype}, but {main_name}'s has {theirs.dtype}: "
                f"the samples of a {what} need the same {kind} dtype"
            )
        if ours is not None and theirs is not None and ours.shape[2:] != theirs.shape[2:]:
            raise ValueError(
                f"{name} {kind} has shape {ours.shape}, but {main_name}'s has {theirs.shape}: "
                f"the samples of a {what} need {kind} of the same channels"
            )
    raise ValueError(
        f"{name} and dataset[{main.index}] disagree on having a mask, instance masks or "
        f"keypoints: the samples of a {what} need the same targets"
    )
