"""Decode each image once per machine: a disk cache for deterministic datasets.

:class:`CachedDataset` stores every sample of the dataset it wraps in one file,
arrays memory-mapped, the first time any process loads it. Every DataLoader worker and
every rank on the machine then reads the same bytes through the operating system's page
cache: one copy per machine, where ultralytics' ``cache="ram"`` keeps one per rank, and
a read costs about what ``np.load(mmap_mode="c")`` of an ``.npy`` file costs.

How a sample is found or made (:meth:`CachedDataset.__getitem__`):

1. its file exists and is whole: read it (:mod:`rankaug.cache._format`; the checksum
   is checked on the machine's first read of each file in this boot,
   :mod:`rankaug.cache._seen`, and the pickle may build only rankaug's own types,
   :mod:`rankaug.cache._unpickle`);
2. otherwise (missing or damaged) load it from the dataset, and, if this process can
   write there, store it atomically (:mod:`rankaug.cache._store`) for everyone else;
3. return what was read or loaded: the same values, types and shapes either way.

Which subdirectory: a fingerprint of the dataset (:mod:`rankaug.cache._fingerprint`).
Whether to cache at all: not if a rankaug wrapper is inside (:mod:`rankaug.cache._walk`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

from torch.utils.data import Dataset

from rankaug import checks
from rankaug._fixed import FixedSettings
from rankaug.cache._arguments import check_directory, check_fingerprint
from rankaug.cache._fingerprint import FORMAT, Fingerprint
from rankaug.cache._fingerprint import fingerprint as make_fingerprint
from rankaug.cache._format import Corrupt, encode, read
from rankaug.cache._refusals import Unstorable, cannot_store
from rankaug.cache._seen import Checked
from rankaug.cache._store import prepare, prune, sample_path, store, stored_bytes
from rankaug.cache._unpickle import Refused, trusted
from rankaug.cache._walk import refuse_random
from rankaug.context import current_worker, resolve_rank
from rankaug.epoch import carried_epoch, index_epoch
from rankaug.errors import RankaugWarning, SampleError

__all__ = ["CachedDataset"]

T_co = TypeVar("T_co", covariant=True)
_WARNED: Final[set[tuple[int, str]]] = set()


class CachedDataset(FixedSettings, Dataset[T_co], Generic[T_co]):
    """A deterministic map-style dataset, each sample stored once on disk and shared.

    The first process to load an index (any worker, any rank) stores its sample under
    ``directory``; later loads, there or in any other process on the machine, read
    it back memory-mapped. Put it below the random augmentation, which must stay
    fresh every epoch: ``MosaicDataset(CachedDataset(YoloFolder(...), directory))``.

    * **Identical outputs.** A sample read back has the container types, keys,
      dtypes, shapes and values it was stored with (pickle, arrays out of band);
      arrays come back as plain writable ``np.ndarray`` (C- or F-contiguous) on
      private copy-on-write pages, so writing into one never changes the cache.
      CPU tensors come back as tensors, torchvision's tv_tensors as their class with
      their metadata (``format``, ``canvas_size``). With ``read_only_arrays=True`` the
      arrays come back read-only instead (below).
    * **Safe under concurrency.** Samples are written to a temporary file, then
      renamed into place under a lock: readers see a whole sample or none, and two
      processes storing the same index leave one file.
    * **Invalidated when the source changes.** Samples live in a subdirectory named
      by a fingerprint: the dataset's class, length and settings (its ``repr``, when
      its class defines one, memory addresses left out, and the content of the large
      arrays it holds when the ``repr`` abbreviates them), then its data: ``fingerprint``
      if given, else the sizes and mtimes of the files its ``source_files()`` lists
      (or a torchvision ``ImageFolder``'s ``samples``), a Hugging Face dataset's own fingerprint, or
      for a plain list, tuple or dict of samples a hash of their content; a ``Subset``
      is its dataset's fingerprint and its indices, a ``ConcatDataset`` its datasets'.
      A changed fingerprint starts a new subdirectory, leaving the old one whole for
      any process still reading it; :meth:`prune` deletes old ones. A dataset that
      shows none of these (another of its class and length would share its cache),
      whose files are listed without a settings repr (a changed setting is not seen),
      a torchvision dataset other than an ``ImageFolder`` (its repr shows no file; MNIST,
      CIFAR and SVHN downloads excepted),
      whose repr holds memory addresses, or whose Hugging Face fingerprint may be
      random (new in every run and process), gets a warning.
    * **Checked.** Each file carries a CRC-32 of its bytes, checked once per boot of
      the machine, by the first process to read it (the others, every worker of every
      rank, trust its record); a damaged file is never served: the sample is loaded
      again and the file replaced. Temporary files of writers that died (``SIGKILL``) are
      removed when a cache opens, the stored bytes recounted first.
    * **Nobody else's code runs.** Reading builds only what rankaug stores (builtin
      containers and scalars, numpy arrays, dtypes and scalars, CPU tensors,
      torchvision's tv_tensors) and the types in ``trusted_types``; a sample holding
      any other type (or a tensor on a GPU, sparse, or another subclass) is refused
      when it is stored. A directory or file that another user owns or others may
      write is refused, unless ``trust_directory=True``.
    * **Bounded.** A sample that would take the bytes stored under this fingerprint
      (counted across processes, each file once) past ``max_bytes`` is served
      uncached; smaller ones still are cached; nothing is evicted.
    * **A full disk loses nothing.** If a write fails (``ENOSPC``, say), even when the
      cache opens, no partial file stays, samples are served from the dataset (and
      those already cached from the cache), and this process stops storing with one
      :class:`~rankaug.RankaugWarning`. A cache this process cannot write to (a
      read-only mount) is read; what it lacks is served uncached, with one warning.
    * **Larger than RAM is fine.** Nothing is held in memory; the page cache keeps
      what fits.
    * **Read-only arrays, faster** (``read_only_arrays=True``). Each file read stays
      mapped, read-only, for the next read of it in this process, so a sample read
      again costs no page faults (a mosaic reading four tiles per sample saves about
      a tenth of its time here); arrays of 4 KiB or more come back read-only
      (``flags.writeable`` is ``False`` and cannot be set), so no reader can change
      what a later one reads; CPU tensors are copied. A sample the cache has just
      stored is returned as read back; one it cannot store, as the dataset gave it.
      At most :func:`~rankaug.cache._kept.keep_limit` files stay mapped per process
      (16,384 on Linux's defaults; they hold no file descriptor), the least recently
      read let go first; a file deleted, replaced or written to since is not read from
      its old mapping. For readers that only read their input, as ``MosaicDataset``
      reads its tiles: ``torch.from_numpy`` of such an array warns, and writing into
      that tensor would crash the process (as with ``np.load(mmap_mode="r")``).

    Locking uses ``flock`` (POSIX), so all processes must share one machine (or a file
    system with working ``flock``).

    Args:
        dataset: The deterministic map-style dataset to cache (``__getitem__`` and
            ``__len__``; the same sample for the same index, in every process).
        directory: Where the cache lives; created if missing. Resolved here (made
            absolute, ``..`` and symlinks followed), so every spelling of one folder is
            one cache and workers that change directory still find it.
        fingerprint: A string naming this version of the data, used instead of the
            file sizes and mtimes; change it when the data changes. Defaults to
            ``None``.
        max_bytes: Most bytes of samples to store (``>= 0``); ``None`` for no bound.
            Defaults to ``None``.
        fsync: Flush every sample to the disk before publishing it, so that it
            survives a power loss (much slower to fill; without it a crash can only
            lose samples, which are then stored again). Defaults to ``False``.
        trusted_types: Classes (or functions) of yours that samples hold, which the
            reader may build besides rankaug's own. Defaults to ``None``.
        trust_directory: Skip the check that the directory and its files are this
            user's alone (only if you trust everyone who can write there).
            Defaults to ``False``.
        read_only_arrays: Return read-only arrays over files kept mapped between
            reads (faster; see above). Defaults to ``False``.

    Attributes:
        dataset: The wrapped dataset (it, ``directory``, ``path``, ``fingerprint`` and
            ``trust_directory`` cannot be assigned: an ``AttributeError``; a subclass
            may set one before calling the constructor, to what it gives it).
        directory: The cache directory (resolved).
        path: The subdirectory of this fingerprint.
        fingerprint: What the subdirectory's name was made from, in ``fingerprint.text``.
        trust_directory: Whether the owner checks are skipped.
        read_only_arrays: Whether arrays are read back read-only from kept mappings.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range, ``dataset`` holds a rankaug
            wrapper (a random augmentation cannot be cached), ``directory`` is not this
            user's alone, an in-memory dataset cannot be fingerprinted, or a file the
            dataset lists has a NUL byte in its path (naming the file and the dataset).
        OSError: If ``directory`` can neither be written to nor read as a cache (the
            message names it), or the ``stat`` of a file the dataset lists fails for
            another reason than its absence (of its kind, ``PermissionError`` say,
            naming the file and the dataset; its ``errno`` and ``filename`` the stat's).

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

    fixed_settings = frozenset({"dataset", "directory", "path", "fingerprint",
                                "trust_directory"})  # fmt: skip
    made_with = "_where"  # set after them: a subclass may have set them before

    def __init__(
        self,
        dataset: Any,
        directory: str | os.PathLike[str],
        *,
        fingerprint: str | None = None,
        max_bytes: int | None = None,
        fsync: bool = False,
        trusted_types: Iterable[object] | None = None,
        trust_directory: bool = False,
        read_only_arrays: bool = False,
    ) -> None:
        self.dataset = checks.map_dataset(dataset)
        self.directory = check_directory(directory)
        given = None if fingerprint is None else check_fingerprint(fingerprint)
        self.max_bytes = (
            None if max_bytes is None else checks.integer(max_bytes, "max_bytes", low=0)
        )
        self.fsync = checks.boolean(fsync, "fsync")
        self._trusted = trusted(trusted_types)
        self.trust_directory = checks.boolean(trust_directory, "trust_directory")
        self.read_only_arrays = checks.boolean(read_only_arrays, "read_only_arrays")
        refuse_random(dataset)
        self._length = len(dataset)
        self.fingerprint: Fingerprint = make_fingerprint(dataset, self._length, given)
        for caveat in self.fingerprint.caveats:  # what the key cannot see
            warnings.warn(caveat, RankaugWarning, stacklevel=2)
        description = {"format": FORMAT, "fingerprint": self.fingerprint.text}
        self.path, mode, why = prepare(
            self.directory, self.fingerprint.key, description, trust=self.trust_directory
        )
        self._where = str(self.path)
        self._table = Checked(self._where, trust=self.trust_directory)
        self._caching = mode == "write"  # False once this process stopped storing samples
        self._read_only = why if mode == "read" else ""  # warned about at the first miss
        if mode == "full":
            self._stop(f"opening it failed ({why})", stacklevel=3)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> T_co:
        """Sample ``index``: read from the cache, else loaded from the dataset and stored.

        Raises:
            TypeError: If ``index`` is not an integer, or a sample cannot be pickled
                (or holds a type the reader would not build: see ``trusted_types``).
            IndexError: If ``index`` is out of range.
            ValueError: If its file is not this user's alone, or its pickle calls
                something rankaug does not store (nothing of it was run).
            SampleError: If the wrapped dataset fails (naming the index).
        """
        position = checks.index(index, self._length)
        path = sample_path(self._where, position)
        damaged = None
        try:
            cached: T_co = read(path, self._trusted, owner_check=not self.trust_directory,
                                table=self._table, index=position, key=self.fingerprint.key,
                                keep=self.read_only_arrays)  # fmt: skip
            return cached
        except FileNotFoundError:
            pass
        except Corrupt as error:  # torn or damaged: never served, stored again
            damaged = error.identity
        sample = self._load(index, position)
        if self._caching:
            if self._store(position, sample, damaged) and self.read_only_arrays:
                return self._read_back(path, position, sample)
        elif self._read_only:
            _warn_once(
                self._where,
                f"CachedDataset cannot store samples in {self.path} ({self._read_only}); "
                f"it reads what is cached there and serves dataset[{position}] and other "
                "missing samples from the dataset (correct, but not faster)",
            )
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

        ``False`` after a failed write (a full disk) or in a directory it cannot
        write to.
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
        return prune(self.directory, self.path)

    def _load(self, index: int, position: int) -> T_co:
        try:
            sample: T_co = self.dataset[position]
        except SampleError:
            raise
        except Exception as error:
            epoch = carried_epoch()  # a keyed wrapper's above, or the index's own
            raise SampleError.at(
                f"dataset[{index}]",
                index=int(index),
                rank=resolve_rank(),
                worker_id=current_worker()[0],
                epoch=index_epoch(index) if epoch is None else epoch,
                error=error,
                where=f"in CachedDataset of {self.path}",
            ) from error
        return sample

    def _read_back(self, path: str, position: int, sample: Any) -> T_co:
        """What was just stored, read back (read-only); ``sample`` if it is not there."""
        try:
            stored: T_co = read(path, self._trusted, owner_check=not self.trust_directory,
                                table=self._table, index=position,
                                key=self.fingerprint.key, keep=True)  # fmt: skip
        except (FileNotFoundError, Corrupt):  # removed or replaced since: as loaded
            loaded: T_co = sample
            return loaded
        return stored

    def _store(self, position: int, sample: object, damaged: tuple[int, int] | None) -> bool:
        """Store ``sample``; whether a file of it is in the cache now."""
        try:
            key = self.fingerprint.key
            chunks, size = encode(sample, self._trusted, sealed=False, index=position, key=key)
        except (Refused, Unstorable) as error:
            raise cannot_store(f"dataset[{position}]", error) from None
        except Exception as error:
            raise cannot_store(f"dataset[{position}]", error) from error
        try:
            outcome = store(
                self._where,
                position,
                chunks,
                size,
                max_bytes=self.max_bytes,
                fsync=self.fsync,
                replace=damaged,
            )  # "full": this one does not fit, smaller ones may
        except OSError as error:
            self._stop(f"writing dataset[{position}] failed ({error})", stacklevel=4)
            return False
        if outcome == "stored":  # its checksum was made from the bytes just written
            self._table.record_file(position, sample_path(self._where, position))
        return outcome != "full"  # "present": another process stored it first

    def _stop(self, why: str, stacklevel: int) -> None:
        self._caching = False
        _warn_once(
            self._where,
            f"CachedDataset stopped caching in {self.path}: {why}. Nothing partial was "
            "left; this process now serves samples it has not cached from the dataset "
            "(correct, but not faster).",
            stacklevel=stacklevel + 1,
        )


def _warn_once(where: str, message: str, stacklevel: int = 4) -> None:
    key = (os.getpid(), where)
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(message, RankaugWarning, stacklevel=stacklevel)
