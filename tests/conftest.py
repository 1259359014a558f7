"""Shared test set-up. No global seeding here: rankaug must not need it."""

from __future__ import annotations

import os

# albumentations checks PyPI for a newer release on import unless told not to.
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "rankaug",
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("rankaug")

# The plugin that hides the framework extras runs only when asked for (-p).
collect_ignore = ["without_extras.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every ``ddp`` and ``framework`` test is ``slow`` too: the quick tier skips them."""
    for item in items:
        if item.get_closest_marker("ddp") or item.get_closest_marker("framework"):
            item.add_marker(pytest.mark.slow)
