"""Instance masks stacked in layers: what each shows under those pasted above it.

The machinery of :class:`~rankaug.mix.CopyPasteDataset`, built to touch as few pixels
as it can: each instance's *region* is its box rounded out to whole pixels, and one more
(masks drawn from polygons overshoot), checked by counting its pixels there against all
of them; an instance whose mask reaches outside gets its mask's own extent. Overlaps
are then computed only where regions meet, with OpenCV's counting and copying.
"""

from __future__ import annotations

import math
from typing import Any, Final, cast

import cv2
import numpy as np

__all__ = [
    "CV_DTYPES",
    "FEW_PAIRS",
    "TRIM",
    "Entry",
    "Instances",
    "Region",
    "apart",
    "bounds",
    "compare",
    "cover",
    "overlap_bounds",
    "nonzero",
    "overlap",
    "paste",
    "stack",
    "tight_box",
    "uncovered",
    "within",
]

Region = tuple[int, int, int, int]
"""``(y0, y1, x0, x1)``: rows ``y0:y1`` and columns ``x0:x1`` of an image."""


def tight_box(mask: np.ndarray, origin: tuple[int, int] = (0, 0)) -> list[float]:
    """The tight pixel ``xyxy`` box around a non-empty mask's pixels.

    Args:
        mask: The mask (its non-zero pixels), or a region of one.
        origin: ``(y0, x0)``, where the region starts in the image.

    Returns:
        ``[x0, y0, x1, y1]``.

    >>> tight_box(np.array([[0, 0, 0], [0, 1, 1]]))
    [1.0, 1.0, 3.0, 2.0]
    """
    y0, x0 = origin
    if mask.ndim == 2 and mask.dtype in (np.uint8, np.bool_) and mask.strides[1] == 1:
        x, y, w, h = cv2.boundingRect(mask.view(np.uint8))  # of the non-zero pixels
        return [float(x0 + x), float(y0 + y), float(x0 + x + w), float(y0 + y + h)]
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return [
        float(x0 + cols[0]),
        float(y0 + rows[0]),
        float(x0 + cols[-1] + 1),
        float(y0 + rows[-1] + 1),
    ]


