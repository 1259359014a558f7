"""Tests for rankaug.cache._fingerprint: what keys a cache."""

from __future__ import annotations

import errno
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import ConcatDataset, Dataset, StackDataset, Subset, random_split

from rankaug import CachedDataset
from rankaug.cache._fingerprint import FORMAT, PLACEHOLDER, fingerprint
from tests.cache.helpers import Anonymous, Frames, ListDataset, Unhashable


class WithFiles(Dataset[Any]):
    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> Any:
        return index

    def source_files(self) -> list[Path]:
        return self.paths


class WithStats(WithFiles):
    def __init__(self, paths: list[Path], stats: dict[str, tuple[int, int] | None]) -> None:
        super().__init__(paths)
        self.stats = stats

    def source_stats(self) -> dict[str, tuple[int, int] | None]:
        return self.stats


class Addressed(ListDataset):
    def __repr__(self) -> str:
        return f"<Addressed at 0x{id(self):x}>"


class Settings(ListDataset):
    """A repr listing a size and a function: the function's address changes every run."""

    def __init__(self, size: int, transform: Any) -> None:
        super().__init__([0, 1])
        self.size, self.transform = size, transform

    def __repr__(self) -> str:
        return f"Settings(size={self.size}, transform={self.transform})"


def flip(image: Any) -> Any:
    return image


def _below_a_file(root: Path) -> Path:
    (root / "plain").write_text("1")
    return root / "plain" / "a.png"


def _looping(root: Path) -> Path:
    (root / "loop").symlink_to(root / "loop")
    return root / "loop"


def _locked(root: Path) -> Path:
    (root / "locked").mkdir()
    (root / "locked" / "a.png").write_text("1")
    (root / "locked").chmod(0)
    return root / "locked" / "a.png"


def _too_long(root: Path) -> Path:
    return root / ("a" * 300)  # one name over any file system's 255 bytes


#: The fix for a path that names no file: a part of it is a file, its links loop, too long.
_NOT_A_FILE = (
    r"failed \([^)]+\): the path is not a file that can be read\. .*: fix the path or "
    r"leave it out, or pass fingerprint="
)


#: Listed files whose stat fails otherwise than for a missing file, its errno and the fix.
UNSTATABLE = [
    pytest.param(_below_a_file, errno.ENOTDIR, _NOT_A_FILE, id="not-a-directory"),
    pytest.param(_looping, errno.ELOOP, _NOT_A_FILE, id="symlink-loop"),
    pytest.param(_too_long, errno.ENAMETOOLONG, _NOT_A_FILE, id="name-too-long"),
    pytest.param(
        _locked,
        errno.EACCES,
        r"failed \(Permission denied\)\. .*: make the file and its folders readable, or pass",
        id="permission",
        marks=pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder"),
    ),
]


