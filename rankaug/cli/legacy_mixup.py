"""The YOLOv5-style mixup the demo sets against rankaug's: seeded alike on every rank.

YOLOv5's ``__getitem__`` mixes a mosaic with a second one,
``mixup(img, labels, *self.load_mosaic(random.randint(0, self.n - 1)))``, blending with
``r = np.random.beta(32.0, 32.0)``: both draws from the global generators, which
DataLoader workers seed with ``base_seed + worker_id``, the same on every rank that
called ``torch.manual_seed``. This module reproduces those draws without touching
global state: it draws from a private ``random.Random`` seeded exactly as PyTorch seeds
the global ``random`` in this process (``torch.initial_seed()``, which is
``base_seed + worker_id`` in a worker), so worker ``w`` of every rank mixes the same
partners with the same ratios — the bug the demo shows.
"""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

__all__ = ["SeededAlikeMixUp"]


class SeededAlikeMixUp(Dataset[dict[str, Any]]):
    """YOLOv5's mixup over a mosaic dataset, drawing as its global generators do.

    Samples are the mosaic's, with the blended image, both mosaics' boxes and labels,
    and ``"mixup": {"indices": [index, partner], "ratio": r}``.

    Args:
        mosaic: A dataset of dict mosaics of one size (``image``, ``bboxes``,
            ``labels``, ``mosaic``), such as
            :class:`~rankaug.cli.legacy.GlobalRandomMosaic`.

    >>> from rankaug.cli.legacy import GlobalRandomMosaic
    >>> from rankaug.datasets import SyntheticDetection
    >>> mixed = SeededAlikeMixUp(GlobalRandomMosaic(SyntheticDetection(4, 16), output_size=32))
    >>> sample = mixed[1]
    >>> sample["image"].shape, sample["mixup"]["indices"][0]
    ((32, 32, 3), 1)
    """

    def __init__(self, mosaic: Any) -> None:
        self.mosaic = mosaic
        self._random: tuple[int, random.Random] | None = None

    def __len__(self) -> int:
        return len(self.mosaic)

    def _generator(self) -> random.Random:
        """This process's generator, seeded as PyTorch seeds the global ``random`` here."""
        pid = os.getpid()
        if self._random is None or self._random[0] != pid:
            self._random = (pid, random.Random(torch.initial_seed()))
        return self._random[1]

    def __getitem__(self, index: int) -> dict[str, Any]:
        sample = self.mosaic[index]
        rng = self._generator()
        partner = rng.randint(0, len(self.mosaic) - 1)
        ratio = rng.betavariate(32.0, 32.0)
        other = self.mosaic[partner]
        image = (sample["image"] * ratio + other["image"] * (1.0 - ratio)).astype(np.uint8)
        mixed = {
            **sample,
            "image": image,
            "bboxes": np.concatenate((sample["bboxes"], other["bboxes"])),
            "labels": np.concatenate((sample["labels"], other["labels"])),
            "mixup": {"indices": [int(index), partner], "ratio": ratio},
        }
        outlines = [*sample.get("outlines", ()), *other.get("outlines", ())]
        if outlines:
            mixed["outlines"] = outlines
        return mixed
