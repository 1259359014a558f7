"""Walk a dataset folder, following symbolic links to folders, each cycle cut once.

A dataset is often assembled from several sources by linking their folders in
(``images/extra -> /data/other/images``): :func:`walk_files` reads those as the
folders they point to (``Path.rglob`` on Python 3.11 and ``os.walk`` by default skip
them). A link back to a folder on its own path (a cycle) is not entered, with a
:class:`~rankaug.RankaugWarning` naming it; two links to one folder are both read, as
two folders. Only names whose extension (lower-cased) is in ``suffixes`` are given,
unsorted; one that is not a file (a dangling link, a pipe) is an error. Hidden names
(starting with a dot) below ``top`` are skipped, files and folders, as ultralytics'
``glob`` skips them: macOS's ``._name.jpg`` resource forks are not images, and a
hidden folder (``.cache``, ``.thumbnails``) holds copies, not more samples.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path

from rankaug.errors import RankaugWarning

__all__ = ["walk_files"]


def walk_files(top: Path, suffixes: frozenset[str], *, what: str) -> Iterator[str]:
    """Yield the paths (``top`` joined with their folders) of the files under ``top``.

    Args:
        top: The folder to walk.
        suffixes: The lower-cased extensions to give (``".jpg"``).
        what: What the files are, for messages (``"image"``).

    Raises:
        ValueError: If a name with one of ``suffixes`` is not a readable file.

    Warns:
        RankaugWarning: If a link leads back to a folder it lies in (not entered).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "a").mkdir()
    ...     _ = (Path(tmp) / "a" / "x.TXT").write_text("")
    ...     os.symlink(Path(tmp) / "a", Path(tmp) / "b")
    ...     sorted(Path(p).relative_to(tmp).as_posix() for p in walk_files(Path(tmp),
    ...            frozenset({".txt"}), what="label"))
    ['a/x.TXT', 'b/x.TXT']
    """
    # each folder's real path and its parents'
    chains: dict[str, tuple[str, ...]] = {str(top): (os.path.realpath(top),)}
    for folder, dirs, names in os.walk(top, followlinks=True):
        chain = chains.pop(folder)
        entered = []
        for name in sorted(dirs):
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            real = os.path.realpath(path)
            if real in chain:
                warnings.warn(
                    f"{path} links back to {real}, a folder it lies in: not entered (it "
                    f"would repeat every {what} below it without end)",
                    RankaugWarning,
                    stacklevel=4,
                )
                continue
            chains[path] = (*chain, real)
            entered.append(name)
        dirs[:] = entered
        for name in names:
            if name.startswith(".") or os.path.splitext(name)[1].lower() not in suffixes:
                continue
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                target = (
                    f" (a link to {os.readlink(path)}, missing)" if os.path.islink(path) else ""
                )
                raise ValueError(
                    f"{path} has an extension of the {what} files read but is not a readable "
                    f"file{target}: remove it or fix the link"
                )
            yield path
