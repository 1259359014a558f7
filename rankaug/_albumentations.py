"""The albumentations driver (see :mod:`rankaug.transforms`): boxes, masks, keys, threads."""

from __future__ import annotations

import copy
import math
import random
from typing import Any, Final

import cv2
import numpy as np

from rankaug import checks
from rankaug._albumentations_targets import (
    additional,
    albumentations_targets,
    bbox_params_format,
    moves,
)
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
from rankaug._threads import PerThread
from rankaug.keys import KeyedRandom
from rankaug.polygons import POLYGONS
from rankaug.samples import (
    DefaultAdapter,
    SampleAdapter,
    check_adapter,
    passthrough_hook,
)

__all__ = ["AlbumentationsDriver", "albumentations_targets", "bbox_params_format"]

# the steps DefaultAdapter._call_plain does in one call, as its module defines them
_UNPACK: Final = DefaultAdapter.unpack
_REPACK: Final = DefaultAdapter.repack
_STEPS: Final = frozenset({"unpack", "repack", "_call_plain"})
_NDARRAY: Final = np.ndarray  # (numpy's module __getattr__ keeps np.ndarray unspecialised)
_LAYOUTS: Final = {
    "pascal_voc": "x_min, y_min, x_max, y_max in pixels",
    "coco": "x_min, y_min, width, height in pixels",
    "yolo": "normalised x_centre, y_centre, width, height",
    "albumentations": "normalised x_min, y_min, x_max, y_max",
}  # (for the message of boxes in another format)


