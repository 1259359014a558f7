"""Tests for rankaug.cache._format: the file of one cached sample."""

from __future__ import annotations

import errno
import io
import os
import pickle
import resource
import struct
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from rankaug.cache import _format, _kept
from rankaug.cache._format import INLINE_BYTES, MAGIC, Corrupt, encode, map_limit, read
from rankaug.cache._kept import KEPT, Kept
from rankaug.cache._trust import Untrusted
from tests.cache.helpers import Point, assert_identical, forge


def write(path: Path, sample: Any) -> bytes:
    chunks, size = encode(sample)
    data = b"".join(bytes(chunk) for chunk in chunks)
    assert len(data) == size
    path.write_bytes(data)
    return data


def a_sample(height: int, width: int) -> dict[str, Any]:
    """An image of varied bytes, small boxes and a name."""
    image = np.arange(height * width * 3, dtype=np.uint32).astype(np.uint8)
    return {
        "image": image.reshape(height, width, 3),
        "boxes": np.ones((3, 4), np.float32),
        "name": "a.jpg",
    }


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


class TestEncodeAndRead:
    def test_round_trip(self, tmp_path: Path) -> None:
        sample = {**a_sample(480, 640), "tensor": torch.arange(10000, dtype=torch.int32)}
        write(tmp_path / "s", sample)
        back = read(str(tmp_path / "s"))
        assert_identical(back, sample)

    def test_large_arrays_out_of_band_and_aligned(self, tmp_path: Path) -> None:
        big = np.full(INLINE_BYTES, 7, np.uint8)
        small = np.full(INLINE_BYTES - 1, 9, np.uint8)
        data = write(tmp_path / "s", {"big": big, "small": small, "big2": big.astype(np.int16)})
        magic, size, payload, count, index, key = struct.unpack_from("<8sQQIQ16s4x", data)
        assert magic == MAGIC
        assert (index, key) == (0, bytes(16))  # encode's defaults
        assert size == len(data)
        assert count == 2  # the two large arrays; the small one is inside the pickle
        for number in range(count):
            offset, length = struct.unpack_from("<QQ", data, 56 + 16 * number)
            assert offset % 64 == 0
            assert length in (big.nbytes, 2 * big.nbytes)
        assert payload > small.nbytes  # the small array's bytes are in the pickle

    def test_arrays_come_back_writable_on_private_pages(self, tmp_path: Path) -> None:
        image = np.arange(300 * 400, dtype=np.float64).reshape(300, 400)
        data = write(tmp_path / "s", image)
        back = read(str(tmp_path / "s"))
        assert type(back) is np.ndarray
        assert back.flags.writeable
        back[:] = -1.0
        assert (tmp_path / "s").read_bytes() == data
        assert_identical(read(str(tmp_path / "s")), image)

    def test_a_small_file_is_read_not_mapped(self, tmp_path: Path) -> None:
        write(tmp_path / "s", np.ones(20000, np.uint8))  # out of band, in a 20 kB file
        before = open_descriptors()
        held = [read(str(tmp_path / "s")) for _ in range(20)]
        assert open_descriptors() == before
        assert all(array.flags.writeable and array.sum() == 20000 for array in held)

    def test_a_large_file_is_mapped(self, tmp_path: Path) -> None:
        write(tmp_path / "s", np.ones(1 << 20, np.uint8))
        before = open_descriptors()
        held = read(str(tmp_path / "s"))
        assert open_descriptors() == before + 1  # the mapping's own descriptor
        del held
        assert open_descriptors() == before  # gone with the array

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(FileNotFoundError):
            read(str(tmp_path / "nope"))

    @pytest.mark.parametrize(
        "damage",
        [
            lambda data: data[:10],  # shorter than a header
            lambda data: data[: len(data) // 2],  # cut short
            lambda data: data + b"\0",  # longer than it says
            lambda data: b"RKCACHE\x01" + data[8:],  # another (an older) format
            lambda data: data[:56] + struct.pack("<QQ", 1 << 40, 8) + data[72:],  # bad offset
            lambda data: data[:72] + b"\xff" * 8 + data[80:],  # a torn pickle
        ],
    )
    def test_damaged_files_are_corrupt(self, tmp_path: Path, damage: Any) -> None:
        data = write(tmp_path / "s", {"image": np.ones((200, 200), np.uint16), "x": "y" * 50})
        (tmp_path / "s").write_bytes(damage(data))
        with pytest.raises(Corrupt, match=str(tmp_path / "s")):
            read(str(tmp_path / "s"))

    def test_a_file_holds_its_index_and_cache_key(self, tmp_path: Path) -> None:
        key, other = "0123456789abcdef" * 2, "f" * 32
        chunks, _ = encode({"x": np.arange(3)}, index=7, key=key)
        path = tmp_path / "s"
        path.write_bytes(b"".join(bytes(chunk) for chunk in chunks))
        assert read(str(path), index=7, key=key)["x"].tolist() == [0, 1, 2]
        assert read(str(path), index=7)["x"].tolist() == [0, 1, 2]  # any key
        with pytest.raises(Corrupt, match=rf"^{path}: holds dataset\[7\] of the cache {key}, "
                           r"not dataset\[6\] \(copied or moved from elsewhere\)"):  # fmt: skip
            read(str(path), index=6, key=key)
        with pytest.raises(Corrupt, match=rf"holds dataset\[7\] of the cache {key}, not "
                           rf"dataset\[7\] of the cache {other}"):  # fmt: skip
            read(str(path), index=7, key=other)
        with pytest.raises(Corrupt, match=r"not dataset\[6\]"):  # kept: checked again
            read(str(path), index=6, keep=True, verify=False)

    def test_a_file_of_the_older_format_is_refused_as_such(self, tmp_path: Path) -> None:
        data = write(tmp_path / "s", {"x": 1})
        (tmp_path / "s").write_bytes(b"RKCACHE\x02" + data[8:])
        with pytest.raises(Corrupt, match=r"an entry of an older rankaug cache format "
                           r"\(RKCACHE 2, which does not record the index it holds\)"):  # fmt: skip
            read(str(tmp_path / "s"))

    def test_map_limit(self) -> None:
        assert 0 <= map_limit() <= 1024


def minor_faults() -> int:
    """This process's minor page faults so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


class TestKeep:
    """``read(..., keep=True)``: read-only arrays over a mapping kept between reads."""

    def test_the_same_values_read_only(self, tmp_path: Path) -> None:
        sample = a_sample(300, 400)
        write(tmp_path / "s", sample)
        for _ in range(2):  # the read that keeps the mapping, and one from it
            back = read(str(tmp_path / "s"), keep=True)
            assert_identical(back, sample)
            assert not back["image"].flags.writeable
            with pytest.raises(ValueError, match="read-only"):
                back["image"][0, 0, 0] = 1
            assert back["boxes"].flags.writeable  # inside the pickle: a fresh copy

    def test_a_kept_file_deleted_is_gone(self, tmp_path: Path) -> None:
        write(tmp_path / "s", np.full((512, 1024), 3, np.uint16))
        held = read(str(tmp_path / "s"), keep=True)
        (tmp_path / "s").unlink()
        with pytest.raises(FileNotFoundError):  # as without keep: not cached any more
            read(str(tmp_path / "s"), keep=True)
        assert KEPT.get(str(tmp_path / "s")) is None  # let go: unmapped with the last array
        assert int(held[0, 0]) == 3  # what was read stays readable

    def test_a_kept_file_replaced_is_read_anew(self, tmp_path: Path) -> None:
        write(tmp_path / "s", np.full((512, 1024), 3, np.uint16))
        first = read(str(tmp_path / "s"), keep=True)
        write(tmp_path / "new", np.full((512, 1024), 4, np.uint16))
        os.replace(tmp_path / "new", tmp_path / "s")  # a new file at the same path
        again = read(str(tmp_path / "s"), keep=True)
        assert int(again[0, 0]) == 4
        assert int(first[0, 0]) == 3
        assert not np.shares_memory(first, again)

    def test_a_kept_file_written_to_is_checked_again(self, tmp_path: Path) -> None:
        data = write(tmp_path / "s", np.full((512, 1024), 3, np.uint16))
        read(str(tmp_path / "s"), keep=True)
        time.sleep(0.01)  # a later modification time
        with open(tmp_path / "s", "r+b") as file:  # the same file, a byte changed
            file.seek(len(data) - 1)
            file.write(b"\x07")
        with pytest.raises(Corrupt, match="damaged"):
            read(str(tmp_path / "s"), keep=True)

    def test_kept_mappings_hold_no_descriptor(self, tmp_path: Path) -> None:
        for number in range(40):
            write(tmp_path / f"s{number}", np.full(1 << 17, number, np.uint8))
        before = open_descriptors()
        held = [read(str(tmp_path / f"s{number}"), keep=True) for number in range(40)]
        assert open_descriptors() == before
        assert [int(array[0]) for array in held] == list(range(40))

    def test_a_file_read_again_reads_the_same_pages(self, tmp_path: Path) -> None:
        write(tmp_path / "s", np.full(1 << 22, 5, np.uint8))  # 4 MiB
        path = str(tmp_path / "s")
        first = read(path, keep=True)
        first.sum()  # its pages faulted in once
        start = minor_faults()
        again = read(path, keep=True)
        assert again.sum() == 5 << 22
        # no page of its 1024 faulted in again (a few faults are the process's own: numpy's
        # reduction buffer, another thread; <= 2 failed once in a busy full run)
        assert minor_faults() - start < 64
        assert np.shares_memory(first, again)  # the same mapping
        assert not np.shares_memory(read(path), read(path))  # mapped afresh each time

    def test_tensors_are_copied_writable(self, tmp_path: Path) -> None:
        tensor = torch.arange(1 << 16, dtype=torch.int32)
        write(tmp_path / "s", {"t": tensor})
        read(str(tmp_path / "s"), keep=True)
        back = read(str(tmp_path / "s"), keep=True)["t"]
        back.fill_(-1)  # its own memory: the file and later reads keep their values
        assert torch.equal(read(str(tmp_path / "s"), keep=True)["t"], tensor)

    def test_a_small_file_is_read_only_too(self, tmp_path: Path) -> None:
        write(tmp_path / "s", np.ones(20000, np.uint8))  # read, never mapped
        back = read(str(tmp_path / "s"), keep=True)
        assert not back.flags.writeable
        assert back.sum() == 20000

    def test_without_the_c_library_read_into_read_only_memory(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(_kept, "_LIBC", None)
        image = np.full((512, 512), 9, np.uint8)
        write(tmp_path / "s", image)
        back = read(str(tmp_path / "s"), keep=True)
        assert_identical(back, image)
        assert not back.flags.writeable
        assert KEPT.get(str(tmp_path / "s")) is None  # nothing kept

    def test_a_mapping_the_kernel_refuses_is_read_instead(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def refused(fd: int, size: int) -> memoryview:
            raise OSError(errno.ENOMEM, "mmap of a cache file failed: Cannot allocate memory")

        kept = Kept(limit=8)
        kept.keep("/elsewhere", memoryview(b"x"), (0, 0), 0)
        monkeypatch.setattr(_format, "map_read_only", refused)
        monkeypatch.setattr(_format, "KEPT", kept)
        image = np.full((512, 512), 9, np.uint8)
        write(tmp_path / "s", image)
        back = read(str(tmp_path / "s"), keep=True)
        assert_identical(back, image)
        assert not back.flags.writeable
        assert len(kept) == 0  # the oldest let go, for later reads to map theirs

    def test_verify_reads_the_file_again(self, tmp_path: Path) -> None:
        data = write(tmp_path / "s", np.full((256, 1024), 1, np.uint8))
        read(str(tmp_path / "s"), keep=True)
        damaged = bytearray(data)
        damaged[-1] ^= 0xFF
        (tmp_path / "s").unlink()
        (tmp_path / "s").write_bytes(bytes(damaged))  # a new file at the same path
        with pytest.raises(Corrupt, match="damaged"):
            read(str(tmp_path / "s"), keep=True, verify=True)

    def test_a_damaged_file_is_not_kept(self, tmp_path: Path) -> None:
        data = write(tmp_path / "s", np.full((256, 1024), 1, np.uint8))
        (tmp_path / "s").write_bytes(data[:48] + b"\xff" * 8 + data[56:])  # a torn pickle
        with pytest.raises(Corrupt):
            read(str(tmp_path / "s"), keep=True)
        assert KEPT.get(str(tmp_path / "s")) is None  # the failed read kept nothing


class TestRefuseGlobal:
    def test_a_type_of_the_users_is_named_to_trust(self, tmp_path: Path) -> None:
        path = tmp_path / "0.sample"
        path.write_bytes(forge(pickle.dumps(Point(1, 2), protocol=5)))
        with pytest.raises(Untrusted, match=r"calls tests\.cache\.helpers\.Point") as info:
            read(str(path))
        assert "If that is a type of your samples, pass trusted_types=[Point]" in str(info.value)
        assert info.value.refused == ("tests.cache.helpers", "Point")

    def test_a_private_function_is_never_named_to_trust(self, tmp_path: Path) -> None:
        # torch's own pickling of a tensor: trusting _rebuild_tensor_v2 and then
        # _load_from_bytes, as the message led to, lets a file run torch.load
        stream = io.BytesIO()
        pickle.Pickler(stream, protocol=5).dump(torch.ones(2))
        path = tmp_path / "0.sample"
        path.write_bytes(forge(stream.getvalue()))
        with pytest.raises(Untrusted, match=r"calls torch\._utils\._rebuild_tensor_v2") as info:
            read(str(path))
        assert "A library's private function is no type of your samples" in str(info.value)
        assert "trusted_types" not in str(info.value)
        assert info.value.refused is None
