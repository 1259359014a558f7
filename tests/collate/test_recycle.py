"""Tests for rankaug.collate.recycle: BatchCollator and RecycleStats, with real workers."""

from __future__ import annotations

import copy
import pickle
import sys
import threading
from collections.abc import Iterator
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np
import pytest
import torch
import torch.multiprocessing
from torch.utils.data import DataLoader, Dataset

from rankaug import MosaicDataset, collate_detection
from rankaug.collate import BatchCollator, RecycleStats, _pool, _route
from rankaug.datasets import SyntheticDetection
from tests.collate.test_init import fetched_descriptors

BATCH = 4


class Numbered(Dataset[dict[str, Any]]):
    """Sample ``i``: an image and a mask filled with ``i % 251``, one box labelled ``i``."""

    def __init__(self, length: int = 96, masks: bool = False) -> None:
        self.length = length
        self.masks = masks

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> dict[str, Any]:
        value = index % 251
        sample = {
            "image": np.full((8, 10, 3), value, np.uint8),
            "bboxes": np.array([[0, 0, 4, 4]], np.float32),
            "labels": np.array([index], np.int64),
        }
        if self.masks:
            sample["mask"] = np.full((8, 10), value, np.uint8)
        return sample


class BigEndian(Dataset[dict[str, Any]]):
    """Sample ``i``: a big-endian uint16 image filled with ``1000 * i``, one box."""

    def __len__(self) -> int:
        return 24

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {
            "image": np.full((8, 10, 3), 1000 * index, ">u2"),
            "bboxes": np.array([[0, 0, 4, 4]], np.float32),
            "labels": np.array([index], np.int64),
        }


def expected_image(step: int, epoch_length: int) -> np.ndarray:
    first = (step * BATCH) % epoch_length
    values = np.arange(first, first + BATCH) % 251
    return np.broadcast_to(values[:, None, None, None], (BATCH, 8, 10, 3)).astype(np.uint8)


def loader(
    collate: Any, dataset: Dataset[Any] | None = None, workers: int = 2, **options: Any
) -> DataLoader[Any]:
    return DataLoader(
        dataset or Numbered(), batch_size=BATCH, num_workers=workers, collate_fn=collate, **options
    )


@pytest.fixture
def file_system_sharing() -> Iterator[None]:
    before = torch.multiprocessing.get_sharing_strategy()
    torch.multiprocessing.set_sharing_strategy("file_system")
    try:
        yield
    finally:
        torch.multiprocessing.set_sharing_strategy(before)


def hold_and_drop(batches: Any, length: int) -> tuple[list[tuple[Any, Any]], int]:
    """Keep whole batches, slices and numpy views of three batches in four; drop the rest.

    Returns the held items with a deep copy of each taken on arrival, and the batch count.
    """
    held: list[tuple[Any, Any]] = []
    count = 0
    for step, batch in enumerate(batches):
        count += 1
        assert batch["image"].is_shared()
        assert np.array_equal(batch["image"].numpy(), expected_image(step, length))
        kind = step % 4
        if kind == 0:
            held.append((batch, copy.deepcopy(batch)))
        elif kind == 1:
            part = batch["image"][1:3, 2:]
            held.append((part, part.clone()))
        elif kind == 2:
            array = batch["image"].numpy()[BATCH - 1]
            held.append((array, array.copy()))
    return held, count


def unchanged(held: list[tuple[Any, Any]]) -> list[int]:
    """Positions of held items that differ from their copy on arrival."""
    changed = []
    for position, (item, original) in enumerate(held):
        if isinstance(item, dict):
            same = all(
                torch.equal(item[k], original[k]) if isinstance(item[k], torch.Tensor)
                else item[k] == original[k]
                for k in item
            )  # fmt: skip
        else:
            same = np.array_equal(np.asarray(item), np.asarray(original))
        if not same:
            changed.append(position)
    return changed