class AlbumentationsDriver:
    """Boxes and keypoints need their processor (``bbox_params``, ``keypoint_params``).

    Without one, albumentations 2.0.8 silently drops the boxes of a geometric transform
    and AlbumentationsX raises deep inside it. So a sample's boxes or keypoints go to the
    transform only when it has the processor; when it has none they pass through
    untouched if no transform in it moves them (pixel-level pipelines), and otherwise
    the call is refused with an error that says what to add. Instance polygons
    (``segments``) no processor moves: a pipeline that moves boxes refuses them. A
    sample with neither boxes nor any of the processor's label fields has no objects: it
    gets empty ones, which its output loses again.
    """

    def __init__(self, transform: Any, adapter: SampleAdapter) -> None:
        # never called itself: each thread calls its own compact copy of it
        self.transforms = PerThread(copy.deepcopy(transform), compact_deepcopy)
        handed = (np.random.default_rng(0), random.Random(0))  # each call hands the key's
        self.transforms.original.set_random_state(*handed)
        warn_own_random(self.transforms.original, handed)  # what it keeps beside them
        processors = getattr(transform, "processors", None) or {}
        params = getattr(processors.get("bboxes"), "params", None)
        given = bbox_params_format(transform)
        self.box_format: str | None = given  # A.BboxParams', None without a processor
        self.drops_invalid = bool(getattr(params, "filter_invalid_bboxes", False))
        self.label_fields = tuple(getattr(params, "label_fields", None) or ())
        # the adapter reads the boxes in this format: a torchvision BoundingBoxes in another
        # is refused (a copy of a DefaultAdapter or KeyMap, told the format)
        self.adapter = check_adapter(
            adapter,
            box_format=given,
            name="A.BboxParams format",
            additional_targets=additional(transform, ("image", "mask")),  # their layout
        )
        # boxes and keypoints, also under the names additional_targets gives them
        self.kinds = {**additional(transform), "bboxes": "bboxes", "keypoints": "keypoints"}
        unmanaged = {key for key, kind in self.kinds.items() if kind not in processors}
        self.refused = {key for key in unmanaged if moves(transform, self.kinds[key])}
        # albumentations drops a NaN keypoint silently (it refuses NaN boxes): checked here
        # (under each name additional_targets gives keypoints)
        points = [key for key, kind in self.kinds.items() if kind == "keypoints"]
        self.points = tuple(points) if "keypoints" in processors else ()
        self.targets = albumentations_targets(transform) - (unmanaged - self.refused)
        # polygons are no albumentations target: a pipeline that moves boxes would leave them
        self.geometric = POLYGONS not in self.targets and moves(transform, "bboxes")
        self.moves_masks = moves(transform, "mask")  # a mask must then cover its image
        # OpenCV warps no bool or float16 mask (remap asserts): uint8 and float32 go
        self.mask_keys = ("mask", "masks", *additional(transform, ("mask", "masks")))
        self.image_keys = ("image", *additional(transform, ("image",)))  # dtypes named
        # the values a sample keeps (where polygons would be), asked only when geometric
        self._others = passthrough_hook(adapter) if self.geometric else None
        self._default = self._others is DefaultAdapter.passthrough  # not a subclass's own
        # the keys DefaultAdapter._call_plain may take (see __call__): none that is checked
        # or treated apart below (refused, keypoints, instance masks, masks that are moved:
        # they must cover the image, in a dtype OpenCV warps); None for another adapter
        # (one given methods of its own, or a class patched with others: checked per call)
        moved = set(self.mask_keys) if self.moves_masks else set()
        checked = {*self.refused, *self.points, "masks", *moved}
        plain = type(self.adapter) is DefaultAdapter
        self.plain = self.targets - checked if plain else None

    def __call__(self, sample: Any, keyed: KeyedRandom) -> Any:
        try:
            try:  # self.transforms.slot() written out: [this thread's copy, the state handed]
                held = self.transforms.local.held
            except AttributeError:  # the thread's first call
                held = self.transforms.slot()
            transform = held[0]
            if keyed is not held[1]:  # a stream keeps its state between samples
                transform.set_random_state(keyed.generator, keyed.py_random)
                held[1] = keyed
            # The common case in this frame, in one call: a dict of numpy arrays of keys
            # that need no check here (see DefaultAdapter._call_plain). None: another
            # sample, nothing drawn yet.
            plain = self.plain
            if (
                plain is not None
                and type(sample) is dict
                and DefaultAdapter.unpack is _UNPACK  # not patched (mock.patch.object)
                and DefaultAdapter.repack is _REPACK
                and _STEPS.isdisjoint(vars(self.adapter))  # none of the adapter's own
            ):
                for key in self.label_fields:  # a loop, not any(): no generator per sample
                    value = sample.get(key)
                    if value is None:
                        break  # no such field: the steps name it, or read no objects
                    if (
                        type(value) is _NDARRAY
                        and value.ndim > 1
                        and math.prod(value.shape[1:]) != 1
                    ):
                        break  # (N, K) label fields: rows follow (_steps); (N, 1) as they are
                else:
                    out = self.adapter._call_plain(sample, plain, transform)  # type: ignore[attr-defined]
                    if out is not None:
                        return out
            return self._steps(sample, transform)
        except cv2.error as error:  # an image of a dtype OpenCV cannot warp or resize?
            self._refuse_dtype(sample, error)
            raise
        except ValueError as error:  # albumentations' refusal of a zero-size box?
            if not self.drops_invalid and _raised_in_albumentations(error):
                self._name_zero_size(sample, error)
            raise

    def _name_zero_size(self, sample: Any, error: Exception) -> None:
        """Name the first zero-size box and the fix (albumentations names neither).

        Its message gives the box normalised, the label's index appended; rankaug's
        ``CocoDetection`` keeps zero-size boxes, as COCO files hold some.
        """
        try:
            boxes = np.asarray(self.adapter.unpack(sample, self.targets)[0].get("bboxes"))
        except Exception:  # nothing to name: albumentations' error stands
            return
        if boxes.ndim != 2 or boxes.shape[1] < 4 or boxes.dtype.kind not in "iuf":
            return
        corners = self.box_format in ("pascal_voc", "albumentations")
        width = boxes[:, 2] - boxes[:, 0] if corners else boxes[:, 2]
        height = boxes[:, 3] - boxes[:, 1] if corners else boxes[:, 3]
        negative = np.flatnonzero((width < 0) | (height < 0))
        if negative.size:  # no zero-size box: the boxes are not in this format at all
            row = ", ".join(f"{value:g}" for value in boxes[negative[0], :4].tolist())
            raise ValueError(
                f"box {negative[0]}, [{row}], has a negative width or height read as "
                f"{self.box_format!r} ({_LAYOUTS.get(str(self.box_format), '')}): are the boxes in "
                "another format? Give A.BboxParams theirs ('coco' for x, y, width, height; "
                "'yolo' for normalised centres and sizes)"
            ) from error
        zero = np.flatnonzero((width <= 0) | (height <= 0))
        if zero.size:
            row = ", ".join(f"{value:g}" for value in boxes[zero[0], :4].tolist())
            raise ValueError(
                f"box {zero[0]}, [{row}], has zero width or height ({self.box_format!r}), "
                "which albumentations refuses: drop such boxes from the data, or give "
                "A.BboxParams(..., filter_invalid_bboxes=True) to drop them (with their "
                "label fields) before the transforms"
            ) from error

    def _refuse_dtype(self, sample: Any, error: Exception) -> None:
        """Name the image whose dtype OpenCV refused (its assertion names none).

        Nothing is refused or cast before the call: a pipeline may set the dtype itself
        (``A.ToFloat``, ``A.Normalize``) before its warps, and flips take any dtype.
        """
        data = self.adapter.unpack(sample, self.targets)[0]
        for key in self.image_keys:
            image = data.get(key)
            if isinstance(image, np.ndarray):
                try:
                    checks.opencv_dtype(image, f"the sample's {key!r}")
                except TypeError as refused:
                    raise refused from error

    def _steps(self, sample: Any, transform: Any) -> Any:
        """The adapter's steps, checked: unpack, the transform, repack (see ``__call__``)."""
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
        if self.label_fields and not self._all_fields(data):
            return self._without_objects(transform, sample, data, state)
        wide = wide_fields(data, self.label_fields) if self.label_fields else None
        if wide:  # (N, K) label fields: each box's position goes, and the rows follow it
            data.update((key, np.arange(len(rows), dtype=np.float64)) for key, rows in wide.items())
            out = self._call(transform, data)
            out.update((key, rows_kept(out[key], rows)) for key, rows in wide.items())
            return self.adapter.repack(out, state)
        return self.adapter.repack(self._call(transform, data), state)

    def _all_fields(self, data: dict[str, Any]) -> bool:
        """Whether ``data`` has every label field (albumentations' need)."""
        return all(key in data for key in self.label_fields)

    def _without_objects(
        self, transform: Any, sample: Any, data: dict[str, Any], state: Any
    ) -> Any:
        """A sample with neither boxes nor label fields: no objects, so none to move.

        albumentations refuses such a sample when its ``BboxParams`` has label fields
        (torchvision's ``wrap_dataset_for_transforms_v2`` gives an image without
        annotations the target ``{"image_id": ...}``): it gets empty ones, taken off
        again. One that lacks only some of them is refused, naming those missing, as
        albumentations refuses it less clearly; so is one that keeps, under a key the
        adapter does not read, a value that may hold objects (boxes under another name:
        they would come back unmoved).
        """
        fields = ("bboxes", *self.label_fields)
        missing = [key for key in fields if key not in data]
        need = (
            f"the transform's A.BboxParams(label_fields={list(self.label_fields)}) needs "
            "the boxes ('bboxes') and each label field, one value per box"
        )
        if len(missing) < len(fields):
            raise ValueError(
                f"the sample has no {', '.join(map(repr, missing))}, but {need}: give them "
                "all (empty, for an image without objects; a None value is none) or none"
            )
        plain = type(self.adapter) is DefaultAdapter
        who = "the default adapter" if plain else repr(self.adapter)
        kept = passthrough_hook(self.adapter)(sample, self.targets)
        found = next((key for key, value in kept.items() if _may_hold_objects(value)), None)
        if found is not None:
            raise ValueError(
                f"the sample has no boxes ('bboxes') nor label fields, but {found!r} may hold "
                f"its objects, which {who} does not read and the transform would "
                f"leave where they were: {need}; give them under those keys (or an "
                "adapter= that reads them), or drop the key"
            )
        empty = {key: np.zeros((0, 4) if key == "bboxes" else 0) for key in fields}
        out = self._call(transform, {**data, **empty})
        for key in fields:
            del out[key]
        return self.adapter.repack(out, state)

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


