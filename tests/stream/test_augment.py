from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, IterableDataset

from rankaug import RandomAugmentWrapper, RankaugWarning, SampleError
from rankaug.adapters import KeyMap
from rankaug.stream import StreamingAugment
from tests import ahead
from tests.stream.helpers import EpochShards, Named, Shards, by_id, detection, keep, noise
from tests.threads import Meeting, ThreadStreams, passes_named

pytestmark = [
    pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning"),
    # loaders of more workers than this machine has cores (3 and 4 on 2 cores) warn
    pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning"),
]


def passes(wrapper: Any, count: int = 2, **loader: Any) -> list[dict[str, str]]:
    data = DataLoader(wrapper, batch_size=None, **loader)
    return [by_id(data) for _ in range(count)]


def keyed(n: int = 12, **kwargs: Any) -> Any:
    return RandomAugmentWrapper(Shards(n), noise, seed=0, keying="sample", sample_id="id", **kwargs)


def fails_on_s0010(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    if sample["id"] == "s0010":
        raise RuntimeError("boom")
    return noise(sample, rng)


def unchanged(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return sample


def as_list(batch: Any) -> Any:
    return batch


def run(wrapper: Any, *, state: Any = None, batches: int | None = None) -> tuple[list[str], Any]:
    """The ``id:digest`` of each output; stopped after ``batches`` with the state."""
    stateful = pytest.importorskip("torchdata.stateful_dataloader", reason="a test extra")
    loader = stateful.StatefulDataLoader(wrapper, batch_size=2, num_workers=2, collate_fn=as_list)
    if state is not None:
        loader.load_state_dict(state)
    out = []
    for count, batch in enumerate(loader, 1):
        out += [f"{s['id']}:{by_id([s])[s['id']]}" for s in batch]
        if count == batches:
            return out, loader.state_dict()
    return out, None


class TestDispatch:
    def test_streams_become_iterable_wrappers(self) -> None:
        wrapper: object = RandomAugmentWrapper(Shards(4), noise, seed=0)  # dispatched
        assert isinstance(wrapper, StreamingAugment)
        assert isinstance(wrapper, IterableDataset)
        assert type(RandomAugmentWrapper([detection(0)], noise, seed=0)) is RandomAugmentWrapper

    def test_subclasses_keep_the_map_style_behaviour(self) -> None:
        class Mine(RandomAugmentWrapper[Any]):
            pass

        with pytest.raises(TypeError, match="map-style dataset"):
            Mine(Shards(4), noise, seed=0)

    def test_refuses_what_a_stream_cannot_key(self) -> None:
        with pytest.raises(ValueError, match="keying='sample' over a stream needs sample_id="):
            RandomAugmentWrapper(Shards(4), noise, seed=0, keying="sample")
        with pytest.raises(ValueError, match="keying='sample_rank' has no meaning"):
            RandomAugmentWrapper(Shards(4), noise, seed=0, keying="sample_rank")
        with pytest.raises(TypeError, match="one-shot iterator"):
            RandomAugmentWrapper(iter([detection(0)]), noise, seed=0)


class Pairs(IterableDataset[dict[str, Any]]):
    """Dict samples with ``CxHxW`` tensors ``image`` and ``image2`` (its copy), and an id."""

    def __init__(self, n: int = 4) -> None:
        ramps = torch.arange(n * 3 * 24 * 32).reshape(n, 3, 24, 32) % 251
        self.samples = [
            {"image": ramp.to(torch.uint8), "image2": ramp.to(torch.uint8).clone(), "id": f"p{k}"}
            for k, ramp in enumerate(ramps)
        ]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from self.samples


def pair_transform(*steps: Any) -> A.Compose:
    return A.Compose(list(steps), additional_targets={"image2": "image"})


class TestStreamingAugment:
    def test_a_pipeline_box_format_other_than_the_streams_is_refused(self) -> None:
        # the map-style wrapper inside reads a window, which declares no format: VOC
        # corners read as COCO x, y, w, h came back as other boxes without an error
        class VocStream(IterableDataset[dict[str, Any]]):
            box_format = "pascal_voc"

            def __iter__(self) -> Iterator[dict[str, Any]]:
                image = np.zeros((8, 10, 3), np.uint8)
                yield {"image": image, "bboxes": np.array([[1.0, 2, 4, 6]]), "labels": [1]}

        def flip(box_format: str) -> A.Compose:
            params = A.BboxParams(format=box_format, label_fields=["labels"])
            return A.Compose([A.HorizontalFlip(p=1)], bbox_params=params)

        said = r"A.BboxParams format is 'coco', but the dataset \(VocStream\) gives 'pascal_voc'"
        with pytest.raises(ValueError, match=said):
            RandomAugmentWrapper(VocStream(), flip("coco"), seed=0)
        voc = flip("pascal_voc")
        wrapped: Any = RandomAugmentWrapper(VocStream(), voc, seed=0)
        assert isinstance(wrapped, StreamingAugment)
        with pytest.raises(ValueError, match=said):  # assigned later: refused alike
            wrapped.transform = flip("coco")
        assert wrapped.transform is voc
        np.testing.assert_allclose(next(iter(wrapped))["bboxes"], [[6, 2, 9, 6]], atol=1e-4)

    def test_threads_iterating_at_once_each_read_their_own_samples(self) -> None:
        streams = ThreadStreams(8, Meeting(2))  # each thread sets its sample, then all load
        wrapper = RandomAugmentWrapper(streams, unchanged, seed=0, keying="sample", sample_id="id")
        outputs = streams.run(wrapper)
        assert passes_named(outputs, lambda output: [output["id"]]) == [{"0"}, {"1"}]

    def test_sample_keying_ignores_workers_and_persistence(self) -> None:
        alone = passes(keyed())
        assert alone == passes(keyed(), num_workers=2)
        assert alone == passes(keyed(), num_workers=2, persistent_workers=True)
        assert len(alone[0]) == 12
        changed = sum(alone[0][k] != alone[1][k] for k in alone[0])
        assert changed == 12  # each pass is the next epoch, without any call

    def test_a_repeated_sample_id_warns_once_per_pass(self) -> None:
        # two samples named "a" draw alike under keying="sample": warned, once each epoch
        wrapper: Any = RandomAugmentWrapper(Named(["a", "b", "a", "c", "b", "a"]), noise, seed=0,
                                            keying="sample", sample_id="id")  # fmt: skip
        for epoch in (0, 1):
            with pytest.warns(RankaugWarning) as caught:
                out = list(wrapper)
            assert len(caught) == 1
            assert str(caught[0].message).startswith(
                f"StreamingAugment: sample id 'a' came twice in the pass of epoch {epoch} (rank 0"
            )
            assert out[0]["noise"] == out[2]["noise"]  # what the warning is about
        stream: Any = RandomAugmentWrapper(Named(["a", "a"]), noise, seed=0, keying="stream")
        out = list(stream)  # filterwarnings=error: the stream keying draws on, no warning
        assert out[0]["noise"] != out[1]["noise"]

    @pytest.mark.parametrize("adapter", [None, KeyMap()], ids=["default", "keymap"])
    def test_additional_images_move_as_in_the_map_style_wrapper(self, adapter: Any) -> None:
        # a tensor image2 failed inside albumentations ("Height and Width ... should be equal")
        stream = Pairs()
        flip = pair_transform(A.HorizontalFlip(p=1.0))
        wrapper: Any = RandomAugmentWrapper(stream, flip, seed=0, adapter=adapter)
        out = list(wrapper)
        mapped = RandomAugmentWrapper(stream.samples, flip, seed=0, adapter=adapter)
        assert len(out) == len(stream.samples) == 4
        for index, (sample, given) in enumerate(zip(out, stream.samples, strict=True)):
            assert sorted(sample) == ["id", "image", "image2"]
            assert type(sample["image2"]) is torch.Tensor
            assert torch.equal(sample["image2"], given["image2"].flip(-1))
            for key in ("image", "image2"):
                assert torch.equal(sample[key], mapped[index][key])

    @pytest.mark.parametrize("adapter", [None, KeyMap()], ids=["default", "keymap"])
    def test_additional_images_draw_the_images_parameters(self, adapter: Any) -> None:
        transform = pair_transform(A.Affine(rotate=(-30, 30), scale=(0.6, 1.4), p=1.0))
        keys: Any = {"seed": 0, "keying": "sample", "sample_id": "id"}
        ours: Any = RandomAugmentWrapper(Pairs(), transform, adapter=adapter, **keys)
        theirs: Any = RandomAugmentWrapper(Pairs(), transform, **keys)
        out, default = list(ours), list(theirs)
        for sample, given, other in zip(out, Pairs().samples, default, strict=True):
            assert sample["image"].shape == (3, 24, 32)
            assert not torch.equal(sample["image"], given["image"])  # moved
            assert torch.equal(sample["image2"], sample["image"])  # moved alike
            assert torch.equal(sample["image2"], other["image2"])  # as the default adapter's

    def test_a_transform_set_afterwards_is_used(self) -> None:
        wrapper = RandomAugmentWrapper(Shards(3), unchanged, seed=0)
        wrapper.transform = noise
        assert wrapper.transform is noise
        assert all("noise" in sample for sample in iter(wrapper))  # noise's, not unchanged's

    def test_a_rank_set_afterwards_is_checked_and_used(self) -> None:
        # before: stream.rank = 1 made an attribute nothing read (the key kept rank 0),
        # and stream.rank = "1" was accepted
        def first_pass(rank: int) -> dict[str, str]:
            return by_id(iter(RandomAugmentWrapper(Shards(6), noise, seed=0, rank=rank)))

        stream = RandomAugmentWrapper(Shards(6), noise, seed=0, rank=0)
        with pytest.raises(TypeError, match=r"^rank must be an integer.*got '1'"):
            stream.rank = "1"  # type: ignore[assignment]
        assert stream.rank == 0
        stream.rank = 1
        assert stream.rank == 1
        assert by_id(iter(stream)) == first_pass(1) != first_pass(0)

    def test_a_transform_set_after_persistent_workers_started_is_refused_there(self) -> None:
        # before: the persistent workers went on with the transform they were given
        stream = RandomAugmentWrapper(Shards(4), keep, seed=0)
        loader = DataLoader(stream, batch_size=None, num_workers=2, persistent_workers=True)
        assert len(list(loader)) == 4
        stream.transform = noise
        with pytest.raises(RuntimeError, match="assigned after this DataLoader worker"):
            list(loader)

    def test_a_shallow_copys_transform_is_its_own(self) -> None:
        # before: the copy shared the map-style wrapper its samples go through, so
        # assigning its transform changed the original's, and refused its persistent workers
        stream = RandomAugmentWrapper(Shards(4), keep, seed=0)
        loader = DataLoader(stream, batch_size=None, num_workers=2, persistent_workers=True)
        assert len(list(loader)) == 4
        validation = copy.copy(stream)
        validation.transform = noise
        assert (stream.transform, validation.transform) == (keep, noise)
        assert not any("noise" in sample for sample in loader)  # keep's, in its workers
        assert all("noise" in sample for sample in iter(validation))

    def test_stream_keying_reruns_and_moves_on(self) -> None:
        def stream() -> Any:
            return RandomAugmentWrapper(Shards(12), noise, seed=3)

        first = passes(stream(), num_workers=2)
        assert first == passes(stream(), num_workers=2)
        assert sum(first[0][k] != first[1][k] for k in first[0]) == 12
        assert first != passes(RandomAugmentWrapper(Shards(12), noise, seed=4), num_workers=2)

    def test_set_epoch_sets_every_worker_and_reaches_the_stream(self) -> None:
        wrapper = keyed()
        counting = keyed()
        wrapper.set_epoch(1)
        assert wrapper.dataset.epochs == [1]
        assert passes(wrapper, 1, num_workers=2) == passes(counting)[1:]
        assert wrapper.epoch == 2  # the pass after

    def test_each_pass_tells_the_stream_its_epoch(self) -> None:
        wrapper = keyed()
        passes(wrapper, 3)
        assert wrapper.dataset.epochs == [0, 1, 2]

    @pytest.mark.parametrize("resumable", [False, True], ids=["re-read", "inner state"])
    def test_resumes_mid_pass_bit_for_bit(self, resumable: bool) -> None:
        def build() -> Any:
            return RandomAugmentWrapper(Shards(20, resumable=resumable), noise, seed=1)

        whole, _ = run(build())
        head, state = run(build(), batches=3)
        rest, _ = run(build(), state=state)
        assert len(whole) == 20
        assert head + rest == whole
        worker = state["_snapshot"]["_worker_snapshots"]["worker_0"]["dataset_state"]
        assert (worker["pass"]["source"] is not None) == resumable

    @pytest.mark.parametrize("resumable", [False, True], ids=["re-read", "inner state"])
    def test_a_resumed_pass_keeps_its_positions(self, resumable: bool) -> None:
        def build(transform: Any = noise) -> Any:
            return RandomAugmentWrapper(Shards(20, resumable=resumable), transform, seed=1)

        _, state = run(build(), batches=3)  # batches of 2 by turns: worker 0 at 4, 1 at 2
        _, again = run(build(), state=state, batches=2)
        _, whole = run(build(), batches=5)
        for worker, position in (("worker_0", 6), ("worker_1", 4)):
            resumed = again["_snapshot"]["_worker_snapshots"][worker]["dataset_state"]
            straight = whole["_snapshot"]["_worker_snapshots"][worker]["dataset_state"]
            assert resumed["pass"]["position"] == position
            assert resumed == straight
        # s0010 is worker 0's sample at position 5, read after the resume
        with pytest.raises(Exception, match=r"transform failed at index 5 \(rank 0, worker 0"):
            run(build(fails_on_s0010))
        with pytest.raises(Exception, match=r"transform failed at index 5 \(rank 0, worker 0"):
            run(build(fails_on_s0010), state=state)

    def test_load_state_dict_refuses_a_foreign_state(self) -> None:
        with pytest.raises(ValueError, match="state must come from StreamingAugment"):
            keyed().load_state_dict({"format": "rankaug.KeyedDataset/1"})

    def test_failures_name_the_pass(self) -> None:
        def broken(sample: Any, rng: np.random.Generator) -> Any:
            raise KeyError("labels")

        wrapper = RandomAugmentWrapper(Shards(3), broken, seed=0)
        with pytest.raises(SampleError, match=r"transform failed at index 0 .*epoch 0"):
            next(iter(wrapper))
        with pytest.raises(SampleError, match=r"sample_id failed at index 0"):
            next(iter(RandomAugmentWrapper(Shards(3), noise, seed=0, sample_id="nope")))

    def test_failures_name_the_sample_id(self) -> None:
        wrapper: Any = RandomAugmentWrapper(
            Shards(12), fails_on_s0010, seed=0, keying="sample", sample_id="id"
        )
        with pytest.raises(SampleError, match=r"transform failed at index 10 \(id 's0010', rank 0"):
            list(wrapper)
        loader = DataLoader(wrapper, batch_size=None, num_workers=1)
        with pytest.raises(SampleError) as info:  # through a worker: read back from its text
            list(loader)
        assert (info.value.sample_id, info.value.index, info.value.stage) == (
            "s0010",
            10,
            "transform",
        )


IDS = [f"s{k:04d}" for k in range(16)]


def hugging_face_stream() -> Any:
    """A Hugging Face stream of 16 samples in 8 shards, augmented and keyed per sample.

    Such a stream deals its shards to the workers by the epoch: workers on different
    epochs would read overlapping shards, some samples twice, others never.
    """
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    table = {"image": [np.full((4, 4, 3), k, np.uint8) for k in range(16)], "id": IDS}
    stream = datasets.Dataset.from_dict(table).to_iterable_dataset(num_shards=8)
    return RandomAugmentWrapper(
        stream.with_format("numpy"), noise, seed=0, keying="sample", sample_id="id"
    )


def test_a_look_in_the_main_process_keeps_the_workers_on_one_epoch() -> None:
    train = hugging_face_stream()
    next(iter(train))  # a look at one sample before training: the main process's pass 0
    loader = DataLoader(train, batch_size=None, num_workers=2)
    for _ in range(2):
        assert sorted(str(s["id"]) for s in loader) == IDS


def test_a_resume_in_the_main_process_moves_every_worker_on() -> None:
    train: Any = RandomAugmentWrapper(Shards(8), noise, seed=0, keying="sample", sample_id="id")
    state = {**train.state_dict(), "next_epoch": 4}
    train.load_state_dict(state)  # in the main process: every worker's next pass
    assert [train._passes.peek(w) for w in (0, 1, 7)] == [4, 4, 4]


def epochs(loader: Any) -> list[tuple[int, int]]:
    """The ``(worker, epoch)`` pairs of a pass."""
    return sorted({(int(s["worker"]), int(s["epoch"])) for s in loader})


def passes_of(context: str, workers: tuple[int, ...]) -> tuple[list[list[tuple[int, int]]], int]:
    """Each pass's ``(worker, epoch)`` pairs, one loader of ``workers[k]`` for pass k, and
    the wrapper's epoch after them."""
    train = RandomAugmentWrapper(EpochShards(8), keep, seed=0)
    seen = []
    for count in workers:
        loader = DataLoader(
            train, batch_size=None, num_workers=count, multiprocessing_context=context
        )
        seen.append(epochs(loader))
    return seen, train.epoch


def spawned_passes(_: Path) -> tuple[list[list[tuple[int, int]]], int]:
    """:func:`passes_of` with spawned workers, 1 then 2 (a job of tests.ahead)."""
    return passes_of("spawn", SPAWNED)


SPAWNED = (1, 2)


def one_epoch_each(workers: tuple[int, ...]) -> tuple[list[list[tuple[int, int]]], int]:
    """What :func:`passes_of` gives when each loader runs one epoch on every worker."""
    return [[(w, epoch) for w in range(count)] for epoch, count in enumerate(workers)], len(workers)


def test_a_loader_with_more_workers_runs_one_epoch() -> None:
    # the new workers' counts never moved: they ran epoch 0 beside the others' later one
    workers = (2, 2, 4, 2)
    assert passes_of("fork", workers) == one_epoch_each(workers)


def test_a_loader_with_more_spawned_workers_runs_one_epoch(tmp_path: Path) -> None:
    # A spawned worker imports torch afresh (about 2 s): one pass of one worker, then one
    # of two, the second's count never moved (the same story in 3 workers, not 5); the
    # loaders run ahead, beside the suite (tests/ahead.py)
    assert ahead.result("stream-spawn", lambda: tmp_path) == one_epoch_each(SPAWNED)


def test_persistent_workers_catch_up_with_a_smaller_loader() -> None:
    # (forked only: the pass tags of spawned workers are the test above's)
    context = "fork"
    train = RandomAugmentWrapper(EpochShards(6), keep, seed=0)
    three = DataLoader(train, batch_size=None, num_workers=3, persistent_workers=True,
                       multiprocessing_context=context)  # fmt: skip
    one = DataLoader(train, batch_size=None, num_workers=1, multiprocessing_context=context)
    assert epochs(three) == [(0, 0), (1, 0), (2, 0)]
    assert [epochs(one), epochs(one)] == [[(0, 1)], [(0, 2)]]
    assert epochs(three) == [(0, 3), (1, 3), (2, 3)]  # workers 1 and 2 ran epoch 1
    assert epochs(three) == [(0, 4), (1, 4), (2, 4)]


def test_a_hugging_face_stream_deals_each_sample_once_to_more_workers() -> None:
    train = hugging_face_stream()
    for workers in (2, 2, 4):  # epochs 0, 1 and 2: the shards dealt by epoch 2
        loader = DataLoader(train, batch_size=None, num_workers=workers)
        assert sorted(str(s["id"]) for s in loader) == IDS
