from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from torch.utils.data import DataLoader, IterableDataset

from rankaug import MixUpDataset, MosaicDataset, SampleError
from rankaug.stream.window import _InWindow
from tests.stream.helpers import detection


class _BrokenAt7(IterableDataset[dict[str, Any]]):
    """Ten samples; the eighth (position 7, id ``s0007``) is broken for ``what``."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for k in range(10):
            sample = detection(k)
            if k == 7 and self.what == "bboxes":
                sample["bboxes"] = np.array([[1.0, 2.0, 3.0]], np.float32)  # not (N, 4)
            elif k == 7:
                sample["image"] = np.zeros((16, 16, 3), np.uint8)  # not the others' size
            yield sample


def _mosaic() -> Any:
    """A 2x2 mosaic draws its 3 partners from the 3 after its main: 4 is the first main
    whose window holds position 7."""
    return MosaicDataset(_BrokenAt7("bboxes"), seed=0, output_size=64, buffer_size=3,
                         sample_id="id")  # fmt: skip


def _mixup() -> Any:
    """A mix with buffer_size=1 partners each main with the sample after it: 6 with 7."""
    return MixUpDataset(_BrokenAt7("image"), seed=0, buffer_size=1, sample_id="id")


class _Objects(IterableDataset[SimpleNamespace]):
    """Six samples that are objects with ``image``, ``boxes`` and ``labels``."""

    def __iter__(self) -> Iterator[SimpleNamespace]:
        for k in range(6):
            sample = detection(k)
            yield SimpleNamespace(image=sample["image"], boxes=sample["bboxes"],
                                  labels=sample["labels"])  # fmt: skip


class _ObjectAdapter:
    def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], None]:
        return {"image": sample.image, "bboxes": sample.boxes, "labels": sample.labels}, None

    def repack(self, data: Mapping[str, Any], state: None) -> SimpleNamespace:
        return SimpleNamespace(image=data["image"], boxes=data["bboxes"], labels=data["labels"])


def _set_before(config: Any) -> Any:
    """A streaming mosaic whose subclass sets ``config`` before calling the constructor."""
    options: dict[str, Any] = {"output_size": 32, "buffer_size": 2}
    kind = type(MosaicDataset(_Objects(), seed=0, **options))

    class Mine(kind):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            self.config = config
            super().__init__(_Objects(), seed=0, adapter=_ObjectAdapter(), **options)

    return Mine()


class TestWindowStream:
    @pytest.mark.parametrize("kind", [MosaicDataset, MixUpDataset])
    def test_an_adapter_set_afterwards_is_used(self, kind: Any) -> None:
        # before: .adapter was the stream's private naming adapter, and assigning one
        # changed only the attribute: the samples were still read by the default adapter
        options = {"output_size": 32} if kind is MosaicDataset else {}
        stream = kind(_Objects(), seed=0, buffer_size=2, record=None, **options)
        with pytest.raises(SampleError, match="cannot handle a sample of type SimpleNamespace"):
            next(iter(stream))  # the default adapter: the window wrappers are made
        stream.adapter = adapter = _ObjectAdapter()
        assert stream.adapter is adapter
        here = list(stream)
        workers = list(DataLoader(stream, batch_size=None, num_workers=1))
        for out in (*here, *workers):
            assert type(out) is SimpleNamespace
            assert len(out.boxes) == len(out.labels)
        assert len(here) == len(workers) == 6

    @pytest.mark.parametrize("kind", [MosaicDataset, MixUpDataset])
    def test_an_argument_kept_in_the_config_cannot_be_assigned(self, kind: Any) -> None:
        # before: stream.p = 0.0 made an attribute nothing read
        options = {"output_size": 32} if kind is MosaicDataset else {}
        stream = kind(_Objects(), seed=0, buffer_size=2, **options)
        with pytest.raises(AttributeError, match=r"\.p cannot be assigned: p is an argument"):
            stream.p = 0.0
        assert not hasattr(stream, "p")

    @pytest.mark.parametrize(
        ("kind", "name", "spelled"),
        [(MosaicDataset, "fill", "layout=rankaug.MosaicGrid(fill=...)"),
         (MosaicDataset, "min_area", "targets=rankaug.Targets(min_area=...)"),
         (MixUpDataset, "box_format", "targets=rankaug.Targets(box_format=...)")],
    )  # fmt: skip
    def test_a_deprecated_flat_keyword_cannot_be_assigned(
        self, kind: Any, name: str, spelled: str
    ) -> None:
        # before: stream.fill = 0 made an attribute nothing read
        options = {"output_size": 32} if kind is MosaicDataset else {}
        stream = kind(_Objects(), seed=0, buffer_size=2, **options)
        with pytest.raises(AttributeError, match=rf"\.{name} cannot be assigned: {name}= is"):
            setattr(stream, name, 0)
        with pytest.raises(
            AttributeError, match=re.escape(f"new {type(stream).__name__} with {spelled}")
        ):
            setattr(stream, name, 0)
        assert not hasattr(stream, name)

    def test_a_rank_set_afterwards_is_checked_and_used(self) -> None:
        # before: stream.rank = 1 made an attribute nothing read (the key kept rank 0),
        # and stream.rank = -1 was accepted
        def images(stream: Any) -> list[np.ndarray]:
            return [out.image for out in stream]

        def made(rank: int) -> Any:
            return MosaicDataset(_Objects(), seed=0, output_size=32, buffer_size=2,
                                 adapter=_ObjectAdapter(), rank=rank)  # fmt: skip

        stream = made(0)
        with pytest.raises(ValueError, match=r"^rank must be .*got -1"):
            stream.rank = -1
        assert stream.rank == 0
        stream.rank = 1
        assert stream.rank == 1
        ones, zeros, assigned = images(made(1)), images(made(0)), images(stream)
        assert all(np.array_equal(a, b) for a, b in zip(assigned, ones, strict=True))
        assert not all(np.array_equal(a, b) for a, b in zip(assigned, zeros, strict=True))

    def test_an_adapter_set_after_persistent_workers_started_is_refused_there(self) -> None:
        stream = MosaicDataset(_Objects(), seed=0, output_size=32, buffer_size=2,
                               adapter=_ObjectAdapter())  # fmt: skip
        loader = DataLoader(stream, batch_size=None, num_workers=1, persistent_workers=True)
        assert len(list(loader)) == 6
        stream.adapter = _ObjectAdapter()
        with pytest.raises(RuntimeError, match="assigned after this DataLoader worker"):
            list(loader)

    @pytest.mark.parametrize("kind", [MosaicDataset, MixUpDataset])
    def test_a_shallow_copys_adapter_is_its_own(self, kind: Any) -> None:
        # before: the copy shared the window wrappers, so its adapter was assigned to the
        # original's (and refused the original's persistent workers), not to its own
        options = {"output_size": 32} if kind is MosaicDataset else {}
        adapter = _ObjectAdapter()
        stream = kind(_Objects(), seed=0, buffer_size=2, adapter=adapter, **options)
        loader = DataLoader(stream, batch_size=None, num_workers=1, persistent_workers=True)
        assert len(list(loader)) == 6
        copied = copy.copy(stream)
        copied.adapter = other = _ObjectAdapter()
        assert (stream.adapter, copied.adapter) == (adapter, other)
        assert stream.window_wrapper(3).adapter.unpack.__self__ is adapter
        assert copied.window_wrapper(3).adapter.unpack.__self__ is other
        assert len(list(loader)) == len(list(copied)) == 6  # the original's workers go on

    @pytest.mark.parametrize("name", ["config", "buffer_size", "seed", "keying", "dataset"])
    def test_a_setting_fixed_when_made_cannot_be_assigned(self, name: str) -> None:
        stream = MosaicDataset(_Objects(), seed=0, output_size=32, buffer_size=2)
        with pytest.raises(AttributeError, match=rf"^StreamingMosaic\.{name} cannot be assigned"):
            setattr(stream, name, getattr(stream, name))

    def test_a_subclass_may_set_its_config_before_the_constructor(self) -> None:
        # before: refused as an assignment after construction, whatever the value (the
        # constructor set it after the base's, which counted as made)
        made = MosaicDataset(
            _Objects(), seed=1, output_size=32, buffer_size=2, adapter=_ObjectAdapter()
        )
        config = made.config
        stream = _set_before(config)
        assert stream.config == config
        assert len(list(stream)) == 6

    def test_another_config_set_before_the_constructor_is_refused(self) -> None:
        with pytest.raises(AttributeError, match=r"^Mine\.config cannot be assigned: it was"):
            _set_before({"lr": 0.1})

    def test_a_stage_naming_a_window_sample_is_renamed_once(self) -> None:
        # a sample early in the pass has a position that is a slot too: renamed twice,
        # the message named its id twice and read back another stage than the error's
        live: Any = SimpleNamespace(rank=0, worker_id=0, epoch=2)
        window = _InWindow([(0, "s0", None), (1, "s1", None)], 0, live)
        err = window.failure("dataset[1]", KeyError("dataset[0]"))
        assert str(err) == (
            "dataset[1] (id 's1') failed at index 0 (id 's0', rank 0, worker 0, epoch 2): "
            "KeyError: 'dataset[0] (id 's0')'"
        )
        assert SampleError(str(err)).stage == err.stage == "dataset[1] (id 's1')"

    @pytest.mark.parametrize(("make", "main"), [(_mosaic, 4), (_mixup, 6)], ids=["mosaic", "mixup"])
    def test_failures_name_positions_in_the_pass(self, make: Any, main: int) -> None:
        with pytest.raises(SampleError) as info:
            list(make())
        # before, the main's place in its window (0) and the partner's (3 or 1)
        assert (info.value.index, info.value.sample_id) == (main, f"s{main:04d}")
        assert "dataset[7] (id 's0007')" in str(info.value)
        with pytest.raises(SampleError) as through:  # read back from a worker's text
            list(DataLoader(make(), batch_size=None, num_workers=1))
        assert (through.value.index, through.value.sample_id) == (main, f"s{main:04d}")
