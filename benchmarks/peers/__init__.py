"""The peers' mosaics, behind one interface, for side-by-side timing against rankaug.

Each factory takes the same list of source samples (``{"image": HxWx3 uint8, "bboxes":
float32 (N, 4) pascal_voc pixels, "labels": int64 (N,)}``, e.g. from
``benchmarks.photos.load_photos``) and returns ``step(i) -> dict``, which makes one mosaic
whose main tile is ``samples[i % len(samples)]`` and whose three partners the peer draws
itself. The returned dict has ``image`` and, except for the floor without
``targets=True``, ``bboxes`` (float32 (N, 4) xyxy pixels) and ``labels`` (int64 (N,)).

Peers:

* ``albumentations_mosaic``: albumentations' own ``A.Mosaic`` in an ``A.Compose``.
* ``ultralytics_mosaic``: ultralytics' own ``Mosaic`` (+ its ``RandomPerspective`` crop).
* ``yolov5_style_mosaic``: a minimal YOLOv5-style canvas-then-crop mosaic written here.
* ``floor_mosaic``: the lower bound: four visible regions resized straight into the output
  (with ``targets=True``, the boxes and labels mapped too, unchecked, row by row).

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

from benchmarks.peers._albumentations import albumentations_mosaic
from benchmarks.peers._common import (
    FILL,
    QUIET_ENV,
    PeerUnavailable,
    Sample,
    Step,
    peer_versions,
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
    "QUIET_ENV",
    "PeerUnavailable",
    "Sample",
    "Step",
    "albumentations_mosaic",
    "floor_mosaic",
    "import_ultralytics",
    "ultralytics_output",
    "ultralytics_settings_kept",
    "peer_versions",
    "ultralytics_mosaic",
    "yolov5_style_mosaic",
]
