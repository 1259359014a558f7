"""The two samples of a mix, read and checked as numpy arrays, and the result given back.

:class:`PartReader` hands the samples to the adapter (the main one to be rebuilt, the
partner only read, see :mod:`rankaug.samples`), turns each into a :class:`Part` —
pixel ``xyxy`` boxes, label fields, masks, polygons, keypoints and the classification class —
and checks it, naming the sample and the field of anything wrong: an image no resize
handles, boxes that are not ``(N, 4)`` or lie outside the image, a per-box field of the
wrong length (or one outside ``label_fields``, which would go stale), masks and
keypoints of the wrong shape, and a partner that disagrees with the main sample on
channels, dtypes, targets or size. A partner of another size is refused, or with
``partner_fit="letterbox"`` scaled to fit the main image and centred on it.
:meth:`PartReader.emit` turns the resulting part back into the main sample's data.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankaug._multi.handed import handed_out
from rankaug._multi.letterbox import letterbox
from rankaug._multi.parts import Part, PartReader
from rankaug.boxes import all_inside, from_xyxy, to_xyxy, validate_xyxy
from rankaug.boxes.whole import check_whole, int_box_dtype, whole_boxes
from rankaug.polygons import POLYGONS, pack
from rankaug.samples import SampleAdapter

if TYPE_CHECKING:
    from rankaug.mix.config import PairConfig

__all__ = ["PairReader", "Part", "mirrored_boxes"]


def mirrored_boxes(boxes: np.ndarray, width: int) -> np.ndarray:
    """Pixel ``xyxy`` boxes mirrored left to right in an image ``width`` pixels wide."""
    swapped = boxes[:, [2, 1, 0, 3]]
    mirrored: np.ndarray = swapped * [-1.0, 1.0, -1.0, 1.0] + [width, 0.0, width, 0.0]
    return mirrored


class PairReader(PartReader):
    """Reads, checks and fits the two samples of a mix (see the module docstring).

    Args:
        config: The wrapper's shared configuration.
        adapter: The adapter the samples are unpacked with.
        what: The wrapper's name for messages, e.g. ``"MixUp"``.
        polygons: Whether the wrapper maps instance polygons (``segments``).
    """

    def __init__(
        self, config: PairConfig, adapter: SampleAdapter, what: str, *, polygons: bool = False
    ) -> None:
        skip = {config.class_field} | ({config.record} if config.record else set())
        super().__init__(
            adapter,
            targets=config.target_keys,
            label_fields=config.targets.label_fields,
            keypoint_fields=config.targets.keypoint_fields,
            skip=skip,
            group=f"the samples of a {what}",
            actor=what,
            polygons=polygons,
        )
        self.config = config
        self.what = what
        self._fits: set[tuple[object, ...]] = set()  # letterboxed kinds whose fill fits

    def parts(
        self, indices: Sequence[int], views: Sequence[Mapping[str, Any]], samples: Sequence[Any]
    ) -> list[Part]:
        """Read every sample (:meth:`read`), check the partner against the main one, fit it.

        Raises:
            ValueError: If the samples disagree, or differ in size with
                ``partner_fit="error"``.
        """
        parts = [self.read(*item) for item in zip(indices, views, samples, strict=True)]
        self.check(parts)
        main = parts[0]
        if self.config.partner_fit == "letterbox":  # at the first sample, not the first fit
            self._check_fill(main)
        for position in range(1, len(parts)):
            if parts[position].hw != main.hw:
                parts[position] = self._fit(parts[position], main)
        return parts

    def read(self, index: int, data: Mapping[str, Any], sample: Any) -> Part:
        """:meth:`PartReader.read`, boxes as pixel ``xyxy``, and the sample's class.

        The adapter's ``class_target`` hook gives the class of ``sample``.
        """
        part = super().read(index, data, sample)
        boxes = part.boxes
        if len(boxes):
            if self.config.box_format != "pascal_voc":
                boxes = to_xyxy(boxes, self.config.box_format, part.hw)
            image = part.image  # float64 (N, 4) either way: the usual case checked at once
            if all_inside(boxes, image.shape[1], image.shape[0]):  # (validate_xyxy's rule)
                part.boxes = boxes
                part.label = self._class(sample, data)
                return part
            part.boxes = validate_xyxy(
                boxes,
                part.hw,
                name=f"dataset[{index}] bboxes (as pixel x_min, y_min, x_max, y_max)",
                clip=self.config.targets.clip,
            )
            part.clipped = part.boxes is not boxes and not np.array_equal(part.boxes, boxes)
        part.label = self._class(sample, data)
        return part

    def _class(self, sample: Any, data: Mapping[str, Any]) -> Any:
        """The sample's class, ``None`` for per-box classes the adapter hands out."""
        label = self.class_target(sample, self.config.class_field)
        if label is not None and handed_out(label, data, self.targets, self.config.class_field):
            return None  # per-box classes (label_fields, a KeyMap's labels=): no class
        return label

    def clip(self, part: Part, data: dict[str, Any]) -> dict[str, Any]:
        """A sample given as it was (not mixed), with its boxes clipped as :meth:`read` did.

        Every output's boxes lie in the image, mixed or not.

        Args:
            part: The sample, read.
            data: Its data from the adapter.

        Returns:
            ``data`` itself when :meth:`read` clipped nothing, else a copy with the
            clipped boxes (in ``box_format``).

        Raises:
            ValueError: If its integer boxes cannot be whole (:mod:`~rankaug.boxes.whole`).
        """
        box_dtype = int_box_dtype(data.get("bboxes"))  # refused on every draw, or none
        check_whole(box_dtype, part.hw, self.config.box_format, part.index)
        if not part.clipped:
            return data
        boxes = part.boxes  # clipped to the image's edges: whole when they were
        if self.config.box_format != "pascal_voc":
            boxes = from_xyxy(boxes, self.config.box_format, part.hw)
        return {**data, "bboxes": boxes}

    def emit(self, part: Part, present: Collection[str], raw_boxes: Any = None) -> dict[str, Any]:
        """The output's data for the adapter: the targets the main sample has.

        Args:
            part: The output.
            present: The main sample's data keys: ``bboxes`` brings every label field
                along; without it only the label fields it has are given.
            raw_boxes: The main sample's boxes as it gives them: integers come back whole
                (:mod:`~rankaug.boxes.whole`), on every draw.

        Returns:
            The data, boxes back in ``box_format``.

        Raises:
            ValueError: If its integer boxes cannot be whole.
        """
        config = self.config
        data: dict[str, Any] = {"image": part.image}
        with_boxes = "bboxes" in present
        if with_boxes:
            box_dtype = int_box_dtype(raw_boxes)
            boxes = whole_boxes(part.boxes, box_dtype, part.hw, config.box_format, part.index)
            if config.box_format != "pascal_voc":
                boxes = from_xyxy(boxes, config.box_format, part.hw)
            data["bboxes"] = boxes
        for field in config.targets.label_fields:
            if with_boxes or field in present:
                data[field] = part.fields[field]
        if part.mask is not None:
            data["mask"] = part.mask
        if part.masks is not None:
            data["masks"] = part.masks
        if part.keypoints is not None:
            data["keypoints"] = part.keypoints
            data.update(part.keypoint_fields)
        if part.segments is not None:
            data[POLYGONS] = pack(part.segments)
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
        self._check_fill(partner)
        return letterbox(partner, main.hw, self.config)

    def _check_fill(self, part: Part) -> None:
        """Check the fill against ``part``'s image and mask, once per kind of sample."""
        kind = (part.image.dtype, part.image.shape[2:], getattr(part.mask, "dtype", None))
        if kind not in self._fits:
            self.config.check_fill(part.image, part.mask, f"dataset[{part.index}]")
            self._fits.add(kind)
