"""Telling YOLO pose labels from YOLO-seg polygons, which YoloFolder reads.

A pose line is ``class cx cy w h`` and ``K`` keypoints ``x y`` or ``x y v`` (``v`` in
``0, 1, 2``), all normalised; ultralytics tells it from a polygon line only by the
``kpt_shape`` of the dataset's YAML. Read with ``segments=True`` it has a polygon line's
form (``x1 y1 x2 y2 ...``) whenever its coordinates are even in number and in ``[0, 1]``,
so :class:`~rankaug.datasets.YoloFolder` (which does not read keypoints) looks for two
signs of one:

* a data YAML that declares ``kpt_shape`` (as ultralytics' data YAML of a pose dataset
  does), in the dataset's root or, naming the dataset's images, in its parent (Roboflow's
  layout): refused (:func:`declared_pose`);
* a line that reads as a pose line (:func:`pose_form`): its first four numbers a box
  of positive size within ``[0, 1]``, the rest keypoints (a visibility, where there is
  one, in ``0, 1, 2``), each labelled one (not ``0 0``, or ``v > 0``) inside the box.
  Such a line with a number out of ``[0, 1]`` (a visibility of 2) is refused as a pose
  line; a dataset whose every line reads so, all of one length, is warned about where
  one line at least is surely a pose line (:func:`sure_pose`: a visibility column, or an
  unlabelled ``0 0`` keypoint) or :data:`POSE_LINES` lines at least read so: about 4 in
  10 small polygons (a box's 4 corners, a triangle) read as ``x y`` pose lines (the first
  point a box's centre, the second its size, holding the others), so a few prove nothing.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from rankaug.errors import RankaugWarning

__all__ = [
    "POSE_LINES",
    "declared_pose",
    "pose_form",
    "refuse_declared_pose",
    "sure_pose",
    "warn_pose_form",
]

_KPT_SHAPE: Final = re.compile(r"^kpt_shape\s*:(.*)$", re.MULTILINE)
_NULLS: Final = frozenset({"null", "Null", "NULL", "~"})  # YAML's spellings of null
# A split: a scalar, a flow list, or a block list of "- entry" lines, indented or not
# (PyYAML's safe_dump writes them at the key's column).
_SPLITS: Final = re.compile(r"^(?:train|val|test|minival)\s*:(.*)$((?:\n[ \t]*-.*)*)", re.MULTILINE)
_PATH: Final = re.compile(r"^path\s*:(.*)$", re.MULTILINE)
_LARGEST: Final = 1 << 20  # a YAML of the parent folder larger than this is no data YAML
POSE_LINES: Final = 8
"""How many lines that read as ``x y`` pose lines, none surely, a dataset is warned at."""


def declared_pose(root: Path, images: Path | None = None) -> tuple[Path, str] | None:
    r"""The data YAML that declares ``kpt_shape`` for the dataset in ``root``, and its value.

    Looked for as ultralytics finds a dataset's YAML, where its layouts put it: any YAML
    file in ``root`` (not below); else, given the dataset's ``images`` folder, a YAML in
    ``root``'s parent that names that folder (or ``root``) under ``train``, ``val``,
    ``test`` or ``minival`` (Roboflow's export, ``data.yaml`` beside ``train/images``
    and ``valid/images``, read from ``root="train"``; or a YAML beside the dataset's
    folder), resolved as ultralytics does (from ``path:``, else the YAML's folder; a
    ``../`` that names nothing is dropped). Other YAMLs of the parent are no sign. Where
    ``root`` is a link, the link's parent is looked in, then its target's.
    ``kpt_shape: null`` (or ``~``) declares none.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "data.yaml").write_text("nc: 1\nkpt_shape: [17, 3]\n")
    ...     found = declared_pose(Path(tmp))
    >>> found[0].name, found[1]
    ('data.yaml', '[17, 3]')
    """
    found = _declared_in(root, None)
    if found is None and images is not None:
        split = {_resolved(root), _resolved(images)}
        # a linked root's parent, then the parent of the folder it links to
        parents = dict.fromkeys(p.parent for p in (root, _resolved(root)) if p.parent != p)
        for parent in parents:
            found = _declared_in(parent, split)
            if found is not None:
                break
    return found


def _declared_in(folder: Path, split: set[Path] | None) -> tuple[Path, str] | None:
    """The first YAML in ``folder`` declaring ``kpt_shape`` (and naming ``split``, if given)."""
    for path in sorted(folder.glob("*.y*ml")):
        if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
            continue
        try:
            if split is not None and path.stat().st_size > _LARGEST:
                continue  # no data YAML: not read
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue  # not a data YAML we can read: no sign either way
        match = _KPT_SHAPE.search(text)
        if match is None or (split is not None and not _names(text, path.parent, split)):
            continue
        value = _plain(match.group(1))
        if value not in _NULLS:  # kpt_shape: null declares no pose
            return path, value
    return None


def _names(text: str, folder: Path, split: set[Path]) -> bool:
    """Whether the data YAML ``text`` (in ``folder``) names a folder of ``split``."""
    given = _PATH.search(text)
    bases = [folder]
    if given is not None and _plain(given.group(1)) not in ("", *_NULLS):
        path = Path(_plain(given.group(1)))
        bases = [path] if path.is_absolute() else [folder / path, Path.cwd() / path]
    for match in _SPLITS.finditer(text):
        value = _plain(match.group(1))
        entries = value[1:-1].split(",") if value.startswith("[") else [value]
        entries += [line.split("-", 1)[1] for line in match.group(2).splitlines() if line]
        for entry in (_plain(e) for e in entries):
            if not entry or entry in _NULLS:
                continue
            for base in bases:
                named = _resolved(base / entry)
                if not named.exists() and entry.startswith("../"):
                    named = _resolved(base / entry[3:])  # ultralytics' rule
                if named in split:
                    return True
    return False


def _plain(value: str) -> str:
    """A YAML scalar without its comment and quotes."""
    return value.split("#")[0].strip().strip("'\"").strip()


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:  # pragma: no cover (a loop of links)
        return path


def pose_form(values: list[float], tolerance: float) -> int | None:
    """The keypoint columns (2 or 3) under which ``values`` read as a pose line, or ``None``.

    ``values`` are the numbers after the class. 3 is tried first (``v`` in ``0, 1, 2``).

    >>> pose_form([0.5, 0.5, 0.4, 0.4, 0.45, 0.5, 2.0, 0.0, 0.0, 0.0], 1e-3)
    3
    >>> pose_form([0.5, 0.5, 0.4, 0.4, 0.45, 0.5, 0.6, 0.6], 1e-3)
    2
    >>> pose_form([0.1, 0.1, 0.9, 0.1, 0.5, 0.9], 1e-3) is None  # a triangle
    True
    """
    count = len(values) - 4
    if count < 2:
        return None
    cx, cy, w, h = values[:4]
    if not (w > 0.0 and h > 0.0):
        return None
    x0, y0 = cx - w / 2 - tolerance, cy - h / 2 - tolerance
    x1, y1 = cx + w / 2 + tolerance, cy + h / 2 + tolerance
    if (
        x0 < -2 * tolerance
        or y0 < -2 * tolerance
        or x1 > 1 + 2 * tolerance
        or y1 > 1 + 2 * tolerance
    ):
        return None
    for size in (3, 2):
        if count % size == 0 and _keypoints_in(values[4:], size, (x0, y0, x1, y1)):
            return size
    return None


def _keypoints_in(points: list[float], size: int, box: tuple[float, float, float, float]) -> bool:
    """Whether every labelled keypoint lies in ``box``, and one at least is labelled."""
    x0, y0, x1, y1 = box
    labelled = False
    for start in range(0, len(points), size):
        x, y = points[start], points[start + 1]
        if size == 3:
            visibility = points[start + 2]
            if visibility not in (0.0, 1.0, 2.0):
                return False
            if visibility == 0.0:
                continue
        elif x == 0.0 and y == 0.0:  # ultralytics writes an unlabelled keypoint 0 0
            continue
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            return False
        labelled = True
    return labelled


def sure_pose(values: list[float], form: int) -> bool:
    """Whether ``values``, read as a pose line of ``form`` (:func:`pose_form`), surely are one.

    A visibility column (``form`` 3: every third number exactly 0, 1 or 2) or an
    unlabelled keypoint ``0 0`` is seldom a polygon's; ``x y`` keypoints alone often are.

    >>> box = [0.5, 0.5, 0.4, 0.4]
    >>> sure_pose([*box, 0.45, 0.5, 2.0], 3), sure_pose([*box, 0.0, 0.0, 0.6, 0.6], 2)
    (True, True)
    >>> sure_pose([0.4, 0.4, 0.6, 0.4, 0.6, 0.6, 0.4, 0.6], 2)  # a square's corners
    False
    """
    if form == 3:
        return True
    points = values[4:]
    return any(points[k] == 0.0 and points[k + 1] == 0.0 for k in range(0, len(points), 2))


def refuse_declared_pose(root: Path, images: Path | None = None) -> None:
    """Refuse ``segments=True`` where a data YAML declares ``kpt_shape`` (:func:`declared_pose`)."""
    declared = declared_pose(root, images)
    if declared is not None:
        path, shape = declared
        raise ValueError(
            f"segments=True: {path} declares kpt_shape: {shape}, so {_resolved(root)} holds "
            "YOLO pose labels ('class cx cy w h' and keypoints), which read as polygon lines: "
            "YoloFolder reads boxes or polygons, not keypoints"
        )


def warn_pose_form(poses: Sequence[int], paths: Sequence[Path], *, sure: bool, lines: int) -> None:
    """Warn where every line of a ``segments=True`` dataset reads as a pose line.

    ``poses`` holds each label file's :attr:`~rankaug.datasets._yolo_labels.LabelFile.pose`;
    ``sure`` says whether a line surely is one (:func:`sure_pose`), ``lines`` how many
    lines there are: without a sure one, fewer than :data:`POSE_LINES` are not warned
    about. The warning is for the caller of :class:`~rankaug.datasets.YoloFolder`.
    """
    lengths = set(poses) - {0}
    if len(lengths) != 1 or min(lengths) < 0 or not (sure or lines >= POSE_LINES):
        return
    first = next(path for path, pose in zip(paths, poses, strict=True) if pose)
    warnings.warn(
        f"segments=True: every label line has {min(lengths)} fields and reads as a YOLO "
        f"pose line, 'class cx cy w h' and keypoints inside the box (first file: {first}): "
        "pose labels would be read as polygons (YoloFolder does not read keypoints). "
        "If they are polygons, filter this RankaugWarning",
        RankaugWarning,
        stacklevel=3,
    )
