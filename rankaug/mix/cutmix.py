"""``CutMixDataset``: a keyed rectangle of a keyed partner pasted into each sample.

The draws (after :mod:`rankaug.mix.base`'s block ``u = rng.random(4)``: ``u[0] < p``
mixes, ``u[1]`` draws the partner, ``u[2]`` and ``u[3]`` place the rectangle) are one
more: ``lam = rng.beta(alpha, alpha)``. The rectangle of an ``h x w`` image is
``round(w * sqrt(1 - lam))`` wide and ``round(h * sqrt(1 - lam))`` high, so its area is
the fraction ``1 - lam`` of the image up to whole pixels, and lies inside the image:
its left edge is ``floor(u[2] * (w - width + 1))``, its top ``floor(u[3] * (h - height
+ 1))``. (The CutMix paper and ultralytics centre it anywhere and clip it, which makes
it smaller near the borders.) The partner's pixels inside it replace the main image's.

* **Main boxes** are kept by the fraction of their area that stays visible, measured
  against the full box (``min_visibility``; also ``min_area``, ``min_width``,
  ``min_height`` on what is visible); a box the rectangle cuts across its full height
  (or width) shrinks to its visible part (an instance with a mask or polygon takes its
  box from them instead, below). What the rectangle reaches and shows no width, height
  or area is dropped; a box it leaves alone (it may touch its edges; a box of no area
  runs nowhere through its inside) is kept as the unmixed output keeps it.
* **Partner boxes** are clipped to the rectangle and kept by the same rule (one of no
  area, like one clipped to nothing, is dropped).
* **A sample that is not mixed** (``u[0] >= p``) goes through the same filters, as a
  cut of no rectangle: its boxes are all visible, so ``min_visibility`` keeps them, and
  ``min_area``, ``min_width`` and ``min_height`` drop the small ones (with their label
  fields, masks and polygons), as they would in a mixed output; without filters it is
  given as it is.
* **Masks** follow their pixels: instance masks lose (the main's) or keep only (the
  partner's) the rectangle (:mod:`rankaug.mix._cut_masks`): an instance whose mask keeps
  no pixel is dropped with its box and label fields, a mask the cut changes gives its
  instance the box of its pixels left, an untouched one keeps its box (a partner's
  clipped to the rectangle); the semantic mask takes the partner's values inside it;
  keypoints are kept where their own image shows (a main keypoint off the output image,
  ``0 <= x < w``, ``0 <= y < h``, is dropped with its fields in every output, mixed or
  not, as the mosaic drops those off its output).
* **Polygons** (``segments``, :mod:`rankaug.polygons`) follow their pixels as the masks
  do, and each draws only pixels of its own image: a main polygon whose pixels the
  rectangle reaches becomes the outline of the pixels it leaves, a partner's polygon
  that draws pixels outside the rectangle the outline of those inside it (polygons
  untouched are kept as they are). Where what is left is in several parts, the outline
  joins them by zero-width bridges (:func:`~rankaug.polygons.outline`), which run
  around the rectangle for a main polygon (:mod:`rankaug.mix._around`; a rectangle
  across the whole image leaves it the side with more pixels) and inside it for a
  partner's. An outline made anew has the box of its object's pixels left (not of
  the pixels its bridges draw); an untouched polygon keeps its box (a partner's clipped
  to the rectangle). An instance whose box is kept but whose polygon keeps nothing (no
  pixel) is dropped with its box and label fields, as a polygon cannot be empty. A
  sample with both masks and polygons drops an instance where either keeps nothing,
  and takes the boxes from the polygons.
* **Classes** (``num_classes=``): mixed by the exact pasted area, the main's share
  ``1 - width * height / (w * h)``.
* **Record** (under ``"cutmix"``, :class:`CutMixRecord`): the indices, main first, the
  rectangle ``(x0, y0, x1, y1)`` in output pixels and ``ratio``, the main's share.
"""

from __future__ import annotations

from typing import Any, Final, TypedDict, TypeVar, cast

import numpy as np

from rankaug import checks
from rankaug._multi.fields import join
from rankaug._multi.on_image import on_image, only_on_image
from rankaug._multi.pairs import Part
from rankaug.boxes import FEW_BOXES
from rankaug.mix._around import cut
from rankaug.mix._cut_boxes import Rect, candidate_rows, rectangle, uncovered, untouched
from rankaug.mix._cut_masks import cut_masks
from rankaug.mix.base import Combined, PairDataset, PairPlan
from rankaug.params import FILTERS
from rankaug.stream.detect import Streamable

__all__ = ["CutMixDataset", "CutMixRecord", "Rect", "rectangle", "uncovered"]

T_co = TypeVar("T_co", covariant=True)
TOLERANCE: Final = 1e-3
"""The width and height (pixels) a box must exceed to be kept at all."""


