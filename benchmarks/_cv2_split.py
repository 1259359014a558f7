"""Where an operation's time goes among OpenCV's decode, resize, warp and colour calls.

Section 6's split of each contender's ``dataset[i]``, and section 3's ``cv2.resize``;
and, for section 6, what the kernel does for it (:func:`kernel_share`: page faults and
system time, such as mapping cache files in). This is benchmark code, never imported by
rankaug.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from typing import Any

import cv2

__all__ = ["CV2_STAGES", "cv2_split", "kernel_share"]

CV2_STAGES: dict[str, tuple[str, ...]] = {
    "decode": ("imdecode", "imread"),
    "resize": ("resize",),
    "warp": ("warpAffine", "warpPerspective"),
    "colour": ("cvtColor", "LUT", "merge", "split", "transform"),
}
"""OpenCV calls timed apart in the split, by stage."""


def cv2_split(op: Callable[[int], Any], count: int) -> dict[str, float]:
    """Milliseconds per operation in all, and in OpenCV's decode, resize, warp, colour calls.

    The functions of :data:`CV2_STAGES` are replaced on the ``cv2`` module by timing
    wrappers for the duration (the code under test looks them up at each call), then
    put back. A stage that calls another (none here) would count twice.
    """
    real: dict[str, Any] = {}
    spent = dict.fromkeys(CV2_STAGES, 0.0)

    def timed(stage: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - t0

        return wrapper

    for i in range(3):  # warm up
        op(i)
    for stage, names in CV2_STAGES.items():
        for name in names:
            real[name] = getattr(cv2, name)
            setattr(cv2, name, timed(stage, real[name]))
    try:
        t0 = time.perf_counter()
        for i in range(count):
            op(3 + i)
        total = time.perf_counter() - t0
    finally:
        for name, fn in real.items():
            setattr(cv2, name, fn)
    return {"total": total / count * 1e3, **{k: v / count * 1e3 for k, v in spent.items()}}


def kernel_share(op: Callable[[int], Any], count: int) -> dict[str, float]:
    """Page faults, system and user milliseconds per operation, from this process's rusage.

    A page fault that maps a page in (a cache file's, a fresh allocation's) costs
    system time that the CPU-second rates include; on a virtual machine it can cost
    microseconds a fault. ``op(0)``, ``op(1)``, ... run ``count`` times in this process.

    >>> import mmap
    >>> def touch(i):  # 64 fresh pages, each written once: a fault each
    ...     block = mmap.mmap(-1, 64 * mmap.PAGESIZE)
    ...     for page in range(64):
    ...         block[page * mmap.PAGESIZE] = 1
    ...     block.close()
    >>> kernel_share(touch, 4)["faults"] >= 64
    True
    """
    before = resource.getrusage(resource.RUSAGE_SELF)
    for i in range(count):
        op(i)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "faults": (after.ru_minflt + after.ru_majflt - before.ru_minflt - before.ru_majflt) / count,
        "system_ms": (after.ru_stime - before.ru_stime) / count * 1e3,
        "user_ms": (after.ru_utime - before.ru_utime) / count * 1e3,
    }