def cover(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """``(M, N)``: how much of each of the ``others`` each of ``boxes`` covers (pixel xyxy)."""
    # one coordinate at a time: numpy is slow at broadcasting pairs; maximum(x, 0) is
    # what np.clip(x, 0, None) computes, without its Python layer
    side = [
        np.maximum(
            np.minimum(boxes[:, None, axis + 2], others[None, :, axis + 2])
            - np.maximum(boxes[:, None, axis], others[None, :, axis]),
            0.0,
        )
        for axis in (0, 1)
    ]
    inter = side[0] * side[1]
    area = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    cover: np.ndarray = inter / np.maximum(area, 1e-12)
    return cover


FEW_PAIRS: Final = 256
"""The most pairs of boxes :func:`apart` compares one by one in Python: faster than numpy."""


def apart(boxes: np.ndarray, others: np.ndarray, chosen: list[int], limit: float) -> list[int]:
    """Those ``chosen`` rows of ``boxes`` that cover less than ``limit`` of each of ``others``.

    ``(cover(boxes, others) < limit).all(axis=1)`` on the chosen rows, bit for bit (finite
    boxes, as every part's are): up to :data:`FEW_PAIRS` pairs one pair at a time in
    Python, with :func:`cover`'s operations in its order (a row stops at the first box it
    covers too much of; a pair that does not meet shares 0.0 without them), since numpy's
    dozen calls cost far more than their arithmetic when they run cold between the
    pastes; more pairs through :func:`cover`.

    >>> boxes = np.array([[0.0, 0.0, 2.0, 2.0], [5.0, 5.0, 6.0, 6.0]])
    >>> apart(boxes, np.array([[1.0, 1.0, 3.0, 3.0]]), [0, 1], 0.2)  # box 0 covers 0.25 of it
    [1]
    """
    if len(chosen) * len(others) > FEW_PAIRS:
        keep = cast(np.ndarray, (cover(boxes[chosen], others) < limit).all(axis=1)).tolist()
        return [k for k, kept in zip(chosen, keep, strict=True) if kept]
    rows = boxes.tolist()
    table = []
    for a0, b0, a1, b1 in others.tolist():
        area = (a1 - a0) * (b1 - b0)
        table.append((a0, b0, a1, b1, area if area > 1e-12 else 1e-12))
    # a pair that does not overlap shares 0.0 (cover's maximum(..., 0.0) of a side, times
    # the other, over the area): below the limit exactly when 0.0 is
    empty_below = limit > 0.0
    found = []
    for k in chosen:
        x0, y0, x1, y1 = rows[k]
        for a0, b0, a1, b1, area in table:
            # cover's minimum(...) - maximum(...) per axis, then the share
            w = (x1 if x1 < a1 else a1) - (x0 if x0 > a0 else a0)
            if w > 0.0:
                h = (y1 if y1 < b1 else b1) - (y0 if y0 > b0 else b0)
                if h > 0.0:
                    if not w * h / area < limit:
                        break
                    continue
            if not empty_below:
                break
        else:
            found.append(k)
    return found


def within(outer: Region, inner: Region) -> tuple[slice, slice]:
    """The slices of ``inner`` in the coordinates of ``outer`` (``inner`` lies inside)."""
    return slice(inner[0] - outer[0], inner[1] - outer[0]), slice(inner[2] - outer[2],
                                                                  inner[3] - outer[2])  # fmt: skip


def overlap(a: Region, b: Region) -> Region | None:
    y0, y1, x0, x1 = max(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), min(a[3], b[3])
    return (y0, y1, x0, x1) if y0 < y1 and x0 < x1 else None


def bounds(regions: list[Region]) -> Region:
    """The region that holds all of the (non-empty list of) regions."""
    y0, y1, x0, x1 = regions[0]
    for a0, a1, b0, b1 in regions[1:]:  # comparisons: faster than min() and max() here
        y0, y1 = (a0 if a0 < y0 else y0), (a1 if a1 > y1 else y1)
        x0, x1 = (b0 if b0 < x0 else x0), (b1 if b1 > x1 else x1)
    return y0, y1, x0, x1


def overlap_bounds(region: Region, regions: list[Region]) -> Region | None:
    """The region that holds where ``region`` overlaps each of ``regions`` (``None``: none)."""
    y0, y1, x0, x1 = region
    found: Region | None = None
    for a0, a1, b0, b1 in regions:  # each overlap, by comparisons (see bounds)
        low, high = (a0 if a0 > y0 else y0), (a1 if a1 < y1 else y1)
        if low >= high:
            continue
        left, right = (b0 if b0 > x0 else x0), (b1 if b1 < x1 else x1)
        if left >= right:
            continue
        if found is None:
            found = low, high, left, right
            continue
        c0, c1, d0, d1 = found  # the bounds so far, grown to hold this one (as bounds())
        found = (
            low if low < c0 else c0,
            high if high > c1 else c1,
            left if left < d0 else d0,
            right if right > d1 else d1,
        )
    return found


class Instances:
    """One sample's instance masks: where each one is, how many pixels it has.

    Each instance's region is its box rounded out to whole pixels and one more when its
    mask lies inside that (checked by counting), else its mask's own extent; all the
    work on masks is done in regions. ``mirror`` reads the sample mirrored left to right
    (``"flip"``).
    """

    __slots__ = ("boxes", "counts", "hw", "mirror", "on", "regions", "rough", "rows", "values",
                 "width")  # fmt: skip

    exact: bool = False
    """Whether :meth:`region` is cheap and exact (polygons); masks' regions are checked."""

    def __init__(self, masks: np.ndarray, boxes: np.ndarray, mirror: bool) -> None:
        self.values = masks
        self.on = nonzero(masks)
        height, width = self.hw = masks.shape[1:]
        self.width, self.mirror = width, mirror
        self.boxes = boxes
        # the boxes rounded out, and a pixel more: masks drawn from polygons overshoot
        self.rough: list[tuple[int, int, int, int]] = [  # x0, y0, x1, y1, not checked
            (
                max(0, math.floor(x0) - 1),
                max(0, math.floor(y0) - 1),
                min(width, math.ceil(x1) + 1),
                min(height, math.ceil(y1) + 1),
            )
            for x0, y0, x1, y1 in boxes.tolist()
        ]
        self.regions: dict[int, Region] = {}
        self.counts: dict[int, int] = {}
        self.rows: list[list[float]] | None = None  # the boxes as lists, made once

    def __len__(self) -> int:
        return len(self.rough)

    def count(self, k: int) -> int:
        """How many pixels instance ``k`` has."""
        total = self.counts.get(k)
        if total is None:
            total = self.counts[k] = cv2.countNonZero(self.on[k])
        return total

    def has_pixels(self, k: int) -> bool:
        """Whether instance ``k`` has pixels (:meth:`region` counts them anyway)."""
        return self.count(k) > 0

    def region(self, k: int) -> Region:
        """Instance ``k``'s region in the output, checked (see the class docstring)."""
        region = self.regions.get(k)
        if region is not None:
            return region
        rx0, ry0, rx1, ry1 = self.rough[k]
        total, on = self.count(k), self.on[k]
        if total and cv2.countNonZero(on[ry0:ry1, rx0:rx1]) != total:
            rows = np.flatnonzero(on.any(axis=1))  # pixels outside: where they are
            cols = np.flatnonzero(on.any(axis=0))
            ry0, ry1 = int(rows[0]), int(rows[-1]) + 1
            rx0, rx1 = int(cols[0]), int(cols[-1]) + 1
        if self.mirror:
            rx0, rx1 = self.width - rx1, self.width - rx0
        region = self.regions[k] = (ry0, ry1, rx0, rx1)
        return region

    def view(self, array: np.ndarray, region: Region) -> np.ndarray:
        """``array``'s pixels (an image, or one instance's mask) in an output region.

        A view of ``array``, or for ``mirror`` a mirrored copy of the region.
        """
        y0, y1, x0, x1 = region
        if not self.mirror:
            return array[y0:y1, x0:x1]
        source = array[y0:y1, self.width - x1 : self.width - x0]
        if source.dtype in CV_DTYPES and (source.ndim == 2 or source.shape[2] <= 4):
            return cv2.flip(source, 1).reshape(source.shape)
        return np.ascontiguousarray(source[:, ::-1])

    def pixels(self, k: int, region: Region) -> np.ndarray:
        """Instance ``k``'s pixels over an output region: non-zero on them (never written)."""
        return self.view(self.on[k], region)

    def draw(self, k: int, region: Region, into: np.ndarray) -> bool:
        """Never: a mask is not drawn into another array (polygons are), so ``False``."""
        return False

    def covered(self, k: int, meet: Region, over: np.ndarray) -> int:
        """How many of instance ``k``'s pixels in ``meet`` are non-zero in ``over`` (its pixels).

        Masks are never written; :class:`~rankaug.mix._outlines.PolygonInstances` cuts
        its drawing there at once (what trimming would do later).
        """
        return cv2.countNonZero(cv2.bitwise_and(self.pixels(k, meet), over))

    def box(self, k: int) -> list[float]:
        """Instance ``k``'s box in the output (never written)."""
        rows = self.rows
        if rows is None:  # every box as a list at once: one call, not one per box
            rows = self.rows = self.boxes.tolist()
        if self.mirror:
            x0, y0, x1, y1 = rows[k]
            return [self.width - x1, y0, self.width - x0, y1]
        box: list[float] = rows[k]
        return box


def uncovered(points: np.ndarray, union: Region, top: np.ndarray) -> np.ndarray:
    """Which keypoints (``x, y`` first) lie on no pasted pixel: ``top`` is 0 over ``union``.

    A keypoint is on the pixel ``(floor(y), floor(x))``, as CutMix and the mosaic read
    it (half-open); one outside ``union`` is on no pasted pixel.
    """
    y0, y1, x0, x1 = union
    x, y = points[:, 0], points[:, 1]
    inside = (x >= x0) & (x < x1) & (y >= y0) & (y < y1)
    rows, cols = y[inside].astype(np.intp) - y0, x[inside].astype(np.intp) - x0
    shown = ~inside
    shown[inside] = top[rows, cols] == 0
    return shown


def compare(mask: np.ndarray, op: int) -> np.ndarray:
    """255 where ``mask`` compares with 0 as ``op`` says (``cv2.CMP_NE``, ...), else 0."""
    out: np.ndarray = cv2.compare(mask, 0, op)  # type: ignore[call-overload]  # a scalar: stubs lack it
    return out


def nonzero(masks: np.ndarray) -> np.ndarray:
    """Masks as uint8, non-zero where they are (the masks themselves when uint8)."""
    if masks.dtype == np.uint8:
        return masks
    on: np.ndarray = masks.view(np.uint8) if masks.dtype == np.bool_ else masks != 0
    return on.view(np.uint8)


#: Dtypes cv2.copyTo takes; other arrays are pasted with numpy.
CV_DTYPES: Final = frozenset(np.dtype(t) for t in ("uint8", "int8", "uint16", "int16",
                                                    "int32", "float32", "float64"))  # fmt: skip


def paste(target: np.ndarray, source: np.ndarray, where: np.ndarray) -> None:
    """``target[where != 0] = source[where != 0]`` in place (``target`` is a view)."""
    if (
        target.dtype in CV_DTYPES
        and (target.ndim == 2 or target.shape[2] <= 4)
        and cv2.copyTo(source, where, target) is target  # in place: OpenCV gives dst back
    ):
        return
    chosen = where != 0
    np.copyto(target, source, where=chosen if target.ndim == 2 else chosen[..., None])


#: Marks a main instance whose mask loses the pasted pixels.
TRIM: Final = np.zeros((0, 0), np.uint8)

# An output instance: its sample, its index there, its region, the part of its mask that
# shows there (None: all of it; TRIM: a main instance trimmed) and its box.
Entry = tuple[Instances, int, Region, "np.ndarray | None", list[float]]


def stack(
    entries: list[Entry], ours: Instances, union: Region, top: np.ndarray, dtype: Any
) -> tuple[np.ndarray, list[list[float]]]:
    """The output's instance masks, with their values, and their boxes.

    A main instance marked trimmed (``shown`` is :data:`TRIM`) loses the pasted
    pixels and gets the tight box of what is left.
    """
    masks = np.empty((len(entries), *ours.values.shape[1:]), dtype)
    boxes = []
    keep: np.ndarray | None = None
    for out, (owner, k, region, shown, box) in zip(masks, entries, strict=True):
        boxes.append(box)
        if owner is ours:  # a main instance, as it is or trimmed
            out[...] = owner.values[k]
            if shown is TRIM:
                region = owner.region(k)
                meet = overlap(region, union)
                assert meet is not None
                covered = out[meet[0] : meet[1], meet[2] : meet[3]]
                if keep is None:
                    keep = compare(top, cv2.CMP_EQ)  # 255 where nothing is pasted
                kept = keep[within(union, meet)]
                if (
                    out.dtype != np.uint8
                    or cv2.bitwise_and(covered, kept, dst=covered) is not covered
                ):
                    covered[kept == 0] = 0
                y0, y1, x0, x1 = region
                boxes[-1] = tight_box(out[y0:y1, x0:x1], (y0, x0))
            continue
        y0, y1, x0, x1 = region
        out[...] = 0
        values = owner.view(owner.values[k], region)
        if shown is None:
            out[y0:y1, x0:x1] = values
        else:
            paste(out[y0:y1, x0:x1], values, shown)
    return masks, boxes
