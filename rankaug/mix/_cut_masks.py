"""CutMix's instance masks: the main ones lose its rectangle, the partner's keep only it.

Masks follow their pixels as polygons do (:mod:`rankaug.mix._around`): an instance left
with no pixel is dropped with its box and label fields, an instance whose mask the cut
changes gets the box of its pixels left, and an untouched one keeps its box (a main
box the rectangle cuts across shrinks by the box rule only where the boxes have no
masks). A partner's mask lying inside the rectangle keeps its box clipped to it.

>>> masks = np.zeros((1, 4, 6), np.uint8)
>>> masks[0, 1:3, 1:5] = 1
>>> keep, other = np.array([True]), np.array([True])
>>> boxes = np.array([[1.0, 1.0, 5.0, 3.0], [3.0, 0.0, 5.0, 4.0]])
>>> ours, pasted = cut_masks(masks, masks, (3, 0, 6, 4), keep, other, boxes, boxes[:1])
>>> boxes.tolist()  # what each keeps: columns 1 and 2 of the main, 3 and 4 of the partner's
[[1.0, 1.0, 3.0, 3.0], [3.0, 1.0, 5.0, 3.0]]
"""

from __future__ import annotations

import numpy as np

from rankaug.mix._masks import tight_box

__all__ = ["cut_masks"]

Rect = tuple[int, int, int, int]


def cut_masks(
    main: np.ndarray,
    partner: np.ndarray,
    rect: Rect,
    keep: np.ndarray,
    other: np.ndarray,
    boxes: np.ndarray | None,
    originals: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The kept main masks without the rectangle, the partner's with only it.

    Args:
        main: The main sample's ``(N, H, W)`` instance masks.
        partner: The partner's ``(M, H, W)`` instance masks.
        rect: ``(x0, y0, x1, y1)`` in image pixels.
        keep: Which main instances the boxes keep; cleared in place for one left with
            no pixel.
        other: Which partner instances the boxes keep; cleared likewise.
        boxes: The candidate boxes (the main's, then the partner's), given the box of
            each mask's pixels where the cut changes it and, for an untouched main one,
            its own box; ``None`` leaves them (polygons give the boxes).
        originals: The main sample's boxes.

    Returns:
        The masks of the main instances ``keep`` named on entry and of the partner's
        ``other`` named, each in that order (select the kept ones by ``keep`` and
        ``other`` as they are after).
    """
    x0, y0, x1, y1 = rect
    inside = (slice(None), slice(y0, y1), slice(x0, x1))
    rows = np.flatnonzero(keep).tolist()
    ours = main[rows]  # a copy
    hit = np.any(ours[inside], axis=(1, 2)).tolist()
    ours[inside] = 0
    for j, k in enumerate(rows):
        if not hit[j]:  # untouched: its own box
            if boxes is not None:
                boxes[k] = originals[k]
        elif not ours[j].any():
            keep[k] = False
        elif boxes is not None:
            boxes[k] = tight_box(ours[j])
    cols = np.flatnonzero(other).tolist()
    pasted = np.zeros((len(cols), *main.shape[1:]), dtype=main.dtype)
    pasted[inside] = partner[(cols, *inside[1:])]
    count = len(main)
    for j, k in enumerate(cols):
        shown = np.count_nonzero(pasted[j])
        if not shown:
            other[k] = False
        elif boxes is not None and shown < np.count_nonzero(partner[k]):
            boxes[count + k] = tight_box(pasted[j])
    return ours, pasted
