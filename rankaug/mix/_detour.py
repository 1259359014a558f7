"""CopyPaste's trimmed outlines: bridges routed around the pasted pixels.

A main instance that pasted objects cover in part keeps the pixels that still show,
often in several parts (a pasted object across it) or with holes (one inside it).
:func:`~rankaug.polygons.outline` joins them by straight zero-width bridges, and the
fill draws the pixels a bridge runs through: a straight one may cross what was pasted.
:func:`outline_clear` keeps a bridge straight where the pixels it draws were not pasted
on, and otherwise routes it along a shortest 8-connected path of such pixels, through
their centres, turning where the path turns: its legs are level, upright or diagonal,
which draw exactly the pixels they join, so the polygon draws no pasted pixel. Only to
a part that pasted pixels cut off (no such path) does a bridge cross them: by a path
crossing the fewest, and the polygon is the straight-bridged outline where that draws
fewer of them (bridges that cross, each the fewest, may share fewer pixels).

>>> mask = np.zeros((3, 5), np.uint8)
>>> mask[1, [0, 4]] = 1  # two parts, a pasted pixel between them
>>> pasted = np.zeros((3, 5), np.uint8)
>>> pasted[1, 1:4] = 1
>>> polygon = outline_clear(mask, (0, 3, 0, 5), pasted, (0, 3, 0, 5), (3, 5))
>>> fill(polygon, (0, 3, 0, 5)).tolist()  # the bridge runs below them, in row 2
[[0, 0, 0, 0, 0], [1, 0, 0, 0, 1], [0, 1, 1, 1, 0]]
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from rankaug.mix._around import Point, bridged
from rankaug.mix._masks import compare
from rankaug.polygons import Region, fill, outline

__all__ = ["outline_clear"]

_KERNEL: Final = np.ones((3, 3), np.uint8)  # a step to each of the 8 neighbours
_STEPS: Final = ((1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))


def outline_clear(
    mask: np.ndarray, region: Region, pasted: np.ndarray, union: Region, hw: tuple[int, int]
) -> np.ndarray:
    """One polygon around an instance's pixels, its bridges clear of the pasted pixels.

    Args:
        mask: The instance's pixels over ``region`` (non-zero on them, none pasted on).
        region: ``(y0, y1, x0, x1)``, where ``mask`` lies in the image.
        pasted: Non-zero where something is pasted, over ``union``.
        union: The region all the pasted pixels lie in.
        hw: The image's height and width.

    Returns:
        ``(K, 2)`` float64 pixel ``x, y``, ``K >= 3``.
    """
    origin = (region[0], region[2])
    detours = _Detours(region, pasted, union, hw)
    polygon = bridged(mask, origin, detours)
    if not detours.crossed:
        return polygon
    # paths that cross pasted pixels, each the fewest: together, maybe more than the
    # straight bridges (which share pixels); the outline that draws fewer
    straight = outline(mask, origin)
    window = detours.windows[-1]
    drawn = [
        cv2.countNonZero(cv2.bitwise_and(fill(p, window), detours.walls))
        for p in (polygon, straight)
    ]
    return polygon if drawn[0] < drawn[1] else straight


class _Detours:
    """The routes of the bridges from one start pixel (:func:`outline_clear`).

    A bridge is searched for in the instance's region and a pixel around it first, then
    in the region that holds it and everything pasted, and a pixel around (free, so a
    path can go round anything pasted): each a :class:`_Paths`, made when first needed.
    """

    def __init__(self, region: Region, pasted: np.ndarray, union: Region, hw: tuple[int, int]):
        self.pasted, self.union = pasted, union
        y0, y1, x0, x1 = region
        near = (max(y0 - 1, 0), min(y1 + 1, hw[0]), max(x0 - 1, 0), min(x1 + 1, hw[1]))
        y0, y1 = min(y0, union[0]), max(y1, union[1])
        x0, x1 = min(x0, union[2]), max(x1, union[3])
        far = (max(y0 - 1, 0), min(y1 + 1, hw[0]), max(x0 - 1, 0), min(x1 + 1, hw[1]))
        self.windows = [near] if far == near else [near, far]
        self.searches: list[_Paths] = []
        self.crossed = False  # whether a bridge crosses pasted pixels

    @property
    def walls(self) -> np.ndarray:
        """The pasted pixels over the last window (255 on them)."""
        return self.searches[-1].walls

    def __call__(self, a: Point, b: Point) -> list[Point]:
        """The pixels the bridge from ``a`` to ``b`` turns at (none: straight)."""
        if self._clear(a, b):
            return []
        last = len(self.windows) - 1
        for position, window in enumerate(self.windows):
            if position == len(self.searches):
                cross = position == last  # the last one crosses what it must
                self.searches.append(_Paths(a, window, self.pasted, self.union, cross))
            search = self.searches[position]
            found = search.route(b)
            if found is not None:
                self.crossed = self.crossed or bool(
                    search.level[b[1] - window[0], b[0] - window[2]]
                )
                return found
        raise AssertionError("the last search crosses pasted pixels where it must")

    def _clear(self, a: Point, b: Point) -> bool:
        """Whether a straight bridge from ``a`` to ``b`` draws no pasted pixel."""
        union = self.union
        y0, y1 = max(min(a[1], b[1]), union[0]), min(max(a[1], b[1]) + 1, union[1])
        x0, x1 = max(min(a[0], b[0]), union[2]), min(max(a[0], b[0]) + 1, union[3])
        if y0 >= y1 or x0 >= x1:  # it misses what is pasted
            return True
        line = np.array([a, b, a], np.float64) + 0.5
        drawn = fill(
            line, (min(a[1], b[1]), max(a[1], b[1]) + 1, min(a[0], b[0]), max(a[0], b[0]) + 1)
        )
        oy, ox = min(a[1], b[1]), min(a[0], b[0])
        under = self.pasted[y0 - union[0] : y1 - union[0], x0 - union[2] : x1 - union[2]]
        return not cv2.hasNonZero(
            cv2.bitwise_and(drawn[y0 - oy : y1 - oy, x0 - ox : x1 - ox], under)
        )


class _Paths:
    """Shortest 8-connected paths from pixel ``start`` through a window's free pixels.

    The distances from the start grow, one step a round, as far as the bridges need.
    With ``cross``, where no free path reaches a pixel, a path that crosses the fewest
    pasted pixels: each time the free pixels reachable run out, the pasted pixels next to
    them are reached (one more crossed; its ``level``), and the search goes on from them.
    """

    def __init__(
        self, start: Point, window: Region, pasted: np.ndarray, union: Region, cross: bool
    ) -> None:
        y0, y1, x0, x1 = self.window = window
        free = np.ones((y1 - y0, x1 - x0), np.uint8)
        top, bottom = max(union[0], y0), min(union[1], y1)
        left, right = max(union[2], x0), min(union[3], x1)
        if top < bottom and left < right:
            under = pasted[top - union[0] : bottom - union[0], left - union[2] : right - union[2]]
            free[top - y0 : bottom - y0, left - x0 : right - x0][under != 0] = 0
        here = (start[1] - y0, start[0] - x0)
        self.walls = compare(free, cv2.CMP_EQ)  # the pasted pixels (255), never written
        self.blocked = self.walls.copy() if cross else None  # those not yet crossed into
        self.distance = np.zeros(free.shape, np.int32)  # 1 + the steps; 0: not reached
        self.level = np.zeros(free.shape, np.int32)  # the pasted pixels crossed to reach it
        self.distance[here] = 1
        free[here] = 0
        self.open: np.ndarray = free  # free and not reached yet
        self.front: np.ndarray = np.zeros_like(free)
        self.front[here] = 1
        self.steps, self.crossed = 1, 0

    def route(self, target: Point) -> list[Point] | None:
        """The pixels a shortest path to ``target`` turns at; ``None``: none reaches it."""
        y0, _, x0, _ = self.window
        x, y = target[0] - x0, target[1] - y0
        distance = self.distance
        while not distance[y, x]:
            grown = cv2.bitwise_and(cv2.dilate(self.front, _KERNEL), self.open)
            if not cv2.hasNonZero(grown):
                if self.blocked is None or not self._cross():
                    return None
                continue
            self.steps += 1
            cv2.add(distance, self.steps, dst=distance, mask=grown)
            if self.crossed:
                cv2.add(self.level, self.crossed, dst=self.level, mask=grown)
            self.open = cv2.subtract(self.open, grown)
            self.front = grown
        return [(u + x0, v + y0) for u, v in self._turns((x, y))]

    def _cross(self) -> bool:
        """Reach the pasted pixels next to those reached (``False``: there are none)."""
        assert self.blocked is not None
        reached = compare(self.distance, cv2.CMP_GT)
        seeds = cv2.bitwise_and(cv2.dilate(reached, _KERNEL), self.blocked)
        seeds = cv2.subtract(seeds, reached)
        if not cv2.hasNonZero(seeds):
            return False
        self.steps += 1
        self.crossed += 1
        cv2.add(self.distance, self.steps, dst=self.distance, mask=seeds)
        cv2.add(self.level, self.crossed, dst=self.level, mask=seeds)
        self.blocked = cv2.subtract(self.blocked, seeds)
        self.front = seeds
        return True

    def _entered(self, x: int, y: int) -> bool:
        """Whether pixel ``(x, y)`` was reached by crossing into it (a pasted one)."""
        return bool(self.walls[y, x])

    def _turns(self, target: Point) -> list[Point]:
        """The pixels a shortest path from the start to ``target`` turns at, in order."""
        distance = self.distance
        height, width = distance.shape
        x, y = target
        path = [(x, y)]
        step = _STEPS[0]
        level = self.level
        while distance[y, x] > 1:  # back to the start: the same way where it can
            d, crossed = distance[y, x], level[y, x]
            for dx, dy in (step, *_STEPS):
                u, v = x + dx, y + dy
                if not (0 <= u < width and 0 <= v < height and distance[v, u]):
                    continue
                if (distance[v, u] == d - 1 and level[v, u] == crossed) or (
                    level[v, u] == crossed - 1 and distance[v, u] < d and self._entered(x, y)
                ):
                    x, y, step = u, v, (dx, dy)
                    break
            else:
                raise AssertionError("a pixel reached has a neighbour reached before it")
            path.append((x, y))
        path.reverse()
        return [
            here
            for before, here, after in zip(path, path[1:], path[2:], strict=False)
            if (here[0] - before[0], here[1] - before[1])
            != (after[0] - here[0], after[1] - here[1])
        ]