class CutMixRecord(TypedDict):
    """What a CutMix applied, stored under ``record`` in each output sample.

    ``indices`` holds the main index and, when mixed, the partner's; ``rect`` is the
    pasted rectangle ``(x0, y0, x1, y1)`` in output pixels (``(0, 0, 0, 0)`` when not
    mixed); ``ratio`` is the main image's share of the area. ``state`` is the
    Generator state before the draws, for :meth:`CutMixDataset.replay`.
    """

    applied: bool
    indices: list[int]
    rect: Rect
    ratio: float
    epoch: int
    state: str


class CutMixDataset(Streamable, PairDataset[T_co]):
    """Rank-aware CutMix over any map-style dataset: partner and rectangle from the key.

    On four GPUs that all called ``torch.manual_seed(0)`` each rank pastes different
    partners and rectangles (ultralytics' ``CutMix`` draws them from global state), and a
    rerun repeats them bit for bit. See the module docstring for the rectangle, the
    targets (boxes, ``masks``, ``segments``, keypoints) and the record. Samples, images
    and dtypes as :class:`~rankaug.mix.MixUpDataset`.

    Args:
        dataset: A map-style dataset.
        alpha: The Beta distribution's parameter for ``lam``.
        **options: The arguments every mix wrapper takes: ``seed``, ``p`` (``1.0``),
            ``targets`` (its box filters measure what of each box is visible, in
            every output, mixed or not),
            ``partners``, ``record`` (``"cutmix"``, the :class:`CutMixRecord`'s key), ...
            (see :class:`~rankaug.mix.base.PairDataset`).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value, or the dataset is empty.

    Example:
        >>> from rankaug.datasets import SyntheticDetection
        >>> cutmix = CutMixDataset(SyntheticDetection(8, image_size=32), seed=0)
        >>> sample = cutmix[3]
        >>> x0, y0, x1, y1 = sample["cutmix"]["rect"]
        >>> partner = cutmix.dataset[sample["cutmix"]["indices"][1]]["image"]
        >>> bool((sample["image"][y0:y1, x0:x1] == partner[y0:y1, x0:x1]).all())
        True
    """

    _streaming = "StreamingCutMix"  # the class a stream gets (rankaug.stream.detect)
    settings_fields = ("alpha",)
    fixed_settings = PairDataset.fixed_settings | {"alpha", *FILTERS}

    kind = "cutmix"
    uniforms = 2
    target_fields = ("box_format", "label_fields", "keypoint_fields", "clip", *FILTERS)

    def __init__(self, dataset: Any, *, alpha: float = 1.0, **options: Any) -> None:
        self.alpha = checks.real(alpha, "alpha", low=0.0, low_open=True)
        super().__init__(dataset, **{"record": self.kind, **options})
        targets = self.config.targets
        self.min_area, self.min_visibility = targets.min_area, targets.min_visibility
        self.min_width, self.min_height = targets.min_width, targets.min_height
        self._filtered = targets.filters

    def draw(self, rng: np.random.Generator) -> tuple[float, ...]:
        """``(lam,)``, ``lam ~ Beta(alpha, alpha)``: the rectangle's area is ``1 - lam``."""
        return (float(rng.beta(self.alpha, self.alpha)),)

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        """Paste the partner's rectangle; keep, shrink and clip the boxes (module docstring)."""
        hw = main.hw
        rect = rectangle(hw, plan.draws[0], *plan.uniforms)
        x0, y0, x1, y1 = rect
        share = 1.0 - (x1 - x0) * (y1 - y0) / (hw[0] * hw[1])
        return Combined(self._cut(main, partner, rect), share, {"rect": rect, "ratio": share})

    def alone(self, main: Part) -> Part:
        """A sample that is not mixed, through the box filters (a cut of no rectangle).

        The main sample itself without filters, or when every box passes them, less
        its keypoints off the image (the main sample itself when there are none).
        """
        nothing = (0, 0, 0, 0)
        if not self._filtered or self._boxes(main.boxes, main.boxes[:0], nothing)[1].all():
            return only_on_image(main)
        return self._cut(main, main, nothing)  # the partner's boxes, clipped to it, all go

    def _cut(self, main: Part, partner: Part, rect: Rect) -> Part:
        """The output of ``partner``'s rectangle pasted into ``main``: image and targets."""
        hw, both = main.hw, (main, partner)
        x0, y0, x1, y1 = rect
        inside = (slice(y0, y1), slice(x0, x1))
        candidates, kept = self._boxes(main.boxes, partner.boxes, rect)
        count = len(main.boxes)
        keep, other = kept[:count], kept[count:]  # views: the cuts clear them in kept too
        polygons = main.segments is not None and partner.segments is not None
        masks = main.masks
        if masks is not None and partner.masks is not None:  # before the polygons: both drop
            rows, cols = keep.copy(), other.copy()
            ours, pasted = cut_masks(
                masks, partner.masks, rect, keep, other,
                None if polygons else candidates, main.boxes,
            )  # fmt: skip
        segments = None
        if main.segments is not None and partner.segments is not None:
            segments = cut(
                main.segments, partner.segments, rect, hw, keep, other, candidates, main.boxes
            )
        if masks is not None and partner.masks is not None:
            masks = np.concatenate((_still(ours, keep, rows), _still(pasted, other, cols)))
        mask = main.mask
        if mask is not None and partner.mask is not None:
            mask = mask.copy()
            mask[inside] = partner.mask[inside]
        points, point_fields = main.keypoints, main.keypoint_fields
        if points is not None and partner.keypoints is not None:
            mine = ~_within(points, rect) & on_image(points, hw)
            theirs = _within(partner.keypoints, rect)
            points = np.concatenate((points[mine], partner.keypoints[theirs]))
            point_fields = {
                k: join(k, (v[mine], partner.keypoint_fields[k][theirs]), both)
                for k, v in point_fields.items()
            }
        # the pixels last: the targets' Python runs before they take the caches
        image = _assemble(main.image, partner.image, rect)
        return Part(
            main.index,
            image,
            candidates[kept],
            {k: join(k, (v[keep], partner.fields[k][other]), both) for k, v in main.fields.items()},
            mask,
            masks,
            points,
            point_fields,
            main.label,
            segments,
        )

    def _boxes(
        self, main: np.ndarray, partner: np.ndarray, rect: Rect
    ) -> tuple[np.ndarray, np.ndarray]:
        """The candidate boxes (the main's tight, the partner's clipped) and which to keep.

        A few boxes go row by row (:func:`~rankaug.mix._cut_boxes.candidate_rows`), the
        same floats as the vectorised path's.
        """
        if len(main) + len(partner) <= FEW_BOXES:
            return self._row_by_row(main, partner, rect)
        return self._vectorised(main, partner, rect)

    def _row_by_row(
        self, main: np.ndarray, partner: np.ndarray, rect: Rect
    ) -> tuple[np.ndarray, np.ndarray]:
        rows, shown, full, apart = candidate_rows(main, partner, rect)
        keep, together = self._keep, zip(rows, shown, full, apart, strict=True)
        kept = [keep(c - a, d - b, v, f, n) for (a, b, c, d), v, f, n in together]
        return np.array(rows, np.float64).reshape(-1, 4), np.array(kept, dtype=bool)

    def _vectorised(
        self, main: np.ndarray, partner: np.ndarray, rect: Rect
    ) -> tuple[np.ndarray, np.ndarray]:
        x0, y0, x1, y1 = rect
        visible, tight = uncovered(main, rect)
        clipped = np.minimum(np.maximum(partner, (x0, y0, x0, y0)), (x1, y1, x1, y1))
        candidates = np.concatenate((tight, clipped))
        full = np.concatenate((main, partner))
        full_area = (full[:, 2] - full[:, 0]) * (full[:, 3] - full[:, 1])
        shown = np.concatenate(
            (visible, (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1]))
        )
        widths, heights = candidates[:, 2] - candidates[:, 0], candidates[:, 3] - candidates[:, 1]
        apart = np.concatenate((untouched(main, rect), np.zeros(len(partner), dtype=bool)))
        return candidates, self._keep(widths, heights, shown, full_area, apart)

    def unmixed(self, main: Part) -> dict[str, Any]:
        """An empty ``rect`` and ``ratio`` 1.0."""
        return {"rect": (0, 0, 0, 0), "ratio": 1.0}

    def _keep(self, widths: Any, heights: Any, visible: Any, full: Any, apart: Any) -> Any:
        """Which boxes to keep: wider and higher than TOLERANCE, or ``apart``; then the filters.

        Arrays give a mask, one box's floats give a bool (the same rule, row by row).
        """
        keep = apart | (
            (widths > TOLERANCE) & (heights > TOLERANCE) & (visible > 0.0) & (full > 0.0)
        )
        if self.min_visibility > 0.0:
            keep &= visible >= self.min_visibility * full
        if self.min_area > 0.0:
            keep &= visible >= self.min_area
        if self.min_width > 0.0:
            keep &= widths >= self.min_width
        if self.min_height > 0.0:
            keep &= heights >= self.min_height
        return keep


def _assemble(main: np.ndarray, partner: np.ndarray, rect: Rect) -> np.ndarray:
    """The main image with the partner's rectangle, each pixel written once."""
    x0, y0, x1, y1 = rect
    out = np.empty_like(main)
    out[:y0] = main[:y0]
    out[y1:] = main[y1:]
    out[y0:y1, :x0] = main[y0:y1, :x0]
    out[y0:y1, x1:] = main[y0:y1, x1:]
    out[y0:y1, x0:x1] = partner[y0:y1, x0:x1]
    return out


def _still(masks: np.ndarray, kept: np.ndarray, given: np.ndarray) -> np.ndarray:
    """The masks of the instances still kept, of those ``given`` (kept on entry)."""
    still = kept[given]
    return masks if still.all() else masks[still]


def _within(points: np.ndarray, rect: Rect) -> np.ndarray:
    x0, y0, x1, y1 = rect
    x, y = points[:, 0], points[:, 1]
    return cast(np.ndarray, (x >= x0) & (x < x1) & (y >= y0) & (y < y1))
