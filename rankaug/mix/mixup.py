"""``MixUpDataset``: each sample blended with a keyed partner, ``r * main + (1 - r) * partner``.

The draws (after :mod:`rankaug.mix.base`'s block ``u = rng.random(2)``: ``u[0] < p``
mixes, ``u[1]`` draws the partner) are one more: ``r = rng.beta(alpha, alpha)``, the
main image's weight (ultralytics and YOLOX use ``alpha = 32``, so ``r`` stays near 0.5).

* **Pixels**: ``r * main + (1 - r) * partner`` computed in floating point and rounded to
  the nearest value of the image's dtype (``cv2.addWeighted``; ultralytics truncates).
* **Targets**: the union of both samples' boxes with their label fields, instance
  masks, polygons (``segments``) and keypoints, the main sample's first; the semantic
  ``mask`` of the heavier image (the main one when ``r >= 0.5``): class ids cannot be blended.
  Keypoints off the output image (``0 <= x < w``, ``0 <= y < h``; a letterboxed
  partner's off its own image) are dropped with their keypoint fields in every output,
  mixed or not, as the mosaic drops those off its output (:mod:`rankaug._multi.on_image`).
* **Classes** (``num_classes=``): ``r * one_hot(main) + (1 - r) * one_hot(partner)``.
* **Record** (under ``"mixup"``, :class:`MixUpRecord`): the indices, main first, and
  ``ratio`` (``r``; 1.0 for a sample that is not mixed).
"""

from __future__ import annotations

from typing import Any, TypedDict, TypeVar

import cv2
import numpy as np

from rankaug import checks
from rankaug._multi.fields import join
from rankaug._multi.on_image import only_on_image
from rankaug._multi.pairs import Part
from rankaug.mix.base import Combined, PairDataset, PairPlan
from rankaug.polygons import gather
from rankaug.stream.detect import Streamable

__all__ = ["MixUpDataset", "MixUpRecord", "blend", "union"]

T_co = TypeVar("T_co", covariant=True)


class MixUpRecord(TypedDict):
    """What a MixUp applied, stored under ``record`` in each output sample.

    ``indices`` holds the main index and, when mixed, the partner's; ``ratio`` is the
    main image's weight ``r``. ``state`` is the Generator state before the draws, for
    :meth:`MixUpDataset.replay`.
    """

    applied: bool
    indices: list[int]
    ratio: float
    epoch: int
    state: str


def blend(main: np.ndarray, partner: np.ndarray, ratio: float) -> np.ndarray:
    """``ratio * main + (1 - ratio) * partner``, rounded to the nearest value of the dtype.

    uint8 and floating-point images go through ``cv2.addWeighted`` (float32 arithmetic
    for uint8, exact to a few millionths of a level; the image's own precision for
    floats); 16-bit images are blended in float64, where float32 would be off by up to
    a hundredth of a level.

    >>> blend(np.full((1, 2), 10, np.uint8), np.full((1, 2), 20, np.uint8), 0.25).tolist()
    [[18, 18]]
    """
    if main.dtype.itemsize == 2:
        mixed = np.rint(main * ratio + partner * (1.0 - ratio))
        info = np.iinfo(main.dtype)
        return np.clip(mixed, info.min, info.max, out=mixed).astype(main.dtype)
    out = cv2.addWeighted(main, ratio, partner, 1.0 - ratio, 0.0)
    return out if out.shape == main.shape else out.reshape(main.shape)


