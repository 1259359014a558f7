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
>>> polygon, box = outline_clear(mask, (0, 3, 0, 5), pasted, (0, 3, 0, 5), (3, 5))
>>> fill(polygon, (0, 3, 0, 5)).tolist()  # the bridge runs below them, in row 2
[[0, 0, 0, 0, 0], [1, 0, 0, 0, 1], [0, 1, 1, 1, 0]]
>>> box  # the pixels', not the bridge's
[0.0, 1.0, 5.0, 2.0]
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from rankaug.mix._around import Point, bridged
from rankaug.mix._masks import tight_box
from rankaug.polygons import Region, fill, outline

__all__ = ["outline_clear"]

_STEPS: Final = ((1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))


def outline_clear(
    mask: np.ndarray, region: Region, pasted: np.ndarray, union: Region, hw: tuple[int, int]
) -> tuple[np.ndarray, list[float]]:
    """One polygon around an instance's pixels, its bridges clear of the pasted pixels.

    Args:
        mask: The instance's pixels over ``region`` (non-zero on them, none pasted on).
        region: ``(y0, y1, x0, x1)``, where ``mask`` lies in the image.
        pasted: Non-zero where something is pasted, over ``union``.
        union: The region all the pasted pixels lie in.
        hw: The image's height and width.

    Returns:
        ``(K, 2)`` float64 pixel ``x, y``, ``K >= 3``, and the pixels' ``xyxy`` box.
    """
    origin = (region[0], region[2])
    detours = _Detours(region, pasted, union, hw)
    polygon = bridged(mask, origin, detours)
    if detours.crossed:
        # paths that cross pasted pixels, each the fewest: together, maybe more than the
        # straight bridges (which share pixels); the outline that draws fewer
        straight = outline(mask, origin)
        window = detours.windows[-1]
        drawn = [
            cv2.countNonZero(cv2.bitwise_and(fill(p, window), detours.walls))
            for p in (polygon, straight)
        ]
        polygon = polygon if drawn[0] < drawn[1] else straight
    if detours.turned:  # a detour may leave the pixels' box
        return polygon, tight_box(mask, origin)
    # straight bridges join points of its outline (pixel centres): their box, the pixels'
    x, y, w, h = cv2.boundingRect(polygon.astype(np.float32))  # floor(c + 0.5) = c
    return polygon, [float(x), float(y), float(x + w), float(y + h)]


