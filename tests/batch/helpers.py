"""What the batch tests share: seeded images, and a snapshot of every global generator."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch


def images(size: int, side: int = 24) -> torch.Tensor:
    """``(size, 3, side, side)`` noise from a generator of its own (seeded with ``size``)."""
    return torch.rand(size, 3, side, side, generator=torch.Generator().manual_seed(size))


def global_states() -> tuple[torch.Tensor, Any, Any]:
    """torch's CPU generator, numpy's legacy global state and ``random``'s, as they are."""
    legacy = np.random.get_state()  # noqa: NPY002 (the legacy global state is the point)
    return torch.get_rng_state(), legacy, random.getstate()


def assert_unchanged(before: tuple[torch.Tensor, Any, Any]) -> None:
    """Assert every global generator is where :func:`global_states` found it."""
    cpu, numpy_state, python_state = before
    after: Any = np.random.get_state()  # noqa: NPY002 (the legacy global state is the point)
    assert torch.equal(cpu, torch.get_rng_state())
    assert python_state == random.getstate()
    assert numpy_state[0] == after[0]
    assert np.array_equal(numpy_state[1], after[1])
    assert numpy_state[2:] == after[2:]
