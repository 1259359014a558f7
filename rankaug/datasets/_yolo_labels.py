"""Parse YOLO label files into normalised labels, boxes and (optionally) polygons.

Two line kinds, one per file kind (a file never mixes them):

* detection: ``class cx cy w h``, the box centre and size divided by the image size;
* segmentation (YOLO-seg): ``class x1 y1 x2 y2 ... xk yk``, a polygon of ``k >= 3``
  points divided by the image size, whose box is the points' bounds.

Everything is checked here, once, when a :class:`~rankaug.datasets.YoloFolder` is
built, and kept normalised in float64: the reader scales it to each image it returns.
A bad line is a ``ValueError`` that starts with ``path:line:``. Files are UTF-8 text (a
leading byte-order mark is skipped). A class is read exactly, as an integer: ``3``, or
an integral decimal such as ``3.0`` or ``3e0``, from 0 to 2**63 - 1 (the int64 labels).
A line that repeats an earlier one (the same class and coordinates as read, however
written) is dropped, as ultralytics' ``verify_image_label`` drops duplicate rows, and counted.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rankaug.datasets._file_stat import FileStat, check_unchanged, file_stat
from rankaug.datasets._pose import pose_form, sure_pose
from rankaug.errors import RankaugWarning

__all__ = ["LabelFile", "read_label_file", "warn_duplicates"]

_BOX_FIELDS = ("cx", "cy", "w", "h")
_LABEL_LIMIT = 2**63  # labels are int64


class LabelFile(NamedTuple):
    """One image's objects, normalised to ``[0, 1]``.

    Attributes:
        classes: ``(N,)`` int64 class indices.
        boxes: ``(N, 4)`` float64 normalised ``(x_min, y_min, x_max, y_max)``.
        polygons: ``N`` float64 ``(K_i, 2)`` normalised ``(x, y)`` points (``K_i >= 3``),
            or ``None`` when the file was read as detection labels.
        stat: The file's ``(size, mtime_ns)`` as it was read (``None``: no file).
        pose: Read as polygons, the number of fields of every line when each reads as
            a YOLO pose line too, all of one length (:func:`~rankaug.datasets._pose.pose_form`);
            0 without lines, -1 otherwise (and for detection labels).
        pose_sure: Whether one line at least surely is a pose line
            (:func:`~rankaug.datasets._pose.sure_pose`).
        duplicates: How many lines repeated an earlier line and were dropped.
    """

    classes: np.ndarray
    boxes: np.ndarray
    polygons: tuple[np.ndarray, ...] | None
    stat: FileStat
    pose: int = -1
    pose_sure: bool = False
    duplicates: int = 0


def read_label_file(path: Path, tolerance: float, *, segments: bool) -> LabelFile:
    """Parse one label file (a missing file has no objects; blank lines are skipped).

    A line with the class and coordinates of an earlier line is dropped (the first is kept).

    Args:
        path: The label file.
        tolerance: How far (normalised) a box edge or polygon point may lie outside
            ``[0, 1]``; those are clipped, anything further out is an error.
        segments: Read polygon lines (YOLO-seg) instead of box lines.

    Returns:
        The file's objects.

    Raises:
        ValueError: If a line is malformed (the message starts with ``path:line:``), or
            the file changed while it was read.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "a.txt"
    ...     _ = path.write_text("2 0.1 0.2 0.5 0.2 0.3 0.6")
    ...     labels = read_label_file(path, 1e-3, segments=True)
    >>> labels.classes, labels.boxes
    (array([2]), array([[0.1, 0.2, 0.5, 0.6]]))
    """
    classes: list[int] = []
    rows: list[tuple[float, float, float, float]] = []
    polygons: list[np.ndarray] = []
    pose = 0 if segments else -1  # the length of lines that read as pose lines
    sure = False  # one of them surely is one
    seen: set[tuple[int, bytes | tuple[float, ...]]] = set()  # (class, numbers) read
    duplicates = 0
    stat = file_stat(path)
    if path.is_file():
        try:
            with path.open(encoding="utf-8-sig") as handle:  # -sig: skip a leading BOM
                for number, line in enumerate(handle, start=1):
                    fields = line.split()
                    if not fields:
                        continue
                    where = f"{path}:{number}"
                    if not line.isascii() or "_" in line:  # int() and float() take "1_0", "٣"
                        raise ValueError(
                            f"{where}: YOLO labels are ASCII numbers without underscores, got "
                            f"{line.rstrip(chr(10) + chr(13))!r}: {_first_foreign(line)}"
                        )
                    if segments:
                        label, points, row, form, surely = _parse_polygon_line(
                            fields, where, tolerance
                        )
                        if pose >= 0:
                            pose = len(fields) if form and pose in (0, len(fields)) else -1
                            sure = sure or surely
                        key: tuple[int, bytes | tuple[float, ...]] = (label, points.tobytes())
                    else:
                        label, row = _parse_box_line(fields, where, tolerance)
                        key = (label, row)
                    if key in seen:
                        duplicates += 1
                        continue
                    seen.add(key)
                    if segments:
                        polygons.append(points)
                    classes.append(label)
                    rows.append(row)
        except UnicodeDecodeError as error:
            raise _not_utf8(path, error) from None
    check_unchanged(path, stat)
    boxes = np.clip(np.array(rows, dtype=np.float64).reshape(-1, 4), 0.0, 1.0)
    return LabelFile(
        np.array(classes, dtype=np.int64),
        boxes,
        tuple(polygons) if segments else None,
        stat,
        pose,
        sure,
        duplicates,
    )


def warn_duplicates(paths: Sequence[Path], parsed: Sequence[LabelFile]) -> None:
    """Warn the caller of :class:`~rankaug.datasets.YoloFolder` of duplicate lines dropped.

    One warning names each file that had some (the first 10) and how many it had.
    """
    dropped = [(path, labels.duplicates) for path, labels in zip(paths, parsed, strict=True)]
    dropped = [(path, count) for path, count in dropped if count]
    if not dropped:
        return
    named = ", ".join(f"{path} ({count})" for path, count in dropped[:10])
    more = f" and {len(dropped) - 10} more file(s)" if len(dropped) > 10 else ""
    warnings.warn(
        f"{sum(count for _, count in dropped)} duplicate label line(s) removed (a line with "
        f"the class and coordinates of an earlier line of its file; the first is kept, as "
        f"ultralytics keeps one) from {len(dropped)} label file(s): {named}{more}",
        RankaugWarning,
        stacklevel=3,
    )


def _parse_box_line(
    fields: list[str], where: str, tolerance: float
) -> tuple[int, tuple[float, float, float, float]]:
    """Parse ``class cx cy w h`` into a label and a normalised xyxy box (not clipped)."""
    if len(fields) != 5:
        hint = ""
        if len(fields) == 6:
            hint = "; a sixth column (such as a prediction's confidence) is not part of a label"
        elif len(fields) > 6:
            hint = (
                "; longer lines are segment polygons (class x1 y1 x2 y2 ...) or pose "
                "keypoints: pass segments=True to read polygons (keypoints are not supported)"
            )
        raise ValueError(
            f"{where}: expected 5 fields 'class cx cy w h', got {len(fields)}: "
            f"{' '.join(fields)!r}{hint}"
        )
    label = _parse_class(fields[0], where)
    cx, cy, w, h = _parse_numbers(fields[1:], _BOX_FIELDS.__getitem__, where)
    if w < 0 or h < 0:
        raise ValueError(f"{where}: width and height must be >= 0, got w={w!r}, h={h!r}")
    box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    if min(box) < -tolerance or max(box) > 1.0 + tolerance:
        raise ValueError(
            f"{where}: box (cx={cx!r}, cy={cy!r}, w={w!r}, h={h!r}) has edges "
            f"{tuple(round(edge, 6) for edge in box)} outside [0, 1] by more than "
            f"tolerance={tolerance!r}; YOLO coordinates are normalised by the image size"
        )
    return label, box


def _parse_polygon_line(
    fields: list[str], where: str, tolerance: float
) -> tuple[int, np.ndarray, tuple[float, float, float, float], int | None, bool]:
    """Parse ``class x1 y1 ... xk yk``: its label, points, bounds and pose form.

    The points are ``(k, 2)`` float64, clipped to ``[0, 1]``; the bounds normalised xyxy;
    the pose form the keypoint columns under which the line reads as a pose line
    (:func:`~rankaug.datasets._pose.pose_form`), or ``None``, and whether it surely is one
    (:func:`~rankaug.datasets._pose.sure_pose`). A line out of ``[0, 1]`` that reads as a
    pose line (a visibility of 2) is refused as one.
    """
    count = len(fields) - 1
    if len(fields) == 5:
        raise ValueError(
            f"{where}: a box line 'class cx cy w h' in a segments=True dataset: "
            f"{' '.join(fields)!r}; every line must be a polygon 'class x1 y1 x2 y2 ... xk yk' "
            "(k >= 3 points), as a box line has no polygon to pair with the others' (ultralytics "
            "then silently drops every polygon of the dataset; rankaug refuses). Write the "
            "box as its 4-corner polygon, or read boxes only with segments=False"
        )
    if count % 2:
        raise ValueError(
            f"{where}: a polygon needs x y pairs, got an odd number ({count}) of coordinates "
            f"after the class: {' '.join(fields)!r}"
        )
    if count < 6:
        raise ValueError(
            f"{where}: a polygon needs at least 3 points (7 fields 'class x1 y1 x2 y2 x3 y3'), "
            f"got {count // 2} point(s): {' '.join(fields)!r}"
        )
    label = _parse_class(fields[0], where)
    values = _parse_numbers(fields[1:], _coordinate_name, where)
    low, high = min(values), max(values)  # plain floats: far cheaper than numpy per line
    form = pose_form(values, tolerance)
    if form and (low < -tolerance or high > 1.0 + tolerance):
        raise ValueError(
            f"{where}: a YOLO pose line 'class cx cy w h' and keypoints 'x y"
            f"{' v' if form == 3 else ''}' in a segments=True dataset: {' '.join(fields)!r}; "
            "YoloFolder reads boxes or polygons, not keypoints (ultralytics tells pose "
            "labels by the kpt_shape of their data YAML): read the boxes with a label "
            "folder of their first 5 columns, segments=False"
        )
    if low < -tolerance or high > 1.0 + tolerance:
        index = next(i for i, v in enumerate(values) if v < -tolerance or v > 1.0 + tolerance)
        point = index // 2 + 1
        x, y = values[2 * point - 2], values[2 * point - 1]
        raise ValueError(
            f"{where}: polygon point {point} (x{point}={x!r}, y{point}={y!r}) lies "
            f"outside [0, 1] by more than tolerance={tolerance!r}; YOLO coordinates are "
            "normalised by the image size"
        )
    points = np.array(values, dtype=np.float64).reshape(-1, 2)
    if low < 0.0 or high > 1.0:
        np.clip(points, 0.0, 1.0, out=points)
    xs, ys = values[0::2], values[1::2]
    row = (min(xs), min(ys), max(xs), max(ys))  # clipped with the other boxes
    return label, points, row, form, form is not None and sure_pose(values, form)


def _first_foreign(line: str) -> str:
    """Name a line's first non-ASCII character or underscore and its 1-based column."""
    column, char = next((i, c) for i, c in enumerate(line, 1) if not c.isascii() or c == "_")
    return f"{'_' if char == '_' else f'U+{ord(char):04X}'} at column {column}"


