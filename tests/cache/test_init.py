"""Tests for rankaug.cache.CachedDataset (concurrency: tests/cache/test_concurrency.py)."""

from __future__ import annotations

import errno
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import albumentations as A
import cv2
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from torch.utils.data import DataLoader, Dataset, Subset

import rankaug.cache._format
import rankaug.cache._store
from rankaug import (
    CopyPasteDataset,
    CutMixDataset,
    EpochIndex,
    HSVJitter,
    MixUpDataset,
    MosaicAffine,
    MosaicDataset,
    RandomAugmentWrapper,
    RankaugWarning,
    SampleError,
)
from rankaug.cache import CachedDataset
from rankaug.datasets import CocoDetection, SyntheticDetection, YoloFolder, write_yolo_folder
from tests import ahead
from tests.cache.helpers import (
    Anonymous,
    Failing,
    Frames,
    ListDataset,
    Point,
    Unhashable,
    assert_identical,
)
from tests.datasets.helpers import write_coco


def files_under(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())


def samples_of(cached: CachedDataset[Any]) -> list[str]:
    return [name for name in files_under(cached.path) if name.endswith(".sample")]


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


ARRAYS = hnp.arrays(
    dtype=st.sampled_from(
        [np.uint8, np.uint16, np.int16, np.int64, np.float32, np.float64, np.bool_, np.complex64]
    ),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=40),
)
LEAVES = (
    ARRAYS
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=5)
    | st.binary(max_size=5)
    | st.none()
    | st.booleans()
)
STRUCTURES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def fill_and_read(
    folder: Path, context: str, workers: int = 2
) -> tuple[list[Any], list[bool], list[Any]]:
    """One loader, its workers kept: the first pass fills the cache, the second reads.

    Returns both passes and which samples were cached between them (the workers started
    once; spawned ones each import torch, seconds apiece).
    """
    cached = CachedDataset(SyntheticDetection(8, image_size=(60, 80), seed=4), folder)
    loader = DataLoader(
        cached,
        batch_size=None,
        num_workers=workers,
        multiprocessing_context=context,
        collate_fn=None,
        persistent_workers=True,
    )
    filled = list(loader)
    between = [cached.is_cached(index) for index in range(8)]
    return filled, between, list(loader)


def fill_and_read_spawned(folder: Path) -> tuple[list[Any], list[bool], list[Any]]:
    """:func:`fill_and_read` with one spawned worker (a job of tests.ahead: each imports
    torch; the fork case has two filling at once)."""
    return fill_and_read(folder, "spawn", workers=1)


def assert_filled_and_read(filled: list[Any], between: list[bool], read: list[Any]) -> None:
    source = SyntheticDetection(8, image_size=(60, 80), seed=4)
    assert between == [True] * 8
    for index in range(8):
        for key in ("image", "bboxes", "labels", "mask"):
            np.testing.assert_array_equal(filled[index][key], source[index][key])
            np.testing.assert_array_equal(read[index][key], source[index][key])


class Scaled(Dataset[Any]):
    """Images from ``.npy`` files times ``scale``: files listed, no settings repr."""

    def __init__(self, paths: list[Path], scale: int) -> None:
        self.paths, self.scale = paths, scale

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> Any:
        return np.load(self.paths[index]) * np.uint8(self.scale)

    def source_files(self) -> list[Path]:
        return self.paths