class TestFingerprint:
    def test_class_length_and_repr(self) -> None:
        found = fingerprint(ListDataset([1, 2]), 2, None)
        assert found.text.splitlines() == [
            f"format={FORMAT}",
            "class=tests.cache.helpers.ListDataset",
            "length=2",
            "repr=ListDataset(version='v1', length=2)",
        ]
        assert found.sees_changes
        assert len(found.key) == 32
        assert fingerprint(ListDataset([1, 2]), 2, None).key == found.key
        assert fingerprint(ListDataset([1, 2], "v2"), 2, None).key != found.key
        assert fingerprint(ListDataset([1, 2]), 3, None).key != found.key

    def test_files_sizes_and_mtimes(self, tmp_path: Path) -> None:
        paths = [tmp_path / "a", tmp_path / "b"]
        for path in paths:
            path.write_text("1")
        first = fingerprint(WithFiles(paths), 2, None)
        assert first.sees_changes
        assert "files=2 sha256=" in first.text
        paths[1].write_text("12")  # size
        sized = fingerprint(WithFiles(paths), 2, None)
        status = paths[0].stat()
        os.utime(paths[0], ns=(status.st_atime_ns, status.st_mtime_ns + 1))  # mtime
        touched = fingerprint(WithFiles(paths), 2, None)
        paths[0].unlink()  # missing
        missing = fingerprint(WithFiles(paths), 2, None)
        assert len({first.key, sized.key, touched.key, missing.key}) == 4

    @pytest.mark.parametrize(("unstatable", "number", "fix"), UNSTATABLE)
    def test_a_file_whose_stat_fails_is_refused_naming_it_and_its_dataset(
        self, tmp_path: Path, unstatable: Callable[[Path], Path], number: int, fix: str
    ) -> None:
        # it was the bare OSError of os.stat, naming neither the dataset nor the cache;
        # then an error without os.stat's filename, advising a fix that did not fit
        kept = tmp_path / "kept"
        kept.write_text("1")
        path = unstatable(tmp_path)
        with pytest.raises(
            OSError, match=r"^\[Errno \d+\] CachedDataset cannot fingerprint With"
        ) as raised:
            fingerprint(WithFiles([kept, path]), 2, None)
        stat = raised.value.__cause__
        assert isinstance(stat, OSError)
        assert type(raised.value) is type(stat)  # PermissionError stays one
        assert (raised.value.errno, raised.value.filename) == (number, stat.filename)
        assert raised.value.filename == str(path)  # as os.stat's: the path, ending the message
        assert str(raised.value).endswith(f"(and change it with the data). The file: {str(path)!r}")
        assert "the stat of a file its source_files() lists failed" in str(raised.value)
        assert re.search(fix, str(raised.value))
        with pytest.raises(type(raised.value), match="cannot fingerprint WithFiles: the stat"):
            CachedDataset(WithFiles([path]), tmp_path / "cache")
        assert not (tmp_path / "cache").exists()  # nothing made under a key that cannot be

    def test_a_file_it_may_not_read_is_refused_advising_to_make_it_readable(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # the permission case of the test above, for a user whom modes stop (root is not)
        path = tmp_path / "locked.png"
        stat = os.stat

        def denied(name: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            if os.fspath(name) == str(path):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
            return stat(name, *args, **kwargs)

        monkeypatch.setattr(os, "stat", denied)
        with pytest.raises(PermissionError) as raised:
            fingerprint(WithFiles([path]), 1, None)
        assert (raised.value.errno, raised.value.filename) == (errno.EACCES, str(path))
        message = str(raised.value)
        assert "the stat of a file its source_files() lists failed (Permission denied)" in message
        assert ": make the file and its folders readable, or pass fingerprint='...'" in message
        assert "not a file that can be read" not in message
        assert "leave it out" not in message

    @pytest.mark.parametrize(
        "spelled",
        [
            pytest.param(lambda root: root / "a\0b.png", id="name"),
            pytest.param(lambda root: str(root / "a\0b" / "c.png"), id="folder"),
            pytest.param(lambda root: os.fsencode(root / "a\0b.png"), id="bytes"),
        ],
    )
    def test_a_path_holding_a_nul_byte_is_refused_naming_it_and_its_dataset(
        self, tmp_path: Path, spelled: Callable[[Path], Any]
    ) -> None:
        # it was os.stat's (or os.path.realpath's) bare ValueError("embedded null byte")
        path = spelled(tmp_path)
        named = repr(os.fsdecode(path))
        with pytest.raises(ValueError, match="holds a NUL byte") as raised:
            fingerprint(WithFiles([path]), 1, None)
        assert str(raised.value) == (
            f"CachedDataset cannot fingerprint WithFiles: the path {named}, a file its "
            "source_files() lists, holds a NUL byte: the path is not a file that can be read. "
            "Its cache is keyed by the size and modification time of every listed file, and a "
            "key that left this one out would not see it change: fix the path or leave it "
            "out, or pass fingerprint='...' naming this data (and change it with the data)"
        )
        with pytest.raises(ValueError, match="cannot fingerprint WithFiles: the path"):
            CachedDataset(WithFiles([path]), tmp_path / "cache")
        assert not (tmp_path / "cache").exists()

    def test_files_are_named_by_their_resolved_folder(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        for folder in ("data", "other/data"):
            (tmp_path / folder).mkdir(parents=True)
            (tmp_path / folder / "a").write_text("1")
        (tmp_path / "link").symlink_to(tmp_path / "data")
        (tmp_path / "sub").mkdir()
        spellings = ["data/a", "./data/a", tmp_path / "data" / "a", "sub/../data/a", "link/a"]
        stats = {"data/a": (1, 5), "link/a": (1, 5)}  # looked up as the reader names them
        keys = {fingerprint(WithFiles([Path(name)]), 1, None).key for name in spellings}
        keys.add(fingerprint(WithFiles([b"data/a"]), 1, None).key)  # type: ignore[list-item]
        parsed = {fingerprint(WithStats([Path(n)], stats), 1, None).key for n in stats}
        assert len(keys) == 1
        assert len(parsed) == 1
        status = (tmp_path / "data" / "a").stat()
        os.utime(tmp_path / "other/data/a", ns=(status.st_atime_ns, status.st_mtime_ns))
        monkeypatch.chdir(tmp_path / "other")  # the same name, size and mtime, another file
        assert fingerprint(WithFiles([Path("data/a")]), 1, None).key not in keys

    def test_parsed_files_count_as_they_were_parsed(self, tmp_path: Path) -> None:
        paths = [tmp_path / "image", tmp_path / "label"]
        for path in paths:
            path.write_text("1")
        plain = fingerprint(WithFiles(paths), 2, None)
        status = paths[1].stat()
        recorded = WithStats(paths, {str(paths[1]): (status.st_size, status.st_mtime_ns)})
        assert fingerprint(recorded, 2, None).text.splitlines()[3:] == plain.text.splitlines()[3:]
        paths[1].write_text("22")  # edited after it was parsed: the record still holds
        assert fingerprint(recorded, 2, None).text.splitlines()[3:] == plain.text.splitlines()[3:]
        paths[0].write_text("22")  # not parsed: read from the file system now
        assert fingerprint(recorded, 2, None).text.splitlines()[3:] != plain.text.splitlines()[3:]
        missing = WithStats(paths, {str(paths[1]): None})
        paths[1].unlink()
        assert (
            fingerprint(missing, 2, None).text.splitlines()[3:]
            == (fingerprint(WithFiles(paths), 2, None).text.splitlines()[3:])
        )

    def test_a_given_string_replaces_the_rest(self, tmp_path: Path) -> None:
        path = tmp_path / "a"
        path.write_text("1")
        given = fingerprint(WithFiles([path]), 1, "v7")
        path.write_text("22")
        assert fingerprint(WithFiles([path]), 1, "v7").key == given.key
        assert given.text.splitlines()[-1] == "given=v7"
        assert given.sees_changes

    def test_what_cannot_see_changes(self, tmp_path: Path) -> None:
        anonymous = fingerprint(Anonymous(), 3, None)
        assert not anonymous.sees_changes
        (caveat,) = anonymous.caveats
        assert caveat.startswith(
            "CachedDataset cannot tell when Anonymous changes: it has no settings repr and "
            "no source_files(), so its cache is keyed by its class and length alone. Two "
            "different datasets of this class and length would share one cache"
        )
        addressed = fingerprint(Addressed([1]), 1, None)
        assert not addressed.sees_changes  # an address changes every run: left out
        assert "0x" not in addressed.text
        assert (
            "when Addressed changes: its repr is only a memory address and no "
            in (addressed.caveats[0])
        )
        empty = fingerprint(WithFiles([]), 0, None)
        assert not empty.sees_changes  # no files: nothing of the data is seen
        assert "it has no settings repr and its source_files() lists no files" in (empty.caveats[0])
        assert fingerprint(Anonymous(), 3, "v1").caveats == ()  # the user names the data

    def test_files_without_a_settings_repr_are_a_caveat(self, tmp_path: Path) -> None:
        path = tmp_path / "a"
        path.write_text("1")
        found = fingerprint(WithFiles([path]), 1, None)
        assert found.sees_changes  # the files' changes are seen
        (caveat,) = found.caveats  # its settings (a transform, a size) are not: said so
        assert caveat.startswith(
            "CachedDataset keys WithFiles by the files its source_files() lists, but it has "
            "no settings repr: a change of its settings (a transform, an image size, an "
            "option) is not seen"
        )
        assert "Give WithFiles a __repr__ naming its settings" in caveat
        assert fingerprint(WithFiles([path]), 1, "v1").caveats == ()  # the user names them

    def test_a_folder_listed_as_a_source_file_is_a_caveat(self, tmp_path: Path) -> None:
        class Root(WithFiles):
            def __repr__(self) -> str:
                return "Root(v1)"

        (tmp_path / "a.png").write_bytes(b"1")
        first = fingerprint(Root([tmp_path]), 1, None)
        (tmp_path / "a.png").write_bytes(b"2")  # rewritten: the folder's stat alike
        assert fingerprint(Root([tmp_path]), 1, None).key == first.key
        (caveat,) = first.caveats  # said so
        assert caveat.startswith(
            f"CachedDataset keys Root by the files its source_files() lists, but it lists a "
            f"folder ({tmp_path.resolve()}), whose size and modification time do not change"
        )
        assert fingerprint(Root([tmp_path / "a.png"]), 1, None).caveats == ()

    def test_a_torchvision_image_folder_is_keyed_by_its_files(self, tmp_path: Path) -> None:
        folders = pytest.importorskip(
            "torchvision.datasets.folder",
            reason="torchvision is not installed here: it lives in .venv-tv (constraints-tv.txt)",
        )
        (tmp_path / "cat").mkdir()
        images = [tmp_path / "cat" / f"{n}.png" for n in range(2)]
        for image in images:
            image.write_bytes(b"1")  # never decoded here

        def keyed() -> Any:
            return fingerprint(folders.ImageFolder(str(tmp_path)), 2, None)

        first = keyed()
        assert "files=2 sha256=" in first.text
        assert first.caveats == ()
        images[1].write_bytes(b"22")  # an image replaced: its repr (root, transforms) alike
        assert keyed().key != first.key

    def test_other_torchvision_datasets_are_a_caveat(self) -> None:
        datasets = pytest.importorskip(
            "torchvision.datasets",
            reason="torchvision is not installed here: it lives in .venv-tv (constraints-tv.txt)",
        )
        small = fingerprint(datasets.FakeData(4, image_size=(3, 8, 8)), 4, None)
        large = fingerprint(datasets.FakeData(4, image_size=(3, 16, 16)), 4, None)
        assert small.key == large.key  # "Dataset FakeData, Number of datapoints: 4" alike
        (caveat,) = small.caveats  # said so
        assert caveat.startswith(
            "CachedDataset keys FakeData by its repr, which shows its class, size and root "
            "folder (and transforms) but none of its files or other settings"
        )
        assert fingerprint(datasets.FakeData(4), 4, "fake v1").caveats == ()

    def test_a_torchvision_download_keyed_by_its_repr_is_no_caveat(self, tmp_path: Path) -> None:
        # MNIST's repr shows its class, size, root, split and transforms, and its files
        # are the fixed published ones: warned "pass fingerprint=" for nothing
        datasets = pytest.importorskip(
            "torchvision.datasets",
            reason="torchvision is not installed here: it lives in .venv-tv (constraints-tv.txt)",
        )
        raw = tmp_path / "MNIST" / "raw"
        raw.mkdir(parents=True)
        for split in ("train", "t10k"):  # two 2x2 images and their labels, in idx format
            (raw / f"{split}-images-idx3-ubyte").write_bytes(
                bytes([0, 0, 8, 3]) + np.array([2, 2, 2], ">i4").tobytes() + bytes(8)
            )
            (raw / f"{split}-labels-idx1-ubyte").write_bytes(
                bytes([0, 0, 8, 1]) + np.array([2], ">i4").tobytes() + bytes([3, 7])
            )
        train = fingerprint(datasets.MNIST(str(tmp_path), train=True), 2, None)
        test = fingerprint(datasets.MNIST(str(tmp_path), train=False), 2, None)
        assert train.caveats == ()
        assert train.key != test.key  # the split is in its repr

    def test_addresses_in_a_repr_are_replaced_and_the_rest_kept(self) -> None:
        small = fingerprint(Settings(32, flip), 2, None)
        large = fingerprint(Settings(64, flip), 2, None)
        assert small.key != large.key
        assert small.sees_changes
        assert f"repr=Settings(size=32, transform=<function flip{PLACEHOLDER}>)" in (
            small.text.splitlines()
        )
        assert "0x" not in small.text
        assert fingerprint(Settings(32, lambda image: image), 2, None).key != small.key
        (caveat,) = small.caveats  # what the placeholder hides is not tracked: said so
        assert caveat.startswith("CachedDataset keys Settings by its repr, but parts of it are ")
        assert "<function flip at 0x" in caveat
        assert "Pass fingerprint='...' naming those settings" in caveat
        assert fingerprint(Settings(32, flip), 2, "v1").caveats == ()

    def test_arrays_a_repr_abbreviates_key_by_their_content(self) -> None:
        # the repr alone was the key: one pixel changed, the old cache was served
        one, two = np.zeros((4, 64, 64, 3), np.uint8), np.zeros((4, 64, 64, 3), np.uint8)
        two[1, 30, 30] = 255
        assert repr(Frames(one)) == repr(Frames(two))
        first = fingerprint(Frames(one), 4, None)
        assert fingerprint(Frames(two), 4, None).key != first.key
        assert fingerprint(Frames(one.copy()), 4, None).key == first.key  # content, not id
        (line,) = [line for line in first.text.splitlines() if line.startswith("arrays=")]
        assert line.startswith("arrays=dataset.images blake2b=")
        assert first.caveats == ()
        assert "arrays=" not in fingerprint(Frames(one), 4, "v1").text  # the user names it

    def test_a_repr_that_abbreviates_nothing_adds_no_line(self) -> None:
        small = fingerprint(Frames(np.zeros((4, 2, 2), np.uint8)), 4, None)
        assert "..." not in small.text
        assert "arrays=" not in small.text

    def test_a_walk_that_stops_is_a_caveat(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr("rankaug.cache._summarized.LIMIT", 2)
        frames = Frames(np.zeros((4, 64, 64), np.uint8), [("a.png", 0), ("b.png", 1)])
        frames.parts = [[np.zeros(2000)], [np.zeros(2000)]]  # type: ignore[attr-defined]
        (caveat,) = fingerprint(frames, 4, None).caveats
        assert caveat.startswith(
            "CachedDataset keys Frames by its repr, which abbreviates arrays ('...'), and by "
            "the content of the arrays and tables it holds, but it stopped looking after 2 "
            "objects: a change there is not seen"
        )


class TestHuggingFaceFingerprint:
    """A ``datasets.Dataset``'s repr lists only its features and rows: its own
    fingerprint keys the cache, so changed content starts a new subdirectory."""

    def test_map_and_format_change_the_key(self) -> None:
        datasets = pytest.importorskip("datasets")
        base = datasets.Dataset.from_dict({"label": [0, 1]})
        mapped = base.map(lambda row: {"label": row["label"] + 10})
        assert repr(base) == repr(mapped)
        first = fingerprint(base, 2, None)
        assert first.sees_changes
        assert f"datasets_fingerprint={base._fingerprint}" in first.text.splitlines()
        assert fingerprint(mapped, 2, None).key != first.key
        assert fingerprint(base.with_format("numpy"), 2, None).key != first.key
        again = datasets.Dataset.from_dict({"label": [0, 1]})
        assert fingerprint(again, 2, None).key == first.key  # the same data, the same key

    def test_an_unhashable_transform_gives_a_random_fingerprint(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        datasets = pytest.importorskip("datasets")
        monkeypatch.setattr(datasets.fingerprint, "fingerprint_warnings", {})  # this test's
        rows = datasets.Dataset.from_dict({"label": [0, 1]})
        assert fingerprint(rows, 2, None).caveats == ()
        transformed = rows.with_transform(Unhashable())
        (caveat,) = fingerprint(transformed, 2, None).caveats
        assert caveat.startswith(
            "CachedDataset keys Dataset by its Hugging Face datasets fingerprint, which may "
            "be random: its with_transform/set_transform transform <"
        )
        assert "every rank or process that builds its own dataset fills its own copy" in caveat
        assert fingerprint(transformed, 2, "v1").caveats == ()

    def test_a_hash_that_failed_in_this_process_is_reported(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        datasets = pytest.importorskip("datasets")
        monkeypatch.setattr(datasets.fingerprint, "fingerprint_warnings", {})  # this test's
        rows = datasets.Dataset.from_dict({"label": [0, 1]})
        mapped = rows.map(Unhashable(), batched=True)  # datasets falls back to a random hash
        (caveat,) = fingerprint(mapped, 2, None).caveats
        assert "datasets could not hash a transform or its arguments in this process" in caveat


def ids(count: int) -> ListDataset:
    return ListDataset(list(range(count)))


class TestTorchWrappers:
    """``Subset`` (``random_split``), ``ConcatDataset`` and ``StackDataset`` are keyed by
    what they wrap: two splits of one dataset never share a cache."""

    def test_a_subset_is_its_dataset_and_its_indices(self) -> None:
        first = fingerprint(Subset(ids(6), [0, 1, 2]), 3, None)
        assert first.text.splitlines()[1:4] == [
            "class=torch.utils.data.dataset.Subset",
            "length=3",
            f"indices=sha256:{hashlib.sha256(np.arange(3, dtype='<i8').tobytes()).hexdigest()}",
        ]
        assert first.text.splitlines()[4:] == [
            "dataset.class=tests.cache.helpers.ListDataset",
            "dataset.length=6",
            "dataset.repr=ListDataset(version='v1', length=6)",
        ]
        assert first.sees_changes
        assert first.caveats == ()
        assert fingerprint(Subset(ids(6), [3, 4, 5]), 3, None).key != first.key
        assert fingerprint(Subset(ids(6), torch.arange(3)), 3, None).key == first.key
        assert fingerprint(Subset(ids(6), range(3)), 3, None).key == first.key
        assert fingerprint(Subset(ids(7), [0, 1, 2]), 3, None).key != first.key
        assert fingerprint(Subset(ids(6), [3, 4, 5]), 3, "v1").key != (
            fingerprint(Subset(ids(6), [0, 1, 2]), 3, "v1").key
        )

    def test_random_splits_of_other_seeds_differ(self) -> None:
        def train(seed: int) -> str:
            generator = torch.Generator().manual_seed(seed)
            split, _ = random_split(ids(10), [0.5, 0.5], generator=generator)
            return fingerprint(split, len(split), None).key

        assert train(1) != train(2)
        assert train(1) == train(1)

    def test_concat_and_stack_are_their_parts(self) -> None:
        one, two = ids(2), ListDataset([5, 6], "v2")
        concat = fingerprint(ConcatDataset([one, two]), 4, None)
        assert "datasets[1].repr=ListDataset(version='v2', length=2)" in concat.text.splitlines()
        assert concat.sees_changes
        assert fingerprint(ConcatDataset([two, one]), 4, None).key != concat.key
        assert fingerprint(ConcatDataset([one, ids(2)]), 4, None).key != concat.key
        nested = fingerprint(Subset(ConcatDataset([one, two]), [0]), 1, None)
        assert "dataset.datasets[1].repr=ListDataset(version='v2', length=2)" in (
            nested.text.splitlines()
        )
        stacked = fingerprint(StackDataset(image=one, label=two), 2, None)
        assert "datasets['label'].repr=ListDataset(version='v2', length=2)" in (
            stacked.text.splitlines()
        )
        assert fingerprint(StackDataset(image=two, label=one), 2, None).key != stacked.key

    def test_a_blind_part_is_named(self) -> None:
        concat = fingerprint(ConcatDataset([ids(2), Anonymous()]), 5, None)
        assert not concat.sees_changes
        (caveat,) = concat.caveats
        assert caveat.startswith(
            "CachedDataset cannot tell when Anonymous at dataset.datasets[1] changes: it has "
            "no settings repr"
        )
        (inside,) = fingerprint(Subset(Anonymous(), [0]), 1, None).caveats
        assert "cannot tell when Anonymous at dataset.dataset changes" in inside

    def test_a_subset_of_a_hugging_face_dataset(self) -> None:
        datasets = pytest.importorskip("datasets")
        rows = datasets.Dataset.from_dict({"label": [0, 1, 2]})
        found = fingerprint(Subset(rows, [0, 2]), 2, None)
        assert f"dataset.datasets_fingerprint={rows._fingerprint}" in found.text.splitlines()
        assert fingerprint(Subset(rows, [1, 2]), 2, None).key != found.key
