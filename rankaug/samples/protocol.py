"""What a sample adapter is: the protocol, and the keys transforms work on."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Protocol, TypedDict

import numpy as np

__all__ = ["DEFAULT_TARGETS", "SampleAdapter", "SampleDict"]

#: Keys every transform may read and write, besides label fields.
DEFAULT_TARGETS: frozenset[str] = frozenset({"image", "mask", "masks", "bboxes", "keypoints"})


class SampleDict(TypedDict, total=False):
    """A dict sample in albumentations' convention (other keys are allowed and kept)."""

    image: np.ndarray
    mask: np.ndarray
    masks: np.ndarray
    bboxes: np.ndarray
    labels: np.ndarray
    keypoints: np.ndarray


class SampleAdapter(Protocol):
    """Turns a sample into albumentations-style data and back.

    ``unpack`` returns the data a transform works on (exactly the keys in ``targets``
    that the sample has, the image as a numpy array: so its keys say whether a sample
    had boxes, masks or keypoints) and a state; ``repack`` builds a sample of the
    original shape from the transform's output and that state. The optional hooks
    ``view``, ``passthrough``, ``attach``, ``class_target`` and ``with_class_target`` are
    described by the functions of the same names in :mod:`rankaug.samples`;
    :class:`DefaultAdapter` has them all. One more, ``for_dataset(dataset)``, gives the
    adapter a wrapper uses over ``dataset`` (see :func:`rankaug.samples.check_adapter`).
    """

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        """Split ``sample`` into transform data and the state ``repack`` needs."""
        ...

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        """Build a sample of the original shape from transformed ``data``."""
        ...
