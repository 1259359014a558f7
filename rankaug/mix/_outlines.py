"""Instance polygons stacked in layers: :mod:`rankaug.mix._masks` for ``segments``.

A sample whose instances are polygons (:mod:`rankaug.polygons`) pastes and trims them
with the same layering as dense masks, but each instance's pixels are drawn only where
they are needed: its region is its polygon's bounds (exact, nothing to check), drawn
once and cut from there, and a pasted polygon that nothing covers is drawn straight
into the pasted pixels (:meth:`PolygonInstances.draw`). The output keeps polygons: an
instance that shows whole keeps its own, one that lost pixels gets the outline of what
is left (:func:`trace`).
"""

from __future__ import annotations

import cv2
import numpy as np

from rankaug.mix._around import padded
from rankaug.mix._masks import Entry, Instances, Region, overlap, within
from rankaug.polygons import Polygons, fill, gather, grids, outline, pixel_region, traced

__all__ = ["PolygonInstances", "trace"]


class PolygonInstances(Instances):
    """One sample's instance polygons, for the layering of :mod:`rankaug.mix._masks`.

    ``mirror`` reads the sample mirrored left to right (its image through :meth:`view`):
    an instance's pixels are the mirror image of those its polygon draws (its mask's,
    mirrored), and its polygon in the output (:meth:`polygon`) the mirrored one where
    that draws them, else their outline (OpenCV's slanted edges are not symmetric). Only
    where that outline has more points than an ``(N, K, 2)`` array's ``K`` (resampled,
    it would draw others) are its pixels those the mirrored polygon draws.
    """

    __slots__ = ("drawn", "grids", "outlines", "polygons", "rasters")

    exact = True

    def __init__(
        self, polygons: Polygons, boxes: np.ndarray, hw: tuple[int, int], mirror: bool
    ) -> None:
        self.hw = hw
        self.width, self.mirror = hw[1], mirror
        self.boxes = boxes
        self.rows: list[list[float]] | None = None
        self.drawn = polygons  # the rasters' polygons (mirror: their pixels mirrored)
        self.polygons = polygons.mirrored(hw[1]) if mirror else polygons
        self.regions: dict[int, Region] = {}  # each found when asked: a source pastes few
        self.counts: dict[int, int] = {}
        self.rasters: dict[int, np.ndarray] = {}
        self.outlines: dict[int, np.ndarray] = {}  # mirror: the polygons drawing them
        self.grids: np.ndarray | None = None  # an (N, K, 2) array's, made at once

    def __len__(self) -> int:
        return len(self.polygons)

    def region(self, k: int) -> Region:
        """Where polygon ``k``'s pixels can be, in the output (its bounds, rounded out)."""
        found = self.regions.get(k)
        if found is None:
            found = pixel_region(self.polygons.points[k], self.hw)
            if self.mirror:  # and the mirror image of the polygon's own region
                a0, a1, a2, a3 = found
                b0, b1, b2, b3 = pixel_region(self.drawn.points[k], self.hw)
                width = self.width
                found = (min(a0, b0), max(a1, b1), min(a2, width - b3), max(a3, width - b2))
            self.regions[k] = found
        return found

    def raster(self, k: int) -> np.ndarray:
        """Polygon ``k``'s pixels over its region (1 on them).

        Drawn once and kept; :meth:`covered` cuts a main instance's in place.
        """
        raster = self.rasters.get(k)
        if raster is None:
            y0, y1, x0, x1 = self.region(k)
            if self.mirror:
                own = fill(self.drawn.points[k], (y0, y1, self.width - x1, self.width - x0),
                           self._grid(k))  # fmt: skip
                raster = self._mirrored(k, cv2.flip(own, 1))
            else:
                raster = fill(self.drawn.points[k], (y0, y1, x0, x1), self._grid(k))
            self.rasters[k] = raster
        return raster

    def draw(self, k: int, region: Region, into: np.ndarray) -> bool:
        """Set polygon ``k``'s pixels to 1 in ``into`` (its ``region``'s, of a larger array).

        Only where no raster of it is needed: not drawn yet, and not mirrored (whose
        pixels are a raster's, flipped).

        Returns:
            Whether it drew them.
        """
        if self.mirror or k in self.rasters:
            return False
        fill(self.drawn.points[k], region, self._grid(k), into)
        return True

    def _grid(self, k: int) -> np.ndarray | None:
        """Polygon ``k``'s grid (:func:`~rankaug.polygons.grids`): every polygon's made at once."""
        made = self.grids
        if made is None:
            points = self.drawn.points
            if not isinstance(points, np.ndarray):  # a sequence: fill makes each one's
                return None
            made = self.grids = grids(points)
        grid: np.ndarray = made[k]
        return grid

    def _mirrored(self, k: int, mirror: np.ndarray) -> np.ndarray:
        """Mirrored polygon ``k``'s pixels: ``mirror``, its own pixels mirrored.

        Kept with the polygon that draws them (:meth:`polygon`); for an outline of more
        than ``K`` points, the pixels the mirrored polygon draws instead.
        """
        region = self.region(k)
        drawn = fill(self.polygons.points[k], region)
        if np.array_equal(drawn, mirror) or not cv2.hasNonZero(mirror):
            return mirror
        shape = outline(mirror, (region[0], region[2]))
        count = self.polygons.points_per
        if count is not None and len(shape) > count:
            return drawn
        self.outlines[k] = padded(shape, count)
        return mirror

    def polygon(self, k: int) -> np.ndarray:
        """Polygon ``k`` as the output gives it whole: one that draws its pixels."""
        shape = self.outlines.get(k)  # only for mirror
        own: np.ndarray = self.polygons.points[k] if shape is None else shape
        return own

    def count(self, k: int) -> int:
        """How many pixels polygon ``k`` covers in the image."""
        total = self.counts.get(k)
        if total is None:
            total = self.counts[k] = cv2.countNonZero(self.raster(k))
        return total

    def has_pixels(self, k: int) -> bool:
        """Whether polygon ``k`` draws a pixel in the image (not counted, nor always drawn).

        One whose region lies inside the image, away from its edges, does: the fill
        draws the pixels of its points (:func:`~rankaug.polygons.pixel_box`), in there.
        """
        total = self.counts.get(k)
        if total is not None:
            return total > 0
        y0, y1, x0, x1 = self.region(k)
        height, width = self.hw
        inside = y0 > 0 and x0 > 0 and y1 < height and x1 < width
        return inside or cv2.hasNonZero(self.raster(k))

    def covered(self, k: int, meet: Region, over: np.ndarray) -> int:
        """How many of polygon ``k``'s pixels in ``meet`` (in its region) ``over`` covers.

        Cuts them from its drawing at once, as :func:`trace` keeps a trimmed instance:
        its pixels are counted before (its count, if not cut yet) and after, and an
        instance that is dropped is not read again.
        """
        raster = self.raster(k)
        before = cv2.countNonZero(raster)
        self.counts.setdefault(k, before)
        if not before:
            return 0
        part = raster[within(self.regions[k], meet)]  # (found to draw it)
        made = cv2.subtract(part, over, dst=part)  # 0/1 - 0/1 saturates: 1 where it shows
        if made is not part:  # OpenCV could not write in place (it gives dst back)
            part[...] = made
        covered: int = before - cv2.countNonZero(raster)
        return covered

    def pixels(self, k: int, region: Region) -> np.ndarray:
        """Polygon ``k``'s pixels over an output region (1 on them, never written)."""
        own, raster = self.region(k), self.rasters.get(k)  # drawn once
        if raster is None:
            raster = self.raster(k)
        if region == own:
            return raster
        if (
            own[0] <= region[0]
            and region[1] <= own[1]
            and own[2] <= region[2]
            and region[3] <= own[3]
        ):
            return raster[within(own, region)]
        out = np.zeros((region[1] - region[0], region[3] - region[2]), np.uint8)
        meet = overlap(own, region)
        if meet is not None:
            out[within(region, meet)] = raster[within(own, meet)]
        return out


