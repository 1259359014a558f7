"""A plain polygon clipper, the oracle for boxes through affine maps (one box at a time)."""

from __future__ import annotations

from collections.abc import Sequence

Point = tuple[float, float]
Matrix = Sequence[Sequence[float]]


def mapped_corners(box: Sequence[float], matrix: Matrix) -> list[Point]:
    """The corners of an xyxy box through a 2x3 affine, going round the box."""
    (a, b, c), (d, e, f) = matrix
    x0, y0, x1, y1 = box
    return [(a * x + b * y + c, d * x + e * y + f) for x, y in ((x0, y0), (x1, y0), (x1, y1),
                                                                 (x0, y1))]  # fmt: skip


def clip_polygon(points: list[Point], window: Sequence[float]) -> list[Point]:
    """Sutherland-Hodgman: the convex polygon ``points`` cut to the window (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = window
    edges = [
        (lambda p: p[0] >= x0, lambda p, q: _at_x(p, q, x0)),
        (lambda p: p[0] <= x1, lambda p, q: _at_x(p, q, x1)),
        (lambda p: p[1] >= y0, lambda p, q: _at_y(p, q, y0)),
        (lambda p: p[1] <= y1, lambda p, q: _at_y(p, q, y1)),
    ]
    for inside, cut in edges:
        kept: list[Point] = []
        for k, point in enumerate(points):
            before = points[k - 1]
            if inside(point):
                if not inside(before):
                    kept.append(cut(before, point))
                kept.append(point)
            elif inside(before):
                kept.append(cut(before, point))
        points = kept
    return points


def enclosing(points: list[Point]) -> tuple[float, float, float, float] | None:
    """The enclosing xyxy box of some points, or None for no point."""
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def _at_x(p: Point, q: Point, x: float) -> Point:
    t = (x - p[0]) / (q[0] - p[0])
    return x, p[1] + t * (q[1] - p[1])


def _at_y(p: Point, q: Point, y: float) -> Point:
    t = (y - p[1]) / (q[1] - p[1])
    return p[0] + t * (q[0] - p[0]), y
