"""``CopyPasteDataset``: instances of a keyed partner pasted onto each sample, by their pixels.

For samples with instance masks (``masks``, one per box) or instance polygons
(``segments``, one per box, :mod:`rankaug.polygons`): an instance's pixels are its mask's,
or those its polygon draws. The draws: after
:mod:`rankaug.mix.base`'s block ``u = rng.random(2)`` (``u[0] < p`` pastes, ``u[1]``
draws the partner), a sample that is pasted draws ``rng.random(M)`` for the ``M``
instances of its source, and instance ``k`` is pasted when its uniform is below
``fraction``, it has pixels and, with ``max_overlap``, its box covers less than
that fraction of every box of the main sample (ultralytics pastes only those below 0.3).

* **Source**: ``"partner"`` takes the instances of the keyed partner, ``"flip"`` those of
  the sample itself mirrored left to right (ultralytics' ``"flip"`` mode): a polygon's
  pixels mirrored, as its mask's (its copy the mirrored polygon where that draws them,
  else their outline; :class:`~rankaug.mix._outlines.PolygonInstances`).
* **Pixels**: each pasted instance's mask pixels take the source's pixels, in the
  source's order (later instances on top).
* **Targets**: pasted instances bring their boxes, label fields and masks or polygons
  (after the main sample's). An instance that something pasted above it covers keeps the
  pixels that still show: it is dropped when less than ``min_visibility`` of its pixels
  (or none) stay visible; otherwise its mask loses the covered pixels (its polygon
  becomes their outline) and its box becomes the tight box around what is left.
  Untouched instances keep their boxes. The semantic mask takes the source's values
  under the pasted pixels; keypoints are the main sample's where no pasted pixel covers
  them (those on one are dropped with their fields, as CutMix's). A sample whose draws
  paste nothing (``fraction`` drew none, ``max_overlap`` refused them all, or the source
  has none with pixels) is given as it is and recorded as one that is not pasted.
* **Record** (under ``"copypaste"``, :class:`CopyPasteRecord`): whether it pasted, the
  indices (the main, then, when pasted, the source: the main itself for ``"flip"``), the
  source, the instances pasted, the main sample's instances dropped and the pasted ones
  hidden by later ones. :meth:`~CopyPasteDataset.replay` draws the same plan from the
  recorded state, so a sample that pasted nothing is rebuilt as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal, TypedDict, TypeVar

import cv2
import numpy as np

from rankaug import checks
from rankaug._multi.fields import join
from rankaug._multi.pairs import Part, mirrored_boxes
from rankaug.mix._masks import (
    TRIM,
    Entry,
    Instances,
    Region,
    apart,
    bounds,
    compare,
    overlap_bounds,
    paste,
    stack,
    tight_box,
    uncovered,
    within,
)
from rankaug.mix._outlines import PolygonInstances, trace
from rankaug.mix.base import Combined, PairDataset, PairPlan
from rankaug.stream.detect import Streamable

__all__ = ["CopyPasteDataset", "CopyPasteRecord", "CopySource", "tight_box"]

T_co = TypeVar("T_co", covariant=True)
CopySource = Literal["partner", "flip"]
"""Where copy-paste takes its instances: ``"partner"`` (another sample) or ``"flip"``
(the sample itself mirrored)."""

_SOURCES: Final[tuple[CopySource, ...]] = ("partner", "flip")


class CopyPasteRecord(TypedDict):
    """What a copy-paste applied, stored under ``record`` in each output sample.

    ``applied`` is whether instances were pasted; ``indices`` holds the main index and,
    when pasted, the source's (the main index for ``"flip"``); ``pasted`` the source's
    instances pasted, bottom first; ``dropped`` the main sample's instances dropped;
    ``hidden`` the pasted instances dropped because later ones cover them. ``state`` is
    the Generator state before the draws, for :meth:`CopyPasteDataset.replay`.
    """

    applied: bool
    indices: list[int]
    source: CopySource
    pasted: list[int]
    dropped: list[int]
    hidden: list[int]
    epoch: int
    state: str


class CopyPasteDataset(Streamable, PairDataset[T_co]):
    """Rank-aware copy-paste for instance segmentation: partner and instances from the key.

    On four GPUs that all called ``torch.manual_seed(0)`` each rank pastes the instances
    of different partners (ultralytics' ``CopyPaste`` draws its partner from global
    state), and a rerun repeats them bit for bit. See the module docstring for the
    source, pixels, targets and record. Samples are dicts or ``(image, target)`` pairs
    with ``masks`` ``(N, H, W)``, or ``segments`` (``N`` polygons), beside their ``N``
    boxes; images as :class:`~rankaug.mix.MixUpDataset`. Polygons are pasted and
    trimmed exactly as the masks they draw would be; a trimmed instance gets the outline
    of what is left (its parts joined by straight zero-width bridges) and the box of its
    pixels, resampled to ``K`` points when the sample holds an ``(N, K, 2)`` array.

    Args:
        dataset: A map-style dataset of samples with instance masks or polygons.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        p: The probability that a sample gets instances pasted, or a function of the
            epoch returning it (picklable, for spawned workers).
        source: ``"partner"`` or ``"flip"`` (the sample itself mirrored).
        fraction: The probability that each instance of the source is pasted.
        max_overlap: Paste only instances whose box covers less than this fraction of
            each of the main sample's boxes (ultralytics' rule with 0.3); ``None``
            pastes them wherever they are.
        min_visibility: The fraction of an instance's mask pixels that must stay
            visible for it to be kept.
        **options: The arguments every mix wrapper takes but ``num_classes`` and
            ``class_field``: ``targets`` (no box filters: ``min_visibility`` above is
            the rule), ``partners``, ``record`` (``"copypaste"``, the
            :class:`CopyPasteRecord`'s key), ... (see :class:`~rankaug.mix.base.PairDataset`).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value, or the dataset is empty.

    Example:
        >>> import numpy as np
        >>> masks = np.zeros((1, 8, 8), np.uint8)
        >>> masks[0, 1:3, 1:3] = 1
        >>> data = [{"image": np.full((8, 8), 10 * i, np.uint8), "masks": masks,
        ...          "bboxes": np.array([[1.0, 1.0, 3.0, 3.0]]), "labels": np.array([i])}
        ...         for i in range(1, 4)]
        >>> pasted = CopyPasteDataset(data, seed=0, p=1.0, source="flip")[0]
        >>> pasted["bboxes"].tolist(), pasted["labels"].tolist()
        ([[1.0, 1.0, 3.0, 3.0], [5.0, 1.0, 7.0, 3.0]], [1, 1])
    """

    _streaming = "StreamingCopyPaste"  # the class a stream gets (rankaug.stream.detect)
    settings_fields = ("source", "fraction", "max_overlap", "min_visibility")
    fixed_settings = PairDataset.fixed_settings | set(settings_fields)

    kind = "copypaste"
    mixes_classes = False  # per-box classes "label" in label_fields are no class
    class_advice = (
        "CopyPaste mixes no class (the pasted image would keep the main sample's): give "
        "the samples' class under another key than 'label' (kept as it is) or leave it out; "
        "per-box classes under 'label' are read when targets has 'label' among its label_fields"
    )

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        p: float | Callable[[int], float] = 0.5,
        source: CopySource = "partner",
        fraction: float = 1.0,
        max_overlap: float | None = None,
        min_visibility: float = 0.3,
        **options: Any,
    ) -> None:
        for name in ("num_classes", "class_field"):
            if name in options:
                raise TypeError(f"CopyPasteDataset() got an unexpected keyword argument {name!r}")
        self.source: CopySource = checks.choice(source, "source", _SOURCES)
        self.fraction = checks.probability(fraction, "fraction")
        self.max_overlap = (
            None if max_overlap is None else checks.probability(max_overlap, "max_overlap")
        )
        self.min_visibility = checks.probability(min_visibility, "min_visibility")
        super().__init__(dataset, seed=seed, p=p, **{"record": self.kind, **options})

    def needs_partner(self) -> bool:
        """``False`` for ``source="flip"``: the instances come from the sample itself."""
        return self.source == "partner"

    def check(self, main: Part) -> None:
        """Refuse a sample without instances (every sample, pasted or not).

        Raises:
            ValueError: If the sample has neither ``masks`` nor ``segments``, or both.
        """
        if (main.masks is None) == (main.segments is None):
            have = (
                "both instance masks ('masks') and"
                if main.masks is not None
                else "no instance masks ('masks') nor"
            )
            raise ValueError(
                f"dataset[{main.index}] has {have} instance polygons ('segments'): "
                "CopyPaste pastes instances by one of them, one per box"
            )

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        """Paste the chosen instances; drop or trim what they cover (module docstring)."""
        fraction = self.fraction  # the same comparisons in float64, one numpy call
        chosen = [k for k, u in enumerate(rng.random(len(partner.boxes)).tolist()) if u < fraction]
        if self.max_overlap is not None and len(main.boxes) and chosen:
            sources = (
                mirrored_boxes(partner.boxes, partner.image.shape[1])
                if self.source == "flip"
                else partner.boxes
            )
            chosen = apart(sources, main.boxes, chosen, self.max_overlap)
        theirs = _instances(partner, self.source == "flip")
        picked = [k for k in chosen if theirs.has_pixels(k)] if chosen else chosen
        if not picked:  # nothing to paste: the main sample as it is
            return Combined(main, 1.0, self.unmixed(main), applied=False)
        regions = [theirs.region(k) for k in picked]
        layers, hidden, union, top = self._layers(theirs, picked, regions)
        ours = _instances(main, False)
        entries, dropped = self._kept(ours, regions, union, top)
        kept = [entry[1] for entry in entries]
        pasted = [entry[1] for entry in layers]
        entries.extend(layers)
        masks, segments = None, None
        if main.segments is not None:
            assert isinstance(ours, PolygonInstances)
            assert partner.segments is not None
            segments, boxes = trace(entries, ours, main.segments, partner.segments)
        else:
            assert main.masks is not None
            masks, boxes = stack(entries, ours, union, top, main.masks.dtype)
        points = main.keypoints
        shown = None if points is None else uncovered(points, union, top)
        # the pixels last: the targets' Python runs before they take the caches
        image, mask = main.image.copy(), main.mask
        inside = (slice(union[0], union[1]), slice(union[2], union[3]))
        paste(image[inside], theirs.view(partner.image, union), top)
        if mask is not None and partner.mask is not None:
            mask = mask.copy()
            paste(mask[inside], theirs.view(partner.mask, union), top)
        result = Part(
            main.index,
            image,
            np.array(boxes, dtype=np.float64).reshape(-1, 4),
            {
                k: join(k, (v[kept], partner.fields[k][pasted]), (main, partner))
                for k, v in main.fields.items()
            },
            mask,
            masks,
            None if points is None else points[shown],  # those the paste leaves
            {k: join(k, (v[shown],), (main,)) for k, v in main.keypoint_fields.items()},
            main.label,
            segments,
        )
        details = {"source": self.source, "pasted": picked, "dropped": dropped,
                   "hidden": sorted(hidden)}  # fmt: skip
        return Combined(result, 1.0, details)

    def _layers(
        self, theirs: Instances, picked: list[int], regions: list[Region]
    ) -> tuple[list[Entry], list[int], Region, np.ndarray]:
        """The pasted instances that show (bottom first), those hidden, and where.

        ``picked`` (the source's instances to paste, bottom first) is not empty;
        ``regions`` holds their regions.

        Returns:
            The layers, the hidden instances, the region all of them lie in and, over
            it, where something is pasted (255 for masks, 1 for polygons; else 0).
        """
        union = bounds(regions)
        if theirs.exact and len(picked) == 1:
            return _alone(theirs, picked[0], union)
        return self._stacked(theirs, picked, regions, union)

    def _stacked(
        self, theirs: Instances, picked: list[int], regions: list[Region], union: Region
    ) -> tuple[list[Entry], list[int], Region, np.ndarray]:
        """:meth:`_layers` (``union``: the region all of them lie in), one layer at a time."""
        above = np.zeros((union[1] - union[0], union[3] - union[2]), np.uint8)
        layers: list[Entry] = []
        hidden = []
        drawn: list[Region] = []  # the regions of those above
        for k, region in zip(reversed(picked), reversed(regions), strict=True):  # top first
            under = above[within(union, region)]
            # what is pasted above it lies where its region meets theirs; where it meets
            # none, nothing covers it: a polygon is drawn straight into what is pasted
            # (it needs no raster of its own)
            meet = overlap_bounds(region, drawn) if drawn else None
            drawn.append(region)
            if meet is None and theirs.draw(k, region, under):
                layers.append((theirs, k, region, None, theirs.box(k)))
                continue
            on = theirs.pixels(k, region)
            shown, visible, total = None, 0, 0  # counted only under something pasted
            if meet is not None and cv2.hasNonZero(above[within(union, meet)]):
                total = theirs.count(k)
                shown = cv2.bitwise_and(on, compare(under, cv2.CMP_EQ))
                visible = cv2.countNonZero(shown)
            made = cv2.bitwise_or(under, on, dst=under)  # in place: under is a view of above
            if made is not under:  # OpenCV could not write in place (it gives dst back)
                under[...] = made
            if shown is None or visible == total:
                layers.append((theirs, k, region, None, theirs.box(k)))
            elif visible and visible >= self.min_visibility * total:
                assert shown is not None
                layers.append((theirs, k, region, shown, tight_box(shown, region[::2])))
            else:
                hidden.append(k)
        layers.reverse()
        # polygons' pixels are 1, so is what covers them; masks' values are made 255
        return layers, hidden, union, above if theirs.exact else compare(above, cv2.CMP_NE)

    def _kept(
        self, ours: Instances, regions: list[Region], union: Region, top: np.ndarray
    ) -> tuple[list[Entry], list[int]]:
        """The main sample's instances that stay (trimmed when covered), and those dropped.

        Each instance is compared with what is pasted over the region all the pasted
        ones lie in, or, when that is larger than checking the instance's own region
        (:meth:`~rankaug.mix._masks.Instances.region`), only where its region meets
        theirs.
        """
        entries: list[Entry] = []
        dropped = []
        height, width = ours.hw
        whole = (0, height, 0, width)
        area = (union[1] - union[0]) * (union[3] - union[2])
        inside = (slice(union[0], union[1]), slice(union[2], union[3]))
        for i in range(len(ours)):
            if not area:
                covered, region = 0, whole
            elif not ours.exact and 2 * area <= height * width + _area(ours.rough[i]):
                # cheaper to compare over all that is pasted than to check the region
                covered = cv2.countNonZero(cv2.bitwise_and(ours.on[i][inside], top))
                region = whole
            else:
                region = ours.region(i)
                y0, y1, x0, x1 = region
                covered = 0
                meet = (  # none where it misses the region all of them lie in
                    overlap_bounds(region, regions)
                    if y0 < union[1] and union[0] < y1 and x0 < union[3] and union[2] < x1
                    else None
                )
                if meet is not None:
                    over = top[within(union, meet)]
                    if cv2.hasNonZero(over):  # else nothing pasted there: nothing to draw
                        covered = ours.covered(i, meet, over)  # polygons: cut there already
            if not covered:
                entries.append((ours, i, region, None, ours.box(i)))
                continue
            total = ours.count(i)
            if total - covered >= max(self.min_visibility * total, 1):
                entries.append((ours, i, region, TRIM, []))  # trimmed by stack
            else:
                dropped.append(i)
        return entries, dropped

    def unmixed(self, main: Part) -> dict[str, Any]:
        """Nothing pasted, nothing dropped (also when the draws pick no instance)."""
        return {"source": self.source, "pasted": [], "dropped": [], "hidden": []}


def _alone(
    theirs: Instances, k: int, region: Region
) -> tuple[list[Entry], list[int], Region, np.ndarray]:
    """:meth:`CopyPasteDataset._layers` of polygon ``k`` pasted alone over its ``region``.

    Nothing lies above it, and where it is pasted is its own raster (1 on its pixels,
    never written): the layers stacked one at a time (``_stacked``) would give the same,
    drawing that raster into a fresh array first.
    """
    return [(theirs, k, region, None, theirs.box(k))], [], region, theirs.pixels(k, region)


def _instances(part: Part, mirror: bool) -> Instances:
    """A sample's instances, by their masks or their polygons."""
    if part.segments is not None:
        return PolygonInstances(part.segments, part.boxes, part.hw, mirror)
    assert part.masks is not None
    return Instances(part.masks, part.boxes, mirror)


def _area(rough: tuple[int, int, int, int]) -> int:
    x0, y0, x1, y1 = rough
    return (x1 - x0) * (y1 - y0)
