"""``CopyPasteDataset``: instances of a keyed partner pasted onto each sample, by their masks.

For samples with instance masks (``masks``, one per box). The draws: after
:mod:`rankaug.mix.base`'s block ``u = rng.random(2)`` (``u[0] < p`` pastes, ``u[1]``
draws the partner), a sample that is pasted draws ``rng.random(M)`` for the ``M``
instances of its source, and instance ``k`` is pasted when its uniform is below
``fraction``, its mask is not empty and, with ``max_overlap``, its box covers less than
that fraction of every box of the main sample (ultralytics pastes only those below 0.3).

* **Source**: ``"partner"`` takes the instances of the keyed partner, ``"flip"`` those of
  the sample itself mirrored left to right (ultralytics' ``"flip"`` mode).
* **Pixels**: each pasted instance's mask pixels take the source's pixels, in the
  source's order (later instances on top).
* **Targets**: pasted instances bring their boxes, label fields and masks (after the
  main sample's). An instance that something pasted above it covers keeps the pixels
  that still show: it is dropped when less than ``min_visibility`` of its mask pixels
  (or none) stay visible; otherwise its mask loses the covered pixels and its box
  becomes the tight box around what is left. Untouched instances keep their boxes.
  The semantic mask takes the source's values under the pasted pixels; keypoints are
  the main sample's.
* **Record** (under ``"copypaste"``, :class:`CopyPasteRecord`): the indices (the main,
  then the source: the main itself for ``"flip"``), the source, the instances pasted,
  the main sample's instances dropped and the pasted ones hidden by later ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypedDict, TypeVar

import cv2
import numpy as np

from rankaug import checks
from rankaug.boxes import BoxFormat
from rankaug.keys import Keying
from rankaug.mix.base import Combined, PairDataset, PairPlan
from rankaug.mix.config import PartnerFit
from rankaug.mix.parts import Part
from rankaug.samples import SampleAdapter

__all__ = ["CopyPasteDataset", "CopyPasteRecord", "CopySource", "tight_box"]

T_co = TypeVar("T_co", covariant=True)
CopySource = Literal["partner", "flip"]
_SOURCES: Final[tuple[CopySource, ...]] = ("partner", "flip")


class CopyPasteRecord(TypedDict):
    """What a copy-paste applied, stored under ``record`` in each output sample.

    ``indices`` holds the main index and, when pasted, the source's (the main index
    for ``"flip"``); ``pasted`` the source's instances pasted, bottom first;
    ``dropped`` the main sample's instances dropped; ``hidden`` the pasted instances
    dropped because later ones cover them. ``state`` is the Generator state before the
    draws, for :meth:`CopyPasteDataset.replay`.
    """

    applied: bool
    indices: list[int]
    source: CopySource
    pasted: list[int]
    dropped: list[int]
    hidden: list[int]
    epoch: int
    state: str


Region = tuple[int, int, int, int]
"""``(y0, y1, x0, x1)``: rows ``y0:y1`` and columns ``x0:x1`` of an image."""


def tight_box(mask: np.ndarray, origin: tuple[int, int] = (0, 0)) -> list[float]:
    """The tight pixel ``xyxy`` box around a non-empty mask's pixels.

    Args:
        mask: The mask (its non-zero pixels), or a region of one.
        origin: ``(y0, x0)``, where the region starts in the image. Defaults to ``(0, 0)``.

    Returns:
        ``[x0, y0, x1, y1]``.

    >>> tight_box(np.array([[0, 0, 0], [0, 1, 1]]))
    [1.0, 1.0, 3.0, 2.0]
    """
    if mask.dtype.itemsize == 1 and mask.flags.c_contiguous and mask.shape[1] % 8 == 0:
        words = mask.view(np.uint64)  # eight pixels at a time
        rows = np.flatnonzero(np.bitwise_or.reduce(words, axis=1))
        cols = np.flatnonzero(
            np.bitwise_or.reduce(words[rows[0] : rows[-1] + 1], axis=0).view(np.uint8)
        )
    else:
        rows = np.flatnonzero(mask.any(axis=1))
        cols = np.flatnonzero(mask.any(axis=0))
    y0, x0 = origin
    return [
        float(x0 + cols[0]),
        float(y0 + rows[0]),
        float(x0 + cols[-1] + 1),
        float(y0 + rows[-1] + 1),
    ]


def _cover(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """``(M, N)``: how much of each of the ``others`` each of ``boxes`` covers (pixel xyxy)."""
    low = np.maximum(boxes[:, None, :2], others[None, :, :2])
    high = np.minimum(boxes[:, None, 2:], others[None, :, 2:])
    inter = np.clip(high - low, 0.0, None).prod(axis=2)
    area = (others[:, 2:] - others[:, :2]).prod(axis=1)
    cover: np.ndarray = inter / np.maximum(area, 1e-12)
    return cover


def _within(outer: Region, inner: Region) -> tuple[slice, slice]:
    """The slices of ``inner`` in the coordinates of ``outer`` (``inner`` lies inside)."""
    return slice(inner[0] - outer[0], inner[1] - outer[0]), slice(inner[2] - outer[2],
                                                                  inner[3] - outer[2])  # fmt: skip


def _overlap(a: Region, b: Region) -> Region | None:
    y0, y1, x0, x1 = max(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), min(a[3], b[3])
    return (y0, y1, x0, x1) if y0 < y1 and x0 < x1 else None


class _Instances:
    """One sample's instance masks: where each one is, how many pixels it has.

    Each instance's region is its box rounded out to whole pixels and one more when its
    mask lies inside that (checked by counting), else its mask's own extent; all the
    work on masks is done in regions. ``mirror`` reads the sample mirrored left to right
    (``"flip"``).
    """

    __slots__ = ("boxes", "counts", "mirror", "on", "regions", "values", "width")

    def __init__(
        self, masks: np.ndarray, boxes: np.ndarray, mirror: bool, only: Sequence[int] | None
    ) -> None:
        self.values = masks
        self.on = on = _nonzero(masks)
        height, width = masks.shape[1:]
        self.width, self.mirror = width, mirror
        self.boxes = boxes
        # the boxes rounded out, and a pixel more: masks drawn from polygons overshoot
        rounded = np.empty((len(boxes), 4), np.int64)
        rounded[:, :2] = np.floor(boxes[:, :2]) - 1
        rounded[:, 2:] = np.ceil(boxes[:, 2:]) + 1
        np.clip(rounded, 0, [width, height, width, height], out=rounded)
        self.regions: dict[int, Region] = {}
        self.counts: dict[int, int] = {}
        for k in range(len(boxes)) if only is None else only:
            rx0, ry0, rx1, ry1 = rounded[k].tolist()
            total = cv2.countNonZero(on[k])
            if total and cv2.countNonZero(on[k, ry0:ry1, rx0:rx1]) != total:
                rows = np.flatnonzero(on[k].any(axis=1))  # pixels outside: where they are
                cols = np.flatnonzero(on[k].any(axis=0))
                ry0, ry1 = int(rows[0]), int(rows[-1]) + 1
                rx0, rx1 = int(cols[0]), int(cols[-1]) + 1
            if mirror:
                rx0, rx1 = width - rx1, width - rx0
            self.regions[k] = (ry0, ry1, rx0, rx1)
            self.counts[k] = total

    def view(self, array: np.ndarray, region: Region) -> np.ndarray:
        """``array``'s pixels (an image, or one instance's mask) in an output region.

        A view of ``array``, or for ``mirror`` a mirrored copy of the region.
        """
        y0, y1, x0, x1 = region
        if not self.mirror:
            return array[y0:y1, x0:x1]
        source = array[y0:y1, self.width - x1 : self.width - x0]
        if source.dtype in _CV_DTYPES and (source.ndim == 2 or source.shape[2] <= 4):
            return cv2.flip(source, 1).reshape(source.shape)
        return np.ascontiguousarray(source[:, ::-1])

    def box(self, k: int) -> list[float]:
        """Instance ``k``'s box in the output."""
        x0, y0, x1, y1 = self.boxes[k].tolist()
        return [self.width - x1, y0, self.width - x0, y1] if self.mirror else [x0, y0, x1, y1]