def _not_utf8(path: Path, error: UnicodeDecodeError) -> ValueError:
    """The error for a label file that is not UTF-8, naming ``path:line``."""
    data = path.read_bytes()
    start, reason = error.start, error.reason  # of the decoder's chunk: find it in the file
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exact:
        start, reason = exact.start, exact.reason
    before = data[:start].decode("utf-8-sig", "replace").replace("\r\n", "\n").replace("\r", "\n")
    line = before.count("\n") + 1
    column = len(before) - before.rfind("\n")
    byte = f"byte 0x{data[start]:02x}" if start < len(data) else "the end"
    return ValueError(
        f"{path}:{line}: not UTF-8 text ({byte} at column {column}: {reason}); YOLO label "
        "files are UTF-8 text: re-encode the file"
    )


def _parse_class(token: str, where: str) -> int:
    """A class index, exactly: an integer in ``[0, 2**63)``, written ``3``, ``3.0``, ``3e0``."""
    try:
        label = int(token)
    except ValueError:
        label = _integral_decimal(token, where)
    if label < 0:
        raise ValueError(f"{where}: class must be an integer >= 0, got {token!r}")
    if label >= _LABEL_LIMIT:
        raise ValueError(
            f"{where}: class {token!r} is too large: labels are int64, at most 2**63 - 1"
        )
    return label