class TestBatchCollator:
    @pytest.mark.parametrize(
        ("context", "persistent", "workers"),
        # one spawned worker: each imports torch, and the fork cases have two
        [
            ("fork", True, 2),
            ("fork", False, 2),
            pytest.param("spawn", True, 1, marks=pytest.mark.slow),
        ],
    )
    def test_held_batches_never_change_while_buffers_are_recycled(
        self, context: str, persistent: bool, workers: int
    ) -> None:
        collate = BatchCollator(buffers=4)
        data = loader(
            collate, workers=workers, multiprocessing_context=context, persistent_workers=persistent
        )
        held, count = hold_and_drop((batch for _ in range(2) for batch in data), 96)
        assert count == 48
        assert len(held) == 36
        assert unchanged(held) == []
        stats = collate.stats
        assert stats.received == 48
        assert stats.reused > 0  # released buffers were written again...
        assert stats.unpooled > 0  # ...and busy ones never: fresh ones were made meanwhile
        assert stats.pooled <= 4 * workers * (1 if persistent else 2)  # 4 per worker

    @pytest.mark.usefixtures("file_system_sharing")
    def test_file_system_sharing(self) -> None:
        collate = BatchCollator(buffers=4)
        held, _ = hold_and_drop(loader(collate, persistent_workers=True), 96)
        assert unchanged(held) == []
        assert collate.stats.reused > 0

    @pytest.mark.skipif(not torch.accelerator.is_available(), reason="pin_memory needs a GPU")
    def test_pinned_copies_release_their_buffers(self) -> None:
        collate = BatchCollator(buffers=4)
        held, _ = hold_and_drop(loader(collate, pin_memory=True), 96)
        assert unchanged(held) == []
        stats = collate.stats
        assert stats.unpooled == 0  # the pinned copies hold none of the pooled buffers
        assert stats.reused == stats.received - stats.pooled > 0

    def test_dropped_batches_free_their_buffers(self) -> None:
        collate = BatchCollator(buffers=8)
        for step, batch in enumerate(loader(collate)):
            assert np.array_equal(batch["image"].numpy(), expected_image(step, 96))
        stats = collate.stats
        # At most prefetch_factor + 2 batches per worker are alive at a time.
        assert stats == RecycleStats(stats.pooled, 24 - stats.pooled, 0)
        assert stats.pooled <= 2 * 4

    def test_a_copy_made_in_another_thread_releases_the_buffer(self) -> None:
        # What the pin_memory thread does: copy the batch there and drop the original.
        collate = BatchCollator(buffers=4)
        copies: list[torch.Tensor] = []

        def copy_and_drop(batch: dict[str, Any]) -> None:
            copies.append(batch.pop("image").clone())

        for batch in loader(collate):
            thread = threading.Thread(target=copy_and_drop, args=(batch,))
            del batch
            thread.start()
            thread.join()
        for step, image in enumerate(copies):
            assert np.array_equal(image.numpy(), expected_image(step, 96))
        assert collate.stats.unpooled == 0
        assert collate.stats.reused > 0

    def test_big_endian_images_go_into_recycled_buffers_exactly(self) -> None:
        # PIL gives >u2 for I;16B PNGs: into the native uint16 buffers, values unchanged
        collate = BatchCollator(buffers=4)
        seen = [(batch["image"].dtype, batch["image"][:, 0, 0, 0].tolist())
                for batch in loader(collate, BigEndian(), workers=1)]  # fmt: skip
        assert collate.stats.reused > 0
        expected = [list(range(4000 * step, 4000 * step + 4000, 1000)) for step in range(6)]
        assert seen == [(torch.uint16, values) for values in expected]

    def test_masks_are_recycled_too(self) -> None:
        collate = BatchCollator(buffers=8)
        for step, batch in enumerate(loader(collate, Numbered(masks=True))):
            assert np.array_equal(batch["mask"].numpy(), expected_image(step, 96)[..., 0])
        assert collate.stats.received == 2 * 24
        assert collate.stats.reused > 0

    # torchdata 0.11 calls torch.set_vital, which torch 2.13 deprecates
    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    def test_torchdata_stateful_dataloader_recycles_and_resumes(self) -> None:
        # torchdata's own worker loop and state_dict, with held batches as above.
        stateful = pytest.importorskip("torchdata.stateful_dataloader")
        StatefulDataLoader = stateful.StatefulDataLoader

        collate = BatchCollator(buffers=4)
        options: dict[str, Any] = {"batch_size": BATCH, "num_workers": 2, "collate_fn": collate}
        data = StatefulDataLoader(Numbered(), persistent_workers=True, **options)
        held, count = hold_and_drop((batch for _ in range(2) for batch in data), 96)
        assert (count, len(held), unchanged(held)) == (48, 36, [])
        assert collate.stats.received == 48
        assert collate.stats.reused > 0
        # a mid-epoch state resumes in a fresh loader with the batches that follow
        first = StatefulDataLoader(Numbered(), **options)
        iterator = iter(first)
        for _ in range(5):
            next(iterator)
        state = first.state_dict()
        rest = [batch["labels"].tolist() for batch in iterator]
        again = StatefulDataLoader(Numbered(), **options)
        again.load_state_dict(state)
        assert [batch["labels"].tolist() for batch in again] == rest
        assert len(rest) == 24 - 5

    @pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
    def test_a_pooled_buffer_passes_no_file_descriptor_after_its_first_batch(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # the main process opens the buffer as /proc/<worker>/fd/<fd>, without the worker
        collate = BatchCollator(buffers=4)
        data = loader(collate, persistent_workers=True, prefetch_factor=1)
        list(data)  # every buffer's first batch; the workers forked with torch's functions
        assert fetched_descriptors(data, monkeypatch) == (0, 24)
        assert collate.stats.reused == 24
        held, _ = hold_and_drop(data, 96)  # and what is held still never changes
        assert unchanged(held) == []

    @pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
    def test_where_proc_is_closed_each_batch_passes_one_file_descriptor(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        probes: list[_route.Handle] = []

        def closed(found: _route.Handle) -> bool:
            probes.append(found)
            return False

        monkeypatch.setattr(_route, "reachable", closed)  # the main process's probe
        collate = BatchCollator(buffers=4)
        data = loader(collate, persistent_workers=True, prefetch_factor=1)
        list(data)
        assert len(probes) == 8  # once per pooled buffer: 4 in each of 2 workers
        assert fetched_descriptors(data, monkeypatch) == (24, 24)  # the images' alone
        assert len(probes) == 8
        held, _ = hold_and_drop(data, 96)
        assert unchanged(held) == []

    def test_an_unpooled_batch_passes_one_file_descriptor(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data = loader(BatchCollator(buffers=0), persistent_workers=True, prefetch_factor=1)
        list(data)
        assert fetched_descriptors(data, monkeypatch) == (24, 24)  # the images' alone

    def test_a_batch_deep_copied_in_the_worker_arrives_intact(self) -> None:
        # the leased image and the by-value tensors copy as ordinary tensors do
        collate = BatchCollator(buffers=4)
        for step, batch in enumerate(loader(_DeepCopied(collate))):
            assert np.array_equal(batch["image"].numpy(), expected_image(step, 96))
            assert batch["labels"].tolist() == list(range(4 * step, 4 * step + 4))
            assert type(batch["targets"]) is torch.Tensor
        assert collate.stats.received == 0  # a copy is on no pooled buffer

    def test_batches_equal_collate_detection(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(16, image_size=32), seed=0, output_size=32)
        ours = list(loader(BatchCollator(buffers=2), mosaic, persistent_workers=True))
        theirs = list(loader(collate_detection, mosaic))
        assert len(ours) == len(theirs) == 4
        for mine, plain in zip(ours, theirs, strict=True):
            assert list(mine) == list(plain)
            for key in ("image", "mask", "targets", "batch_idx", "bboxes", "labels"):
                assert torch.equal(mine[key], plain[key]), key
                assert type(mine[key]) is torch.Tensor
            assert mine["mosaic"] == plain["mosaic"]

    def test_in_the_main_process_it_collates_as_collate_detection(self) -> None:
        collate = BatchCollator()
        dataset = Numbered(8, masks=True)
        out = collate([dataset[i] for i in range(3)])
        plain = collate_detection([dataset[i] for i in range(3)])
        assert list(out) == list(plain)
        assert all(torch.equal(out[k], plain[k]) for k in out)
        assert type(out["image"]) is torch.Tensor
        assert collate.stats == RecycleStats(0, 0, 0)

    def test_a_wrapping_collate_that_replaces_the_image_stays_safe(self) -> None:
        # The lease never reaches the main process, so the buffer is never released:
        # the worker stops pooling and allocates fresh ones.
        collate = BatchCollator(buffers=2)
        held = [b["image"] for b in loader(_Scaled(collate), workers=1)]
        assert collate.stats == RecycleStats(0, 0, 0)
        for step, image in enumerate(held):
            assert torch.equal(image, torch.from_numpy(expected_image(step, 96)).float() / 255)

    def test_options_are_collate_detections(self) -> None:
        collate = BatchCollator(channels_first=True, targets=False, label_field="cls")
        item = {"image": np.zeros((4, 6, 3), np.uint8), "bboxes": [], "cls": np.zeros(0, np.int8)}
        out = collate([item, item])
        assert out["image"].shape == (2, 3, 4, 6)
        assert "targets" not in out
        assert out["cls"].dtype == torch.int8

    def test_pickles_without_its_pool(self) -> None:
        collate = BatchCollator(buffers=3, box_field="boxes")
        clone = pickle.loads(pickle.dumps(collate))
        assert (
            repr(clone)
            == repr(collate)
            == (
                "BatchCollator(box_field='boxes', label_field='labels', channels_first=False, "
                "targets=True, buffers=3)"
            )
        )
        assert clone.stats == RecycleStats(0, 0, 0)

    @pytest.mark.parametrize(
        ("options", "error", "message"),
        [
            ({"buffers": -1}, ValueError, r"buffers must be an integer in \[0, 1024\], got -1"),
            ({"buffers": 2.0}, TypeError, "buffers must be an integer"),
            ({"buffers": True}, TypeError, "buffers must be an integer"),
            ({"channels_first": "no"}, TypeError, "channels_first must be True or False"),
            ({"box_field": "mask"}, ValueError, "box_field must be a key name other than"),
        ],
    )  # fmt: skip
    def test_bad_options(
        self, options: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            BatchCollator(**options)

    def test_no_buffers_recycles_nothing(self) -> None:
        collate = BatchCollator(buffers=0)
        assert len(list(loader(collate, Numbered(16)))) == 4
        assert collate.stats == RecycleStats(0, 0, 0)


class TestLeases:
    @pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
    @pytest.mark.parametrize("proc", [True, False])
    def test_a_buffer_lent_again_while_its_batch_lives_is_refused(
        self, proc: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The pool never does this; were it to, the main process must say so, not let
        # a held batch change under the caller.
        monkeypatch.setattr(_route, "reachable", lambda found: proc)
        pool = _pool.Pool(1, (0, 0))
        first = pickle.loads(ForkingPickler.dumps(pool.take((2, 3), torch.uint8)))
        buffer = pool._buffers[0]
        assert buffer is not None
        assert buffer.route[0] == (_route.PROC if proc else _route.TORCH)
        buffer.flag[0] = 0  # the bug: marked free while `first` is alive
        again = ForkingPickler.dumps(pool.take((2, 3), torch.uint8))
        with pytest.raises(RuntimeError, match="still alive"):
            pickle.loads(again)
        del first

    @pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
    def test_proc_opens_only_the_buffer_it_names(self) -> None:
        # a worker gone, its pid or descriptor reused: never another file's bytes
        block = torch.zeros(64, dtype=torch.uint8)
        block.share_memory_()  # type: ignore[no-untyped-call]
        found = _route.handle(block.untyped_storage())
        assert found is not None
        assert _route.reachable(found)
        batch, twin = _route.open_twice(found, 64)
        assert batch.nbytes() == twin.nbytes() == 64
        pid, fd, dev, ino = found
        for other in ((pid, fd, dev, ino + 1), (pid, 10_000, dev, ino)):
            assert not _route.reachable(other)
            with pytest.raises(RuntimeError, match="has the worker exited"):
                _route.open_twice(other, 64)


class TestRecycleStats:
    def test_received_sums_the_kinds(self) -> None:
        assert RecycleStats(pooled=2, reused=5, unpooled=1).received == 8


class _DeepCopied:
    """A collate that deep-copies BatchCollator's batch in the worker before it leaves."""

    def __init__(self, collate: BatchCollator) -> None:
        self.collate = collate

    def __call__(self, batch: list[dict[str, Any]]) -> dict[str, Any]:
        return copy.deepcopy(self.collate(batch))


class _Scaled:
    """A collate that post-processes BatchCollator's batch in the worker."""

    def __init__(self, collate: BatchCollator) -> None:
        self.collate = collate

    def __call__(self, batch: list[dict[str, Any]]) -> dict[str, Any]:
        out = self.collate(batch)
        out["image"] = out["image"].float() / 255
        return out
