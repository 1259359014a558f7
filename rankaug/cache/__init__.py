"""Decode each image once per machine: a disk cache for deterministic datasets.

:class:`CachedDataset` stores every sample of the dataset it wraps in one file,
arrays memory-mapped, the first time any process loads it. Every DataLoader worker and
every rank on the machine then reads the same bytes through the operating system's page
cache: one copy per machine, where ultralytics' ``cache="ram"`` keeps one per rank, and
a read costs about what ``np.load(mmap_mode="c")`` of an ``.npy`` file costs.

How a sample is found or made (:meth:`CachedDataset.__getitem__`):

1. its file exists and is whole: read it (:mod:`rankaug.cache._format`);
2. otherwise load it from the dataset, and, unless this process stopped caching,
   store it atomically (:mod:`rankaug.cache._store`) for everyone else;
3. return what was read or loaded: the same values, types and shapes either way.

Which subdirectory: a fingerprint of the dataset (:mod:`rankaug.cache._fingerprint`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import warnings
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

from torch.utils.data import Dataset

from rankaug import checks
from rankaug.cache._fingerprint import FORMAT, Fingerprint
from rankaug.cache._fingerprint import fingerprint as make_fingerprint
from rankaug.cache._format import Corrupt, encode, read
from rankaug.cache._store import prepare, sample_path, store, stored_bytes
from rankaug.context import current_worker, resolve_rank
from rankaug.errors import RankaugWarning, SampleError
from rankaug.keyed import KeyedDataset, inner_datasets

__all__ = ["CachedDataset"]

T_co = TypeVar("T_co", covariant=True)
_WARNED: Final[set[tuple[int, str]]] = set()


class CachedDataset(Dataset[T_co], Generic[T_co]):
    """A deterministic map-style dataset, each sample stored once on disk and shared.

    The first process to load an index (any worker, any rank) stores its sample under
    ``directory``; later loads, there or in any other process on the machine, read
    it back memory-mapped. Put it below the random augmentation, which must stay
    fresh every epoch: ``MosaicDataset(CachedDataset(YoloFolder(...), directory))``.

    * **Identical outputs.** A sample read back has the container types, keys,
      dtypes, shapes and values it was stored with (pickle, arrays out of band);
      arrays come back as plain writable ``np.ndarray`` (C- or F-contiguous) on
      private copy-on-write pages, so writing into one never changes the cache.
      CPU tensors come back as tensors.
    * **Safe under concurrency.** Samples are written to a temporary file, then
      renamed into place under a lock: readers see a whole sample or none, and two
      processes storing the same index leave one file.
    * **Invalidated when the source changes.** Samples live in a subdirectory named
      by a fingerprint: the dataset's class and length, then ``fingerprint`` if
      given, else its ``repr`` (when its class defines one without memory addresses)
      and the sizes and mtimes of the files its ``source_files()`` lists (the
      built-in readers have both). A changed fingerprint starts a new subdirectory,
      leaving the old one whole for any process still reading it; :meth:`prune`
      deletes old ones. A dataset that shows neither gets a warning: pass
      ``fingerprint=``.
    * **Bounded.** Past ``max_bytes`` bytes stored under this fingerprint (counted across
      processes), new samples are served from the dataset uncached; nothing is evicted.
    * **A full disk loses nothing.** If a write fails (``ENOSPC``, say), no partial file
      stays, the sample is returned from the dataset, and this process stops caching
      with one :class:`~rankaug.RankaugWarning`.
    * **Larger than RAM is fine.** Nothing is held in memory; the page cache keeps
      what fits.

    The directory must be trusted: cache files are pickles. Locking uses ``flock``
    (POSIX), so all processes must share one machine (or a file system with working
    ``flock``).

    Args:
        dataset: The deterministic map-style dataset to cache (``__getitem__`` and
            ``__len__``; the same sample for the same index, in every process).
        directory: Where the cache lives; created if missing (a relative path is made
            absolute, so workers that change directory still find it).
        fingerprint: A string naming this version of the data, used instead of the
            file sizes and mtimes; change it when the data changes. Defaults to
            ``None``.
        max_bytes: Most bytes of samples to store (``>= 0``); ``None`` for no bound.
            Defaults to ``None``.
        fsync: Flush every sample to the disk before publishing it, so that it
            survives a power loss (much slower to fill; without it a crash can only
            lose samples, which are then stored again). Defaults to ``False``.

    Attributes:
        dataset: The wrapped dataset.
        directory: The cache directory (absolute).
        path: The subdirectory of this fingerprint.
        fingerprint: What the subdirectory's name was made from, in ``fingerprint.text``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range, or ``dataset`` holds a rankaug
            wrapper (a random augmentation cannot be cached).
        OSError: If ``directory`` cannot be written to (the message names it).

    >>> import tempfile
    >>> from rankaug.datasets import SyntheticDetection
    >>> source = SyntheticDetection(4, image_size=32)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     cached = CachedDataset(source, tmp)
    ...     first = cached[1]  # loaded from the source, and stored
    ...     again = cached[1]  # read back from the cache
    ...     print(cached.is_cached(1), cached.is_cached(2), sorted(again))
    ...     print(all((again[key] == first[key]).all() for key in first))
    True False ['bboxes', 'image', 'labels', 'mask']
    True
    """

    def __init__(
        self,
        dataset: Any,
        directory: str | os.PathLike[str],
        *,
        fingerprint: str | None = None,
        max_bytes: int | None = None,
        fsync: bool = False,
    ) -> None:
        self.dataset = checks.map_dataset(dataset)
        _refuse_random(dataset)
        self.directory = _check_directory(directory)
        given = None if fingerprint is None else _check_fingerprint(fingerprint)
        self.max_bytes = (
            None if max_bytes is None else checks.integer(max_bytes, "max_bytes", low=0)
        )
        self.fsync = checks.boolean(fsync, "fsync")
        self._length = len(dataset)
        self.fingerprint: Fingerprint = make_fingerprint(dataset, self._length, given)
        if not self.fingerprint.sees_changes:
            warnings.warn(
                f"CachedDataset cannot tell when {type(dataset).__name__} changes: it has "
                "no settings repr and no source_files(), so its cache is keyed by its class "
                "and length alone. Pass fingerprint='...' (and change it with the data).",
                RankaugWarning,
                stacklevel=2,
            )
        description = {"format": FORMAT, "fingerprint": self.fingerprint.text}
        self.path = prepare(self.directory, self.fingerprint.key, description)
        self._where = str(self.path)
        self._caching = True  # False once this process stopped storing samples

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> T_co:
        """Sample ``index``: read from the cache, else loaded from the dataset and stored.

        Raises:
            TypeError: If ``index`` is not an integer, or a sample cannot be pickled.
            IndexError: If ``index`` is out of range.
            SampleError: If the wrapped dataset fails (naming the index).
        """
        position = checks.index(index, self._length)
        path = sample_path(self._where, position)
        try:
            cached: T_co = read(path)
            return cached
        except FileNotFoundError:
            pass
        except Corrupt:
            _remove(path)  # torn by a crash or written by other code: store it again
        sample = self._load(index, position)
        if self._caching:
            self._store(position, sample)
        return sample

    def is_cached(self, index: int) -> bool:
        """Whether sample ``index`` is stored (by any process).

        Raises:
            TypeError: If ``index`` is not an integer.
            IndexError: If ``index`` is out of range.
        """
        return os.path.exists(sample_path(self._where, checks.index(index, self._length)))

    def stored_bytes(self) -> int:
        """Bytes of samples stored under this fingerprint, by every process so far."""
        return stored_bytes(self._where)

    @property
    def caching(self) -> bool:
        """Whether this process still stores samples.

        ``False`` after a failed write (a full disk) or once ``max_bytes`` is reached.
        """
        return self._caching

    def prune(self) -> list[Path]:
        """Delete the subdirectories of other fingerprints in :attr:`directory`.

        They hold samples of older versions of the data (or of other datasets sharing
        the directory). Call it when no process uses them: files already open stay
        readable, but a process still using one would refill it.

        Returns:
            The deleted subdirectories.
        """
        removed = []
        for child in sorted(self.directory.iterdir()):
            if child != self.path and _is_cache(child):
                shutil.rmtree(child, ignore_errors=True)
                removed.append(child)
        return removed

    def _load(self, index: int, position: int) -> T_co:
        try:
            sample: T_co = self.dataset[position]
        except SampleError:
            raise
        except Exception as error:
            worker, rank = current_worker()[0], resolve_rank()
            raise SampleError(
                f"dataset[{index}] failed at index {index} (rank {rank}, worker {worker}, "
                f"in CachedDataset of {self.path}): {type(error).__name__}: {error}",
                index=int(index),
                rank=rank,
                worker_id=worker,
                stage=f"dataset[{index}]",
            ) from error
        return sample

    def _store(self, position: int, sample: object) -> None:
        try:
            chunks, size = encode(sample)
        except Exception as error:
            raise TypeError(
                f"CachedDataset cannot store dataset[{position}]: the sample cannot be "
                f"pickled ({type(error).__name__}: {error})"
            ) from error
        try:
            outcome = store(
                self._where, position, chunks, size, max_bytes=self.max_bytes, fsync=self.fsync
            )
        except OSError as error:
            self._caching = False
            _warn_once(
                self._where,
                f"CachedDataset stopped caching in {self.path}: writing dataset[{position}] "
                f"failed ({error}). Nothing partial was left; this process now serves "
                "samples it has not cached from the dataset (correct, but not faster).",
            )
            return
        if outcome == "full":
            self._caching = False


def _is_cache(path: Path) -> bool:
    name = path.name
    return (
        len(name) == 32
        and all(c in "0123456789abcdef" for c in name)
        and path.is_dir()
        and (path / "fingerprint.json").is_file()
    )


def _refuse_random(dataset: Any) -> None:
    for inner in (dataset, *inner_datasets(dataset, through_keyed=True)):
        if isinstance(inner, KeyedDataset):
            raise ValueError(
                f"dataset must be deterministic, but it holds {type(inner).__name__}, whose "
                "draws change every epoch; cache what is below the augmentation, e.g. "
                "MosaicDataset(CachedDataset(YoloFolder(...), directory), ...)"
            )


def _check_directory(directory: object) -> Path:
    if isinstance(directory, bytes) or not isinstance(directory, str | os.PathLike):
        raise TypeError(
            f"directory must be a path (str or os.PathLike), got {directory!r} of type "
            f"{type(directory).__name__}"
        )
    if os.fspath(directory) == "":
        raise ValueError(f"directory must be a non-empty path, got {directory!r}")
    return Path(directory).absolute()


def _check_fingerprint(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"fingerprint must be None or a non-empty string, got {value!r} of type "
            f"{type(value).__name__}"
        )
    if not value:
        raise ValueError(f"fingerprint must be None or a non-empty string, got {value!r}")
    return value


def _warn_once(where: str, message: str) -> None:
    key = (os.getpid(), where)
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(message, RankaugWarning, stacklevel=4)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
