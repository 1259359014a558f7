"""The peers' mosaics, behind one interface, for side-by-side timing against rankaug.

Each factory takes the same list of source samples (``{"image": HxWx3 uint8, "bboxes":
float32 (N, 4) pascal_voc pixels, "labels": int64 (N,)}``, e.g. from
``benchmarks.photos.load_photos``) and returns ``step(i) -> dict``, which makes one mosaic
whose main tile is ``samples[i % len(samples)]`` and whose three partners the peer draws
itself. The returned dict has ``image`` and, except for the floor, ``bboxes`` (float32
(N, 4) xyxy pixels) and ``labels`` (int64 (N,)).

Peers:

* ``albumentations_mosaic``: albumentations' own ``A.Mosaic`` in an ``A.Compose``.
* ``ultralytics_mosaic``: ultralytics' own ``Mosaic`` (+ its ``RandomPerspective`` crop).
* ``yolov5_style_mosaic``: a minimal YOLOv5-style canvas-then-crop mosaic written here.
* ``floor_mosaic``: the lower bound: four visible regions resized straight into the output.

albumentations and ultralytics are optional: their factories raise ``PeerUnavailable`` when
the package cannot be imported (``benchmarks/requirements.txt`` installs them). Every step
is deterministic given ``seed`` and the sequence of calls.

Importing this module sets, unless already set, the environment variables that keep the
peers off the network and out of the home directory (``QUIET_ENV``). albumentations reads
``NO_ALBUMENTATIONS_UPDATE`` when it is first imported, so import this module (or set the
variable) before anything imports albumentations, rankaug included.

This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from benchmarks.peers._albumentations import albumentations_mosaic
from benchmarks.peers._common import (
    FILL,
    QUIET_ENV,
    PeerUnavailable,
    Sample,
    Step,
    peer_versions,
    square,
)
from benchmarks.peers._simple import floor_mosaic, yolov5_style_mosaic
from benchmarks.peers._ultralytics import (
    import_ultralytics,
    ultralytics_mosaic,
    ultralytics_output,
    ultralytics_settings_kept,
)

__all__ = [
    "FILL",
    "PEERS",
    "QUIET_ENV",
    "PeerUnavailable",
    "Sample",
    "Step",
    "albumentations_mosaic",
    "floor_mosaic",
    "import_ultralytics",
    "ultralytics_output",
    "ultralytics_settings_kept",
    "make_peer",
    "peer_versions",
    "ultralytics_mosaic",
    "yolov5_style_mosaic",
]


def _albumentations(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return albumentations_mosaic(samples, out_hw, seed=seed)


def _ultralytics(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return ultralytics_mosaic(samples, square(out_hw, "ultralytics"), affine=True, seed=seed)


def _yolov5_style(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return yolov5_style_mosaic(samples, square(out_hw, "yolov5_style"), rng=random.Random(seed))


def _floor(samples: Sequence[Sample], out_hw: tuple[int, int], seed: int) -> Step:
    return floor_mosaic(samples, out_hw, rng=random.Random(seed))


PEERS: dict[str, Callable[[Sequence[Sample], tuple[int, int], int], Step]] = {
    "albumentations": _albumentations,
    "ultralytics": _ultralytics,
    "yolov5_style": _yolov5_style,
    "floor": _floor,
}
"""``name -> factory(samples, out_hw, seed)``; every step's image is ``out_hw``."""


def make_peer(
    name: str,
    samples: Sequence[Sample],
    out_hw: tuple[int, int] = (640, 640),
    seed: int = 0,
) -> Step:
    """Build one peer by name with the uniform interface.

    Args:
        name: A key of ``PEERS``.
        samples: Source samples.
        out_hw: Output (height, width); the YOLO peers need it square.
        seed: Seed of the peer's draws.

    Returns:
        The peer's ``step(i)``.

    Raises:
        KeyError: Unknown name.
        PeerUnavailable: The peer's package is missing.
    """
    try:
        factory = PEERS[name]
    except KeyError:
        raise KeyError(f"unknown peer {name!r}; known: {', '.join(PEERS)}") from None
    return factory(samples, out_hw, seed)
