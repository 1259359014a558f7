"""A test module's ``gc.collect()`` calls made cheap: what lived before it is frozen.

A full collection walks every object of the pytest process (torch, hypothesis, the
suite's earlier modules: about 0.25 s alone, more late in the suite). Tests that collect
to end their own loaders' reference cycles only need this module's objects walked.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def frozen_heap() -> Iterator[None]:
    """Collect once, then freeze the heap for the module (``gc.freeze``); thaw after it.

    The first collection frees the garbage of earlier modules, as the module's first
    ``gc.collect()`` did; later ones free the module's own, and leave the frozen rest.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
