"""What every peer shares: the sample and step types, the quiet environment, errors."""

from __future__ import annotations

import importlib.metadata
import os
import tempfile
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "FILL",
    "QUIET_ENV",
    "PeerUnavailable",
    "Sample",
    "Step",
    "check_samples",
    "peer_versions",
]

Sample = dict[str, np.ndarray]
"""``{"image": HxWx3 uint8, "bboxes": float32 (N, 4) xyxy pixels, "labels": int64 (N,)}``."""

Step = Callable[[int], dict[str, np.ndarray]]
"""``step(i)`` makes one mosaic whose main tile is sample ``i % len(samples)``."""

FILL = 114
"""YOLO's grey for the canvas and for everything no tile covers."""

QUIET_ENV: dict[str, str] = {
    # albumentations: no version check against the package index at import.
    "NO_ALBUMENTATIONS_UPDATE": "1",
    # ultralytics: is_online() answers False at once (no DNS look-ups of one.one.one.one and
    # dns.google at import), so no Sentry and no hub traffic either.
    "YOLO_OFFLINE": "1",
    # ultralytics writes settings.json at import; keep it out of ~/.config/Ultralytics.
    "YOLO_CONFIG_DIR": os.path.join(tempfile.gettempdir(), f"rankaug-bench-yolo-{os.getuid()}"),
    # ultralytics: no "Creating new Ultralytics Settings" banner, no pip auto-installs.
    "YOLO_VERBOSE": "False",
    "YOLO_AUTOINSTALL": "False",
}
"""Environment defaults set (``os.environ.setdefault``) when this module is imported."""

for _key, _value in QUIET_ENV.items():
    os.environ.setdefault(_key, _value)


class PeerUnavailable(RuntimeError):
    """A peer's package is missing or cannot be imported here.

    Attributes:
        name: The peer (``"albumentations"``, ``"ultralytics"``).
        reason: Why it is unavailable, with the install hint.
    """

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"peer {name!r} unavailable: {reason}")
        self.name = name
        self.reason = reason


def peer_versions() -> dict[str, str | None]:
    """Return the installed versions of the peers' packages, ``None`` where missing.

    Returns:
        ``{"albumentations": "2.0.8", "ultralytics": "8.4.190", ...}``; reads package
        metadata only, imports nothing.
    """
    out: dict[str, str | None] = {}
    for dist in ("albumentations", "ultralytics", "opencv-python-headless", "numpy", "torch"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def check_samples(samples: Sequence[Sample]) -> int:
    """Validate the source samples and return how many there are."""
    if len(samples) == 0:
        raise ValueError("need at least one source sample")
    for k, s in enumerate(samples):
        img = s["image"]
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise ValueError(f"sample {k}: image must be HxWx3 uint8, got {img.dtype} {img.shape}")
    return len(samples)
