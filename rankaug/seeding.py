"""The usual seeding recipes, done right, for code that still draws from global state.

rankaug's wrappers never need these. They exist for code you cannot change that draws
from ``random``, ``np.random`` or torch's global generator — YOLOv5's ``load_mosaic``
takes its partners from ``random`` — and are the only place in rankaug that writes
global random state, because that is their whole job.

* :func:`seed_everything` seeds the main process. Call it with the **same** seed on
  every rank: model initialisation should match across ranks (DDP broadcasts rank 0's
  weights anyway); the data pipeline is what must differ, and that is the next point.
* :class:`WorkerSeeder` is a ``worker_init_fn`` that seeds ``random``, ``np.random`` and
  torch in each DataLoader worker from the key ``(seed, rank, worker_id, loader seed)``,
  where the loader seed is the per-iterator base seed PyTorch draws for every new
  iterator, so epochs differ with non-persistent workers. No part is added to another
  (``seed + rank`` makes run ``s`` rank 1 repeat run ``s + 1`` rank 0).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.utils.data import get_worker_info

from rankaug import checks
from rankaug.context import process_group_rank, resolve_rank
from rankaug.keys import Domain, KeyTemplate

__all__ = ["WorkerSeeder", "seed_everything"]


def seed_everything(seed: int, *, deterministic: bool = False) -> None:
    """Seed ``random``, ``np.random``, torch and every CUDA device with ``seed``.

    Args:
        seed: An integer in ``[0, 2**32)`` (the range ``np.random.seed`` takes).
        deterministic: Also ask PyTorch for deterministic algorithms
            (``torch.use_deterministic_algorithms(True)``, cuDNN deterministic and not
            benchmarking, and ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` when unset, which
            deterministic cuBLAS needs).

    Raises:
        TypeError: If ``seed`` is not an integer or ``deterministic`` not a bool.
        ValueError: If ``seed`` is out of range.

    >>> seed_everything(0)
    >>> first = random.random()
    >>> seed_everything(0)
    >>> random.random() == first
    True
    """
    seed = checks.uint(seed, "seed", 32)
    deterministic = checks.boolean(deterministic, "deterministic")
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - this function's whole job
    torch.manual_seed(seed)  # seeds CUDA devices too
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


class WorkerSeeder:
    """A rank-aware ``worker_init_fn`` that seeds each worker's global generators.

    In worker ``w`` of rank ``r``, the key ``(seed, r, w, base)`` — ``base`` being the
    DataLoader's per-iterator seed, ``get_worker_info().seed - w`` — gives a
    ``SeedSequence`` whose state words seed ``random`` (words 0..3, as one 128-bit
    integer), ``np.random`` (words 4..7) and ``torch.manual_seed`` (words 8..9, one
    64-bit integer). Then ``then(worker_id)`` runs, if given.

    The rank comes from ``rank=``, else the process group (also inside forked workers),
    else the rank recorded when the DataLoader pickled this object for spawned workers,
    else ``RANK``, else 0.

    Args:
        seed: The run's base seed, ``0 <= seed < 2**64``.
        rank: The rank, or ``None`` to resolve it.
        then: Another ``worker_init_fn`` to call afterwards.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range.

    Example:
        >>> from torch.utils.data import DataLoader
        >>> loader = DataLoader(range(8), num_workers=2, worker_init_fn=WorkerSeeder(0))
    """

    def __init__(
        self, seed: int, *, rank: int | None = None, then: Callable[[int], Any] | None = None
    ) -> None:
        self.seed = seed
        self.rank = rank
        self.then = then
        self._captured_rank: int | None = None

    @property
    def rank(self) -> int | None:
        """The rank given, or ``None`` (resolved); setting another (checked) puts it to use."""
        return self._rank

    @rank.setter
    def rank(self, rank: int | None) -> None:
        self._rank = None if rank is None else checks.uint(rank, "rank", 32)

    @property
    def then(self) -> Callable[[int], Any] | None:
        """The ``worker_init_fn`` called afterwards, or ``None``; setting one checks it."""
        return self._then

    @then.setter
    def then(self, then: Callable[[int], Any] | None) -> None:
        if then is not None:
            checks.function(then, "then", "a callable taking the worker id")
        self._then = then

    @property
    def seed(self) -> int:
        """The run's base seed; setting another (checked) puts it to use."""
        return self._seed

    @seed.setter
    def seed(self, seed: int) -> None:
        # the key's template is made from it: made again, or the old seed stays in use
        self._seed = checks.uint(seed, "seed", 64)
        self._template = KeyTemplate(Domain.WORKER_INIT, seed=self._seed)

    def state_words(self, worker_id: int, loader_seed: int, rank: int) -> np.ndarray:
        """The 10 state words that seed one worker (see the class docstring).

        Args:
            worker_id: The worker id.
            loader_seed: The DataLoader's per-iterator base seed.
            rank: The rank.

        Returns:
            ``uint32`` words.

        >>> WorkerSeeder(0).state_words(0, 123, rank=0).shape
        (10,)
        """
        words = self._template.words(rank=rank, worker_id=worker_id, loader_seed=loader_seed)
        return np.random.SeedSequence(words).generate_state(10)

    def __call__(self, worker_id: int) -> None:
        """Seed this worker's ``random``, ``np.random`` and torch (the DataLoader calls it)."""
        info = get_worker_info()
        if info is None:
            raise RuntimeError("WorkerSeeder runs inside DataLoader workers (worker_init_fn)")
        rank = resolve_rank(self.rank, self._captured_rank)
        state = self.state_words(worker_id, (info.seed - info.id) % (1 << 64), rank).tolist()
        random.seed(state[0] | state[1] << 32 | state[2] << 64 | state[3] << 96)
        np.random.seed(state[4:8])  # noqa: NPY002 - this class's whole job
        torch.manual_seed(state[8] | state[9] << 32)
        if self.then is not None:
            self.then(worker_id)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self.rank is None:
            rank = process_group_rank()
            if rank is not None:
                state["_captured_rank"] = rank
        return state