class _Detours:
    """The routes of the bridges from one start pixel (:func:`outline_clear`).

    A bridge is searched for in the instance's region and a pixel around it first, then
    in the region that holds it and everything pasted, and a pixel around (free, so a
    path can go round anything pasted): each a :class:`_Paths`, made when first needed.
    """

    def __init__(self, region: Region, pasted: np.ndarray, union: Region, hw: tuple[int, int]):
        self.pasted, self.union, self.region, self.hw = pasted, union, region, hw
        self.windows: list[Region] = []  # made with the first search
        self.searches: list[_Paths] = []
        self.crossed = False  # whether a bridge crosses pasted pixels
        self.turned = False  # whether a bridge is not straight

    @property
    def walls(self) -> np.ndarray:
        """The pasted pixels over the last window (255 on them)."""
        search = self.searches[-1]
        assert search.walls is not None  # the last search crosses
        walls: np.ndarray = search.walls.reshape(search.shape)[1:-1, 1:-1].view(np.uint8) * 255
        return walls

    def __call__(self, a: Point, b: Point) -> list[Point]:
        """The pixels the bridge from ``a`` to ``b`` turns at (none: straight)."""
        if self._clear(a, b):
            return []
        if not self.windows:
            self._windows()
        last = len(self.windows) - 1
        for position, window in enumerate(self.windows):
            if position == len(self.searches):
                cross = position == last  # the last one crosses what it must
                self.searches.append(_Paths(a, window, self.pasted, self.union, cross))
            search = self.searches[position]
            found = search.route(b)
            if found is not None:
                self.crossed = self.crossed or search.crossed_to(b)
                self.turned = self.turned or bool(found)
                return found
        raise AssertionError("the last search crosses pasted pixels where it must")

    def _windows(self) -> None:
        """The instance's region and a pixel around, then the one that holds everything."""
        (y0, y1, x0, x1), union, hw = self.region, self.union, self.hw
        near = (max(y0 - 1, 0), min(y1 + 1, hw[0]), max(x0 - 1, 0), min(x1 + 1, hw[1]))
        y0, y1 = min(y0, union[0]), max(y1, union[1])
        x0, x1 = min(x0, union[2]), max(x1, union[3])
        far = (max(y0 - 1, 0), min(y1 + 1, hw[0]), max(x0 - 1, 0), min(x1 + 1, hw[1]))
        self.windows = [near] if far == near else [near, far]

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

    A breadth-first search, as far as the bridges need: each round reaches the free
    pixels next to those the last one reached (a list of them, not the whole window).
    Unless ``cross``, a flood fill first tells whether a free path reaches a pixel at
    all. With ``cross``, where none does, a path that crosses the fewest pasted pixels:
    each time the free pixels reachable run out, the pasted pixels next to those reached
    are reached (one more crossed; its ``level``), and the search goes on from them.
    The arrays are flat, over the window and a border of pixels never reached.
    """

    def __init__(
        self, start: Point, window: Region, pasted: np.ndarray, union: Region, cross: bool
    ) -> None:
        y0, y1, x0, x1 = self.window = window
        height, width = y1 - y0 + 2, x1 - x0 + 2
        free = np.zeros((height, width), np.bool_)
        free[1:-1, 1:-1] = True
        top, bottom = max(union[0], y0), min(union[1], y1)
        left, right = max(union[2], x0), min(union[3], x1)
        if top < bottom and left < right:
            under = pasted[top - union[0] : bottom - union[0], left - union[2] : right - union[2]]
            free[top - y0 + 1 : bottom - y0 + 1, left - x0 + 1 : right - x0 + 1][under != 0] = 0
        self.shape, self.width = (height, width), width
        self.reach: np.ndarray | None = None  # where a free path reaches
        self.walls: np.ndarray | None = None  # the pasted pixels
        self.blocked: np.ndarray | None = None  # those not yet crossed into
        self.level: np.ndarray | None = None  # the pasted pixels crossed to reach each
        if cross:
            self.walls = ~free
            self.walls[[0, -1]] = self.walls[:, [0, -1]] = False
            self.walls = self.walls.ravel()
            self.blocked = self.walls.copy()
            self.level = np.zeros(height * width, np.int32)
        else:
            filled = np.zeros((height + 2, width + 2), np.uint8)
            seed = (start[0] - x0 + 1, start[1] - y0 + 1)
            flags = 8 | cv2.FLOODFILL_MASK_ONLY | (1 << 8)
            cv2.floodFill(free.view(np.uint8), filled, seed, 1, 0, 0, flags)
            self.reach = filled[1:-1, 1:-1].ravel()
        here = self._flat(start)
        self.distance = np.zeros(height * width, np.int32)  # 1 + the steps; 0: not reached
        self.distance[here] = 1
        self.open = free.ravel()  # free and not reached yet (free's own memory)
        self.open[here] = False
        self.front = np.array([here], np.intp)
        self.fresh = [self.front]  # the pixels reached since the last crossing
        self.steps, self.crossed = 1, 0
        self.offsets = np.array([dy * width + dx for dx, dy in _STEPS], np.intp)
        self._seen = np.zeros(height * width, np.int32)  # for :meth:`_next`
        self._order = np.arange(1024, dtype=np.int32)

    def route(self, target: Point) -> list[Point] | None:
        """The pixels a shortest path to ``target`` turns at; ``None``: none reaches it."""
        y0, _, x0, _ = self.window
        at = self._flat(target)
        if self.reach is not None and not self.reach[at]:
            return None
        while not self._grow(at):
            if self.blocked is None or not self._cross():
                return None
        return [(x + x0 - 1, y + y0 - 1) for x, y in self._turns(at)]

    def crossed_to(self, target: Point) -> bool:
        """Whether the path to ``target`` (reached) crosses pasted pixels."""
        return self.level is not None and bool(self.level[self._flat(target)])

    def _flat(self, pixel: Point) -> int:
        """The flat index of an image pixel in the window."""
        return (pixel[1] - self.window[0] + 1) * self.width + pixel[0] - self.window[2] + 1

    def _grow(self, at: int) -> bool:
        """Search on until flat pixel ``at`` is reached (``False``: the free pixels ran out).

        Rounds of :meth:`_next` (inlined), each the pixels one step further.
        """
        distance, level, crossed, fresh = self.distance, self.level, self.crossed, self.fresh
        among, seen, offsets, orders = self.open, self._seen, self.offsets, self._order
        front, steps = self.front, self.steps
        try:
            while not distance[at]:
                out = (front[:, None] + offsets).ravel()
                out = out[among[out]]
                if not out.size:
                    return False
                among[out] = False
                if out.size > orders.size:
                    orders = self._order = np.arange(2 * out.size, dtype=np.int32)
                order = orders[: out.size]
                seen[out] = order
                front = out[seen[out] == order]
                steps += 1
                distance[front] = steps
                if level is not None:
                    fresh.append(front)
                    if crossed:
                        level[front] = crossed
        finally:
            self.front, self.steps = front, steps
        return True

    def _next(self, pixels: np.ndarray, among: np.ndarray) -> np.ndarray:
        """The neighbours of ``pixels`` true in ``among``, each once; made false there."""
        out = (pixels[:, None] + self.offsets).ravel()
        out = out[among[out]]
        among[out] = False
        if out.size > self._order.size:
            self._order = np.arange(2 * out.size, dtype=np.int32)
        order = self._order[: out.size]
        self._seen[out] = order
        kept: np.ndarray = out[self._seen[out] == order]
        return kept

    def _cross(self) -> bool:
        """Reach the pasted pixels next to those reached (``False``: there are none)."""
        assert self.blocked is not None
        assert self.level is not None
        seeds = self._next(np.concatenate(self.fresh), self.blocked)
        if not seeds.size:
            return False
        self.steps += 1
        self.crossed += 1
        self.distance[seeds] = self.steps
        self.level[seeds] = self.crossed
        self.front = seeds
        self.fresh = [seeds]
        return True

    def _turns(self, at: int) -> list[tuple[int, int]]:
        """The pixels (``x, y`` in the bordered window) a path to flat ``at`` turns at.

        Back from ``at`` to the start, each pixel steps to a neighbour reached a step
        before it at its level (or, a pasted pixel crossed into, to one reached before
        it a level lower), the same way as the last step where it can, else the first
        such of :data:`_STEPS`; along one way, as far as it goes at once. In order.
        """
        distance, offsets = self.distance, self.offsets
        level = self.level if self.level is not None else np.zeros(1, np.int32)
        walls = self.walls if self.walls is not None else np.zeros(1, np.bool_)
        flat = self.level is None  # every level 0: one compared less
        height, width = self.shape
        way, turns, first = 0, [], True
        while distance[at] > 1:
            d = distance[at]
            crossed = 0 if flat else level[at]
            for k in (way, *range(8)):
                near = at + offsets[k]
                if flat:
                    if distance[near] == d - 1:
                        break
                elif distance[near] and (
                    (distance[near] == d - 1 and level[near] == crossed)
                    or (level[near] == crossed - 1 and distance[near] < d and walls[at])
                ):
                    break
            else:
                raise AssertionError("a pixel reached has a neighbour reached before it")
            if k != way and not first:
                turns.append(at)
            first, way = False, k
            at = int(near)
            # on along that way while each pixel is a step nearer at the same level
            d = int(distance[at])
            dx, dy = _STEPS[k]
            y, x = divmod(at, width)
            room = min(
                d - 1,
                (width - 1 - x if dx > 0 else x) if dx else d,
                (height - 1 - y if dy > 0 else y) if dy else d,
            )
            ahead = np.arange(1, room + 1)
            ray = at + offsets[k] * ahead
            off = distance[ray] != d - ahead
            if not flat:
                off |= level[ray] != level[at]
            stop = np.flatnonzero(off)
            at += int(offsets[k]) * (int(stop[0]) if stop.size else room)
        turns.reverse()
        return [(at % width, at // width) for at in turns]
