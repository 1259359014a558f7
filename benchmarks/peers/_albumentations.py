"""albumentations' own ``A.Mosaic`` in an ``A.Compose``."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from benchmarks._same_work import tagged
from benchmarks.peers._common import PeerUnavailable, Sample, Step, check_samples

__all__ = ["albumentations_mosaic"]


def albumentations_mosaic(
    samples: Sequence[Sample],
    out_hw: tuple[int, int] = (640, 640),
    *,
    cell_hw: tuple[int, int] | None = None,
    seed: int = 0,
    grid: tuple[int, int] = (2, 2),
    fit_mode: str = "cover",
) -> Step:
    """Run albumentations' ``A.Mosaic`` (2x2 grid by default) inside an ``A.Compose`` with boxes.

    Three partners per call (``rows * cols - 1`` with another ``grid``) are drawn from a
    local ``random.Random(seed)`` (with replacement, like YOLOv5) and handed over through
    ``mosaic_metadata``; with exactly that many items ``A.Mosaic`` uses them all and only
    shuffles their cells. Each cell is ``cell_hw``
    (default ``out_hw``, so that a tile is about as big as in the YOLO peers), filled with
    ``fit_mode`` (albumentations' default ``"cover"``: the tile covers its cell, cropped;
    ``"contain"``: it fits in it, aspect kept, as YOLO's tiles fit in the output), and the
    output is ``out_hw``: a window of it meets at most two cells per axis when the cell is
    the output's size, three when it is between a third and half of it.
    ``A.Compose(seed=seed)`` makes the rest of the draws reproducible.

    Args:
        samples: Source samples.
        out_hw: Output (height, width), ``A.Mosaic``'s ``target_size``.
        cell_hw: ``A.Mosaic``'s ``cell_shape``; ``None`` for ``out_hw``.
        seed: Seed of the partner draws and of the ``Compose``.
        grid: ``A.Mosaic``'s ``grid_yx`` (rows, columns).
        fit_mode: ``A.Mosaic``'s ``fit_mode``, ``"cover"`` or ``"contain"``.

    Returns:
        ``step(i)``: ``{"image", "bboxes", "labels"}`` of one ``out_hw`` mosaic.

    Raises:
        PeerUnavailable: albumentations cannot be imported.
    """
    n = check_samples(samples)
    try:
        import albumentations as A
    except ImportError as exc:
        raise PeerUnavailable(
            "albumentations", f"{exc} (pip install 'albumentations==2.0.8')"
        ) from exc

    transform = A.Compose(
        [
            A.Mosaic(
                grid_yx=tuple(grid),
                target_size=tuple(out_hw),
                cell_shape=tuple(cell_hw or out_hw),
                fit_mode=fit_mode,
                p=1.0,
            )
        ],
        bbox_params=A.BboxParams("pascal_voc", label_fields=["labels"]),
        seed=seed,
    )
    rng = random.Random(seed)
    population = range(n)
    k_partners = int(grid[0]) * int(grid[1]) - 1

    def step(i: int) -> dict[str, np.ndarray]:
        main = samples[i % n]
        partners = [samples[j] for j in rng.choices(population, k=k_partners)]
        out = transform(
            image=main["image"],
            bboxes=main["bboxes"],
            labels=main["labels"],
            mosaic_metadata=partners,
        )
        return {
            "image": out["image"],
            "bboxes": np.asarray(out["bboxes"], dtype=np.float32).reshape(-1, 4),
            "labels": np.asarray(out["labels"], dtype=np.int64).reshape(-1),
        }

    return tagged(step, transform)
