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

_KERNEL: Final = np.ones((3, 3), np.uint8)  # a step to each of the 8 neighbours
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
        self.searches: list[_Paths] = []  # each window's, made when first needed
        self.crossing: _Crossing | None = None  # the last window's, made when needed
        self.crossed = False  # whether a bridge crosses pasted pixels
        self.turned = False  # whether a bridge is not straight

    @property
    def walls(self) -> np.ndarray:
        """The pasted pixels over the last window (255 on them), once a bridge crosses."""
        assert self.crossing is not None
        inside = self.crossing.walls.reshape(self.crossing.shape)[1:-1, 1:-1]
        walls: np.ndarray = inside.view(np.uint8) * np.uint8(255)
        return walls

    def __call__(self, a: Point, b: Point) -> list[Point]:
        """The pixels the bridge from ``a`` to ``b`` turns at (none: straight)."""
        if self._clear(a, b):
            return []
        if not self.windows:
            self._windows()
        for position, window in enumerate(self.windows):
            if position == len(self.searches):
                self.searches.append(_Paths(a, window, self.pasted, self.union))
            found = self.searches[position].route(b)
            if found is not None:
                self.turned = self.turned or bool(found)
                return found
        if self.crossing is None:  # the last window, crossing what it must
            self.crossing = _Crossing(self.searches[-1])
        found = self.crossing.route(b)
        if found is None:
            raise AssertionError("the last search crosses pasted pixels where it must")
        self.crossed = True
        self.turned = self.turned or bool(found)
        return found

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
    A flood fill first tells which pixels a free path reaches (``reach``). The arrays
    are flat, over the window and a border of pixels never reached.
    """

    def __init__(self, start: Point, window: Region, pasted: np.ndarray, union: Region) -> None:
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
        self.free = free  # kept as it is
        filled = np.zeros((height + 2, width + 2), np.uint8)
        seed = (start[0] - x0 + 1, start[1] - y0 + 1)
        flags = 8 | cv2.FLOODFILL_MASK_ONLY | (1 << 8)
        cv2.floodFill(free.view(np.uint8), filled, seed, 1, 0, 0, flags)
        self.reach = np.ascontiguousarray(filled[1:-1, 1:-1])  # 1 where a free path reaches
        here = self.flat(start)
        self.distance = np.zeros(height * width, np.int32)  # 1 + the steps; 0: not reached
        self.distance[here] = 1
        self.open = self.reach.ravel() != 0  # a free path reaches it, not reached yet
        self.open[here] = False
        self.front = np.array([here], np.intp)
        self.steps = 1
        self.offsets = np.array([dy * width + dx for dx, dy in _STEPS], np.intp)
        self.seen = np.zeros(height * width, np.int32)  # for :func:`_next`
        self.orders = np.arange(256, dtype=np.int32)  # for :meth:`grow`

    def route(self, target: Point) -> list[Point] | None:
        """The pixels a shortest path to ``target`` turns at; ``None``: none reaches it."""
        at = self.flat(target)
        if not self.reach.ravel()[at]:
            return None
        self.grow(at)
        return self.points(self.back(at, 0, True, []))

    def flat(self, pixel: Point) -> int:
        """The flat index of an image pixel in the window."""
        return (pixel[1] - self.window[0] + 1) * self.width + pixel[0] - self.window[2] + 1

    def points(self, turns: list[int]) -> list[Point]:
        """Image pixels of flat ones found back from a target: in order, from the start."""
        y0, _, x0, _ = self.window
        return [(at % self.width + x0 - 1, at // self.width + y0 - 1) for at in reversed(turns)]

    def grow(self, at: int) -> None:
        """Search on until flat pixel ``at`` (one a free path reaches) is reached."""
        distance, among, seen, offsets = self.distance, self.open, self.seen, self.offsets
        front, steps, orders = self.front, self.steps, self.orders
        while not distance[at]:  # rounds of _next, inlined
            out = (front[:, None] + offsets).ravel()
            out = out[among[out]]
            if not out.size:
                raise AssertionError("a free path reaches the pixel")
            among[out] = False
            if out.size > orders.size:
                orders = self.orders = np.arange(2 * out.size, dtype=np.int32)
            order = orders[: out.size]
            seen[out] = order
            front = out[seen[out] == order]
            steps += 1
            distance[front] = steps
        self.front, self.steps = front, steps

    def back(self, at: int, way: int, first: bool, turns: list[int]) -> list[int]:
        """``turns`` and the pixels a shortest path turns at, back from flat ``at`` (reached).

        Each pixel steps to a neighbour reached a step before it, the same way as the
        last step (``way``, an index of :data:`_STEPS`) where it can, else the first such
        of :data:`_STEPS`; along one way, as far as it goes at once. ``first``: ``at`` is
        the target (no turn there).
        """
        distance, offsets = self.distance, self.offsets
        while distance[at] > 1:
            d = distance[at]
            for k in (way, *range(8)):
                near = at + offsets[k]
                if distance[near] == d - 1:
                    break
            else:
                raise AssertionError("a pixel reached has a neighbour reached before it")
            if k != way and not first:
                turns.append(at)
            first, way = False, k
            at = int(near) + int(offsets[k]) * _run(distance, None, int(near), k, self.shape)
        return turns


class _Crossing:
    """Paths from the start of a last window's :class:`_Paths` across the fewest pasted pixels.

    For the targets no free path reaches. The pixels a free path reaches are those of
    level 0; each time those reachable run out, the pasted pixels next to the pixels
    reached so far are reached (one level more), and the search goes on from them
    through free pixels (a step a round, as in :class:`_Paths`). Back from a target, a
    pasted pixel crossed into steps to a neighbour of the level below; at level 0 the
    free search takes the path on.
    """

    def __init__(self, paths: _Paths) -> None:
        self.paths, self.shape = paths, paths.shape
        reach = paths.reach
        walls = ~paths.free  # the pasted pixels, not the border
        walls[[0, -1]] = walls[:, [0, -1]] = False
        seeds = cv2.bitwise_and(cv2.dilate(reach, _KERNEL), walls.view(np.uint8))
        self.walls = walls.ravel()
        self.blocked = self.walls.copy()  # not yet crossed into
        self.open = (paths.free & (reach == 0)).ravel()  # free, not reached yet
        size = reach.size
        self.distance = np.zeros(size, np.int32)  # 1 + the steps from level 1; 0: not
        self.level = np.zeros(size, np.int32)  # pasted pixels crossed to reach it (0: none)
        self.front = np.flatnonzero(seeds)
        self.blocked[self.front] = False
        self.distance[self.front] = self.level[self.front] = 1
        self.fresh = [self.front]  # the pixels reached since the last crossing
        self.steps, self.crossed = 1, 1

    def route(self, target: Point) -> list[Point] | None:
        """The pixels a path to ``target`` turns at, across the fewest pasted pixels."""
        at = self.paths.flat(target)
        paths, distance, level = self.paths, self.distance, self.level
        seen, offsets = paths.seen, paths.offsets
        while not distance[at]:
            if not self.front.size:
                return None
            grown = _next(self.front, self.open, offsets, seen)
            if not grown.size:  # cross into the next pasted pixels
                grown = _next(np.concatenate(self.fresh), self.blocked, offsets, seen)
                self.crossed += 1
                self.fresh = []
            self.steps += 1
            distance[grown] = self.steps
            level[grown] = self.crossed
            self.fresh.append(grown)
            self.front = grown
        # back to level 0, then the free search's way
        reach, walls, way, first, turns = paths.reach.ravel(), self.walls, 0, True, []
        while level[at]:
            d, crossed = distance[at], level[at]
            for k in (way, *range(8)):
                near = at + offsets[k]
                if level[near] == 0:  # of level 0 (reached) or not reached
                    if crossed == 1 and walls[at] and reach[near]:
                        break
                elif (distance[near] == d - 1 and level[near] == crossed) or (
                    level[near] == crossed - 1 and distance[near] < d and walls[at]
                ):
                    break
            else:
                raise AssertionError("a pixel reached has a neighbour reached before it")
            if k != way and not first:
                turns.append(at)
            first, way, at = False, k, int(near)
            if level[at]:
                at += int(offsets[k]) * _run(distance, level, at, k, self.shape)
        paths.grow(at)
        return paths.points(paths.back(at, way, first, turns))


def _next(
    pixels: np.ndarray, among: np.ndarray, offsets: np.ndarray, seen: np.ndarray
) -> np.ndarray:
    """The neighbours of ``pixels`` true in ``among``, each once; made false there.

    ``seen``: an int32 scratch array as large as ``among``.
    """
    out = (pixels[:, None] + offsets).ravel()
    out = out[among[out]]
    among[out] = False
    order = np.arange(out.size, dtype=np.int32)
    seen[out] = order
    kept: np.ndarray = out[seen[out] == order]
    return kept


def _run(
    distance: np.ndarray, level: np.ndarray | None, at: int, way: int, shape: tuple[int, int]
) -> int:
    """How many steps on from flat ``at``, along ``way``, each a step nearer (its level)."""
    height, width = shape
    d = int(distance[at])
    dx, dy = _STEPS[way]
    y, x = divmod(at, width)
    room = min(
        d - 1,
        (width - 1 - x if dx > 0 else x) if dx else d,
        (height - 1 - y if dy > 0 else y) if dy else d,
    )
    ahead = np.arange(1, room + 1)
    ray = at + (dy * width + dx) * ahead
    off = distance[ray] != d - ahead
    if level is not None:
        off |= level[ray] != level[at]
    stop = np.flatnonzero(off)
    return int(stop[0]) if stop.size else room
