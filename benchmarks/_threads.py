"""The thread variables the scoreboard sets to 1 (no import of numpy, cv2 or torch here).

``benchmarks/throughput.py`` sets them before numpy, cv2 and torch are imported (the
libraries read them when their thread pools start), then calls ``cv2.setNumThreads(1)``
and ``torch.set_num_threads(1)`` (``benchmarks._bench.pin_threads``) after the peers are
imported, because importing ultralytics changes cv2's setting.

This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

__all__ = ["THREAD_VARIABLES"]

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
"""The OpenMP/BLAS thread variables, set to 1 (reported with the figures)."""
