"""What every rank of ``rankaug audit`` runs: load the probe's schedule, fingerprint it.

:class:`AuditJob` builds each target's dataset on a rank (from a freshly seeded state),
loads the schedule through a DataLoader whose workers each see every index in order
(:class:`_Probe` fingerprints inside the worker) and returns the records the verdicts
are drawn from (see :mod:`rankaug.cli.audit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from torch.utils.data import DataLoader, Dataset

from rankaug.boxes import as_box_array, check_box_format, to_xyxy
from rankaug.cli.adapter import AUDIT_TARGETS, KeyMap, build_adapter, reader_text
from rankaug.cli.batch_probe import batch_kind, images_only_hint, probe_batch
from rankaug.cli.failure import Failure, batch_failure, load
from rankaug.cli.fingerprint import fingerprint
from rankaug.cli.launch import only_sample, progress
from rankaug.cli.stream_probe import stream_records
from rankaug.cli.target import build_target, check_dataset
from rankaug.cli.verdicts import EpochFrom
from rankaug.epoch import index_epoch
from rankaug.sampler import EpochSampler
from rankaug.samples import DefaultAdapter, SampleAdapter
from rankaug.seeding import seed_everything
from rankaug.stream.detect import is_stream

__all__ = ["AuditConfig", "AuditJob", "ProbeItem", "RankRecords", "probe_indices"]


def probe_indices(length: int, count: int) -> list[int]:
    """``count`` distinct indices spread evenly over ``range(length)``.

    >>> probe_indices(100, 4)
    [0, 33, 66, 99]
    >>> probe_indices(3, 8)
    [0, 1, 2]
    """
    if length <= count:
        return list(range(length))
    if count == 1:
        return [0]
    return sorted({round(k * (length - 1) / (count - 1)) for k in range(count)})


@dataclass(frozen=True)
class AuditConfig:
    """How to run the audit (the CLI's options).

    Attributes:
        targets: ``module:factory`` strings, each returning a dataset; all are audited
            in the same launches, each from a freshly seeded state.
        ranks: Number of gloo ranks.
        workers: DataLoader workers per rank (0: load in the rank process).
        epochs: Epochs per run.
        persistent: ``persistent_workers``.
        start_method: ``"fork"`` or ``"spawn"`` for the workers.
        seed: The seed every rank passes to ``seed_everything`` (``torch.manual_seed``).
        probe: Number of distinct indices probed.
        repeats: Positions per index and epoch (at least 2).
        rerun: Run a second time in fresh processes to check reproducibility.
        progress: Print progress to stderr.
        epoch_from: ``"sampler"``: indices from :class:`rankaug.EpochSampler` carry the
            epoch, no ``set_epoch`` call; ``"set_epoch"``: plain indices and
            ``dataset.set_epoch(epoch)`` before every epoch.
        adapter: ``module:factory`` of a :class:`rankaug.types.SampleAdapter` (``--adapter``).
        keys: A ``--keys`` map such as ``"image=img,bboxes=bboxes,labels=cls"``.
        box_format: The format of the samples' ``bboxes`` (``--box-format``): they are
            then read as pixel xyxy (through the adapter, or the default layouts) and
            fingerprinted so, and a sample whose boxes cannot be read stops the audit
            with one line naming it.
        batch: Audit every target as a batch transform (``--batch``), not only those
            that give a kornia, torchvision v2 or ``BatchAugment`` transform
            (:mod:`rankaug.cli.batch_probe`).
        image_size: The side of the batch audit's synthetic images (``--image-size``).
        sample_id: The key of a streamed sample's id (``--sample-id``); a stream's
            samples without it are identified by their position in the pass.
    """

    targets: tuple[str, ...]
    ranks: int = 2
    workers: int = 2
    epochs: int = 2
    persistent: bool = False
    start_method: Literal["fork", "spawn"] = "fork"
    seed: int = 0
    probe: int = 8
    repeats: int = 2
    rerun: bool = True
    progress: bool = True
    epoch_from: EpochFrom = "sampler"
    adapter: str | None = None
    keys: str | None = None
    box_format: str | None = None
    batch: bool = False
    sample_id: str = "__key__"
    image_size: int = 32

    def is_batch(self, built: object) -> bool:
        """Whether a target that gave ``built`` is audited as a batch transform."""
        return self.batch or bool(batch_kind(built))

    @property
    def reader(self) -> str:
        """How samples are read, for messages (:func:`~rankaug.cli.adapter.reader_text`)."""
        return reader_text(self.adapter, self.keys)


# (index, worker id, the epoch the index carried, digest, skipped types), or a failure
ProbeItem = tuple[int, int, int | None, str, tuple[str, ...]] | Failure


class _Probe(Dataset[ProbeItem]):
    """Loads ``dataset[index]`` and fingerprints it (or what ``adapter`` reads of it)."""

    def __init__(
        self,
        dataset: Any,
        adapter: SampleAdapter | None,
        reader: str,
        box_format: str | None = None,
    ) -> None:
        self.dataset = dataset
        self.adapter = adapter
        self.reader = reader
        self.box_format = box_format
        self.targets = AUDIT_TARGETS | set(adapter.keys if isinstance(adapter, KeyMap) else ())

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> ProbeItem:
        loaded = load(self.dataset, index)
        if isinstance(loaded, Failure):
            return loaded
        worker, sample = loaded
        found = self.fingerprint(sample, index, worker)
        if isinstance(found, Failure):
            return found
        return index, worker, index_epoch(index), *found

    def fingerprint(
        self, sample: Any, index: int, worker: int
    ) -> tuple[str, tuple[str, ...]] | Failure:
        """``(digest, skipped types)`` of ``sample`` (or of what the adapter reads of it)."""
        try:
            if self.adapter is not None:
                sample, _ = self.adapter.unpack(sample, self.targets)
                sample = self._pixel_boxes(sample)
            elif self.box_format is not None:
                read, _ = DefaultAdapter().unpack(sample, ("image", "bboxes"))
                sample = (sample, self._pixel_boxes(read).get("bboxes"))
        except Exception as error:
            reader = self.reader or f"--box-format {self.box_format}"
            return Failure.of(f"reading dataset[{index}] with {reader}", index, worker, error)
        found = fingerprint(sample)
        return found.digest, found.skipped

    def _pixel_boxes(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` with its ``bboxes`` read as ``box_format``, in pixel xyxy."""
        if self.box_format is None or data.get("bboxes") is None or "image" not in data:
            return data
        height, width = np.shape(data["image"])[:2]
        boxes = np.asarray(data["bboxes"], dtype=np.float64)
        if boxes.ndim == 2 and boxes.shape[1] > 4:
            boxes = boxes[:, :4]
        fmt = check_box_format(self.box_format, name="--box-format")
        return {**data, "bboxes": to_xyxy(as_box_array(boxes), fmt, (height, width))}


# (epoch, worker, position, index, digest); for a stream the index is the sample's id
RankRecords = list[tuple[int, int, int, Any, str]]


@dataclass(frozen=True)
class AuditJob:
    """What every rank runs: build each target's dataset and fingerprint its schedule.

    A stream target (no schedule) is iterated instead (:mod:`rankaug.cli.stream_probe`).

    Every target starts from ``seed_everything(seed)``, as if its training script had
    just started, so auditing several targets together gives each the same result
    as auditing it alone. Returns, per target, ``(records, skipped type names)``.
    """

    config: AuditConfig
    schedules: tuple[tuple[int, ...], ...]
    run: int

    def __call__(self, rank: int, world_size: int) -> list[tuple[RankRecords, set[str]]]:
        """Run every target's schedule on this rank."""
        return [
            self._one(rank, target, schedule)
            for target, schedule in zip(self.config.targets, self.schedules, strict=True)
        ]

    def _one(
        self, rank: int, target: str, schedule: tuple[int, ...]
    ) -> tuple[RankRecords, set[str]]:
        config = self.config
        seed_everything(config.seed)
        built = build_target(target)
        if config.is_batch(built):
            return self._batch(rank, target, built, schedule), set()
        dataset = check_dataset(built, target, streams=True)
        if is_stream(dataset):
            return stream_records(config, dataset, target, rank, self.run)
        adapter = build_adapter(config.adapter, config.keys)
        streams = max(config.workers, 1)
        order = [index for index in schedule for _ in range(streams)]
        by_sampler = config.epoch_from == "sampler"
        loader: DataLoader[Any] = DataLoader(
            _Probe(dataset, adapter, config.reader, config.box_format),
            sampler=EpochSampler(order) if by_sampler else order,
            batch_size=1,
            num_workers=config.workers,
            persistent_workers=config.persistent and config.workers > 0,
            multiprocessing_context=config.start_method if config.workers > 0 else None,
            collate_fn=only_sample,
        )
        records: RankRecords = []
        skipped: set[str] = set()
        set_epoch = None if by_sampler else getattr(dataset, "set_epoch", None)
        for epoch in range(config.epochs):
            if callable(set_epoch):
                set_epoch(epoch)
            for k, item in enumerate(loader):
                if isinstance(item, Failure):
                    raise item.error(target, rank=rank, epoch=epoch)
                index, worker, carried, digest, types = item
                expected = k % streams if config.workers > 0 else 0
                if worker != expected or index != order[k]:
                    raise RuntimeError(
                        f"sample {k} came from worker {worker} with index {index}, expected "
                        f"worker {expected} and index {order[k]}: the DataLoader did not "
                        "hand out indices round-robin in order"
                    )
                if carried != (epoch if by_sampler else None):
                    raise RuntimeError(
                        f"sample {k} of epoch {epoch} arrived with an index carrying epoch "
                        f"{carried}"
                    )
                records.append((epoch, worker, k // streams, int(index), digest))
                skipped.update(types)
            progress(
                config.progress,
                rank,
                f"{target}: run {self.run + 1}, epoch {epoch + 1}/{config.epochs}, "
                f"{len(order)} samples fingerprinted",
            )
        return records, skipped

    def _batch(
        self, rank: int, target: str, transform: Any, schedule: tuple[int, ...]
    ) -> RankRecords:
        config = self.config
        indices = list(schedule[: len(schedule) // config.repeats])
        records: RankRecords = []
        for epoch in range(config.epochs):
            try:
                records += probe_batch(transform, indices, config.repeats, epoch, config.image_size)
            except Exception as error:  # the user's transform: one line, as a dataset's
                fed = (
                    f"the audit's batch of {len(indices)} synthetic {config.image_size}x"
                    f"{config.image_size} images"
                )
                hint = images_only_hint(transform)
                raise batch_failure(target, fed, error, rank=rank, epoch=epoch, hint=hint) from None
            progress(
                config.progress,
                rank,
                f"{target}: run {self.run + 1}, epoch {epoch + 1}/{config.epochs}, "
                f"{config.repeats} batches of {len(indices)} fingerprinted",
            )
        return records