def _integral_decimal(token: str, where: str) -> int:
    """A class written as a decimal (``3.0``, ``3e0``), exactly (no float rounding)."""
    try:
        number = Decimal(token)
    except InvalidOperation:
        raise ValueError(f"{where}: class {token!r} is not a number") from None
    if not number.is_finite():
        raise ValueError(f"{where}: class must be an integer, got {token!r}")
    if not -_LABEL_LIMIT < number < _LABEL_LIMIT:  # refused by the caller (no int of 1e9999)
        return _LABEL_LIMIT if number > 0 else -1
    if number != number.to_integral_value():
        raise ValueError(f"{where}: class must be an integer, got {token!r}")
    return int(number)


def _coordinate_name(index: int) -> str:
    """The name of a polygon line's coordinate ``index`` (after the class): x1, y1, x2..."""
    return f"{'xy'[index % 2]}{index // 2 + 1}"


def _parse_numbers(tokens: list[str], name_of: Callable[[int], str], where: str) -> list[float]:
    """The finite numbers ``tokens`` (token ``i`` named ``name_of(i)`` in errors)."""
    try:
        values = [float(token) for token in tokens]
    except ValueError:
        values = []
        for position, token in enumerate(tokens):
            try:
                values.append(float(token))
            except ValueError:
                raise ValueError(
                    f"{where}: {name_of(position)} = {token!r} is not a number"
                ) from None
    if not all(map(math.isfinite, values)):
        for position, (token, value) in enumerate(zip(tokens, values, strict=True)):
            if not math.isfinite(value):
                raise ValueError(f"{where}: {name_of(position)} = {token!r} is not finite")
    return values
