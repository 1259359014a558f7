"""What a cache's contents depend on, hashed into the name of its subdirectory."""

from __future__ import annotations

import hashlib
import re
import sys
from typing import Any, Final

import numpy as np
from torch.utils.data import ConcatDataset, StackDataset, Subset

from rankaug.cache import _summarized
from rankaug.cache._content import Opaque, content_hash
from rankaug.cache._files import files_line, folder_files
from rankaug.cache._hf import random_fingerprint

__all__ = ["FORMAT", "Fingerprint", "fingerprint"]

#: Bumped when the file format changes, so old caches are never read as new.
FORMAT: Final = "rankaug.CachedDataset/3"
_ADDRESS: Final = re.compile(r" at 0x[0-9A-Fa-f]+")
_ONLY_ADDRESS: Final = re.compile(r"<\s*[\w.]+(\s+object)?\s+at 0x[0-9A-Fa-f]+\s*>")
#: What stands for a memory address in a kept repr.
PLACEHOLDER: Final = " at <address>"


class Fingerprint:
    """The text a cache is keyed by, its key, whether it can see changes, and why not.

    Attributes:
        text: What was hashed, one ``name=value`` per line.
        key: 32 hex digits of the text's SHA-256.
        sees_changes: Whether more than the class and length went in for every dataset
            inside (a settings ``repr``, the source files' sizes and mtimes, or the
            user's string).
        caveats: What the key cannot see, one warning's text each (empty if none).
    """

    __slots__ = ("caveats", "key", "sees_changes", "text")

    def __init__(self, lines: list[str], sees_changes: bool, caveats: tuple[str, ...] = ()) -> None:
        self.text = "\n".join(lines)
        self.key = hashlib.sha256(self.text.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.sees_changes = sees_changes
        self.caveats = caveats


def fingerprint(dataset: Any, length: int, given: str | None) -> Fingerprint:
    """The fingerprint of ``dataset``: its class, length and settings, then its data.

    Always the cache format, the dataset's class and its length, and the dataset's
    ``repr`` when its class defines one (the readers' reprs list every setting; memory
    addresses in it, which change from run to run, are replaced by
    :data:`PLACEHOLDER`, with a caveat, and a repr that is only an address is left
    out; a repr showing ``...`` adds the content of the large arrays the dataset holds,
    which numpy and torch print abbreviated, :mod:`~rankaug.cache._summarized`). Then
    the data: ``given`` if any; else a Hugging Face ``datasets.Dataset``'s
    own ``_fingerprint`` (which ``map``, ``filter``, ``with_format`` and other data
    files change; its repr lists only features and rows; a caveat if it may be random,
    :func:`~rankaug.cache._hf.random_fingerprint`); else the size and modification
    time (ns) of every file that its ``source_files()`` method lists (a torchvision
    ``DatasetFolder``'s, ``ImageFolder``'s, ``samples`` paths, where it has none; named by its
    resolved folder, so a relative and an absolute path to it key alike; a missing file
    counts as missing), taken from its ``source_stats()`` mapping (path to ``(size,
    mtime_ns)`` or ``None``) for the files it parsed when it was built (the readers'
    label and annotation files: the cache then holds what they parsed, even if a file
    changed since), and from the file system now for the others; for a plain list,
    tuple or dict of samples, a hash of their content instead of any ``repr``
    (:mod:`rankaug.cache._content`).

    torch's ``Subset`` (``random_split``'s splits) is its dataset's fingerprint and a
    hash of its indices; ``ConcatDataset`` and ``StackDataset``, the fingerprints of
    their datasets: each line of an inner one is prefixed with where it is
    (``dataset.``, ``datasets[1].``). A dataset whose fingerprint shows only its class
    and length gets a caveat: another dataset of its class and length would share its
    cache.

    Raises:
        ValueError: If ``dataset`` is (or holds) a list, tuple or dict whose samples
            hold values the content hash cannot see into, and ``given`` is ``None``; or
            a listed file's path holds a NUL byte (naming it and the dataset).
        OSError: Of the original kind (``PermissionError``, ``NotADirectoryError``, a
            symlink loop's ``ELOOP``...), naming the file and the dataset, if the
            ``stat`` of a listed file fails for another reason than its absence (its
            ``errno`` and ``filename`` are the stat's).
    """
    described = _Described(data=given is None)
    sees_changes = described.add(dataset, length, "dataset", "")
    if given is not None:
        described.lines.append(f"given={given}")
        return Fingerprint(described.lines, sees_changes=True)
    return Fingerprint(described.lines, sees_changes, tuple(described.caveats))


class _Described:
    """The lines and caveats of a dataset and of the datasets it wraps, as they are added.

    ``data`` is whether its data is described too (not when the user named it).
    """

    def __init__(self, data: bool) -> None:
        self.data = data
        self.lines = [f"format={FORMAT}"]
        self.caveats: list[str] = []

    def add(self, dataset: Any, length: int | None, where: str, prefix: str) -> bool:
        """Add the lines of ``dataset`` (at ``where``); whether they see its changes."""
        kind = type(dataset)
        self.lines.append(f"{prefix}class={kind.__module__}.{kind.__qualname__}")
        self.lines.append(f"{prefix}length={'unknown' if length is None else length}")
        if kind is Subset:
            self.lines.append(f"{prefix}indices=sha256:{_indices_hash(dataset.indices)}")
            inner = dataset.dataset
            return self.add(inner, _length(inner), f"{where}.dataset", f"{prefix}dataset.")
        if kind is ConcatDataset or kind is StackDataset:
            parts = dataset.datasets
            named = parts.items() if isinstance(parts, dict) else enumerate(parts)
            seen = []
            for name, part in named:
                place, inner_prefix = f"{where}.datasets[{name!r}]", f"{prefix}datasets[{name!r}]."
                seen.append(self.add(part, _length(part), place, inner_prefix))
            return all(seen)
        return self._leaf(dataset, where, prefix)

    def _leaf(self, dataset: Any, where: str, prefix: str) -> bool:
        kind = type(dataset)
        named = kind.__name__ if where == "dataset" else f"{kind.__name__} at {where}"
        in_memory = isinstance(dataset, list | tuple | dict)
        sees_changes = False
        why = ["it has no settings repr"]
        if not in_memory and getattr(kind, "__repr__", None) is not object.__repr__:
            text = repr(dataset)
            if _ONLY_ADDRESS.fullmatch(text.strip()):
                why = ["its repr is only a memory address"]
            else:
                self.lines.append(f"{prefix}repr={_ADDRESS.sub(PLACEHOLDER, text)}")
                sees_changes = True
                if "..." in text and self.data:  # numpy and torch abbreviate large arrays
                    self._abbreviated(dataset, where, prefix, named)
                shown = _addressed(text)
                if shown and self.data:
                    self.caveats.append(
                        f"CachedDataset keys {named} by its repr, but parts of it are memory "
                        f"addresses, new in every run ({shown}): those parts are left out, "
                        "so a change there (another function or object, say) is not seen "
                        "and the cache of the old one is served. Pass fingerprint='...' "
                        "naming those settings (and change it with them)."
                    )
        if not self.data:  # the user's fingerprint names the data
            return True
        tracked = getattr(dataset, "_fingerprint", None)  # Hugging Face datasets' own
        if isinstance(tracked, str) and tracked and not in_memory:
            self.lines.append(f"{prefix}datasets_fingerprint={tracked}")  # data and format
            random = random_fingerprint(dataset)
            if random is not None:
                self.caveats.append(
                    f"CachedDataset keys {named} by its Hugging Face datasets fingerprint, "
                    f"which may be random: {random}. A random fingerprint is new in every "
                    "process and run, so every run fills a new cache (never reading the "
                    "last one) and every rank or process that builds its own dataset fills "
                    "its own copy. Pass fingerprint='...' (and change it with the data)."
                )
            return True
        if in_memory:
            try:
                self.lines.append(f"{prefix}content={content_hash(dataset)}")
            except Opaque as error:
                raise ValueError(
                    f"{where} is a {kind.__name__} of samples holding {error.args[0]}, which "
                    "CachedDataset cannot fingerprint by content (only arrays, tensors, "
                    "numbers, strings, bytes, lists, tuples and dicts); pass "
                    "fingerprint='...' (and change it with the data)"
                ) from None
            return True
        source_files = getattr(dataset, "source_files", None)
        paths = source_files() if callable(source_files) else folder_files(dataset)
        if paths is None:
            why.append("no source_files()")
            if sees_changes and _torchvision_dataset(dataset):  # a repr that shows no data
                self.caveats.append(
                    f"CachedDataset keys {named} by its repr, which shows its class, size "
                    "and root folder (and transforms) but none of its files or other "
                    "settings: images or annotations changed there, or other options, "
                    "are not seen, and the cache made of the old ones is served. Pass "
                    "fingerprint='...' naming this data (and change it with the data)."
                )
        elif (listed := files_line(dataset, paths, prefix, self.lines, named))[0] > 0:
            if listed[1]:  # a folder's mtime changes with its entries, not their content
                self.caveats.append(
                    f"CachedDataset keys {named} by the files its source_files() lists, "
                    f"but it lists a folder ({listed[1]}), whose size and modification "
                    "time do not change when a file in it is rewritten: such a change is "
                    "not seen, and the cache of the old file is served. List the files "
                    "themselves, or pass fingerprint='...' naming this data."
                )
            if not sees_changes:  # the files alone: what it makes of them is not seen
                self.caveats.append(
                    f"CachedDataset keys {named} by the files its source_files() lists, "
                    f"but {why[0]}: a change of its settings (a transform, an image size, "
                    "an option) is not seen, and the cache made with the old ones is "
                    f"served. Give {kind.__name__} a __repr__ naming its settings, or pass "
                    "fingerprint='...' naming them (and change it with them)."
                )
            sees_changes = True
        else:
            why.append("its source_files() lists no files")
        if not sees_changes:
            self.caveats.append(
                f"CachedDataset cannot tell when {named} changes: {' and '.join(why)}, so "
                "its cache is keyed by its class and length alone. Two different datasets "
                "of this class and length would share one cache (one served the other's "
                "samples), and a changed one keeps its old samples. Pass fingerprint='...' "
                "naming this data (and change it with the data)."
            )
        return sees_changes

    def _abbreviated(self, dataset: Any, where: str, prefix: str, named: str) -> None:
        """Add the content of the arrays ``dataset``'s repr may abbreviate (a line)."""
        found = _summarized.summarized(dataset, where)
        if found.places:
            places = _ADDRESS.sub(PLACEHOLDER, ",".join(found.places))
            self.lines.append(f"{prefix}arrays={places} blake2b={found.digest}")
        if found.unseen:
            self.caveats.append(
                f"CachedDataset keys {named} by its repr, which abbreviates arrays ('...'), "
                f"and by the content of the arrays and tables it holds, but {found.unseen}: "
                "a change there is not seen and the cache of the old data is served. Pass "
                "fingerprint='...' naming this data (and change it with the data)."
            )


#: torchvision datasets whose ``repr`` keys them: their class, size, root, split (their
#: only other option) and transforms, over the fixed files they download. Only these
#: classes themselves: a subclass may add an option its ``repr`` does not show.
_KEYED_BY_REPR: Final = frozenset(
    f"torchvision.datasets.{name}"
    for name in (
        "mnist.MNIST",
        "mnist.FashionMNIST",
        "mnist.KMNIST",
        "cifar.CIFAR10",
        "cifar.CIFAR100",
        "svhn.SVHN",
    )
)


def _torchvision_dataset(dataset: Any) -> bool:
    """Whether ``dataset`` is a torchvision ``VisionDataset`` whose repr names no file.

    The downloads of :data:`_KEYED_BY_REPR` are not: their repr shows all they hold.
    """
    vision = sys.modules.get("torchvision.datasets.vision")  # imported if one exists
    kind = getattr(vision, "VisionDataset", None)
    if kind is None or not isinstance(dataset, kind):
        return False
    named = f"{type(dataset).__module__}.{type(dataset).__qualname__}"
    return named not in _KEYED_BY_REPR


def _addressed(text: str) -> str:
    """The first ``<... at 0x...>`` of ``text`` (at most 80 characters), else ``""``."""
    found = _ADDRESS.search(text)
    if found is None:
        return ""
    start, depth = found.start(), 0
    while start > 0 and depth >= 0:  # back to the "<" that opens it
        start -= 1
        depth += {">": 1, "<": -1}.get(text[start], 0)
    end = text.find(">", found.end())
    shown = text[start : len(text) if end < 0 else end + 1]
    return shown if len(shown) <= 80 else f"{shown[:77]}..."


def _indices_hash(indices: Any) -> str:
    """SHA-256 of a ``Subset``'s indices as 64-bit integers (a list, range, array or tensor)."""
    try:
        values = np.asarray(indices)
    except Exception:
        values = np.asarray([int(index) for index in indices])
    if values.dtype.kind not in "iub":
        values = np.asarray([int(index) for index in values.ravel()])
    flat = np.ascontiguousarray(values.ravel(), dtype="<i8")
    return hashlib.sha256(flat.tobytes()).hexdigest()


def _length(dataset: Any) -> int | None:
    try:
        return len(dataset)
    except Exception:  # a dataset without a length: fingerprinted without one
        return None