def trace(
    entries: list[Entry], ours: PolygonInstances, like: Polygons, other: Polygons
) -> tuple[Polygons, list[list[float]]]:
    """The output's polygons and boxes (the polygon form of :func:`~rankaug.mix._masks.stack`).

    A main instance marked trimmed has lost the pasted pixels (:meth:`PolygonInstances.covered`
    cut them): its polygon becomes the outline of what is left and its box that of the
    pixels left; a pasted instance that
    later ones partly hide (``shown`` given) gets the outline of what shows, its box that
    of its pixels. An outline in several parts joins them by straight zero-width bridges
    (:func:`~rankaug.polygons.outline`), which may draw pixels of the other image.

    Args:
        entries: The output's instances, in order.
        ours: The main sample's instances.
        like: The main sample's polygons (the output takes their form).
        other: The source's polygons.

    Returns:
        The polygons (in the main sample's form) and the boxes.
    """
    points: list[np.ndarray] = []
    boxes = []
    for owner, k, region, shown, box in entries:
        assert isinstance(owner, PolygonInstances)
        if shown is None:  # shows whole: its own polygon (or one drawing its mirrored pixels)
            points.append(owner.polygon(k))
            boxes.append(box)
            continue
        if owner is ours:  # trimmed: what the pasted pixels left (cut by covered)
            shown = owner.raster(k)  # over its region (the entry's)
        polygon, pixels = traced(shown, (region[0], region[2]))
        points.append(padded(polygon, like.points_per))  # resampled, its fill would move
        if owner is ours:  # the box of the pixels left (rankaug.polygons.pixel_box)
            x, y, w, h = cv2.boundingRect(pixels)
            box = [float(x), float(y), float(x + w), float(y + h)]
        boxes.append(box)
    return gather(points, like, other), boxes