def _compare(mask: np.ndarray, op: int) -> np.ndarray:
    """255 where ``mask`` compares with 0 as ``op`` says (``cv2.CMP_NE``, ...), else 0."""
    out: np.ndarray = cv2.compare(mask, 0, op)  # type: ignore[call-overload]  # a scalar: stubs lack it
    return out


def _nonzero(masks: np.ndarray) -> np.ndarray:
    """Masks as uint8, non-zero where they are (the masks themselves when uint8)."""
    if masks.dtype == np.uint8:
        return masks
    on: np.ndarray = masks.view(np.uint8) if masks.dtype == np.bool_ else masks != 0
    return on.view(np.uint8)


#: Dtypes cv2.copyTo takes; other arrays are pasted with numpy.
_CV_DTYPES: Final = frozenset(np.dtype(t) for t in ("uint8", "int8", "uint16", "int16",
                                                    "int32", "float32", "float64"))  # fmt: skip


def _paste(target: np.ndarray, source: np.ndarray, where: np.ndarray) -> None:
    """``target[where != 0] = source[where != 0]`` in place (``target`` is a view)."""
    if target.dtype in _CV_DTYPES and (target.ndim == 2 or target.shape[2] <= 4):
        out = cv2.copyTo(source, where, target)
        if np.may_share_memory(out, target):
            return
    chosen = where != 0
    np.copyto(target, source, where=chosen if target.ndim == 2 else chosen[..., None])


