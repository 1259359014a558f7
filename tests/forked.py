"""Run a function in a forked child (as a rank forked from one parent) and get its result."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any


def in_a_forked_child(target: Callable[..., None], *args: Any) -> Any:
    """``target(*args, queue)`` in a forked process: what it put on ``queue``."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=target, args=(*args, queue))
    child.start()
    seen = queue.get(timeout=120)
    child.join(timeout=60)
    return seen
