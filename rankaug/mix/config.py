"""The settings every two-sample wrapper shares, checked once.

:class:`PairConfig` holds what MixUp, CutMix and CopyPaste all need besides their own
parameters: the sample layout (box format, label and keypoint fields, the
classification class), the probability, the record's key and how a partner of another
size is handled. What can only be checked against data (a fill value against the
image's dtype, the default fill refused for float images) is checked by
:meth:`PairConfig.check_fill` on the first sample of each kind with
``partner_fit="letterbox"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, cast

import numpy as np

from rankaug import checks
from rankaug.boxes import BoxFormat
from rankaug.params import Targets

__all__ = ["PairConfig", "PartnerFit"]

PartnerFit = Literal["error", "letterbox"]
"""What a mix does with a partner of another size than the main sample: ``"error"``
refuses it; ``"letterbox"`` scales it to fit and centres it (padded with ``fill``)."""

_FITS: Final[tuple[PartnerFit, ...]] = ("error", "letterbox")


@dataclass(frozen=True, slots=True)
class PairConfig:
    """The checked settings of a two-sample wrapper (see :meth:`build`).

    Attributes:
        targets: The box handling, its format resolved (:class:`~rankaug.params.Targets`).
        num_classes: The number of classes of classification samples, or ``None`` for
            detection and segmentation samples.
        class_field: The class's key in dict samples and dict targets.
        p: The probability that a sample is mixed, or a function of the epoch.
        constant_p: Whether ``p`` is a number.
        partner_fit: ``"error"`` or ``"letterbox"`` for a partner of another size.
        fill: The letterbox's fill, one value or one per channel.
        fill_default: Whether ``fill`` was left at its default (114, integer images only:
            :func:`rankaug.checks.fill_setting`).
        fill_mask: The letterboxed semantic mask's fill.
        record: The record's key, or ``None``.
        target_keys: The keys the adapter hands out.
        box_format: ``targets.box_format``, resolved.
    """

    targets: Targets
    num_classes: int | None
    class_field: str
    p: float | Callable[[int], float]
    constant_p: bool
    partner_fit: PartnerFit
    fill: tuple[float, ...]
    fill_default: bool
    fill_mask: int
    record: str | None
    target_keys: frozenset[str]
    box_format: BoxFormat

    @classmethod
    def build(
        cls,
        *,
        targets: object = None,
        num_classes: object = None,
        class_field: object = "label",
        p: object = 1.0,
        partner_fit: object = "error",
        fill: object = None,
        fill_mask: object = 0,
        record: object = "mix",
        mixes_classes: bool = True,
    ) -> PairConfig:
        """Check the arguments shared by the wrappers (they mean the same there).

        ``mixes_classes=False`` (CopyPaste, which writes no class) lets ``class_field``
        name a target (per-box classes ``"label"`` in ``label_fields``): the reader then
        takes it for no class.

        Raises:
            TypeError: If an argument has the wrong type.
            ValueError: If an argument has a wrong value.

        >>> config = PairConfig.build(p=0.5, record="mixup")
        >>> config.p, config.record, config.targets.box_format
        (0.5, 'mixup', 'pascal_voc')
        >>> PairConfig.build(class_field="labels")
        Traceback (most recent call last):
        ...
        ValueError: class_field must be a key name other than 'bboxes', ...
        """
        given = checks.instance(targets, "targets", Targets, what="a rankaug.Targets")
        boxes = (Targets() if given is None else given).resolve(None)
        keys = boxes.keys
        field = checks.key_name(
            class_field,
            "class_field",
            forbidden=keys | {"boxes"} if mixes_classes else frozenset(),
            optional=False,
        )
        assert field is not None  # (optional=False)
        probability = checks.schedule(p, "p")
        fill_values, fill_default = checks.fill_setting(fill, "fill")
        return cls(
            targets=boxes,
            num_classes=None
            if num_classes is None
            else checks.integer(num_classes, "num_classes", low=1),
            class_field=field,
            p=probability,
            constant_p=not callable(probability),
            partner_fit=checks.choice(partner_fit, "partner_fit", _FITS),
            fill=fill_values,
            fill_default=fill_default,
            fill_mask=checks.integer(fill_mask, "fill_mask"),
            record=checks.key_name(record, "record", forbidden=keys | {"boxes", field}),
            target_keys=keys,
            box_format=cast(BoxFormat, boxes.box_format),
        )

    def probability(self, epoch: int) -> float:
        """The probability that a sample of ``epoch`` is mixed: ``p`` or ``p(epoch)``.

        Raises:
            TypeError: If a callable ``p`` returns something other than a number.
            ValueError: If it returns a number outside ``[0, 1]``.

        >>> PairConfig.build(p=lambda epoch: 0.1 * epoch).probability(3)
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
            ValueError: If ``fill`` has neither one value nor one per channel, a value
                does not fit the dtype, or it is the default and the image is float.
        """
        checks.fills_fit(self.fill, self.fill_mask, image, mask, where, default=self.fill_default)
