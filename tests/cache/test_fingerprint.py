"""Tests for rankaug.cache._fingerprint: what keys a cache."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import Dataset

from rankaug.cache._fingerprint import FORMAT, fingerprint
from tests.cache.helpers import Anonymous, ListDataset


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

    def test_what_cannot_see_changes(self) -> None:
        assert not fingerprint(Anonymous(), 3, None).sees_changes
        addressed = fingerprint(Addressed([1]), 1, None)
        assert not addressed.sees_changes  # an address changes every run: left out
        assert "0x" not in addressed.text


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
