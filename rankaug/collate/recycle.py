"""Recycled batch buffers: workers stack batches into shared memory they have used before.

``collate_detection`` in a DataLoader worker stacks each batch into freshly allocated
shared memory, and the kernel then zero-fills every page of it as it is first written:
10-14 ms for a 16-image 640x640 batch on a 2-core machine, half as long as making it. A
:class:`BatchCollator` keeps a small pool of those buffers in each worker and stacks a
batch into one the main process is done with, so the pages are allocated once.

A buffer is never written while any tensor or array on it is alive in the main process:
it returns to its pool only when the batch's last view there is garbage-collected, or
once the DataLoader's ``pin_memory`` thread has copied it. A batch kept alive keeps its
buffer; with every pooled buffer busy the worker allocates a fresh one, as
``collate_detection`` does. The mechanism is in ``rankaug/collate/_pool.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rankaug import checks
from rankaug.collate._pool import Pool, Tally, register
from rankaug.collate._read import Fields, read_batch
from rankaug.collate._write import allocate, assemble, fill, in_worker

__all__ = ["BatchCollator", "RecycleStats"]


@dataclass(frozen=True)
class RecycleStats:
    """The stacked buffers this process received from a collator's workers, by origin.

    Attributes:
        pooled: Allocated into a worker's pool (its first use).
        reused: A pooled buffer used again, after the main process released it.
        unpooled: Allocated outside the pool, because every pooled buffer was busy.
    """

    pooled: int
    reused: int
    unpooled: int

    @property
    def received(self) -> int:
        """All buffers received (a batch with masks has two: images and masks)."""
        return self.pooled + self.reused + self.unpooled


class BatchCollator:
    """:func:`~rankaug.collate_detection` that recycles batch buffers in DataLoader workers.

    Give it as ``collate_fn``. It returns what ``collate_detection`` returns; in a worker
    the stacked ``image`` (and ``mask``) go into shared-memory buffers from a pool that
    the worker keeps, each reused only after the main process has let go of the batch it
    held (every view garbage-collected, or copied to pinned memory by the DataLoader's
    ``pin_memory`` thread). Batches you keep stay intact; they just keep their buffers,
    and the worker allocates new ones meanwhile. In the main process (``num_workers=0``)
    it collates as ``collate_detection``.

    Each worker keeps at most ``buffers`` buffers (one batch of 16 640x640 RGB images is
    19.7 MB): with the default ``prefetch_factor=2`` a worker has about 4 batches out at
    a time, and each batch with masks needs 2 buffers. The pool lives as long as the
    worker (with ``persistent_workers=True``, across epochs). A batch you send on to
    another process is released when the main process lets go of it: copy it first.

    Args:
        box_field: The key of the ``(N, 4)`` boxes. Defaults to ``"bboxes"``.
        label_field: The key of the ``(N,)`` labels. Defaults to ``"labels"``.
        channels_first: Give ``HxWxC`` images as ``(B, C, H, W)`` (``CxHxW`` ones are
            refused: they stack so with ``False``). Defaults to ``False``.
        targets: Also return the float32 ``(M, 6)`` YOLOv5-style ``targets``. Defaults to
            ``True``.
        buffers: The most buffers each worker keeps; ``0`` recycles nothing. Defaults to
            ``8``.

    Raises:
        TypeError: If a field is not a string, a flag not a bool, or ``buffers`` not an
            integer.
        ValueError: If a field collides with another or with an output key, or
            ``buffers`` is negative.

    >>> from torch.utils.data import DataLoader
    >>> from rankaug.datasets import SyntheticDetection
    >>> collate = BatchCollator(buffers=4)
    >>> loader = DataLoader(SyntheticDetection(8, image_size=32, masks=False), batch_size=2,
    ...                     num_workers=2, collate_fn=collate)
    >>> [tuple(batch["image"].shape) for batch in loader][0]
    (2, 32, 32, 3)
    >>> collate.stats.received  # one image buffer per batch
    4
    """

    def __init__(
        self,
        *,
        box_field: str = "bboxes",
        label_field: str = "labels",
        channels_first: bool = False,
        targets: bool = True,
        buffers: int = 8,
    ) -> None:
        self._fields = Fields.check(box_field, label_field, channels_first, targets)
        self._buffers = checks.integer(buffers, "buffers", low=0, high=1024)
        self._tally = Tally()
        self._token = register(self._tally)
        self._pool: Pool | None = None

    @property
    def stats(self) -> RecycleStats:
        """What this process has received so far from this collator's workers."""
        return RecycleStats(**self._tally.counts)

    def __call__(self, batch: Sequence[Any]) -> dict[str, Any]:
        """Collate ``batch`` (a list of dict samples), as ``collate_detection``."""
        columns = read_batch(batch, self._fields)
        pool = self._worker_pool()
        stacked = {
            key: fill(
                pool.take(stack.shape, stack.dtype)
                if pool is not None
                else allocate(stack.shape, stack.dtype),
                stack,
            )
            for key, stack in columns.stacks.items()
        }
        return assemble(columns, self._fields, stacked)

    def _worker_pool(self) -> Pool | None:
        if self._buffers == 0 or not in_worker():
            return None
        pool = self._pool
        if pool is None or not pool.owned():  # first batch here, or a fork inherited it
            pool = self._pool = Pool(self._buffers, self._token)
        return pool

    def __getstate__(self) -> dict[str, Any]:
        # To a spawned worker: the options and the token, not the pool or the tally.
        return {"_fields": self._fields, "_buffers": self._buffers, "_token": self._token}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _tally=Tally(), _pool=None)

    def __repr__(self) -> str:
        fields = self._fields
        return (
            f"BatchCollator(box_field={fields.box_field!r}, label_field={fields.label_field!r}, "
            f"channels_first={fields.channels_first}, targets={fields.targets}, "
            f"buffers={self._buffers})"
        )
