"""Tests for rankaug.cache.CachedDataset: never stale, damaged, planted, or lost.

Stale keys, checksums, planted entries, foreign owners, full disks, read-only caches,
the budget and dead writers (the rest of the class: tests/cache/test_init.py).
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import pickle
import signal
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from torch.utils.data import Dataset

import rankaug.cache._store
from rankaug import MosaicDataset, RankaugWarning
from rankaug.cache import CachedDataset
from rankaug.datasets import SyntheticDetection, YoloFolder, write_yolo_folder
from tests.cache.helpers import ListDataset, Planted, Point, assert_identical, forge

FORK = multiprocessing.get_context("fork")


def entries(cached: CachedDataset[Any]) -> list[Path]:
    return sorted(cached.path.glob("*/[!.]*.sample"))


class Inner(Dataset[Any]):
    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> Any:
        return index


def read_only(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """What a read-only mount does under ``root``: every write fails with EROFS.

    (The tests run as root, whom ``chmod`` does not stop.)
    """
    real_open, real_mkdir = os.open, os.mkdir
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def refused(path: Any) -> OSError:
        return OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    def under(path: Any) -> bool:
        return Path(os.fspath(path)).absolute().is_relative_to(root)

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & writes and under(path):
            raise refused(path)
        return real_open(path, flags, *args, **kwargs)

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        if under(path):
            if os.path.isdir(path):
                raise FileExistsError(errno.EEXIST, "exists", os.fspath(path))
            raise refused(path)
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)
    for name in ("unlink", "replace", "rename"):
        monkeypatch.setattr(os, name, lambda *a, **k: (_ for _ in ()).throw(refused(a[0])))


def _store_and_hang(directory: str, ready: Any) -> None:
    def hang(fd: int, chunks: Any) -> None:
        os.write(fd, b"RKCACHE\x02" + bytes(100000))
        ready.set()
        signal.pause()  # mid-write, until SIGKILL

    rankaug.cache._store.write_chunks = hang  # type: ignore[assignment]
    CachedDataset(SyntheticDetection(4, image_size=64), directory)[2]


class TestCachedDatasetSafety:
    # ------------------------------------------------------------ stale keys
    def test_a_given_fingerprint_adds_to_the_settings(self, tmp_path: Path) -> None:
        root = write_yolo_folder(SyntheticDetection(2, image_size=64), tmp_path / "d")
        big = CachedDataset(YoloFolder(root), tmp_path / "c", fingerprint="v1")
        assert big[0]["image"].shape == (64, 64, 3)
        small = CachedDataset(YoloFolder(root, image_size=32), tmp_path / "c", fingerprint="v1")
        assert small[0]["image"].shape == (32, 32, 3)  # not the 64-pixel one cached before
        yolo = CachedDataset(YoloFolder(root, box_format="yolo"), tmp_path / "c", fingerprint="v1")
        assert_identical(yolo[0], YoloFolder(root, box_format="yolo")[0])
        assert len({big.path, small.path, yolo.path}) == 3

    def test_a_list_is_keyed_by_its_content(self, tmp_path: Path) -> None:
        def samples(value: int) -> list[dict[str, Any]]:
            image = np.zeros((100, 100), np.uint8)
            image[50, 50] = value
            return [{"image": image}, {"image": image + 1}]

        first = CachedDataset(samples(0), tmp_path)
        assert first[0]["image"][50, 50] == 0
        changed = CachedDataset(samples(9), tmp_path)  # the same repr, another pixel
        assert changed.path != first.path
        assert changed[0]["image"][50, 50] == 9
        assert CachedDataset(samples(0), tmp_path).path == first.path

    def test_a_list_of_other_objects_needs_a_fingerprint(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match=r"list of samples holding object.*fingerprint="):
            CachedDataset([{"x": object()}], tmp_path)
        assert CachedDataset([{"x": 1}], tmp_path, fingerprint="v1")[0] == {"x": 1}

    @pytest.mark.parametrize("hide", [lambda m: m, lambda m: [m], lambda m: {"train": m}])
    def test_a_random_wrapper_held_anyhow_is_refused(self, tmp_path: Path, hide: Any) -> None:
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=32), output_size=32, seed=0)
        with pytest.raises(ValueError, match=r"holds MosaicDataset \(at dataset.inner"):
            CachedDataset(Inner(hide(mosaic)), tmp_path)

    # ------------------------------------------------------------ integrity
    def test_damaged_pixels_are_never_served(self, tmp_path: Path) -> None:
        source = SyntheticDetection(2, image_size=(240, 320), seed=3)
        cached = CachedDataset(source, tmp_path)
        cached[1]
        (path,) = entries(cached)
        whole = path.read_bytes()
        with open(path, "r+b") as file:  # bytes in the pixel region overwritten
            file.seek(len(whole) // 2)
            file.write(b"\x55" * 64)
        assert_identical(cached[1], source[1])  # loaded again, not the damaged pixels
        assert path.read_bytes() == whole  # and the file rewritten
        assert cached.stored_bytes() == len(whole)  # counted once
        assert_identical(CachedDataset(source, tmp_path)[1], source[1])

    # ------------------------------------------------------------ nobody else's code
    def test_a_planted_entry_never_runs(self, tmp_path: Path) -> None:
        cached = CachedDataset(SyntheticDetection(2, image_size=32), tmp_path / "c")
        cached[0]
        (path,) = entries(cached)
        target = tmp_path / "pwned"
        path.write_bytes(forge(pickle.dumps({"image": Planted(str(target))}, protocol=5)))
        with pytest.raises(ValueError, match=r"calls posix\.system, which is not one of the"):
            cached[0]
        assert not target.exists()

    def test_a_sample_of_other_types_needs_trusted_types(self, tmp_path: Path) -> None:
        plain = CachedDataset(ListDataset([Point(1, 2)]), tmp_path)
        with pytest.raises(TypeError, match=r"holds tests.cache.helpers.Point.*trusted_types"):
            plain[0]
        trusting = CachedDataset(ListDataset([Point(1, 2)]), tmp_path, trusted_types=[Point])
        assert trusting[0] == Point(1, 2)
        assert trusting[0] == Point(1, 2)  # read back
        with pytest.raises(ValueError, match=r"calls tests.cache.helpers.Point"):
            plain[0]  # what it stored, another reader does not build

    @pytest.mark.parametrize("damage", ["owner", "mode"])
    def test_entries_others_could_write_are_refused(self, tmp_path: Path, damage: str) -> None:
        source = SyntheticDetection(2, image_size=32)
        cached = CachedDataset(source, tmp_path)
        cached[0]
        (path,) = entries(cached)
        if damage == "owner":
            os.chown(path, 12345, -1)  # the tests run as root
        else:
            path.chmod(0o646)
        with pytest.raises(ValueError, match=rf"refuses the cache entry {path}: it is"):
            cached[0]
        trusting = CachedDataset(source, tmp_path, trust_directory=True)
        assert_identical(trusting[0], source[0])

    @pytest.mark.parametrize("damage", ["owner", "mode"])
    def test_directories_others_could_write_are_refused(self, tmp_path: Path, damage: str) -> None:
        directory = tmp_path / "shared"
        directory.mkdir()
        if damage == "owner":
            os.chown(directory, 12345, -1)
        else:
            directory.chmod(0o777)
        with pytest.raises(ValueError, match=rf"refuses the cache directory {directory}: it "):
            CachedDataset(SyntheticDetection(2), directory)
        assert CachedDataset(SyntheticDetection(2), directory, trust_directory=True)[1]

    # ------------------------------------------------------------ full and read-only
    def test_a_full_disk_at_construction_warns_once(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source = SyntheticDetection(4, image_size=(60, 80))
        before = CachedDataset(source, tmp_path)
        before[0]

        def disk_full(fd: int, chunks: Any) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(rankaug.cache._store, "write_chunks", disk_full)
        for directory in (tmp_path, tmp_path / "new"):  # a cache there, or none yet
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cached = CachedDataset(source, directory)
                samples = [cached[index] for index in range(4)]
            assert [str(w.message) for w in caught if w.category is RankaugWarning] == [
                str(caught[0].message)
            ]
            assert "No space left on device" in str(caught[0].message)
            assert not cached.caching
            for index, sample in enumerate(samples):
                assert_identical(sample, source[index])
        assert_identical(CachedDataset(source, tmp_path)[0], source[0])

    def test_a_read_only_cache_is_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source = SyntheticDetection(3, image_size=(60, 80))
        filled = CachedDataset(source, tmp_path)
        for index in range(3):
            filled[index]
        read_only(monkeypatch, tmp_path)
        cached = CachedDataset(source, tmp_path)  # filterwarnings=error: no warning
        for index in range(3):
            assert cached.is_cached(index)
            assert_identical(cached[index], source[index])
        assert not cached.caching
        fewer = CachedDataset(SyntheticDetection(3, image_size=(60, 80)), tmp_path)
        monkeypatch.undo()
        (fewer.path / "0" / "2.sample").unlink()
        read_only(monkeypatch, tmp_path)
        with pytest.warns(RankaugWarning, match=r"cannot store samples in .*dataset\[2\]"):
            assert_identical(fewer[2], source[2])
        assert_identical(fewer[2], source[2])  # once

    @pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
    def test_a_read_only_folder_is_read(self, tmp_path: Path) -> None:
        source = SyntheticDetection(2, image_size=32)
        filled = CachedDataset(source, tmp_path / "c")
        filled[0], filled[1]
        for folder in (tmp_path / "c", filled.path, filled.path / "0"):
            folder.chmod(0o555)
        assert_identical(CachedDataset(source, tmp_path / "c")[1], source[1])

    # ------------------------------------------------------------ budget
    def test_what_does_not_fit_is_skipped(self, tmp_path: Path) -> None:
        big = {"image": np.ones(2_000_000, np.uint8)}
        small = [{"image": np.full(10_000, n, np.uint8)} for n in range(5)]
        cached = CachedDataset(ListDataset([big, *small]), tmp_path, max_bytes=1_000_000)
        for index in range(6):
            cached[index]
        assert not cached.is_cached(0)
        assert all(cached.is_cached(index) for index in range(1, 6))
        assert cached.caching
        assert cached.stored_bytes() == sum(path.stat().st_size for path in entries(cached))

    def test_a_torn_entry_stored_again_is_counted_once(self, tmp_path: Path) -> None:
        source = SyntheticDetection(2, image_size=(120, 160))
        cached = CachedDataset(source, tmp_path)
        cached[0]
        (path,) = entries(cached)
        size = path.stat().st_size
        path.write_bytes(path.read_bytes()[: size // 3])
        assert_identical(cached[0], source[0])
        assert path.stat().st_size == size
        assert cached.stored_bytes() == size

    # ------------------------------------------------------------ dead writers
    def test_a_sigkilled_writers_temporary_file_is_removed(self, tmp_path: Path) -> None:
        ready = FORK.Event()
        writer = FORK.Process(target=_store_and_hang, args=(str(tmp_path), ready), daemon=True)
        writer.start()
        assert ready.wait(timeout=120)
        (left,) = tmp_path.rglob(".tmp-*")
        os.kill(writer.pid, signal.SIGKILL)
        writer.join(timeout=60)
        assert left.exists()
        cached = CachedDataset(SyntheticDetection(4, image_size=64), tmp_path)  # opens: cleans
        assert not left.exists()
        assert list(tmp_path.rglob(".tmp-*")) == []
        assert cached[2]["image"].shape == (64, 64, 3)
