"""Telling YOLO pose labels from YOLO-seg polygons, which YoloFolder reads.

A pose line is ``class cx cy w h`` and ``K`` keypoints ``x y`` or ``x y v`` (``v`` in
``0, 1, 2``), all normalised; ultralytics tells it from a polygon line only by the
``kpt_shape`` of the dataset's YAML. Read with ``segments=True`` it has a polygon line's
form (``x1 y1 x2 y2 ...``) whenever its coordinates are even in number and in ``[0, 1]``,
so :class:`~rankaug.datasets.YoloFolder` (which does not read keypoints) looks for two
signs of one:

* a YAML file in the dataset's root that declares ``kpt_shape`` (as ultralytics' data
  YAML of a pose dataset does): refused (:func:`declared_pose`);
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
POSE_LINES: Final = 8
"""How many lines that read as ``x y`` pose lines, none surely, a dataset is warned at."""


def declared_pose(root: Path) -> tuple[Path, str] | None:
    r"""The YAML file in ``root`` (not below) that declares ``kpt_shape``, and its value.

    ``kpt_shape: null`` (or ``~``) declares none.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "data.yaml").write_text("nc: 1\nkpt_shape: [17, 3]\n")
    ...     found = declared_pose(Path(tmp))
    >>> found[0].name, found[1]
    ('data.yaml', '[17, 3]')
    """
    for path in sorted(root.glob("*.y*ml")):
        if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue  # not a data YAML we can read: no sign either way
        match = _KPT_SHAPE.search(text)
        if match is not None:
            value = match.group(1).split("#")[0].strip()
            if value not in _NULLS:  # kpt_shape: null declares no pose
                return path, value
    return None


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


def refuse_declared_pose(root: Path) -> None:
    """Refuse ``segments=True`` where a YAML in ``root`` declares ``kpt_shape`` (pose)."""
    declared = declared_pose(root)
    if declared is not None:
        path, shape = declared
        raise ValueError(
            f"segments=True: {path} declares kpt_shape: {shape}, so {root} holds YOLO pose "
            "labels ('class cx cy w h' and keypoints), which read as polygon lines: "
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