#: Marks a main instance whose mask loses the pasted pixels.
_TRIM: Final = np.zeros((0, 0), np.uint8)

# An output instance: its sample, its index there, its region, the part of its mask that
# shows there (None: all of it; _TRIM: a main instance trimmed) and its box.
_Entry = tuple[_Instances, int, Region, "np.ndarray | None", list[float]]


def _stack(
    entries: list[_Entry], ours: _Instances, union: Region, top: np.ndarray, dtype: Any
) -> tuple[np.ndarray, list[list[float]]]:
    """The output's instance masks, with their values, and their boxes.

    A main instance marked trimmed (``shown`` is :data:`_TRIM`) loses the pasted
    pixels and gets the tight box of what is left.
    """
    masks = np.empty((len(entries), *ours.values.shape[1:]), dtype)
    boxes = []
    for out, (owner, k, region, shown, box) in zip(masks, entries, strict=True):
        boxes.append(box)
        if owner is ours:  # a main instance, as it is or trimmed
            out[...] = owner.values[k]
            meet = _overlap(region, union)
            if shown is _TRIM and meet is not None:
                covered = out[meet[0] : meet[1], meet[2] : meet[3]]
                covered[top[_within(union, meet)] != 0] = 0
                y0, y1, x0, x1 = region
                boxes[-1] = tight_box(out[y0:y1, x0:x1], (y0, x0))
            continue
        y0, y1, x0, x1 = region
        out[...] = 0
        values = owner.view(owner.values[k], region)
        if shown is None:
            out[y0:y1, x0:x1] = values
        else:
            _paste(out[y0:y1, x0:x1], values, shown)
    return masks, boxes