class TestCachedDataset:
    # ------------------------------------------------------------ identical outputs
    @pytest.mark.parametrize(
        "options",
        [
            {},
            {"channels": 1, "dtype": "float32"},
            {"box_format": "yolo", "masks": False, "varied_sizes": True},
            {"as_tuple": True},
            {"as_tuple": True, "tensors": True},
        ],
    )
    def test_outputs_are_the_sources_bit_for_bit(
        self, tmp_path: Path, options: dict[str, Any]
    ) -> None:
        source = SyntheticDetection(6, image_size=(120, 160), seed=3, **options)
        cached = CachedDataset(source, tmp_path)
        for index in range(len(source)):
            assert not cached.is_cached(index)
            assert_identical(cached[index], source[index])  # loaded and stored
            assert cached.is_cached(index)
            assert_identical(cached[index], source[index])  # read back
        again = CachedDataset(source, tmp_path)  # another process would do the same
        assert again.path == cached.path
        for index in range(len(source)):
            assert_identical(again[index], source[index])
        assert len(samples_of(cached)) == 6

    @given(samples=st.lists(STRUCTURES, min_size=1, max_size=3))
    def test_any_picklable_structure_round_trips(self, samples: list[Any]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            cached = CachedDataset(ListDataset(samples), tmp)
            for index, sample in enumerate(samples):
                assert_identical(cached[index], sample)
                assert cached.is_cached(index)
                assert_identical(cached[index], sample)

    @pytest.mark.parametrize(
        "name", ["dataset", "directory", "path", "fingerprint", "trust_directory"]
    )
    def test_what_the_cache_was_made_for_cannot_be_assigned(
        self, tmp_path: Path, name: str
    ) -> None:
        # before: cached.dataset = other kept the old length and served the old cache's
        # samples for the new dataset; the others were not used at all
        cached = CachedDataset(SyntheticDetection(4, image_size=16, seed=0), tmp_path / "a")
        other = CachedDataset(SyntheticDetection(8, image_size=16, seed=1), tmp_path / "b")
        with pytest.raises(AttributeError, match=rf"^CachedDataset\.{name} cannot be assigned"):
            setattr(cached, name, getattr(other, name))
        assert (len(cached), cached.path.parent) == (4, tmp_path / "a")
        cached.max_bytes = 0  # read with every store: it can be set
        cached[0]
        assert not cached.is_cached(0)

    def test_a_setting_set_before_the_constructor_follows_the_fixed_settings_rule(
        self, tmp_path: Path
    ) -> None:
        # before: a subclass's self.directory = directory (or any fixed setting) before
        # calling the constructor was refused there as "fixed when the C is made"
        source = SyntheticDetection(4, image_size=16, seed=0)

        class Cached(CachedDataset[Any]):
            def __init__(self, directory: Path, trust: bool, given: bool) -> None:
                self.dataset = source  # what it gives the constructor
                self.directory = str(directory)  # type: ignore[assignment]
                self.fingerprint = "v1"  # type: ignore[assignment]
                self.trust_directory = trust
                super().__init__(source, directory, fingerprint="v1", trust_directory=given)

        cached = Cached(tmp_path / "a", False, False)
        assert cached.directory == (tmp_path / "a").resolve()
        assert "v1" in cached.fingerprint.text
        with pytest.raises(
            AttributeError,
            match=r"^Cached\.trust_directory cannot be assigned: it was set before the "
            r"constructor.*\(set: True; the constructor's: False\)",
        ):
            Cached(tmp_path / "b", True, False)
        with pytest.raises(
            AttributeError, match=r"^Cached\.directory cannot be assigned: it is fixed"
        ):
            cached.directory = tmp_path / "a"  # after the constructor: refused, as ever

    def test_special_values(self, tmp_path: Path) -> None:
        big = np.arange(300 * 400 * 3, dtype=np.int64).reshape(300, 400, 3) % 251
        sample = {
            "image": big.astype(np.uint8),
            "fortran": np.asfortranarray(big[:, :, 0].astype(np.float32)),
            "strided": big[::2, ::3, 1].astype(np.uint16)[:, ::-1],
            "scalar": np.float32(1.5),
            "zero_d": np.array(7, np.int32),
            "empty": np.zeros((0, 4), np.float32),
            "objects": np.array(["a", 1, None], dtype=object),
            "tensor": torch.arange(5000, dtype=torch.int64).reshape(50, 100),
            "tensor_view": torch.arange(6000, dtype=torch.float32).reshape(60, 100)[:, ::2],
            "bfloat16": torch.ones(3000, dtype=torch.bfloat16),
            "grad": torch.ones(2000, requires_grad=True),
            "point": Point(1, [2.0]),
            "nested": {"tuple": (1, "x"), "list": [np.int8(-3)], 3: "int key"},
            "nan": float("nan"),
            "minus_zero": -0.0,
        }
        cached = CachedDataset(ListDataset([sample]), tmp_path, trusted_types=[Point])
        cached[0]
        back = cached[0]
        for key in sample:
            if key == "grad":
                assert back[key].requires_grad
                assert torch.equal(back[key], sample[key])
            else:
                assert_identical(back[key], sample[key], key)
        assert back["fortran"].flags.f_contiguous
        assert back["strided"].flags.c_contiguous  # values kept, layout made contiguous

    def test_returned_arrays_are_plain_writable_and_private(self, tmp_path: Path) -> None:
        source = SyntheticDetection(2, image_size=(480, 640), seed=1)
        cached = CachedDataset(source, tmp_path)
        cached[0]
        first = cached[0]
        image = first["image"]
        assert type(image) is np.ndarray  # no np.memmap
        assert image.flags.writeable
        image[:] = 0  # a consumer writing into its sample ...
        first["bboxes"][:] = -1
        again = cached[0]
        assert_identical(again, source[0])  # ... changes nothing in the cache
        assert image.sum() == 0

    def test_returned_tensors_are_writable_and_private(self, tmp_path: Path) -> None:
        source = SyntheticDetection(1, image_size=(200, 300), as_tuple=True, tensors=True)
        cached = CachedDataset(source, tmp_path)
        cached[0]
        image, target = cached[0]
        image.zero_()
        target["boxes"].fill_(-1)
        assert_identical(cached[0], source[0])

    def test_readers_share_the_stored_file(self, tmp_path: Path) -> None:
        source = SyntheticDetection(1, image_size=(480, 640))
        cached = CachedDataset(source, tmp_path)
        cached[0]
        (name,) = samples_of(cached)
        stat = (cached.path / name).stat()
        held = [cached[0] for _ in range(5)]
        assert (cached.path / name).stat().st_mtime_ns == stat.st_mtime_ns  # read, not rewritten
        for sample in held:
            assert_identical(sample, source[0])
        assert cached.stored_bytes() == stat.st_size

    def test_many_live_samples_do_not_exhaust_file_descriptors(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(rankaug.cache._format, "_limit", [3])
        source = SyntheticDetection(12, image_size=(240, 320))
        cached = CachedDataset(source, tmp_path)
        for index in range(12):
            cached[index]
        before = open_descriptors()
        held = [cached[index] for index in range(12)]
        assert open_descriptors() - before <= 3  # mapped up to the limit, read after it
        for index, sample in enumerate(held):
            assert_identical(sample, source[index])
            assert sample["image"].flags.writeable

    # ------------------------------------------------------------ read_only_arrays
    def test_read_only_arrays_the_same_values_read_only(self, tmp_path: Path) -> None:
        source = SyntheticDetection(3, image_size=(480, 640), seed=2)
        cached = CachedDataset(source, tmp_path, read_only_arrays=True)
        assert cached.read_only_arrays
        first = cached[1]  # loaded, stored, and returned as read back
        again = cached[1]  # read from the mapping kept
        for sample in (first, again):
            assert_identical(sample, source[1])
            assert not sample["image"].flags.writeable
            assert not sample["mask"].flags.writeable
        assert np.shares_memory(first["image"], again["image"])  # one mapping, kept
        with pytest.raises(ValueError, match="read-only"):
            again["image"][0, 0] = 0

    def test_read_only_arrays_the_default_is_writable(self, tmp_path: Path) -> None:
        source = SyntheticDetection(1, image_size=(480, 640))
        cached = CachedDataset(source, tmp_path)
        assert not cached.read_only_arrays
        cached[0]
        assert cached[0]["image"].flags.writeable

    def test_read_only_arrays_a_sample_not_stored_is_as_loaded(self, tmp_path: Path) -> None:
        source = SyntheticDetection(2, image_size=(480, 640))
        cached = CachedDataset(source, tmp_path, max_bytes=0, read_only_arrays=True)
        sample = cached[0]
        assert not cached.is_cached(0)
        assert_identical(sample, source[0])
        assert sample["image"].flags.writeable  # the dataset's own array

    @pytest.mark.parametrize(
        "options",
        [{}, {"affine": MosaicAffine(flip=0.5)}, {"color": HSVJitter()}],
        ids=["plain", "affine-flip", "hsv"],
    )
    def test_read_only_arrays_under_a_mosaic_bit_for_bit(
        self, tmp_path: Path, options: dict[str, Any]
    ) -> None:
        source = SyntheticDetection(6, image_size=(120, 160), seed=3)
        writable = CachedDataset(source, tmp_path / "a")
        read_only = CachedDataset(source, tmp_path / "b", read_only_arrays=True)
        for cached in (writable, read_only):
            for index in range(6):
                cached[index]  # filled: the mosaics below read back
        plain = MosaicDataset(writable, seed=5, output_size=96, **options)
        kept = MosaicDataset(read_only, seed=5, output_size=96, **options)
        for index in range(6):
            assert_identical(kept[index], plain[index], f"mosaic[{index}]")

    @pytest.mark.parametrize("wrapper", [MixUpDataset, CutMixDataset])
    def test_read_only_arrays_under_a_mix_bit_for_bit(self, tmp_path: Path, wrapper: Any) -> None:
        source = SyntheticDetection(6, image_size=(120, 160), seed=3)
        writable = CachedDataset(source, tmp_path / "a")
        read_only = CachedDataset(source, tmp_path / "b", read_only_arrays=True)
        for cached in (writable, read_only):
            for index in range(6):
                cached[index]
        plain, kept = (wrapper(cached, seed=5, p=1.0) for cached in (writable, read_only))
        for index in range(6):
            assert_identical(kept[index], plain[index], f"{wrapper.__name__}[{index}]")

    @pytest.mark.parametrize("source", ["partner", "flip"])
    def test_read_only_arrays_under_copy_paste_bit_for_bit(
        self, tmp_path: Path, source: str
    ) -> None:
        samples = []
        for sample in (SyntheticDetection(6, image_size=(120, 160), seed=3)[i] for i in range(6)):
            masks = np.zeros((len(sample["bboxes"]), 120, 160), np.uint8)
            for k, (x0, y0, x1, y1) in enumerate(sample["bboxes"].astype(int).tolist()):
                masks[k, y0:y1, x0:x1] = 1  # one instance per box, its box filled
            samples.append({**{k: v for k, v in sample.items() if k != "mask"}, "masks": masks})
        writable = CachedDataset(ListDataset(samples), tmp_path / "a")
        read_only = CachedDataset(ListDataset(samples), tmp_path / "b", read_only_arrays=True)
        for cached in (writable, read_only):
            for index in range(6):
                cached[index]
        plain, kept = (
            CopyPasteDataset(cached, seed=5, p=1.0, source=source)
            for cached in (writable, read_only)
        )
        for index in range(6):
            assert_identical(kept[index], plain[index], f"copypaste[{index}]")

    def test_read_only_arrays_in_dataloader_workers(self, tmp_path: Path) -> None:
        source = SyntheticDetection(8, image_size=(120, 160), seed=4)
        cached = CachedDataset(source, tmp_path, read_only_arrays=True)
        assert pickle.loads(pickle.dumps(cached)).read_only_arrays
        mosaic = MosaicDataset(cached, seed=0, output_size=96, keying="sample")
        loader = DataLoader(mosaic, batch_size=None, num_workers=2, multiprocessing_context="fork")
        passes = []
        for _ in range(2):  # filled by the workers, then read by new ones
            mosaic.set_epoch(0)
            passes.append(list(loader))
        assert all(cached.is_cached(index) for index in range(8))
        local = MosaicDataset(source, seed=0, output_size=96, keying="sample")
        local.set_epoch(0)
        for index in range(8):
            expected = local[index]
            for batch in passes:
                for key in ("image", "bboxes", "labels"):
                    np.testing.assert_array_equal(batch[index][key], expected[key])

    def test_nothing_is_held_in_memory(self, tmp_path: Path) -> None:
        source = SyntheticDetection(8, image_size=(240, 320))
        cached = CachedDataset(source, tmp_path)
        empty = len(pickle.dumps(cached))
        for index in range(8):
            cached[index]
        assert len(pickle.dumps(cached)) == empty  # the samples live on disk only

    # ------------------------------------------------------------ errors
    def test_dataset_errors_name_the_index(self, tmp_path: Path) -> None:
        cached = CachedDataset(Failing(5, bad=3, error=KeyError("labels")), tmp_path)
        assert cached[2]["image"][0, 0] == 2
        with pytest.raises(SampleError, match=r"dataset\[3\] failed at index 3 .*KeyError") as info:
            cached[3]
        assert info.value.index == 3
        assert info.value.stage == "dataset[3]"
        assert isinstance(info.value.__cause__, KeyError)
        assert not cached.is_cached(3)

    def test_dataset_errors_carry_the_epoch_of_the_wrapper_above(self, tmp_path: Path) -> None:
        cached = CachedDataset(Failing(5, bad=3, error=KeyError("labels")), tmp_path)
        wrapper = RandomAugmentWrapper(cached, lambda sample, rng: sample, seed=0)
        wrapper.set_epoch(4)
        with pytest.raises(SampleError) as info:
            wrapper[3]
        assert (info.value.index, info.value.epoch) == (3, 4)
        assert "(rank 0, worker 0, epoch 4) in CachedDataset of" in str(info.value)
        with pytest.raises(SampleError) as alone:  # no wrapper above: the index's epoch
            cached[EpochIndex(3, epoch=2)]
        assert alone.value.epoch == 2
        with pytest.raises(SampleError, match=r"\(rank 0, worker 0\) in Cached") as plain:
            cached[3]
        assert plain.value.epoch is None

    def test_sample_errors_pass_through(self, tmp_path: Path) -> None:
        inner = SampleError("transform failed at index 1 (rank 0, worker 0, epoch 0): boom")
        cached = CachedDataset(Failing(3, bad=1, error=inner), tmp_path)
        with pytest.raises(SampleError) as info:
            cached[1]
        assert info.value is inner

    def test_indexing(self, tmp_path: Path) -> None:
        source = SyntheticDetection(4, image_size=16)
        cached = CachedDataset(source, tmp_path)
        assert len(cached) == 4
        assert_identical(cached[-1], source[3])
        assert cached.is_cached(3)
        assert_identical(cached[np.int64(3)], source[3])  # type: ignore[index]
        with pytest.raises(IndexError, match="index 4 is out of range for a dataset of length 4"):
            cached[4]
        with pytest.raises(TypeError, match="index must be an integer"):
            cached["0"]  # type: ignore[index]
        with pytest.raises(IndexError):
            cached.is_cached(-5)

    def test_unpicklable_samples_are_named(self, tmp_path: Path) -> None:
        cached = CachedDataset(ListDataset([{"f": lambda: 0}]), tmp_path)
        with pytest.raises(TypeError, match=r"cannot store dataset\[0\]: the sample cannot be"):
            cached[0]

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"dataset": "abc"}, TypeError, r"dataset must be a map-style dataset"),
            ({"directory": 3}, TypeError, r"directory must be a path .*, got 3 of type int"),
            ({"directory": b"x"}, TypeError, r"directory must be a path"),
            ({"directory": ""}, ValueError, r"directory must be a non-empty path, got ''"),
            ({"fingerprint": 3}, TypeError, r"fingerprint must be None or a non-empty string"),
            ({"fingerprint": ""}, ValueError, r"fingerprint must be None or a non-empty string"),
            ({"max_bytes": -1}, ValueError, r"max_bytes must be an integer >= 0, got -1"),
            ({"max_bytes": 1.5}, TypeError, r"max_bytes must be an integer >= 0, got 1.5"),
            ({"max_bytes": True}, TypeError, r"max_bytes must be an integer >= 0, got True"),
            ({"fsync": 1}, TypeError, r"fsync must be True or False, got 1"),
            ({"trust_directory": 1}, TypeError, r"trust_directory must be True or False, got 1"),
            ({"read_only_arrays": "yes"}, TypeError, r"read_only_arrays must be True or False"),
            ({"trusted_types": "Point"}, TypeError, r"trusted_types must be None or an iterable"),
            ({"trusted_types": [3]}, TypeError, r"trusted_types must hold classes .*got 3"),
        ],
    )
    def test_bad_arguments(
        self, tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        arguments: dict[str, Any] = {"dataset": SyntheticDetection(2), "directory": tmp_path}
        arguments.update(kwargs)
        dataset, directory = arguments.pop("dataset"), arguments.pop("directory")
        with pytest.raises(error, match=message):
            CachedDataset(dataset, directory, **arguments)

    def test_random_augmentation_cannot_be_cached(self, tmp_path: Path) -> None:
        source = SyntheticDetection(4, image_size=32)
        wrapped = RandomAugmentWrapper(source, A.Compose([A.HorizontalFlip()]), seed=0)
        with pytest.raises(ValueError, match="dataset must be deterministic, but it holds Rand"):
            CachedDataset(wrapped, tmp_path)
        hidden = Subset(MosaicDataset(source, output_size=32, seed=0), [0, 1])
        with pytest.raises(ValueError, match="holds MosaicDataset"):
            CachedDataset(hidden, tmp_path)
        mosaic = MosaicDataset(CachedDataset(source, tmp_path), output_size=32, seed=0)
        assert mosaic[0]["image"].shape == (32, 32, 3)  # below the augmentation is the place

    def test_a_file_in_the_way_is_named(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("x")
        with pytest.raises(OSError, match=r"cannot write to its directory .*file/cache") as info:
            CachedDataset(SyntheticDetection(2), tmp_path / "file" / "cache")
        assert info.value.errno in (errno.ENOTDIR, errno.EEXIST)

    @pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
    def test_a_read_only_directory_is_named(self, tmp_path: Path) -> None:
        (tmp_path / "ro").mkdir(mode=0o500)
        with pytest.raises(PermissionError, match=r"cannot write to its directory .*ro"):
            CachedDataset(SyntheticDetection(2), tmp_path / "ro")

    def test_a_full_disk_loses_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source = SyntheticDetection(4, image_size=(120, 160), seed=2)
        calls = []

        def disk_full(fd: int, chunks: Any) -> None:
            calls.append(fd)
            os.write(fd, b"RKCACHE\x01partial")  # some bytes made it, then the disk filled
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        cached = CachedDataset(source, tmp_path)
        monkeypatch.setattr(rankaug.cache._store, "write_chunks", disk_full)
        calls.clear()
        with pytest.warns(RankaugWarning, match=r"stopped caching in .*No space left on device"):
            first = cached[0]
        assert_identical(first, source[0])
        assert not cached.caching
        for index in range(4):  # no second warning, no second try, correct samples
            assert_identical(cached[index], source[index])
        assert len(calls) == 1
        assert files_under(cached.path) == ["bytes", "fingerprint.json"]  # nothing partial
        assert cached.stored_bytes() == 0
        monkeypatch.undo()
        later = CachedDataset(source, tmp_path)  # space again: a new instance caches
        assert_identical(later[1], source[1])
        assert later.is_cached(1)

    def test_a_torn_file_is_stored_again(self, tmp_path: Path) -> None:
        source = SyntheticDetection(2, image_size=(240, 320))
        cached = CachedDataset(source, tmp_path)
        cached[1]
        (name,) = samples_of(cached)
        path = cached.path / name
        whole = path.read_bytes()
        path.write_bytes(whole[: len(whole) // 2])  # what a crash could leave
        assert_identical(cached[1], source[1])
        assert path.read_bytes() == whole
        assert_identical(cached[1], source[1])

    def test_an_entry_copied_under_another_index_is_not_served(self, tmp_path: Path) -> None:
        # entry 1 holding sample 2's bytes (whole, with a good checksum): loaded and stored again
        source = SyntheticDetection(3, image_size=(60, 80))
        cached = CachedDataset(source, tmp_path)
        cached[1], cached[2]
        ones, twos = (cached.path / "0" / f"{index}.sample" for index in (1, 2))
        whole = ones.read_bytes()
        ones.write_bytes(twos.read_bytes())
        assert_identical(cached[1], source[1])
        assert ones.read_bytes() == whole
        assert_identical(cached[1], source[1])

    def test_an_entry_copied_from_another_cache_is_not_served(self, tmp_path: Path) -> None:
        # the same index of another dataset's cache (another key)
        source, other = (SyntheticDetection(2, image_size=(60, 80), seed=s) for s in (0, 1))
        cached, elsewhere = CachedDataset(source, tmp_path), CachedDataset(other, tmp_path)
        cached[0], elsewhere[0]
        assert cached.path != elsewhere.path
        mine = cached.path / "0" / "0.sample"
        whole = mine.read_bytes()
        mine.write_bytes((elsewhere.path / "0" / "0.sample").read_bytes())
        assert_identical(cached[0], source[0])
        assert mine.read_bytes() == whole

    def test_an_emptied_file_stored_again_keeps_the_count(self, tmp_path: Path) -> None:
        # its size on disk (0) was taken off the counter: it grew by a whole sample
        source = SyntheticDetection(2, image_size=(120, 160))
        cached = CachedDataset(source, tmp_path)
        cached[0], cached[1]
        size = cached.stored_bytes()
        (cached.path / samples_of(cached)[1]).write_bytes(b"")
        assert_identical(cached[1], source[1])
        assert cached.stored_bytes() == size

    # ------------------------------------------------------------ budget
    def test_max_bytes_bounds_the_store(self, tmp_path: Path) -> None:
        source = SyntheticDetection(6, image_size=(120, 160), seed=5)
        probe = CachedDataset(source, tmp_path / "probe")
        probe[0]
        size = probe.stored_bytes()
        cached = CachedDataset(source, tmp_path / "bounded", max_bytes=int(2.5 * size))
        for index in range(6):
            assert_identical(cached[index], source[index])
        stored = samples_of(cached)
        assert 1 <= len(stored) <= 2
        assert cached.stored_bytes() <= 2.5 * size
        assert cached.stored_bytes() == sum((cached.path / n).stat().st_size for n in stored)
        assert cached.caching  # what does not fit is skipped; smaller samples still fit
        for index in range(6):  # served correctly either way
            assert_identical(cached[index], source[index])

    def test_max_bytes_zero_stores_nothing(self, tmp_path: Path) -> None:
        source = SyntheticDetection(3, image_size=32)
        cached = CachedDataset(source, tmp_path, max_bytes=0)
        for index in range(3):
            assert_identical(cached[index], source[index])
        assert samples_of(cached) == []
        assert cached.stored_bytes() == 0

    # ------------------------------------------------------------ fingerprints
    def test_a_changed_file_starts_a_new_cache(self, tmp_path: Path) -> None:
        root = write_yolo_folder(SyntheticDetection(3, image_size=(30, 40), seed=1), tmp_path / "d")
        before = CachedDataset(YoloFolder(root), tmp_path / "cache")
        old = [before[index] for index in range(3)]
        image = root / "images" / "000001.png"
        cv2.imwrite(str(image), np.full((30, 40, 3), 7, np.uint8))
        status = image.stat()
        os.utime(image, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))
        after = CachedDataset(YoloFolder(root), tmp_path / "cache")
        assert after.path != before.path
        assert (after[1]["image"] == 7).all()
        assert_identical(before[1], old[1])  # the old cache is whole for its readers
        assert after.prune() == [before.path]
        assert not before.path.exists()
        assert after.prune() == []

    def test_a_changed_array_the_repr_abbreviates_starts_a_new_cache(self, tmp_path: Path) -> None:
        # a dataclass's repr prints a large array's corners alone: it was the whole key,
        # and the second dataset was served the first one's pixels
        images = np.zeros((4, 64, 64, 3), np.uint8)
        edited = images.copy()
        edited[1, 30, 30] = 255
        before = CachedDataset(Frames(images), tmp_path)
        assert int(before[1]["image"].max()) == 0
        after = CachedDataset(Frames(edited), tmp_path)
        assert after.path != before.path
        assert int(after[1]["image"].max()) == 255

    def test_a_new_label_file_starts_a_new_cache(self, tmp_path: Path) -> None:
        root = write_yolo_folder(SyntheticDetection(2, image_size=(30, 40)), tmp_path / "d")
        (root / "labels" / "000001.txt").unlink()
        before = CachedDataset(YoloFolder(root), tmp_path / "cache")
        (root / "labels" / "000001.txt").write_text("0 0.5 0.5 0.5 0.5\n")
        after = CachedDataset(YoloFolder(root), tmp_path / "cache")
        assert after.path != before.path
        assert after[1]["labels"].tolist() == [0]

    def test_settings_key_the_cache(self, tmp_path: Path) -> None:
        root = write_yolo_folder(SyntheticDetection(2, image_size=(30, 40)), tmp_path / "d")
        paths = {
            CachedDataset(YoloFolder(root, **options), tmp_path / "cache").path
            for options in ({}, {"image_size": 20}, {"image_size": 20, "reduced_decode": False},
                            {"box_format": "yolo"})
        }  # fmt: skip
        assert len(paths) == 4
        coco, _ = write_coco(SyntheticDetection(2, image_size=(30, 40)), tmp_path / "coco")
        small = CocoDetection(coco, tmp_path / "coco" / "images", image_size=20)
        cached = CachedDataset(small, tmp_path / "cache")
        assert cached.path not in paths
        assert_identical(cached[1], small[1])
        seeds = {CachedDataset(SyntheticDetection(2, seed=s), tmp_path / "c").path for s in (0, 1)}
        assert len(seeds) == 2

    def test_a_given_fingerprint_replaces_the_file_check(self, tmp_path: Path) -> None:
        root = write_yolo_folder(SyntheticDetection(2, image_size=(30, 40)), tmp_path / "d")
        first = CachedDataset(YoloFolder(root), tmp_path / "cache", fingerprint="v1")
        image = root / "images" / "000000.png"
        os.utime(image, ns=(image.stat().st_atime_ns, image.stat().st_mtime_ns + 10**9))
        same = CachedDataset(YoloFolder(root), tmp_path / "cache", fingerprint="v1")
        other = CachedDataset(YoloFolder(root), tmp_path / "cache", fingerprint="v2")
        assert same.path == first.path
        assert other.path != first.path
        assert "given=v1" in first.fingerprint.text
        assert f"repr={YoloFolder(root)!r}" in first.fingerprint.text  # settings still key it
        assert "v1" in (first.path / "fingerprint.json").read_text()

    def test_prune_keeps_its_own_and_foreign_folders(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        old = CachedDataset(SyntheticDetection(2, image_size=16, seed=1), "relative")
        current = CachedDataset(SyntheticDetection(2, image_size=16, seed=2), "relative")
        assert current.directory == tmp_path / "relative"
        assert current.path.is_absolute()
        (tmp_path / "relative" / "notes").mkdir()
        (tmp_path / "relative" / "notes" / "fingerprint.json").write_text("{}")
        assert current.prune() == [old.path]
        assert current.path.is_dir()
        assert (tmp_path / "relative" / "notes").is_dir()

    def test_one_folder_however_it_is_spelled(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        (tmp_path / "cache").mkdir()
        (tmp_path / "sub").mkdir()
        (tmp_path / "link").symlink_to(tmp_path / "cache")
        source = SyntheticDetection(2, image_size=16)
        first = CachedDataset(source, "cache")
        for spelled in (tmp_path / "cache", "sub/../cache", "link", tmp_path / "link" / "."):
            again = CachedDataset(source, spelled)
            assert (again.directory, again.path) == (tmp_path / "cache", first.path)

    def test_a_blind_fingerprint_warns(self, tmp_path: Path) -> None:
        with pytest.warns(RankaugWarning, match="cannot tell when Anonymous changes: it has no "
                          "settings repr and no source_files.*Two different datasets of this "
                          "class and length would share one cache"):  # fmt: skip
            CachedDataset(Anonymous(), tmp_path)
        quiet = CachedDataset(Anonymous(), tmp_path, fingerprint="anonymous v1")
        assert quiet[2] == {"value": 2}

    def test_files_without_a_settings_repr_warn(self, tmp_path: Path) -> None:
        image = tmp_path / "a.npy"
        np.save(image, np.full((2, 2), 2, np.uint8))
        said = r"keys Scaled by the files its source_files\(\) lists, but it has no settings repr"
        with pytest.warns(RankaugWarning, match=said):
            once = CachedDataset(Scaled([image], 1), tmp_path / "cache")
        assert once[0].tolist() == [[2, 2], [2, 2]]
        with pytest.warns(RankaugWarning, match="Give Scaled a __repr__ naming its settings"):
            thrice = CachedDataset(Scaled([image], 3), tmp_path / "cache")
        assert thrice.path == once.path  # what the warning says: the old samples are served
        named = CachedDataset(Scaled([image], 3), tmp_path / "cache", fingerprint="scale 3")
        assert named[0].tolist() == [[6, 6], [6, 6]]

    def test_random_splits_get_caches_of_their_own(self, tmp_path: Path) -> None:
        source = SyntheticDetection(10, image_size=16, seed=3)
        for seed in (1, 2):  # two runs: other splits of the same sizes
            split = torch.Generator().manual_seed(seed)
            train, _ = torch.utils.data.random_split(source, [0.5, 0.5], generator=split)
            cached = CachedDataset(train, tmp_path)
            for position, index in enumerate(train.indices):
                assert_identical(cached[position], source[index])
        assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2

    def test_a_repr_with_an_address_keeps_its_settings(self, tmp_path: Path) -> None:
        def same(image: Any) -> Any:
            return image

        def scaled(size: int) -> ListDataset:  # its repr: "... version='8 <function ... at 0x...>'"
            return ListDataset([np.zeros((size, size))], f"{size} {same}")

        with pytest.warns(RankaugWarning, match="parts of it are memory addresses"):
            small = CachedDataset(scaled(4), tmp_path)
        assert small[0].shape == (4, 4)
        with pytest.warns(RankaugWarning, match="parts of it are memory addresses"):
            large = CachedDataset(scaled(8), tmp_path)
        assert large.path != small.path
        assert large[0].shape == (8, 8)

    def test_a_hugging_face_transform_is_warned_about(self, tmp_path: Path) -> None:
        datasets = pytest.importorskip("datasets")
        crop = A.Compose([A.RandomCrop(8, 8)])  # as in Hugging Face's tutorials

        def transforms(batch: dict[str, Any]) -> dict[str, Any]:
            batch["image"] = [
                crop(image=np.asarray(im, np.uint8))["image"] for im in batch["image"]
            ]
            return batch

        images = [np.full((16, 16, 3), index, np.uint8) for index in range(2)]
        train = datasets.Dataset.from_dict({"image": images}).with_transform(transforms)
        with pytest.warns(RankaugWarning, match=r"found a Hugging Face transform \(transforms"):
            CachedDataset(train, tmp_path)

    def test_a_random_hugging_face_fingerprint_warns(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        datasets = pytest.importorskip("datasets")
        monkeypatch.setattr(datasets.fingerprint, "fingerprint_warnings", {})  # this test's
        rows = datasets.Dataset.from_dict({"label": [0, 1]}).with_format("numpy")
        mapped = rows.map(Unhashable(), batched=True)  # datasets falls back to a random hash
        with pytest.warns(RankaugWarning, match="Hugging Face datasets fingerprint, which may be "
                          "random: datasets could not hash"):  # fmt: skip
            CachedDataset(mapped, tmp_path)
        CachedDataset(mapped, tmp_path / "named", fingerprint="labels v1")

    # ------------------------------------------------------------ workers
    def test_pickles_without_state(self, tmp_path: Path) -> None:
        source = SyntheticDetection(3, image_size=64)
        cached = CachedDataset(source, tmp_path)
        cached[0]
        copy = pickle.loads(pickle.dumps(cached))
        assert copy.path == cached.path
        assert copy.is_cached(0)
        assert_identical(copy[0], source[0])

    def test_dataloader_workers_fill_and_read(self, tmp_path: Path) -> None:
        assert_filled_and_read(*fill_and_read(tmp_path, "fork"))

    @pytest.mark.slow  # each spawned worker imports torch: run ahead (tests/ahead.py)
    def test_spawned_dataloader_workers_fill_and_read(self, tmp_path: Path) -> None:
        assert_filled_and_read(*ahead.result("cache-spawn", lambda: tmp_path))