def _may_hold_objects(value: object) -> bool:
    """Whether ``value`` may hold objects: rows (``(N, 4)`` boxes) or a list of them.

    An image without objects keeps scalars and flat values only (an ``image_id``, a size).
    """
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple | list) and not isinstance(value, str | bytes):
        return len(shape) >= 2 and math.prod(shape) > 0
    if isinstance(value, list | tuple) and value:
        return not isinstance(value[0], bool | int | float | str | bytes)
    return False


def _raised_in_albumentations(error: BaseException) -> bool:
    """Whether ``error`` was raised inside albumentations (its innermost frame's module)."""
    trace = error.__traceback__
    if trace is None:
        return False
    while trace.tb_next is not None:
        trace = trace.tb_next
    return str(trace.tb_frame.f_globals.get("__name__", "")).startswith("albumentations")


def _check_points(points: Any, key: str) -> None:
    """Refuse keypoints that are not ``(K, 2+)`` rows, or whose ``x`` or ``y`` is not finite.

    A flat COCO list or ``(N, K, 3)`` pose arrays are refused with how to give them
    (:func:`~rankaug.checks.point_rows`); keypoints that are no array of numbers (ragged
    rows, strings) are left to albumentations' own checks.
    """
    try:
        array = np.asarray(points)
    except (TypeError, ValueError):  # ragged rows
        return
    if array.dtype.kind in "biuf":
        checks.point_rows(array, f"the sample's {key!r}")
    if array.ndim == 2 and array.shape[1] >= 2 and array.dtype.kind == "f":
        checks.finite_points(array, key)