class CopyPasteDataset(PairDataset[T_co]):
    """Rank-aware copy-paste for instance segmentation: partner and instances from the key.

    On four GPUs that all called ``torch.manual_seed(0)`` each rank pastes the instances
    of different partners (ultralytics' ``CopyPaste`` draws its partner from global
    state), and a rerun repeats them bit for bit. See the module docstring for the
    source, pixels, targets and record. Samples are dicts or ``(image, target)`` pairs
    with ``masks`` ``(N, H, W)`` beside their ``N`` boxes; images as
    :class:`~rankaug.mix.MixUpDataset`.

    Args:
        dataset: A map-style dataset of samples with instance masks.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        p: The probability that a sample gets instances pasted, or a function of the
            epoch returning it (picklable, for spawned workers). Defaults to ``0.5``.
        source: ``"partner"`` or ``"flip"`` (the sample itself mirrored). Defaults to
            ``"partner"``.
        fraction: The probability that each instance of the source is pasted.
            Defaults to ``1.0``.
        max_overlap: Paste only instances whose box covers less than this fraction of
            each of the main sample's boxes (ultralytics' rule with 0.3); ``None``
            pastes them wherever they are. Defaults to ``None``.
        min_visibility: The fraction of an instance's mask pixels that must stay
            visible for it to be kept. Defaults to ``0.3``.
        box_format: The samples' box format (also the output's). Defaults to
            ``"pascal_voc"``.
        label_fields: Per-box fields kept aligned with the boxes. Defaults to
            ``("labels",)``.
        keypoint_fields: Per-keypoint fields kept aligned with the keypoints.
            Defaults to ``()``.
        partner_fit: ``"error"`` refuses a partner of another size; ``"letterbox"``
            scales it to fit the main image and centres it. Defaults to ``"error"``.
        fill: The letterbox's fill, a number or one per channel. Defaults to ``114``.
        fill_mask: The letterboxed semantic mask's fill. Defaults to ``0``.
        pool: The distinct indices partners are drawn from; ``None`` means the whole
            dataset. Defaults to ``None``.
        weights: Sampling weights for partners, one per pool entry (or per item
            without a pool). Defaults to ``None``.
        record: The key of the :class:`CopyPasteRecord`; ``None`` records nothing.
            Defaults to ``"copypaste"``.
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"``. Defaults to ``"stream"``.
        rank: The rank; ``None`` resolves it. Defaults to ``None``.
        stream: The key's stream word or name; ``None`` derives one. Defaults to ``None``.
        adapter: Converts samples; ``None`` uses :class:`~rankaug.samples.DefaultAdapter`.
            Defaults to ``None``.

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

    kind = "copypaste"

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
        box_format: BoxFormat = "pascal_voc",
        label_fields: Sequence[str] = ("labels",),
        keypoint_fields: Sequence[str] = (),
        partner_fit: PartnerFit = "error",
        fill: float | Sequence[float] = 114,
        fill_mask: int = 0,
        pool: Sequence[int] | None = None,
        weights: Sequence[float] | None = None,
        record: str | None = "copypaste",
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
    ) -> None:
        self.source: CopySource = checks.choice(source, "source", _SOURCES)
        self.fraction = checks.probability(fraction, "fraction")
        self.max_overlap = (
            None if max_overlap is None else checks.probability(max_overlap, "max_overlap")
        )
        self.min_visibility = checks.probability(min_visibility, "min_visibility")
        super().__init__(
            dataset, seed=seed, p=p, box_format=box_format, label_fields=label_fields,
            keypoint_fields=keypoint_fields, partner_fit=partner_fit, fill=fill,
            fill_mask=fill_mask, pool=pool, weights=weights, record=record, keying=keying,
            rank=rank, stream=stream, adapter=adapter,
        )  # fmt: skip

    def uses_partner(self, plan: PairPlan) -> bool:
        """``False`` for ``source="flip"``: the instances come from the sample itself."""
        return self.source == "partner"

    def check(self, main: Part) -> None:
        """Refuse a sample without instance masks (every sample, pasted or not).

        Raises:
            ValueError: If the sample has no ``masks``.
        """
        if main.masks is None:
            raise ValueError(
                f"dataset[{main.index}] has no instance masks ('masks', one per box): "
                "CopyPaste pastes instances by their masks"
            )

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        """Paste the chosen instances; drop or trim what they cover (module docstring)."""
        assert main.masks is not None
        assert partner.masks is not None
        drawn = rng.random(len(partner.masks)) < self.fraction
        if self.max_overlap is not None and len(main.boxes) and drawn.any():
            sources = partner.flipped().boxes if self.source == "flip" else partner.boxes
            drawn &= (_cover(sources, main.boxes) < self.max_overlap).all(axis=1)
        chosen = np.flatnonzero(drawn).tolist()
        theirs = _Instances(partner.masks, partner.boxes, self.source == "flip", chosen)
        picked = [k for k in chosen if theirs.counts[k]]
        layers, hidden, union, top = self._layers(theirs, picked)
        image, mask = main.image.copy(), main.mask
        if layers or hidden:
            inside = (slice(union[0], union[1]), slice(union[2], union[3]))
            _paste(image[inside], theirs.view(partner.image, union), top)
            if mask is not None and partner.mask is not None:
                mask = mask.copy()
                _paste(mask[inside], theirs.view(partner.mask, union), top)
        ours = _Instances(main.masks, main.boxes, False, None)
        entries, dropped = self._kept(ours, [theirs.regions[k] for k in picked], union, top)
        kept = [k for _, k, *_ in entries]
        pasted = [k for _, k, *_ in layers]
        entries.extend(layers)
        masks, boxes = _stack(entries, ours, union, top, main.masks.dtype)
        result = Part(
            main.index,
            image,
            np.array(boxes, dtype=np.float64).reshape(-1, 4),
            {
                k: np.concatenate((v[kept], partner.fields[k][pasted]))
                for k, v in main.fields.items()
            },
            mask,
            masks,
            None if main.keypoints is None else main.keypoints.copy(),
            {k: v.copy() for k, v in main.keypoint_fields.items()},
            main.label,
        )
        details = {"source": self.source, "pasted": picked, "dropped": dropped,
                   "hidden": sorted(hidden)}  # fmt: skip
        return Combined(result, 1.0, details)

    def _layers(
        self, theirs: _Instances, picked: list[int]
    ) -> tuple[list[_Entry], list[int], Region, np.ndarray]:
        """The pasted instances that show (bottom first), those hidden, and where.

        Returns:
            The layers, the hidden instances, the region all of them lie in and, over
            it, 255 where something is pasted.
        """
        if not picked:
            return [], [], (0, 0, 0, 0), np.zeros((0, 0), np.uint8)
        regions = [theirs.regions[k] for k in picked]
        union = (min(r[0] for r in regions), max(r[1] for r in regions),
                 min(r[2] for r in regions), max(r[3] for r in regions))  # fmt: skip
        above = np.zeros((union[1] - union[0], union[3] - union[2]), np.uint8)
        layers: list[_Entry] = []
        hidden = []
        for k in reversed(picked):  # top first: what is pasted above each one
            region, total = theirs.regions[k], theirs.counts[k]
            on = theirs.view(theirs.on[k], region)
            under = above[_within(union, region)]
            shown, visible = None, total
            if cv2.countNonZero(under):
                shown = cv2.bitwise_and(on, _compare(under, cv2.CMP_EQ))
                visible = cv2.countNonZero(shown)
            np.bitwise_or(under, on, out=under)
            if visible == total:
                layers.append((theirs, k, region, None, theirs.box(k)))
            elif visible and visible >= self.min_visibility * total:
                assert shown is not None
                layers.append((theirs, k, region, shown, tight_box(shown, region[::2])))
            else:
                hidden.append(k)
        layers.reverse()
        return layers, hidden, union, _compare(above, cv2.CMP_NE)

    def _kept(
        self, ours: _Instances, regions: list[Region], union: Region, top: np.ndarray
    ) -> tuple[list[_Entry], list[int]]:
        """The main sample's instances that stay (trimmed when covered), and those dropped.

        Each instance is compared with what is pasted only where its region meets the
        regions of the pasted instances.
        """
        entries: list[_Entry] = []
        dropped = []
        for i, region in ours.regions.items():
            meets = [m for m in (_overlap(region, r) for r in regions) if m is not None]
            covered = 0
            if meets:
                meet = (min(m[0] for m in meets), max(m[1] for m in meets),
                        min(m[2] for m in meets), max(m[3] for m in meets))  # fmt: skip
                on = ours.on[i, meet[0] : meet[1], meet[2] : meet[3]]
                covered = cv2.countNonZero(cv2.bitwise_and(on, top[_within(union, meet)]))
            if not covered:
                entries.append((ours, i, region, None, ours.box(i)))
                continue
            total = ours.counts[i]
            if total - covered >= max(self.min_visibility * total, 1):
                entries.append((ours, i, region, _TRIM, []))  # trimmed by _stack
            else:
                dropped.append(i)
        return entries, dropped

    def unmixed(self, main: Part) -> dict[str, Any]:
        """Nothing pasted, nothing dropped."""
        return {"source": self.source, "pasted": [], "dropped": [], "hidden": []}
