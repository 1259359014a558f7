"""The settings every two-sample wrapper shares, checked once.

:class:`PairConfig` holds what MixUp, CutMix and CopyPaste all need besides their own
parameters: the sample layout (box format, label and keypoint fields, the
classification class), the probability, the record's key and how a partner of another
size is handled. What can only be checked against data (a fill value against the
image's dtype) is checked by :meth:`PairConfig.check_fill` on the first partner of each
kind that has to be letterboxed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from rankaug import checks
from rankaug.boxes import BoxFormat, check_box_format
from rankaug.polygons import POLYGONS
from rankaug.samples import DEFAULT_TARGETS

__all__ = ["PairConfig", "PartnerFit"]

PartnerFit = Literal["error", "letterbox"]
_FITS: Final[tuple[PartnerFit, ...]] = ("error", "letterbox")


@dataclass(frozen=True, slots=True)
class PairConfig:
    """The checked settings of a two-sample wrapper (see :meth:`build`).

    Attributes:
        box_format: The samples' box format (also the output's).
        label_fields: Per-box fields kept aligned with the boxes.
        keypoint_fields: Per-keypoint fields kept aligned with the keypoints.
        num_classes: The number of classes of classification samples, or ``None`` for
            detection and segmentation samples.
        class_field: The class's key in dict samples and dict targets.
        p: The probability that a sample is mixed, or a function of the epoch.
        constant_p: Whether ``p`` is a number.
        partner_fit: ``"error"`` or ``"letterbox"`` for a partner of another size.
        fill: The letterbox's fill, one value or one per channel.
        fill_mask: The letterboxed semantic mask's fill.
        record: The record's key, or ``None``.
        targets: The keys the adapter hands out.
    """

    box_format: BoxFormat
    label_fields: tuple[str, ...]
    keypoint_fields: tuple[str, ...]
    num_classes: int | None
    class_field: str
    p: float | Callable[[int], float]
    constant_p: bool
    partner_fit: PartnerFit
    fill: tuple[float, ...]
    fill_mask: int
    record: str | None
    targets: frozenset[str]

    @classmethod
    def build(
        cls,
        *,
        box_format: object,
        label_fields: object,
        keypoint_fields: object,
        num_classes: object,
        class_field: object,
        p: object,
        partner_fit: object,
        fill: object,
        fill_mask: object,
        record: object,
    ) -> PairConfig:
        """Check the arguments shared by the wrappers (they mean the same there).

        Raises:
            TypeError: If an argument has the wrong type.
            ValueError: If an argument has a wrong value.

        >>> config = PairConfig.build(
        ...     box_format="pascal_voc", label_fields=("labels",), keypoint_fields=(),
        ...     num_classes=None, class_field="label", p=0.5, partner_fit="error", fill=114,
        ...     fill_mask=0, record="mixup")
        >>> config.p, config.record
        (0.5, 'mixup')
        >>> PairConfig.build(
        ...     box_format="pascal_voc", label_fields=("labels",), keypoint_fields=(),
        ...     num_classes=None, class_field="labels", p=0.5, partner_fit="error", fill=114,
        ...     fill_mask=0, record="mixup")
        Traceback (most recent call last):
        ...
        ValueError: class_field must be None or a key name other than 'bboxes', ...
        """
        boxes = {"boxes"}
        known = DEFAULT_TARGETS | {POLYGONS}
        labels = checks.names(label_fields, "label_fields", forbidden=known | boxes)
        points = checks.names(
            keypoint_fields, "keypoint_fields", forbidden=known | boxes | {*labels}
        )
        targets = known | {*labels, *points}
        field = checks.key_name(class_field, "class_field", forbidden=targets | boxes)
        if field is None:
            raise TypeError("class_field must be a key name (str), got None")
        probability = checks.schedule(p, "p")
        return cls(
            box_format=check_box_format(box_format),
            label_fields=labels,
            keypoint_fields=points,
            num_classes=None
            if num_classes is None
            else checks.integer(num_classes, "num_classes", low=1),
            class_field=field,
            p=probability,
            constant_p=not callable(probability),
            partner_fit=checks.choice(partner_fit, "partner_fit", _FITS),
            fill=checks.fill_values(fill, "fill"),
            fill_mask=checks.integer(fill_mask, "fill_mask"),
            record=checks.key_name(record, "record", forbidden=targets | boxes | {field}),
            targets=targets,
        )

    def probability(self, epoch: int) -> float:
        """The probability that a sample of ``epoch`` is mixed: ``p`` or ``p(epoch)``.

        Raises:
            TypeError: If a callable ``p`` returns something other than a number.
            ValueError: If it returns a number outside ``[0, 1]``.

        >>> PairConfig.build(
        ...     box_format="pascal_voc", label_fields=(), keypoint_fields=(), num_classes=None,
        ...     class_field="label", p=lambda epoch: 0.1 * epoch, partner_fit="error",
        ...     fill=114, fill_mask=0, record=None).probability(3)
        0.30000000000000004
        """
        return checks.scheduled(self.p, "p", epoch)

    def check_fill(self, image: np.ndarray, mask: np.ndarray | None, where: str) -> None:
        """Check ``fill`` against an image to letterbox, ``fill_mask`` against its mask.

        Args:
            image: The partner's image.
            mask: Its semantic mask, or ``None``.
            where: The partner's name, e.g. ``"dataset[3]"``.

        Raises:
            ValueError: If ``fill`` has neither one value nor one per channel, or a value
                does not fit the dtype.
        """
        checks.fills_fit(self.fill, self.fill_mask, image, mask, where)
