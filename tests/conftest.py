"""Shared test set-up. No global seeding here: rankaug must not need it."""

from __future__ import annotations

import os

# albumentations checks PyPI for a newer release on import unless told not to.
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "rankaug",
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("rankaug")
