"""Reading the samples of a multi-sample wrapper: each one's image and targets, checked.

``MosaicDataset`` and the mixing family (``MixUpDataset``, ``CutMixDataset``,
``CopyPasteDataset``) read several samples per output. :class:`PartReader` hands them to
the adapter (the main one to be rebuilt at the end, the others only read, see
:mod:`rankaug.samples`), turns each into a :class:`~rankaug._multi.part.Part` (named here
too) and checks it, naming the sample and the field of anything wrong: an image no
resize handles, boxes that are not ``(N, 4)``, a per-box field of the wrong length (or
one outside ``label_fields``, or a per-keypoint one outside ``keypoint_fields``, which
would go stale), masks and keypoints of the wrong shape (``[]`` is none of either, as for
boxes), keypoints whose ``x`` or ``y`` is NaN or infinite (refused, never dropped), and
samples that disagree with the main one on channels, dtypes, keypoint columns or targets
(empty keypoints take others').
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final

import numpy as np

from rankaug import checks
from rankaug._multi.agreement import refuse_disagreement
from rankaug._multi.fields import UNTYPED, read_field, untyped
from rankaug._multi.part import NO_BOXES, Part
from rankaug.boxes import as_box_array
from rankaug.checks.rows import RANKAUG_FIELDS
from rankaug.context import SampleContext
from rankaug.polygons import POLYGONS, read_polygons
from rankaug.samples import SampleAdapter, class_target, passthrough, view
from rankaug.samples.unread import BY_CHANCE, per_box_fields

__all__ = ["Part", "PartReader"]

_FLOAT64, _FLOAT32 = np.dtype(np.float64), np.dtype(np.float32)  # compared as dtypes
_NDARRAY: Final = np.ndarray  # (a global: numpy's attributes are looked up on every use)
_RARE: Final = frozenset({"mask", "masks", "keypoints", POLYGONS})
"""The targets few samples have: a sample with none of them is read by one set test."""


class PartReader:
    """Reads and checks the samples of one output (see the module docstring).

    Args:
        adapter: The adapter the samples are unpacked with.
        targets: The target keys the adapter hands out.
        label_fields: The per-box fields kept aligned with the boxes.
        keypoint_fields: The per-keypoint fields.
        skip: Keys of the main sample that may have one entry per box without being a
            label field (the wrapper's own record, say).
        group: The samples, for messages (``"tiles of a mosaic"``).
        actor: Who would misalign a stale field, for messages (``"the mosaic"``).
        polygons: Whether the wrapper maps instance polygons (``segments``); when not, a
            sample that has them is refused.
        float32: Whether float32 boxes stay float32 (no copy: each float32 is a float64
            exactly, so a wrapper casting all samples' boxes at once gets the same numbers).

    Attributes:
        class_target: ``class_target(sample, key)``: :func:`rankaug.samples.class_target`
            with the adapter, its hook looked up once (it runs for every output).
    """

    def __init__(
        self,
        adapter: SampleAdapter,
        *,
        targets: Collection[str],
        label_fields: Sequence[str],
        keypoint_fields: Sequence[str],
        skip: Collection[str],
        group: str,
        actor: str,
        polygons: bool = False,
        float32: bool = False,
    ) -> None:
        self.adapter = adapter
        self.polygons = polygons
        self.float32 = float32
        self.targets = targets
        self.label_fields, self.keypoint_fields = tuple(label_fields), tuple(keypoint_fields)
        self.skip = frozenset(skip)
        self.group, self.actor = group, actor
        # the adapter's hooks, resolved once: they run for every sample
        hook = getattr(adapter, "view", None)
        self._view: Callable[[Any, Collection[str]], Mapping[str, Any]] = (
            hook if callable(hook) else functools.partial(view, adapter)
        )
        hook = getattr(adapter, "passthrough", None)
        self._passthrough: Callable[[Any, Collection[str]], Mapping[str, Any]] = (
            hook if callable(hook) else functools.partial(passthrough, adapter)
        )
        hook = getattr(adapter, "class_target", None)  # (rankaug.samples.class_target's)
        self.class_target: Callable[[Any, str], Any] = (
            hook if hook is not None else functools.partial(class_target, adapter)
        )
        self._checked: set[tuple[object, ...]] = set()  # main samples' kinds already checked

    def unpack(
        self, context: SampleContext, indices: Sequence[int], samples: Sequence[Any]
    ) -> tuple[dict[str, Any], Any, list[Mapping[str, Any]]]:
        """Hand the samples to the adapter: the main one to rebuild, the others to read.

        Args:
            context: The sample's context.
            indices: The samples' indices, main first.
            samples: The samples.

        Returns:
            The main sample's data and state, and every sample's data (main first).

        Raises:
            SampleError: If the adapter cannot handle a sample; it names that sample
                (``dataset[7] failed at index 3 ...``). To keep the usual path free of
                one guard per sample, a failure is found by reading the samples again,
                each under its own guard.
        """
        adapter, targets, read = self.adapter, self.targets, self._view
        try:
            data, state = adapter.unpack(samples[0], targets)
            views: list[Mapping[str, Any]] = [data]  # (a loop: a comprehension is a function)
            for sample in samples[1:]:
                views.append(read(sample, targets))
        except Exception:
            for position, (index, sample) in enumerate(zip(indices, samples, strict=True)):
                with context.guard(f"dataset[{index}]"):
                    if position:
                        read(sample, targets)
                    else:
                        adapter.unpack(sample, targets)
            raise
        return data, state, views

    def read(self, index: int, data: Mapping[str, Any], sample: Any) -> Part:
        """Check one sample's data and make its part (boxes as read, not converted).

        Args:
            index: Its dataset index.
            data: Its data from the adapter (``unpack``, or ``view`` for a partner).
            sample: The sample itself, for the adapter's ``passthrough``.

        Returns:
            The part.

        Raises:
            TypeError: If the image is not a numpy array once unpacked.
            ValueError: If anything is wrong with it (the message names
                ``dataset[index]`` and the field).
        """
        image = data.get("image")
        if type(image) is not _NDARRAY and not isinstance(image, np.ndarray):
            raise TypeError(
                f"dataset[{index}] image must be a numpy array once unpacked by the adapter, "
                f"got {type(image).__name__}"
            )
        shape = image.shape
        if len(shape) not in (2, 3) or not shape[0] or not shape[1]:
            raise ValueError(
                f"dataset[{index}] image must be a non-empty HxW or HxWxC array, got shape {shape}"
            )
        raw = data.get("bboxes")
        if raw is None:
            boxes = NO_BOXES
        elif type(raw) is _NDARRAY and raw.ndim == 2 and raw.shape[1] == 4:
            # (N, 4) numbers: as as_box_array makes them (float64 is read, never written);
            # the usual dtypes known by identity (a dtype compares by a cast lookup)
            dtype = raw.dtype
            if dtype is _FLOAT64 or (dtype is _FLOAT32 and self.float32):
                boxes = raw
            elif dtype.kind not in "fiu":
                boxes = as_box_array(raw, name=f"dataset[{index}] bboxes")
            else:
                kept = dtype == _FLOAT64 or (dtype == _FLOAT32 and self.float32)
                boxes = raw if kept else raw.astype(_FLOAT64)
        else:
            boxes = as_box_array(raw, name=f"dataset[{index}] bboxes")
        usual = _RARE.isdisjoint(data)  # its keys: an image, boxes and labels (the usual)
        count, points = len(boxes), None if usual else data.get("keypoints")
        fields = {}  # each label field, one entry per box
        for field in self.label_fields:
            value = data.get(field)
            if value is None:
                if count:
                    raise ValueError(
                        f"dataset[{index}] has {count} boxes but no {field!r} field (label_fields="
                        f"{self.label_fields}); pass label_fields=() for boxes without labels"
                    )
                fields[field] = UNTYPED  # no dtype: the samples with entries decide
                continue
            array = value if type(value) is _NDARRAY else np.asarray(value)  # (no call)
            if not count and not array.size and array.ndim == 1:
                array = read_field(value)  # [] has no dtype (an empty array keeps its own)
            if array.ndim == 0 or len(array) != count:
                raise ValueError(
                    f"dataset[{index}] {field!r} has {array.size if array.ndim else 'a scalar'} "
                    f"entries for {count} boxes"
                )
            fields[field] = array
        if count or (points is not None and len(points)):
            others = self._passthrough(sample, self.targets)
            if others:
                self._check_stale(index, others, count, 0 if points is None else len(points))
        if usual:
            return Part(index, image, boxes, fields, None, None, None, {})
        return self._rare(index, data, image, boxes, fields)

    def _rare(
        self,
        index: int,
        data: Mapping[str, Any],
        image: np.ndarray,
        boxes: np.ndarray,
        fields: dict[str, np.ndarray],
    ) -> Part:
        """:meth:`read`'s part of a sample with a mask, instance masks, keypoints or polygons."""
        where, count, hw = f"dataset[{index}]", len(boxes), image.shape[:2]
        mask = data.get("mask")
        if mask is not None:
            mask = np.asarray(mask)
            checks.mask_covers(mask, image, f"{where} mask")
        masks = data.get("masks")
        if masks is not None:  # [] (a background image): (0, H, W), untyped (see check)
            masks = np.zeros((0, *hw), object) if _empty_list(masks) else np.asarray(masks)
            if masks.ndim != 3 or masks.shape[0] != count or masks.shape[1:] != hw:
                raise ValueError(
                    f"{where} masks must have shape ({count}, {hw[0]}, {hw[1]}) (one per "
                    f"box), got {masks.shape}"
                )
        keypoints, point_fields = self._keypoints(where, data)
        segments = data.get(POLYGONS)
        if segments is not None:
            if not self.polygons:
                raise ValueError(
                    f"{where} has instance polygons ({POLYGONS!r}), which {self.actor} does "
                    "not map: give instance masks ('masks') instead, or drop them"
                )
            segments = read_polygons(segments, count, where)
        return Part(index, image, boxes, fields, mask, masks, keypoints, point_fields, None,
                    segments)  # fmt: skip

    def check(self, parts: Sequence[Part]) -> None:
        """Check the parts of one output against the main one (the first).

        The main image must be one that every resize handles
        (:func:`rankaug.checks.image_layout`, checked once per kind of main sample), and
        every other part must have the same channels, dtypes and kinds of target
        (instance masks given as ``[]`` first take the others' dtype). Boxes
        too: a partner's boxes would be dropped under a main sample without any (its
        objects painted in unlabelled), a partner without boxes would bring unlabelled
        objects; only a main sample without boxes among partners whose boxes are empty
        loses nothing.

        Raises:
            TypeError: If the main image's dtype is not supported.
            ValueError: If the parts disagree, or the main image has too many channels.
        """
        main = parts[0]
        if main.masks is not None:  # masks given as [] take the others' dtype
            self._type_masks(parts)
        if main.keypoints is not None:  # no keypoints ([]) take the others' columns
            _shape_keypoints(parts)
        expected = main.signature()
        if expected not in self._checked:
            checks.image_layout(main.image, f"dataset[{main.index}] image")
            self._checked.add(expected)
        if (
            main.mask is None
            and main.masks is None
            and main.keypoints is None
            and main.segments is None
        ):
            # the usual parts: their signature() compared in place (a dtype known by
            # identity first: a dtype compares by a cast lookup)
            shape, dtype, unboxed = expected[0], expected[1], expected[-1]
            for part in parts[1:]:
                image = part.image
                kind = image.dtype
                if (
                    image.shape[2:] != shape or (kind is not dtype and kind != dtype)
                    or part.mask is not None or part.masks is not None
                    or part.keypoints is not None or part.segments is not None
                    or (part.boxes is NO_BOXES) != unboxed
                ):  # fmt: skip
                    refuse_disagreement(part, main, self.group)
            return
        for part in parts[1:]:
            if part.signature() != expected:
                refuse_disagreement(part, main, self.group)

    @staticmethod
    def _type_masks(parts: Sequence[Part]) -> None:
        """Give instance masks read from ``[]`` the other parts' dtype (``uint8`` if none)."""
        masks = [p.masks for p in parts if p.masks is not None]
        typed = [m.dtype for m in masks if not untyped(m)]
        if len(typed) < len(masks):
            dtype = typed[0] if typed else np.dtype(np.uint8)
            for part in parts:
                if part.masks is not None and untyped(part.masks):
                    part.masks = np.zeros((0, *part.hw), dtype)

    def _keypoints(
        self, where: str, data: Mapping[str, Any]
    ) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        keypoints = data.get("keypoints")
        fields: dict[str, np.ndarray] = {}
        if keypoints is None:
            return None, fields
        if _empty_list(keypoints):  # [] (a background image) has no shape: (0, 2)
            keypoints = np.zeros((0, 2))
        keypoints = np.asarray(keypoints, dtype=np.float64)
        checks.point_rows(keypoints, f"{where} 'keypoints'", RANKAUG_FIELDS)  # the wrapper's words
        if keypoints.ndim != 2 or keypoints.shape[1] < 2:  # empty: np.zeros(0), (0, 1)
            keypoints = np.zeros((0, 2))
        checks.finite_points(keypoints, f"{where} keypoints")  # as boxes: never dropped
        for field in self.keypoint_fields:
            array = read_field(data.get(field))
            if array.ndim == 0 or len(array) != len(keypoints):
                raise ValueError(
                    f"{where} {field!r} must have one entry per keypoint ({len(keypoints)})"
                )
            fields[field] = array
        return keypoints, fields

    def _check_stale(self, index: int, others: Mapping[str, Any], count: int, points: int) -> None:
        """Refuse per-box (per-keypoint) values not in label_fields (keypoint_fields)."""
        checked = ((count, "box", "label_fields"), (points, "keypoint", "keypoint_fields"))
        for number, what, names in checked:
            if number and (stale := per_box_fields(others, number, self.skip)):
                raise ValueError(
                    f"dataset[{index}] {stale[0]!r} looks like a per-{what} field ({number} "
                    f"entries, one per {what}) that is not in {names}={getattr(self, names)}: "
                    f"{self.actor} would leave it misaligned; add it to {names} or drop it; "
                    + BY_CHANCE
                )


def _shape_keypoints(parts: Sequence[Part]) -> None:
    """Give parts without keypoints the columns of the first part with some.

    A background image's ``[]`` (read as ``(0, 2)``) or ``np.zeros((0, 2))`` beside
    keypoints with a visibility, ``(K, 3)``: it has no point to disagree on.
    """
    shaped = [p.keypoints for p in parts if p.keypoints is not None and len(p.keypoints)]
    if not shaped:
        return
    columns = shaped[0].shape[1]
    for part in parts:
        points = part.keypoints
        if points is not None and not len(points) and points.shape[1] != columns:
            part.keypoints = np.zeros((0, columns))


def _empty_list(value: Any) -> bool:
    """Whether ``value`` is ``[]`` or ``()``: no entries, and no shape or dtype to read."""
    return isinstance(value, list | tuple) and not value