def union(main: Part, partner: Part, image: np.ndarray, mask: np.ndarray | None) -> Part:
    """Both parts' boxes, label fields, instance masks, polygons and keypoints, main first.

    Args:
        main: The main sample.
        partner: The partner (of the main sample's size).
        image: The output image.
        mask: The output's semantic mask, or ``None``.

    Returns:
        The output part.
    """
    main, partner = only_on_image(main), only_on_image(partner)
    both = (main, partner)  # the fields in the main sample's dtypes (join)
    keypoints, point_fields = main.keypoints, main.keypoint_fields
    if keypoints is not None and partner.keypoints is not None:
        keypoints = np.concatenate((keypoints, partner.keypoints))
        point_fields = {
            k: join(k, (v, partner.keypoint_fields[k]), both) for k, v in point_fields.items()
        }
    masks = main.masks
    if masks is not None and partner.masks is not None:
        masks = np.concatenate((masks, partner.masks))
    segments = main.segments
    if segments is not None and partner.segments is not None:
        segments = gather([*segments.points, *partner.segments.points], segments, partner.segments)
    return Part(
        main.index,
        image,
        np.concatenate((main.boxes, partner.boxes)),
        {k: join(k, (v, partner.fields[k]), both) for k, v in main.fields.items()},
        mask,
        masks,
        keypoints,
        point_fields,
        main.label,
        segments,
    )


class MixUpDataset(Streamable, PairDataset[T_co]):
    """Rank-aware MixUp over any map-style dataset: partner and ratio from the key.

    On four GPUs that all called ``torch.manual_seed(0)`` each rank mixes different
    partners with different ratios (ultralytics' ``MixUp`` draws both from global
    state, so every rank draws alike), and a rerun repeats them bit for bit. Over a
    :class:`~rankaug.MosaicDataset` it mixes two keyed mosaics, as YOLOX does. See the
    module docstring for the pixels, targets and record.

    Samples are dicts with albumentations' keys or ``(image, target)`` pairs
    (torchvision style, or ``(image, class)`` for classification), with numpy, PIL or
    tensor images; the output has the main sample's shape, image type and dtypes.
    Images are ``HxW`` or ``HxWxC`` of dtype uint8, uint16, int16, float32 or float64,
    the same for both samples.

    Args:
        dataset: A map-style dataset.
        alpha: The Beta distribution's parameter for ``r``.
        **options: The arguments every mix wrapper takes: ``seed``, ``p`` (``1.0``),
            ``targets``, ``partners``, ``record`` (``"mixup"``, the
            :class:`MixUpRecord`'s key), ... (see :class:`~rankaug.mix.base.PairDataset`).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value, or the dataset is empty.

    Example:
        >>> from rankaug.datasets import SyntheticDetection
        >>> mixup = MixUpDataset(SyntheticDetection(8, image_size=32), seed=0)
        >>> sample = mixup[3]
        >>> sample["mixup"]["indices"][0], 0.3 < sample["mixup"]["ratio"] < 0.7
        (3, True)
        >>> again = mixup.replay(sample["mixup"])
        >>> bool((again["image"] == sample["image"]).all())
        True
    """

    _streaming = "StreamingMixUp"  # the class a stream gets (rankaug.stream.detect)
    settings_fields = ("alpha",)
    fixed_settings = PairDataset.fixed_settings | {"alpha"}

    kind = "mixup"

    def __init__(self, dataset: Any, *, alpha: float = 32.0, **options: Any) -> None:
        self.alpha = checks.real(alpha, "alpha", low=0.0, low_open=True)
        super().__init__(dataset, **{"record": self.kind, **options})

    def draw(self, rng: np.random.Generator) -> tuple[float, ...]:
        """``(r,)``, ``r ~ Beta(alpha, alpha)``: the main image's weight."""
        return (float(rng.beta(self.alpha, self.alpha)),)

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        """Blend the images; the union of the targets (see the module docstring)."""
        ratio = plan.draws[0]
        mask = main.mask if ratio >= 0.5 else partner.mask
        out = union(
            main, partner, blend(main.image, partner.image, ratio),
            None if mask is None else mask.copy(),
        )  # fmt: skip
        return Combined(out, ratio, {"ratio": ratio})

    def alone(self, main: Part) -> Part:
        """A sample that is not mixed: its keypoints off the image dropped, as when mixed."""
        return only_on_image(main)

    def unmixed(self, main: Part) -> dict[str, Any]:
        """``ratio`` 1.0: all of the image is the main sample's."""
        return {"ratio": 1.0}
