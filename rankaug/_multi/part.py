"""One sample of a multi-sample output as numpy arrays: :class:`Part`, and what it shares.

:class:`~rankaug._multi.parts.PartReader` reads and checks each sample into a part; the
wrappers map a part's targets onto their output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from rankaug.polygons import Polygons

__all__ = ["NO_BOXES", "Part"]

NO_BOXES: Final = np.zeros((0, 4))
"""A part's boxes where its sample has none (not even empty ones): known by identity."""


@dataclass(slots=True)
class Part:
    """One sample of a multi-sample output (or the output itself), as numpy arrays.

    Arrays read from a sample are the sample's own and are never written: a wrapper
    builds new arrays for its output.

    Attributes:
        index: Its dataset index.
        image: ``HxW`` or ``HxWxC``.
        boxes: ``(N, 4)`` float64, in the reader's box format as read (the wrapper
            converts them to pixels); float32 as read where the reader keeps them so.
        fields: Each label field, ``N`` entries.
        mask: The semantic mask, or ``None``.
        masks: The ``(N, H, W)`` instance masks, or ``None``.
        keypoints: ``(K, 2+)`` float64 keypoints, or ``None``.
        keypoint_fields: Each keypoint field, ``K`` entries.
        label: The classification class as the sample holds it, or ``None``.
        segments: The instance polygons (one per box), or ``None``.
        clipped: Whether reading clipped its boxes to the image (they reached outside).
    """

    index: int
    image: np.ndarray
    boxes: np.ndarray
    fields: dict[str, np.ndarray]
    mask: np.ndarray | None
    masks: np.ndarray | None
    keypoints: np.ndarray | None
    keypoint_fields: dict[str, np.ndarray]
    label: Any = None
    segments: Polygons | None = None
    clipped: bool = False

    @property
    def hw(self) -> tuple[int, int]:
        """The image's ``(height, width)``."""
        return self.image.shape[0], self.image.shape[1]

    @property
    def boxed(self) -> bool:
        """Whether the sample has boxes (maybe none: a background image's empty boxes)."""
        return self.boxes is not NO_BOXES

    def signature(self) -> tuple[object, ...]:
        """What the samples of one output must share: channels, dtypes, kinds of target.

        Having boxes comes last: a main sample without them may go with partners whose
        boxes are empty (:meth:`rankaug._multi.parts.PartReader.check`).
        """
        image, mask, masks = self.image, self.mask, self.masks
        return (
            image.shape[2:],  # its length tells HxW from HxWxC
            image.dtype,
            None if mask is None else (mask.shape[2:], mask.dtype),
            None if masks is None else masks.dtype,
            None if self.keypoints is None else self.keypoints.shape[1],  # x, y and more
            self.segments is None,
            self.boxes is NO_BOXES,
        )
